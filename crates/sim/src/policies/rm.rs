//! Rate monotonic: fixed priorities from periods — the shorter the period, the higher the
//! priority; pre-emptive. Aperiodic tasks (no period) rank after every periodic one, by priority.

use super::common::{KeyQueue, PerTask};
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};

#[derive(Debug, Clone, Default)]
pub struct RateMonotonic {
    q: KeyQueue<(Dur, i32)>,
    running_key: PerTask<(Dur, i32)>,
}

impl RateMonotonic {
    pub fn new() -> Self {
        RateMonotonic::default()
    }
}

impl Policy for RateMonotonic {
    fn name(&self) -> String {
        "rm".into()
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, _now: Time) {
        let key = (task.period.unwrap_or(Dur::MAX), task.priority);
        self.q.enqueue(task, key, why);
    }

    fn dequeue(&mut self, task: TaskId) {
        self.q.remove(task);
    }

    fn pick_next(&mut self, cpu: CpuId, _now: Time) -> Option<Pick> {
        let (task, key) = self.q.pop(cpu)?;
        self.running_key.set(task, key);
        Some(Pick { task, slice: None })
    }

    fn charge(&mut self, _task: TaskId, _ran: Dur, _now: Time) {}

    fn preempts(&self, woken: TaskId, running: TaskId, _now: Time) -> bool {
        self.q.key_of(woken).is_some_and(|k| k < self.running_key.get(running))
    }

    fn queued(&self) -> usize {
        self.q.len()
    }
}
