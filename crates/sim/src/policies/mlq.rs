//! Multilevel queue: several queues, each with its own policy, and fixed priority between them —
//! a task in a higher queue (lower index) always goes first and pre-empts a task of a lower
//! queue. A task stays in its queue for life. The queue comes from a classifier: by default the
//! task's `class` as a number, else its priority, clamped to the last queue. (Linux's classes,
//! `linux/`, are fixed-priority queues too, with rules between them of their own.)

use super::common::PerTask;
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};

/// Maps a task to a queue index.
pub type Classifier = fn(&TaskView, usize) -> usize;

/// Queue = `class` parsed as a number, else the priority; clamped to `0..n`.
pub fn by_class_or_priority(t: &TaskView, n: usize) -> usize {
    let i = t.class.and_then(|c| c.parse::<i64>().ok()).unwrap_or(t.priority as i64);
    i.clamp(0, n as i64 - 1) as usize
}

pub struct Mlq {
    label: String,
    queues: Vec<Box<dyn Policy>>,
    classify: Classifier,
    queue_of: PerTask<usize>,
}

impl Mlq {
    /// Queues in priority order (index 0 first).
    pub fn new(label: String, queues: Vec<Box<dyn Policy>>, classify: Classifier) -> Self {
        assert!(!queues.is_empty(), "at least one queue");
        Mlq { label, queues, classify, queue_of: PerTask::default() }
    }
}

impl Policy for Mlq {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, now: Time) {
        let q = (self.classify)(task, self.queues.len());
        self.queue_of.set(task.id, q);
        self.queues[q].enqueue(task, why, now);
    }

    fn dequeue(&mut self, task: TaskId) {
        let q = self.queue_of.get(task);
        self.queues[q].dequeue(task);
    }

    fn pick_next(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
        self.queues.iter_mut().find_map(|q| q.pick_next(cpu, now))
    }

    fn charge(&mut self, task: TaskId, ran: Dur, now: Time) {
        let q = self.queue_of.get(task);
        self.queues[q].charge(task, ran, now);
    }

    fn preempts(&self, woken: TaskId, running: TaskId, now: Time) -> bool {
        let (w, r) = (self.queue_of.get(woken), self.queue_of.get(running));
        w < r || (w == r && self.queues[w].preempts(woken, running, now))
    }

    fn task_exit(&mut self, task: TaskId) {
        let q = self.queue_of.get(task);
        self.queues[q].task_exit(task);
    }

    fn queued(&self) -> usize {
        self.queues.iter().map(|q| q.queued()).sum()
    }

    fn prio_changed(&mut self, task: &TaskView, now: Time) {
        let q = self.queue_of.get(task.id);
        self.queues[q].prio_changed(task, now);
    }

    fn blocked(&mut self, task: TaskId, now: Time) {
        let q = self.queue_of.get(task);
        self.queues[q].blocked(task, now);
    }

    fn set_tick(&mut self, tick: Option<Dur>) {
        for q in &mut self.queues {
            q.set_tick(tick);
        }
    }

    fn tick_driven(&self) -> bool {
        self.queues.iter().any(|q| q.tick_driven())
    }

    fn next_timer(&self) -> Option<Time> {
        self.queues.iter().filter_map(|q| q.next_timer()).min()
    }

    fn timer(&mut self, now: Time) {
        for q in &mut self.queues {
            if q.next_timer().is_some_and(|t| t <= now) {
                q.timer(now);
            }
        }
    }

    /// Only the running task's own queue decides (a queue's timer does not pre-empt other queues).
    fn preempt_current(&mut self, running: TaskId, now: Time) -> bool {
        let q = self.queue_of.get(running);
        self.queues[q].preempt_current(running, now)
    }

    fn throttled(&self, task: TaskId) -> bool {
        self.queues[self.queue_of.get(task)].throttled(task)
    }

    /// Every queue hears it; only the one whose task runs on `cpu` has anything to charge.
    fn preempted_after_wakeup(&mut self, cpu: CpuId, woken_at: Time) {
        for q in &mut self.queues {
            q.preempted_after_wakeup(cpu, woken_at);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::{simulate, SimConfig, WakeDelay, WakeDelays};
    use crate::policies::by_spec;
    use crate::policy::MS;
    use crate::workload::{TaskSpec, Workload};

    /// One queue of eevdf is eevdf: a hog and two sleepers whose wake-ups pre-empt it half a
    /// millisecond late schedule alike under both, the delay charged to the wakee in each.
    #[test]
    fn a_single_eevdf_queue_schedules_as_eevdf_with_wake_up_delays() {
        let sleeper = |name: &str, run: u64, sleep: u64| {
            let mut t = TaskSpec::cpu(name, 0, run);
            t.bursts = [run, sleep].repeat(60).into_iter().chain([run]).collect();
            t
        };
        let w = Workload {
            cpus: Some(1),
            tasks: vec![TaskSpec::cpu("hog", 0, 2_000 * MS), sleeper("a", 2 * MS, 8 * MS), sleeper("b", MS, 4 * MS)],
        };
        let cfg = SimConfig {
            horizon: Some(600 * MS),
            tick: Some(4 * MS),
            wake: WakeDelays { preempt: WakeDelay::from(MS / 2), ..WakeDelays::default() },
            ..SimConfig::default()
        };
        let slices = |spec: &str| {
            let r = simulate(&w, &mut *by_spec(spec).unwrap(), &cfg);
            r.slices.iter().map(|s| (s.task, s.start, s.end)).collect::<Vec<_>>()
        };
        assert_eq!(slices("mlq:queues=eevdf"), slices("eevdf"));
    }
}
