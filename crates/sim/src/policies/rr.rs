//! Round robin: one FIFO queue and a fixed quantum; a task whose quantum ends goes to the back.
//! A task pre-empted by a higher class (inside `mlq`/`linux`) returns to the head and finishes
//! the rest of its quantum, as Linux's SCHED_RR does.
//!
//! Weighted round robin (seed 004, `wrr`) is the same queue with a slice of quantum × weight
//! (weight 0 counts as 1).

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
    /// Weighted: each task's full slice (quantum × weight), noted at enqueue.
    weighted: bool,
    full_slice: PerTask<Dur>,
}

impl RoundRobin {
    /// Round robin with the given quantum (> 0; clamped to 1 ns).
    pub fn new(quantum: Dur) -> Self {
        RoundRobin {
            quantum: quantum.max(1),
            q: Fifo::default(),
            quota: PerTask::default(),
            weighted: false,
            full_slice: PerTask::default(),
        }
    }

    /// Weighted round robin: slice = `quantum` × weight (seed 004: 10 ms).
    pub fn weighted(quantum: Dur) -> Self {
        RoundRobin { weighted: true, ..RoundRobin::new(quantum) }
    }

    /// Out of line: plain round robin's `enqueue` stays small.
    #[inline(never)]
    fn note_weight(&mut self, t: TaskId, weight: u32) {
        self.full_slice.set(t, self.quantum.saturating_mul(weight.max(1) as Dur));
    }
}

impl Policy for RoundRobin {
    fn name(&self) -> String {
        if self.weighted {
            format!("wrr:quantum={}ms", ms(self.quantum))
        } else {
            format!("rr:quantum={}", ms(self.quantum))
        }
    }

    // Always: the engine calls this on every arrival and expired slice, and the compiler's
    // heuristics left it out of line once the weighted branch was added (about 4%).
    #[inline(always)]
    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, _now: Time) {
        if self.weighted {
            self.note_weight(task.id, task.weight);
        }
        let quota = self.quota.get_mut(task.id);
        if why == EnqueueReason::Preempted && quota.0 > 0 {
            self.q.push_front(task);
        } else {
            // A restored task keeps what is left of its quantum (reached only inside `mlq`,
            // whose queue choice depends on priority).
            if why != EnqueueReason::Restored {
                quota.0 = 0;
            }
            self.q.push_back(task);
        }
    }

    #[inline]
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

    #[inline]
    fn pick_next(&mut self, cpu: CpuId, _now: Time) -> Option<Pick> {
        let task = self.q.pop(cpu)?;
        let quota = self.quota.get_mut(task);
        let full = if self.weighted { self.full_slice.get(task) } else { self.quantum };
        let slice = if quota.0 > 0 { quota.0 } else { full };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::MS;

    fn pick(p: &mut RoundRobin, cpu: CpuId) -> (TaskId, Dur) {
        let pk = p.pick_next(cpu, 0).expect("a task");
        (pk.task, pk.slice.expect("a slice"))
    }

    #[test]
    fn expired_tasks_go_to_the_back_with_a_fresh_quantum() {
        let mut p = RoundRobin::new(4 * MS);
        p.enqueue(&TaskView::new(0), EnqueueReason::New, 0);
        p.enqueue(&TaskView::new(1), EnqueueReason::New, 0);
        assert_eq!(pick(&mut p, 0), (0, 4 * MS));
        p.charge(0, 4 * MS, 0);
        p.enqueue(&TaskView::new(0), EnqueueReason::SliceExpired, 0);
        assert_eq!(pick(&mut p, 0), (1, 4 * MS));
        assert_eq!(pick(&mut p, 0), (0, 4 * MS));
    }

    #[test]
    fn a_preempted_task_returns_to_the_head_with_the_rest_of_its_quantum() {
        let mut p = RoundRobin::new(4 * MS);
        for t in 0..3 {
            p.enqueue(&TaskView::new(t), EnqueueReason::New, 0);
        }
        assert_eq!(pick(&mut p, 0), (0, 4 * MS));
        assert_eq!(pick(&mut p, 1), (1, 4 * MS));
        // Task 1 on CPU 1 is pre-empted after 1 ms, task 0 on CPU 0 after 3 ms.
        p.charge(1, MS, 0);
        p.enqueue(&TaskView::new(1), EnqueueReason::Preempted, 0);
        p.charge(0, 3 * MS, 0);
        p.enqueue(&TaskView::new(0), EnqueueReason::Preempted, 0);
        assert_eq!(pick(&mut p, 0), (0, MS));
        assert_eq!(pick(&mut p, 0), (1, 3 * MS));
        assert_eq!(pick(&mut p, 0), (2, 4 * MS));
        // Used up: no rest is kept, and a pre-emption then gives a fresh quantum at the back.
        p.charge(2, 4 * MS, 0);
        p.enqueue(&TaskView::new(2), EnqueueReason::Preempted, 0);
        assert_eq!(pick(&mut p, 0), (2, 4 * MS));
    }

    #[test]
    fn a_dequeued_or_woken_task_loses_the_rest_of_its_quantum() {
        let mut p = RoundRobin::new(4 * MS);
        p.enqueue(&TaskView::new(0), EnqueueReason::New, 0);
        assert_eq!(pick(&mut p, 0), (0, 4 * MS));
        p.charge(0, MS, 0);
        p.enqueue(&TaskView::new(0), EnqueueReason::Preempted, 0);
        p.dequeue(0);
        assert_eq!(p.queued(), 0);
        p.enqueue(&TaskView::new(0), EnqueueReason::Migrated, 0);
        assert_eq!(pick(&mut p, 0), (0, 4 * MS));
        p.charge(0, MS, 0);
        // Blocked instead of requeued; woken later: a fresh quantum.
        p.enqueue(&TaskView::new(0), EnqueueReason::Woken, 0);
        assert_eq!(pick(&mut p, 0), (0, 4 * MS));
    }

    fn weighted(id: TaskId, weight: u32) -> TaskView<'static> {
        TaskView { weight, ..TaskView::new(id) }
    }

    #[test]
    fn weighted_slices_scale_with_weight_and_rotate() {
        let mut p = RoundRobin::weighted(10 * MS);
        assert!(p.name().starts_with("wrr:quantum=10"));
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
        let mut p = RoundRobin::weighted(10 * MS);
        p.enqueue(&weighted(0, 3), EnqueueReason::New, 0);
        p.enqueue(&weighted(1, 1), EnqueueReason::New, 0);
        assert_eq!(pick(&mut p, 0), (0, 30 * MS));
        p.charge(0, 12 * MS, 0);
        p.enqueue(&weighted(0, 3), EnqueueReason::Preempted, 0);
        assert_eq!(pick(&mut p, 0), (0, 18 * MS));
    }

    #[test]
    fn affinity_is_respected() {
        let mut p = RoundRobin::weighted(MS);
        p.enqueue(&TaskView { affinity: Some(&[1]), ..weighted(0, 1) }, EnqueueReason::New, 0);
        assert_eq!(p.pick_next(0, 0), None);
        assert_eq!(p.pick_next(1, 0).unwrap().task, 0);
    }
}
