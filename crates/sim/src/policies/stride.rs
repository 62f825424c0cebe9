//! Stride scheduling (Waldspurger & Weihl, 1995): each task has `stride = STRIDE1 / weight` and
//! a `pass`; the task with the smallest pass runs for one quantum and its pass grows by its
//! stride scaled by the time it actually ran. Deterministic proportional share: CPU time
//! follows the weights. A task that arrives or wakes joins at the current global pass, so
//! sleeping earns no credit.

use super::common::{KeyQueue, PerTask};
use super::spec::ms;
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};

const STRIDE1: u128 = 1 << 20;

#[derive(Debug, Clone)]
pub struct Stride {
    quantum: Dur,
    q: KeyQueue<u64>,
    pass: PerTask<u64>,
    weight: PerTask<u32>,
    global_pass: u64,
}

impl Stride {
    pub fn new(quantum: Dur) -> Self {
        Stride {
            quantum: quantum.max(1),
            q: KeyQueue::default(),
            pass: PerTask::default(),
            weight: PerTask::default(),
            global_pass: 0,
        }
    }
}

impl Policy for Stride {
    fn name(&self) -> String {
        format!("stride:quantum={}", ms(self.quantum))
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, _now: Time) {
        self.weight.set(task.id, task.weight.max(1));
        let mut pass = self.pass.get(task.id);
        if matches!(why, EnqueueReason::New | EnqueueReason::Woken | EnqueueReason::Migrated) {
            pass = pass.max(self.global_pass);
        }
        self.pass.set(task.id, pass);
        self.q.push(task, pass);
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
        let (task, pass) = self.q.pop(cpu)?;
        self.global_pass = self.global_pass.max(pass);
        Some(Pick { task, slice: Some(self.quantum) })
    }

    fn charge(&mut self, task: TaskId, ran: Dur, _now: Time) {
        let w = self.weight.get(task).max(1) as u128;
        let advance = (STRIDE1 * ran as u128 / (w * self.quantum as u128)) as u64;
        *self.pass.get_mut(task) += advance.max(1);
    }

    fn queued(&self) -> usize {
        self.q.len()
    }
}
