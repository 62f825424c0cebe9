//! `linux`: the scheduling classes of Linux 6.18 (the kernel this machine runs), walked in the
//! order `pick_next_task()` walks them (kernel/sched/core.c): stop > deadline > real-time >
//! fair > idle. A task's class is its workload `class`:
//!
//! - `"deadline"` — SCHED_DEADLINE ([`deadline`]): EDF over a constant bandwidth server per task,
//!   with `runtime`, `deadline` (relative) and `period`;
//! - `"fifo"` / `"rr"` — SCHED_FIFO / SCHED_RR ([`rt`]): `priority` is the Linux real-time
//!   priority 1–99 and **a higher number wins**; RR's time slice is `rr_quantum` (100 ms);
//! - anything else — the fair class ([`super::eevdf`]): `"batch"` is SCHED_BATCH, `"idle"` is
//!   SCHED_IDLE, otherwise SCHED_OTHER; `runtime` is a custom slice.
//!
//! The stop class has no tasks here (it runs the kernel's stopper threads) and the idle class
//! is an idle CPU. A task of a higher class pre-empts one of a lower class at once
//! (`wakeup_preempt()`); within a class the class decides. RT throttling ([`bandwidth`]) keeps
//! `rt_period − rt_runtime` of every `rt_period` for fair tasks when they want it. Deadline
//! replenishments and the RT windows are policy timers: the engine wakes the policy then.
//!
//! Parameters (`linux:key=value,...`): `rr_quantum` (ms, 100), `rt_runtime` (ms, 950),
//! `rt_period` (ms, 1000), `rt_throttle` (1 = on, the kernel's default; 0 = off), and every
//! parameter of `eevdf` for the fair class. [`deadline::admission`] is the admission test
//! `sched_setattr()` applies, for callers to run before a simulation.
//!
//! Not modelled: the stop class, load balancing and push/pull between per-CPU queues (the
//! engine's global queue stands in; with per-CPU queues each CPU's instance has its own
//! classes), priority inheritance (the kernel's rt_mutex boosting, across classes; the engine's
//! inheritance ranks priorities the other way, so this policy ignores it), SCHED_DEADLINE's
//! bandwidth reclaiming (GRUB, off by default), the fair server's exact timing (see
//! [`bandwidth`]), `sched_yield()`.

pub mod bandwidth;
pub mod deadline;
pub mod rt;

use super::common::PerTask;
use super::eevdf::{self, FairRq, Features};
use super::spec::{ms, Params, SpecError};
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};
use bandwidth::RtBandwidth;
use deadline::DeadlineRq;
use rt::RtRq;

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
            Some("fifo") | Some("rr") => Class::RealTime,
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
    /// RT throttling on (the kernel's default).
    pub rt_throttle: bool,
    pub fair: Features,
}

impl Default for LinuxParams {
    fn default() -> Self {
        LinuxParams {
            rr_quantum: 100_000_000,
            rt_runtime: 950_000_000,
            rt_period: 1_000_000_000,
            rt_throttle: true,
            fair: Features::default(),
        }
    }
}

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
        let fair = eevdf::features(p)?;
        Ok(LinuxParams { rr_quantum, rt_runtime, rt_period, rt_throttle, fair })
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

/// Linux 6.18's classes over one run queue per instance.
#[derive(Debug, Clone)]
pub struct Linux {
    params: LinuxParams,
    label: String,
    class: PerTask<Class>,
    /// The CPU a task was last picked on.
    cpu_of: PerTask<CpuId>,
    dl: DeadlineRq,
    rt: RtRq,
    fair: FairRq,
    bw: RtBandwidth,
    /// Ready deadline tasks already promised a CPU by `preempt_current` since the last timer.
    promised: usize,
}

impl Linux {
    pub fn new(params: LinuxParams) -> Self {
        Linux {
            label: params.label(),
            class: PerTask::default(),
            cpu_of: PerTask::default(),
            dl: DeadlineRq::default(),
            rt: RtRq::new(params.rr_quantum),
            fair: FairRq::new(params.fair.clone()),
            bw: RtBandwidth::new(params.rt_runtime, params.rt_period),
            promised: 0,
            params,
        }
    }

    /// The fair class's run queue (for inspection).
    pub fn fair(&self) -> &FairRq {
        &self.fair
    }

    /// The deadline class's run queue (for inspection).
    pub fn deadline(&self) -> &DeadlineRq {
        &self.dl
    }

    /// Fair tasks go before RT ones on `cpu`: its RT budget is spent and a fair task waits.
    fn rt_held_back(&self, cpu: CpuId, now: Time) -> bool {
        self.params.rt_throttle && self.fair.queued() > 0 && (self.bw.throttled(cpu) || self.bw.exhausted(cpu, now))
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

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, now: Time) {
        if why == EnqueueReason::New {
            self.class.set(task.id, Class::of(task.class));
        }
        match self.class.get(task.id) {
            Class::Deadline => self.dl.enqueue(task, why, now),
            Class::RealTime => self.rt.enqueue(task, why, now),
            Class::Fair => return self.fair.enqueue(task, why, now),
        }
        if matches!(why, EnqueueReason::New | EnqueueReason::Woken) {
            self.fair.note_foreign_wakeup();
        }
    }

