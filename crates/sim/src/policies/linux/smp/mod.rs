//! What the `linux` policy does with more than one CPU, after Linux 6.18 on a machine whose CPUs
//! share one last-level cache (one scheduling domain of single-CPU groups: this project's VM):
//!
//! - [`select`]: where a new or waking task goes (`select_task_rq()` of each class), and
//!   [`fork`]: where a forked one does;
//! - [`balance`]: the fair class's load balancing — periodic from a busy CPU's tick, when a CPU
//!   goes idle (newidle), for idle CPUs kicked from a busy CPU's tick (NOHZ), and active
//!   balancing of a running task;
//! - [`push`]: moving deadline and real-time tasks to CPUs that can run them sooner;
//! - here: each task's CPU, its load tracking ([`super::pelt`]) and the CPU loads built from it.
//!
//! The functions followed are named in each module; where the model is simpler than the kernel
//! it says so there.

pub mod balance;
pub mod fork;
pub mod newidle;
pub mod push;
pub mod select;
pub mod signals;
pub mod util_est;

use super::pelt::{Pelt, Presence, SCALE};
use super::{Class, Linux};
use crate::policies::common::PerTask;
use crate::policy::{CpuId, Dur, EnqueueReason, TaskId, TaskView, Time};

/// What of a task's view the policy keeps, to enqueue it again when it moves it itself.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ViewCopy {
    pub priority: i32,
    pub nice: i32,
    pub weight: u32,
    pub runtime: Option<Dur>,
    pub deadline: Option<Time>,
    pub period: Option<Dur>,
    /// The workload class, for the classes the policy tells apart.
    pub class: Option<&'static str>,
    pub affinity: Option<Vec<CpuId>>,
}

impl ViewCopy {
    fn of(t: &TaskView) -> Self {
        let class =
            t.class.and_then(|c| ["deadline", "fifo", "rr", "stop", "batch", "idle"].into_iter().find(|&k| k == c));
        ViewCopy {
            priority: t.priority,
            nice: t.nice,
            weight: t.weight,
            runtime: t.runtime,
            deadline: t.deadline,
            period: t.period,
            class,
            affinity: t.affinity.map(<[CpuId]>::to_vec),
        }
    }

    pub fn view(&self, id: TaskId) -> TaskView<'_> {
        TaskView {
            id,
            priority: self.priority,
            nice: self.nice,
            weight: self.weight,
            runtime: self.runtime,
            deadline: self.deadline,
            period: self.period,
            class: self.class,
            affinity: self.affinity.as_deref(),
            ..TaskView::default()
        }
    }

    pub fn allowed(&self, cpu: CpuId) -> bool {
        self.affinity.as_ref().is_none_or(|a| a.contains(&cpu))
    }
}

/// One task's SMP state.
#[derive(Debug, Clone, Default)]
pub struct TaskSmp {
    pub view: ViewCopy,
    /// Fair tasks: load tracking, its weight, and the CPU whose load it counts in.
    pub pelt: Pelt,
    pub weight: u64,
    pub attached: Option<CpuId>,
    /// Running, waiting, delayed (blocked but on its queue: it adds load) or off its queue.
    pub presence: Presence,
    /// `p->recent_used_cpu`.
    pub recent_used_cpu: Option<CpuId>,
    /// When it last stopped running here (`se.exec_start`; 0 after a migration: never cache-hot).
    pub last_ran: Time,
    /// An active balance moves it to this CPU once it is pre-empted.
    pub move_to: Option<CpuId>,
    /// It existed before the run (the workload starts it on a given CPU: a replayed trace's
    /// task that was already there), so it has no new task's load.
    pub existed: bool,
    /// `util_est`, and its averages as stored when it last stopped running (what a sleep right
    /// after samples).
    pub util_est: util_est::UtilEst,
    pub stopped: Option<util_est::AtStop>,
}

