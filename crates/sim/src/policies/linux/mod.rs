//! `linux`: the scheduling classes of Linux 6.18 (the kernel this machine runs), walked in the
//! order `pick_next_task()` walks them (kernel/sched/core.c): stop > deadline > real-time >
//! fair > idle. A task's class is its workload `class`:
//!
//! - `"deadline"` — SCHED_DEADLINE ([`deadline`]): EDF over a constant bandwidth server per task,
//!   with `runtime`, `deadline` (relative) and `period`;
//! - `"fifo"` / `"rr"` — SCHED_FIFO / SCHED_RR ([`rt`]): `priority` is the Linux real-time
//!   priority 1–99 and **a higher number wins**; RR's time slice is `rr_quantum` (100 ms);
//! - `"stop"` — the kernel's stopper thread (`migration/N`, which a trace shows as real-time
//!   priority 99): run as a real-time task of `priority` 99, except that the task it pre-empts
//!   stays where it is. Picking a real-time task pushes the ones that wait behind it to other
//!   CPUs (`set_next_task_rt()`); picking the stopper pushes nothing (`set_next_task_stop()`),
//!   and when it is done the task it pre-empted runs again on the same CPU;
//! - anything else — the fair class ([`super::eevdf`]): `"batch"` is SCHED_BATCH, `"idle"` is
//!   SCHED_IDLE, otherwise SCHED_OTHER; `runtime` is a custom slice.
//!
//! The idle class is an idle CPU. A task of a higher class pre-empts one of a lower class at
//! once (`wakeup_preempt()`); within a class the class decides. Two mechanisms keep real-time tasks
//! from starving the rest: classic RT throttling ([`bandwidth`]: a CPU's RT tasks stop for the
//! rest of the period once they have run `rt_runtime` of it, and the CPU runs fair tasks or
//! idles) and the fair deadline server ([`fair_server`]: 50 ms of every second for fair tasks
//! that RT tasks starve, deferred until they have waited for it). Deadline replenishments, the
//! RT period and the server's timer are policy timers: the engine wakes the policy then.
//!
//! Parameters (`linux:key=value,...`): `rr_quantum` (ms, 100), `rt_runtime` (ms, 950),
//! `rt_period` (ms, 1000), `rt_throttle` (1 = on, as a kernel with `CONFIG_RT_GROUP_SCHED` such
//! as this machine's does it; 0 = off), `rt_phase` (where the RT period boundaries fall: at
//! `rt_phase + k·rt_period`, default 0), `fair_server` (1 = on, 6.12+; 0 = off),
//! `fair_server_runtime` (50 ms), `fair_server_period` (1000 ms), `ni_random`, `ni_ratio`,
//! `stale_capacity`, `softirq_lag` (ms, 0.02: how long after a tick its balancing runs), and
//! every parameter of `eevdf` for the fair class. [`deadline::admission`] is the admission test
//! `sched_setattr()` applies, for callers to run before a simulation.
//!
//! With more than one CPU there is a run queue per CPU ([`cpu`]), as in the kernel, and the
//! SMP mechanisms that move tasks between them ([`smp`]): where a waking or new task goes
//! (`select_task_rq()` of each class), load tracking (PELT, [`pelt`]), the fair class's load
//! balancing (periodic, when a CPU goes idle, and for idle CPUs from a busy CPU's tick),
//! active balancing, and the push and pull of RT and deadline tasks. A fair task's lag and
//! relative deadline go with it when it moves.
//!
//! Not modelled: the stop class's place above the deadline class and outside RT throttling (a
//! stopper runs for microseconds, and ranks here as real-time priority 99), task groups
//! (autogroup: every task is in one group here), priority inheritance (the kernel's rt_mutex
//! boosting, across classes; the engine's inheritance ranks priorities the other way, so this
//! policy ignores it: a lock is a plain futex, handed to its waiters in the kernel's priority
//! order, see `lock_rank`), SCHED_DEADLINE's
//! bandwidth reclaiming (GRUB, off by default), the fair server's place among deadline tasks
//! (see [`fair_server`]), `sched_yield()`, NUMA and SMT domains (one domain of all CPUs sharing a
//! cache), the cost of balancing.

