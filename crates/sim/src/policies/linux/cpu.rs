//! One CPU's run queue of the `linux` policy (`struct rq`): its deadline, real-time and fair
//! class queues, walked in the order `pick_next_task()` walks them, with RT throttling and the
//! fair deadline server; the task it runs; and what the load balancer needs of it (the order
//! it last ran its fair tasks in, `rq->cfs_tasks`).

use super::bandwidth::RtBandwidth;
use super::deadline::DeadlineRq;
use super::fair_server::FairServer;
use super::rt::RtRq;
use super::{Class, LinuxParams};
use crate::policies::eevdf::FairRq;
use crate::policy::{CpuId, Dur, Pick, TaskId, Time};

/// How far ahead an RT task's budget is looked for (beyond it, its slice is not cut).
const BUDGET_HORIZON: Dur = 3_600_000_000_000;

/// One CPU's classes.
#[derive(Debug, Clone)]
pub struct CpuRq {
    pub cpu: CpuId,
    pub dl: DeadlineRq,
    pub rt: RtRq,
    pub fair: FairRq,
    /// The task it runs (picked and not yet charged) and its class.
    pub curr: Option<(TaskId, Class)>,
    /// A task stopped running here since its last pick: its next pick is a `schedule()` (a CPU
    /// about to go idle balances; one already idle does not).
    pub scheduling: bool,
    /// Ready deadline tasks promised this CPU by `preempt_current` since the last timer.
    pub promised: usize,
    /// Its fair tasks, most recently picked or queued first (`rq->cfs_tasks`): the load
    /// balancer takes from the back.
    pub cfs_tasks: Vec<TaskId>,
    /// The fair deadline server (`rq->fair_server`).
    pub server: FairServer,
    /// The CPU idles since (its last pick found nothing).
    idle_since: Option<Time>,
}

impl CpuRq {
    pub fn new(cpu: CpuId, p: &LinuxParams) -> Self {
        CpuRq {
            cpu,
            dl: DeadlineRq::default(),
            rt: RtRq::new(p.rr_quantum),
            fair: FairRq::new(p.fair.clone()),
            curr: None,
            scheduling: false,
            promised: 0,
            cfs_tasks: Vec::new(),
            server: FairServer::new(p.fair_server_runtime, p.fair_server_period),
            idle_since: None,
        }
    }

    /// Tasks waiting here, every class (not the running one).
    pub fn waiting(&self) -> usize {
        self.dl.queued() + self.rt.queued() + self.fair.queued()
    }

    /// `rq->nr_running`: waiting, delayed fair entities and the running task.
    pub fn nr_running(&self) -> usize {
        self.dl.queued() + self.rt.queued() + self.fair.nr_queued() as usize + usize::from(self.curr.is_some())
            - usize::from(matches!(self.curr, Some((_, Class::Fair))))
    }

    /// Runnable fair tasks here, running included, delayed ones not (`cfs.h_nr_runnable`).
    pub fn fair_runnable(&self) -> usize {
        self.fair.queued() + usize::from(matches!(self.curr, Some((_, Class::Fair))))
    }

    /// Nothing runs and nothing waits.
    pub fn is_idle(&self) -> bool {
        self.curr.is_none() && self.nr_running() == 0
    }

    /// The server's account of the idle time up to `now` (`dl_server_update_idle_time()`).
    #[inline]
    fn account_idle(&mut self, p: &LinuxParams, now: Time) {
        if let Some(since) = self.idle_since.take() {
            if p.fair_server {
                self.server.idle(now.saturating_sub(since));
            }
        }
    }

    /// `enqueue_task_fair()`'s part for the server: the first fair task here starts it (after
    /// the idle time up to now is accounted, the CPU idling on if nothing is picked).
    #[inline]
    pub fn fair_arrives(&mut self, p: &LinuxParams, now: Time) {
        if !p.fair_server || self.fair.nr_queued() > 0 {
            return;
        }
        if self.idle_since.is_some() {
            self.account_idle(p, now);
            self.idle_since = Some(now);
        }
        self.server.start(now);
    }

