//! Shortest job first (non-pre-emptive): among queued tasks, the one whose next CPU burst is
//! shortest runs to the end of that burst. Equal bursts are served in arrival order.

use super::common::KeyQueue;
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};

#[derive(Debug, Clone, Default)]
pub struct Sjf {
    q: KeyQueue<Dur>,
}

impl Sjf {
    pub fn new() -> Self {
        Sjf::default()
    }
}

impl Policy for Sjf {
    fn name(&self) -> String {
        "sjf".into()
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, _now: Time) {
        let key = task.remaining.or(task.burst).unwrap_or(Dur::MAX);
        self.q.enqueue(task, key, why);
    }

    fn dequeue(&mut self, task: TaskId) {
        self.q.remove(task);
    }

    /// The order does not depend on priority: a priority change leaves the task in place.
    fn requeue(&mut self, _task: &TaskView, _now: Time) {}

    /// Never pre-empts: a running task keeps the CPU until its slice or burst ends.
    #[inline]
    fn may_preempt(&self) -> bool {
        false
    }

    fn pick_next(&mut self, cpu: CpuId, _now: Time) -> Option<Pick> {
        self.q.pop(cpu).map(|(task, _)| Pick { task, slice: None })
    }

    fn charge(&mut self, _task: TaskId, _ran: Dur, _now: Time) {}

    fn queued(&self) -> usize {
        self.q.len()
    }
}
