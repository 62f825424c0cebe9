//! Lottery scheduling (Waldspurger & Weihl, 1994): every queued task holds `weight` tickets;
//! each quantum a seeded random draw picks the winner, so CPU time follows the weights in
//! expectation. The generator is ChaCha8 seeded from the spec (`lottery:seed=1`), so a run is
//! reproducible.

use super::common::Affinity;
use super::spec::ms;
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Debug, Clone)]
pub struct Lottery {
    quantum: Dur,
    seed: u64,
    rng: ChaCha8Rng,
    queue: Vec<(TaskId, u64)>,
    affinity: Affinity,
}

impl Lottery {
    pub fn new(quantum: Dur, seed: u64) -> Self {
        Lottery {
            quantum: quantum.max(1),
            seed,
            rng: ChaCha8Rng::seed_from_u64(seed),
            queue: vec![],
            affinity: Affinity::default(),
        }
    }
}

impl Policy for Lottery {
    fn name(&self) -> String {
        format!("lottery:quantum={},seed={}", ms(self.quantum), self.seed)
    }

    fn enqueue(&mut self, task: &TaskView, _why: EnqueueReason, _now: Time) {
        self.affinity.note(task);
        self.queue.push((task.id, task.weight.max(1) as u64));
    }

    fn dequeue(&mut self, task: TaskId) {
        self.queue.retain(|&(t, _)| t != task);
    }

    /// The order does not depend on priority: a priority change leaves the task in place.
    fn requeue(&mut self, _task: &TaskView, _now: Time) {}

    /// Never pre-empts: a running task keeps the CPU until its slice or burst ends.
    #[inline]
    fn may_preempt(&self) -> bool {
        false
    }

    fn pick_next(&mut self, cpu: CpuId, _now: Time) -> Option<Pick> {
        let total: u64 = self.queue.iter().filter(|(t, _)| self.affinity.allowed(*t, cpu)).map(|(_, w)| w).sum();
        if total == 0 {
            return None;
        }
        let mut ticket = self.rng.gen_range(0..total);
        let pos = self
            .queue
            .iter()
            .position(|&(t, w)| {
                if !self.affinity.allowed(t, cpu) {
                    return false;
                }
                if ticket < w {
                    return true;
                }
                ticket -= w;
                false
            })
            .expect("a ticket below the total wins");
        // Keep arrival order among the others (ties in tests read naturally).
        let (task, _) = self.queue.remove(pos);
        Some(Pick { task, slice: Some(self.quantum) })
    }

    fn charge(&mut self, _task: TaskId, _ran: Dur, _now: Time) {}

    fn queued(&self) -> usize {
        self.queue.len()
    }
}
