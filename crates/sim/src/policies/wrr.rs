//! Weighted round robin (seed 004): one FIFO run queue; a task runs for
//! `base quantum × weight`, then goes to the back of the queue.

use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};
use std::collections::{HashMap, VecDeque};

/// Weighted round robin with slice = quantum × weight.
#[derive(Debug, Clone)]
pub struct WeightedRoundRobin {
    quantum: Dur,
    queue: VecDeque<TaskId>,
    weights: HashMap<TaskId, u32>,
    affinity: HashMap<TaskId, Vec<CpuId>>,
}

impl WeightedRoundRobin {
    /// A WRR policy with the given base quantum (seed 004: 10 ms). A zero quantum is rejected
    /// by callers before this point; here it is clamped to 1 ns so the policy cannot stall.
    pub fn new(quantum: Dur) -> Self {
        WeightedRoundRobin {
            quantum: quantum.max(1),
            queue: VecDeque::new(),
            weights: HashMap::new(),
            affinity: HashMap::new(),
        }
    }

    /// The slice a task of `weight` receives.
    pub fn slice_for(&self, weight: u32) -> Dur {
        self.quantum * weight.max(1) as Dur
    }
}

impl Policy for WeightedRoundRobin {
    fn name(&self) -> String {
        format!("wrr:quantum={}ms", self.quantum as f64 / 1e6)
    }

    fn enqueue(&mut self, task: &TaskView, _why: EnqueueReason, _now: Time) {
        self.weights.insert(task.id, task.weight.max(1));
        match &task.affinity {
            Some(cpus) => self.affinity.insert(task.id, cpus.to_vec()),
            None => self.affinity.remove(&task.id),
        };
        self.queue.push_back(task.id);
    }

    fn dequeue(&mut self, task: TaskId) {
        self.queue.retain(|&t| t != task);
    }

    /// The order does not depend on priority: a priority change leaves the task in place.
    fn requeue(&mut self, _task: &TaskView, _now: Time) {}

    /// Never pre-empts: a running task keeps the CPU until its slice or burst ends.
    #[inline]
    fn may_preempt(&self) -> bool {
        false
    }

    fn pick_next(&mut self, cpu: CpuId, _now: Time) -> Option<Pick> {
        let pos = self.queue.iter().position(|t| self.affinity.get(t).is_none_or(|cpus| cpus.contains(&cpu)))?;
        let task = self.queue.remove(pos)?;
        let weight = self.weights.get(&task).copied().unwrap_or(1);
        Some(Pick { task, slice: Some(self.slice_for(weight)) })
    }

    fn charge(&mut self, _task: TaskId, _ran: Dur, _now: Time) {}

    fn task_exit(&mut self, task: TaskId) {
        self.dequeue(task);
        self.weights.remove(&task);
        self.affinity.remove(&task);
    }

    fn queued(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::MS;

    fn view(id: TaskId, weight: u32) -> TaskView<'static> {
        TaskView { weight, ..TaskView::new(id) }
    }

    #[test]
    fn slices_scale_with_weight_and_rotate() {
        let mut p = WeightedRoundRobin::new(10 * MS);
        p.enqueue(&view(0, 1), EnqueueReason::New, 0);
        p.enqueue(&view(1, 20), EnqueueReason::New, 0);
        assert_eq!(p.pick_next(0, 0), Some(Pick { task: 0, slice: Some(10 * MS) }));
        p.charge(0, 10 * MS, 10 * MS);
        p.enqueue(&view(0, 1), EnqueueReason::SliceExpired, 10 * MS);
        assert_eq!(p.pick_next(0, 0), Some(Pick { task: 1, slice: Some(200 * MS) }));
        assert_eq!(p.pick_next(0, 0).unwrap().task, 0);
        assert_eq!(p.pick_next(0, 0), None);
    }

    #[test]
    fn affinity_is_respected() {
        let mut p = WeightedRoundRobin::new(MS);
        p.enqueue(&TaskView { affinity: Some(&[1]), ..view(0, 1) }, EnqueueReason::New, 0);
        assert_eq!(p.pick_next(0, 0), None);
        assert_eq!(p.pick_next(1, 0).unwrap().task, 0);
    }
}