/// One CPU's SMP state.
#[derive(Debug, Clone, Default)]
pub struct CpuSmp {
    /// Fair tasks whose load counts here.
    pub attached: Vec<TaskId>,
    /// Time spent running RT and deadline tasks (`rq->avg_rt` + `avg_dl`): what
    /// `scale_rt_capacity()` takes off the CPU's capacity for fair tasks.
    pub rt_pelt: Pelt,
    pub rt_running: bool,
    /// `rq->next_balance`, `sd->last_balance`, `sd->balance_interval`, `sd->nr_balance_failed`.
    pub next_balance: Time,
    pub last_balance: Time,
    /// How long before the run its balancer last ran (until it first balances in the run):
    /// its first balance is due that much before one busy interval from the start.
    pub balance_head_start: Dur,
    pub balance_interval: Dur,
    pub nr_balance_failed: u32,
    /// An active balance asked for: this running task to that CPU.
    pub active: Option<(TaskId, CpuId)>,
    /// Fair tasks a balancer put here since the last timer (they may pre-empt its task).
    pub arrived: Vec<TaskId>,
    /// How often its newidle balances have been pulling a task (NI_RANDOM).
    pub newidle: newidle::NewidleStats,
    /// `rq->cpu_capacity` as this CPU last set it when it balanced (None: never, the full
    /// capacity), and when a newidle balance may set it again (`sgc->next_update`).
    pub capacity: Option<u64>,
    pub capacity_next_update: Time,
}

/// The SMP state of the policy.
#[derive(Debug, Clone)]
pub struct Smp {
    /// `TICK_NSEC`: balancing runs from the tick.
    pub tick: Dur,
    pub tasks: PerTask<TaskSmp>,
    pub cpus: Vec<CpuSmp>,
    /// `nohz.next_balance`.
    pub nohz_next_balance: Time,
    /// The last tick whose balancing ran (a tick is due at its instant until it has).
    pub last_tick: Option<Time>,
    /// `sd_llc_shared->nr_idle_scan` (SIS_UTIL): how many CPUs a wake-up may scan for an idle
    /// one. At the start, what the balancing of an idle domain leaves there (every CPU): the
    /// kernel's zero from building the domains is long overwritten when a workload starts, and
    /// a replayed run starts on CPUs that had been near idle.
    pub nr_idle_scan: usize,
    /// Every update of the fair tasks' signals, when asked for ([`Linux::keep_signals`]).
    pub log: Option<signals::SignalLog>,
    /// Forks the workload started on a given CPU, with the CPU the fork rule
    /// ([`Linux::select_fork`]) chose for them: (task, the rule's CPU, the CPU given).
    pub forks_checked: Vec<(TaskId, CpuId, CpuId)>,
    /// The die of NI_RANDOM.
    pub die: newidle::Die,
    /// Capacities are the CPUs' own last settings ([`Smp::capacity`]), not taken afresh.
    pub stale_capacity: bool,
    /// How long after each tick its balancing runs ([`super::LinuxParams::softirq_lag`]), less
    /// than a tick.
    pub softirq_lag: Dur,
}

/// The RT/DL signal of a CPU counts only whether such a task runs (`update_rt_rq_load_avg()`).
fn rt_presence(running: bool) -> Presence {
    if running {
        Presence::Running
    } else {
        Presence::Off
    }
}

/// `sd->min_interval` / `max_interval` of a domain of this size (its weight in ms).
pub fn min_interval(cpus: usize) -> Dur {
    cpus as Dur * 1_000_000
}

impl Smp {
    /// From the policy's `ni_ratio` (each CPU's newidle success ratio at the start,
    /// [`newidle::NewidleStats`]), `stale_capacity` ([`Smp::capacity`]) and `softirq_lag`.
    pub fn new(cpus: usize, tick: Dur, params: &super::LinuxParams) -> Self {
        let tick = tick.max(1);
        let cpu = CpuSmp {
            balance_interval: min_interval(cpus),
            newidle: newidle::NewidleStats::new(params.ni_ratio),
            ..CpuSmp::default()
        };
        Smp {
            tick,
            tasks: PerTask::default(),
            cpus: vec![cpu; cpus],
            nohz_next_balance: 0,
            last_tick: None,
            nr_idle_scan: cpus,
            log: None,
            forks_checked: Vec::new(),
            die: newidle::Die::default(),
            stale_capacity: params.stale_capacity,
            softirq_lag: params.softirq_lag.min(tick - 1),
        }
    }

    /// The first tick softirq (`softirq_lag` after a tick) at or after `t`.
    pub fn softirq_at_or_after(&self, t: Time) -> Time {
        t.saturating_sub(self.softirq_lag).div_ceil(self.tick) * self.tick + self.softirq_lag
    }

