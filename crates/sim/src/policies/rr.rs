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
    /// Per task: (quantum left over after a pre-emption (0 = a fresh quantum next time),
    /// slice given at the last pick) — one table, one lookup per call.
    quota: PerTask<(Dur, Dur)>,
}

impl RoundRobin {
    /// Round robin with the given quantum (> 0; clamped to 1 ns).
    pub fn new(quantum: Dur) -> Self {
        RoundRobin { quantum: quantum.max(1), q: Fifo::default(), quota: PerTask::default() }
    }
}

impl Policy for RoundRobin {
    fn name(&self) -> String {
        format!("rr:quantum={}", ms(self.quantum))
    }

    #[inline]
    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, _now: Time) {
        let quota = self.quota.get_mut(task.id);
        if why == EnqueueReason::Preempted && quota.0 > 0 {
            self.q.push_front(task);
        } else {
            quota.0 = 0;
            self.q.push_back(task);
        }
    }

    #[inline]
    fn dequeue(&mut self, task: TaskId) {
        self.q.remove(task);
    }

    #[inline]
    fn pick_next(&mut self, cpu: CpuId, _now: Time) -> Option<Pick> {
        let task = self.q.pop(cpu)?;
        let quota = self.quota.get_mut(task);
        let slice = if quota.0 > 0 { quota.0 } else { self.quantum };
        quota.1 = slice;
        Some(Pick { task, slice: Some(slice) })
    }

    #[inline]
    fn charge(&mut self, task: TaskId, ran: Dur, _now: Time) {
        let quota = self.quota.get_mut(task);
        quota.0 = quota.1.saturating_sub(ran);
    }

    #[inline]
    fn queued(&self) -> usize {
        self.q.len()
    }
}
