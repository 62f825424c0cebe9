//! Priority scheduling; a lower number is a higher priority. One implementation, three uses:
//! - `prio`: non-pre-emptive — the best queued task runs until its burst ends;
//! - `prio-preempt`: a newly runnable better task pre-empts; optional `aging` (a queued task's
//!   priority improves by one level per `aging` ms waited, so low priorities do not starve);
//! - Linux's real-time class inside `linux`: pre-emptive, FIFO among equals, and tasks of class
//!   `rr` get a quantum (SCHED_RR) while `fifo` tasks run until they block (SCHED_FIFO).

use super::common::{KeyQueue, PerTask};
use super::spec::ms;
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};

#[derive(Debug, Clone)]
pub struct Priority {
    preemptive: bool,
    aging: Option<Dur>,
    /// Quantum for equal-priority round robin (all tasks, or only class `rr` when `rr_class_only`).
    quantum: Option<Dur>,
    rr_class_only: bool,
    q: KeyQueue<i32>,
    enq_time: PerTask<Time>,
    /// Effective priority of a running task (for `preempts`).
    running_prio: PerTask<i32>,
    rr: PerTask<bool>,
}

impl Priority {
    /// `prio` (pre-emptive = false) or `prio-preempt`.
    pub fn new(preemptive: bool, aging: Option<Dur>, quantum: Option<Dur>) -> Self {
        Priority {
            preemptive,
            aging,
            quantum,
            rr_class_only: false,
            q: KeyQueue::default(),
            enq_time: PerTask::default(),
            running_prio: PerTask::default(),
            rr: PerTask::default(),
        }
    }

    /// Linux's real-time class: pre-emptive; `rr` tasks get `quantum`, `fifo` tasks none.
    pub fn linux_rt(quantum: Dur) -> Self {
        Priority { rr_class_only: true, ..Priority::new(true, None, Some(quantum)) }
    }

    fn effective(&self, prio: i32, enq: Time, now: Time) -> i32 {
        match self.aging {
            Some(a) => prio.saturating_sub(((now.saturating_sub(enq)) / a).min(i32::MAX as u64) as i32),
            None => prio,
        }
    }
}

impl Policy for Priority {
    fn name(&self) -> String {
        let mut s = if self.preemptive { "prio-preempt".to_string() } else { "prio".to_string() };
        let mut params = vec![];
        if let Some(a) = self.aging {
            params.push(format!("aging={}", ms(a)));
        }
        if let (Some(q), false) = (self.quantum, self.rr_class_only) {
            params.push(format!("quantum={}", ms(q)));
        }
        if !params.is_empty() {
            s = format!("{s}:{}", params.join(","));
        }
        s
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, now: Time) {
        self.enq_time.set(task.id, now);
        self.rr.set(task.id, !self.rr_class_only || task.class.as_deref() == Some("rr"));
        if why == EnqueueReason::Preempted {
            self.q.push_front(task, task.priority);
        } else {
            self.q.push(task, task.priority);
        }
    }

    fn dequeue(&mut self, task: TaskId) {
        self.q.remove(task);
    }

    fn pick_next(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
        let task = if self.aging.is_some() {
            // Aged priorities change with time: scan (queue order breaks ties first come first).
            let best = self
                .q
                .iter()
                .filter(|&(t, _)| self.q.affinity.allowed(t, cpu))
                .min_by_key(|&(t, p)| self.effective(p, self.enq_time.get(t), now))?
                .0;
            let p = self.q.remove(best).expect("queued");
            self.running_prio.set(best, self.effective(p, self.enq_time.get(best), now));
            best
        } else {
            let (t, p) = self.q.pop(cpu)?;
            self.running_prio.set(t, p);
            t
        };
        let slice = if self.rr.get(task) { self.quantum } else { None };
        Some(Pick { task, slice })
    }

    fn charge(&mut self, _task: TaskId, _ran: Dur, _now: Time) {}

    fn preempts(&self, woken: TaskId, running: TaskId, _now: Time) -> bool {
        self.preemptive && self.q.key_of(woken).is_some_and(|w| w < self.running_prio.get(running))
    }

    fn prio_changed(&mut self, task: &TaskView, _now: Time) {
        self.running_prio.set(task.id, task.priority);
    }

    fn queued(&self) -> usize {
        self.q.len()
    }
}
