//! The live host for the simulator's [`Policy`] trait: it runs real processes on pinned CPUs
//! and lets the policy decide who runs and for how long, exactly as the simulator's engine
//! does with virtual tasks.
//!
//! - Tasks are SCHED_FIFO, pinned to the managed CPU(s), started stopped before exec.
//! - The dispatcher (the calling thread) runs at a higher SCHED_FIFO priority on a CPU it does
//!   not manage (CPU 0 by default), so the managed CPU's RT throttling window never delays it.
//! - A slice is CPU time, as in the kernel: the dispatcher sleeps with absolute-time sleeps
//!   (`clock_nanosleep(TIMER_ABSTIME)`) until the slice should be over, reads the task's
//!   process CPU clock, and extends the slice by what the task did not get (RT throttling,
//!   interrupts) while it is still runnable. A task that blocked ends its slice.
//! - [`Mechanism::Prio`]: only the chosen task is at the higher task priority; the others wait
//!   one priority lower, so if the chosen task blocks, a waiting one uses the CPU
//!   (work-conserving). [`Mechanism::Signal`]: the others are SIGSTOPped.
//! - Every [`HostConfig::poll_ns`] the dispatcher also wakes to reap tasks that
//!   exited and to notice Ctrl-C/SIGTERM.

use super::dispatch::{Dispatcher, Outcome};
use super::spec::WrrTask;
use super::tasks::{TaskEnd, TaskSet};
use anyhow::{bail, Context, Result};
use schedlab_os::affinity::{self, AffinityGuard};
use schedlab_os::sched::{self, LinuxPolicy, SchedGuard, SchedParams};
use schedlab_sim::{Policy, TaskView};
use serde::Serialize;
use std::time::Duration;

/// Priority of waiting tasks (Prio mechanism) and of all tasks (Signal mechanism).
pub const TASK_PRIO_WAIT: i32 = 1;
/// Priority of the task that owns the CPU (Prio mechanism).
pub const TASK_PRIO_RUN: i32 = 2;
/// The dispatcher's priority: above the tasks and typical experiment workers, below the
/// kernel's own priority-99 threads.
pub const DISPATCHER_PRIO: i32 = 50;

/// How the host makes only the chosen task run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mechanism {
    /// SCHED_FIFO priority rotation: chosen task one priority above the waiting ones.
    Prio,
    /// SIGSTOP/SIGCONT: only the chosen task is not stopped.
    Signal,
}

impl std::str::FromStr for Mechanism {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "prio" => Ok(Mechanism::Prio),
            "signal" => Ok(Mechanism::Signal),
            _ => Err(format!("unknown mechanism '{s}' (expected prio or signal)")),
        }
    }
}

/// Where and how long to run.
#[derive(Debug, Clone, Serialize)]
pub struct HostConfig {
    /// The CPUs whose run queue the policy owns.
    pub cpus: Vec<usize>,
    /// The CPU the dispatcher runs on (must not be managed).
    pub dispatcher_cpu: usize,
    pub mechanism: Mechanism,
    /// Run at least this long (ns).
    pub duration_ns: u64,
    /// After `duration_ns`, keep going until every live task has had the same number of
    /// slices (a round boundary), at most another `duration_ns`.
    pub end_on_round: bool,
    /// Wake at least this often to reap exited tasks and notice stop requests (ns).
    pub poll_ns: u64,
    /// How long tasks get to exit after SIGTERM at the end.
    pub grace_ms: u64,
}

impl HostConfig {
    /// Defaults: the last CPU managed, the dispatcher on the lowest other CPU, Prio, 20 ms poll.
    pub fn new(duration_ns: u64) -> Self {
        let n = affinity::online_cpus();
        HostConfig {
            cpus: vec![n.saturating_sub(1)],
            dispatcher_cpu: 0,
            mechanism: Mechanism::Prio,
            duration_ns,
            end_on_round: true,
            poll_ns: 20_000_000,
            grace_ms: 2000,
        }
    }

    /// Reject configurations that are dangerous or impossible, naming the value.
    pub fn check(&self) -> Result<()> {
        let n = affinity::online_cpus();
        if self.cpus.is_empty() {
            bail!("no CPUs to manage: --cpus must name at least one CPU");
        }
        if let Some(c) = self.cpus.iter().find(|&&c| c >= n) {
            bail!("CPU {c} in --cpus does not exist (this machine has CPUs 0-{})", n - 1);
        }
        if self.cpus.len() >= n {
            bail!(
                "--cpus {} would put CPU-bound real-time tasks on every CPU; leave at least one CPU for the \
                 system and the dispatcher (e.g. --cpus {})",
                affinity::format_cpu_list(&self.cpus),
                n - 1
            );
        }
        if self.cpus.contains(&self.dispatcher_cpu) {
            bail!("the dispatcher CPU {} is also a managed CPU", self.dispatcher_cpu);
        }
        if self.duration_ns == 0 {
            bail!("duration 0: give a positive --duration, e.g. 30s");
        }
        Ok(())
    }
}