    /// Is `t` a tick's softirq?
    pub fn is_softirq(&self, t: Time) -> bool {
        t >= self.softirq_lag && (t - self.softirq_lag).is_multiple_of(self.tick)
    }

    pub fn forget(&mut self, t: TaskId) {
        if let Some(c) = self.tasks.get_ref(t).and_then(|s| s.attached) {
            self.cpus[c].attached.retain(|&x| x != t);
        }
        *self.tasks.get_mut(t) = TaskSmp::default();
    }

    /// The running task of CPU `i` is the one an active balance moves: it is to stop now.
    pub fn take_active(&mut self, i: usize, running: TaskId) -> bool {
        match self.cpus[i].active {
            Some((t, to)) if t == running => {
                self.cpus[i].active = None;
                self.tasks.get_mut(t).move_to = Some(to);
                true
            }
            _ => false,
        }
    }

    /// Bring `t`'s load tracking to `now` in the state it had, then give it the new state.
    pub fn pelt_set(&mut self, t: TaskId, now: Time, presence: Presence) {
        let s = self.tasks.get_mut(t);
        if s.pelt.update(now, s.presence, s.weight) {
            // `cfs_se_util_change()`: the averages moved, so the next sleep takes a sample.
            s.util_est.unchanged = false;
        }
        s.presence = presence;
        if let Some(log) = &mut self.log {
            log.push(t, now, &s.pelt);
        }
    }

    /// Age `t`'s averages to `now` in the state it had, leaving UTIL_AVG_UNCHANGED as it is: what
    /// `migrate_task_rq_fair()` does to a task woken onto another CPU (no `cfs_se_util_change()`).
    pub fn age(&mut self, t: TaskId, now: Time) {
        let s = self.tasks.get_mut(t);
        s.pelt.update(now, s.presence, s.weight);
    }

    /// Count `t`'s load on CPU `c` from now on (`attach_entity_load_avg()`), taking it off the
    /// CPU it counted on (`remove_entity_load_avg()`).
    pub fn attach(&mut self, t: TaskId, c: CpuId) {
        let old = self.tasks.get(t).attached;
        if old == Some(c) {
            return;
        }
        if let Some(o) = old {
            self.cpus[o].attached.retain(|&x| x != t);
        }
        self.cpus[c].attached.push(t);
        self.tasks.get_mut(t).attached = Some(c);
    }

    /// `t`'s signals as of `now`.
    pub fn pelt_of(&self, t: TaskId, now: Time) -> Pelt {
        let s = self.tasks.get_ref(t).cloned().unwrap_or_default();
        s.pelt.at(now, s.presence, s.weight)
    }

    /// Σ of the signals of the fair tasks counted on `c` (the root `cfs_rq`'s averages):
    /// (`cpu_load()`, `cpu_util_cfs()` — the larger of `util_avg` and the runnable tasks'
    /// [`util_est`] — and `cpu_runnable()`).
    pub fn cpu_signals(&self, c: CpuId, now: Time) -> (u64, u64, u64) {
        let (mut load, mut util, mut runnable) = (0, 0, 0);
        for &t in &self.cpus[c].attached {
            let p = self.pelt_of(t, now);
            load += p.load_avg;
            util += p.util_avg;
            runnable += p.runnable_avg;
        }
        (load, util.max(self.cpu_util_est(c)).min(SCALE), runnable)
    }

    /// `cfs_rq->avg.util_avg` of CPU `c`, without the estimates.
    pub fn cpu_util_avg(&self, c: CpuId, now: Time) -> u64 {
        self.cpus[c].attached.iter().map(|&t| self.pelt_of(t, now).util_avg).sum()
    }

    /// `capacity_of()`: what RT and deadline tasks left of CPU `c` when it last balanced, for
    /// the kernel updates a CPU's capacity only while that CPU balances (the local group of
    /// `update_sd_lb_stats()`); every other reader, another CPU's balancer and wake-up placement
    /// among them, sees that value. Taken afresh when `stale_capacity` is off.
    pub fn capacity(&self, c: CpuId, now: Time) -> u64 {
        if self.stale_capacity {
            self.cpus[c].capacity.unwrap_or(SCALE)
        } else {
            self.fresh_capacity(c, now)
        }
    }

