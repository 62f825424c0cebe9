//! `schedlab reproduce`: run every registered seed experiment (or a chosen few, or one shard
//! of them) with progress on stderr, record each run in the results database, and write the
//! one-page HTML report — after every experiment, so a report exists even if the run dies.

use crate::output;
use crate::progress::Reporter;
use anyhow::{bail, Context};
use schedlab_lab::{registry, Experiment, RunContext, Scale};
use schedlab_report::db::{Db, NewRun, RunStatus};
use schedlab_report::html::{self, NotRun, RunInfo};
use schedlab_report::section::{Outcome, Section, Status, Table};
use schedlab_report::shard::{self, Shard};
use serde_json::json;
use std::path::PathBuf;

const EXAMPLES: &str = "\
Layout (paths relative to the working directory):
  results/<experiment>/<timestamp>/  each run's results.json, CSV and SVG (--out)
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
    #[arg(long, default_value = "results", value_name = "DIR")]
    out: PathBuf,
    /// The results database [default: <out>/schedlab.db].
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,
    /// Where to write the HTML report.
    #[arg(long, default_value = "report/index.html", value_name = "PATH")]
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
    let known: Vec<&str> = all.iter().map(|e| e.name()).collect();
    for name in &args.only {
        if !known.contains(&name.as_str()) {
            let known = if known.is_empty() { "none are registered in this build".into() } else { known.join(", ") };
            bail!("unknown experiment '{name}' in --only (known: {known})");
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
    if args.list {
        return list(&selected, &shards, scale, args.json);
    }

    // Everything that can be rejected is checked; now open the database and start.
    let db_path = args.db.clone().unwrap_or_else(|| args.out.join("schedlab.db"));
    let mut db = Db::open(&db_path)?;
    let mut not_run: Vec<NotRun> = Vec::new();
    for e in all.iter().filter(|e| !selected.iter().any(|s| s.name() == e.name())) {
        not_run.push(not_run_entry(e.as_ref(), "not selected (--only)".into()));
    }
    let mut todo: Vec<&dyn Experiment> = Vec::new();
    for (e, &k) in selected.iter().zip(&shards) {
        match args.shard {
            Some(s) if s.k != k => not_run.push(not_run_entry(*e, format!("runs in shard {k}/{}", s.n))),
            _ => todo.push(*e),
        }
    }
    if todo.is_empty() {
        eprintln!(
            "schedlab: no experiment to run here ({}); writing the report with the published numbers only",
            if all.is_empty() { "none are registered in this build" } else { "none selected for this shard" }
        );
    }

    let info =
        RunInfo::new(scale_word(scale).into(), args.shard.map(|s| s.to_string()), Some(db_path.display().to_string()));
    let numbers = schedlab_lab::seed_data::all();
    let write_report = |sections: &[Section], not_run: &[NotRun]| -> anyhow::Result<()> {
        let page = html::render(&html::Report { info: info.clone(), sections, not_run, seed_numbers: numbers });
        html::write(&args.report, &page)
    };
    let pending = |from: usize, reason: &str| -> Vec<NotRun> {
        todo[from..].iter().map(|e| not_run_entry(*e, reason.to_string())).collect()
    };

    schedlab_os::signals::install_stop_handler();
    let progress = Reporter::new(&todo.iter().map(|e| (e.name().to_string(), e.estimate_s(scale))).collect::<Vec<_>>());
    let mut sections: Vec<Section> = Vec::new();
    let mut runs = Vec::new();
    for (i, e) in todo.iter().enumerate() {
        if schedlab_os::signals::stop_requested() {
            not_run.extend(pending(i, "interrupted before it started"));
            break;
        }
        // The report is rewritten before each experiment, so a run killed outright still
        // leaves a page saying what finished and what was running.
        let running = not_run_entry(
            *e,
            format!(
                "running since {} when this report was written; if reproduce is no longer running, it was killed \
                 (see `schedlab results list`)",
                schedlab_report::results::now_utc()
            ),
        );
        let rest = pending(i + 1, "pending: reproduce had not reached it yet");
        write_report(&sections, &[not_run.clone(), vec![running], rest].concat())?;
        let id = db.start(&NewRun {
            experiment: e.name().into(),
            seed: e.seed().into(),
            title: e.title().into(),
            scale: scale_word(scale).into(),
            shard: args.shard.map(|s| s.to_string()),
            parameters: json!({ "scale": scale_word(scale), "out": args.out }),
        })?;
        let handle = progress.start(i, e.title());
        let ctx = RunContext { scale, out_root: args.out.clone(), progress: &handle };
        let mut section = run_one(*e, &ctx);
        if schedlab_os::signals::stop_requested() && section.status == Status::Completed {
            section.status = Status::Interrupted;
        }
        progress.finish(i, handle, status_word(&section.status));
        db.finish(id, &section).with_context(|| format!("recording run {id} in {}", db_path.display()))?;
        runs.push(json!({ "id": id, "experiment": e.name(), "status": status_word(&section.status) }));
        sections.push(section);
    }
    progress.done();
    write_report(&sections, &not_run)?;

    let failed = sections.iter().filter(|s| matches!(s.status, Status::Failed(_))).count();
    if args.json {
        output::print_json(&json!({
            "report": args.report,
            "database": db_path,
            "scale": scale_word(scale),
            "shard": args.shard.map(|s| s.to_string()),
            "runs": runs,
            "not_run": not_run.iter().map(|n| json!({"experiment": n.experiment, "seed": n.seed, "reason": n.reason})).collect::<Vec<_>>(),
            "sections": sections,
        }))?;
    } else {
        for s in &sections {
            output::print_section(s);
            println!();
        }
        println!("{}", schedlab_report::table::render(&summary(&sections, &not_run)));
        println!("report:   {}", args.report.display());
        let db_flag = if db_path == std::path::Path::new(schedlab_report::db::DEFAULT_PATH) {
            String::new()
        } else {
            format!(" --db {}", db_path.display())
        };
        println!("database: {} (see `schedlab results list{db_flag}`)", db_path.display());
    }
    if schedlab_os::signals::stop_requested() {
        eprintln!("schedlab: stopped by a signal; finished runs and the report were kept");
        schedlab_os::signals::exit_like_signal();
    }
    if failed > 0 {
        eprintln!("schedlab: {failed} experiment(s) failed; see the report");
        std::process::exit(1);
    }
    Ok(())
}

/// Run one experiment; an error or a panic becomes a failed section, so the rest carry on.
fn run_one(e: &dyn Experiment, ctx: &RunContext) -> Section {
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| e.run(ctx)));
    let failed = |why: String| {
        let mut s = Section::new(e.name(), e.seed(), e.title());
        s.status = Status::Failed(why);
        s
    };
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
    s
}

