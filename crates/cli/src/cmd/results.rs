//! `schedlab results`: the results database — list, show, compare, export and merge past
//! runs, and rebuild the HTML report from it (e.g. after merging shards).

use crate::host::{self, Host};
use crate::output;
use anyhow::bail;
use clap::Subcommand;
use schedlab_report::db::{Filter, Run, RunStatus, DEFAULT_PATH};
use schedlab_report::html::{self, RunInfo};
use schedlab_report::leaves;
use schedlab_report::section::{Outcome, Table};
use serde_json::{json, Value};
use std::io::Write;
use std::path::PathBuf;

const EXAMPLES: &str = "\
Every `schedlab reproduce` records each experiment it runs here: experiment, parameters, machine,
version and commit, status (running, completed, failed, unsupported, interrupted), the raw results
document and start/end times. A run whose process was killed is marked interrupted the next time the
database is opened.

Examples:
  schedlab results list                       every run, oldest first
  schedlab results list --experiment timers --limit 5
  schedlab results show 12                    one run: parameters, machine, tables, verdicts
  schedlab results compare 12 19              what changed between two runs (numeric leaves)
  schedlab results export 12 > run12.csv      every leaf of the results document as CSV
  schedlab results merge shard1/schedlab.db shard2/schedlab.db --db all.db
  schedlab results report --db all.db         rebuild report/index.html from the latest runs";

/// Arguments of `schedlab results`.
#[derive(clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The results database (for `merge`: the one the others are merged into).
    #[arg(long, global = true, default_value = DEFAULT_PATH, value_name = "PATH")]
    db: PathBuf,
    /// Print one JSON document on stdout instead of tables.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List runs, oldest first.
    List {
        /// Only this experiment (registry name, e.g. timers).
        #[arg(long)]
        experiment: Option<String>,
        /// Only runs with this status: running, completed, failed, unsupported or interrupted.
        #[arg(long, value_parser = parse_status)]
        status: Option<RunStatus>,
        /// Only the most recent N runs (0 = all).
        #[arg(long, default_value_t = 0)]
        limit: usize,
    },
    /// Show one run: its parameters, machine, tables and verdicts.
    Show {
        /// Run id (see `results list`).
        id: i64,
    },
    /// Compare two runs: a table of the numeric leaves of their results documents that differ.
    Compare {
        /// The first (older) run id.
        a: i64,
        /// The second run id; changes are B − A.
        b: i64,
        /// Also list the leaves that are equal.
        #[arg(long)]
        all: bool,
        /// Show at most N rows (0 = all).
        #[arg(long, default_value_t = 60)]
        limit: usize,
    },
    /// Export one run's results document as CSV (run, experiment, path, value per leaf).
    Export {
        /// Run id.
        id: i64,
        /// CSV (the default; --json prints the whole run instead).
        #[arg(long)]
        csv: bool,
        /// Write to this file instead of stdout.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Merge other results databases (e.g. shards) into --db; runs already there are skipped.
    Merge {
        /// Databases to read (they are not changed).
        #[arg(required = true, value_name = "DB")]
        sources: Vec<PathBuf>,
    },
    /// Rebuild the HTML report from the latest finished run of each experiment.
    Report {
        /// Where to write it.
        #[arg(long, default_value = "report/index.html", value_name = "PATH")]
        html: PathBuf,
    },
}

fn parse_status(s: &str) -> Result<RunStatus, String> {
    RunStatus::parse(s)
        .ok_or_else(|| format!("'{s}' is not a status: use running, completed, failed, unsupported or interrupted"))
}

