//! JSON documents as flat leaves (`queues.delta.ops[3] = 12`), for `results compare` (a diff
//! of two runs) and `results export --csv`. An array of objects that name themselves (a
//! `policy`, `name`, `case`, … field, or several: `[policy=fifo,workload=cpu,procs=100]`) is
//! keyed by those names instead of by position, so reordering rows pairs the right ones.

use serde_json::Value;
use std::collections::BTreeMap;

/// Every scalar leaf of `v` with its path; numbers keep their JSON text, null becomes "".
pub fn leaves(v: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    walk(v, String::new(), &mut |path, leaf| {
        let text = match leaf {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        out.push((path, text));
    });
    out
}

/// Every numeric leaf of `v` with its path (booleans and strings are skipped).
pub fn numeric_leaves(v: &Value) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    walk(v, String::new(), &mut |path, leaf| {
        if let Some(x) = leaf.as_f64() {
            out.push((path, x));
        }
    });
    out
}

/// Fields that name an element of an array, in the order a key lists them.
const KEY_FIELDS: [&str; 12] = [
    "experiment",
    "case",
    "policy",
    "name",
    "queue",
    "strategy",
    "mechanism",
    "workload",
    "procs",
    "weight",
    "task",
    "key",
];

fn walk(v: &Value, path: String, f: &mut dyn FnMut(String, &Value)) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                walk(child, p, f);
            }
        }
        Value::Array(items) => {
            let keys = element_keys(items);
            for (i, child) in items.iter().enumerate() {
                let seg = keys.as_ref().map_or_else(|| i.to_string(), |k| k[i].clone());
                walk(child, format!("{path}[{seg}]"), f);
            }
        }
        leaf => f(path, leaf),
    }
}

/// `field=value,…` for each element, when every element is an object with the same scalar
/// key fields and the keys are unique; otherwise None (the elements are keyed by position).
fn element_keys(items: &[Value]) -> Option<Vec<String>> {
    let first = items.first()?.as_object()?;
    let fields: Vec<&str> =
        KEY_FIELDS.iter().copied().filter(|k| first.get(*k).is_some_and(|v| v.is_string() || v.is_number())).collect();
    if fields.is_empty() {
        return None;
    }
    let keys: Vec<String> = items
        .iter()
        .map(|it| {
            let o = it.as_object()?;
            let parts: Option<Vec<String>> = fields
                .iter()
                .map(|k| match o.get(*k)? {
                    Value::String(s) => Some(format!("{k}={s}")),
                    n @ Value::Number(_) => Some(format!("{k}={n}")),
                    _ => None,
                })
                .collect();
            parts.map(|p| p.join(","))
        })
        .collect::<Option<_>>()?;
    let unique: std::collections::HashSet<&String> = keys.iter().collect();
    (unique.len() == keys.len()).then_some(keys)
}

/// The leaves of a run's document as CSV: `run,experiment,path,value` per leaf.
pub fn to_csv(run: i64, experiment: &str, v: &Value) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(["run", "experiment", "path", "value"]);
    for (path, value) in leaves(v) {
        let _ = w.write_record([run.to_string().as_str(), experiment, &path, &value]);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// One row of a comparison: a numeric leaf in either document.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Diff {
    pub path: String,
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// For a `…mean` leaf with a `…ci95` beside it in both runs: the 95% half-width of the
    /// difference of the means, √(ci95_a² + ci95_b²).
    pub spread: Option<f64>,
}

impl Diff {
    /// b − a when both exist.
    pub fn delta(&self) -> Option<f64> {
        Some(self.b? - self.a?)
    }
    /// Relative change (b − a) / |a| when both exist and a ≠ 0.
    pub fn relative(&self) -> Option<f64> {
        let (a, b) = (self.a?, self.b?);
        (a != 0.0).then(|| (b - a) / a.abs())
    }
    /// Whether the two sides differ (a leaf missing on one side differs).
    pub fn changed(&self) -> bool {
        self.a != self.b
    }
    /// Whether the change is larger than its spread: Some(false) when it lies within it, None
    /// when no spread was recorded.
    pub fn significant(&self) -> Option<bool> {
        Some(self.delta()?.abs() > self.spread?)
    }
}

/// A leaf whose text differs between two documents (strings, booleans, and numbers turned
/// into strings or back): changed parameters and labels.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TextDiff {
    pub path: String,
    pub a: Option<String>,
    pub b: Option<String>,
}

/// Whether the leaf is a key field of the array element it sits in (`…[policy=x].policy`): a
/// row that appears or goes away shows in its numbers, not once more per name.
fn names_its_element(path: &str) -> bool {
    let Some((head, field)) = path.rsplit_once("].") else { return false };
    let seg = head.rsplit_once('[').map_or(head, |(_, s)| s);
    seg.split(',').any(|kv| kv.split_once('=').is_some_and(|(k, _)| k == field))
}

/// The non-numeric leaves that differ, in path order.
pub fn compare_text(a: &Value, b: &Value) -> Vec<TextDiff> {
    let text = |v: &Value| -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        walk(v, String::new(), &mut |p, leaf| {
            if !leaf.is_number() {
                m.insert(p, leaf.as_str().map_or_else(|| leaf.to_string(), str::to_string));
            }
        });
        m
    };
    let (ta, tb) = (text(a), text(b));
    let mut paths: Vec<&String> = ta.keys().chain(tb.keys()).collect();
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .filter(|p| ta.get(*p) != tb.get(*p) && !names_its_element(p))
        .map(|p| TextDiff { path: p.clone(), a: ta.get(p).cloned(), b: tb.get(p).cloned() })
        .collect()
}

