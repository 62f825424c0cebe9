//! The options of `schedlab taskman run` and `bench`: the manager's settings, the commands to
//! run, and the benchmark's sizes, with their conversion to the lab's parameter types.

use crate::output::OutputArgs;
use crate::units;
use anyhow::Result;
use schedlab_lab::taskman::bench::{BenchParams, Config};
use schedlab_lab::taskman::load::Load;
use schedlab_lab::taskman::{ManagerConfig, QueueKind, DEFAULT_PRIORITY};
use schedlab_lab::Scale;
use schedlab_os::sched::LinuxPolicy;
use schedlab_os::topology::Topology;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args)]
pub struct ManagerArgs {
    /// Number of workers (default: one per core, minus the first core, which is left to the system).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Real-time priority 1..99 of the workers; a larger number is more urgent. The default 49 sits
    /// above all normal tasks and below the kernel's IRQ threads (50) and migration/watchdog (99).
    #[arg(long, default_value_t = DEFAULT_PRIORITY, allow_negative_numbers = true)]
    pub priority: i32,
    /// Scheduling policy of the workers: fifo (the seed), rr, or other (no real-time).
    #[arg(long, default_value = "fifo")]
    pub policy: LinuxPolicy,
    /// Do not pin each worker to its own CPU (they still stay off the reserved core).
    #[arg(long)]
    pub no_pin: bool,
    /// Leave IRQ affinity alone.
    #[arg(long)]
    pub no_irq: bool,
    /// Task queue: mutex-fifo (the seed's Figure 2) or stealing (crossbeam deques).
    #[arg(long, default_value = "mutex-fifo")]
    pub queue: QueueKind,
}

impl ManagerArgs {
    pub fn config(&self) -> ManagerConfig {
        ManagerConfig {
            workers: self.workers,
            policy: self.policy,
            priority: self.priority,
            pin: !self.no_pin,
            steer_irqs: !self.no_irq,
            queue: self.queue,
            ..Default::default()
        }
    }
}

#[derive(clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub manager: ManagerArgs,
    /// A file with one shell command per line (blank lines and # comments are skipped).
    #[arg(long, conflicts_with = "command")]
    pub jobs: Option<PathBuf>,
    /// Kill a command that runs longer than this (e.g. 30s, 5min).
    #[arg(long, value_parser = units::positive_duration)]
    pub timeout: Option<Duration>,
    /// Print one JSON document (the commands' own output goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// (testing) Add a task that panics inside a worker.
    #[arg(long, hide = true)]
    pub inject_panic: bool,
    /// The command to run as one task: `-- CMD ARGS`.
    #[arg(last = true)]
    pub command: Vec<String>,
}

#[derive(clap::Args)]
pub struct BenchArgs {
    /// Small scale (5 repetitions, ~0.1 s per run; about a minute in all).
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,
    /// The seed's scale (100 repetitions of ~20 s runs: hours).
    #[arg(long)]
    pub full: bool,
    /// Repetitions per cell (overrides the scale; the seed used 100).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub reps: Option<u64>,
    /// Passes over the 5 MiB array per run, split over the threads (overrides the scale).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub passes: Option<u64>,
    /// Thread counts to measure, e.g. 1,2 (default 1 … number of CPUs).
    #[arg(long, value_delimiter = ',')]
    pub threads: Vec<usize>,
    /// Loads to measure: none, load1, load2 (default all three).
    #[arg(long, value_delimiter = ',')]
    pub loads: Vec<Load>,
    /// Cap on each load-2 process's memory (otherwise 19% of RAM each), e.g. 512MiB.
    #[arg(long, default_value = "512MiB", value_parser = units::size)]
    pub load2_cap: u64,
    /// SCHED_FIFO priority of configuration C's workers (1..99).
    #[arg(long, default_value_t = DEFAULT_PRIORITY, allow_negative_numbers = true)]
    pub priority: i32,
    /// Do not steer IRQs in configuration C.
    #[arg(long)]
    pub no_irq: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl BenchArgs {
    /// The benchmark's parameters at `scale` with this command line's overrides, checked.
    pub fn params(&self, scale: Scale) -> Result<BenchParams> {
        let cpus = Topology::read()?.cpus.len();
        let mut p = BenchParams::for_scale(scale, cpus);
        if let Some(r) = self.reps {
            p.reps = r as usize;
        }
        if let Some(passes) = self.passes {
            p.steps = passes * (p.array_bytes / 4) as u64;
        }
        if !self.threads.is_empty() {
            if let Some(&bad) = self.threads.iter().find(|&&t| t == 0 || t > cpus) {
                schedlab_os::bail_usage!(
                    "invalid --threads {bad}: choose 1..={cpus} (this machine has {cpus} online CPUs)"
                );
            }
            p.threads = self.threads.clone();
        }
        if !self.loads.is_empty() {
            p.loads = self.loads.clone();
            if !p.loads.contains(&Load::None) {
                p.loads.insert(0, Load::None); // ratios need the no-load baseline
            }
        }
        LinuxPolicy::Fifo.check_priority(self.priority).map_err(|_| {
            anyhow::anyhow!(
                "invalid --priority {}: SCHED_FIFO accepts 1..=99 (a larger number is more urgent)",
                self.priority
            )
        })?;
        p.priority = self.priority;
        p.load2_cap_bytes = self.load2_cap;
        p.steer_irqs = !self.no_irq;
        p.configs = vec![Config::D, Config::C];
        Ok(p)
    }
}