pub mod bandwidth;
pub mod cpu;
pub mod deadline;
pub mod fair_server;
pub mod pelt;
pub mod rt;
pub mod smp;
pub mod start_layout;
pub mod start_positions;

use super::common::PerTask;
use super::eevdf::{self, Features};
use super::spec::{ms, Params, SpecError};
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};
use bandwidth::RtBandwidth;
use cpu::CpuRq;
use smp::Smp;

/// A task's scheduling class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Class {
    Deadline,
    RealTime,
    #[default]
    Fair,
}

impl Class {
    pub fn of(class: Option<&str>) -> Class {
        match class {
            Some("deadline") => Class::Deadline,
            Some("fifo") | Some("rr") | Some("stop") => Class::RealTime,
            _ => Class::Fair,
        }
    }
}

/// The tunables of the `linux` policy.
#[derive(Debug, Clone, PartialEq)]
pub struct LinuxParams {
    /// `sched_rr_timeslice_ms` (100 ms).
    pub rr_quantum: Dur,
    /// `sched_rt_runtime_us` / `sched_rt_period_us` (950 ms / 1000 ms).
    pub rt_runtime: Dur,
    pub rt_period: Dur,
    /// Classic RT throttling on (the kernel's default with RT group scheduling).
    pub rt_throttle: bool,
    /// Where the RT period boundaries fall (`phase + k·rt_period`).
    pub rt_phase: Dur,
    /// The fair deadline server, and its reservation.
    pub fair_server: bool,
    pub fair_server_runtime: Dur,
    pub fair_server_period: Dur,
    pub fair: Features,
    /// NI_RANDOM (6.18.5 on): newidle balancing runs in proportion to its recent success.
    pub ni_random: bool,
    /// Each CPU's `sd->newidle_ratio` (0–1024) when the run starts; 512 as `sd_init()` sets it.
    pub ni_ratio: u32,
    /// A CPU's capacity is what it was when that CPU last balanced (`rq->cpu_capacity`, which
    /// `update_cpu_capacity()` sets for the balancing CPU alone); off, it is taken afresh at
    /// every use.
    pub stale_capacity: bool,
    /// How long after a tick that tick's load balancing runs: the scheduler softirq runs on the
    /// return from the tick interrupt, after the pick a tick's expired slice forces on another
    /// CPU, so a balancer never finds that CPU between two tasks.
    pub softirq_lag: Dur,
}

/// [`LinuxParams::softirq_lag`]'s default: on this host the periodic balance's migrations
/// (`sched_migrate_task` in softirq context in the validate traces, 1632 of them) fall a median
/// 20 µs after the tick (10th–90th percentile 16–35 µs), and a tick's forced switch about 15 µs
/// after it.
pub const SOFTIRQ_LAG: Dur = 20_000;

impl Default for LinuxParams {
    fn default() -> Self {
        LinuxParams {
            rr_quantum: 100_000_000,
            rt_runtime: 950_000_000,
            rt_period: 1_000_000_000,
            rt_throttle: true,
            rt_phase: 0,
            fair_server: true,
            fair_server_runtime: 50_000_000,
            fair_server_period: 1_000_000_000,
            fair: Features::default(),
            ni_random: true,
            ni_ratio: NI_RATIO_AT_BOOT,
            stale_capacity: true,
            softirq_lag: SOFTIRQ_LAG,
        }
    }
}

/// `sd->newidle_ratio` as `sd_init()` sets it: a 50% success rate.
pub const NI_RATIO_AT_BOOT: u32 = 512;

