//! Earliest deadline first: the task whose current job has the nearest absolute deadline runs;
//! a newly released job with an earlier deadline pre-empts. Tasks without a deadline come last.

use super::common::{KeyQueue, PerTask};
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};

#[derive(Debug, Clone, Default)]
pub struct Edf {
    q: KeyQueue<Time>,
    running_deadline: PerTask<Time>,
}

impl Edf {
    pub fn new() -> Self {
        Edf::default()
    }
}

impl Policy for Edf {
    fn name(&self) -> String {
        "edf".into()
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, _now: Time) {
        let d = task.deadline.unwrap_or(Time::MAX);
        self.q.enqueue(task, d, why);
    }

    fn dequeue(&mut self, task: TaskId) {
        self.q.remove(task);
    }

    /// The order does not depend on priority: a priority change leaves the task in place.
    fn requeue(&mut self, _task: &TaskView, _now: Time) {}

    fn pick_next(&mut self, cpu: CpuId, _now: Time) -> Option<Pick> {
        let (task, d) = self.q.pop(cpu)?;
        self.running_deadline.set(task, d);
        Some(Pick { task, slice: None })
    }

    fn charge(&mut self, _task: TaskId, _ran: Dur, _now: Time) {}

    fn preempts(&self, woken: TaskId, running: TaskId, _now: Time) -> bool {
        self.q.key_of(woken).is_some_and(|d| d < self.running_deadline.get(running))
    }

    fn queued(&self) -> usize {
        self.q.len()
    }
}
