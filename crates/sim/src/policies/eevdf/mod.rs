//! `eevdf`: Linux's fair class (SCHED_OTHER / SCHED_BATCH / SCHED_IDLE) since 6.6, Earliest
//! Eligible Virtual Deadline First, as in **Linux 6.18** — the kernel this machine runs (6.18.44,
//! HZ=250, 2 CPUs) — from kernel/sched/fair.c and features.h.
//!
//! Each task has a weight from its nice value (SCHED_IDLE: 3), a virtual runtime advancing by
//! `Δ·1024/w`, and a virtual deadline one slice (0.70 ms × (1 + ilog2(min(CPUs, 8))) = 1.4 ms)
//! ahead. The queue's virtual time `V` is the weighted average of the vruntimes; a task is
//! eligible when `v ≤ V` (its lag `V − v` is not negative). The pick is the eligible task with the
//! earliest deadline. A task that blocks keeps its lag (clamped) and is placed with it when it
//! wakes; one that blocks while ineligible stays queued until picked (DELAY_DEQUEUE).
//!
//! - [`arith`]: weights, `calc_delta_fair()` in the kernel's fixed point, `avg_vruntime()`,
//!   `vruntime_eligible()`;
//! - [`tree`]: the deadline-ordered timeline with least vruntime per subtree (`pick_eevdf()`'s
//!   search);
//! - [`rq`]: the run queue — every kernel function this model follows is listed there.
//!
//! **Which source, which version.** The stored `torvalds/linux` `kernel/sched/fair.c` is a
//! pre-EEVDF copy (4.x/5.x) and could not be used. The functions were read from an annotated
//! copy of mainline fair.c of early 2026 (later than 6.18: it has PARANOID_AVG, the 2026 rework of
//! `check_preempt_wakeup_fair()`, a plain division in `__calc_delta()`), checked against what
//! is known of 6.18: the 6.18-stable backport of "sched/fair: Revert 6d71a9c61604" (sent
//! 2026-04-15, whose context is 6.18-stable's `update_entity_lag()`, `place_entity()` and
//! `reweight_entity()`), a listing of v6.18.38's `update_curr()` and `update_entity_lag()`, the
//! tip commit db4551e2ba34 "Use full weight to __calc_delta()" (2026-02, after 6.18), and the
//! stable queue of 2026-03 that brought "Fix zero_vruntime tracking", "Only set slice protection
//! at pick time", "Update se->vprot in reweight_entity()" and "Fix lag clamp" to 6.18. What this
//! model takes as 6.18 where the source read differs:
//! - `__calc_delta()` multiplies by `sched_prio_to_wmult[]` and shifts (6.18), and the average
//!   uses `scale_load_down()` weights; later kernels divide and use full weights.
//! - `check_preempt_wakeup_fair()` is 6.18's: a SCHED_IDLE current task yields to any other
//!   wakee; BATCH and IDLE wakees do not pre-empt; `do_preempt_short` (PREEMPT_SHORT) lifts the
//!   current task's protection for a wakee with a shorter slice; the wakee pre-empts if
//!   `__pick_eevdf(cfs_rq, !do_preempt_short)` picks it. Forked tasks may pre-empt (later
//!   kernels skip WF_FORK).
//! - The lag clamp is 6.18.y's `± calc_delta_fair(max_slice + TICK_NSEC)` (6.18.0:
//!   `max(2·slice, TICK_NSEC)`); delaying a dequeue does not touch the lag (later kernels also
//!   keep a delayed task's negative lag from growing).
//! - `V` is kept exactly in i128, which gives the same value as 6.18.0's `min_vruntime`-based
//!   and 6.18.y's `zero_vruntime`-based s64 sums (see [`arith::Sums`]).
//!
//! **Not modelled**: task groups (cgroups), load balancing between per-CPU queues (the engine's
//! global queue or its own migration stand in), reweighting a queued task, NEXT_BUDDY (off by
//! default) and `yield_to`, HRTICK (off by default), the SMP wake-up CPU choice. In the engine's
//! per-CPU mode each CPU's instance keeps its own entities, so lag does not follow a task that
//! moves to another CPU (the kernel carries `se->vlag` with the task). With a context-switch
//! cost, the fair class counts it as run time, as the kernel sets `exec_start` at the pick.
//! With custom slices, a shorter-slice wakee that does not pre-empt shortens the running task's
//! protection (`update_protect_slice()`); the model applies that at its next pick, not mid-run.
//! Priority inheritance does not change a fair task's order (the kernel boosts an rt_mutex
//! holder into the RT class; the engine's inheritance compares `priority` numbers instead).

pub mod arith;
pub mod places;
pub mod rq;
pub mod tree;

#[cfg(test)]
mod props;
#[cfg(test)]
mod tests;

use super::spec::{ms, Params, SpecError};
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};
pub use rq::{FairPolicy, FairRq, Features, NotWaiting};

/// The `eevdf` policy: one fair run queue.
#[derive(Debug, Clone)]
pub struct Eevdf {
    rq: FairRq,
    label: String,
}

impl Eevdf {
    pub fn new(f: Features) -> Self {
        let label = label(&f);
        Eevdf { rq: FairRq::new(f), label }
    }

    /// The run queue (for inspection).
    pub fn rq(&self) -> &FairRq {
        &self.rq
    }

    pub fn rq_mut(&mut self) -> &mut FairRq {
        &mut self.rq
    }
}

