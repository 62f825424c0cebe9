//! `schedlab sim sweep`: a grid of simulator runs on every core, streamed into a sweep
//! directory (rows.csv, rows.parquet), resumable and shardable, summarised (mean and 95%
//! interval over seeds, a figure per facet) into the results database.

use crate::host::Host;
use crate::output::{self, OutputArgs};
use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use schedlab_lab::sweep::{self, exec::Plan, grid::Grid, grid::Scalar, grid::Seeds, summary};
use schedlab_os::usage::OrUsage;
use schedlab_report::judge;
use schedlab_report::section::{ClaimKind, DataFile, Section, Table, Verdict};
use schedlab_report::shard::Shard;
use schedlab_report::tidy::TidyTable;
use serde_json::json;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

/// Run a grid of simulations on every core: policies × workloads × CPUs × switch costs × seeds.
///
/// The grid comes from a file (YAML, TOML or JSON) or from flags; flags given with a file
/// replace the file's field. Each point's row (its coordinates, then every metric) is appended
/// to DIR/rows.csv as it finishes, so a sweep stopped at any moment (Ctrl-C, SIGKILL, a node
/// lost) goes on with --resume and runs each point exactly once. When every point is in, the
/// rows are sorted and written to DIR/rows.parquet too, and a summary — each metric's mean and
/// 95% interval over the seeds per policy and load, a figure per CPU count and switch cost —
/// is recorded in the results database. Rows hold no wall times: a row is a pure function of
/// its point, so shards merged with --merge equal the whole sweep row for row.
///
/// Grid file (YAML):
///   policies: [fcfs, "rr:quantum=4ms", srtf, eevdf]
///   generate: "poisson:n=2000,mean=5ms"   # the generator, without the varied keys and seed
///   vary: {rate: [40, 80, 120, 160, 190]}  # each key a list; the grid takes their product
///   cpus: [1, 2]                           # default [1]
///   switch_cost: [0us, 50us]               # default [0us]
///   seeds: 5                               # 1..=5, or a list [3, 7]; default 1
///   tick: 4ms                              # the Linux models' tick (default 4ms; off)
///   per_cpu: false                         # one run queue per CPU
///   horizon: 60s                           # stop each run there (default: run to the end)
/// or, instead of generate/vary/seeds: workloads: [a.json, b.yaml] (paths relative to the grid).
///
/// Examples:
///   schedlab sim sweep grid.yaml --dir sweep-a
///   schedlab sim sweep --policy fcfs --policy srtf --generate poisson:n=1000,mean=5ms \
///       --vary rate=50,100,150,190 --seeds 10 --dir sweep-b
///   schedlab sim sweep grid.yaml --dir sweep-a --resume        # after a kill
///   schedlab sim sweep grid.yaml --dir part-3 --shard 3/8      # one job of an array
///   schedlab sim sweep --merge part-1 --merge part-2 … --dir whole
///   schedlab sim sweep grid.yaml --measure-scaling             # 1 job against --jobs
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct SweepArgs {
    /// The grid file (YAML, TOML or JSON).
    grid: Option<PathBuf>,
    /// A policy spec; repeat for several (see `schedlab sim policies`).
    #[arg(long = "policy")]
    policies: Vec<String>,
    /// The generator without the varied keys or seed, e.g. `poisson:n=1000,mean=5ms`.
    #[arg(long, conflicts_with = "workloads")]
    generate: Option<String>,
    /// A generator key and its values, e.g. `rate=50,100,150`; repeat for more keys.
    #[arg(long = "vary", value_name = "KEY=V1,V2,…")]
    vary: Vec<String>,
    /// A workload file instead of a generator; repeat for several.
    #[arg(long = "workload")]
    workloads: Vec<PathBuf>,
    /// CPU counts, e.g. `1,2,4`.
    #[arg(long, value_delimiter = ',')]
    cpus: Vec<usize>,
    /// Context-switch costs, e.g. `0us,50us`.
    #[arg(long, value_delimiter = ',')]
    switch_cost: Vec<String>,
    /// Seeds: a count N (seeds 1..=N) or a list `3,7,9`.
    #[arg(long)]
    seeds: Option<String>,
    /// The Linux models' tick (e.g. 4ms, or `off`); fixed here, not read from the host, so a
    /// sweep gives the same rows on every machine.
    #[arg(long)]
    tick: Option<String>,
    /// One run queue per CPU instead of one global queue.
    #[arg(long)]
    per_cpu: bool,
    /// Stop each run at this virtual time, e.g. 60s.
    #[arg(long)]
    horizon: Option<String>,
    /// The sweep directory (grid.json, rows.csv, rows.parquet).
    #[arg(long, default_value = "sweep", value_name = "DIR")]
    dir: PathBuf,
    /// Go on with the sweep in --dir (same grid, same shard): points already written are kept.
    #[arg(long)]
    resume: bool,
    /// Run only shard K of N (every N-th point from the K-th), for a job array.
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
    /// Worker threads (default: every CPU this process may use).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    jobs: Option<u16>,
    /// Merge these complete shard directories into --dir instead of running; repeat per shard.
    #[arg(long = "merge", value_name = "SHARD_DIR", conflicts_with_all = ["resume", "shard", "measure_scaling"])]
    merge: Vec<PathBuf>,
    /// Metrics to summarise (columns of rows.csv), default avg_turnaround_ms and avg_response_ms.
    #[arg(long = "metric")]
    metrics: Vec<String>,
    /// The summary's x axis: a varied key (rate, mean or bursts plot the offered load).
    #[arg(long = "x")]
    x: Option<String>,
    /// Write nothing to --dir: run the grid with one job, then with --jobs, and print the
    /// throughput of each and their ratio (the rows of both runs must be identical).
    #[arg(long)]
    measure_scaling: bool,
    /// With --measure-scaling: how many times to time the pair (one job, then --jobs). The
    /// goal (at least 90% of linear) is judged on the ratios' 95% interval, so one run can only
    /// be inconclusive.
    #[arg(long, value_name = "N", default_value_t = 3, requires = "measure_scaling",
          value_parser = clap::value_parser!(u32).range(1..=100))]
    scaling_runs: u32,
    #[command(flatten)]
    output: OutputArgs,
}

