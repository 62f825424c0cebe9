//! Weighted round robin (seed 004): round robin whose fresh slice is base quantum × weight
//! (weight 0 counts as 1). The queue is rr's (rr.rs), so a task whose slice ends goes to the
//! back, and one pre-empted by a higher class (inside `mlq`) keeps the rest of its slice.

use super::common::PerTask;
use super::rr::{RoundRobinWith, SliceRule};
use super::spec::ms;
use crate::policy::{Dur, TaskId, TaskView};

/// Slice = quantum × weight, noted when the task is enqueued.
#[derive(Debug, Clone, Default)]
pub struct Weighted {
    slice: PerTask<Dur>,
}

impl SliceRule for Weighted {
    fn name(quantum: Dur) -> String {
        format!("wrr:quantum={}", ms(quantum))
    }

    fn note(&mut self, task: &TaskView, quantum: Dur) {
        self.slice.set(task.id, quantum.saturating_mul(task.weight.max(1) as Dur));
    }

    fn slice(&self, task: TaskId, quantum: Dur) -> Dur {
        self.slice.get_ref(task).copied().unwrap_or(quantum)
    }
}

/// Weighted round robin with the given base quantum (seed 004: 10 ms).
pub type WeightedRoundRobin = RoundRobinWith<Weighted>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{CpuId, EnqueueReason, Policy, MS};

    fn pick(p: &mut WeightedRoundRobin, cpu: CpuId) -> (TaskId, Dur) {
        let pk = p.pick_next(cpu, 0).expect("a task");
        (pk.task, pk.slice.expect("a slice"))
    }

    fn weighted(id: TaskId, weight: u32) -> TaskView<'static> {
        TaskView { weight, ..TaskView::new(id) }
    }

    #[test]
    fn weighted_slices_scale_with_weight_and_rotate() {
        let mut p = WeightedRoundRobin::new(10 * MS);
        assert!(p.name().starts_with("wrr:quantum=10ms"));
        p.enqueue(&weighted(0, 1), EnqueueReason::New, 0);
        p.enqueue(&weighted(1, 20), EnqueueReason::New, 0);
        p.enqueue(&weighted(2, 0), EnqueueReason::New, 0);
        assert_eq!(pick(&mut p, 0), (0, 10 * MS));
        p.charge(0, 10 * MS, 10 * MS);
        p.enqueue(&weighted(0, 1), EnqueueReason::SliceExpired, 10 * MS);
        assert_eq!(pick(&mut p, 0), (1, 200 * MS));
        assert_eq!(pick(&mut p, 0), (2, 10 * MS), "weight 0 counts as 1");
        assert_eq!(pick(&mut p, 0).0, 0);
        assert_eq!(p.pick_next(0, 0), None);
    }

    #[test]
    fn a_preempted_weighted_task_keeps_the_rest_of_its_slice() {
        let mut p = WeightedRoundRobin::new(10 * MS);
        p.enqueue(&weighted(0, 3), EnqueueReason::New, 0);
        p.enqueue(&weighted(1, 1), EnqueueReason::New, 0);
        assert_eq!(pick(&mut p, 0), (0, 30 * MS));
        p.charge(0, 12 * MS, 0);
        p.enqueue(&weighted(0, 3), EnqueueReason::Preempted, 0);
        assert_eq!(pick(&mut p, 0), (0, 18 * MS));
    }

    #[test]
    fn affinity_is_respected() {
        let mut p = WeightedRoundRobin::new(MS);
        p.enqueue(&TaskView { affinity: Some(&[1]), ..weighted(0, 1) }, EnqueueReason::New, 0);
        assert_eq!(p.pick_next(0, 0), None);
        assert_eq!(p.pick_next(1, 0).unwrap().task, 0);
    }
}
