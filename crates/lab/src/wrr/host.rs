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

use super::spec::WrrTask;
use super::tasks::{TaskEnd, TaskSet};
use anyhow::{bail, Context, Result};
use schedlab_os::affinity::{self, AffinityGuard};
use schedlab_os::clock;
use schedlab_os::process::Signal;
use schedlab_os::procfs;
use schedlab_os::sched::{self, LinuxPolicy, SchedGuard, SchedParams};
use schedlab_os::signals;
use schedlab_sim::{EnqueueReason, Policy, TaskView};
use serde::Serialize;
use std::time::Duration;

/// Priority of waiting tasks (Prio mechanism) and of all tasks (Signal mechanism).
pub const TASK_PRIO_WAIT: i32 = 1;
/// Priority of the task that owns the CPU (Prio mechanism).
pub const TASK_PRIO_RUN: i32 = 2;
/// The dispatcher's priority: above the tasks and typical experiment workers, below the
/// kernel's own priority-99 threads.
pub const DISPATCHER_PRIO: i32 = 50;
/// A slice that got within this much of its CPU budget is not extended.
const EXTEND_TOLERANCE_NS: u64 = 50_000;

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

    /// Reject configurations that are unsafe or impossible, naming the value.
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

struct Running {
    task: usize,
    first: bool,
    start: u64,
    cpu_at_start: u64,
    budget: u64,
    wake_at: u64,
}