/// Run `schedlab sim sweep`.
pub fn run(a: SweepArgs) -> Result<()> {
    let host = Host::collect();
    let metrics = if a.metrics.is_empty() {
        vec!["avg_turnaround_ms".to_string(), "avg_response_ms".to_string()]
    } else {
        a.metrics.clone()
    };
    if let Some(bad) = metrics.iter().find(|m| !sweep::rows::METRICS.iter().any(|x| x.name == m.as_str())) {
        let known: Vec<&str> = sweep::rows::METRICS.iter().map(|m| m.name).collect();
        schedlab_os::bail_usage!("--metric {bad}: not a metric (known: {})", known.join(", "));
    }
    if !a.merge.is_empty() {
        let (manifest, rows) = sweep::merge(&a.merge, &a.dir).or_usage()?;
        eprintln!("schedlab: merged {} shard(s), {} points, into {}", a.merge.len(), rows.rows.len(), a.dir.display());
        let s = summary_section(&manifest.grid, &rows, &a, &metrics, &a.dir, json!({"merged": a.merge}))?;
        output::emit(s, &a.output, &host)?;
        return Ok(());
    }
    let grid = grid_of(&a)?;
    let files = grid.workloads.iter().map(|p| crate::workload_file::read(Path::new(p))).collect::<Result<Vec<_>>>()?;
    let plan = Plan::new(grid, files).context("the grid").or_usage()?;
    let jobs = a.jobs.map(usize::from).unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if a.measure_scaling {
        return scaling(&plan, &a, jobs, &host);
    }
    let mine = sweep::shard_points(plan.points.len(), a.shard);
    eprintln!(
        "schedlab: {} point(s){} on {jobs} thread(s) into {}",
        mine.len(),
        a.shard.map(|s| format!(" (shard {s} of a grid of {})", plan.points.len())).unwrap_or_default(),
        a.dir.display()
    );
    let bar = progress_bar(mine.len());
    let mut last_decile = usize::MAX;
    let done = sweep::run(&plan, &a.dir, a.resume, a.shard, jobs, &mut |n, total| {
        bar.set_position(n as u64);
        let decile = (n * 10).checked_div(total).unwrap_or(10);
        if bar.is_hidden() && decile != last_decile {
            eprintln!("schedlab:   {n} of {total} points");
            last_decile = decile;
        }
    })
    .or_usage()?;
    bar.finish_and_clear();
    if done.cut_bytes > 0 {
        eprintln!(
            "schedlab: cut a torn last line ({} bytes) left by the killed run; its point ran again",
            done.cut_bytes
        );
    }
    eprintln!(
        "schedlab: {} point(s) run in {:.1} s ({:.1} points/s), {} kept from before; rows in {}",
        done.ran.points,
        done.ran.seconds,
        done.ran.points as f64 / done.ran.seconds.max(1e-9),
        done.kept,
        a.dir.display()
    );
    let params = json!({"shard": a.shard.map(|s| s.to_string()), "jobs": jobs, "resumed": a.resume,
        "points_run": done.ran.points, "points_kept": done.kept, "seconds": done.ran.seconds});
    let s = summary_section(&plan.grid, &done.rows, &a, &metrics, &a.dir, params)?;
    output::emit(s, &a.output, &host)?;
    Ok(())
}

