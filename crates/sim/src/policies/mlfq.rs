//! Multilevel feedback queue (Arpaci-Dusseau's rules, OSTEP ch. 8): `levels` round-robin queues,
//! level i has quantum `quantum × 2^i`; new tasks enter the top; a task that has used up its
//! allotment at a level (one quantum, summed over however many runs — so yielding just before
//! the end does not game it) moves down one level; a task of a higher level pre-empts a lower
//! one; every `boost` ms all tasks return to the top with a fresh allotment (0 = never), so long
//! jobs do not starve — at the boost's time (a policy timer), a task running below the top
//! giving up its longer slice then.

use super::common::{Affinity, PerTask};
use super::spec::ms;
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};
use std::collections::VecDeque;

#[derive(Debug, Clone)]
pub struct Mlfq {
    quantum: Dur,
    boost: Option<Dur>,
    levels: Vec<VecDeque<TaskId>>,
    affinity: Affinity,
    level: PerTask<usize>,
    used: PerTask<Dur>,
    /// Boost epoch a task's level belongs to; older = reset to the top on next touch.
    epoch_of: PerTask<u64>,
    epoch: u64,
    next_boost: Time,
}

impl Mlfq {
    pub fn new(levels: usize, quantum: Dur, boost: Option<Dur>) -> Self {
        Mlfq {
            quantum: quantum.max(1),
            boost,
            levels: vec![VecDeque::new(); levels.max(1)],
            affinity: Affinity::default(),
            level: PerTask::default(),
            used: PerTask::default(),
            epoch_of: PerTask::default(),
            epoch: 0,
            next_boost: boost.unwrap_or(Dur::MAX),
        }
    }

    fn quantum_at(&self, level: usize) -> Dur {
        self.quantum.saturating_mul(1 << level.min(40))
    }

    fn level_now(&self, t: TaskId) -> usize {
        if self.epoch_of.get(t) < self.epoch {
            0
        } else {
            self.level.get(t)
        }
    }

    fn maybe_boost(&mut self, now: Time) {
        let Some(b) = self.boost else { return };
        if now < self.next_boost {
            return;
        }
        while self.next_boost <= now {
            self.next_boost += b;
        }
        self.epoch += 1;
        for l in 1..self.levels.len() {
            let moved = std::mem::take(&mut self.levels[l]);
            self.levels[0].extend(moved);
        }
    }
}

impl Policy for Mlfq {
    fn name(&self) -> String {
        format!(
            "mlfq:levels={},quantum={},boost={}",
            self.levels.len(),
            ms(self.quantum),
            self.boost.map_or("0ms".into(), ms)
        )
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, now: Time) {
        self.maybe_boost(now);
        let t = task.id;
        let mut level = if why == EnqueueReason::New { 0 } else { self.level_now(t) };
        if self.epoch_of.get(t) < self.epoch || why == EnqueueReason::New {
            self.used.set(t, 0);
        }
        if self.used.get(t) >= self.quantum_at(level) {
            level = (level + 1).min(self.levels.len() - 1);
            self.used.set(t, 0);
        }
        self.level.set(t, level);
        self.epoch_of.set(t, self.epoch);
        self.affinity.note(task);
        if why == EnqueueReason::Preempted {
            self.levels[level].push_front(t);
        } else {
            self.levels[level].push_back(t);
        }
    }

    fn dequeue(&mut self, task: TaskId) {
        for l in &mut self.levels {
            l.retain(|&x| x != task);
        }
    }

    /// The order does not depend on priority: a priority change leaves the task in place.
    fn requeue(&mut self, _task: &TaskView, _now: Time) {}

    fn pick_next(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
        self.maybe_boost(now);
        for l in 0..self.levels.len() {
            let Some(pos) = self.levels[l].iter().position(|&t| self.affinity.allowed(t, cpu)) else { continue };
            if let Some(t) = self.levels[l].remove(pos) {
                if self.epoch_of.get(t) < self.epoch {
                    // Boosted while it waited: the top queue's allotment starts afresh.
                    self.used.set(t, 0);
                }
                let left = self.quantum_at(l).saturating_sub(self.used.get(t)).max(1);
                self.level.set(t, l);
                self.epoch_of.set(t, self.epoch);
                return Some(Pick { task: t, slice: Some(left) });
            }
        }
        None
    }

    fn charge(&mut self, task: TaskId, ran: Dur, _now: Time) {
        *self.used.get_mut(task) += ran;
    }

    fn preempts(&self, woken: TaskId, running: TaskId, _now: Time) -> bool {
        self.level_now(woken) < self.level_now(running)
    }

    /// The boost is a timer (Rule 5 acts at its time, not at the next scheduling event).
    fn next_timer(&self) -> Option<Time> {
        self.boost.map(|_| self.next_boost)
    }

    fn timer(&mut self, now: Time) {
        self.maybe_boost(now);
    }

    /// A task running below the top when the boost comes is at the top now: it stops, and is
    /// queued again at the head of the top queue with a fresh allotment.
    fn preempt_current(&mut self, running: TaskId, _now: Time) -> bool {
        self.epoch_of.get(running) < self.epoch && self.level.get(running) > 0
    }

    fn queued(&self) -> usize {
        self.levels.iter().map(|l| l.len()).sum()
    }
}
