//! Shortest remaining time first (pre-emptive SJF): the task with the least CPU time left in its
//! current burst runs; a newly runnable task with strictly less left pre-empts the running one.

use super::common::{KeyQueue, PerTask};
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};

#[derive(Debug, Clone, Default)]
pub struct Srtf {
    q: KeyQueue<Dur>,
    /// Remaining time when picked, and when.
    picked: PerTask<(Dur, Time)>,
}

impl Srtf {
    pub fn new() -> Self {
        Srtf::default()
    }
}

impl Policy for Srtf {
    fn name(&self) -> String {
        "srtf".into()
    }

    fn enqueue(&mut self, task: &TaskView, _why: EnqueueReason, _now: Time) {
        self.q.push(task, task.remaining.or(task.burst).unwrap_or(Dur::MAX));
    }

    fn dequeue(&mut self, task: TaskId) {
        self.q.remove(task);
    }

    /// The order does not depend on priority: a priority change leaves the task in place.
    fn requeue(&mut self, _task: &TaskView, _now: Time) {}

    fn pick_next(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
        let (task, left) = self.q.pop(cpu)?;
        self.picked.set(task, (left, now));
        Some(Pick { task, slice: None })
    }

    fn charge(&mut self, _task: TaskId, _ran: Dur, _now: Time) {}

    fn preempts(&self, woken: TaskId, running: TaskId, now: Time) -> bool {
        let (left, at) = self.picked.get(running);
        let running_left = left.saturating_sub(now.saturating_sub(at));
        self.q.key_of(woken).is_some_and(|w| w < running_left)
    }

    fn queued(&self) -> usize {
        self.q.len()
    }
}