/// Run `specs` under `policy` on real processes. Needs root (SCHED_FIFO) and RT throttling on.
pub fn run(mut policy: Box<dyn Policy>, specs: &[WrrTask], cfg: &HostConfig) -> Result<HostRun> {
    cfg.check()?;
    super::spec::check_tasks(specs)?;
    if !schedlab_os::is_root() {
        bail!("the live WRR host needs root (it sets SCHED_FIFO priorities): run with sudo");
    }
    sched::require_rt_throttling()?;

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
        dispatch(policy.as_mut(), &mut set, &views, cfg, wait, run_p)?
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

/// What the dispatch loop hands back to [`run`].
struct Outcome {
    slices: Vec<Slice>,
    /// Completed slices per task.
    counts: Vec<usize>,
    /// When each task exited (ns since the release).
    exited: Vec<Option<u64>>,
    wall_ns: u64,
    disp_ns: u64,
    extensions: usize,
    switches: usize,
    interrupted: bool,
    /// Each task's CPU time at the end (frozen).
    cpu_end: Vec<u64>,
}

/// The dispatcher loop. Runs at RT priority on the dispatcher CPU.
fn dispatch(
    policy: &mut dyn Policy,
    set: &mut TaskSet,
    views: &[TaskView],
    cfg: &HostConfig,
    wait: SchedParams,
    run_p: SchedParams,
) -> Result<Outcome> {
    let n = set.len();
    let mut slices = Vec::new();
    let mut counts = vec![0usize; n];
    let mut exited: Vec<Option<u64>> = vec![None; n];
    let mut started = vec![false; n];
    let mut had_slice = vec![false; n];
    let mut slots: Vec<Option<Running>> = cfg.cpus.iter().map(|_| None).collect();
    let (mut extensions, mut switches) = (0usize, 0usize);
    let multi = cfg.cpus.len() > 1;

    let disp0 = clock::thread_cpu_ns();
    let t0 = clock::monotonic_ns();
    for v in views {
        policy.enqueue(v, EnqueueReason::New, 0);
    }
    let end_at = t0 + cfg.duration_ns;
    let hard_end = t0 + 2 * cfg.duration_ns + 1_000_000_000;
    let mut interrupted = false;
    let mut previous: Vec<Option<usize>> = vec![None; cfg.cpus.len()];
    // Slices ended but not yet switched away from: (index in `slices`, task, CPU at start).
    // Their CPU time is read again after the switch, when the task has really stopped.
    let mut closing: Vec<Option<(usize, usize, u64)>> = vec![None; cfg.cpus.len()];
    // How much earlier than the budget the dispatcher wakes: the learnt reaction time from
    // reading the counter to the task really leaving the CPU (an integral controller on the
    // measured slice error), so slices end on their budget instead of systematically after it.
    let mut lead: u64 = 0;

    loop {
        let now = clock::monotonic_ns();
        // 1. Tasks that exited.
        for i in set.reap() {
            exited[i] = Some(now - t0);
            match slots.iter().position(|s| s.as_ref().is_some_and(|r| r.task == i)) {
                Some(k) => {
                    let r = slots[k].take().expect("slot holds the task");
                    let used = set.cpu_ns(i).saturating_sub(r.cpu_at_start);
                    slices.push(slice(&r, cfg.cpus[k], now, t0, used, SliceEnd::Exited));
                    policy.charge(i, used, now - t0);
                    previous[k] = None;
                }
                None => policy.dequeue(i),
            }
            policy.task_exit(i);
        }
        // 2. Slices whose budget is used up.
        for k in 0..slots.len() {
            let Some(r) = slots[k].as_mut() else { continue };
            if now < r.wake_at {
                continue;
            }
            let used = set.cpu_ns(r.task).saturating_sub(r.cpu_at_start);
            let deficit = r.budget.saturating_sub(used);
            // /proc is read only when the task fell short (blocked, or preempted by throttling).
            let short = deficit > lead + EXTEND_TOLERANCE_NS;
            let state = if short { procfs::stat(set.pid(r.task)).map(|s| s.state) } else { None };
            // A runnable task that has not had its CPU keeps the slice however long that takes
            // (as the kernel's current task would); only blocking or the run's end cut it short.
            if short && state == Some('R') && now < hard_end {
                r.wake_at = now + deficit - lead;
                extensions += 1;
                continue;
            }
            let r = slots[k].take().expect("checked above");
            let why = if matches!(state, Some('S') | Some('D')) { SliceEnd::Blocked } else { SliceEnd::Expired };
            slices.push(slice(&r, cfg.cpus[k], now, t0, used, why));
            closing[k] = Some((slices.len() - 1, r.task, r.cpu_at_start));
            counts[r.task] += 1;
            policy.charge(r.task, used, now - t0);
            let reason = if why == SliceEnd::Blocked { EnqueueReason::Yielded } else { EnqueueReason::SliceExpired };
            policy.enqueue(&views[r.task], reason, now - t0);
            previous[k] = Some(r.task);
        }
        // 3. Stop?
        let live: Vec<usize> = (0..n).filter(|&i| exited[i].is_none()).collect();
        if signals::stop_requested() {
            interrupted = true;
            break;
        }
        let round_done = {
            let c: Vec<usize> = live.iter().map(|&i| counts[i]).collect();
            c.windows(2).all(|w| w[0] == w[1])
        };
        let all_idle = slots.iter().all(Option::is_none);
        if live.is_empty() || now >= hard_end || (now >= end_at && (!cfg.end_on_round || (round_done && all_idle))) {
            break;
        }
        // 4. Give every idle CPU its next task (after the stop check, so a run ends on a round).
        for k in 0..slots.len() {
            if slots[k].is_some() {
                continue;
            }
            let cpu = cfg.cpus[k];
            let pick = policy.pick_next(cpu, now - t0);
            let old = previous[k].take().filter(|&o| set.alive(o) && !slots.iter().flatten().any(|r| r.task == o));
            if let Some(p) = pick {
                let next = p.task;
                if old != Some(next) {
                    if multi {
                        let _ = affinity::set_affinity(set.pid(next), &[cpu]);
                    }
                    match cfg.mechanism {
                        Mechanism::Prio => {
                            let _ = sched::set_sched(set.pid(next), &run_p);
                            if let Some(o) = old {
                                let _ = sched::set_sched(set.pid(o), &wait);
                            }
                        }
                        Mechanism::Signal => {
                            set.signal(next, Signal::SIGCONT);
                            if let Some(o) = old {
                                set.signal(o, Signal::SIGSTOP);
                            }
                        }
                    }
                    if !started[next] {
                        started[next] = true;
                        if cfg.mechanism == Mechanism::Prio {
                            // First pick: let every task past its barrier; the waiting ones
                            // sit at the lower priority behind the chosen one.
                            for (i, s) in started.iter_mut().enumerate() {
                                if set.alive(i) {
                                    let _ = set.release(i);
                                    *s = true;
                                }
                            }
                        }
                    }
                    switches += 1;
                }
                let budget = p.slice.unwrap_or(cfg.duration_ns);
                let start = clock::monotonic_ns();
                let first = !had_slice[next];
                had_slice[next] = true;
                slots[k] = Some(Running {
                    task: next,
                    first,
                    start,
                    cpu_at_start: set.cpu_ns(next),
                    budget,
                    wake_at: start + budget.saturating_sub(lead),
                });
            } else if let Some(o) = old {
                match cfg.mechanism {
                    Mechanism::Prio => {
                        let _ = sched::set_sched(set.pid(o), &wait);
                    }
                    Mechanism::Signal => set.signal(o, Signal::SIGSTOP),
                }
            }
        }
        // The slices just ended have now really stopped (or continue as the next slice).
        for c in closing.iter_mut() {
            if let Some((idx, task, at_start)) = c.take() {
                let used = set.cpu_ns(task).saturating_sub(at_start);
                let s = &mut slices[idx];
                s.cpu_ns = used;
                // The task ran until the switch took effect, not until the dispatcher woke.
                s.end_ns = clock::monotonic_ns() - t0;
                if s.end == SliceEnd::Expired && !s.first {
                    // Clamped so one outlier (the dispatcher delayed by other RT work on its
                    // CPU) does not make the following slices end early.
                    let err = (used as i64 - s.planned_ns as i64).clamp(-200_000, 200_000);
                    lead = (lead as i64 + err / 4).clamp(0, 1_000_000) as u64;
                }
            }
        }
        // 5. Sleep to the next slice end, the end of the run, or the next poll.
        let now = clock::monotonic_ns();
        let mut wake = now + cfg.poll_ns;
        for r in slots.iter().flatten() {
            wake = wake.min(r.wake_at);
        }
        if now < end_at {
            wake = wake.min(end_at);
        }
        clock::sleep_until_ns(wake)?;
    }

    // Freeze everyone at one instant, then close the slices still running.
    set.freeze();
    let now = clock::monotonic_ns();
    let cpu_end: Vec<u64> = (0..n).map(|i| set.cpu_ns(i)).collect();
    for (idx, task, at_start) in closing.into_iter().flatten() {
        slices[idx].cpu_ns = cpu_end[task].saturating_sub(at_start);
    }
    for (slot, &cpu) in slots.iter_mut().zip(&cfg.cpus) {
        if let Some(r) = slot.take() {
            let used = cpu_end[r.task].saturating_sub(r.cpu_at_start);
            slices.push(slice(&r, cpu, now, t0, used, SliceEnd::RunEnded));
        }
    }
    let disp = clock::thread_cpu_ns() - disp0;
    Ok(Outcome { slices, counts, exited, wall_ns: now - t0, disp_ns: disp, extensions, switches, interrupted, cpu_end })
}

fn slice(r: &Running, cpu: usize, now: u64, t0: u64, used: u64, end: SliceEnd) -> Slice {
    Slice {
        task: r.task,
        cpu,
        start_ns: r.start - t0,
        end_ns: now - t0,
        planned_ns: r.budget,
        cpu_ns: used,
        end,
        first: r.first,
    }
}
