//! `schedlab wrr`: live weighted round robin (seed 004) — `run` drives real processes with the
//! simulator's WRR policy; `study` repeats the seed's two tests live and beside the kernel's
//! own ways of weighting CPU time.

use crate::host::Host;
use crate::output::{self, OutputArgs};
use crate::progress::CommandProgress;
use crate::units;
use anyhow::Result;
use clap::Subcommand;
use schedlab_lab::wrr::host::{self, HostConfig, Mechanism};
use schedlab_lab::wrr::run_section;
use schedlab_lab::wrr::spec::{self, WrrTask};
use schedlab_lab::wrr::study::{self, Mechanisms};
use schedlab_os::usage::OrUsage;
use schedlab_sim::policies::WeightedRoundRobin;
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `schedlab wrr`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    verb: Verb,
}

impl Args {
    /// Whether the command changes the machine (and so heals what dead runs left first).
    pub fn changes_machine(&self) -> bool {
        matches!(self.verb, Verb::Run(_) | Verb::Study(_))
    }
}

#[derive(Subcommand)]
enum Verb {
    /// Run commands under weighted round robin on a pinned CPU and measure their shares.
    ///
    /// Each task gets a slice of QUANTUM × WEIGHT of CPU time per round, in turn, as in the
    /// seed's kernel module. The tasks are SCHED_FIFO processes pinned to --cpus (default: the
    /// last CPU); the dispatcher runs at a higher SCHED_FIFO priority on another CPU. At the
    /// end (or on Ctrl-C/SIGTERM) the tasks get SIGTERM, then SIGKILL after 2 s; if the
    /// dispatcher is killed, the kernel kills the tasks (PR_SET_PDEATHSIG). Needs root.
    ///
    /// Example:
    ///   schedlab wrr run --quantum 10ms --duration 5s \
    ///     --task '1:schedlab workload crypt --forever' \
    ///     --task '4:schedlab workload crypt --forever' --gantt wrr.svg
    #[command(verbatim_doc_comment)]
    Run(RunArgs),
    /// The seed's two tests live (weights 1,4,8,12,16,20), beside the seed, the simulator and
    /// the kernel's alternatives (cgroup CPU weights, nice levels, SCHED_DEADLINE).
    ///
    /// Test 1: crypt iterations in a fixed time (seed: 30 s, 10 runs); fold over weight 1.
    /// Test 2: time for each task to finish the same amount of hashing; fold over weight 20.
    /// --quick takes about 70 s, the default about 3 minutes, --full the seed's 10 × 30 s for
    /// every mechanism (about 30 minutes; `--full --only wrr --test1-only` is the 5-minute
    /// 30 s test alone). Needs root. Run it on a quiet machine: other load on the managed CPU's
    /// sibling changes the hash rate (work per CPU second), not the CPU shares.
    ///
    /// Example: sudo schedlab wrr study --quick
    Study(StudyArgs),
}

#[derive(clap::Args)]
struct RunArgs {
    /// Base quantum: a task of weight W gets a slice of W × QUANTUM of CPU time (e.g. 10ms).
    #[arg(long, default_value = "10ms", value_parser = units::positive_duration)]
    quantum: Duration,
    /// A task: WEIGHT:COMMAND, weight 1-20 (the seed's range); repeat for more tasks. The
    /// command is split into words as a shell would (quotes group words; nothing is expanded),
    /// so `--task "2:sh -c 'exec my-job --fast'"` works; use `sh -c '...'` for shell syntax
    /// (only the started process is scheduled: make it exec the real work).
    #[arg(long = "task", value_name = "WEIGHT:CMD")]
    tasks: Vec<String>,
    /// How long to run. The run then continues to the next round boundary (every task has had
    /// the same number of slices) so shares are not skewed by a partial round.
    #[arg(long, default_value = "30s", value_parser = units::positive_duration)]
    duration: Duration,
    /// Stop exactly at --duration instead of at the next round boundary.
    #[arg(long)]
    exact_duration: bool,
    /// CPUs the tasks run on (e.g. `1` or `2-3`); must leave at least one CPU free.
    /// Default: the last CPU.
    #[arg(long, value_name = "LIST")]
    cpus: Option<String>,
    /// prio: SCHED_FIFO priority rotation (work-conserving when a task blocks);
    /// signal: SIGSTOP/SIGCONT (only the chosen task can run at all).
    #[arg(long, default_value = "prio")]
    mechanism: Mechanism,
    /// How often the dispatcher also wakes between slice ends to reap tasks that exited and
    /// notice Ctrl-C (a task that exits mid-slice frees the CPU at most this late).
    #[arg(long, default_value = "20ms", value_parser = units::positive_duration)]
    poll: Duration,
    /// Allow weights above 20 (up to 10000).
    #[arg(long)]
    allow_wide_weights: bool,
    /// Also write the Gantt chart (SVG) to this file.
    #[arg(long, value_name = "FILE", value_parser = crate::paths::writable_file)]
    gantt: Option<PathBuf>,
    /// How many seconds from the start the Gantt chart shows.
    #[arg(long, default_value = "2s", value_parser = units::positive_duration)]
    gantt_window: Duration,
    /// Also write the whole run as Chrome Trace Event JSON to FILE (open it in
    /// ui.perfetto.dev); the run directory keeps it as timeline.trace.json either way.
    #[arg(long, value_name = "FILE", value_parser = crate::paths::writable_file)]
    trace_out: Option<PathBuf>,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(clap::Args)]
