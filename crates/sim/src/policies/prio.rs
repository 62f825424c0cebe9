//! Priority scheduling; a lower number is a higher priority. One implementation, two uses:
//! - `prio`: non-pre-emptive — the best queued task runs until its burst ends;
//! - `prio-preempt`: a newly runnable better task pre-empts; optional `aging` (a queued task's
//!   priority improves continuously, one level per `aging` ms waited, so low priorities do not
//!   starve). Linear aging makes the order a fixed key — `priority × aging + enqueue time`, the
//!   moment the task's aged priority would reach 0 — so the queue stays a plain heap.
//!
//! (Linux's real-time class, where a higher number wins, is `linux/rt.rs`.)

use super::common::{KeyQueue, PerTask};
use super::spec::ms;
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};

#[derive(Debug, Clone)]
pub struct Priority {
    preemptive: bool,
    aging: Option<Dur>,
    /// Quantum for equal-priority round robin.
    quantum: Option<Dur>,
    /// Key: priority (no aging) or `priority × aging + enqueue time` in ns (aging).
    q: KeyQueue<i128>,
    /// Effective priority of a running task in key units at the time it was picked (for `preempts`).
    running_prio: PerTask<i128>,
}

impl Priority {
    /// `prio` (pre-emptive = false) or `prio-preempt`.
    pub fn new(preemptive: bool, aging: Option<Dur>, quantum: Option<Dur>) -> Self {
        Priority { preemptive, aging, quantum, q: KeyQueue::default(), running_prio: PerTask::default() }
    }

    fn key(&self, prio: i32, now: Time) -> i128 {
        match self.aging {
            Some(a) => prio as i128 * a as i128 + now as i128,
            None => prio as i128,
        }
    }

    /// A key turned into an effective priority at `now` (same units as the keys, minus `now`).
    fn effective(&self, key: i128, now: Time) -> i128 {
        if self.aging.is_some() {
            key - now as i128
        } else {
            key
        }
    }
}

impl Policy for Priority {
    fn name(&self) -> String {
        let mut s = if self.preemptive { "prio-preempt".to_string() } else { "prio".to_string() };
        let mut params = vec![];
        if let Some(a) = self.aging {
            params.push(format!("aging={}", ms(a)));
        }
        if let Some(q) = self.quantum {
            params.push(format!("quantum={}", ms(q)));
        }
        if !params.is_empty() {
            s = format!("{s}:{}", params.join(","));
        }
        s
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, now: Time) {
        let key = self.key(task.priority, now);
        self.q.enqueue(task, key, why);
    }

    fn dequeue(&mut self, task: TaskId) {
        self.q.remove(task);
    }

    fn pick_next(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
        let (task, key) = self.q.pop(cpu)?;
        self.running_prio.set(task, self.effective(key, now));
        Some(Pick { task, slice: self.quantum })
    }

    fn charge(&mut self, _task: TaskId, _ran: Dur, _now: Time) {}

    fn preempts(&self, woken: TaskId, running: TaskId, now: Time) -> bool {
        self.preemptive && self.q.key_of(woken).is_some_and(|w| self.effective(w, now) < self.running_prio.get(running))
    }

    fn prio_changed(&mut self, task: &TaskView, now: Time) {
        let k = self.effective(self.key(task.priority, now), now);
        self.running_prio.set(task.id, k);
    }

    fn queued(&self) -> usize {
        self.q.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Dur = 1_000_000;

    fn v(id: TaskId, priority: i32) -> TaskView<'static> {
        TaskView { priority, ..TaskView::new(id) }
    }

    #[test]
    fn aging_lifts_a_long_waiting_task() {
        // aging = 10 ms per level: priority 5 queued at 0 has aged 4.5 levels by 45 ms (→ 0.5).
        let mut p = Priority::new(true, Some(10 * MS), None);
        p.enqueue(&v(0, 5), EnqueueReason::New, 0);
        p.enqueue(&v(1, 1), EnqueueReason::New, 45 * MS);
        assert_eq!(p.pick_next(0, 45 * MS).unwrap().task, 0);
        // Queued at 35 ms instead, priority 1 still wins: 1 < 5 − 3.5 = 1.5.
        let mut p = Priority::new(true, Some(10 * MS), None);
        p.enqueue(&v(0, 5), EnqueueReason::New, 0);
        p.enqueue(&v(1, 1), EnqueueReason::New, 35 * MS);
        assert_eq!(p.pick_next(0, 35 * MS).unwrap().task, 1);
        // Without aging priority alone decides.
        let mut p = Priority::new(true, None, None);
        p.enqueue(&v(0, 5), EnqueueReason::New, 0);
        p.enqueue(&v(1, 1), EnqueueReason::New, 45 * MS);
        assert_eq!(p.pick_next(0, 45 * MS).unwrap().task, 1);
    }

    #[test]
    fn preemption_compares_aged_priority_of_the_running_task() {
        let mut p = Priority::new(true, Some(10 * MS), None);
        p.enqueue(&v(0, 5), EnqueueReason::New, 0);
        assert_eq!(p.pick_next(0, 40 * MS).unwrap().task, 0); // aged to 1 when picked
        p.enqueue(&v(1, 2), EnqueueReason::New, 41 * MS);
        assert!(!p.preempts(1, 0, 41 * MS));
        p.enqueue(&v(2, 0), EnqueueReason::New, 41 * MS);
        assert!(p.preempts(2, 0, 41 * MS));
    }
}
