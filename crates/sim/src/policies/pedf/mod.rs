//! Partitioned EDF (`pedf`): every task is bound to one CPU for the whole run (unless the
//! workload holds its bursts on given CPUs, `burst_cpus`: then it moves home, density and all,
//! when a burst's CPUs exclude its CPU), and each CPU
//! schedules its own tasks by uniprocessor EDF (earliest absolute deadline first, pre-emptive;
//! equal deadlines by task id, never pre-empting; jobs without a deadline last). No job ever
//! migrates, and a CPU idles while another CPU's queue waits ([`Policy::work_conserving`] is
//! false), as in any partitioned scheme.
//!
//! The partition is first-fit decreasing by density (`partition.rs` has the exact rule, the
//! ties, and what happens to a task that fits nowhere). A policy learns of a task only when it
//! arrives, so the tasks that arrive at one instant are placed together, first-fit decreasing,
//! once that instant's arrivals are all in (at the first pick or at a timer the policy sets for
//! that same instant); later arrivals go on top of the loads placed so far. For the usual task
//! set, released together at time 0, that is first-fit decreasing over the whole set. C is the
//! job's first CPU burst (`TaskView::burst` at arrival: the whole job for a one-burst job); a
//! task's density stays counted on its CPU for the rest of the run (or until it moves home).
//!
//! Until placed, a new task pre-empts nothing (the engine asks [`Policy::placed_on`] at once);
//! the same-instant timer then displaces each CPU's running job whose deadline is later than the
//! head of that CPU's queue. [`Pedf::placement`] tells where each task went.

mod partition;
#[cfg(test)]
mod tests;

pub use partition::Placement;

use super::common::{KeyQueue, PerTask};
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};
use partition::{Bins, Item};

/// A new task waiting for its instant's batch to be placed.
#[derive(Debug, Clone)]
struct Pending {
    item: Item,
    deadline: Time,
    why: EnqueueReason,
}

#[derive(Debug, Clone, Default)]
pub struct Pedf {
    /// One EDF queue per CPU, keyed by (absolute deadline, task id).
    rqs: Vec<KeyQueue<(Time, TaskId)>>,
    home: PerTask<Option<Placement>>,
    bins: Bins,
    pending: Vec<Pending>,
    /// Per CPU: the running task and its deadline.
    running: Vec<Option<(TaskId, Time)>>,
    timer_at: Option<Time>,
    victims: Vec<TaskId>,
}

impl Pedf {
    pub fn new() -> Self {
        Pedf::default()
    }

    /// Where `task` was placed (None: not seen, or not placed yet).
    pub fn placement(&self, task: TaskId) -> Option<Placement> {
        self.home.get(task)
    }

    fn cpus(&self) -> usize {
        self.rqs.len().max(1)
    }

    /// The queue a CPU picks from: its own, or the only one when this instance serves one CPU
    /// (per-CPU mode hands each instance a single CPU, whatever its number).
    fn rq_of_cpu(&self, cpu: CpuId) -> usize {
        if self.cpus() == 1 {
            0
        } else {
            cpu
        }
    }

    fn push(&mut self, t: TaskId, affinity: Option<&[CpuId]>, deadline: Time, why: EnqueueReason) {
        let q = self.rq_of_cpu(self.home.get(t).map_or(0, |p| p.cpu));
        let view = TaskView { affinity, ..TaskView::new(t) };
        self.rqs[q].enqueue(&view, (deadline, t), why);
    }

    /// Place the pending batch, first-fit decreasing, and queue its tasks.
    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        if self.pending.len() == 1 {
            // A batch of one (always, on one CPU): placed as first-fit decreasing would place it,
            // without the sorting and the vectors.
            let p = self.pending.pop().expect("one pending task");
            let placement = self.bins.place(p.item.density, p.item.affinity.as_deref());
            self.home.set(p.item.task, Some(placement));
            self.push(p.item.task, p.item.affinity.as_deref(), p.deadline, p.why);
            return;
        }
        let batch = std::mem::take(&mut self.pending);
        let placed = self.bins.place_decreasing(batch.iter().map(|p| p.item.clone()).collect());
        for (t, p) in placed {
            self.home.set(t, Some(p));
        }
        for p in batch {
            self.push(p.item.task, p.item.affinity.as_deref(), p.deadline, p.why);
        }
    }
}