    /// Is this CPU's RT queue throttled?
    #[inline]
    pub fn rt_throttled(&self, p: &LinuxParams, bw: &RtBandwidth) -> bool {
        p.rt_throttle && bw.throttled(self.cpu)
    }

    /// Fair tasks run above RT ones here (the fair server is queued).
    #[inline]
    pub fn serving(&self, p: &LinuxParams) -> bool {
        p.fair_server && self.server.serving()
    }

    /// `pick_next_task()`: deadline tasks, the fair server while it is queued (fair tasks, for
    /// its runtime at most; with none to run it stops), real-time tasks unless throttled (for
    /// what is left of their budget at most), fair tasks; else the CPU idles.
    #[inline(always)]
    pub fn pick(&mut self, p: &LinuxParams, bw: &mut RtBandwidth, now: Time) -> Option<(Pick, Class)> {
        let cpu = self.cpu;
        self.account_idle(p, now);
        if p.rt_throttle {
            bw.update(now);
        }
        if let Some(pick) = if self.dl.queued() > 0 { self.dl.pick(cpu, now) } else { None } {
            self.fair.put_prev(cpu);
            if p.rt_throttle {
                bw.start(cpu, now);
            }
            return Some((pick, Class::Deadline));
        }
        if self.serving(p) {
            if let Some(mut pick) = self.fair.pick(cpu, now) {
                let left = self.server.left().max(1);
                pick.slice = Some(pick.slice.map_or(left, |s| s.min(left)));
                return Some((pick, Class::Fair));
            }
            self.server.stop();
        }
        if self.rt.queued() > 0 && !self.rt_throttled(p, bw) {
            if let Some(mut pick) = self.rt.pick(cpu, now) {
                self.fair.put_prev(cpu);
                if p.rt_throttle {
                    bw.start(cpu, now);
                    if let Some(budget) = bw.budget(cpu, now, BUDGET_HORIZON) {
                        pick.slice = Some(pick.slice.map_or(budget, |s| s.min(budget)));
                    }
                }
                return Some((pick, Class::RealTime));
            }
        }
        let picked = self.fair.pick(cpu, now).map(|pick| (pick, Class::Fair));
        if picked.is_none() {
            self.idle_since = Some(now);
        }
        picked
    }

    /// `update_curr()` of the class of `t`, which stops running here after `ran`.
    #[inline]
    pub fn charge(&mut self, t: TaskId, class: Class, ran: Dur, p: &LinuxParams, bw: &mut RtBandwidth, now: Time) {
        match class {
            Class::Deadline => {
                self.dl.charge(t, now);
                if p.rt_throttle {
                    bw.stop(self.cpu, now, false);
                }
            }
            Class::RealTime => {
                self.rt.charge(t, now);
                if p.rt_throttle {
                    bw.stop(self.cpu, now, true);
                }
            }
            Class::Fair => {
                self.fair.charge(t, now);
                if p.fair_server {
                    self.server.charge(ran, now);
                }
            }
        }
    }

    /// `wakeup_preempt()`: a higher class pre-empts at once; within a class, the class decides.
    /// The fair server, once queued, is a deadline entity: a fair wakee that started it
    /// displaces an RT task, and an RT wakee does not displace a fair task it serves; an RT
    /// wakee waits while its queue is throttled.
    #[inline]
    pub fn preempts(
        &self,
        (woken, wc): (TaskId, Class),
        (running, rc): (TaskId, Class),
        p: &LinuxParams,
        bw: &RtBandwidth,
        now: Time,
    ) -> bool {
        match (wc, rc) {
            (Class::Deadline, Class::Deadline) => self.dl.preempts(woken, running),
            (Class::Deadline, _) => !self.dl.is_throttled(woken),
            (Class::RealTime, Class::RealTime) => self.rt.preempts(woken, running),
            (Class::RealTime, Class::Fair) => !self.rt_throttled(p, bw) && !self.serving(p),
            (Class::Fair, Class::Fair) => self.fair.preempts(woken, running, now),
            (Class::Fair, Class::RealTime) => self.serving(p),
            _ => false,
        }
    }

