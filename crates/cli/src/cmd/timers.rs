//! `schedlab timers`: timer queues (seed 000) — the seed's experiment with the live sleep
//! service (`reproduce`), cost against the number of timers (`scale`), and our wheel and heap
//! beside bitwheel, hierarchical_hash_wheel_timer, tokio-util's DelayQueue and std's BinaryHeap
//! (`bench`).

use crate::host::Host;
use crate::output::{self, OutputArgs};
use crate::units;
use clap::Subcommand;
use schedlab_lab::timers::reproduce::{self, ArrayChoice};
use schedlab_lab::timers::service::TickMode;
use schedlab_lab::timers::{bench, scale, trial};
use schedlab_timerq::Kind;
use std::time::Duration;

/// Arguments of `schedlab timers`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

impl Args {
    /// Whether the command changes the machine (and so heals what dead runs left first). A
    /// trial is a child of `reproduce`, which already did.
    pub fn changes_machine(&self) -> bool {
        matches!(self.cmd, Cmd::Reproduce(_))
    }
}

#[derive(Subcommand)]
enum Cmd {
    /// Seed 000's experiment: 100 threads sleep for the seed's times (up to ~10 s) while a
    /// ticker drives each queue; prints Tables 1–2 beside the published averages.
    ///
    /// Each trial runs in its own child process so peak RSS and CPU time belong to one queue.
    /// A full run takes ~10 s per trial per queue (2 minutes for 4 queues × 3 trials).
    ///
    /// Examples:
    ///   schedlab timers reproduce --quick
    ///   schedlab timers reproduce --tick-mode sleep --queues delta,wheel --json
    #[command(verbatim_doc_comment)]
    Reproduce(ReproduceArgs),
    /// Cost per insert, cancel, tick and expiry for N = 10^2 … --max-n pending timers (CSV +
    /// log-log SVG). Series stop where the next size would exceed --budget; the output says so.
    ///
    /// Example: schedlab timers scale --max-n 100000
    Scale(ScaleArgs),
    /// Our wheel and heap beside four peers in one run: bitwheel, hierarchical_hash_wheel_timer,
    /// tokio-util DelayQueue (paused time) and std BinaryHeap (lazy cancel).
    ///
    /// For each size N: N timers (deadlines 1..10,000 ms) inserted at t = 0, 10% cancelled, the
    /// clock advanced in 1 ms ticks. Prints ns per insert, per cancel and per expiry (each phase
    /// timed apart) and Mops/s per implementation, and judges our wheel against the best peer
    /// at the largest N. The default sizes take about a minute; bitwheel preallocates ~2.4 GB
    /// at 10^6 timers.
    ///
    /// Examples:
    ///   schedlab timers bench --json
    ///   schedlab timers bench --sizes 1000,100000 --rounds 5
    #[command(verbatim_doc_comment)]
    Bench(BenchArgs),
    /// Internal: one trial in this process (used by `reproduce`; prints one JSON line).
    #[command(hide = true)]
    Trial {
        #[arg(long)]
        spec: String,
    },
}

#[derive(clap::Args)]
struct ReproduceArgs {
    /// Divide every sleep time by 20 (longest ~0.5 s instead of ~10 s); the output says so.
    #[arg(long)]
    quick: bool,
    /// Tick length: a positive duration with a unit (1ms, 500us, 4ms).
    #[arg(long, default_value = "1ms", value_parser = units::positive_duration)]
    tick: Duration,
    /// How the ticker waits: `busy` spins like the seed's mdelay (burns a CPU, precise);
    /// `sleep` uses absolute clock_nanosleep (cheap; adds wake-up latency).
    #[arg(long, default_value = "busy", value_parser = parse_tick_mode)]
    tick_mode: TickMode,
    /// Run the ticker and the sleepers under SCHED_FIFO at this priority (1–98; a higher
    /// number runs first). Needs root and `--tick-mode sleep`. Default: SCHED_OTHER, as the
    /// seed's kernel threads.
    #[arg(long, value_parser = clap::value_parser!(i32).range(1..=98))]
    rt_priority: Option<i32>,
    /// Trials per queue (the seed ran 3).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    trials: u32,
    /// Queues to run, comma-separated: control, delta, heap, wheel.
    #[arg(long, value_delimiter = ',', default_value = "control,delta,heap,wheel", value_parser = parse_kind)]
    queues: Vec<Kind>,
    /// Which arrays: `seed` = as the seed ran them (delta: Figure 9's array, control: Figure
    /// 10's; heap and wheel: Figure 9's); `fig9` or `fair` = Figure 9's array for every queue;
    /// `fig10` = Figure 10's for every queue.
    #[arg(long, default_value = "seed", value_parser = parse_array)]
    array: ArrayChoice,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(clap::Args)]
