//! SCHED_FIFO and SCHED_RR after kernel/sched/rt.c of Linux 6.18: 99 priority levels, the
//! highest **number** first (`sched_priority` 99 beats 1; the kernel stores `99 − prio`), first
//! come first served within a level.
//!
//! - `enqueue_task_rt()`: a woken or new task goes to the tail of its level; a task pre-empted
//!   by a higher class or level stays at the head (the kernel never took it out of its list);
//! - `task_tick_rt()`: an RR task's `time_slice` (`sched_rr_timeslice`, 100 ms) is spent while it
//!   runs and survives pre-emption and sleep; when it runs out it is refilled and the task goes
//!   to the tail of its level (`requeue_task_rt()`). A FIFO task runs until it blocks or a
//!   higher level arrives. The kernel counts RR slices in ticks (`--p->rt.time_slice` at each
//!   tick that finds the task running): with a host tick, so does this queue — a slice of 25
//!   ticks ends at the 25th tick after the task's start however far from a tick it started, and
//!   a run between two ticks costs nothing; without one, the slice is spent in time.
//! - `wakeup_preempt_rt()`: only a strictly higher level pre-empts.
//!
//! A task's level is its priority when it first arrives, clamped to 1..=99 (0 is not a valid
//! real-time priority); later (inherited) priorities are ignored: the engine's priority
//! inheritance ranks a lower number higher, which is the opposite of Linux's RT priorities.

use crate::policies::common::{KeyQueue, PerTask};
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, TaskId, TaskView, Time};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RtEntity {
    /// `sched_priority`, 1..=99.
    pub prio: i32,
    pub rr: bool,
    /// What is left of an RR task's time slice.
    pub time_slice: Dur,
    exec_start: Time,
}

#[derive(Debug, Clone)]
pub struct RtRq {
    rr_timeslice: Dur,
    /// The host tick (at multiples of it), when RR slices are counted in ticks.
    tick: Option<Dur>,
    se: PerTask<RtEntity>,
    /// Keyed by −priority, so the highest priority comes first.
    q: KeyQueue<i32>,
}

impl RtRq {
    pub fn new(rr_timeslice: Dur) -> Self {
        RtRq { rr_timeslice: rr_timeslice.max(1), tick: None, se: PerTask::default(), q: KeyQueue::default() }
    }

    pub fn set_tick(&mut self, tick: Option<Dur>) {
        self.tick = tick.filter(|&t| t > 0);
    }

    #[inline]
    pub fn queued(&self) -> usize {
        self.q.len()
    }

    pub fn prio(&self, t: TaskId) -> i32 {
        self.se.get(t).prio
    }

    /// The highest level waiting.
    pub fn top(&mut self) -> Option<i32> {
        self.q.min_key().map(|k| -k)
    }

    pub fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, _now: Time) {
        let slice = self.rr_timeslice;
        let e = self.se.get_mut(task.id);
        if why == EnqueueReason::New {
            *e = RtEntity {
                prio: task.priority.clamp(1, 99),
                rr: task.class == Some("rr"),
                time_slice: slice,
                exec_start: 0,
            };
        }
        let key = -e.prio;
        let expired = e.rr && e.time_slice == 0;
        if expired {
            e.time_slice = slice;
        }
        // At the head: a pre-empted task, and one stopped with slice left (the fair class's
        // reserved time took the CPU). At the tail: woken, new, and an RR task whose slice ran out.
        let head = why == EnqueueReason::Preempted || (why == EnqueueReason::SliceExpired && !expired);
        if head {
            self.q.push_front(task, key);
        } else {
            self.q.push(task, key);
        }
    }

    pub fn pick(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
        let (t, _) = self.q.pop(cpu)?;
        let e = self.se.get_mut(t);
        e.exec_start = now;
        let slice = match self.tick {
            // The tick that spends the last of it: the N-th after `now`.
            Some(tick) => (now / tick + e.time_slice.div_ceil(tick).max(1)) * tick - now,
            None => e.time_slice.max(1),
        };
        Some(Pick { task: t, slice: e.rr.then_some(slice) })
    }

    pub fn charge(&mut self, t: TaskId, now: Time) {
        let tick = self.tick;
        let e = self.se.get_mut(t);
        let spent = match tick {
            // The ticks in (start, now]: each found it running.
            Some(tick) => (now / tick).saturating_sub(e.exec_start / tick) * tick,
            None => now.saturating_sub(e.exec_start),
        };
        e.exec_start = now;
        if e.rr {
            e.time_slice = e.time_slice.saturating_sub(spent);
        }
    }

    pub fn dequeue(&mut self, t: TaskId) {
        self.q.remove(t);
    }

    pub fn exit(&mut self, t: TaskId) {
        self.q.remove(t);
        *self.se.get_mut(t) = RtEntity::default();
    }

    /// Hand `t` (dequeued) to another CPU's queue, with its priority and RR slice left.
    pub fn take(&mut self, t: TaskId) -> RtEntity {
        self.q.remove(t);
        std::mem::take(self.se.get_mut(t))
    }

    /// Receive a task from another CPU's queue ([`RtRq::take`]); enqueue it next.
    pub fn adopt(&mut self, t: TaskId, e: RtEntity) {
        *self.se.get_mut(t) = e;
    }

    /// Is `t` waiting in this queue?
    pub fn has(&self, t: TaskId) -> bool {
        self.q.contains(t)
    }

    /// The waiting tasks, highest level first, for the push and pull of RT tasks.
    pub fn waiting(&self) -> Vec<TaskId> {
        let mut v = self.q.members();
        v.sort_by_key(|&t| -self.prio(t));
        v
    }

    /// `wakeup_preempt_rt()`: a strictly higher priority pre-empts.
    pub fn preempts(&self, woken: TaskId, running: TaskId) -> bool {
        self.se.get(woken).prio > self.se.get(running).prio
    }
}