fn not_run_entry(e: &dyn Experiment, reason: String) -> NotRun {
    NotRun { experiment: e.name().into(), seed: e.seed().into(), title: e.title().into(), reason }
}

fn status_word(s: &Status) -> &'static str {
    RunStatus::of(s).0.as_str()
}

fn list(selected: &[&dyn Experiment], shards: &[usize], scale: Scale, json: bool) -> anyhow::Result<()> {
    if json {
        let rows: Vec<_> = selected
            .iter()
            .zip(shards)
            .map(|(e, k)| json!({"name": e.name(), "seed": e.seed(), "title": e.title(), "estimate_s": e.estimate_s(scale), "shard": k}))
            .collect();
        return output::print_json(&json!({ "scale": scale_word(scale), "experiments": rows }));
    }
    let mut t = Table::new(
        format!("Experiments at {} scale", scale_word(scale)),
        &["name", "seed", "title", "estimate", "shard"],
    );
    for (e, k) in selected.iter().zip(shards) {
        t.row(vec![
            e.name().into(),
            e.seed().into(),
            e.title().into(),
            crate::progress::short(e.estimate_s(scale)),
            k.to_string(),
        ]);
    }
    let total: f64 = selected.iter().map(|e| e.estimate_s(scale)).sum();
    println!(
        "{}",
        schedlab_report::table::render(&t.with_note(format!("about {} in all", crate::progress::short(total))))
    );
    if selected.is_empty() {
        println!("(no experiments are registered in this build)");
    }
    Ok(())
}

fn summary(sections: &[Section], not_run: &[NotRun]) -> Table {
    let mut t = Table::new("Summary", &["experiment", "seed", "status", "reproduced", "differs"]);
    for s in sections {
        let count = |o: Outcome| s.verdicts.iter().filter(|v| v.outcome == o).count().to_string();
        let status = match &s.status {
            Status::Completed => "completed".to_string(),
            Status::Unsupported(why) => format!("not run: {why}"),
            Status::Failed(why) => format!("failed: {why}"),
            Status::Interrupted => "interrupted".to_string(),
        };
        t.row(vec![s.experiment.clone(), s.seed.clone(), status, count(Outcome::Reproduced), count(Outcome::Differs)]);
    }
    for n in not_run {
        t.row(vec![n.experiment.clone(), n.seed.clone(), format!("not run: {}", n.reason), "-".into(), "-".into()]);
    }
    t
}

/// Hidden, test-only stand-ins for experiments (`--test-drill`): they sleep, poll the stop
/// flag and return a section with a table, a figure and a verdict, so the run loop, the
/// database and the report can be exercised in seconds. Their sections say they are drills.
mod drill {
    use anyhow::bail;
    use schedlab_lab::{Experiment, RunContext, Scale};
    use schedlab_report::results::{envelope, RunDir};
    use schedlab_report::section::{Figure, Section, Status, Table, Verdict};
    use schedlab_report::svg::{LineChart, Series};
    use serde_json::json;
    use std::time::{Duration, Instant};