/// Run `schedlab results`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        Cmd::List { experiment, status, limit } => {
            let db = host::open_existing_db(&args.db)?;
            let runs = db.list(&Filter { experiment, status, limit })?;
            if args.json {
                let rows: Vec<Value> = runs.iter().map(summary_json).collect();
                return output::print_json(&json!({ "database": args.db, "runs": rows }));
            }
            println!("{}", schedlab_report::table::render(&list_table(&runs)));
            if runs.is_empty() {
                println!("(no runs recorded in {})", args.db.display());
            }
            Ok(())
        }
        Cmd::Show { id } => {
            let db = host::open_existing_db(&args.db)?;
            let run = db.get(id)?;
            if args.json {
                return output::print_json(&serde_json::to_value(&run)?);
            }
            show(&run);
            Ok(())
        }
        Cmd::Compare { a, b, all, limit } => {
            let db = host::open_existing_db(&args.db)?;
            let (ra, rb) = (db.get(a)?, db.get(b)?);
            compare(&ra, &rb, all, limit, args.json)
        }
        Cmd::Export { id, csv: _, output } => {
            let db = host::open_existing_db(&args.db)?;
            let run = db.get(id)?;
            let mut out: Box<dyn Write> = match &output {
                Some(p) => {
                    Box::new(std::fs::File::create(p).map_err(|e| anyhow::anyhow!("creating {}: {e}", p.display()))?)
                }
                None => Box::new(std::io::stdout().lock()),
            };
            if args.json {
                writeln!(out, "{}", serde_json::to_string_pretty(&run)?)?;
                return Ok(());
            }
            out.write_all(leaves::to_csv(run.id, &run.experiment, &run.data).as_bytes())?;
            Ok(out.flush()?)
        }
        Cmd::Merge { sources } => {
            for s in &sources {
                if !s.is_file() {
                    bail!("cannot merge {}: no such file", s.display());
                }
            }
            let mut db = host::open_db(&args.db)?;
            let mut t =
                Table::new(format!("Merged into {}", args.db.display()), &["source", "added", "already present"]);
            let mut rows = Vec::new();
            for s in &sources {
                let m = db.merge_from(s)?;
                t.row(vec![s.display().to_string(), m.added.to_string(), m.already_present.to_string()]);
                rows.push(json!({ "source": s, "added": m.added, "already_present": m.already_present }));
            }
            let total = db.list(&Filter::default())?.len();
            if args.json {
                return output::print_json(&json!({ "database": args.db, "merged": rows, "runs": total }));
            }
            println!("{}", schedlab_report::table::render(&t.with_note(format!("{total} runs in all"))));
            Ok(())
        }
        Cmd::Report { html: path } => {
            let db = host::open_existing_db(&args.db)?;
            let latest = db.latest_sections()?;
            let sections: Vec<_> = latest.iter().map(|(_, s)| s.clone()).collect();
            let scales: std::collections::BTreeSet<_> = latest.iter().map(|(r, _)| r.scale.clone()).collect();
            let info = RunInfo::new(
                &Host::collect().provenance,
                scales.into_iter().collect::<Vec<_>>().join(", "),
                None,
                Some(args.db.display().to_string()),
            );
            let page = html::render(&html::Report {
                info,
                sections: &sections,
                not_run: &[],
                seed_numbers: schedlab_lab::seed_data::all(),
            });
            html::write(&path, &page)?;
            if args.json {
                let ids: Vec<i64> = latest.iter().map(|(r, _)| r.id).collect();
                return output::print_json(&json!({ "report": path, "runs": ids }));
            }
            println!("report: {} ({} experiments from {})", path.display(), sections.len(), args.db.display());
            Ok(())
        }
    }
}

fn verdict_counts(r: &Run) -> (usize, usize) {
    let vs = r.section.as_ref().map(|s| s.verdicts.as_slice()).unwrap_or(&[]);
    (
        vs.iter().filter(|v| v.outcome == Outcome::Reproduced).count(),
        vs.iter().filter(|v| v.outcome == Outcome::Differs).count(),
    )
}

fn summary_json(r: &Run) -> Value {
    let (rep, dif) = verdict_counts(r);
    json!({
        "id": r.id, "uid": r.uid, "experiment": r.experiment, "seed": r.seed, "status": r.status,
        "reason": r.reason, "scale": r.scale, "shard": r.shard, "host": r.host, "pid": r.pid,
        "version": r.version, "commit": r.commit, "started_utc": r.started_utc,
        "finished_utc": r.finished_utc, "duration_s": r.duration_s(), "run_dir": r.run_dir,
        "reproduced": rep, "differs": dif,
    })
}

fn list_table(runs: &[Run]) -> Table {
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

fn show(r: &Run) {
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

fn compare(a: &Run, b: &Run, all: bool, limit: usize, json_out: bool) -> anyhow::Result<()> {
    if a.experiment != b.experiment {
        eprintln!("schedlab: note: comparing different experiments ({} and {})", a.experiment, b.experiment);
    }
    let diffs = leaves::compare(&a.data, &b.data);
    let shown: Vec<&leaves::Diff> = diffs.iter().filter(|d| all || d.changed()).collect();
    if json_out {
        let rows: Vec<Value> = shown
            .iter()
            .map(|d| json!({"path": d.path, "a": d.a, "b": d.b, "delta": d.delta(), "relative": d.relative()}))
            .collect();
        return output::print_json(&json!({ "a": summary_json(a), "b": summary_json(b), "leaves": rows,
            "compared": diffs.len(), "changed": diffs.iter().filter(|d| d.changed()).count() }));
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
    let mut t = Table::new("Numeric leaves of the results documents", &["path", "A", "B", "B − A", "change"]);
    let cap = if limit == 0 { shown.len() } else { limit.min(shown.len()) };
    for d in &shown[..cap] {
        t.row(vec![
            d.path.clone(),
            fmt(d.a),
            fmt(d.b),
            d.delta().map(|x| if x > 0.0 { format!("+{}", num(x)) } else { num(x) }).unwrap_or_else(|| "—".into()),
            d.relative().map(|x| format!("{:+.1}%", x * 100.0)).unwrap_or_else(|| "—".into()),
        ]);
    }
    let changed = diffs.iter().filter(|d| d.changed()).count();
    let mut note = format!("{changed} of {} numeric leaves differ", diffs.len());
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