/// The grid: the file's, with each field given by a flag replaced.
fn grid_of(a: &SweepArgs) -> Result<Grid> {
    let mut g = match &a.grid {
        Some(p) => {
            let mut g = Grid::read(p).or_usage()?;
            // Workload paths in a grid file are relative to the file.
            let base = p.parent().unwrap_or(Path::new(""));
            for w in &mut g.workloads {
                if Path::new(w).is_relative() {
                    *w = base.join(&*w).display().to_string();
                }
            }
            g
        }
        None => {
            if a.policies.is_empty() {
                schedlab_os::bail_usage!("give a grid file, or --policy (and --generate or --workload)");
            }
            Grid::with_policies(vec![])
        }
    };
    if !a.policies.is_empty() {
        g.policies = a.policies.clone();
    }
    if let Some(spec) = &a.generate {
        g.generate = Some(spec.clone());
        g.workloads.clear();
    }
    if !a.workloads.is_empty() {
        g.workloads = a.workloads.iter().map(|p| p.display().to_string()).collect();
        g.generate = None;
    }
    if !a.vary.is_empty() {
        g.vary = BTreeMap::new();
        for v in &a.vary {
            let Some((key, values)) = v.split_once('=') else {
                schedlab_os::bail_usage!("--vary '{v}': write KEY=V1,V2,… (e.g. rate=50,100,150)");
            };
            g.vary.insert(key.trim().to_string(), values.split(',').map(|x| Scalar::parse(x.trim())).collect());
        }
    }
    if !a.cpus.is_empty() {
        g.cpus = a.cpus.clone();
    }
    if !a.switch_cost.is_empty() {
        g.switch_cost = a.switch_cost.clone();
    }
    if let Some(s) = &a.seeds {
        g.seeds =
            match s.parse::<u64>() {
                Ok(n) if !s.contains(',') => Seeds::Count(n),
                _ => Seeds::List(s.split(',').map(|x| x.trim().parse::<u64>()).collect::<Result<_, _>>().map_err(
                    |_| schedlab_os::usage::UsageError(format!("--seeds '{s}': a count or a list of whole numbers")),
                )?),
            };
    }
    if let Some(t) = &a.tick {
        g.tick = t.clone();
    }
    if a.per_cpu {
        g.per_cpu = true;
    }
    if let Some(h) = &a.horizon {
        g.horizon = Some(h.clone());
    }
    Ok(g)
}

