//! The two tables `schedlab reproduce` prints of its own: the list of experiments with their
//! estimates and shards (`--list`), and the summary after a run.

use super::scale_word;
use crate::output;
use schedlab_lab::{Experiment, Scale};
use schedlab_report::html::NotRun;
use schedlab_report::section::{ClaimKind, Outcome, Section, Status, Table};
use serde_json::json;

const SCALES: [Scale; 3] = [Scale::Quick, Scale::Default, Scale::Full];

/// `--list`: each selected experiment, its estimated time at the chosen scale and at all three,
/// and its shard.
pub fn list(selected: &[&dyn Experiment], shards: &[usize], scale: Scale, json: bool) -> anyhow::Result<()> {
    if json {
        let rows: Vec<_> = selected
            .iter()
            .zip(shards)
            .map(|(e, k)| {
                let by_scale: serde_json::Map<String, serde_json::Value> =
                    SCALES.iter().map(|&s| (scale_word(s).to_string(), json!(e.estimate_s(s)))).collect();
                let what: serde_json::Map<String, serde_json::Value> =
                    SCALES.iter().map(|&s| (scale_word(s).to_string(), json!(e.scale_of(s)))).collect();
                json!({"name": e.name(), "seed": e.seed(), "title": e.title(), "estimate_s": e.estimate_s(scale),
                       "estimate_s_by_scale": by_scale, "scale_of": e.scale_of(scale), "scale_by_scale": what,
                       "shard": k})
            })
            .collect();
        return output::print_json(&json!({ "scale": scale_word(scale), "experiments": rows }));
    }
    let mut t = Table::new(
        format!("Experiments at {} scale", scale_word(scale)),
        &["name", "seed", "title", "estimate", "quick", "default", "full", "shard"],
    );
    for (e, k) in selected.iter().zip(shards) {
        let mut row =
            vec![e.name().into(), e.seed().into(), e.title().into(), crate::progress::short(e.estimate_s(scale))];
        row.extend(SCALES.iter().map(|&s| crate::progress::short(e.estimate_s(s))));
        row.push(k.to_string());
        t.row(row);
    }
    let total = |s: Scale| selected.iter().map(|e| e.estimate_s(s)).sum::<f64>();
    println!(
        "{}",
        schedlab_report::table::render(&t.with_note(format!(
            "about {} in all at {} scale (quick {}, default {}, full {})",
            crate::progress::short(total(scale)),
            scale_word(scale),
            crate::progress::short(total(Scale::Quick)),
            crate::progress::short(total(Scale::Default)),
            crate::progress::short(total(Scale::Full)),
        )))
    );
    if selected.is_empty() {
        println!("(no experiments are registered in this build)");
        return Ok(());
    }
    let mut w = Table::new("What each scale runs, against the seed's own scale", &["name", "quick", "default", "full"]);
    for e in selected {
        let mut row = vec![e.name().to_string()];
        row.extend(SCALES.iter().map(|&s| e.scale_of(s)));
        w.row(row);
    }
    println!("{}", schedlab_report::table::render(&w));
    Ok(())
}

/// One row per experiment: how it ended and how its verdicts came out. The reproduced,
/// differs and inconclusive columns count a seed's claims and published numbers only; goals
/// are met or not met; calibrations and identities are listed in the sections, not counted.
pub fn summary(sections: &[Section], not_run: &[NotRun]) -> Table {
    let mut t = Table::new(
        "Summary",
        &["experiment", "seed", "status", "reproduced", "differs", "inconclusive", "goals_met", "goals_not_met"],
    );
    for s in sections {
        let count = |o: Outcome| s.verdicts.iter().filter(|v| v.counts() && v.outcome == o).count().to_string();
        let goals =
            |o: Outcome| s.verdicts.iter().filter(|v| v.kind == ClaimKind::Goal && v.outcome == o).count().to_string();
        let status = match &s.status {
            Status::Completed => "completed".to_string(),
            Status::Unsupported(why) => format!("not run: {why}"),
            Status::Failed(why) => format!("failed: {why}"),
            Status::Interrupted => "interrupted".to_string(),
        };
        t.row(vec![
            s.experiment.clone(),
            s.seed.clone(),
            status,
            count(Outcome::Reproduced),
            count(Outcome::Differs),
            count(Outcome::Inconclusive),
            goals(Outcome::Met),
            goals(Outcome::NotMet),
        ]);
    }
    for n in not_run {
        let mut row = vec![n.experiment.clone(), n.seed.clone(), format!("not run: {}", n.reason)];
        row.resize(8, "-".into());
        t.row(row);
    }
    t
}

/// `--json`'s summary: for each claim kind, how many verdicts came out each way, over all the
/// sections that ran.
pub fn summary_by_kind(sections: &[Section]) -> serde_json::Value {
    let mut by_kind = serde_json::Map::new();
    for v in sections.iter().flat_map(|s| &s.verdicts) {
        let kind = by_kind.entry(v.kind.word()).or_insert_with(|| json!({}));
        let status = serde_json::to_value(v.outcome).unwrap_or_default();
        let key = status.as_str().unwrap_or("?").to_string();
        let n = kind[&key].as_u64().unwrap_or(0) + 1;
        kind[&key] = json!(n);
    }
    json!({ "by_kind": by_kind })
}