impl LinuxParams {
    /// From a spec's parameters.
    pub fn parse(p: &mut Params) -> Result<LinuxParams, SpecError> {
        let rr_quantum = p.time("rr_quantum", 100.0)?;
        let rt_period = p.time("rt_period", 1000.0)?;
        let rt_runtime = p.time("rt_runtime", 950.0)?;
        if rt_runtime > rt_period {
            return Err(p.error("rt_runtime", "must not exceed rt_period"));
        }
        let rt_throttle = p.uint("rt_throttle", 1, 0, 1)? == 1;
        let rt_phase = p.time_opt("rt_phase")?.unwrap_or(0);
        if rt_phase >= rt_period {
            return Err(p.error("rt_phase", "must be less than rt_period"));
        }
        let fair_server = p.uint("fair_server", 1, 0, 1)? == 1;
        let fair_server_period = p.time("fair_server_period", 1000.0)?;
        let fair_server_runtime = p.time("fair_server_runtime", 50.0)?;
        if fair_server_runtime == 0 || fair_server_runtime > fair_server_period {
            return Err(p.error("fair_server_runtime", "must be more than 0 and at most fair_server_period"));
        }
        let fair = eevdf::features(p)?;
        let ni_random = p.uint("ni_random", 1, 0, 1)? == 1;
        let ni_ratio = p.uint("ni_ratio", NI_RATIO_AT_BOOT as u64, 0, 1024)? as u32;
        let stale_capacity = p.uint("stale_capacity", 1, 0, 1)? == 1;
        let softirq_lag = p.time_or_zero("softirq_lag", SOFTIRQ_LAG)?;
        if softirq_lag >= 1_000_000 {
            return Err(p.error("softirq_lag", "must be less than a millisecond (a tick at HZ=1000)"));
        }
        Ok(LinuxParams {
            rr_quantum,
            rt_runtime,
            rt_period,
            rt_throttle,
            rt_phase,
            fair_server,
            fair_server_runtime,
            fair_server_period,
            fair,
            ni_random,
            ni_ratio,
            stale_capacity,
            softirq_lag,
        })
    }

    /// `linux` plus every parameter that differs from the default.
    pub fn label(&self) -> String {
        let d = LinuxParams::default();
        let mut parts = vec![];
        if self.rr_quantum != d.rr_quantum {
            parts.push(format!("rr_quantum={}", ms(self.rr_quantum)));
        }
        if self.rt_runtime != d.rt_runtime {
            parts.push(format!("rt_runtime={}", ms(self.rt_runtime)));
        }
        if self.rt_period != d.rt_period {
            parts.push(format!("rt_period={}", ms(self.rt_period)));
        }
        if self.rt_throttle != d.rt_throttle {
            parts.push(format!("rt_throttle={}", u8::from(self.rt_throttle)));
        }
        if self.rt_phase != d.rt_phase {
            parts.push(format!("rt_phase={}", ms(self.rt_phase)));
        }
        if self.fair_server != d.fair_server {
            parts.push(format!("fair_server={}", u8::from(self.fair_server)));
        }
        if self.fair_server_runtime != d.fair_server_runtime {
            parts.push(format!("fair_server_runtime={}", ms(self.fair_server_runtime)));
        }
        if self.fair_server_period != d.fair_server_period {
            parts.push(format!("fair_server_period={}", ms(self.fair_server_period)));
        }
        if self.ni_random != d.ni_random {
            parts.push(format!("ni_random={}", u8::from(self.ni_random)));
        }
        if self.ni_ratio != d.ni_ratio {
            parts.push(format!("ni_ratio={}", self.ni_ratio));
        }
        if self.stale_capacity != d.stale_capacity {
            parts.push(format!("stale_capacity={}", u8::from(self.stale_capacity)));
        }
        if self.softirq_lag != d.softirq_lag {
            parts.push(format!("softirq_lag={}", ms(self.softirq_lag)));
        }
        let fair = eevdf::label(&self.fair);
        if let Some(rest) = fair.strip_prefix("eevdf:") {
            parts.push(rest.to_string());
        }
        if parts.is_empty() {
            "linux".into()
        } else {
            format!("linux:{}", parts.join(","))
        }
    }
}

/// Linux 6.18's classes, one run queue per CPU.
#[derive(Debug, Clone)]
pub struct Linux {
    params: LinuxParams,
    label: String,
    class: PerTask<Class>,
    /// A task was moved to another CPU's queue outside a wake-up (a push from a pick): the
    /// engine is to ask at once whether that CPU's running task gives way (`resched_curr()` of
    /// the CPU pushed to), through a timer due now.
    resched_pending: bool,
    /// The CPU whose queue a task is on, or was on last.
    task_cpu: PerTask<CpuId>,
    rqs: Vec<CpuRq>,
    bw: RtBandwidth,
    /// Placement, load tracking and balancing (more than one CPU).
    smp: Option<Smp>,
    /// The latest time the policy was told of.
    now: Time,
    /// Record the fair tasks' load-tracking signals ([`smp::signals`]).
    keep_signals: bool,
    /// The `util_est` of tasks that were there before the run ([`smp::util_est`]).
    util_est_at_start: std::collections::BTreeMap<TaskId, u64>,
    /// Which draw of the balancers' phases at the start ([`Linux::with_balance_draw`]).
    balance_draw: u64,
    /// The engine's tick, given to every CPU's fair queue (also to queues made later).
    tick: Option<Dur>,
    /// The kernel's places for the fair tasks at the start ([`start_positions`]).
    start: start_positions::StartPositions,
    /// The kernel's layout when the compared window opens ([`start_layout`]).
    layout: start_layout::LayoutSync,
}

