//! Per-task and per-CPU state of a run. A task's state is created when it arrives and holds
//! its counters, so a large run writes each task's memory once, while the task is alive.

use super::TaskResult;
use crate::metrics::{Accum, TaskSums};
use crate::policy::{Dur, TaskId, Time};
use crate::workload::TaskSpec;
use std::borrow::Cow;

/// "No value" for times kept as plain integers.
pub(super) const NONE: u64 = u64::MAX;
/// "Never ran" for `last_cpu`.
pub(super) const NO_CPU: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    NotArrived,
    Ready,
    Running,
    /// Its CPU burst just ended; what comes next (I/O, sleep, exit) is not set yet.
    Stopped,
    Io,
    LockWait,
    Sleeping,
    Done,
}

/// What the event loop reads and writes for a task on every event.
#[derive(Debug, Clone)]
pub(super) struct TaskState {
    /// CPU time still needed by the current CPU burst.
    pub remaining: Dur,
    /// Length of the current burst (CPU or I/O).
    pub burst: Dur,
    /// Absolute deadline of the current job (NONE = none).
    pub deadline: Time,
    /// When it became ready (Ready) or blocked (Io, LockWait).
    pub since: Time,
    /// Effective priority (raised by priority inheritance).
    pub priority: i32,
    pub burst_idx: u32,
    /// Run queue it is in or last was in.
    pub queue: u32,
    pub last_cpu: u32,
    pub phase: Phase,
    /// The spec restricts its CPUs (so `allowed` must look at the list).
    pub pinned: bool,
    /// When it was last woken (NONE: since then it ran, or it was not woken but pre-empted or
    /// new), and by what: the CPU of the task that woke it, or NO_CPU for a timer or device.
    pub woken_at: Time,
    pub woken_from: u32,
    /// Blocked in an interval that lasts until another task wakes it.
    pub waiting_wake: bool,
    /// Index in its spec's `wakes` of the next wake-up it gives (counted per job).
    pub next_wake: u32,
    // Counters for the results.
    pub waiting: Dur,
    pub cpu: Dur,
    /// When it arrived: its spec's `arrival`, or the wake-up it arrives at.
    pub arrival: Time,
    pub first_run: Time,
    pub finish: Time,
    pub jobs_done: u32,
    pub jobs_skipped: u32,
    pub jobs_aborted: u32,
    /// The current job's number: which release it is (0 = the one at arrival).
    pub job: u32,
    pub cs: u32,
    pub preemptions: u32,
    pub expiries: u32,
    pub migrations: u32,
    pub misses: u32,
}

impl TaskState {
    pub fn new(spec: &TaskSpec) -> Self {
        TaskState {
            arrival: spec.arrival,
            remaining: 0,
            burst: 0,
            deadline: NONE,
            since: 0,
            priority: spec.priority,
            burst_idx: 0,
            queue: 0,
            last_cpu: NO_CPU,
            phase: Phase::NotArrived,
            pinned: spec.affinity.is_some() || !spec.burst_cpus.is_empty(),
            woken_at: NONE,
            woken_from: NO_CPU,
            waiting_wake: false,
            next_wake: 0,
            waiting: 0,
            cpu: 0,
            first_run: NONE,
            finish: NONE,
            jobs_done: 0,
            jobs_skipped: 0,
            jobs_aborted: 0,
            job: 0,
            cs: 0,
            preemptions: 0,
            expiries: 0,
            migrations: 0,
            misses: 0,
        }
    }

    /// What the overall metrics need of this task.
    pub fn sums(&self, spec: &TaskSpec) -> TaskSums {
        TaskSums {
            turnaround: (self.finish != NONE).then(|| self.finish - self.arrival),
            waiting: self.waiting,
            response: (self.first_run != NONE).then(|| self.first_run - self.arrival),
            cpu: self.cpu,
            weight: spec.weight,
            context_switches: self.cs as u64,
            preemptions: self.preemptions as u64,
            quantum_expiries: self.expiries as u64,
            migrations: self.migrations as u64,
            deadline_misses: self.misses as u64,
        }
    }

    /// The task's result record.
    pub fn result(&self, spec: &TaskSpec) -> TaskResult {
        let s = self.sums(spec);
        TaskResult {
            name: spec.name.clone(),
            arrival: self.arrival,
            finish: (self.finish != NONE).then_some(self.finish),
            turnaround: s.turnaround,
            waiting: s.waiting,
            response: s.response,
            cpu: s.cpu,
            weight: s.weight,
            context_switches: s.context_switches,
            preemptions: s.preemptions,
            quantum_expiries: s.quantum_expiries,
            migrations: s.migrations,
            deadline_misses: s.deadline_misses,
            jobs_done: self.jobs_done,
            jobs_skipped: self.jobs_skipped,
            jobs_aborted: self.jobs_aborted,
        }
    }
}

/// A CPU: what runs on it since when, and when that run ends.
/// The end of a run, for both engines: the sums of the tasks that did not finish (cut short by
/// the horizon, or never arrived) go into `acc` — finished ones went in as they finished — and a
/// result per task is built if `task_results`. `state_of(t)` is `Err` when the state was dropped
/// (the task finished; per-task results keep every state) and `Ok(None)` when it never arrived.
#[cold]
#[inline(never)]
pub(super) fn settle<'s>(
    specs: &[TaskSpec],
    acc: &mut Accum,
    unfinished: bool,
    task_results: bool,
    state_of: impl Fn(TaskId) -> Result<Option<Cow<'s, TaskState>>, ()>,
) -> Vec<TaskResult> {
    if unfinished {
        for (t, spec) in specs.iter().enumerate() {
            match state_of(t) {
                Err(()) => {}
                Ok(Some(ts)) if ts.phase == Phase::Done => {}
                Ok(Some(ts)) => acc.add(&ts.sums(spec)),
                Ok(None) => acc.add(&TaskSums { weight: spec.weight, ..TaskSums::default() }),
            }
        }
    }
    if !task_results {
        return Vec::new();
    }
    (0..specs.len())
        .map(|t| match state_of(t) {
            Ok(Some(ts)) => ts.result(&specs[t]),
            _ => TaskState::new(&specs[t]).result(&specs[t]),
        })
        .collect()
}

#[derive(Clone)]
pub(super) struct CpuState {
    pub running: Option<TaskId>,
    pub work_start: Time,
    pub last_task: Option<TaskId>,
    /// The live stop: when the current run ends (NONE = nothing pending) and its sequence number.
    pub stop_at: Time,
    pub stop_seq: u64,
    /// When its last run ended: before now, the CPU has been idle since.
    pub stopped_at: Time,
    /// When the slice the policy gave the running task ends (NONE: none given), before any tick.
    pub slice_end: Time,
    /// When the running task gives its next wake-up (NONE: not in this run).
    pub wake_at: Time,
    /// A pre-emption decided at a wake-up that takes effect then (NONE: none), and for whom.
    pub preempt_at: Time,
    pub preempt_for: TaskId,
}

impl Default for CpuState {
    fn default() -> Self {
        CpuState {
            running: None,
            work_start: 0,
            last_task: None,
            stop_at: NONE,
            stop_seq: 0,
            stopped_at: 0,
            slice_end: NONE,
            wake_at: NONE,
            preempt_at: NONE,
            preempt_for: TaskId::MAX,
        }
    }
}
