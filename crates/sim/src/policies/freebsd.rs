//! FreeBSD's scheduler as the seed describes it (the 4.4BSD / `sched_4bsd` model, McKusick et
//! al.): four groups of run queues in decreasing priority — interrupt threads (class
//! `interrupt`), real-time (`realtime`), time-sharing (default) and idle (`idle`). Each group is
//! split into queues of four priorities each (RQ_PPQ = 4), FIFO within a queue. Real-time,
//! interrupt and idle priorities are fixed (the workload's priority, lower = better).
//! Time-sharing priorities are dynamic: `PUSER + estcpu / 4 + 2 × nice`, where `estcpu` grows
//! by one per 10 ms tick of CPU used and decays once a second by `2·load / (2·load + 1)`
//! (`schedcpu()`, a policy timer at every whole second; `load` is the number of runnable tasks
//! at that instant, where the kernel uses the one-minute load average). The decay recomputes
//! every priority and moves a queued task whose queue changed to the back of its new queue, as
//! `schedcpu()` → `resetpriority_thread()` does; otherwise the priority is recomputed when the
//! slice (100 ms) expires, and the task goes to the back of the queue of its new priority. A better group, or a better queue inside the real-time and
//! interrupt groups, pre-empts. Priority inheritance: a task holding a lock someone better waits
//! for is queued at the top queue of its own group.

use super::common::{KeyQueue, PerTask};
use super::spec::ms;
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};

const PUSER: i64 = 160;
const TICK: Dur = 10_000_000;
const SECOND: Time = 1_000_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
enum Group {
    Interrupt,
    Realtime,
    #[default]
    Timeshare,
    Idle,
}

#[derive(Debug, Clone)]
pub struct FreeBsd {
    slice: Dur,
    /// Key: (group, queue = priority / 4).
    q: KeyQueue<(Group, i64)>,
    group: PerTask<Group>,
    estcpu: PerTask<u64>,
    partial_tick: PerTask<Dur>,
    nice: PerTask<i32>,
    base: PerTask<i32>,
    running_key: PerTask<(Group, i64)>,
    /// The priority the host last showed for each task (inheritance lowers it).
    view_prio: PerTask<i32>,
    known: Vec<TaskId>,
    running: usize,
    next_decay: Time,
}

impl FreeBsd {
    pub fn new(slice: Dur) -> Self {
        FreeBsd {
            slice: slice.max(1),
            q: KeyQueue::default(),
            group: PerTask::default(),
            estcpu: PerTask::default(),
            partial_tick: PerTask::default(),
            nice: PerTask::default(),
            base: PerTask::default(),
            running_key: PerTask::default(),
            view_prio: PerTask::default(),
            known: vec![],
            running: 0,
            next_decay: SECOND,
        }
    }

    fn priority(&self, t: TaskId, view_prio: i32) -> i64 {
        match self.group.get(t) {
            Group::Timeshare => {
                if view_prio < self.base.get(t) {
                    return 0;
                }
                (PUSER + self.estcpu.get(t) as i64 / 4 + 2 * self.nice.get(t) as i64).clamp(PUSER - 40, 255)
            }
            _ => (view_prio as i64).clamp(0, 255),
        }
    }

    fn key(&self, t: TaskId, view_prio: i32) -> (Group, i64) {
        (self.group.get(t), self.priority(t, view_prio) / 4)
    }

    /// Once a second: estcpu ← estcpu · 2·load / (2·load + 1) + nice, then every priority
    /// again (schedcpu()). `arriving` counts a runnable task being queued, in neither the
    /// queue nor on a CPU yet.
    fn decay(&mut self, now: Time, arriving: usize) {
        if now < self.next_decay {
            return;
        }
        while now >= self.next_decay {
            self.next_decay += SECOND;
            let load = (self.q.len() + self.running + arriving) as u64;
            for &t in &self.known {
                let e = self.estcpu.get(t);
                let n = self.nice.get(t).max(0) as u64;
                self.estcpu.set(t, e * 2 * load / (2 * load + 1) + n);
            }
        }
        for i in 0..self.known.len() {
            let t = self.known[i];
            let key = self.key(t, self.view_prio.get(t));
            if self.q.contains(t) {
                if self.q.key_of(t) != Some(key) {
                    self.q.rekey(t, key);
                }
            } else {
                self.running_key.set(t, key);
            }
        }
    }
}

impl Policy for FreeBsd {
    fn name(&self) -> String {
        format!("freebsd_4bsd:slice={}", ms(self.slice))
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, now: Time) {
        let t = task.id;
        if why == EnqueueReason::New {
            let g = match task.class {
                Some("interrupt") | Some("ithd") => Group::Interrupt,
                Some("realtime") | Some("rt") => Group::Realtime,
                Some("idle") => Group::Idle,
                _ => Group::Timeshare,
            };
            self.group.set(t, g);
            self.nice.set(t, task.nice);
            self.base.set(t, task.priority);
            self.known.push(t);
        }
        self.view_prio.set(t, task.priority);
        self.decay(now, 1);
        let key = self.key(t, task.priority);
        self.q.enqueue(task, key, why);
    }

    fn dequeue(&mut self, task: TaskId) {
        self.q.remove(task);
    }

    fn pick_next(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
        self.decay(now, 0);
        let (task, key) = self.q.pop(cpu)?;
        self.running_key.set(task, key);
        self.running += 1;
        Some(Pick { task, slice: Some(self.slice) })
    }

    fn charge(&mut self, task: TaskId, ran: Dur, _now: Time) {
        self.running = self.running.saturating_sub(1);
        let total = self.partial_tick.get(task) + ran;
        *self.estcpu.get_mut(task) += total / TICK;
        self.partial_tick.set(task, total % TICK);
    }

    /// The once-a-second decay happens at its time, not at the next scheduling event.
    fn next_timer(&self) -> Option<Time> {
        Some(self.next_decay)
    }

    fn timer(&mut self, now: Time) {
        self.decay(now, 0);
    }

    fn preempts(&self, woken: TaskId, running: TaskId, _now: Time) -> bool {
        let (Some(w), r) = (self.q.key_of(woken), self.running_key.get(running)) else { return false };
        w.0 < r.0 || (w.0 == r.0 && w.0 != Group::Timeshare && w.1 < r.1)
    }

    fn task_exit(&mut self, task: TaskId) {
        self.known.retain(|&t| t != task);
    }

    fn queued(&self) -> usize {
        self.q.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_use_lowers_timeshare_priority() {
        let mut p = FreeBsd::new(100_000_000);
        p.enqueue(&TaskView::new(0), EnqueueReason::New, 0);
        p.enqueue(&TaskView::new(1), EnqueueReason::New, 0);
        let a = p.pick_next(0, 0).unwrap().task;
        p.charge(a, 100_000_000, 100_000_000);
        p.enqueue(&TaskView::new(a), EnqueueReason::SliceExpired, 100_000_000);
        assert_eq!(p.estcpu.get(a), 10);
        // The other task (estcpu 0) is now in a better queue.
        assert_eq!(p.pick_next(0, 100_000_000).unwrap().task, 1 - a);
    }

    #[test]
    fn realtime_group_beats_timeshare() {
        let mut p = FreeBsd::new(100_000_000);
        p.enqueue(&TaskView::new(0), EnqueueReason::New, 0);
        p.enqueue(&TaskView { class: Some("realtime"), priority: 10, ..TaskView::new(1) }, EnqueueReason::New, 0);
        assert_eq!(p.pick_next(0, 0).unwrap().task, 1);
    }
}