    /// `scale_rt_capacity()` now: what RT and deadline tasks leave of the CPU.
    fn fresh_capacity(&self, c: CpuId, now: Time) -> u64 {
        let cpu = &self.cpus[c];
        let rt = cpu.rt_pelt.at(now, rt_presence(cpu.rt_running), SCALE).util_avg;
        SCALE.saturating_sub(rt).max(1)
    }

    /// `update_group_capacity()` of CPU `c`'s own group as it balances: a newidle balance only
    /// once the last update is `interval` old (`sgc->next_update`: its `balance_interval` in
    /// jiffies), others always.
    pub fn update_capacity(&mut self, c: CpuId, newidle: bool, now: Time, interval: Dur) {
        if newidle && now < self.cpus[c].capacity_next_update {
            return;
        }
        let fresh = self.fresh_capacity(c, now);
        let cpu = &mut self.cpus[c];
        cpu.capacity = Some(fresh);
        cpu.capacity_next_update = now + interval;
    }
}

impl Linux {
    /// Where a task enqueued now goes, moving its class state there if that is another CPU;
    /// the reason to enqueue it with there.
    pub(crate) fn place(&mut self, task: &TaskView, why: EnqueueReason, now: Time) -> (usize, EnqueueReason) {
        let t = task.id;
        let smp = self.smp.as_mut().expect("smp");
        if why == EnqueueReason::New {
            let s = smp.tasks.get_mut(t);
            *s = TaskSmp { view: ViewCopy::of(task), existed: task.existed_before(), ..TaskSmp::default() };
        } else {
            smp.tasks.get_mut(t).view = ViewCopy::of(task);
        }
        let prev = self.task_cpu.get(t);
        if why != EnqueueReason::New && task.affinity.is_some_and(|a| !a.contains(&prev)) {
            // Its allowed CPUs no longer include its run queue's (a replay holds each burst of a
            // host task on the CPU it began on): it leaves that queue and is placed among them,
            // as a woken task if it was woken, else as a migrated one.
            self.smp.as_mut().expect("smp").tasks.get_mut(t).move_to = None;
            if self.class.get(t) == Class::Fair {
                self.rqs[prev].fair.leave(t, now);
            }
            let to = self.select_woken(t, prev, task.waker_cpu, now);
            if to != prev {
                self.move_placed(t, prev, to, why == EnqueueReason::Woken, now);
                return (to, if why == EnqueueReason::Woken { why } else { EnqueueReason::Migrated });
            }
        }
        match why {
            EnqueueReason::New => match (
                task.start_cpu.filter(|&c| c < self.rqs.len() && task.affinity.is_none_or(|a| a.contains(&c))),
                task.waker_cpu,
            ) {
                (Some(c), Some(parent)) if parent < self.rqs.len() && self.class.get(t) == Class::Fair => {
                    // A fork given its CPU (a replay starts it where the kernel did): the rule's
                    // choice is still asked, and counted against the kernel's.
                    let rule = self.select_fork(t, parent, now);
                    let smp = self.smp.as_mut().expect("smp");
                    smp.forks_checked.push((t, rule, c));
                    (c, why)
                }
                (Some(c), _) => (c, why),
                (None, Some(parent)) if parent < self.rqs.len() => match self.class.get(t) {
                    Class::Fair => (self.select_fork(t, parent, now), why),
                    // `select_task_rq_rt()` takes WF_FORK as it takes a wake-up, from the
                    // child's `task_cpu()`: its parent's CPU.
                    Class::RealTime => (self.select_woken(t, parent, Some(parent), now), why),
                    // `sched_fork()` refuses to fork a deadline task (-EAGAIN): one that
                    // arrives forked became one later, and is placed as a new task.
                    Class::Deadline => (self.select_new(t, now), why),
                },
                (None, _) => (self.select_new(t, now), why),
            },
            EnqueueReason::Woken => {
                let prev = self.layout_move_at_wake(t, prev);
                let to = self.select_woken(t, prev, task.waker_cpu, now);
                if to != prev {
                    self.move_placed(t, prev, to, true, now);
                }
                (to, why)
            }
            EnqueueReason::Preempted => match self.smp.as_mut().expect("smp").tasks.get_mut(t).move_to.take() {
                Some(to) if to != prev => {
                    // Active balance: the stopper took it off its CPU; it goes to `to`.
                    self.rqs[prev].fair.enqueue(task, why, now);
                    self.rqs[prev].fair.dequeue(t);
                    self.move_off(t, prev, to);
                    (to, EnqueueReason::Migrated)
                }
                _ => (prev, why),
            },
            _ => (prev, why),
        }
    }

