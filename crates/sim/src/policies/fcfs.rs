//! First come, first served: one FIFO queue, no time slices; a task runs until it blocks or
//! ends. (A task pre-empted by a higher class, inside `mlq`/`linux`, keeps its place at the head.)

use super::common::Fifo;
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};

#[derive(Debug, Clone, Default)]
pub struct Fcfs {
    q: Fifo,
}

impl Fcfs {
    pub fn new() -> Self {
        Fcfs::default()
    }
}

impl Policy for Fcfs {
    fn name(&self) -> String {
        "fcfs".into()
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, _now: Time) {
        self.q.enqueue(task, why);
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
        self.q.pop(cpu).map(|task| Pick { task, slice: None })
    }

    fn charge(&mut self, _task: TaskId, _ran: Dur, _now: Time) {}

    fn queued(&self) -> usize {
        self.q.len()
    }
}
