//! JSON documents as flat leaves (`queues.delta.ops[3] = 12`), for `results compare` (a diff
//! of the numeric leaves of two runs) and `results export --csv`.

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

fn walk(v: &Value, path: String, f: &mut dyn FnMut(String, &Value)) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                walk(child, p, f);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                walk(child, format!("{path}[{i}]"), f);
            }
        }
        leaf => f(path, leaf),
    }
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
}

/// Compare the numeric leaves of two documents, in path order.
pub fn compare(a: &Value, b: &Value) -> Vec<Diff> {
    let mut rows: BTreeMap<String, Diff> = BTreeMap::new();
    for (p, x) in numeric_leaves(a) {
        rows.insert(p.clone(), Diff { path: p, a: Some(x), b: None });
    }
    for (p, x) in numeric_leaves(b) {
        rows.entry(p.clone()).or_insert(Diff { path: p, a: None, b: None }).b = Some(x);
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
}