fn progress_bar(total: usize) -> ProgressBar {
    let bar = ProgressBar::new(total as u64);
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} points  {per_sec}  {elapsed} elapsed, {eta} left")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// The summary of a finished sweep as a section (tables, figures, where the rows are).
fn summary_section(
    grid: &Grid,
    rows: &TidyTable,
    a: &SweepArgs,
    metrics: &[String],
    dir: &Path,
    extra: serde_json::Value,
) -> Result<Section> {
    let counts: BTreeMap<String, usize> = grid.vary.iter().map(|(k, v)| (k.clone(), v.len())).collect();
    let axis = summary::Axis::choose(&counts, a.x.as_deref()).map_err(schedlab_os::usage::UsageError)?;
    let vary: Vec<String> = grid.vary.keys().cloned().collect();
    let sum = summary::build(rows, &vary, &axis, metrics);
    let mut s = Section::new("sim-sweep", "003", "Simulator sweep");
    s.summary = format!(
        "{} points: {} policies × {} workload(s) × {} CPU count(s) × {} switch cost(s). Rows in {} (rows.csv, rows.parquet).{}",
        rows.rows.len(),
        grid.policies.len(),
        rows.rows.len() / (grid.policies.len() * grid.cpus.len() * grid.switch_cost.len()).max(1),
        grid.cpus.len(),
        grid.switch_cost.len(),
        dir.display(),
        if sum.figures_wanted > summary::MAX_FIGURES {
            format!(" Figures for the first {} of {} facets.", summary::MAX_FIGURES, sum.figures_wanted)
        } else {
            String::new()
        }
    );
    s.results = json!({"points": rows.rows.len(), "rows_csv": dir.join("rows.csv"), "rows_parquet": dir.join("rows.parquet"), "summary": sum.records});
    s.tables = sum.tables;
    s.figures = sum.figures;
    s.parameters = json!({"grid": grid, "dir": dir, "metrics": metrics, "x": axis.key, "run": extra});
    s.files.push(DataFile::text("grid.json", serde_json::to_string_pretty(grid)?));
    Ok(s)
}

/// `--measure-scaling`: the grid with one job, then with `jobs`, `--scaling-runs` times; no rows
/// written.
fn scaling(plan: &Plan, a: &SweepArgs, jobs: usize, host: &Host) -> Result<()> {
    let points = sweep::shard_points(plan.points.len(), a.shard);
    let rate = |r: &sweep::exec::Ran| r.points as f64 / r.seconds.max(1e-9);
    let mut t = Table::new(
        format!("{} points, 1 job then {jobs}, timed {} time(s)", points.len(), a.scaling_runs),
        &["run", "1 job s", "1 job points/s", "jobs s", "jobs points/s", "ratio"],
    );
    let (mut ratios, mut runs, mut same) = (Vec::new(), Vec::new(), true);
    for run in 1..=a.scaling_runs {
        eprintln!(
            "schedlab: run {run} of {}: {} point(s) with 1 job, then with {jobs} …",
            a.scaling_runs,
            points.len()
        );
        let (one, many, identical) = sweep::measure_scaling(plan, &points, jobs)?;
        let ratio = rate(&many) / rate(&one);
        t.row(vec![
            run.to_string(),
            format!("{:.3}", one.seconds),
            format!("{:.1}", rate(&one)),
            format!("{:.3}", many.seconds),
            format!("{:.1}", rate(&many)),
            format!("{ratio:.3}"),
        ]);
        ratios.push(ratio);
        same &= identical;
        runs.push(json!({"one_job_s": one.seconds, "jobs_s": many.seconds, "ratio": ratio}));
    }
    let target = 0.9 * jobs as f64;
    let mut s = Section::new("sim-sweep-scaling", "003", "Sweep throughput: one job against all");
    s.summary = format!(
        "Wall-time ratios of {jobs} jobs against 1, each pair timed back to back on {} CPU(s) online; the rows of every run are {}.",
        host.facts.cpus_online,
        if same { "identical" } else { "NOT identical" }
    );
    s.tables.push(t);
    s.verdicts.push(judge::at_least(
        ClaimKind::Goal,
        format!("{jobs} jobs give at least {target:.1}× the throughput of one (90% of linear)"),
        &ratios,
        target,
        "×",
    ));
    s.verdicts.push(Verdict::identity("The rows do not depend on the number of threads", same, "every cell compared"));
    s.parameters = json!({"grid": plan.grid, "jobs": jobs, "points": points.len(), "scaling_runs": a.scaling_runs});
    s.results = json!({"points": points.len(), "jobs": jobs, "runs": runs, "ratios": ratios, "rows_identical": same});
    output::emit(s, &a.output, host)?;
    Ok(())
}
