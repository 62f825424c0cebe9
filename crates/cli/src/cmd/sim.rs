//! `schedlab sim`: the scheduling simulator (seeds 003, 004) — compare policies on a workload,
//! the WRR study, and the engine benchmark against SimPy.

use crate::output;
use anyhow::{bail, Context, Result};
use schedlab_lab::simstudy::{self, bench, compare, gantt, wrr_study};
use schedlab_report::section::{Section, Table};
use schedlab_sim::engine::SimConfig;
use schedlab_sim::generate;
use schedlab_sim::policies::{spec::parse_time, CATALOGUE};
use schedlab_sim::workload::Workload;
use serde_json::json;
use std::path::PathBuf;

/// Simulate CPU scheduling policies on a workload, side by side.
///
/// Times are in milliseconds unless suffixed (`500us`, `2ms`, `1s`). Priorities: a LOWER number
/// is a HIGHER priority (0 beats 3), in workload files and in every policy.
#[derive(clap::Args)]
#[command(after_help = "Times are in milliseconds unless suffixed (500us, 2ms, 1s). Priorities: a LOWER number is a \
HIGHER priority (0 beats 3), in workload files and in every policy.\n\nExamples:\n  \
schedlab sim run --workload w.json --policy fcfs --policy rr:quantum=4 --gantt g.svg\n  \
schedlab sim wrr-study\n  schedlab sim bench --simpy")]
pub struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Subcommand)]
enum Cmd {
    Run(RunArgs),
    WrrStudy(WrrArgs),
    Bench(BenchArgs),
    /// List the policy specs and their parameters.
    Policies,
}

/// Run a workload under one or more policies and compare them side by side.
///
/// Workload file (JSON; times in ms, fractions allowed; unknown fields are errors):
///   {"cpus":1,"tasks":[{"name":"P1","arrival":0,"bursts":[24],"priority":3,"weight":1}]}
/// Task fields: name, arrival, bursts (CPU, I/O, CPU, … — odd count), priority (lower number =
/// higher priority; default 0), weight (≥ 1; WRR/stride/lottery), nice (−20..19; CFS),
/// deadline (relative, per job), period + jobs (periodic tasks), affinity (CPU list),
/// class (queue for mlq: "0","1"…; linux: "deadline"/"fifo"/"rr"; freebsd: "interrupt"/
/// "realtime"/"idle"; windows: "realtime"/"foreground"), locks ([{"name":"L","burst":0}]: held
/// for the whole of that CPU burst).
///
/// Examples:
///   schedlab sim run --workload w.json --policy fcfs --policy rr:quantum=4 --gantt g.svg
///   schedlab sim run --generate poisson:n=1000,rate=150,mean=5 --cpus 2 --policy cfs --policy srtf
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct RunArgs {
    /// Workload file (JSON, times in ms).
    #[arg(long, conflicts_with = "generate", required_unless_present = "generate")]
    workload: Option<PathBuf>,
    /// Generate a seeded workload instead, e.g. `poisson:n=1000,rate=100,mean=5,seed=1`
    /// (also: bursts=N CPU bursts per task, io=MS mean I/O between them, priorities=K, weights=K).
    #[arg(long)]
    generate: Option<String>,
    /// A policy spec; repeat to compare several (see `schedlab sim policies`).
    #[arg(long = "policy", required = true)]
    policies: Vec<String>,
    /// Number of CPUs (default: the workload's `cpus`, else 1).
    #[arg(long)]
    cpus: Option<usize>,
    /// Context-switch cost, paid when a CPU switches to a different task (default 0).
    #[arg(long, default_value = "0")]
    switch_cost: String,
    /// Stop at this virtual time (unfinished tasks show no finish).
    #[arg(long)]
    horizon: Option<String>,
    /// One run queue per CPU (with wake-up placement and idle pulling) instead of one global queue.
    #[arg(long)]
    per_cpu: bool,
    /// Turn priority inheritance off (a lock holder keeps its own priority).
    #[arg(long)]
    no_inherit: bool,
    /// Also print one table per policy with every task.
    #[arg(long)]
    tasks: bool,
    /// Write a Gantt chart (SVG) of every policy's run.
    #[arg(long)]
    gantt: Option<PathBuf>,
    /// Save the (generated) workload as a JSON file.
    #[arg(long)]
    save_workload: Option<PathBuf>,
    /// Root directory for results (`<out>/sim-run/<UTC timestamp>/`).
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// Print one JSON document (a `policies` array; times in ms) instead of tables.
    #[arg(long)]
    json: bool,
}

