//! Round robin: one FIFO queue and a fixed quantum; a task whose quantum ends goes to the back.
//! A task pre-empted by a higher class (inside `mlq`/`linux`) returns to the head and finishes
//! the rest of its quantum, as Linux's SCHED_RR does.

use super::common::{Fifo, PerTask};
use super::spec::ms;
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};

#[derive(Debug, Clone)]
pub struct RoundRobin {
    quantum: Dur,
    q: Fifo,
    /// Quantum left over after a pre-emption (0 = a fresh quantum next time).
    left: PerTask<Dur>,
    given: PerTask<Dur>,
}

impl RoundRobin {
    /// Round robin with the given quantum (> 0; clamped to 1 ns).
    pub fn new(quantum: Dur) -> Self {
        RoundRobin { quantum: quantum.max(1), q: Fifo::default(), left: PerTask::default(), given: PerTask::default() }
    }
}

impl Policy for RoundRobin {
    fn name(&self) -> String {
        format!("rr:quantum={}", ms(self.quantum))
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, _now: Time) {
        if why == EnqueueReason::Preempted && self.left.get(task.id) > 0 {
            self.q.push_front(task);
        } else {
            self.left.set(task.id, 0);
            self.q.push_back(task);
        }
    }

    fn dequeue(&mut self, task: TaskId) {
        self.q.remove(task);
    }

    fn pick_next(&mut self, cpu: CpuId, _now: Time) -> Option<Pick> {
        let task = self.q.pop(cpu)?;
        let left = self.left.get(task);
        let slice = if left > 0 { left } else { self.quantum };
        self.given.set(task, slice);
        Some(Pick { task, slice: Some(slice) })
    }

    fn charge(&mut self, task: TaskId, ran: Dur, _now: Time) {
        let left = self.given.get(task).saturating_sub(ran);
        self.left.set(task, left);
    }

    fn queued(&self) -> usize {
        self.q.len()
    }
}
