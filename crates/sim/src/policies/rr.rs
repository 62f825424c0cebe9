//! Round robin: one FIFO queue and a fixed quantum; a task whose quantum ends goes to the back.
//! A task pre-empted by a higher class (inside `mlq`/`linux`) returns to the head and finishes
//! the rest of its quantum, as Linux's SCHED_RR does.
//!
//! The queue is generic over its [`SliceRule`]: `rr` gives every task the quantum; `wrr`
//! (wrr.rs) gives quantum × weight with the same queue.

use super::common::{Fifo, PerTask};
use super::spec::ms;
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};

/// How long a task's fresh slice is.
pub trait SliceRule: std::fmt::Debug + Clone + Default + Send {
    /// The policy's name with this rule and base quantum.
    fn name(quantum: Dur) -> String;
    /// Note what the rule needs of a task when it is enqueued.
    fn note(&mut self, task: &TaskView, quantum: Dur);
    /// The fresh slice of `task`.
    fn slice(&self, task: TaskId, quantum: Dur) -> Dur;
}

/// Every task gets the quantum (`rr`).
#[derive(Debug, Clone, Default)]
pub struct Fixed;

impl SliceRule for Fixed {
    fn name(quantum: Dur) -> String {
        format!("rr:quantum={}", ms(quantum))
    }

    #[inline(always)]
    fn note(&mut self, _task: &TaskView, _quantum: Dur) {}

    #[inline(always)]
    fn slice(&self, _task: TaskId, quantum: Dur) -> Dur {
        quantum
    }
}

/// Round robin with a fixed quantum.
pub type RoundRobin = RoundRobinWith<Fixed>;

#[derive(Debug, Clone)]
pub struct RoundRobinWith<S: SliceRule> {
    quantum: Dur,
    q: Fifo,
    /// Per task: (quantum left over after a pre-emption (0 = a fresh quantum next time),
    /// slice given at the last pick) — one table, one lookup per call.
    quota: PerTask<(Dur, Dur)>,
    rule: S,
}

impl<S: SliceRule> RoundRobinWith<S> {
    /// Round robin with the given base quantum (> 0; clamped to 1 ns).
    pub fn new(quantum: Dur) -> Self {
        RoundRobinWith { quantum: quantum.max(1), q: Fifo::default(), quota: PerTask::default(), rule: S::default() }
    }
}

impl<S: SliceRule> Policy for RoundRobinWith<S> {
    fn name(&self) -> String {
        S::name(self.quantum)
    }

    // Always: the engine calls this on every arrival and expired slice, and left to itself the
    // compiler kept it out of line (about 4% of the rr benchmark).
    #[inline(always)]
    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, _now: Time) {
        self.rule.note(task, self.quantum);
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
        let slice = if quota.0 > 0 { quota.0 } else { self.rule.slice(task, self.quantum) };
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
}