impl Linux {
    pub fn new(params: LinuxParams) -> Self {
        Linux {
            label: params.label(),
            class: PerTask::default(),
            resched_pending: false,
            task_cpu: PerTask::default(),
            rqs: vec![CpuRq::new(0, &params)],
            bw: RtBandwidth::new(params.rt_runtime, params.rt_period, params.rt_phase),
            smp: None,
            now: 0,
            keep_signals: false,
            util_est_at_start: Default::default(),
            balance_draw: 0,
            tick: None,
            start: Default::default(),
            layout: Default::default(),
            params,
        }
    }

    /// CPU `cpu`'s run queue (for inspection; with one CPU every CPU id names the one queue).
    pub fn rq(&self, cpu: CpuId) -> &CpuRq {
        &self.rqs[self.rq_index(cpu)]
    }

    /// The fair class's run queue of the first CPU (for inspection).
    pub fn fair(&self) -> &super::eevdf::FairRq {
        &self.rqs[0].fair
    }

    /// The deadline class's run queue of the first CPU (for inspection).
    pub fn deadline(&self) -> &deadline::DeadlineRq {
        &self.rqs[0].dl
    }

    #[inline]
    fn rq_index(&self, cpu: CpuId) -> usize {
        if self.rqs.len() == 1 {
            0
        } else {
            cpu
        }
    }

    /// The queue `t` is on (or was on last).
    #[inline]
    fn rq_of(&self, t: TaskId) -> usize {
        if self.rqs.len() == 1 {
            0
        } else {
            self.task_cpu.get(t)
        }
    }

    #[inline(always)]
    fn enqueue_on(&mut self, i: usize, task: &TaskView, why: EnqueueReason, now: Time) {
        let rq = &mut self.rqs[i];
        match self.class.get(task.id) {
            Class::Deadline => rq.dl.enqueue(task, why, now),
            Class::RealTime => rq.rt.enqueue(task, why, now),
            Class::Fair => {
                rq.fair_arrives(&self.params, now);
                // A delayed task woken where it is queued is not enqueued anew
                // (ENQUEUE_DELAYED): it keeps its place in `cfs_tasks`.
                let requeued = rq.fair.is_delayed(task.id);
                rq.fair.enqueue(task, why, now);
                if self.smp.is_some() && why != EnqueueReason::Restored {
                    if requeued {
                        rq.cfs_keep(task.id);
                    } else {
                        rq.cfs_front(task.id);
                    }
                }
                return;
            }
        }
        if matches!(why, EnqueueReason::New | EnqueueReason::Woken) {
            rq.fair.note_foreign_wakeup();
        }
    }
}

impl Default for Linux {
    fn default() -> Self {
        Linux::new(LinuxParams::default())
    }
}

impl Policy for Linux {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn set_cpus(&mut self, cpus: usize) {
        let cpus = cpus.max(1);
        if cpus != self.rqs.len() {
            self.rqs = (0..cpus).map(|c| CpuRq::new(c, &self.params)).collect();
            self.set_tick(self.tick);
        }
        self.smp = (cpus > 1).then(|| Smp::new(cpus, self.params.fair.tick_nsec, &self.params));
        if let Some(smp) = self.smp.as_mut().filter(|_| self.keep_signals) {
            smp.log = Some(smp::signals::SignalLog::default());
        }
        self.draw_balance_phases();
    }

