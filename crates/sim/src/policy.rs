//! The `Policy` trait: a CPU scheduling class, after Linux's `struct sched_class`
//! (kernel/sched/sched.h). Hosts own time and tasks; a policy owns only its run queue.
//!
//! Protocol between a host and a policy:
//! 1. A task that becomes runnable is handed to [`Policy::enqueue`] with the reason.
//! 2. When a CPU is free the host calls [`Policy::pick_next`]; the picked task **leaves** the
//!    run queue (like `set_next_task` taking `curr` out of the CFS tree) and runs for the
//!    returned slice, or until it blocks when the slice is `None`.
//! 3. When it stops running, the host calls [`Policy::charge`] with the CPU time it used, then
//!    either enqueues it again (slice used up, pre-empted, yielded) or not (blocked, exited:
//!    [`Policy::task_exit`]).
//!    A picked task that cannot run after all (it blocks on a lock at once) is charged 0.
//! 4. When a task is enqueued while others run, the host asks [`Policy::preempts`] for each
//!    running task it could displace.
//! 5. When a queued task's priority changes, the host calls [`Policy::requeue`].
//!
//! Policies request things of the host only through return values — never callbacks.

use crate::engine::{SimConfig, SimResult};
use crate::workload::Workload;
use serde::{Deserialize, Serialize};

/// A task's index in the host's task table.
pub type TaskId = usize;
/// A CPU number.
pub type CpuId = usize;
/// A point in (virtual or monotonic) time, in nanoseconds.
pub type Time = u64;
/// A span of time, in nanoseconds.
pub type Dur = u64;

/// One millisecond in [`Dur`] units.
pub const MS: Dur = 1_000_000;

/// Why a task is being enqueued (`enqueue_task` flags in Linux).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EnqueueReason {
    /// First arrival in the system.
    New,
    /// Woken after blocking (I/O done, lock released, next period of a periodic task).
    Woken,
    /// Its slice ran out.
    SliceExpired,
    /// Pre-empted by a task the policy preferred.
    Preempted,
    /// Gave up the CPU voluntarily but stays runnable.
    Yielded,
    /// Moved from another CPU's run queue.
    Migrated,
    /// Taken out of its run queue and put back because its priority changed (priority
    /// inheritance), as Linux's `ENQUEUE_RESTORE`: not a wake-up, so no wake-up bonus, and
    /// what the policy keeps for the task (time left in its slice, vruntime, pass) stays.
    Restored,
}

/// What a policy may know about a task. Hosts fill what they know; the rest stays default.
/// It borrows the task's class and CPU list from the host, so building one per enqueue is a
/// few stores; a policy that must remember them copies them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TaskView<'a> {
    pub id: TaskId,
    /// When the task first arrived.
    pub arrival: Time,
    /// Static priority; a lower number is a higher priority (as in the seed's examples).
    pub priority: i32,
    /// Share weight for proportional policies (WRR, stride, lottery); 1 when unset.
    pub weight: u32,
    /// Linux nice value (-20..=19) for CFS.
    pub nice: i32,
    /// Absolute deadline of the current job, if the task has one (EDF).
    pub deadline: Option<Time>,
    /// Period for periodic tasks (RM, EDF).
    pub period: Option<Dur>,
    /// Length of the CPU burst about to run, when known (SJF/SRTF use it; live hosts may estimate).
    pub burst: Option<Dur>,
    /// CPU time still needed by the current burst, when known (SRTF).
    pub remaining: Option<Dur>,
    /// Which queue or class the task belongs to (MLQ queue index; the `linux` policy's class).
    pub class: Option<&'a str>,
    /// CPUs the task may run on (None = any).
    pub affinity: Option<&'a [CpuId]>,
}

impl TaskView<'_> {
    /// A view with an id and weight 1, everything else default.
    pub fn new(id: TaskId) -> TaskView<'static> {
        TaskView { id, weight: 1, ..Default::default() }
    }
}

/// The policy's answer to `pick_next`: which task runs, and for how long at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pick {
    pub task: TaskId,
    /// `None` = until it blocks or is pre-empted (FCFS, FIFO); `Some(d)` = a time slice.
    pub slice: Option<Dur>,
}

/// A CPU scheduling class. See the module documentation for the call protocol.
pub trait Policy: Send {
    /// A short name for tables, e.g. `wrr:quantum=10ms`.
    fn name(&self) -> String;

    /// `enqueue_task`: the task became runnable.
    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, now: Time);

    /// `dequeue_task`: remove a queued task that must leave without running (killed, migrated
    /// away). Unknown or running tasks are ignored.
    fn dequeue(&mut self, task: TaskId);

    /// `pick_next_task`: choose who runs next on `cpu`; the task leaves the run queue.
    fn pick_next(&mut self, cpu: CpuId, now: Time) -> Option<Pick>;

    /// `update_curr`: charge `ran` of CPU time to `task` (vruntime, quota, priority decay).
    fn charge(&mut self, task: TaskId, ran: Dur, now: Time);

    /// `check_preempt_curr`: should `woken` (just enqueued) displace `running` now?
    fn preempts(&self, woken: TaskId, running: TaskId, now: Time) -> bool {
        let _ = (woken, running, now);
        false
    }

    /// False if [`Policy::preempts`] is always false: the host then skips the pre-emption check
    /// on every arrival and wake-up. Keep the default when overriding `preempts`.
    fn may_preempt(&self) -> bool {
        true
    }

    /// The task exited: forget any per-task state.
    fn task_exit(&mut self, task: TaskId) {
        let _ = task;
    }

    /// Number of tasks waiting in the run queue (not counting running ones).
    fn queued(&self) -> usize;

    /// `prio_changed`: the **running** task's priority changed (priority inheritance raised or
    /// restored it; `task.priority` is the new effective value). Queued tasks go through
    /// [`Policy::requeue`] instead, so only policies that remember the running task's priority
    /// (for [`Policy::preempts`]) need this.
    fn prio_changed(&mut self, task: &TaskView, now: Time) {
        let _ = (task, now);
    }

    /// A **queued** task's effective priority changed (priority inheritance; `task.priority` is
    /// the new value). The default takes it out and puts it back with
    /// [`EnqueueReason::Restored`]; a policy whose order does not depend on priority keeps the
    /// task where it is by doing nothing.
    fn requeue(&mut self, task: &TaskView, now: Time) {
        self.dequeue(task.id);
        self.enqueue(task, EnqueueReason::Restored, now);
    }

    /// Simulate `workload` with this policy as the one global run queue (what
    /// [`crate::engine::simulate`] calls). Keep the default: it runs the engine compiled for the
    /// concrete policy type, so a `&mut dyn Policy` costs one dynamic call per run instead of
    /// several per simulated time slice.
    fn simulate_global(&mut self, workload: &Workload, config: &SimConfig) -> SimResult {
        crate::engine::simulate_static(workload, self, config)
    }
}
