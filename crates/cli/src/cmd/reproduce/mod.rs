//! `schedlab reproduce`: run every registered seed experiment (or a chosen few, or one shard
//! of them) with progress on stderr, record each run in the results database, and write the
//! one-page HTML report — after every experiment, so a report exists even if the run dies.

mod drill;
mod runner;
mod tables;

use runner::Runner;

use crate::host::{self, Host};
use crate::output;
use schedlab_lab::{registry, Experiment, Scale};
use schedlab_report::db::RunStatus;
use schedlab_report::html::{NotRun, RunInfo};
use schedlab_report::section::{Section, Status};
use schedlab_report::shard::{self, Shard};
use std::path::PathBuf;

const EXAMPLES: &str = "\
Layout (paths relative to the working directory):
  results/<experiment>/<timestamp>/  each run's results.json, CSV and SVG (--out)
  results/<experiment>/unfinished-…/ what a run made before it ended, kept only when it failed,
                                     was stopped or killed (validate's recordings:
                                     `schedlab validate --replay <that dir>` judges them)
  results/schedlab.db                every run, kept across invocations (--db)
  report/index.html                  the report, one section per seed 000-004 (--report)

Examples:
  schedlab reproduce                      everything at the default scale (about 15 min on 2 cores)
  schedlab reproduce --quick              a few minutes on 2 cores
  schedlab reproduce --only timers,wrr    just these experiments
  schedlab reproduce --list               the experiments, their time estimates and shards
  schedlab reproduce --shard 2/4 --out shard2 --report shard2/index.html
                                          one quarter of the experiments (the unit of a shard is an
                                          experiment); join the shards with `schedlab results merge`
                                          and rebuild the report with `schedlab results report`

A failed or unsupported experiment (not root, no tracefs) is reported in its section and the rest
carry on; the exit status is 1 if any experiment failed. Ctrl-C or SIGTERM stops after the running
experiment winds down: it is recorded as interrupted and the report is written.";

/// Arguments of `schedlab reproduce`.
#[derive(clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Small scale: a few minutes in all on a 2-core machine (what CI runs).
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// The seed documents' own scale (hours).
    #[arg(long)]
    full: bool,
    /// Run only these experiments (comma-separated registry names; see --list).
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    only: Vec<String>,
    /// Root directory for results: each run writes `<out>/<experiment>/<UTC timestamp>/`.
    #[arg(long, default_value = "results", value_name = "DIR", value_parser = crate::paths::writable_dir)]
    out: PathBuf,
    /// The results database [default: <out>/schedlab.db].
    #[arg(long, value_name = "PATH", value_parser = crate::paths::writable_file)]
    db: Option<PathBuf>,
    /// Where to write the HTML report.
    #[arg(long, default_value = "report/index.html", value_name = "PATH", value_parser = crate::paths::writable_file)]
    report: PathBuf,
    /// Run shard K of N: a deterministic 1/N share of the experiments, balanced by their time
    /// estimates. Every shard must be given the same --only, scale and schedlab version.
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
    /// List the experiments with their estimated time and shard, and run nothing.
    #[arg(long)]
    list: bool,
    /// Print one JSON document (every section, the run ids, where the report is) on stdout.
    #[arg(long)]
    json: bool,
    /// Test-only: run synthetic drill experiments instead of the registry (comma-separated:
    /// a duration like 200ms, or fail, panic, unsupported). Not a measurement.
    #[arg(long, hide = true, value_delimiter = ',', value_name = "SPEC,...")]
    test_drill: Vec<String>,
}

fn scale_word(s: Scale) -> &'static str {
    match s {
        Scale::Quick => "quick",
        Scale::Default => "default",
        Scale::Full => "full",
    }
}

/// Run `schedlab reproduce`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let scale = Scale::from_flags(args.quick, args.full);
    let all: Vec<Box<dyn Experiment>> =
        if args.test_drill.is_empty() { registry::all() } else { drill::experiments(&args.test_drill)? };
    let plan = Plan::new(&all, &args, scale)?;
    if args.list {
        return tables::list(&plan.selected, &plan.shards, scale, args.json);
    }
    // Everything that can be rejected is checked; now open the database and start.
    let host = Host::collect();
    let db_path = args.db.clone().unwrap_or_else(|| args.out.join("schedlab.db"));
    let mut runner = Runner {
        db: host::open_db(&db_path)?,
        info: RunInfo::new(
            &host.provenance,
            scale_word(scale).into(),
            args.shard.map(|s| s.to_string()),
            Some(db_path.display().to_string()),
        ),
        host: &host,
        args: &args,
        scale,
        sections: Vec::new(),
        runs: Vec::new(),
        not_run: plan.not_run,
    };
    if plan.todo.is_empty() {
        eprintln!(
            "schedlab: no experiment to run here ({}); writing the report with the published numbers only",
            if all.is_empty() { "none are registered in this build" } else { "none selected for this shard" }
        );
    }
    runner.run_all(&plan.todo)?;
    runner.print(&db_path)?;
    let failed = runner.sections.iter().filter(|s| matches!(s.status, Status::Failed(_))).count();
    if failed > 0 && !schedlab_os::signals::stop_requested() {
        eprintln!("schedlab: {failed} experiment(s) failed; see the report");
        std::process::exit(1);
    }
    Ok(())
}

