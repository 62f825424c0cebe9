//! `schedlab sim`: the scheduling simulator (seeds 003, 004) — compare policies on a workload,
//! the WRR study, and the engine benchmark against SimPy.

mod analyze;
mod convert;
mod run;
mod sweep;

use crate::host::Host;
use crate::output::{self, OutputArgs};
use anyhow::{Context, Result};
use schedlab_lab::simstudy::simpy_peer::SimpyPeer;
use schedlab_lab::simstudy::{bench, compare, wrr_section, wrr_study};
use schedlab_os::usage::OrUsage;
use schedlab_sim::policies::spec::parse_time;
use serde_json::json;
use std::path::PathBuf;

/// Simulate CPU scheduling policies on a workload, side by side.
///
/// Times on the command line and in policy specs carry their unit (`500us`, `2ms`, `1s`);
/// workload files give them in milliseconds. Priorities: a LOWER number is a HIGHER priority
/// (0 beats 3), in workload files and in every policy.
#[derive(clap::Args)]
#[command(after_help = "Times on the command line and in policy specs carry their unit (500us, 2ms, 1s); workload \
files give them in milliseconds. Priorities: a LOWER number is a \
HIGHER priority (0 beats 3), in workload files and in every policy.\n\nExamples:\n  \
schedlab sim run --workload w.json --policy fcfs --policy rr:quantum=4ms --gantt g.svg\n  \
schedlab sim analyze --workload periodic.json\n  schedlab sim sweep grid.yaml --dir sweep-a\n  schedlab sim wrr-study\n  schedlab sim bench --simpy")]
pub struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Subcommand)]
enum Cmd {
    Run(Box<run::RunArgs>),
    Analyze(analyze::AnalyzeArgs),
    Sweep(Box<sweep::SweepArgs>),
    WrrStudy(WrrArgs),
    Bench(BenchArgs),
    /// List the policy specs and their parameters.
    Policies,
    /// Convert a workload between schedlab JSON, YAML and rt-app JSON.
    Convert(convert::ConvertArgs),
    /// Print the JSON Schema of workload files (for editors and validators), derived from the
    /// types the files are read into.
    Schema,
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
    /// Base quantum (slice = quantum × weight), e.g. 10ms.
    #[arg(long, default_value = "10ms")]
    quantum: String,
    /// Context-switch cost, e.g. 50us.
    #[arg(long, default_value = "0ms")]
    switch_cost: String,
    #[command(flatten)]
    output: OutputArgs,
}

/// Benchmark the engine (events/s) on a Poisson workload, optionally against SimPy.
///
/// The workload: Poisson arrivals at 180/s, exponential CPU bursts of mean 5 ms (load 0.9), 1 CPU.
///
/// With --simpy, the same tasks also run through bench/sim/simpy_rr.py (SimPy round robin),
/// --repeat times as well, each of its timed runs right after one of round robin's (so a slow
/// spell of the host falls on both sides of a pair); a trial of round robin is as many runs
/// back to back as fill one of SimPy's, divided. The ratio of each pair is judged and the ratio
/// of the best times printed. Take numbers on a quiet machine (e.g. under
/// `flock /tmp/schedlab-measure.lock`).
#[derive(clap::Args)]
pub struct BenchArgs {
    /// Number of tasks.
    #[arg(long, default_value_t = 100_000)]
    tasks: usize,
    /// Policies to time (default: rr:quantum=2ms and cfs); `all` times every policy of the
    /// catalogue (`schedlab sim policies`).
    #[arg(long = "policy")]
    policies: Vec<String>,
    /// Time only the overall metrics (no per-task records): the mode for memory at millions of
    /// tasks, e.g. --tasks 10000000 --overall-only.
    #[arg(long)]
    overall_only: bool,
    /// Timed runs per policy (and of the SimPy model, paired with round robin's); the best time
    /// is shown, every run judged (a 95% interval over 3 runs is wide: t = 4.3).
    #[arg(long, default_value_t = 5)]
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
    #[command(flatten)]
    output: OutputArgs,
}

/// Run `schedlab sim`.
pub fn run(args: Args) -> Result<()> {
    match args.cmd {
        Cmd::Run(a) => run::run(*a),
        Cmd::Analyze(a) => analyze::run(a),
        Cmd::Sweep(a) => sweep::run(*a),
        Cmd::WrrStudy(a) => wrr_cmd(a),
        Cmd::Bench(a) => bench_cmd(a),
        Cmd::Policies => {
            println!("{}", schedlab_report::table::render(&compare::catalogue_table()));
            Ok(())
        }
        Cmd::Convert(a) => convert::run(a),
        Cmd::Schema => output::print_json(&schedlab_sim::workload::json_schema()),
    }
}

pub(super) fn time_arg(flag: &str, v: &str) -> Result<u64> {
    parse_time(v).map_err(|e| schedlab_os::usage::UsageError(format!("--{flag}: {e}")).into())
}

fn wrr_cmd(a: WrrArgs) -> Result<()> {
    let mut params = wrr_study::Params::from_seed((a.orders > 0).then_some(a.orders), a.seed);
    let q = time_arg("quantum", &a.quantum)?;
    if q == 0 {
        schedlab_os::bail_usage!("--quantum {}: must be > 0", a.quantum);
    }
    params.quantum_ms = q as f64 / 1e6;
    params.switch_cost_us = time_arg("switch-cost", &a.switch_cost)? as f64 / 1e3;
    let host = Host::collect();
    output::emit(wrr_section::section(&wrr_study::run(&params)), &a.output, &host)?;
    Ok(())
}

fn bench_cmd(a: BenchArgs) -> Result<()> {
    if a.tasks == 0 {
        schedlab_os::bail_usage!("--tasks must be ≥ 1");
    }
    let specs = if a.policies.is_empty() {
        vec!["rr:quantum=2ms".to_string(), "cfs".to_string()]
    } else {
        a.policies.iter().flat_map(|p| if p == "all" { bench::catalogue_specs() } else { vec![p.clone()] }).collect()
    };
    compare::check_specs(&specs).context("--policy").or_usage()?;
    let rr = specs.iter().find_map(|s| {
        let mut p = schedlab_sim::policies::Params::parse(s).ok()?;
        // The spec was checked above; the default is rr's own.
        (p.name == "rr").then(|| (s.clone(), p.time("quantum", 4.0).unwrap_or(4_000_000)))
    });
    if a.simpy && rr.is_none() {
        schedlab_os::bail_usage!("--simpy compares round robin: include an rr policy");
    }
    let host = Host::collect();
    eprintln!("generating {} tasks …", a.tasks);
    let w = bench::workload(a.tasks, a.seed);
    let peer = match (a.simpy, rr) {
        (true, Some((spec, quantum))) => {
            eprintln!("starting the SimPy model (its runs alternate with {spec}'s) …");
            Some(SimpyPeer::start(&a.python, &a.simpy_script, &w, &spec, quantum)?)
        }
        _ => None,
    };
    let rows = bench::run(&w, &specs, a.repeat, a.overall_only, peer)?;
    let mut s = bench::section(a.tasks, rows);
    s.parameters = json!({"tasks": a.tasks, "policies": specs, "repeat": a.repeat, "seed": a.seed, "overall_only": a.overall_only});
    output::emit(s, &a.output, &host)?;
    Ok(())
}