/// Compare the numeric leaves of two documents, in path order.
pub fn compare(a: &Value, b: &Value) -> Vec<Diff> {
    let mut rows: BTreeMap<String, Diff> = BTreeMap::new();
    for (p, x) in numeric_leaves(a) {
        rows.insert(p.clone(), Diff { path: p, a: Some(x), b: None, spread: None });
    }
    for (p, x) in numeric_leaves(b) {
        rows.entry(p.clone()).or_insert(Diff { path: p, a: None, b: None, spread: None }).b = Some(x);
    }
    let ci: Vec<(String, f64, f64)> =
        rows.values().filter_map(|d| Some((d.path.strip_suffix("ci95")?.to_string(), d.a?, d.b?))).collect();
    for (stem, ca, cb) in ci {
        if let Some(d) = rows.get_mut(&format!("{stem}mean")) {
            d.spread = Some((ca * ca + cb * cb).sqrt());
        }
    }
    rows.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn leaves_have_paths() {
        let v = json!({"a": {"b": [1, 2.5]}, "s": "x", "n": null, "t": true});
        assert_eq!(
            leaves(&v),
            vec![
                ("a.b[0]".to_string(), "1".to_string()),
                ("a.b[1]".into(), "2.5".into()),
                ("n".into(), "".into()),
                ("s".into(), "x".into()),
                ("t".into(), "true".into())
            ]
        );
        assert_eq!(numeric_leaves(&v), vec![("a.b[0]".to_string(), 1.0), ("a.b[1]".into(), 2.5)]);
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        let v = json!({"a": "x, \"y\"", "b": [1.5]});
        assert_eq!(to_csv(7, "t", &v), "run,experiment,path,value\n7,t,a,\"x, \"\"y\"\"\"\n7,t,b[0],1.5\n");
    }

    #[test]
    fn compare_finds_changes_and_missing_leaves() {
        let a = json!({"x": 10, "y": 1, "gone": 3});
        let b = json!({"x": 12, "y": 1, "new": [4]});
        let d = compare(&a, &b);
        let get = |p: &str| d.iter().find(|r| r.path == p).unwrap().clone();
        assert_eq!(get("x").delta(), Some(2.0));
        assert!((get("x").relative().unwrap() - 0.2).abs() < 1e-12);
        assert!(!get("y").changed());
        assert_eq!(get("gone").b, None);
        assert_eq!(get("new[0]").a, None);
        assert!(get("new[0]").changed());
        assert_eq!(d.len(), 4);
    }

    #[test]
    fn rows_pair_by_their_names_not_their_places() {
        let a = json!({"policies": [{"policy": "fcfs", "avg": 17.0}, {"policy": "rr:quantum=4ms", "avg": 5.7}]});
        let b = json!({"policies": [{"policy": "rr:quantum=4ms", "avg": 5.7}, {"policy": "fcfs", "avg": 17.0}]});
        assert!(compare(&a, &b).iter().all(|d| !d.changed()), "the same rows, reordered, do not differ");
        assert_eq!(numeric_leaves(&a)[0].0, "policies[policy=fcfs].avg");
        // A spec change is a change of rows and of text, not of numbers at one index.
        let c = json!({"policies": [{"policy": "fcfs", "avg": 17.0}, {"policy": "rr:quantum=2ms", "avg": 4.1}]});
        let d = compare(&a, &c);
        assert!(d.iter().any(|x| x.path == "policies[policy=rr:quantum=2ms].avg" && x.a.is_none()));
        let t = compare_text(&json!({"parameters": {"q": "4ms"}}), &json!({"parameters": {"q": "2ms"}}));
        assert_eq!(t, vec![TextDiff { path: "parameters.q".into(), a: Some("4ms".into()), b: Some("2ms".into()) }]);
        // Keys must be unique to be used.
        let dup = json!([{"name": "x", "v": 1}, {"name": "x", "v": 2}]);
        assert_eq!(numeric_leaves(&dup)[1].0, "[1].v");
        // Several key fields make one key.
        let cases = json!([{"policy": "fifo", "workload": "cpu", "procs": 100, "wall": 1.5}]);
        assert_eq!(numeric_leaves(&cases)[1].0, "[policy=fifo,workload=cpu,procs=100].wall");
    }

    #[test]
    fn a_change_within_the_spread_is_not_significant() {
        let a = json!({"t": {"mean": 10.0, "ci95": 1.0}, "u": 5});
        let near = json!({"t": {"mean": 11.0, "ci95": 1.0}, "u": 6});
        let far = json!({"t": {"mean": 14.0, "ci95": 1.0}, "u": 6});
        let get = |d: &[Diff], p: &str| d.iter().find(|x| x.path == p).unwrap().clone();
        assert_eq!(get(&compare(&a, &near), "t.mean").significant(), Some(false), "1 < √2");
        assert_eq!(get(&compare(&a, &far), "t.mean").significant(), Some(true), "4 > √2");
        assert_eq!(get(&compare(&a, &far), "u").significant(), None, "no spread recorded");
    }
}