struct ScaleArgs {
    /// Largest number of pending timers N, at least 100 (sizes are 100, 1000, … up to this).
    #[arg(long, default_value_t = 1_000_000, value_parser = parse_max_n)]
    max_n: u64,
    /// Skip a (queue, N) measurement whose projected wall time exceeds this (e.g. 2s).
    #[arg(long, default_value = "5s", value_parser = units::positive_duration)]
    budget: Duration,
    /// Queues to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "control,delta,heap,wheel", value_parser = parse_kind)]
    queues: Vec<Kind>,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(clap::Args)]
struct BenchArgs {
    /// Numbers of pending timers N to run, comma-separated, each at least 1 (e.g.
    /// 1000,10000). The goal verdict is judged at the largest. `--timers N` is the same as
    /// `--sizes N`.
    #[arg(long, alias = "timers", value_delimiter = ',', default_value = "1000,10000,100000,1000000", value_parser = parse_timers)]
    sizes: Vec<u64>,
    /// Interleaved rounds; the median is reported.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    #[command(flatten)]
    output: OutputArgs,
}

/// A count of timers N with a lower bound, named in the error.
fn count_at_least(s: &str, min: u64) -> Result<u64, String> {
    let n: u64 = s.trim().parse().map_err(|_| format!("'{s}' is not a whole number of timers"))?;
    if n < min {
        return Err(format!("N = {n} is too small: it must be at least {min}"));
    }
    Ok(n)
}

fn parse_max_n(s: &str) -> Result<u64, String> {
    count_at_least(s, 100)
}

fn parse_timers(s: &str) -> Result<u64, String> {
    let n = count_at_least(s, 1)?;
    if n > u64::from(u32::MAX) {
        return Err(format!("N = {n} is too large: timers are numbered with 32 bits"));
    }
    Ok(n)
}

fn parse_kind(s: &str) -> Result<Kind, String> {
    s.parse()
}

fn parse_array(s: &str) -> Result<ArrayChoice, String> {
    s.parse()
}

fn parse_tick_mode(s: &str) -> Result<TickMode, String> {
    s.parse()
}

/// Run `schedlab timers`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.cmd {
        Cmd::Reproduce(a) => run_reproduce(a),
        Cmd::Scale(a) => run_scale(a),
        Cmd::Bench(a) => run_bench(a),
        Cmd::Trial { spec } => {
            schedlab_os::signals::default_sigpipe();
            let spec: trial::TrialSpec = serde_json::from_str(&spec)?;
            let report = trial::run_in_process(&spec)?;
            println!("{}", serde_json::to_string(&report)?);
            Ok(())
        }
    }
}

fn run_reproduce(a: ReproduceArgs) -> anyhow::Result<()> {
    let p = reproduce::Params {
        tick_ns: a.tick.as_nanos() as u64,
        tick_mode: a.tick_mode,
        rt_priority: a.rt_priority,
        trials: a.trials as usize,
        queues: units::unique(a.queues.clone()),
        array: a.array,
        time_divisor: if a.quick { 20 } else { 1 },
    };
    p.validate()?;
    let host = Host::collect();
    eprintln!("schedlab: {}", reproduce::scale_note(&p));
    let exe = std::env::current_exe()?;
    let q = reproduce::run(&p, &exe, &|_, what| eprintln!("schedlab: running {what}"))?;
    output::emit(reproduce::section(&p, &q), &a.output, &host)?;
    Ok(())
}

fn run_scale(a: ScaleArgs) -> anyhow::Result<()> {
    let p = scale::Params {
        max_n: a.max_n as usize,
        budget_s: a.budget.as_secs_f64(),
        queues: units::unique(a.queues),
        seed: 0,
    };
    let host = Host::collect();
    let o = scale::run(&p, &|what| eprintln!("schedlab: measuring {what}"))?;
    output::emit(o.section(&p), &a.output, &host)?;
    Ok(())
}

fn run_bench(a: BenchArgs) -> anyhow::Result<()> {
    let sizes = units::unique(a.sizes.into_iter().map(|n| n as usize).collect());
    let p = bench::Params { sizes, rounds: a.rounds as usize, ..bench::Params::default() };
    let host = Host::collect();
    let data = bench::run(&p, &|what| eprintln!("schedlab: bench {what}"))?;
    output::emit(bench::section(&p, data), &a.output, &host)?;
    Ok(())
}
