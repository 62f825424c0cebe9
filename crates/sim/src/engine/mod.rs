//! The discrete-event engine: virtual time in integer nanoseconds, N CPUs, a context-switch
//! cost, CPU and I/O bursts, periodic jobs, affinity, named locks with optional priority
//! inheritance, and either one global run queue or one run queue per CPU with migration.
//!
//! The engine owns time and tasks; the [`Policy`] owns only its run queue (see
//! `policy.rs` for the protocol). Events at the same instant are processed in this order:
//! arrivals, releases and I/O completions first, then CPUs whose slice or burst ends, then every
//! idle CPU picks. So a task arriving at the instant a quantum expires is queued ahead of the
//! expired task, as in the textbook round-robin examples.

mod arrivals;
mod event;
mod event_loop;
mod locks;
mod plain;
mod state;
mod task_states;
mod wake_delay;

pub(crate) use wake_delay::splitmix64;
pub use wake_delay::{WakeDelay, WAKE_QUANTILES};

use crate::metrics::Overall;
use crate::policy::{CpuId, Dur, Policy, TaskId, Time};
use crate::workload::Workload;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// How to run a simulation.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Number of CPUs (≥ 1).
    pub cpus: usize,
    /// Time a CPU spends switching from one task to a different one before the new one runs.
    pub switch_cost: Dur,
    /// Stop at this virtual time (unfinished tasks report no finish time). None = run to the end.
    pub horizon: Option<Time>,
    /// A task holding a lock takes the priority of the best task waiting for it.
    pub priority_inheritance: bool,
    /// Keep every run slice (for Gantt charts). Off for large benchmarks.
    pub record_slices: bool,
    /// Return a result record per task (`SimResult::tasks`). Off, only the overall metrics are
    /// returned (they are computed either way): for sweeps and benchmarks of 100,000s of tasks.
    pub task_results: bool,
    /// After every instant, count CPUs left idle while a task allowed on them waits (O(tasks)).
    pub check_invariants: bool,
    /// The scheduler tick (e.g. 4 ms for HZ=250). None (the default): a slice ends exactly when
    /// it expires. Some(t): an expired slice is acted on only at the next multiple of `t` from
    /// time 0, and the task keeps the CPU (and is charged) until then, as on a kernel without
    /// HRTICK. A burst that ends, a block and a wake-up pre-emption still act at once.
    pub tick: Option<Dur>,
    /// How long wake-ups take to act (all 0 by default: at once).
    pub wake: WakeDelays,
    /// What happens to the releases of a periodic task while one of its jobs is late.
    pub on_miss: OnMiss,
}

/// What a periodic task does when a job misses its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OnMiss {
    /// The late job runs to its end; the jobs released meanwhile wait their turn, in order.
    #[default]
    Continue,
    /// The late job runs to its end; the jobs released after its deadline passed, while it was
    /// still running, are skipped (not run; counted in `jobs_skipped`). The task goes on with
    /// the next release after the late job's end.
    Skip,
    /// A job still unfinished at its deadline is aborted then: the rest of its work is dropped
    /// (counted in `jobs_aborted` and as a miss) and the task waits for its next release (or
    /// starts a job released meanwhile). A job blocked on a lock or waiting for another task's
    /// wake-up at its deadline is not aborted.
    Abort,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            cpus: 1,
            switch_cost: 0,
            horizon: None,
            priority_inheritance: true,
            record_slices: true,
            task_results: true,
            check_invariants: false,
            tick: None,
            wake: WakeDelays::default(),
            on_miss: OnMiss::Continue,
        }
    }
}

/// How long a wake-up takes to act, by where it comes from and where the woken task runs (a
/// host's values are what `schedlab validate`'s probes measure: 2–60 µs on this project's VM).
/// A task that wakes onto an idle CPU starts that long after its wake-up (the CPU leaves idle,
/// takes the interrupt, switches: nobody runs meanwhile). A wake-up that pre-empts lets the
/// running task run on that long before it is switched out (the interrupt, or the waker's return
/// from its system call, runs in its time, and the kernel charges it to that task). Each is
/// one value or a measured spread ([`WakeDelay`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WakeDelays {
    /// A timer or device wake-up onto an idle CPU.
    pub idle: WakeDelay,
    /// A timer or device wake-up that pre-empts the running task.
    pub preempt: WakeDelay,
    /// The same for a task of a real-time or deadline class (workload class `fifo`, `rr` or
    /// `deadline`), when measured apart: the kernel's wake-up path is not the fair class's.
    /// None: `preempt`.
    pub preempt_rt: Option<WakeDelay>,
    /// A task wakes a task that pre-empts it on its own CPU (a pipe write): the waker runs on.
    pub task_preempt: WakeDelay,
    /// A task wakes a task onto another, idle CPU (an inter-processor interrupt, leaving idle).
    pub remote_idle: WakeDelay,
    /// A task wakes a task that pre-empts the running task of another CPU.
    pub remote_preempt: WakeDelay,
    /// Which sequence of draws a run takes from the spreads: runs that differ only here are
    /// equally likely outcomes of the same delays (0: the default sequence).
    pub draw: u64,
}

