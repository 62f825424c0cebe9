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
//! 6. A task that stops running and blocks (I/O, a lock, the end of a periodic job) is charged
//!    and then handed to [`Policy::blocked`] instead of being queued again (`dequeue_task` with
//!    `DEQUEUE_SLEEP`); an exiting task goes to [`Policy::task_exit`] instead.
//! 7. Hosts with a scheduler tick tell the policy with [`Policy::set_tick`] before a run; a slice
//!    expiry is then acted on at the next tick boundary, as on a kernel without HRTICK.
//! 8. A policy whose state changes by itself (a deadline task replenished, a bandwidth window
//!    ending) says when with [`Policy::next_timer`]; at that time the host calls
//!    [`Policy::timer`], picks for idle CPUs and asks [`Policy::preempt_current`] for running
//!    tasks. Hosts that never call these see the behaviour of a policy without timers.
//! 9. A policy that keeps a run queue per CPU itself (Linux's `struct rq`) learns the CPU count
//!    from [`Policy::set_cpus`], and after each enqueue says with [`Policy::placed_on`] where
//!    the task went: only that CPU's running task may be pre-empted by it, and only that CPU
//!    picks it (until the policy moves it). It may leave a CPU idle while another's queue holds
//!    a task ([`Policy::work_conserving`] is false), as Linux does until it balances.
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
    /// `sched_runtime` (see [`crate::workload::TaskSpec::runtime`]): a deadline task's runtime or
    /// a fair task's custom slice.
    pub runtime: Option<Dur>,
    /// Length of the CPU burst about to run, when known (SJF/SRTF use it; live hosts may estimate).
    pub burst: Option<Dur>,
    /// CPU time still needed by the current burst, when known (SRTF).
    pub remaining: Option<Dur>,
    /// Which queue or class the task belongs to (MLQ queue index; the `linux` policy's class).
    pub class: Option<&'a str>,
    /// CPUs the task may run on (None = any).
    pub affinity: Option<&'a [CpuId]>,
    /// For a task being woken: the CPU of the task that woke it (a pipe write, a futex wake),
    /// or None for a timer or device.
    pub waker_cpu: Option<CpuId>,
    /// For a new task: the CPU the workload starts it on, if it says (`TaskSpec::start_cpu`).
    pub start_cpu: Option<CpuId>,
}

impl TaskView<'_> {
    /// A new task that was there before the run (the workload starts it on a given CPU and no
    /// task forked it: a replayed trace's task, released by SIGCONT), not a fork. A forked task
    /// may be given its CPU too (where a replayed trace's fork started), and is still new.
    pub fn existed_before(&self) -> bool {
        self.start_cpu.is_some() && self.waker_cpu.is_none()
    }

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

    /// A task woken at `woken_at` pre-empts the task running on `cpu` now, the wake-up path's
    /// delay later. A policy that charges run time by its own clock may charge the pre-empted
    /// task only up to the wake-up and the task picked next from there (Linux's fair class:
    /// `rq_clock_skip_update()`); the default ignores it.
    fn preempted_after_wakeup(&mut self, cpu: CpuId, woken_at: Time) {
        let _ = (cpu, woken_at);
    }

    /// How urgent a task waiting for a lock is, lower first: a released lock goes to the waiter
    /// of lowest rank (first come among equals). The default is the task's priority, lower
    /// number first, the engine's convention; a policy that reads priorities otherwise says so.
    fn lock_rank(&self, task: &TaskView) -> i64 {
        task.priority.into()
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

    /// `dequeue_task(DEQUEUE_SLEEP)`: the task, just charged, blocks instead of being queued
    /// again (I/O, a lock, the end of a periodic job). Policies that keep state across a sleep
    /// (EEVDF's lag and delayed dequeue) act here; the default does nothing.
    fn blocked(&mut self, task: TaskId, now: Time) {
        let _ = (task, now);
    }

    /// The host's scheduler tick (None = slice ends are acted on exactly), told once before a
    /// run. The default ignores it.
    fn set_tick(&mut self, tick: Option<Dur>) {
        let _ = tick;
    }

    /// True if the policy models a kernel that notices slice ends at its tick (Linux's fair
    /// class): callers enable the host's tick (HZ) for it by default.
    fn tick_driven(&self) -> bool {
        false
    }

    /// The earliest time at which the policy's state changes by itself (a deadline task's
    /// replenishment, the end of a bandwidth window), or None (the default: never). After
    /// [`Policy::timer`] at time `t` it must return None or a time after `t`.
    fn next_timer(&self) -> Option<Time> {
        None
    }

    /// Called by the host when [`Policy::next_timer`] comes due (an hrtimer firing).
    fn timer(&mut self, now: Time) {
        let _ = now;
    }

    /// Asked after [`Policy::timer`] for each task running on a CPU this queue serves: should it
    /// give up the CPU now (the timer's `resched_curr`)? It may note that it said so (so as not
    /// to displace more tasks than it has to run). The default never says so.
    fn preempt_current(&mut self, running: TaskId, now: Time) -> bool {
        let _ = (running, now);
        false
    }

    /// Is this queued task held off the CPU by the policy's bandwidth rules (a throttled
    /// deadline task)? A CPU may idle while only such tasks wait; the host's work-conservation
    /// check skips them. The default: never.
    fn throttled(&self, task: TaskId) -> bool {
        let _ = task;
        false
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

    /// The number of CPUs of the run, told once before it (with one global queue). The default
    /// ignores it.
    fn set_cpus(&mut self, cpus: usize) {
        let _ = cpus;
    }

    /// For a policy with a run queue per CPU: the CPU whose queue `task`, just enqueued, went to.
    /// None (the default): whichever CPU picks it.
    fn placed_on(&self, task: TaskId) -> Option<CpuId> {
        let _ = task;
        None
    }

    /// False if a CPU may stay idle while a task allowed on it waits in another CPU's queue
    /// (until the policy balances): the host's idle check then does not count such instants.
    fn work_conserving(&self) -> bool {
        true
    }

    /// Simulate `workload` with this policy as the one global run queue (what
    /// [`crate::engine::simulate`] calls). Keep the default: it runs the engine compiled for the
    /// concrete policy type, so a `&mut dyn Policy` costs one dynamic call per run instead of
    /// several per simulated time slice.
    fn simulate_global(&mut self, workload: &Workload, config: &SimConfig) -> SimResult {
        crate::engine::simulate_static(workload, self, config)
    }
}