/// Seed 004 in simulation: WRR work per weight and finish time per start order.
///
/// Six CPU-bound tasks with weights 1, 4, 8, 12, 16, 20 on one CPU, slice = quantum × weight.
/// Test 1: CPU work in 30 s, as a fold over weight 1. Test 2: time to finish a fixed job
/// (2 M iterations at the rate of the seed's test 1), over every start order (720) or --orders
/// random ones. The seed's measured numbers are printed beside.
#[derive(clap::Args)]
pub struct WrrArgs {
    /// Start orders to simulate (0 = all 720).
    #[arg(long, default_value_t = 0)]
    orders: usize,
    /// Seed for sampling orders.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Base quantum (slice = quantum × weight).
    #[arg(long, default_value = "10")]
    quantum: String,
    /// Context-switch cost.
    #[arg(long, default_value = "0")]
    switch_cost: String,
    #[arg(long, default_value = "results")]
    out: PathBuf,
    #[arg(long)]
    json: bool,
}

/// Benchmark the engine (events/s) on a Poisson workload, optionally against SimPy.
///
/// The workload: Poisson arrivals at 180/s, exponential CPU bursts of mean 5 ms (load 0.9), 1 CPU.
///
/// With --simpy, the same tasks also run through bench/sim/simpy_rr.py (SimPy round robin),
/// --repeat times as well (best time kept on both sides), and the ratio is printed. Take numbers on a quiet machine (e.g. under
/// `flock /tmp/schedlab-measure.lock`).
#[derive(clap::Args)]
pub struct BenchArgs {
    /// Number of tasks.
    #[arg(long, default_value_t = 100_000)]
    tasks: usize,
    /// Policies to time (default: rr:quantum=2 and cfs).
    #[arg(long = "policy")]
    policies: Vec<String>,
    /// Repeats per policy (and of the SimPy model); the best time is kept.
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Also run the SimPy model of the first rr policy and print the ratio.
    #[arg(long)]
    simpy: bool,
    /// Python interpreter for --simpy.
    #[arg(long, default_value = "python3")]
    python: String,
    /// The SimPy model.
    #[arg(long, default_value = "bench/sim/simpy_rr.py")]
    simpy_script: PathBuf,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value = "results")]
    out: PathBuf,
    #[arg(long)]
    json: bool,
}

/// Run `schedlab sim`.
pub fn run(args: Args) -> Result<()> {
    match args.cmd {
        Cmd::Run(a) => run_cmd(a),
        Cmd::WrrStudy(a) => wrr_cmd(a),
        Cmd::Bench(a) => bench_cmd(a),
        Cmd::Policies => {
            let mut t = Table::new(
                "Policy specs (name:key=value,...; times in ms unless suffixed)",
                &["spec (defaults)", "what"],
            );
            for (s, d) in CATALOGUE {
                t.row(vec![s.to_string(), d.to_string()]);
            }
            println!("{}", schedlab_report::table::render(&t));
            println!("Priorities: a lower number is a higher priority.");
            Ok(())
        }
    }
}

fn time_arg(flag: &str, v: &str) -> Result<u64> {
    parse_time(v).with_context(|| format!("--{flag} `{v}` is not a time (e.g. 0.01, 10us, 2ms)"))
}

fn run_cmd(a: RunArgs) -> Result<()> {
    // Everything is validated before anything runs.
    let w = match (&a.workload, &a.generate) {
        (Some(p), _) => {
            let text = std::fs::read_to_string(p).with_context(|| format!("reading workload {}", p.display()))?;
            Workload::from_json_str(&text).with_context(|| format!("workload {}", p.display()))?
        }
        (None, Some(g)) => generate::by_spec(g).context("--generate")?,
        (None, None) => bail!("give --workload FILE or --generate SPEC"),
    };
    compare::check_specs(&a.policies)?;
    let cpus = a.cpus.or(w.cpus).unwrap_or(1);
    if cpus == 0 || cpus > 1024 {
        bail!("--cpus {cpus}: must be 1..=1024");
    }
    w.check_cpus(cpus).context("workload does not fit --cpus")?;
    let cfg = SimConfig {
        cpus,
        switch_cost: time_arg("switch-cost", &a.switch_cost)?,
        horizon: a.horizon.as_deref().map(|h| time_arg("horizon", h)).transpose()?,
        priority_inheritance: !a.no_inherit,
        record_slices: a.gantt.is_some(),
        task_results: true,
        check_invariants: false,
    };
    if let Some(p) = &a.save_workload {
        std::fs::write(p, w.to_json_string()).with_context(|| format!("writing {}", p.display()))?;
    }
    let results = compare::run_all(&w, &a.policies, &cfg, a.per_cpu)?;
    let doc = compare::comparison_json(&results, &cfg, a.per_cpu);
    let mut s = Section::new("sim-run", "003", "Policies side by side");
    s.tables.push(compare::comparison_table(&results));
    if a.tasks {
        s.tables.extend(results.iter().map(compare::task_table));
    }
    if let Some(path) = &a.gantt {
        let svg = gantt::chart(&w, &results, "Who ran where", None).to_svg();
        std::fs::write(path, &svg).with_context(|| format!("writing {}", path.display()))?;
        s.figures.push(schedlab_report::section::Figure {
            title: "Gantt".into(),
            file: "gantt.svg".into(),
            svg,
            caption: String::new(),
        });
    }
    s.summary = format!(
        "{} tasks on {cpus} CPU(s), {} queue(s), switch cost {} ms.",
        w.tasks.len(),
        if a.per_cpu { "per-CPU" } else { "one global" },
        cfg.switch_cost as f64 / 1e6
    );
    s.data = doc.clone();
    let params = json!({"workload": a.workload, "generate": a.generate, "policies": a.policies, "cpus": cpus,
        "switch_cost_ns": cfg.switch_cost, "horizon_ns": cfg.horizon, "per_cpu": a.per_cpu, "priority_inheritance": !a.no_inherit});
    simstudy::write_run(&mut s, &a.out, &params)?;
    if a.json {
        output::print_json(&doc)
    } else {
        output::print_section(&s);
        if let Some(p) = &a.gantt {
            println!("gantt: {}", p.display());
        }
        Ok(())
    }
}