    enum Kind {
        Sleep(Duration),
        Fail,
        Panic,
        Unsupported,
    }

    pub struct Drill {
        name: &'static str,
        seed: &'static str,
        kind: Kind,
    }

    const SEEDS: [&str; 5] = ["000", "001", "002", "003", "004"];

    pub fn experiments(spec: &[String]) -> anyhow::Result<Vec<Box<dyn Experiment>>> {
        let mut v: Vec<Box<dyn Experiment>> = Vec::new();
        for (i, s) in spec.iter().enumerate() {
            let kind = match s.as_str() {
                "fail" => Kind::Fail,
                "panic" => Kind::Panic,
                "unsupported" => Kind::Unsupported,
                d => match humantime::parse_duration(d) {
                    Ok(d) => Kind::Sleep(d),
                    Err(_) => bail!("--test-drill: '{d}' is not a duration, fail, panic or unsupported"),
                },
            };
            let name: &'static str = Box::leak(format!("drill-{}", i + 1).into_boxed_str());
            v.push(Box::new(Drill { name, seed: SEEDS[i % SEEDS.len()], kind }));
        }
        Ok(v)
    }

    impl Experiment for Drill {
        fn name(&self) -> &'static str {
            self.name
        }
        fn seed(&self) -> &'static str {
            self.seed
        }
        fn title(&self) -> &'static str {
            "Test drill (synthetic, not a measurement)"
        }
        fn estimate_s(&self, _scale: Scale) -> f64 {
            match self.kind {
                Kind::Sleep(d) => d.as_secs_f64(),
                _ => 0.0,
            }
        }
        fn run(&self, ctx: &RunContext) -> anyhow::Result<Section> {
            let d = match self.kind {
                Kind::Sleep(d) => d,
                Kind::Fail => bail!("the drill was told to fail"),
                Kind::Panic => panic!("the drill was told to panic"),
                Kind::Unsupported => {
                    let mut s = Section::new(self.name, self.seed, self.title());
                    s.status = Status::Unsupported("the drill pretends a facility is missing".into());
                    return Ok(s);
                }
            };
            let t0 = Instant::now();
            while t0.elapsed() < d {
                if schedlab_os::signals::stop_requested() {
                    let mut s = Section::new(self.name, self.seed, self.title());
                    s.status = Status::Interrupted;
                    return Ok(s);
                }
                ctx.progress.update(t0.elapsed().as_secs_f64() / d.as_secs_f64(), "sleeping");
                std::thread::sleep(Duration::from_millis(20).min(d.saturating_sub(t0.elapsed())));
            }
            let slept = t0.elapsed().as_secs_f64();
            let dir = RunDir::create(&ctx.out_root, self.name)?;
            let points: Vec<(f64, f64)> = (0..=10).map(|i| (i as f64, (i * i) as f64)).collect();
            let data = json!({ "slept_s": slept, "asked_s": d.as_secs_f64(), "points": points });
            let doc = envelope(self.name, &json!({ "sleep_s": d.as_secs_f64() }), data);
            dir.write_json(&doc)?;
            let svg = LineChart {
                title: "Drill: y = x²".into(),
                x_label: "x".into(),
                y_label: "y".into(),
                series: vec![Series::new("x²", points)],
                ..Default::default()
            }
            .to_svg();
            dir.write_text("drill.svg", &svg)?;
            let mut s = Section::new(self.name, self.seed, self.title());
            s.summary =
                format!("A hidden test stand-in that slept {:.3} s; its numbers are synthetic.", d.as_secs_f64());
            let mut t = Table::new("Drill: asked vs slept", &["asked (s)", "slept (s)"]);
            t.row(vec![format!("{:.3}", d.as_secs_f64()), format!("{slept:.3}")]);
            s.tables.push(t);
            s.figures.push(Figure {
                title: "Drill figure".into(),
                file: "drill.svg".into(),
                svg,
                caption: "synthetic".into(),
            });
            s.verdicts.push(Verdict::check(
                "a sleep lasts at least as long as asked",
                slept >= d.as_secs_f64(),
                format!("asked {:.3} s, slept {slept:.3} s", d.as_secs_f64()),
            ));
            s.run_dir = Some(dir.path().display().to_string());
            s.data = doc;
            Ok(s)
        }
    }
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
        let dir = tempfile::tempdir().unwrap();
        let ctx = RunContext { scale: Scale::Quick, out_root: dir.path().into(), progress: &p };
        let s: Vec<Section> = ex.iter().map(|e| run_one(e.as_ref(), &ctx)).collect();
        assert!(matches!(&s[0].status, Status::Failed(w) if w.contains("told to fail")));
        assert!(matches!(&s[1].status, Status::Failed(w) if w.contains("panicked: the drill was told to panic")));
        assert!(matches!(&s[2].status, Status::Unsupported(_)));
        assert_eq!(s[1].seed, "001");
    }
}
