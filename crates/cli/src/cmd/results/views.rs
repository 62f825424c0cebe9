//! What `schedlab results list|show|compare` print: a run's summary as JSON, the list table,
//! one run's fields, and the comparison of two runs' numeric leaves.

use crate::output;
use schedlab_report::db::Run;
use schedlab_report::leaves;
use schedlab_report::section::{Outcome, Table};
use serde_json::{json, Value};

fn verdict_counts(r: &Run) -> (usize, usize) {
    let vs = r.section.as_ref().map(|s| s.verdicts.as_slice()).unwrap_or(&[]);
    (
        vs.iter().filter(|v| v.counts() && v.outcome == Outcome::Reproduced).count(),
        vs.iter().filter(|v| v.counts() && v.outcome == Outcome::Differs).count(),
    )
}

pub fn summary_json(r: &Run) -> Value {
    let (rep, dif) = verdict_counts(r);
    json!({
        "id": r.id, "uid": r.uid, "experiment": r.experiment, "seed": r.seed, "status": r.status,
        "reason": r.reason, "scale": r.scale, "shard": r.shard, "host": r.host, "pid": r.pid,
        "version": r.version, "commit": r.commit, "started_utc": r.started_utc,
        "finished_utc": r.finished_utc, "duration_s": r.duration_s(), "run_dir": r.run_dir,
        "reproduced": rep, "differs": dif,
    })
}

pub fn list_table(runs: &[Run]) -> Table {
    let mut t = Table::new(
        "Runs",
        &["id", "experiment", "seed", "status", "started (UTC)", "took", "verdicts", "scale", "host", "note"],
    );
    for r in runs {
        let (rep, dif) = verdict_counts(r);
        let note = r.reason.clone().unwrap_or_default();
        let note =
            if note.chars().count() > 60 { format!("{}…", note.chars().take(59).collect::<String>()) } else { note };
        t.row(vec![
            r.id.to_string(),
            r.experiment.clone(),
            r.seed.clone(),
            r.status.as_str().into(),
            r.started_utc.get(..19).unwrap_or(&r.started_utc).replace('T', " "),
            r.duration_s().map(crate::progress::short).unwrap_or_else(|| "-".into()),
            if rep + dif == 0 { "-".into() } else { format!("{rep} held, {dif} differ") },
            r.scale.clone() + &r.shard.as_ref().map(|s| format!(" ({s})")).unwrap_or_default(),
            r.host.clone(),
            note,
        ]);
    }
    t
}

pub fn show(r: &Run) {
    let mut t = Table::new(format!("Run {}", r.id), &["field", "value"]);
    let mut f = |k: &str, v: String| {
        if !v.is_empty() {
            t.row(vec![k.into(), v]);
        }
    };
    f("experiment", format!("{} (seed {}) — {}", r.experiment, r.seed, r.title));
    f("status", r.status.as_str().to_string() + &r.reason.as_ref().map(|x| format!(": {x}")).unwrap_or_default());
    f("scale", r.scale.clone() + &r.shard.as_ref().map(|s| format!(", shard {s}")).unwrap_or_default());
    f("started", r.started_utc.clone());
    f("finished", r.finished_utc.clone().unwrap_or_default());
    f("took", r.duration_s().map(crate::progress::short).unwrap_or_default());
    f("schedlab", format!("{} ({})", r.version, r.commit));
    f("host / pid", format!("{} / {}", r.host, r.pid));
    f("kernel", r.machine["kernel"].as_str().unwrap_or("").into());
    f("CPU", r.machine["cpu_model"].as_str().unwrap_or("").into());
    f("results", r.run_dir.clone().unwrap_or_default());
    f("uid", r.uid.clone());
    f("parameters", r.parameters.to_string());
    println!("{}", schedlab_report::table::render(&t));
    if let Some(s) = &r.section {
        output::print_section(s);
    }
}