impl WakeDelays {
    /// Every delay 0.
    pub fn none(&self) -> bool {
        *self == WakeDelays::default()
    }
}

/// One stretch of a task running on a CPU (for Gantt charts and invariant checks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Slice {
    pub task: TaskId,
    pub cpu: CpuId,
    pub start: Time,
    pub end: Time,
    /// Which job (periodic tasks) and which entry of `bursts` this served.
    pub job: u32,
    pub burst: u32,
}

/// A span a task spent blocked (I/O or waiting for a lock).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Blocked {
    pub task: TaskId,
    pub start: Time,
    pub end: Time,
    /// `io` or `lock:<name>`.
    pub what: String,
}

/// Per-task results. Times in ns; `None` when the task did not finish (or never ran) in time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskResult {
    pub name: Arc<str>,
    pub arrival: Time,
    pub finish: Option<Time>,
    pub turnaround: Option<Dur>,
    /// Time spent runnable in a run queue, not running.
    pub waiting: Dur,
    /// First time it ran minus arrival.
    pub response: Option<Dur>,
    /// CPU time received.
    pub cpu: Dur,
    pub weight: u32,
    /// Times a CPU switched to this task from a different one.
    pub context_switches: u64,
    /// Times it was pushed off a CPU by a task the policy preferred (a wake-up or a newly
    /// arrived task; not its slice running out).
    pub preemptions: u64,
    /// Times its slice (quantum) ran out while it still had work, and it went back to a run
    /// queue (where it may be picked again at once).
    pub quantum_expiries: u64,
    /// Times it ran on a different CPU than the time before.
    pub migrations: u64,
    pub deadline_misses: u64,
    pub jobs_done: u32,
    /// Jobs skipped under [`OnMiss::Skip`].
    pub jobs_skipped: u32,
    /// Jobs aborted at their deadline under [`OnMiss::Abort`].
    pub jobs_aborted: u32,
}

/// Everything a run produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimResult {
    pub policy: String,
    pub cpus: usize,
    /// One record per task, in workload order (empty when `task_results` is off).
    pub tasks: Vec<TaskResult>,
    pub slices: Vec<Slice>,
    pub blocked: Vec<Blocked>,
    pub overall: Overall,
    /// Events processed (arrivals, releases, I/O completions, CPU stops).
    pub events: u64,
    /// With `check_invariants`: instants at which a CPU idled while an allowed task waited.
    pub idle_violations: u64,
}

/// Simulate `workload` under one policy with one global run queue shared by all CPUs.
pub fn simulate(workload: &Workload, policy: &mut dyn Policy, config: &SimConfig) -> SimResult {
    policy.simulate_global(workload, config)
}

/// [`simulate`] compiled for the policy type `P`: the engine calls the policy statically (what
/// [`Policy::simulate_global`] runs for every policy type).
pub fn simulate_static<P: Policy + ?Sized>(workload: &Workload, policy: &mut P, config: &SimConfig) -> SimResult {
    let name = policy.name();
    run(workload, vec![policy], config, name)
}

/// Simulate with one run queue per CPU (`policies.len()` must equal `config.cpus`): a woken task
/// goes to an idle allowed CPU (its previous one first) or the shortest allowed queue; a CPU
/// whose queue is empty pulls a task from the longest queue (a migration).
pub fn simulate_per_cpu(workload: &Workload, policies: &mut [Box<dyn Policy>], config: &SimConfig) -> SimResult {
    assert_eq!(policies.len(), config.cpus, "one policy instance per CPU");
    let name = format!("{} (per-CPU queues)", policies[0].name());
    let queues: Vec<&mut dyn Policy> = policies.iter_mut().map(|b| &mut **b as &mut dyn Policy).collect();
    run(workload, queues, config, name)
}

fn run<P: Policy + ?Sized>(w: &Workload, mut queues: Vec<&mut P>, cfg: &SimConfig, name: String) -> SimResult {
    assert!(cfg.cpus >= 1, "at least one CPU");
    assert!(cfg.tick != Some(0), "a tick of 0 ns");
    let global = queues.len() == 1;
    for q in &mut queues {
        q.set_tick(cfg.tick);
        q.set_cpus(if global { cfg.cpus } else { 1 });
    }
    let scan = event_loop::scan_specs(&w.tasks);
    if plain::can_run_plain(cfg, &queues, &scan) {
        let policy = queues.pop().expect("one queue");
        plain::run(w, policy, cfg, &scan, name)
    } else {
        run_engine(w, queues, cfg, &scan, name)
    }
}

fn run_engine<P: Policy + ?Sized>(
    w: &Workload,
    queues: Vec<&mut P>,
    cfg: &SimConfig,
    scan: &event_loop::SpecScan,
    name: String,
) -> SimResult {
    let mut e = event_loop::Engine::new(w, queues, cfg, scan);
    e.main_loop();
    e.finish(name)
}
