//! Moving deadline and real-time tasks to CPUs that can run them sooner (deadline.c, rt.c of
//! Linux 6.18).
//!
//! - `push_dl_task()` after a replenishment (`dl_task_timer()`): the replenished task is queued
//!   on its CPU, which therefore no longer counts as free of deadline tasks; if another allowed
//!   CPU has none (or only later deadlines), the task moves there. A lone deadline task that
//!   runs out of runtime every period therefore alternates between two CPUs, as on this VM.
//! - `push_rt_task()`: a queued RT task that cannot run where it is (a higher or equal RT task
//!   runs there) moves to the CPU with the lowest RT priority below its own, when it wakes
//!   (`task_woken_rt()`) and when another RT task is picked over it (`set_next_task_rt()`).
//! - `pull_rt_task()`: a CPU about to run something below the RT class takes a waiting RT task
//!   from a CPU where it cannot run (the push IPI of RT_PUSH_IPI ends the same way).
//!
//! Not modelled: `pull_dl_task()` (a CPU whose deadline tasks left takes one waiting elsewhere).

use super::super::{Class, Linux};
use crate::policy::{CpuId, EnqueueReason, TaskId, Time};

impl Linux {
    /// Move `t` (queued, not running) from CPU `from` to `to` and queue it there.
    pub(crate) fn migrate_queued(&mut self, t: TaskId, from: usize, to: usize, now: Time) {
        match self.class.get(t) {
            Class::Deadline => self.rqs[from].dl.dequeue(t),
            Class::RealTime => self.rqs[from].rt.dequeue(t),
            Class::Fair => self.rqs[from].fair.dequeue(t),
        }
        self.move_off(t, from, to);
        let view = self.smp.as_ref().expect("smp").tasks.get(t).view;
        self.enqueue_on(to, &view.view(t), EnqueueReason::Migrated, now);
        self.after_enqueue(t, to, EnqueueReason::Migrated, now);
        self.resched_pending = true;
    }

    /// `push_dl_task()` for `t`, just replenished on CPU `i`.
    pub(crate) fn push_dl(&mut self, i: usize, t: TaskId, now: Time) {
        if !self.rqs[i].dl.ready_tasks().contains(&t) {
            return;
        }
        let deadline = self.rqs[i].dl.deadline_of(t);
        if let Some((r, Class::Deadline)) = self.rqs[i].curr {
            if deadline < self.rqs[i].dl.deadline_of(r) {
                // It pre-empts the deadline task running here instead.
                return;
            }
        }
        let Some(to) = self.find_later_rq(t, deadline, i, Some(i)) else { return };
        if to != i && self.dl_earliest(to).is_none_or(|e| deadline < e) {
            self.migrate_queued(t, i, to, now);
        }
    }

    /// `push_rt_task()` for every RT task waiting on CPU `i` that cannot run there now.
    pub(crate) fn push_rt(&mut self, i: usize, now: Time) {
        let Some(running) = self.rt_running_prio(i) else { return };
        for t in self.rqs[i].rt.waiting() {
            let prio = self.rqs[i].rt.prio(t);
            if prio > running {
                // It should pre-empt here (the waker's CPU reschedules).
                continue;
            }
            if let Some(to) = self.find_lowest_rq(t, prio, i, Some(i)).filter(|&c| c != i) {
                if prio > self.rt_top(to) {
                    self.migrate_queued(t, i, to, now);
                }
            }
        }
    }

    /// `pull_rt_task()` for CPU `i`, about to run a task below the RT class (or nothing): the
    /// highest RT task waiting on another CPU, where it cannot run, comes here.
    pub(crate) fn pull_rt(&mut self, i: usize, now: Time) -> bool {
        let mut best: Option<(i32, CpuId, TaskId)> = None;
        for j in (0..self.rqs.len()).filter(|&j| j != i) {
            let Some(running) = self.rt_running_prio(j) else { continue };
            for t in self.rqs[j].rt.waiting() {
                let prio = self.rqs[j].rt.prio(t);
                let allowed = self.smp.as_ref().expect("smp").tasks.get(t).view.allowed(i);
                if allowed && prio <= running && best.is_none_or(|b| prio > b.0) {
                    best = Some((prio, j, t));
                }
            }
        }
        let Some((prio, j, t)) = best else { return false };
        if prio <= self.rt_top(i) {
            return false;
        }
        self.migrate_queued(t, j, i, now);
        true
    }

    /// The RT priority CPU `i` runs at: its RT task's, above every RT level (100) for a
    /// deadline task, None below the RT class. A waiting RT task at or below it cannot run here.
    fn rt_running_prio(&self, i: usize) -> Option<i32> {
        match self.rqs[i].curr {
            Some((r, Class::RealTime)) => Some(self.rqs[i].rt.prio(r)),
            Some((_, Class::Deadline)) => Some(100),
            _ => None,
        }
    }
}