/// The first online CPU not in `managed` (where the dispatcher runs).
pub fn dispatcher_cpu_for(managed: &[usize]) -> usize {
    (0..affinity::online_cpus()).find(|c| !managed.contains(c)).unwrap_or(0)
}

/// Why a slice ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SliceEnd {
    /// It used its CPU budget.
    Expired,
    /// The task was sleeping when the budget's wall time was over.
    Blocked,
    /// The task exited during the slice.
    Exited,
    /// The run ended during the slice.
    RunEnded,
}

/// One slice: who ran where, when (ns since the release), the budget and the CPU it got.
#[derive(Debug, Clone, Serialize)]
pub struct Slice {
    pub task: usize,
    pub cpu: usize,
    pub start_ns: u64,
    pub end_ns: u64,
    /// The slice the policy gave (CPU-time budget).
    pub planned_ns: u64,
    /// CPU time the task received between start and end.
    pub cpu_ns: u64,
    pub end: SliceEnd,
    /// The task's first slice: it includes exec and program start-up, so slice-accuracy
    /// statistics leave it out.
    pub first: bool,
}

/// One task's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct TaskRun {
    pub weight: u32,
    pub command: String,
    pub label: String,
    /// CPU time received between the release and the end of the run.
    pub cpu_ns: u64,
    pub slices: usize,
    /// When the task exited (ns since the release), if it did before the end.
    pub exited_ns: Option<u64>,
    pub end: TaskEnd,
}

/// Everything one live run produced.
#[derive(Debug, Clone, Serialize)]
pub struct HostRun {
    pub policy: String,
    pub config: HostConfig,
    /// Release to end of run (ns).
    pub wall_ns: u64,
    /// CPU time of the dispatcher thread during the run.
    pub dispatcher_cpu_ns: u64,
    /// Times a slice was lengthened because the task had not yet had its budget.
    pub extensions: usize,
    /// Task switches performed (promote+demote or SIGCONT+SIGSTOP pairs).
    pub switches: usize,
    pub interrupted: bool,
    pub slices: Vec<Slice>,
    pub tasks: Vec<TaskRun>,
}

/// Run `specs` under `policy` on real processes. Needs root (SCHED_FIFO) and RT throttling on.
pub fn run(mut policy: Box<dyn Policy>, specs: &[WrrTask], cfg: &HostConfig) -> Result<HostRun> {
    cfg.check()?;
    super::spec::check_tasks(specs)?;
    if !schedlab_os::is_root() {
        bail!("the live WRR host needs root (it sets SCHED_FIFO priorities): run with sudo");
    }
    sched::require_rt_throttling()?;
    let _cpus = schedlab_os::cpulock::CpuLock::acquire(&cfg.cpus, "the live WRR host")?;

    let mut set = TaskSet::spawn(specs, &cfg.cpus)?;
    let wait = SchedParams { reset_on_fork: true, ..SchedParams::new(LinuxPolicy::Fifo, TASK_PRIO_WAIT) };
    let run_p = SchedParams { reset_on_fork: true, ..SchedParams::new(LinuxPolicy::Fifo, TASK_PRIO_RUN) };
    for i in 0..set.len() {
        sched::set_sched(set.pid(i), &wait).with_context(|| format!("making task {i} SCHED_FIFO"))?;
    }
    let views: Vec<TaskView> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| TaskView { weight: s.weight, affinity: Some(&cfg.cpus), ..TaskView::new(i) })
        .collect();

    let outcome = {
        let _pin = AffinityGuard::pin(0, &[cfg.dispatcher_cpu])?;
        let _rt = SchedGuard::apply(0, &SchedParams::new(LinuxPolicy::Fifo, DISPATCHER_PRIO))?;
        Dispatcher::new(policy.as_mut(), &mut set, &views, cfg, (wait, run_p)).run()?
    };
    let Outcome { slices, counts, exited, wall_ns, disp_ns, extensions, switches, interrupted, cpu_end } = outcome;
    let ends = set.finish(Duration::from_millis(cfg.grace_ms));
    let tasks = specs
        .iter()
        .zip(ends)
        .enumerate()
        .map(|(i, (s, end))| TaskRun {
            weight: s.weight,
            command: s.command(),
            label: s.label(),
            cpu_ns: cpu_end[i],
            slices: counts[i],
            exited_ns: exited[i],
            end,
        })
        .collect();
    Ok(HostRun {
        policy: policy.name(),
        config: cfg.clone(),
        wall_ns,
        dispatcher_cpu_ns: disp_ns,
        extensions,
        switches,
        interrupted,
        slices,
        tasks,
    })
}