/// Which experiments run here, and why the others do not.
struct Plan<'a> {
    selected: Vec<&'a dyn Experiment>,
    /// The shard of each selected experiment.
    shards: Vec<usize>,
    todo: Vec<&'a dyn Experiment>,
    not_run: Vec<NotRun>,
}

impl<'a> Plan<'a> {
    fn new(all: &'a [Box<dyn Experiment>], args: &Args, scale: Scale) -> anyhow::Result<Self> {
        let known: Vec<&str> = all.iter().map(|e| e.name()).collect();
        for name in &args.only {
            if !known.contains(&name.as_str()) {
                let known =
                    if known.is_empty() { "none are registered in this build".into() } else { known.join(", ") };
                schedlab_os::bail_usage!("unknown experiment '{name}' in --only (known: {known})");
            }
        }
        let selected: Vec<&dyn Experiment> = all
            .iter()
            .map(|e| e.as_ref())
            .filter(|e| args.only.is_empty() || args.only.iter().any(|n| n == e.name()))
            .collect();
        let shards = shard::assign(
            &selected.iter().map(|e| (e.name(), e.estimate_s(scale))).collect::<Vec<_>>(),
            args.shard.map_or(1, |s| s.n),
        );
        let mut not_run: Vec<NotRun> = all
            .iter()
            .filter(|e| !selected.iter().any(|s| s.name() == e.name()))
            .map(|e| not_run_entry(e.as_ref(), "not selected (--only)".into()))
            .collect();
        let mut todo = Vec::new();
        for (e, &k) in selected.iter().zip(&shards) {
            match args.shard {
                Some(s) if s.k != k => not_run.push(not_run_entry(*e, format!("runs in shard {k}/{}", s.n))),
                _ => todo.push(*e),
            }
        }
        Ok(Plan { selected, shards, todo, not_run })
    }
}

/// Run one experiment; an error or a panic becomes a failed section, so the rest carry on.
fn run_one(e: &dyn Experiment, ctx: &schedlab_lab::RunContext) -> Section {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| e.run(ctx)));
    let failed = |why: String| Section { status: Status::Failed(why), ..Section::new(e.name(), e.seed(), e.title()) };
    let mut s = match result {
        Ok(Ok(s)) => s,
        Ok(Err(err)) => failed(output::one_sentence(&err)),
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            failed(format!("panicked: {msg}"))
        }
    };
    if s.seed.is_empty() {
        s.seed = e.seed().into();
    }
    if s.scale.is_empty() {
        s.scale = e.scale_of(ctx.scale);
    }
    s
}

fn not_run_entry(e: &dyn Experiment, reason: String) -> NotRun {
    NotRun { experiment: e.name().into(), seed: e.seed().into(), title: e.title().into(), reason }
}

fn status_word(s: &Status) -> &'static str {
    RunStatus::of(s).0.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drill_specs_are_checked() {
        assert_eq!(drill::experiments(&["10ms".into(), "fail".into()]).unwrap().len(), 2);
        let err = drill::experiments(&["soon".into()]).err().unwrap().to_string();
        assert!(err.contains("'soon'"), "{err}");
    }

    #[test]
    fn a_failing_or_panicking_experiment_becomes_a_failed_section() {
        let ex = drill::experiments(&["fail".into(), "panic".into(), "unsupported".into()]).unwrap();
        let p = schedlab_lab::experiment::NoProgress;
        let host = Host::collect();
        let ctx = host.context(Scale::Quick, &p, None);
        let s: Vec<Section> = ex.iter().map(|e| run_one(e.as_ref(), &ctx)).collect();
        assert!(matches!(&s[0].status, Status::Failed(w) if w.contains("told to fail")));
        assert!(matches!(&s[1].status, Status::Failed(w) if w.contains("panicked: the drill was told to panic")));
        assert!(matches!(&s[2].status, Status::Unsupported(_)));
        assert_eq!(s[1].seed, "001");
    }
}