impl Default for Eevdf {
    fn default() -> Self {
        Eevdf::new(Features::default())
    }
}

/// The spec keys, their defaults (6.18, 2 CPUs, HZ=250) and their help.
pub const PARAMS_HELP: &str = "base_slice (ms, default 0.7 × (1 + ilog2(min(cpus, 8)))), cpus=2, hz=250 (TICK_NSEC of \
     the lag clamp), run_to_parity, place_lag, place_deadline_initial, place_rel_deadline, preempt_short, \
     delay_dequeue, delay_zero, wakeup_preemption (1 = on, the default; 0 = off), next_buddy (0 = off, the default; \
     1 = a woken task is picked next if eligible)";

/// Features from a spec's parameters (`eevdf:base_slice=1.4ms,run_to_parity=0,...`).
pub fn features(p: &mut Params) -> Result<Features, SpecError> {
    let cpus = p.uint("cpus", 2, 1, 4096)? as usize;
    let hz = p.uint("hz", 250, 1, 100_000)?;
    let mut f = Features::linux_6_18(cpus, hz);
    let factor = rq::scaling_factor(cpus);
    f.base_slice = p.time("base_slice", f.base_slice as f64 / 1e6)?;
    f.normalized_slice = (f.base_slice / factor).max(1);
    let mut flag = |key: &str, v: &mut bool| -> Result<(), SpecError> {
        *v = p.uint(key, u64::from(*v), 0, 1)? == 1;
        Ok(())
    };
    flag("run_to_parity", &mut f.run_to_parity)?;
    flag("place_lag", &mut f.place_lag)?;
    flag("place_deadline_initial", &mut f.place_deadline_initial)?;
    flag("place_rel_deadline", &mut f.place_rel_deadline)?;
    flag("preempt_short", &mut f.preempt_short)?;
    flag("delay_dequeue", &mut f.delay_dequeue)?;
    flag("delay_zero", &mut f.delay_zero)?;
    flag("wakeup_preemption", &mut f.wakeup_preemption)?;
    flag("next_buddy", &mut f.next_buddy)?;
    Ok(f)
}

/// Features from a whole `eevdf[:k=v,...]` spec, every parameter checked (the trace shadow
/// takes the fair class's rules this way).
pub fn features_of_spec(spec: &str) -> Result<Features, SpecError> {
    let mut p = Params::parse(spec)?;
    if p.name != "eevdf" {
        return Err(p.error("policy", format!("expected `eevdf[:key=value,...]`, not `{}`", p.name)));
    }
    let f = features(&mut p)?;
    p.finish()?;
    Ok(f)
}

/// `eevdf` plus every parameter that differs from the default.
pub fn label(f: &Features) -> String {
    let d = Features::default();
    let mut parts = vec![];
    if f.base_slice != d.base_slice {
        parts.push(format!("base_slice={}", ms(f.base_slice)));
    }
    if f.tick_nsec != d.tick_nsec {
        parts.push(format!("hz={}", 1_000_000_000 / f.tick_nsec));
    }
    for (key, on, def) in [
        ("run_to_parity", f.run_to_parity, d.run_to_parity),
        ("place_lag", f.place_lag, d.place_lag),
        ("place_deadline_initial", f.place_deadline_initial, d.place_deadline_initial),
        ("place_rel_deadline", f.place_rel_deadline, d.place_rel_deadline),
        ("preempt_short", f.preempt_short, d.preempt_short),
        ("delay_dequeue", f.delay_dequeue, d.delay_dequeue),
        ("delay_zero", f.delay_zero, d.delay_zero),
        ("wakeup_preemption", f.wakeup_preemption, d.wakeup_preemption),
        ("next_buddy", f.next_buddy, d.next_buddy),
    ] {
        if on != def {
            parts.push(format!("{key}={}", u8::from(on)));
        }
    }
    if parts.is_empty() {
        "eevdf".into()
    } else {
        format!("eevdf:{}", parts.join(","))
    }
}

impl Policy for Eevdf {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, now: Time) {
        self.rq.enqueue(task, why, now);
    }

    fn dequeue(&mut self, task: TaskId) {
        self.rq.dequeue(task);
    }

    fn pick_next(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
        self.rq.pick(cpu, now)
    }

    /// The run time is taken from the fair class's own clock (since the pick), as
    /// `update_curr()` does; `ran` differs from it only by a context-switch cost.
    fn charge(&mut self, task: TaskId, _ran: Dur, now: Time) {
        self.rq.charge(task, now);
    }

    fn preempts(&self, woken: TaskId, running: TaskId, now: Time) -> bool {
        self.rq.preempts(woken, running, now)
    }

    fn preempted_after_wakeup(&mut self, cpu: CpuId, woken_at: Time) {
        self.rq.freeze_clock(cpu, woken_at);
    }

    fn task_exit(&mut self, task: TaskId) {
        self.rq.exit(task);
    }

    fn queued(&self) -> usize {
        self.rq.queued()
    }

    /// The order does not depend on priority: a priority change leaves the task in place.
    fn requeue(&mut self, _task: &TaskView, _now: Time) {}

    fn blocked(&mut self, task: TaskId, now: Time) {
        self.rq.blocked(task, now);
    }

    fn set_tick(&mut self, tick: Option<Dur>) {
        self.rq.set_tick(tick);
    }

    fn tick_driven(&self) -> bool {
        true
    }
}