    /// Is `t` the stopper thread (class `stop`, as it was placed)?
    pub(crate) fn is_stopper(&self, t: TaskId) -> bool {
        self.smp.as_ref().and_then(|s| s.tasks.get_ref(t)).is_some_and(|s| s.view.class == Some("stop"))
    }

    /// Move `t`, placed on another CPU than its last, there; a woken fair task is aged first, as
    /// `migrate_task_rq_fair()` does ([`Smp::age`]).
    fn move_placed(&mut self, t: TaskId, from: usize, to: usize, woken: bool, now: Time) {
        if woken && self.class.get(t) == Class::Fair {
            self.smp.as_mut().expect("smp").age(t, now);
        }
        self.move_off(t, from, to);
    }

    /// Hand `t`'s class state (off the queue of `from`) to the queue of `to`, and its load.
    pub(crate) fn move_off(&mut self, t: TaskId, from: usize, to: usize) {
        match self.class.get(t) {
            Class::Fair => {
                let e = self.rqs[from].fair.take(t);
                self.rqs[from].cfs_forget(t);
                self.rqs[to].fair.adopt(t, e);
                let smp = self.smp.as_mut().expect("smp");
                smp.attach(t, to);
                smp.tasks.get_mut(t).last_ran = 0;
            }
            Class::RealTime => {
                let e = self.rqs[from].rt.take(t);
                self.rqs[to].rt.adopt(t, e);
            }
            Class::Deadline => {
                let e = self.rqs[from].dl.take(t);
                self.rqs[to].dl.adopt(t, e);
            }
        }
        self.task_cpu.set(t, to);
    }

    /// After `t` was enqueued on CPU `i`.
    pub(crate) fn after_enqueue(&mut self, t: TaskId, i: usize, why: EnqueueReason, now: Time) {
        self.task_cpu.set(t, i);
        if self.class.get(t) != Class::Fair {
            return;
        }
        let weight = self.rqs[i].fair.e(t).load.weight as u64;
        let util = self.smp.as_ref().expect("smp").cpu_util_avg(i, now);
        let smp = self.smp.as_mut().expect("smp");
        if why == EnqueueReason::New {
            let s = smp.tasks.get_mut(t);
            s.weight = weight;
            if s.existed {
                let ewma = self.util_est_at_start.get(&t).copied().unwrap_or(0);
                s.util_est = util_est::UtilEst { ewma, unchanged: false };
            }
            s.pelt = if s.existed {
                // A task that was there before the run (a replayed trace's host daemon, or a case
                // task held stopped until its release): asleep or stopped long enough that its
                // averages had decayed; it is not charged a new task's full weight.
                Pelt { last_update: now, ..Pelt::default() }
            } else {
                // post_init_entity_util_avg(): half of the CPU's spare capacity, at most.
                Pelt::new_task(weight, SCALE.saturating_sub(util) / 2, now)
            };
        }
        smp.tasks.get_mut(t).weight = weight;
        smp.attach(t, i);
        smp.pelt_set(t, now, Presence::Waiting);
    }

    /// After CPU `i` picked.
    pub(crate) fn after_pick(&mut self, i: usize, now: Time) {
        let curr = self.rqs[i].curr;
        let smp = self.smp.as_mut().expect("smp");
        let rt = matches!(curr, Some((_, Class::RealTime | Class::Deadline)));
        let cpu = &mut smp.cpus[i];
        cpu.rt_pelt.update(now, rt_presence(cpu.rt_running), SCALE);
        cpu.rt_running = rt;
        // Delayed entities the fair queue dequeued for good no longer add load.
        let attached = smp.cpus[i].attached.clone();
        for t in attached {
            let s = smp.tasks.get(t);
            if matches!(s.presence, Presence::Waiting | Presence::Delayed)
                && !self.rqs[i].fair.has(t)
                && !self.rqs[i].fair.is_delayed(t)
            {
                smp.pelt_set(t, now, Presence::Off);
            }
        }
        if let Some((t, Class::Fair)) = curr {
            smp.pelt_set(t, now, Presence::Running);
            self.rqs[i].cfs_front(t);
        }
    }

