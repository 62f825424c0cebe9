//! One CPU's run queue of the `linux` policy (`struct rq`): its deadline, real-time and fair
//! class queues, walked in the order `pick_next_task()` walks them, with RT throttling; the
//! task it runs; and what the load balancer needs of it (the order it last ran its fair tasks
//! in, `rq->cfs_tasks`).

use super::bandwidth::RtBandwidth;
use super::deadline::DeadlineRq;
use super::rt::RtRq;
use super::{Class, LinuxParams};
use crate::policies::eevdf::FairRq;
use crate::policy::{CpuId, Pick, TaskId, Time};

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

    /// Fair tasks go before RT ones here: its RT budget is spent and a fair task waits.
    pub fn rt_held_back(&self, p: &LinuxParams, bw: &RtBandwidth, now: Time) -> bool {
        p.rt_throttle && self.fair.queued() > 0 && (bw.throttled(self.cpu) || bw.exhausted(self.cpu, now))
    }

    /// `pick_next_task()`: the first class with a task, highest first; a CPU whose RT budget is
    /// spent serves waiting fair tasks before RT ones.
    pub fn pick(&mut self, p: &LinuxParams, bw: &mut RtBandwidth, now: Time) -> Option<(Pick, Class)> {
        let cpu = self.cpu;
        if p.rt_throttle {
            bw.update(cpu, now);
        }
        if let Some(pick) = self.dl.pick(cpu, now) {
            self.fair.put_prev(cpu);
            return Some((pick, Class::Deadline));
        }
        if !self.rt_held_back(p, bw, now) {
            return match self.rt.pick(cpu, now) {
                Some(mut pick) => {
                    self.fair.put_prev(cpu);
                    bw.rt_start(cpu, now);
                    if p.rt_throttle && self.fair.queued() > 0 {
                        let left = bw.left(cpu, now).max(1);
                        pick.slice = Some(pick.slice.map_or(left, |s| s.min(left)));
                    }
                    Some((pick, Class::RealTime))
                }
                None => self.fair.pick(cpu, now).map(|pick| (pick, Class::Fair)),
            };
        }
        if let Some(pick) = self.fair.pick(cpu, now) {
            return Some((pick, Class::Fair));
        }
        let pick = self.rt.pick(cpu, now)?;
        bw.rt_start(cpu, now);
        Some((pick, Class::RealTime))
    }

    /// `update_curr()` of the class of `t`, which stops running here.
    pub fn charge(&mut self, t: TaskId, class: Class, bw: &mut RtBandwidth, now: Time) {
        match class {
            Class::Deadline => self.dl.charge(t, now),
            Class::RealTime => {
                self.rt.charge(t, now);
                bw.rt_stop(self.cpu, now);
            }
            Class::Fair => self.fair.charge(t, now),
        }
    }

    /// `wakeup_preempt()`: a higher class pre-empts at once; within a class, the class decides.
    /// A fair wakee also displaces an RT task whose CPU's RT budget is spent, and an RT wakee
    /// does not displace the fair task that runs in the time kept for fair tasks.
    pub fn preempts(
        &self,
        (woken, wc): (TaskId, Class),
        (running, rc): (TaskId, Class),
        p: &LinuxParams,
        bw: &RtBandwidth,
        now: Time,
    ) -> bool {
        let cpu = self.cpu;
        match (wc, rc) {
            (Class::Deadline, Class::Deadline) => self.dl.preempts(woken, running),
            (Class::Deadline, _) => !self.dl.is_throttled(woken),
            (Class::RealTime, Class::RealTime) => self.rt.preempts(woken, running),
            (Class::RealTime, Class::Fair) => !(p.rt_throttle && bw.throttled(cpu)),
            (Class::Fair, Class::Fair) => self.fair.preempts(woken, running, now),
            (Class::Fair, Class::RealTime) => p.rt_throttle && bw.exhausted(cpu, now),
            _ => false,
        }
    }

    /// After a timer: should the task running here give up the CPU now (a replenished deadline
    /// task, an RT task held back no longer or one that is, a task a balancer put here)?
    pub fn preempt_current(&mut self, running: (TaskId, Class), p: &LinuxParams, bw: &RtBandwidth, now: Time) -> bool {
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
            Class::RealTime => self.rt_held_back(p, bw, now) || self.rt.top().is_some_and(|top| top > self.rt.prio(t)),
            Class::Fair => self.rt.queued() > 0 && !(p.rt_throttle && bw.throttled(self.cpu)),
            Class::Deadline => false,
        }
    }

    /// Put `t` first in `cfs_tasks` (picked, or queued here).
    pub fn cfs_front(&mut self, t: TaskId) {
        if let Some(i) = self.cfs_tasks.iter().position(|&x| x == t) {
            self.cfs_tasks.remove(i);
        }
        self.cfs_tasks.insert(0, t);
    }

    /// Take `t` out of `cfs_tasks` (it left this CPU's fair queue).
    pub fn cfs_forget(&mut self, t: TaskId) {
        self.cfs_tasks.retain(|&x| x != t);
    }
}