impl Policy for Pedf {
    fn name(&self) -> String {
        "pedf".into()
    }

    fn set_cpus(&mut self, cpus: usize) {
        let cpus = cpus.max(1);
        *self = Pedf {
            rqs: vec![KeyQueue::default(); cpus],
            bins: Bins::new(cpus),
            running: vec![None; cpus],
            ..Pedf::default()
        };
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, now: Time) {
        if self.rqs.is_empty() {
            // A host that never called set_cpus: one CPU.
            self.set_cpus(1);
        }
        let deadline = task.deadline.unwrap_or(Time::MAX);
        if let Some(home) = self.home.get(task.id) {
            if self.cpus() > 1 && task.affinity.is_some_and(|a| !a.contains(&home.cpu)) {
                // Its allowed CPUs changed (a replay holds each burst where it ran): a new home.
                self.bins.unplace(&home);
                self.home.set(task.id, Some(self.bins.place(home.density, task.affinity)));
            }
            self.push(task.id, task.affinity, deadline, why);
            return;
        }
        let c = task.burst.unwrap_or(0);
        let rel = task.deadline.map(|d| d.saturating_sub(now));
        let density = partition::density(c, rel, task.period);
        let item = Item { task: task.id, density, affinity: task.affinity.map(<[CpuId]>::to_vec) };
        self.pending.push(Pending { item, deadline, why });
        if self.cpus() == 1 {
            self.flush();
        } else {
            self.timer_at = Some(now);
        }
    }

    fn placed_on(&self, task: TaskId) -> Option<CpuId> {
        self.home.get(task).map(|p| self.rq_of_cpu(p.cpu))
    }

    fn work_conserving(&self) -> bool {
        self.cpus() == 1
    }

    fn dequeue(&mut self, task: TaskId) {
        self.pending.retain(|p| p.item.task != task);
        if let Some(p) = self.home.get(task) {
            let q = self.rq_of_cpu(p.cpu);
            if let Some(rq) = self.rqs.get_mut(q) {
                rq.remove(task);
            }
        }
    }

    /// The order does not depend on priority: a priority change leaves the task in place.
    fn requeue(&mut self, _task: &TaskView, _now: Time) {}

    fn pick_next(&mut self, cpu: CpuId, _now: Time) -> Option<Pick> {
        self.flush();
        let q = self.rq_of_cpu(cpu);
        let (task, (d, _)) = self.rqs.get_mut(q)?.pop(cpu)?;
        self.running[q] = Some((task, d));
        Some(Pick { task, slice: None })
    }

    fn charge(&mut self, task: TaskId, _ran: Dur, _now: Time) {
        for r in &mut self.running {
            if r.is_some_and(|(t, _)| t == task) {
                *r = None;
            }
        }
        self.victims.retain(|&v| v != task);
    }

    fn preempts(&self, woken: TaskId, running: TaskId, _now: Time) -> bool {
        let Some(p) = self.home.get(woken) else { return false };
        let q = self.rq_of_cpu(p.cpu);
        let key = self.rqs.get(q).and_then(|rq| rq.key_of(woken));
        let run = self.running.get(q).copied().flatten();
        key.zip(run).is_some_and(|((d, _), (r, rd))| r == running && d < rd)
    }

    fn next_timer(&self) -> Option<Time> {
        self.timer_at
    }

    /// Place the instant's new tasks, then displace each CPU's running job whose deadline is
    /// later than its queue's head.
    fn timer(&mut self, _now: Time) {
        self.timer_at = None;
        self.flush();
        self.victims.clear();
        for q in 0..self.rqs.len() {
            let Some((r, rd)) = self.running[q] else { continue };
            if self.rqs[q].min_key().is_some_and(|(d, _)| d < rd) {
                self.victims.push(r);
            }
        }
    }

    fn preempt_current(&mut self, running: TaskId, _now: Time) -> bool {
        let before = self.victims.len();
        self.victims.retain(|&v| v != running);
        self.victims.len() != before
    }

    fn queued(&self) -> usize {
        self.pending.len() + self.rqs.iter().map(KeyQueue::len).sum::<usize>()
    }
}