    #[inline]
    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, now: Time) {
        self.now = now;
        if why == EnqueueReason::New {
            self.class.set(task.id, Class::of(task.class));
        }
        if self.smp.is_none() {
            self.enqueue_on(0, task, why, now);
            return;
        }
        let (i, why) = self.place(task, why, now);
        self.enqueue_on(i, task, why, now);
        self.after_enqueue(task.id, i, why, now);
        if why == EnqueueReason::Woken && self.class.get(task.id) == Class::RealTime {
            // task_woken_rt(): one that cannot run here now goes where it can.
            self.push_rt(i, now);
        }
    }

    fn placed_on(&self, task: TaskId) -> Option<CpuId> {
        self.smp.as_ref().map(|_| self.task_cpu.get(task))
    }

    fn work_conserving(&self) -> bool {
        self.smp.is_none()
    }

    fn dequeue(&mut self, task: TaskId) {
        let i = self.rq_of(task);
        let rq = &mut self.rqs[i];
        match self.class.get(task) {
            Class::Deadline => rq.dl.dequeue(task),
            Class::RealTime => rq.rt.dequeue(task),
            Class::Fair => rq.fair.dequeue(task),
        }
    }

    #[inline]
    fn pick_next(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
        self.now = now;
        let i = self.rq_index(cpu);
        if self.smp.is_none() {
            self.rqs[0].cpu = cpu;
        } else {
            self.pull_rt(i, now);
        }
        // Pick; a CPU that finds nothing pulls work (newidle balance) and picks once more. One
        // call site, so that the pick is compiled into this function: its answer then stays in
        // registers instead of going through memory.
        let mut balanced = false;
        let picked = loop {
            let picked = self.rqs[i].pick(&self.params, &mut self.bw, now);
            if picked.is_some() || balanced || self.smp.is_none() || !self.idle_balance(i, now) {
                break picked;
            }
            balanced = true;
        };
        let rq = &mut self.rqs[i];
        rq.scheduling = false;
        rq.curr = picked.map(|(p, class)| (p.task, class));
        let (pick, _) = picked?;
        if self.smp.is_some() {
            self.task_cpu.set(pick.task, i);
            self.after_pick(i, now);
            if self.class.get(pick.task) != Class::Fair && !self.is_stopper(pick.task) {
                // set_next_task_rt/dl(): what waits behind it goes where it can run (the
                // stopper's set_next_task_stop() pushes nothing).
                self.push_rt(i, now);
            }
        }
        // With one CPU (no `smp`) nothing reads `task_cpu`: `rq_of` is queue 0 for every task.
        Some(pick)
    }

    #[inline]
    fn charge(&mut self, task: TaskId, ran: Dur, now: Time) {
        self.now = now;
        let i = self.rq_of(task);
        let class = self.class.get(task);
        let rq = &mut self.rqs[i];
        rq.charge(task, class, ran, &self.params, &mut self.bw, now);
        if rq.curr.is_some_and(|(t, _)| t == task) {
            rq.curr = None;
        }
        rq.scheduling = true;
        if self.smp.is_some() {
            self.after_charge(task, i, now);
        }
    }

    #[inline]
    fn preempts(&self, woken: TaskId, running: TaskId, now: Time) -> bool {
        let i = self.rq_of(running);
        if self.smp.is_some() && self.rq_of(woken) != i {
            return false;
        }
        let w = (woken, self.class.get(woken));
        let r = (running, self.class.get(running));
        self.rqs[i].preempts(w, r, &self.params, &self.bw, now)
    }

    fn preempted_after_wakeup(&mut self, cpu: CpuId, woken_at: Time) {
        let i = self.rq_index(cpu);
        self.rqs[i].fair.freeze_clock(cpu, woken_at);
    }

    fn task_exit(&mut self, task: TaskId) {
        let i = self.rq_of(task);
        let rq = &mut self.rqs[i];
        match self.class.get(task) {
            Class::Deadline => rq.dl.exit(task),
            Class::RealTime => rq.rt.exit(task),
            Class::Fair => {
                rq.fair.exit(task);
                rq.cfs_forget(task);
            }
        }
        if let Some(smp) = self.smp.as_mut() {
            smp.forget(task);
        }
        self.class.set(task, Class::Fair);
    }

    /// A futex wakes its waiters in the order of their kernel priority, clamped to that of a
    /// fair task (`futex_q_init()`, `plist_add()`): deadline tasks (−1), then real-time ones by
    /// `99 − sched_priority` (so 99 first), then every fair task first come first served (100).
    fn lock_rank(&self, task: &TaskView) -> i64 {
        match Class::of(task.class) {
            Class::Deadline => -1,
            Class::RealTime => 99 - i64::from(task.priority.clamp(1, 99)),
            Class::Fair => 100,
        }
    }

    fn queued(&self) -> usize {
        self.rqs.iter().map(CpuRq::waiting).sum()
    }

    /// Priority inheritance is not modelled (see the module doc): a change leaves the task.
    fn requeue(&mut self, _task: &TaskView, _now: Time) {}

    fn blocked(&mut self, task: TaskId, now: Time) {
        self.now = now;
        let i = self.rq_of(task);
        let rq = &mut self.rqs[i];
        match self.class.get(task) {
            Class::Deadline => rq.dl.blocked(task),
            Class::RealTime => {}
            Class::Fair => {
                rq.fair.blocked(task, now);
                if !rq.fair.is_delayed(task) {
                    rq.cfs_forget(task);
                }
            }
        }
        if self.smp.is_some() {
            self.after_block(task, now);
        }
    }

    fn set_tick(&mut self, tick: Option<Dur>) {
        self.tick = tick;
        for rq in &mut self.rqs {
            rq.fair.set_tick(tick);
            rq.rt.set_tick(tick);
        }
    }

    fn tick_driven(&self) -> bool {
        true
    }

    #[inline(always)]
    fn next_timer(&self) -> Option<Time> {
        // Asked after every event: plain loops and one running minimum.
        let earlier = |next: Option<Time>, t: Option<Time>| match (next, t) {
            (Some(n), Some(t)) => Some(n.min(t)),
            (n, t) => n.or(t),
        };
        if self.resched_pending {
            return Some(self.now);
        }
        let mut next = None;
        for rq in &self.rqs {
            next = earlier(next, rq.dl.next_timer());
            if self.params.fair_server {
                next = earlier(next, rq.server.next_timer());
            }
        }
        if self.params.rt_throttle {
            next = earlier(next, self.bw.next_change(self.now));
        }
        if self.smp.is_some() {
            next = earlier(next, self.balance_timer());
        }
        earlier(earlier(next, self.start.next_due()), self.layout.next_due())
    }

    fn timer(&mut self, now: Time) {
        self.now = now;
        self.set_start_positions_due(now);
        self.set_start_layout_due(now);
        for i in 0..self.rqs.len() {
            let due = self.rqs[i].dl.due(now);
            self.rqs[i].dl.timer(now);
            if self.smp.is_some() {
                for t in due {
                    self.push_dl(i, t, now);
                }
            }
        }
        if self.params.rt_throttle {
            self.bw.update(now);
        }
        if self.params.fair_server {
            for rq in &mut self.rqs {
                rq.server.timer(now);
                if rq.server.serving() && rq.fair_runnable() == 0 {
                    // Queued, it is picked at once and finds no fair task (dl_server_stop()).
                    rq.server.stop();
                }
            }
        }
        for rq in &mut self.rqs {
            rq.promised = 0;
        }
        if self.smp.is_some() {
            self.tick_balance(now);
        }
        // What this timer moved, and what a pick moved before it, is asked about next.
        self.resched_pending = false;
    }

    fn preempt_current(&mut self, running: TaskId, now: Time) -> bool {
        let i = self.rq_of(running);
        if self.smp.as_mut().is_some_and(|s| s.take_active(i, running)) {
            return true;
        }
        let class = self.class.get(running);
        let rq = &mut self.rqs[i];
        if rq.preempt_current((running, class), &self.params, &self.bw, now) {
            return true;
        }
        class == Class::Fair && self.smp.is_some() && self.fair_arrival_preempts(i, running, now)
    }

    fn throttled(&self, task: TaskId) -> bool {
        self.rqs[self.rq_of(task)].throttled(task, self.class.get(task), &self.params, &self.bw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The engine gives the tick before the CPU count; the queues made for more CPUs must
    /// still act on it (a fair task past its protection is looked at again at every tick).
    #[test]
    fn queues_made_for_more_cpus_keep_the_engines_tick() {
        let mut linux = Linux::new(LinuxParams::default());
        linux.set_tick(Some(4_000_000));
        linux.set_cpus(2);
        assert_eq!((linux.rq(0).fair.tick(), linux.rq(1).fair.tick()), (Some(4_000_000), Some(4_000_000)));
    }
}