struct StudyArgs {
    /// About 70 s: 8-round runs, 3 repetitions, a 5% hashing job.
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// The seed's scale: 10 runs of 30 s for test 1 and the full hashing job for test 2.
    #[arg(long)]
    full: bool,
    /// Which mechanisms to measure (comma-separated): wrr, cgroup, nice, deadline.
    #[arg(long, value_delimiter = ',', default_value = "wrr,cgroup,nice,deadline")]
    only: Vec<String>,
    /// Skip test 2 (time to finish a fixed job).
    #[arg(long, conflicts_with = "test2_only")]
    test1_only: bool,
    /// Skip test 1 (work in a fixed time) for the live host; the kernel alternatives named in
    /// --only still run test 1.
    #[arg(long)]
    test2_only: bool,
    #[command(flatten)]
    output: OutputArgs,
}

/// Run `schedlab wrr`.
pub fn run(args: Args) -> Result<()> {
    match args.verb {
        Verb::Run(a) => run_live(a),
        Verb::Study(a) => run_study(a),
    }
}

fn run_live(a: RunArgs) -> Result<()> {
    let max_w = if a.allow_wide_weights { spec::WIDE_MAX_WEIGHT } else { spec::SEED_MAX_WEIGHT };
    let tasks: Vec<WrrTask> = a.tasks.iter().map(|t| WrrTask::parse(t, max_w)).collect::<Result<_>>()?;
    spec::check_tasks(&tasks)?;
    let mut cfg = HostConfig::new(a.duration.as_nanos() as u64);
    if let Some(list) = &a.cpus {
        cfg.cpus = schedlab_os::affinity::parse_cpu_list(list)?;
    }
    cfg.dispatcher_cpu = host::dispatcher_cpu_for(&cfg.cpus);
    cfg.mechanism = a.mechanism;
    cfg.end_on_round = !a.exact_duration;
    cfg.poll_ns = a.poll.as_nanos() as u64;
    cfg.check().or_usage()?;
    let host = Host::collect();
    let quantum = a.quantum.as_nanos() as u64;
    let run = host::run(Box::new(WeightedRoundRobin::new(quantum)), &tasks, &cfg)?;
    let s = run_section::section(&run, &tasks, quantum, a.duration.as_secs_f64(), a.gantt_window.as_secs_f64());
    let s = output::emit(s, &a.output, &host)?;
    if let (Some(path), Some(f)) = (&a.gantt, s.figures.first()) {
        std::fs::write(path, &f.svg).map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    }
    if let Some(path) = &a.trace_out {
        schedlab_lab::trace::perfetto::copy_out(&s, path)?;
    }
    Ok(())
}

fn run_study(a: StudyArgs) -> Result<()> {
    let scale = schedlab_lab::Scale::from_flags(a.quick, a.full);
    let mut which = Mechanisms::parse(&a.only)?;
    which.test2 = !a.test1_only;
    which.test1 = !a.test2_only;
    let host = Host::collect();
    let section = {
        let progress = CommandProgress::start(study::NAME, study::TITLE, 0.0);
        study::run(scale, &which, &host.facts, &progress)?
    };
    output::emit(section, &a.output, &host)?;
    Ok(())
}