fn wrr_cmd(a: WrrArgs) -> Result<()> {
    let mut params = wrr_study::Params::from_seed((a.orders > 0).then_some(a.orders), a.seed);
    let q = time_arg("quantum", &a.quantum)?;
    if q == 0 {
        bail!("--quantum {}: must be > 0", a.quantum);
    }
    params.quantum_ms = q as f64 / 1e6;
    params.switch_cost_us = time_arg("switch-cost", &a.switch_cost)? as f64 / 1e3;
    let o = wrr_study::run(&params);
    let mut s = simstudy::wrr_section(&o);
    simstudy::write_run(&mut s, &a.out, &params)?;
    output::emit(&s, a.json)
}

fn bench_cmd(a: BenchArgs) -> Result<()> {
    if a.tasks == 0 {
        bail!("--tasks must be ≥ 1");
    }
    let specs =
        if a.policies.is_empty() { vec!["rr:quantum=2".to_string(), "cfs".to_string()] } else { a.policies.clone() };
    compare::check_specs(&specs)?;
    let rr_quantum = specs.iter().find_map(|s| {
        let p = schedlab_sim::policies::Params::parse(s).ok()?;
        (p.name == "rr").then(|| s.split("quantum=").nth(1).and_then(parse_time).unwrap_or(4_000_000))
    });
    if a.simpy && rr_quantum.is_none() {
        bail!("--simpy compares round robin: include an rr policy");
    }
    eprintln!("generating {} tasks …", a.tasks);
    let w = bench::workload(a.tasks, a.seed);
    let mut rows = bench::run(&w, &specs, a.repeat)?;
    let mut s = Section::new("sim-bench", "003", "Simulator benchmark");
    let tmp = schedlab_report::results::RunDir::create(&a.out, "sim-bench")?;
    if a.simpy {
        eprintln!("running the SimPy model …");
        let quantum = rr_quantum.expect("checked");
        rows.push(bench::run_simpy(&a.python, &a.simpy_script, &w, quantum, a.repeat, tmp.path())?);
    }
    let mut t = Table::new(
        format!("{} tasks, Poisson arrivals 180/s, exponential bursts mean 5 ms (load 0.9), 1 CPU", a.tasks),
        &["engine", "policy", "output", "events", "seconds", "events/s", "avg turnaround ms"],
    );
    for r in &rows {
        t.row(vec![
            r.engine.clone(),
            r.policy.clone(),
            r.output.clone(),
            r.events.to_string(),
            format!("{:.4}", r.seconds),
            format!("{:.0}", r.events_per_s),
            format!("{:.3}", r.avg_turnaround_ms),
        ]);
    }
    let mut ratios = serde_json::Map::new();
    if let Some(py) = rows.iter().find(|r| r.engine == "simpy") {
        let rr = |output: &str| {
            rows.iter().find(|r| r.engine == "schedlab" && r.policy.starts_with("rr") && r.output == output)
        };
        let (overall, per_task) = (rr("overall").expect("rr ran"), rr("per-task").expect("rr ran"));
        for r in [overall, per_task] {
            ratios.insert(r.output.clone(), json!(py.seconds / r.seconds));
        }
        t.note = format!(
            "Same tasks, same RR model: SimPy took {:.3} s ({:.0} events/s). schedlab is {:.1}× faster producing the \
             overall metrics (as the SimPy model does) and {:.1}× faster producing a record per task as well \
             (wall-time ratios). Avg turnaround agrees to {:.4}%.",
            py.seconds,
            py.events_per_s,
            py.seconds / overall.seconds,
            py.seconds / per_task.seconds,
            100.0 * (overall.avg_turnaround_ms / py.avg_turnaround_ms - 1.0).abs()
        );
    }
    s.tables.push(t);
    s.data = json!({"rows": rows, "simpy_wall_time_ratio": ratios});
    let doc = schedlab_report::results::envelope(
        "sim-bench",
        &json!({"tasks": a.tasks, "policies": specs, "repeat": a.repeat, "seed": a.seed}),
        s.data.clone(),
    );
    tmp.write_json(&doc)?;
    s.run_dir = Some(tmp.path().display().to_string());
    output::emit(&s, a.json)
}