    /// After `t` stopped running on CPU `i`.
    pub(crate) fn after_charge(&mut self, t: TaskId, i: usize, now: Time) {
        let smp = self.smp.as_mut().expect("smp");
        let cpu = &mut smp.cpus[i];
        cpu.rt_pelt.update(now, rt_presence(cpu.rt_running), SCALE);
        cpu.rt_running = false;
        if self.class.get(t) == Class::Fair {
            let at_stop = util_est::AtStop::of(smp.tasks.get_mut(t));
            smp.pelt_set(t, now, Presence::Waiting);
            let s = smp.tasks.get_mut(t);
            s.last_ran = now;
            s.stopped = Some(at_stop);
        }
    }

    /// After `t` blocked.
    pub(crate) fn after_block(&mut self, t: TaskId, now: Time) {
        if self.class.get(t) != Class::Fair {
            return;
        }
        let i = self.task_cpu.get(t);
        let presence = if self.rqs[i].fair.is_delayed(t) { Presence::Delayed } else { Presence::Off };
        self.smp.as_mut().expect("smp").pelt_set(t, now, presence);
        self.util_est_at_sleep(t, now);
    }
}

#[cfg(test)]
mod tests {
    use super::super::LinuxParams;
    use super::*;

    const MS: Time = 1_000_000;

    /// CPU 1 runs an RT task from 0 to `until`: its RT signal as `scale_rt_capacity()` reads it.
    fn rt_busy_until(smp: &mut Smp, until: Time) {
        let cpu = &mut smp.cpus[1];
        cpu.rt_pelt.update(0, Presence::Off, SCALE);
        cpu.rt_running = true;
        cpu.rt_pelt.update(until, Presence::Running, SCALE);
    }

    #[test]
    fn a_cpu_capacity_is_what_it_was_when_that_cpu_last_balanced() {
        // 2 CPUs, HZ=250, balance_interval 2 ms: a newidle update may come again after
        // ceil(2 / 4) = 1 jiffy = 4 ms.
        const NEXT: Time = 4 * MS;
        let mut smp = Smp::new(2, 4 * MS, &LinuxParams::default());
        rt_busy_until(&mut smp, 20 * MS);
        let fresh_20 = smp.fresh_capacity(1, 20 * MS);
        assert!(fresh_20 < 700, "20 ms of RT take a third of the CPU: {fresh_20}");
        // Never balanced: the full capacity, whatever RT ran.
        assert_eq!(smp.capacity(1, 20 * MS), SCALE);
        // CPU 1 balances at 20 ms: its capacity is set then, and read as such later on.
        smp.update_capacity(1, false, 20 * MS, NEXT);
        assert_eq!(smp.capacity(1, 20 * MS), fresh_20);
        let fresh_40 = smp.fresh_capacity(1, 40 * MS);
        assert!(fresh_40 < fresh_20, "RT still runs: {fresh_40} < {fresh_20}");
        assert_eq!(smp.capacity(1, 40 * MS), fresh_20);
        // A newidle balance before sgc->next_update (24 ms) leaves it; one after sets it.
        smp.update_capacity(1, true, 23 * MS, NEXT);
        assert_eq!(smp.capacity(1, 40 * MS), fresh_20);
        smp.update_capacity(1, true, 40 * MS, NEXT);
        assert_eq!(smp.capacity(1, 40 * MS), fresh_40);
        // CPU 0's balancing does not touch CPU 1's capacity.
        smp.update_capacity(0, false, 60 * MS, NEXT);
        assert_eq!(smp.capacity(1, 60 * MS), fresh_40);
        assert_eq!(smp.capacity(0, 60 * MS), SCALE);
        // With stale_capacity off, every read is taken afresh.
        let mut fresh = Smp::new(2, 4 * MS, &LinuxParams { stale_capacity: false, ..Default::default() });
        rt_busy_until(&mut fresh, 20 * MS);
        assert_eq!(fresh.capacity(1, 40 * MS), fresh_40);
    }
}