pub fn compare(a: &Run, b: &Run, all: bool, limit: usize, json_out: bool) -> anyhow::Result<()> {
    if a.experiment != b.experiment {
        eprintln!("schedlab: note: comparing different experiments ({} and {})", a.experiment, b.experiment);
    }
    let diffs = leaves::compare(&a.data, &b.data);
    let texts = leaves::compare_text(&a.data, &b.data);
    let shown: Vec<&leaves::Diff> = diffs.iter().filter(|d| all || d.changed()).collect();
    if json_out {
        let rows: Vec<Value> = shown
            .iter()
            .map(|d| {
                json!({"path": d.path, "a": d.a, "b": d.b, "delta": d.delta(), "relative": d.relative(),
                       "spread": d.spread, "significant": d.significant()})
            })
            .collect();
        return output::print_json(&json!({ "a": summary_json(a), "b": summary_json(b), "leaves": rows,
            "text_changes": texts, "compared": diffs.len(), "changed": diffs.iter().filter(|d| d.changed()).count() }));
    }
    let mut head = Table::new("Runs compared", &["", &format!("A = run {}", a.id), &format!("B = run {}", b.id)]);
    let m = |r: &Run, k: &str| r.machine[k].as_str().map(str::to_string).unwrap_or_else(|| r.machine[k].to_string());
    for (k, va, vb) in [
        ("experiment", a.experiment.clone(), b.experiment.clone()),
        ("status", a.status.as_str().into(), b.status.as_str().into()),
        ("scale", a.scale.clone(), b.scale.clone()),
        ("started", a.started_utc.clone(), b.started_utc.clone()),
        ("schedlab", format!("{} ({})", a.version, a.commit), format!("{} ({})", b.version, b.commit)),
        ("host", a.host.clone(), b.host.clone()),
        ("kernel", m(a, "kernel"), m(b, "kernel")),
        ("CPUs", m(a, "cpus_online"), m(b, "cpus_online")),
    ] {
        head.row(vec![k.into(), va, vb]);
    }
    println!("{}", schedlab_report::table::render(&head));
    let fmt = |x: Option<f64>| x.map(num).unwrap_or_else(|| "—".into());
    if !texts.is_empty() {
        let mut tt = Table::new("Parameters and text that differ", &["path", "A", "B"]);
        let show = |x: &Option<String>| x.clone().unwrap_or_else(|| "—".into());
        let cap = if limit == 0 { texts.len() } else { limit.min(texts.len()) };
        for d in &texts[..cap] {
            tt.row(vec![d.path.clone(), show(&d.a), show(&d.b)]);
        }
        println!("{}", schedlab_report::table::render(&tt));
    }
    let mut t =
        Table::new("Numeric leaves of the results documents", &["path", "A", "B", "B − A", "change", "beyond spread"]);
    let cap = if limit == 0 { shown.len() } else { limit.min(shown.len()) };
    for d in &shown[..cap] {
        t.row(vec![
            d.path.clone(),
            fmt(d.a),
            fmt(d.b),
            d.delta().map(|x| if x > 0.0 { format!("+{}", num(x)) } else { num(x) }).unwrap_or_else(|| "—".into()),
            d.relative().map(|x| format!("{:+.1}%", x * 100.0)).unwrap_or_else(|| "—".into()),
            match (d.significant(), d.spread) {
                (Some(true), _) => "yes".into(),
                (Some(false), Some(s)) => format!("no (±{})", num(s)),
                _ => "—".into(),
            },
        ]);
    }
    let changed = diffs.iter().filter(|d| d.changed()).count();
    let mut note = format!(
        "{changed} of {} numeric leaves differ; rows of arrays are paired by their names ([policy=…]); \
         \"beyond spread\" compares a mean's change with its 95% intervals (— = no spread recorded)",
        diffs.len()
    );
    if cap < shown.len() {
        note += &format!("; {} more rows not shown (use --limit 0)", shown.len() - cap);
    }
    println!("{}", schedlab_report::table::render(&t.with_note(note)));
    Ok(())
}

/// A number with at most 6 significant digits (no float noise like 0.09999999999999998).
fn num(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let a = x.abs();
    if !(1e-4..1e9).contains(&a) {
        return format!("{x:.4e}");
    }
    let decimals = (5 - a.log10().floor() as i32).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::num;

    #[test]
    fn numbers_lose_float_noise() {
        assert_eq!(num(-0.09999999999999998), "-0.1");
        assert_eq!(num(0.300083971), "0.300084");
        assert_eq!(num(1234567.0), "1234567");
        assert_eq!(num(2.5e-7), "2.5000e-7");
        assert_eq!(num(0.0), "0");
    }
}
