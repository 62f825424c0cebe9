//! The Windows scheduler's boost-and-decay model (Russinovich, *Windows Internals*): 32 levels,
//! 31 the best; 16–31 real-time (class `realtime`: fixed, no boosts), 1–15 variable. A variable
//! task has a base priority `8 − priority` (clamped 1..=15; lower workload number = higher base)
//! and a dynamic priority that
//! - is boosted by `boost` (default 2) when it wakes (I/O done, event, unlocked), capped at 15;
//! - decays by one each time its quantum expires, down to the base;
//! - jumps to 15 with a doubled quantum when it has waited `starvation` ms (default 4000: the
//!   balance-set manager's anti-starvation boost), and drops back to the base after that run.
//!
//! Foreground tasks (class `foreground`) get a 3× quantum. The best dynamic priority runs; a
//! woken task with a higher priority pre-empts.

use super::common::{KeyQueue, PerTask, WaitWatch};
use super::spec::ms;
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};

#[derive(Debug, Clone)]
pub struct Windows {
    quantum: Dur,
    boost: u8,
    starvation: Dur,
    /// Key: 31 − dynamic priority.
    q: KeyQueue<u8>,
    base: PerTask<u8>,
    dynamic: PerTask<u8>,
    realtime: PerTask<bool>,
    foreground: PerTask<bool>,
    starved_boost: PerTask<bool>,
    watch: WaitWatch,
}

fn base_of(t: &TaskView) -> (u8, bool) {
    match t.class {
        Some("realtime") => ((24 - t.priority).clamp(16, 31) as u8, true),
        _ => ((8 - t.priority).clamp(1, 15) as u8, false),
    }
}

impl Windows {
    pub fn new(quantum: Dur, boost: u8, starvation: Dur) -> Self {
        Windows {
            quantum: quantum.max(1),
            boost,
            starvation: starvation.max(1),
            q: KeyQueue::default(),
            base: PerTask::default(),
            dynamic: PerTask::default(),
            realtime: PerTask::default(),
            foreground: PerTask::default(),
            starved_boost: PerTask::default(),
            watch: WaitWatch::default(),
        }
    }
}

impl Policy for Windows {
    fn name(&self) -> String {
        format!("windows:quantum={},boost={},starvation={}", ms(self.quantum), self.boost, ms(self.starvation))
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, now: Time) {
        let t = task.id;
        let (base, rt) = base_of(task);
        if why == EnqueueReason::New {
            self.base.set(t, base);
            self.dynamic.set(t, base);
            self.realtime.set(t, rt);
            self.foreground.set(t, task.class == Some("foreground"));
        }
        let base = self.base.get(t);
        let mut d = self.dynamic.get(t);
        if !rt {
            if self.starved_boost.get(t) && why != EnqueueReason::Restored {
                // The anti-starvation boost lasts one run, then the task falls back to its base.
                self.starved_boost.set(t, false);
                d = base;
            }
            match why {
                EnqueueReason::Woken => d = (base + self.boost).min(15).max(d),
                EnqueueReason::SliceExpired => d = d.saturating_sub(1).max(base),
                _ => {}
            }
            // Priority inheritance: an inherited (better) priority is a floor.
            if task.priority < 8 - base as i32 {
                d = d.max(((8 - task.priority).clamp(1, 15)) as u8);
            }
        }
        self.dynamic.set(t, d);
        self.watch.note(t, now);
        self.q.enqueue(task, 31 - d, why);
    }

    fn dequeue(&mut self, task: TaskId) {
        self.q.remove(task);
        self.watch.forget(task);
    }

    fn pick_next(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
        while let Some(t) = self.watch.starved(now, self.starvation) {
            if !self.realtime.get(t) && self.dynamic.get(t) < 15 && self.q.rekey(t, 31 - 15) {
                self.dynamic.set(t, 15);
                self.starved_boost.set(t, true);
            }
        }
        let (task, _) = self.q.pop(cpu)?;
        self.watch.forget(task);
        let mut slice = self.quantum;
        if self.foreground.get(task) {
            slice *= 3;
        }
        if self.starved_boost.get(task) {
            slice *= 2;
        }
        Some(Pick { task, slice: Some(slice) })
    }

    fn charge(&mut self, _task: TaskId, _ran: Dur, _now: Time) {}

    fn preempts(&self, woken: TaskId, running: TaskId, _now: Time) -> bool {
        self.dynamic.get(woken) > self.dynamic.get(running)
    }

    fn prio_changed(&mut self, task: &TaskView, _now: Time) {
        if !self.realtime.get(task.id) {
            let floor = (8 - task.priority).clamp(1, 15) as u8;
            let d = self.dynamic.get(task.id).max(floor);
            self.dynamic.set(task.id, d);
        }
    }

    fn queued(&self) -> usize {
        self.q.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wake_boost_then_decay_to_base() {
        let mut p = Windows::new(30_000_000, 2, 4_000_000_000);
        p.enqueue(&TaskView::new(0), EnqueueReason::New, 0);
        assert_eq!(p.dynamic.get(0), 8);
        p.pick_next(0, 0);
        p.enqueue(&TaskView::new(0), EnqueueReason::Woken, 0);
        assert_eq!(p.dynamic.get(0), 10);
        p.pick_next(0, 0);
        p.enqueue(&TaskView::new(0), EnqueueReason::SliceExpired, 0);
        assert_eq!(p.dynamic.get(0), 9);
        p.pick_next(0, 0);
        p.enqueue(&TaskView::new(0), EnqueueReason::SliceExpired, 0);
        p.pick_next(0, 0);
        p.enqueue(&TaskView::new(0), EnqueueReason::SliceExpired, 0);
        assert_eq!(p.dynamic.get(0), 8);
    }

    #[test]
    fn a_priority_change_while_queued_is_not_a_wake_up() {
        let mut p = Windows::new(30_000_000, 2, 4_000_000_000);
        p.enqueue(&TaskView::new(0), EnqueueReason::New, 0);
        p.requeue(&TaskView::new(0), 0);
        assert_eq!(p.dynamic.get(0), 8, "no wake-up boost");
        assert_eq!(p.queued(), 1);
    }

    #[test]
    fn starving_task_is_lifted_to_15() {
        let mut p = Windows::new(30_000_000, 2, 4_000_000_000);
        p.enqueue(&TaskView { priority: 7, ..TaskView::new(0) }, EnqueueReason::New, 0);
        p.enqueue(&TaskView { priority: -4, ..TaskView::new(1) }, EnqueueReason::New, 0);
        assert_eq!(p.pick_next(0, 0).unwrap().task, 1);
        p.enqueue(&TaskView { priority: -4, ..TaskView::new(1) }, EnqueueReason::SliceExpired, 5_000_000_000);
        let pick = p.pick_next(0, 5_000_000_000).unwrap();
        assert_eq!(pick.task, 0);
        assert_eq!(pick.slice, Some(60_000_000));
    }
}