    /// After a timer: should the task running here give up the CPU now (a replenished deadline
    /// task, a fair server that started serving, an RT task that a boundary unthrottled or a
    /// higher one, a task a balancer put here)?
    pub fn preempt_current(&mut self, running: (TaskId, Class), p: &LinuxParams, bw: &RtBandwidth, _now: Time) -> bool {
        let (t, class) = running;
        let dl_waiting = self.dl.ready() > self.promised;
        let dl_wins = dl_waiting
            && match class {
                Class::Deadline => self.dl.earliest().is_some_and(|d| d < self.dl.deadline_of(t)),
                _ => true,
            };
        if dl_wins {
            self.promised += 1;
            return true;
        }
        match class {
            Class::RealTime => {
                (self.serving(p) && self.fair.queued() > 0) || self.rt.top().is_some_and(|top| top > self.rt.prio(t))
            }
            Class::Fair => self.rt.queued() > 0 && !self.rt_throttled(p, bw) && !self.serving(p),
            Class::Deadline => false,
        }
    }

    /// Is `t`, queued here, held off the CPU by a throttle (its deadline server, or its RT
    /// queue's budget)?
    pub fn throttled(&self, t: TaskId, class: Class, p: &LinuxParams, bw: &RtBandwidth) -> bool {
        match class {
            Class::Deadline => self.dl.is_throttled(t),
            Class::RealTime => self.rt_throttled(p, bw),
            Class::Fair => false,
        }
    }

    /// Put `t` first in `cfs_tasks` (picked, or queued here).
    pub fn cfs_front(&mut self, t: TaskId) {
        if let Some(i) = self.cfs_tasks.iter().position(|&x| x == t) {
            self.cfs_tasks.remove(i);
        }
        self.cfs_tasks.insert(0, t);
    }

    /// Keep `t` where it is in `cfs_tasks`, or put it first if it is not there.
    pub fn cfs_keep(&mut self, t: TaskId) {
        if !self.cfs_tasks.contains(&t) {
            self.cfs_tasks.insert(0, t);
        }
    }

    /// Drop from `cfs_tasks` the tasks no longer on the fair queue (slept or gone). The kernel's
    /// `rq->cfs_tasks` holds only queued tasks (delayed ones too); ours keeps a task that sleeps
    /// until the balancer looks, whose pass must not spend its `loop_max` looks on it. A task
    /// queued again goes to the front either way.
    pub fn cfs_prune(&mut self) {
        let fair = &self.fair;
        self.cfs_tasks.retain(|&t| fair.on_queue(t));
    }

    /// Take `t` out of `cfs_tasks` (it left this CPU's fair queue).
    pub fn cfs_forget(&mut self, t: TaskId) {
        self.cfs_tasks.retain(|&x| x != t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rq->cfs_tasks` is most-recently-queued first, but a delayed task woken in place
    /// (ENQUEUE_DELAYED) is not queued anew and keeps its place; the balancer walks the list
    /// from the back, so the place decides which task it looks at first.
    #[test]
    fn a_task_requeued_in_place_keeps_its_place_in_cfs_tasks() {
        let mut rq = CpuRq::new(0, &LinuxParams::default());
        for t in [1, 2, 3] {
            rq.cfs_front(t);
        }
        assert_eq!(rq.cfs_tasks, [3, 2, 1]);
        rq.cfs_keep(1);
        assert_eq!(rq.cfs_tasks, [3, 2, 1]);
        rq.cfs_front(1);
        assert_eq!(rq.cfs_tasks, [1, 3, 2]);
        rq.cfs_keep(4);
        assert_eq!(rq.cfs_tasks, [4, 1, 3, 2]);
    }
}