    fn dequeue(&mut self, task: TaskId) {
        match self.class.get(task) {
            Class::Deadline => self.dl.dequeue(task),
            Class::RealTime => self.rt.dequeue(task),
            Class::Fair => self.fair.dequeue(task),
        }
    }

    /// `pick_next_task()`: the first class with a task, highest first; a CPU whose RT budget is
    /// spent serves waiting fair tasks before RT ones.
    fn pick_next(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
        if self.params.rt_throttle {
            self.bw.update(cpu, now);
        }
        let picked = if let Some(p) = self.dl.pick(cpu, now) {
            self.fair.put_prev(cpu);
            Some(p)
        } else if !self.rt_held_back(cpu, now) {
            match self.rt.pick(cpu, now) {
                Some(mut p) => {
                    self.fair.put_prev(cpu);
                    self.bw.rt_start(cpu, now);
                    if self.params.rt_throttle && self.fair.queued() > 0 {
                        let left = self.bw.left(cpu, now).max(1);
                        p.slice = Some(p.slice.map_or(left, |s| s.min(left)));
                    }
                    Some(p)
                }
                None => self.fair.pick(cpu, now),
            }
        } else {
            match self.fair.pick(cpu, now) {
                Some(p) => Some(p),
                None => {
                    let p = self.rt.pick(cpu, now);
                    if p.is_some() {
                        self.bw.rt_start(cpu, now);
                    }
                    p
                }
            }
        };
        if let Some(p) = picked {
            self.cpu_of.set(p.task, cpu);
        }
        picked
    }

    fn charge(&mut self, task: TaskId, _ran: Dur, now: Time) {
        match self.class.get(task) {
            Class::Deadline => self.dl.charge(task, now),
            Class::RealTime => {
                self.rt.charge(task, now);
                self.bw.rt_stop(self.cpu_of.get(task), now);
            }
            Class::Fair => self.fair.charge(task, now),
        }
    }

    /// `wakeup_preempt()`: a higher class pre-empts at once; within a class, the class decides.
    /// A fair wakee also displaces an RT task whose CPU's RT budget is spent, and an RT wakee
    /// does not displace the fair task that runs in the time kept for fair tasks.
    fn preempts(&self, woken: TaskId, running: TaskId, now: Time) -> bool {
        let cpu = self.cpu_of.get(running);
        match (self.class.get(woken), self.class.get(running)) {
            (Class::Deadline, Class::Deadline) => self.dl.preempts(woken, running),
            (Class::Deadline, _) => !self.dl.is_throttled(woken),
            (Class::RealTime, Class::RealTime) => self.rt.preempts(woken, running),
            (Class::RealTime, Class::Fair) => !(self.params.rt_throttle && self.bw.throttled(cpu)),
            (Class::Fair, Class::Fair) => self.fair.preempts(woken, running, now),
            (Class::Fair, Class::RealTime) => self.params.rt_throttle && self.bw.exhausted(cpu, now),
            _ => false,
        }
    }

    fn task_exit(&mut self, task: TaskId) {
        match self.class.get(task) {
            Class::Deadline => self.dl.exit(task),
            Class::RealTime => self.rt.exit(task),
            Class::Fair => self.fair.exit(task),
        }
        self.class.set(task, Class::Fair);
    }

    fn queued(&self) -> usize {
        self.dl.queued() + self.rt.queued() + self.fair.queued()
    }

    /// Priority inheritance is not modelled (see the module doc): a change leaves the task.
    fn requeue(&mut self, _task: &TaskView, _now: Time) {}

    fn blocked(&mut self, task: TaskId, now: Time) {
        match self.class.get(task) {
            Class::Deadline => self.dl.blocked(task),
            Class::RealTime => {}
            Class::Fair => self.fair.blocked(task, now),
        }
    }

    fn set_tick(&mut self, tick: Option<Dur>) {
        self.fair.set_tick(tick);
    }

    fn tick_driven(&self) -> bool {
        true
    }

    fn next_timer(&self) -> Option<Time> {
        let mut next = self.dl.next_timer();
        if self.params.rt_throttle {
            let fair_waits = self.fair.queued() > 0;
            for c in 0..self.bw.cpus() {
                if let Some(t) = self.bw.next_change(c, fair_waits) {
                    next = Some(next.map_or(t, |n| n.min(t)));
                }
            }
        }
        next
    }

    fn timer(&mut self, now: Time) {
        self.dl.timer(now);
        if self.params.rt_throttle {
            for c in 0..self.bw.cpus() {
                self.bw.update(c, now);
            }
        }
        self.promised = 0;
    }

    fn preempt_current(&mut self, running: TaskId, now: Time) -> bool {
        let cpu = self.cpu_of.get(running);
        let class = self.class.get(running);
        let dl_waiting = self.dl.ready() > self.promised;
        let dl_wins = dl_waiting
            && match class {
                Class::Deadline => self.dl.earliest().is_some_and(|d| d < self.dl.deadline_of(running)),
                _ => true,
            };
        if dl_wins {
            self.promised += 1;
            return true;
        }
        match class {
            Class::RealTime => self.rt_held_back(cpu, now),
            Class::Fair => self.rt.queued() > 0 && !(self.params.rt_throttle && self.bw.throttled(cpu)),
            Class::Deadline => false,
        }
    }

    fn throttled(&self, task: TaskId) -> bool {
        self.dl.is_throttled(task)
    }
}
