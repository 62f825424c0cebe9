//! One fair run queue (`struct cfs_rq` of Linux 6.18, kernel/sched/fair.c, without task groups):
//! entities with vruntime, virtual deadline, slice and saved lag; the weighted sums behind
//! `avg_vruntime()`; the deadline-ordered timeline; and the current task of each CPU.
//!
//! Functions followed (fair.c): `update_curr` / `update_deadline` (virtual time, deadline
//! renewal, the reschedule request when the slice or its protection ends), `place_entity`
//! (PLACE_LAG with the lag inflated by (W + w)/W, PLACE_DEADLINE_INITIAL, PLACE_REL_DEADLINE),
//! `update_entity_lag` (the 6.18.y clamp to ± `calc_delta_fair(max_slice + TICK_NSEC)`),
//! `enqueue_entity`, `dequeue_entity` (DELAY_DEQUEUE of an ineligible sleeper),
//! `requeue_delayed_entity` and `finish_delayed_dequeue_entity` (DELAY_ZERO),
//! `pick_eevdf` / `pick_next_entity` (RUN_TO_PARITY through `protect_slice`, a delayed pick
//! finishing its dequeue), `set_next_entity` / `set_protect_slice` / `put_prev_entity`,
//! `check_preempt_wakeup_fair` (SCHED_IDLE, BATCH/IDLE wakees, PREEMPT_SHORT with
//! `cancel_protect_slice` / `update_protect_slice`), `yield_task_fair` and `__setparam_fair`
//! (a custom slice clamped to 0.1–100 ms).
//!
//! How the host's protocol maps onto the kernel's: a picked task is the CPU's `curr` (out of the
//! timeline, in the average). When the host charges it and queues it again (slice over,
//! pre-empted), it stays that CPU's `curr` ("held") until the CPU picks again, so the next pick
//! sees it the way `pick_eevdf()` sees `cfs_rq->curr` — including its slice protection and the
//! rule that it wins only with a strictly earlier deadline — and re-picking it changes nothing,
//! as `put_prev_set_next_task()` does nothing when next == prev. A charged task that blocks goes
//! through `dequeue_entity(DEQUEUE_SLEEP)` and may stay on the queue as a delayed entity.

use super::arith::{Load, Sums, NICE_0};
use super::tree::Timeline;
use crate::policies::common::{Affinity, PerTask};
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, TaskId, TaskView, Time};

/// "No task" in the per-CPU tables.
const NONE: TaskId = TaskId::MAX;

/// The custom-slice clamp of `__setparam_fair()`: 0.1 ms .. 100 ms.
pub const MIN_CUSTOM_SLICE: Dur = 100_000;
pub const MAX_CUSTOM_SLICE: Dur = 100_000_000;

/// The fair class's features (kernel/sched/features.h) and tunables, each a parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Features {
    /// `sysctl_sched_base_slice`: 0.70 ms × (1 + ilog2(min(CPUs, 8))) since 6.15.
    pub base_slice: Dur,
    /// `normalized_sysctl_sched_base_slice` (0.70 ms): the protected quantum without RUN_TO_PARITY.
    pub normalized_slice: Dur,
    /// `TICK_NSEC` of the modelled kernel (4 ms at HZ=250), used by the lag clamp. This is the
    /// kernel's constant, not the host's simulated tick.
    pub tick_nsec: Dur,
    pub run_to_parity: bool,
    pub place_lag: bool,
    pub place_deadline_initial: bool,
    pub place_rel_deadline: bool,
    pub preempt_short: bool,
    pub delay_dequeue: bool,
    pub delay_zero: bool,
    pub wakeup_preemption: bool,
    /// NEXT_BUDDY (off in 6.18; later kernels turn a reworked one on): a woken task becomes
    /// the queue's next buddy, which the next pick takes if it is eligible (PICK_BUDDY, on),
    /// ahead of an earlier deadline.
    pub next_buddy: bool,
}

impl Features {
    /// Linux 6.18's defaults for a machine with `cpus` CPUs and `hz` ticks per second.
    pub fn linux_6_18(cpus: usize, hz: u64) -> Features {
        let normalized = 700_000;
        Features {
            base_slice: normalized * scaling_factor(cpus),
            normalized_slice: normalized,
            tick_nsec: 1_000_000_000 / hz.max(1),
            run_to_parity: true,
            place_lag: true,
            place_deadline_initial: true,
            place_rel_deadline: true,
            preempt_short: true,
            delay_dequeue: true,
            delay_zero: true,
            wakeup_preemption: true,
            next_buddy: false,
        }
    }
}

impl Default for Features {
    /// The machine this models: 2 CPUs, HZ=250.
    fn default() -> Self {
        Features::linux_6_18(2, 250)
    }
}

/// `get_update_sysctl_factor()` with SCHED_TUNABLESCALING_LOG: 1 + ilog2(min(CPUs, 8)).
pub fn scaling_factor(cpus: usize) -> u64 {
    1 + (cpus.clamp(1, 8) as u64).ilog2() as u64
}

/// SCHED_NORMAL (OTHER), SCHED_BATCH or SCHED_IDLE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FairPolicy {
    #[default]
    Normal,
    Batch,
    Idle,
}

impl FairPolicy {
    /// From a task's class: "batch", "idle", anything else is SCHED_OTHER.
    pub fn of_class(class: Option<&str>) -> FairPolicy {
        match class {
            Some("batch") => FairPolicy::Batch,
            Some("idle") => FairPolicy::Idle,
            _ => FairPolicy::Normal,
        }
    }
}

/// Where an entity is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum State {
    /// Not on the run queue (never queued, blocked and dequeued, exited).
    #[default]
    Off,
    /// In the timeline (waiting, or delayed: blocked but still competing).
    Queued,
    /// Picked, running on `cpu`.
    Running,
    /// Charged by the host, which has not yet said whether it blocks or runs on.
    Stopped,
    /// Charged and queued again: still `cpu`'s current entity until that CPU picks.
    Held,
}

/// `struct sched_entity`, what this model uses of it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Entity {
    pub vruntime: i64,
    /// Absolute virtual deadline, or relative to `vruntime` while `rel_deadline`.
    pub deadline: i64,
    /// Protected until vruntime reaches this (`se->vprot`).
    pub vprot: i64,
    /// Saved virtual lag `V − v`, clamped.
    pub vlag: i64,
    pub slice: Dur,
    pub load: Load,
    pub custom_slice: bool,
    pub rel_deadline: bool,
    /// `sched_delayed`: blocked, but kept queued until picked or woken.
    pub delayed: bool,
    pub policy: FairPolicy,
    pub state: State,
    pub cpu: CpuId,
    /// Time up to which `vruntime` is accounted while running.
    exec_start: Time,
    /// `update_curr()` asked for a reschedule (slice used up or protection over).
    resched: bool,
    /// Adopted from another CPU's queue ([`FairRq::adopt`]): its lag and relative deadline
    /// came with it and are used when it is enqueued as migrated.
    carried: bool,
}

/// [`FairRq::pick_as`] was asked to run a task that is not waiting on the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotWaiting(pub TaskId);

/// An entity that is not on the queue.
const OFF: Entity = Entity {
    vruntime: 0,
    deadline: 0,
    vprot: 0,
    vlag: 0,
    slice: 0,
    load: NICE_0,
    custom_slice: false,
    rel_deadline: false,
    delayed: false,
    policy: FairPolicy::Normal,
    state: State::Off,
    cpu: 0,
    exec_start: 0,
    resched: false,
    carried: false,
};

/// A wrong variant of the model, for tests that must catch it.
#[cfg(test)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Broken {
    #[default]
    No,
    /// `vruntime_eligible()` answers the opposite.
    InvertedEligibility,
    /// A waking entity is placed at `V − vlag`, without the (W + w)/W inflation.
    NoLagInflation,
    /// `update_curr()` moves the running entity's vruntime but not the average's sums.
    SumsNotUpdated,
}

/// What a pick saw, recorded in tests: the entities on the queue (weight, vruntime) just
/// before the decision, the picked one, and whether it was the single entity on the queue.
#[cfg(test)]
#[derive(Debug, Clone)]
pub struct PickRecord {
    pub picked: TaskId,
    pub picked_vruntime: i64,
    pub on_rq: Vec<(u32, i64)>,
    pub single: bool,
}

/// One fair run queue (or, with one instance serving several CPUs, one shared queue whose
/// average and timeline every CPU uses — an approximation of Linux's per-CPU queues).
#[derive(Debug, Clone)]
pub struct FairRq {
    pub f: Features,
    tick: Option<Dur>,
    se: PerTask<Entity>,
    tree: Timeline,
    sums: Sums,
    /// The last average computed, for an empty queue (`zero_vruntime`).
    zero_v: i64,
    /// Entities on the queue: queued, delayed, running, stopped, held (`nr_queued`).
    nr_queued: u32,
    /// Queued and not delayed, or held: what the host may still run.
    waiting: usize,
    /// The slices of the entities on the queue, as (slice, count), ascending.
    slices: Vec<(Dur, u32)>,
    running: Vec<TaskId>,
    stopped: Vec<TaskId>,
    /// Per CPU: the held current entity (NONE = none); `n_held` of them are set.
    held: Vec<TaskId>,
    n_held: usize,
    /// The fair task most recently woken or created (for PREEMPT_SHORT at a pre-emption).
    last_wakee: Option<TaskId>,
    /// `cfs_rq->next` (NEXT_BUDDY).
    next_buddy: Option<TaskId>,
    /// Per CPU: since a wake-up pre-empted its current task, the time the CPU's fair clock
    /// stands at until the switch, and that task ([`FairRq::freeze_clock`]).
    frozen: Vec<Option<(Time, TaskId)>>,
    affinity: Affinity,
    #[cfg(test)]
    pub broken: Broken,
    #[cfg(test)]
    pub trace: Option<Vec<PickRecord>>,
}

impl FairRq {
    pub fn new(f: Features) -> Self {
        FairRq {
            f,
            tick: None,
            se: PerTask::default(),
            tree: Timeline::default(),
            sums: Sums::default(),
            zero_v: 0,
            nr_queued: 0,
            waiting: 0,
            slices: Vec::new(),
            running: Vec::new(),
            stopped: Vec::new(),
            held: Vec::new(),
            n_held: 0,
            last_wakee: None,
            next_buddy: None,
            frozen: Vec::new(),
            affinity: Affinity::default(),
            #[cfg(test)]
            broken: Broken::No,
            #[cfg(test)]
            trace: None,
        }
    }

    pub fn set_tick(&mut self, tick: Option<Dur>) {
        self.tick = tick;
    }

    /// The tick this queue acts on (None: slice ends are exact).
    pub fn tick(&self) -> Option<Dur> {
        self.tick
    }

    /// The entity of `t` (an off-queue one if unknown).
    #[inline]
    pub fn e(&self, t: TaskId) -> &Entity {
        self.se.get_ref(t).unwrap_or(&OFF)
    }

    /// Tasks the host may still pick (queued and not delayed, or held).
    pub fn queued(&self) -> usize {
        self.waiting
    }

    /// Entities on the queue (`nr_queued`).
    pub fn nr_queued(&self) -> u32 {
        self.nr_queued
    }

    /// Does this queue hold `t` in a state the host may pick or charge?
    pub fn has(&self, t: TaskId) -> bool {
        self.se.get_ref(t).is_some_and(|e| e.state != State::Off && !e.delayed)
    }

    /// `avg_vruntime()` of the entities on the queue (the last value when it is empty).
    pub fn avg_vruntime(&mut self) -> i64 {
        if let Some(v) = self.sums.avg() {
            self.zero_v = v;
        }
        self.zero_v
    }

    /// The weighted sums the average is kept from (for checks).
    pub fn sums(&self) -> Sums {
        self.sums
    }

    /// Every entity on the queue as (task, weight, vruntime) (for checks).
    pub fn on_rq(&self) -> Vec<(TaskId, u32, i64)> {
        let mut v: Vec<(TaskId, u32, i64)> = self.tree.in_order().into_iter().map(|t| self.on_rq_item(t)).collect();
        for &t in self.running.iter().chain(&self.stopped).chain(self.held.iter().filter(|&&t| t != NONE)) {
            v.push(self.on_rq_item(t));
        }
        v
    }

    fn on_rq_item(&self, t: TaskId) -> (TaskId, u32, i64) {
        let e = *self.e(t);
        (t, e.load.weight, e.vruntime)
    }

    #[inline]
    fn eligible(&self, v: i64) -> bool {
        #[cfg(test)]
        if self.broken == Broken::InvertedEligibility {
            return !self.sums.eligible(v);
        }
        self.sums.eligible(v)
    }

    /// Is `t` eligible now (lag ≥ 0)?
    pub fn entity_eligible(&self, t: TaskId) -> bool {
        self.eligible(self.e(t).vruntime)
    }

    fn counts_waiting(e: &Entity) -> bool {
        (e.state == State::Queued && !e.delayed) || e.state == State::Held
    }

    fn slices_add(&mut self, s: Dur) {
        match self.slices.binary_search_by_key(&s, |&(x, _)| x) {
            Ok(i) => self.slices[i].1 += 1,
            Err(i) => self.slices.insert(i, (s, 1)),
        }
    }

    fn slices_sub(&mut self, s: Dur) {
        if let Ok(i) = self.slices.binary_search_by_key(&s, |&(x, _)| x) {
            self.slices[i].1 -= 1;
            if self.slices[i].1 == 0 {
                self.slices.remove(i);
            }
        }
    }

    /// `cfs_rq_min_slice()` (over every entity on the queue: the same minimum the kernel takes
    /// wherever this model asks for it).
    fn min_slice(&self) -> Dur {
        self.slices.first().map_or(Dur::MAX, |&(s, _)| s)
    }

    /// `cfs_rq_max_slice()`.
    fn max_slice(&self) -> Dur {
        self.slices.last().map_or(0, |&(s, _)| s)
    }

    fn on_rq_add(&mut self, t: TaskId) {
        let e = *self.e(t);
        self.sums.add(e.load.weight, e.vruntime);
        self.nr_queued += 1;
        self.slices_add(e.slice);
    }

    fn on_rq_sub(&mut self, t: TaskId) {
        let e = *self.e(t);
        self.sums.sub(e.load.weight, e.vruntime);
        self.nr_queued -= 1;
        self.slices_sub(e.slice);
    }

    /// `update_curr()` for a running entity: advance its vruntime by the time since the last
    /// update, renew its deadline when reached, and note a reschedule when the slice or its
    /// protection is over while others wait.
    fn update_curr(&mut self, t: TaskId, now: Time) {
        let nr_queued = self.nr_queued;
        let frozen = &self.frozen;
        let Some(e) = self.se.get_mut_existing(t) else { return };
        let now = match frozen.get(e.cpu) {
            Some(&Some((at, who))) if who == t => now.min(at),
            _ => now,
        };
        if e.state != State::Running || now <= e.exec_start {
            return;
        }
        let dv = e.load.vdelta(now - e.exec_start) as i64;
        e.exec_start = now;
        e.vruntime += dv;
        let w = e.load.weight;
        #[cfg(test)]
        let skip = self.broken == Broken::SumsNotUpdated;
        #[cfg(not(test))]
        let skip = false;
        if !skip {
            self.sums.wv += w as i128 * dv as i128;
        }
        let renewed = Self::update_deadline(e, self.f.base_slice);
        if nr_queued > 1 && (renewed || e.vruntime >= e.vprot) {
            e.resched = true;
            self.clear_buddy(t);
        }
    }

    /// `t`'s virtual runtime at `now`: a running entity's with what it has run since its last
    /// update, without updating it (a reader of the queue is not `update_curr()`).
    pub fn vruntime_at(&self, t: TaskId, now: Time) -> i64 {
        let e = self.e(t);
        if e.state == State::Running && now > e.exec_start {
            e.vruntime + e.load.vdelta(now - e.exec_start) as i64
        } else {
            e.vruntime
        }
    }

    /// Move `t`'s virtual runtime, and its deadline and protection with it, by `dv` — where its
    /// placements should have put it: `trace shadow` sets a followed task's position to the
    /// kernel's, read from `/proc/<tid>/sched`. Only an entity on the queue (waiting, delayed,
    /// running or held) moves; the average moves with it.
    pub fn shift_vruntime(&mut self, t: TaskId, dv: i64) {
        let e = *self.e(t);
        if dv == 0 || !matches!(e.state, State::Queued | State::Running | State::Held) {
            return;
        }
        let in_timeline = e.state == State::Queued;
        if in_timeline {
            self.tree.remove(t);
        }
        self.sums.sub(e.load.weight, e.vruntime);
        let e = self.se.get_mut(t);
        e.vruntime += dv;
        if !e.rel_deadline {
            e.deadline += dv;
        }
        e.vprot += dv;
        let (w, v, d) = (e.load.weight, e.vruntime, e.deadline);
        self.sums.add(w, v);
        if in_timeline {
            self.tree.insert(t, d, v);
        }
    }

    /// `clear_buddies()`: `t` is no longer the next buddy.
    fn clear_buddy(&mut self, t: TaskId) {
        if self.next_buddy == Some(t) {
            self.next_buddy = None;
        }
    }

    /// `pick_next_entity()`'s PICK_BUDDY: the next buddy, if it waits and is eligible.
    fn buddy_pick(&self) -> Option<TaskId> {
        self.next_buddy.filter(|&b| self.is_waiting(b) && self.entity_eligible(b))
    }

    /// `update_deadline()`: once vruntime reaches the deadline, request another slice.
    fn update_deadline(e: &mut Entity, base_slice: Dur) -> bool {
        if e.vruntime < e.deadline {
            return false;
        }
        if !e.custom_slice {
            e.slice = base_slice;
        }
        e.deadline = e.vruntime + e.load.vdelta(e.slice) as i64;
        true
    }

    fn update_running(&mut self, now: Time) {
        for i in 0..self.running.len() {
            let t = self.running[i];
            self.update_curr(t, now);
        }
    }

    /// `set_protect_slice()`: protected until the deadline, or sooner if a shorter slice
    /// waits (RUN_TO_PARITY) or, without RUN_TO_PARITY, for one normalised base slice.
    fn set_protect_slice(&mut self, t: TaskId) {
        let quantum = if self.f.run_to_parity { self.min_slice() } else { self.f.normalized_slice };
        let e = self.se.get_mut(t);
        let quantum = quantum.min(e.slice);
        e.vprot = e.deadline;
        if quantum != e.slice {
            e.vprot = e.vprot.min(e.vruntime + e.load.vdelta(quantum) as i64);
        }
    }

    /// `place_entity()`: put a joining entity at `V − lag`, the lag inflated so that it
    /// survives the entity's own weight joining the average; deadline one slice later (half a
    /// slice for a new task), or the saved relative deadline.
    fn place_entity(&mut self, t: TaskId, initial: bool) {
        let v_avg = self.avg_vruntime();
        let (base, nr_queued, load) = (self.f.base_slice, self.nr_queued, self.sums.w);
        #[cfg(test)]
        let inflate = self.broken != Broken::NoLagInflation;
        #[cfg(not(test))]
        let inflate = true;
        let f = self.f.clone();
        let e = self.se.get_mut(t);
        if !e.custom_slice {
            e.slice = base;
        }
        let mut vslice = e.load.vdelta(e.slice) as i64;
        let mut lag = 0i64;
        if f.place_lag && nr_queued > 0 && e.vlag != 0 {
            lag = e.vlag;
            if inflate {
                let load = load.max(1) as i128;
                // vl_i = (W + w_i) * vl'_i / W, truncated like div_s64().
                lag = (lag as i128 * (load + e.load.weight as i128) / load) as i64;
            }
        }
        e.vruntime = v_avg - lag;
        if e.rel_deadline {
            e.deadline += e.vruntime;
            e.rel_deadline = false;
            return;
        }
        if f.place_deadline_initial && initial {
            vslice /= 2;
        }
        e.deadline = e.vruntime + vslice;
    }

    /// `update_entity_lag()`: `vlag = V − v`, clamped to ± `calc_delta_fair(max_slice + TICK_NSEC)`.
    fn update_entity_lag(&mut self, t: TaskId) {
        let v_avg = self.avg_vruntime();
        let span = self.max_slice() + self.f.tick_nsec;
        let e = self.se.get_mut(t);
        let limit = e.load.vdelta(span) as i64;
        e.vlag = (v_avg - e.vruntime).clamp(-limit, limit);
    }

    /// `enqueue_entity()` of an entity not on the queue.
    fn enqueue_entity(&mut self, t: TaskId, now: Time, initial: bool) {
        self.place_on_queue(t, now, initial, false);
        self.waiting += 1;
    }

    /// Place an entity not on the queue and put it there (in the average and the timeline),
    /// runnable or delayed.
    #[inline]
    fn place_on_queue(&mut self, t: TaskId, now: Time, initial: bool, delayed: bool) {
        self.update_running(now);
        self.place_entity(t, initial);
        self.on_rq_add(t);
        let e = self.se.get_mut(t);
        e.state = State::Queued;
        e.delayed = delayed;
        let (d, v) = (e.deadline, e.vruntime);
        self.tree.insert(t, d, v);
    }

    /// Take queued (or running) `t` out of the counts, the timeline and the average.
    fn leave_timeline(&mut self, t: TaskId) {
        self.clear_buddy(t);
        let e = *self.e(t);
        if Self::counts_waiting(&e) {
            self.waiting -= 1;
        }
        if e.state == State::Held {
            self.held[e.cpu] = NONE;
            self.n_held -= 1;
        }
        self.tree.remove(t);
        self.on_rq_sub(t);
    }

    /// `dequeue_entity()` to the end: save the lag, leave the average and the timeline.
    /// `sleep` = DEQUEUE_SLEEP (else the deadline is kept relative, PLACE_REL_DEADLINE).
    fn finish_dequeue(&mut self, t: TaskId, sleep: bool) {
        // finish_delayed_dequeue_entity(): DELAY_ZERO drops positive lag gained while delayed.
        let zero_positive_lag = self.f.delay_zero && self.e(t).delayed;
        self.leave_saving_lag(t, sleep);
        let e = self.se.get_mut(t);
        if zero_positive_lag && e.vlag > 0 {
            e.vlag = 0;
        }
    }

    /// Save the lag (and, unless `sleep`, the deadline relative to vruntime), leave the average
    /// and the timeline: off the queue.
    fn leave_saving_lag(&mut self, t: TaskId, sleep: bool) {
        self.update_entity_lag(t);
        self.leave_timeline(t);
        let rel = self.f.place_rel_deadline && !sleep;
        let e = self.se.get_mut(t);
        if rel {
            e.deadline -= e.vruntime;
            e.rel_deadline = true;
        }
        e.delayed = false;
        e.state = State::Off;
    }

    /// `dequeue_entity(DEQUEUE_SLEEP)` of a charged entity that blocks: an ineligible one stays
    /// queued as a delayed entity (DELAY_DEQUEUE) until picked or woken.
    fn block(&mut self, t: TaskId, now: Time) {
        self.update_running(now);
        self.clear_buddy(t);
        let e = *self.e(t);
        if self.f.delay_dequeue && !self.eligible(e.vruntime) {
            let e = self.se.get_mut(t);
            e.delayed = true;
            e.state = State::Queued;
            let (d, v) = (e.deadline, e.vruntime);
            self.tree.insert(t, d, v);
            return;
        }
        self.finish_dequeue(t, true);
    }

    /// `requeue_delayed_entity()`: a delayed entity is woken; with DELAY_ZERO a positive lag it
    /// gained while delayed is dropped by placing it again at V.
    ///
    /// The kernel gets here from `ttwu_runnable()` without an `update_curr()`: V counts the
    /// running entity's vruntime as of its last update — with a tick, the last tick at the
    /// latest — so a sleeper woken late in the current task's run can still read a negative
    /// lag and keep its old vruntime and (earlier) deadline. `check_preempt_wakeup_fair()`
    /// updates the current entity right after.
    fn requeue_delayed(&mut self, t: TaskId, now: Time) {
        let last_update = self.tick.map_or(now, |tick| now / tick * tick);
        self.update_running(last_update);
        if self.f.delay_zero {
            self.update_entity_lag(t);
            if self.e(t).vlag > 0 {
                self.tree.remove(t);
                self.on_rq_sub(t);
                self.se.get_mut(t).vlag = 0;
                self.place_entity(t, false);
                self.on_rq_add(t);
                let e = *self.e(t);
                self.tree.insert(t, e.deadline, e.vruntime);
            }
        }
        self.se.get_mut(t).delayed = false;
        self.waiting += 1;
        self.update_running(now);
    }

    /// A task becomes runnable (`enqueue_task_fair`), or — charged and not blocked — stays its
    /// CPU's current task until the CPU picks again.
    pub fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, now: Time) {
        let t = task.id;
        self.affinity.note(task);
        let e = *self.e(t);
        match e.state {
            State::Stopped => {
                if let Some(p) = self.stopped.iter().position(|&x| x == t) {
                    self.stopped.swap_remove(p);
                }
                if why == EnqueueReason::Preempted {
                    self.cancel_protect_if_short(t);
                }
                if why == EnqueueReason::Yielded {
                    self.yield_entity(t);
                }
                let cpu = e.cpu;
                if cpu >= self.held.len() {
                    self.held.resize(cpu + 1, NONE);
                }
                if self.held[cpu] != NONE {
                    // A second task stopped on this CPU before it picked: the first competes
                    // from the timeline.
                    self.put_prev(cpu);
                }
                self.held[cpu] = t;
                self.n_held += 1;
                self.se.get_mut(t).state = State::Held;
                self.waiting += 1;
            }
            State::Queued if e.delayed => {
                self.requeue_delayed(t, now);
                self.last_wakee = Some(t);
                self.set_buddy_on_wakeup(t, why);
            }
            State::Off => {
                let e = self.se.get_mut(t);
                e.policy = FairPolicy::of_class(task.class);
                e.load = if e.policy == FairPolicy::Idle { Load::idle() } else { Load::of_nice(task.nice) };
                match task.runtime {
                    Some(r) => {
                        e.custom_slice = true;
                        e.slice = r.clamp(MIN_CUSTOM_SLICE, MAX_CUSTOM_SLICE);
                    }
                    None => e.custom_slice = false,
                }
                if why == EnqueueReason::New || (why == EnqueueReason::Migrated && !e.carried) {
                    // A new task has no lag; one from another CPU's instance brings none here
                    // unless its entity was handed over with it (`adopt`).
                    e.vlag = 0;
                    e.rel_deadline = false;
                }
                e.carried = false;
                // A task that existed before the run (the workload gives its CPU: a replayed
                // trace's task, released by SIGCONT) is woken, not forked: a whole slice, not the
                // half slice of PLACE_DEADLINE_INITIAL.
                let forked = why == EnqueueReason::New && !task.existed_before();
                self.enqueue_entity(t, now, forked);
                if matches!(why, EnqueueReason::New | EnqueueReason::Woken) {
                    self.last_wakee = Some(t);
                }
                self.set_buddy_on_wakeup(t, why);
            }
            State::Queued | State::Running | State::Held => {
                debug_assert!(false, "enqueue of task {t} that is already {:?}", e.state);
            }
        }
    }

    /// Hand `t`'s entity to another CPU's queue ([`FairRq::adopt`]): it must be off this queue
    /// (dequeued, or blocked and not delayed); its saved lag and relative deadline go with it, as
    /// `se->vlag` and the relative deadline go with a migrating task in the kernel.
    pub fn take(&mut self, t: TaskId) -> Entity {
        let e = *self.e(t);
        debug_assert_eq!(e.state, State::Off, "take of task {t} still on the queue");
        *self.se.get_mut(t) = OFF;
        // A wakee handed away is no longer this queue's to compare slices with.
        if self.last_wakee == Some(t) {
            self.last_wakee = None;
        }
        e
    }

    /// Receive an entity from another CPU's queue ([`FairRq::take`]); the next enqueue as
    /// `Migrated` places it with its lag (and relative deadline) on this queue's average.
    pub fn adopt(&mut self, t: TaskId, e: Entity) {
        let s = self.se.get_mut(t);
        *s = Entity { state: State::Off, delayed: false, carried: true, ..e };
    }

    /// A delayed entity leaves for another CPU's queue (`detach_task()` of a task the load
    /// balancer moves for load, Linux 6.14+): dequeued without DEQUEUE_SLEEP, so its lag and a
    /// relative deadline are saved, and it stays `sched_delayed` — [`FairRq::attach_delayed`]
    /// queues it there as delayed, where it is woken or its dequeue finishes.
    pub fn detach_delayed(&mut self, t: TaskId, now: Time) {
        debug_assert!(self.is_delayed(t), "detach_delayed of task {t} that is not delayed");
        self.update_running(now);
        self.leave_saving_lag(t, false);
    }

    /// Queue an entity handed over by [`FairRq::detach_delayed`] (then [`FairRq::take`] and
    /// [`FairRq::adopt`]) as a delayed entity: placed with its lag as a migrated task is
    /// (`enqueue_entity()`), on the queue and in the average, not runnable.
    pub fn attach_delayed(&mut self, t: TaskId, now: Time) {
        self.se.get_mut(t).carried = false;
        self.place_on_queue(t, now, false, true);
    }

    /// Is `t` on this queue in any state: runnable, running, stopped, held or delayed (the
    /// kernel keeps such a task on `rq->cfs_tasks`)?
    pub fn on_queue(&self, t: TaskId) -> bool {
        self.e(t).state != State::Off
    }

    /// A wake-up at `woken_at` pre-empted `cpu`'s current task, and the switch comes now (the
    /// wake-up path's delay later): the kernel charges the task up to the wake-up and does not
    /// update the run queue's clock again before the switch (`rq_clock_skip_update()` in
    /// `wakeup_preempt()`), so the task picked next is charged from the wake-up on — the delay
    /// is the wakee's run time, not the waker's. Measured here with `sched_stat_runtime`: a
    /// task pre-empted by its wakee is charged about 2 µs less than its traced run, the wakee
    /// as much more.
    pub fn freeze_clock(&mut self, cpu: CpuId, woken_at: Time) {
        let Some(&t) = self.running.iter().find(|&&t| self.e(t).cpu == cpu) else { return };
        self.update_curr(t, woken_at);
        if self.frozen.len() <= cpu {
            self.frozen.resize(cpu + 1, None);
        }
        self.frozen[cpu] = Some((woken_at, t));
    }

    /// `check_preempt_wakeup_fair()`'s NEXT_BUDDY: a task woken (not forked) while a fair task
    /// runs here becomes the next buddy, unless it is SCHED_IDLE.
    fn set_buddy_on_wakeup(&mut self, t: TaskId, why: EnqueueReason) {
        if self.f.next_buddy
            && why == EnqueueReason::Woken
            && self.e(t).policy != FairPolicy::Idle
            && !self.running.is_empty()
        {
            self.next_buddy = Some(t);
        }
    }

    /// Is `t` blocked but still queued (DELAY_DEQUEUE)?
    /// Charged and not yet queued again or blocked: the host ends one job of a periodic task
    /// and starts the next at once (its release came while it ran), so the task never slept.
    pub fn is_stopped(&self, t: TaskId) -> bool {
        self.e(t).state == State::Stopped
    }

    pub fn is_delayed(&self, t: TaskId) -> bool {
        let e = self.e(t);
        e.state == State::Queued && e.delayed
    }

    /// Is `t` waiting in this queue (runnable, not running, not delayed)?
    pub fn is_waiting(&self, t: TaskId) -> bool {
        let e = self.e(t);
        (e.state == State::Queued && !e.delayed) || e.state == State::Held
    }

    /// The owner woke a task of another class: a later pre-emption is not a fair wake-up's.
    pub fn note_foreign_wakeup(&mut self) {
        self.last_wakee = None;
    }

    /// After a pre-emption by a woken fair task: `check_preempt_wakeup_fair()` cancelled the
    /// current task's protection if the wakee won as a non-idle task over an idle one or with
    /// a shorter slice (PREEMPT_SHORT) — unless `update_curr()` had already asked to resched.
    fn cancel_protect_if_short(&mut self, t: TaskId) {
        let Some(w) = self.last_wakee.filter(|&w| w != t) else { return };
        let (se, pse) = (self.e(t), self.e(w));
        if se.resched {
            return;
        }
        let short = (se.policy == FairPolicy::Idle && pse.policy != FairPolicy::Idle)
            || (self.f.preempt_short && pse.slice < se.slice);
        if short {
            let e = self.se.get_mut(t);
            e.vprot = e.vprot.min(e.vruntime);
        }
    }

    /// `yield_task_fair()`: an eligible task gives up the rest of its request.
    fn yield_entity(&mut self, t: TaskId) {
        if self.nr_queued <= 1 || !self.entity_eligible(t) {
            return;
        }
        let base = self.f.base_slice;
        let e = self.se.get_mut(t);
        let (w, dv) = (e.load.weight, e.deadline - e.vruntime);
        e.vruntime = e.deadline;
        Self::update_deadline(e, base);
        self.sums.wv += w as i128 * dv as i128;
    }

    /// `put_prev_entity()`: `cpu`'s held current entity goes back into the timeline.
    pub fn put_prev(&mut self, cpu: CpuId) {
        let Some(&t) = self.held.get(cpu).filter(|&&t| t != NONE) else { return };
        self.held[cpu] = NONE;
        self.n_held -= 1;
        let e = self.se.get_mut(t);
        e.state = State::Queued;
        let (d, v) = (e.deadline, e.vruntime);
        self.tree.insert(t, d, v);
    }

    /// Stopped entities the host neither queued again nor reported blocked: blocked.
    fn block_stopped(&mut self, now: Time) {
        while let Some(t) = self.stopped.pop() {
            self.block(t, now);
        }
    }

    /// `pick_eevdf()`: the eligible entity with the earliest virtual deadline, where `curr`
    /// (the CPU's current entity, not in the timeline) wins only if eligible and protected or
    /// strictly earlier; other CPUs' held entities compete as if in the timeline.
    pub fn pick_eevdf(&self, curr: Option<TaskId>, protect: bool, cpu: CpuId) -> Option<TaskId> {
        if self.affinity_restricted() {
            return self.pick_allowed(curr, protect, cpu);
        }
        if self.nr_queued == 1 {
            return curr.or_else(|| self.tree.first());
        }
        let own = curr;
        let curr = curr.filter(|&c| self.eligible(self.e(c).vruntime));
        if let Some(c) = curr {
            let e = self.e(c);
            if protect && e.vruntime < e.vprot {
                return Some(c);
            }
        }
        let mut best = self.pick_timeline();
        let others_held = self.n_held > usize::from(self.held.get(cpu).is_some_and(|&h| h != NONE));
        for (k, &h) in self.held.iter().enumerate().filter(|_| others_held) {
            if h != NONE && k != cpu && self.eligible(self.e(h).vruntime) {
                let d = self.e(h).deadline;
                if best.is_none_or(|b| d < self.e(b).deadline) {
                    best = Some(h);
                }
            }
        }
        match (best, curr) {
            (None, None) => self.pick_local(own),
            (None, c) => c,
            (Some(b), Some(c)) if self.e(c).deadline < self.e(b).deadline => Some(c),
            (b, _) => b,
        }
    }

    /// No entity this CPU may take is eligible: the eligible ones run on other CPUs (one queue
    /// shared by several CPUs). Judge eligibility against the average of the entities this CPU
    /// may take, as a queue of its own would.
    #[cold]
    fn pick_local(&self, curr: Option<TaskId>) -> Option<TaskId> {
        let mut local = self.sums;
        for &t in self.running.iter().chain(&self.stopped) {
            let e = self.e(t);
            local.sub(e.load.weight, e.vruntime);
        }
        let best = self.tree.pick(|v| local.eligible(v)).or_else(|| self.tree.first());
        match (best, curr.filter(|&c| local.eligible(self.e(c).vruntime))) {
            (Some(b), Some(c)) if self.e(c).deadline < self.e(b).deadline => Some(c),
            (None, _) => curr,
            (b, _) => b,
        }
    }

    /// The timeline's earliest deadline among eligible entities (the scan mostly stops at
    /// the first entries, so a division to turn eligibility into one comparison does not pay).
    #[inline]
    fn pick_timeline(&self) -> Option<TaskId> {
        self.tree.pick(|v| self.eligible(v))
    }

    fn affinity_restricted(&self) -> bool {
        self.affinity.any_restricted()
    }

    /// `pick_eevdf()` among the entities allowed on `cpu` (a shared queue with CPU affinity;
    /// Linux has per-CPU queues instead). If none allowed is eligible, the allowed entity with
    /// the least vruntime runs, so that the CPU does not idle.
    fn pick_allowed(&self, curr: Option<TaskId>, protect: bool, cpu: CpuId) -> Option<TaskId> {
        let ok = |t: TaskId| self.affinity.allowed(t, cpu);
        let curr = curr.filter(|&c| ok(c));
        if self.nr_queued == 1 {
            return curr.or_else(|| self.tree.first().filter(|&t| ok(t)));
        }
        let eligible_curr = curr.filter(|&c| self.eligible(self.e(c).vruntime));
        if let Some(c) = eligible_curr {
            let e = self.e(c);
            if protect && e.vruntime < e.vprot {
                return Some(c);
            }
        }
        let mut cands: Vec<TaskId> = self.tree.in_order();
        cands.extend(self.held.iter().enumerate().filter(|&(k, &h)| h != NONE && k != cpu).map(|(_, &h)| h));
        cands.retain(|&t| ok(t));
        cands.sort_by_key(|&t| self.e(t).deadline);
        let best = cands.iter().copied().find(|&t| self.eligible(self.e(t).vruntime));
        match (best, eligible_curr) {
            (Some(b), Some(c)) if self.e(c).deadline < self.e(b).deadline => Some(c),
            (Some(b), _) => Some(b),
            (None, Some(c)) => Some(c),
            (None, None) => cands.into_iter().chain(curr).min_by_key(|&t| self.e(t).vruntime),
        }
    }

    /// `pick_next_entity()` for `cpu`: pick; a delayed pick finishes its dequeue and the pick
    /// is repeated; the chosen entity becomes the CPU's current one (`set_next_entity()`), with
    /// a fresh slice protection unless it is the current one picked again.
    #[inline]
    pub fn pick(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
        let t = self.pick_task(cpu, now)?;
        Some(Pick { task: t, slice: Some(self.slice_of(t)) })
    }

    /// [`FairRq::pick`] but for the slice. Out of line, it returns its answer in registers: the
    /// whole `Option<Pick>` goes through memory, and reading it back as one wide load right
    /// after the narrower stores that wrote it stalls (a failed store-to-load forward).
    pub fn pick_task(&mut self, cpu: CpuId, now: Time) -> Option<TaskId> {
        let curr = self.prepare_pick(cpu, now);
        let t = self.pick_runnable(cpu, curr)?;
        self.set_next(cpu, curr, t, now);
        Some(t)
    }

    /// The kernel picked `t` on `cpu` (a shadow following a live trace, `schedlab trace
    /// shadow`): the rules pick first — a delayed entity they reach finishes its dequeue, as
    /// it would have in the kernel — then `t` becomes the current entity whatever they chose.
    /// Returns the rules' choice, or `Err` if `t` is not waiting on this queue.
    pub fn pick_as(&mut self, cpu: CpuId, t: TaskId, now: Time) -> Result<Option<TaskId>, NotWaiting> {
        let curr = self.prepare_pick(cpu, now);
        let rules = self.pick_runnable(cpu, curr);
        if !self.is_waiting(t) {
            return Err(NotWaiting(t));
        }
        self.set_next(cpu, curr, t, now);
        Ok(rules)
    }

    /// Before a pick on `cpu`: bring the running entities' vruntimes up to `now`, block what
    /// was charged and not queued again, and put back the current entities other CPUs hold.
    /// Returns `cpu`'s held current entity.
    #[inline]
    fn prepare_pick(&mut self, cpu: CpuId, now: Time) -> Option<TaskId> {
        self.update_running(now);
        self.block_stopped(now);
        if cpu >= self.held.len() {
            self.held.resize(cpu + 1, NONE);
        }
        let curr = Some(self.held[cpu]).filter(|&t| t != NONE);
        if self.n_held > usize::from(curr.is_some()) {
            for k in 0..self.held.len() {
                if k != cpu {
                    self.put_prev(k);
                }
            }
        }
        curr
    }

    /// `pick_eevdf()` until it returns a runnable entity: a delayed one it picks finishes its
    /// dequeue instead.
    #[inline]
    fn pick_runnable(&mut self, cpu: CpuId, curr: Option<TaskId>) -> Option<TaskId> {
        if let Some(b) = self.buddy_pick() {
            return Some(b);
        }
        loop {
            let t = self.pick_eevdf(curr, true, cpu)?;
            #[cfg(test)]
            self.record_pick(t);
            if !self.e(t).delayed {
                return Some(t);
            }
            self.finish_dequeue(t, true);
        }
    }

    /// `set_next_entity()`: `t` runs on `cpu` from `now`, with a fresh slice protection unless
    /// it is `curr`, the current entity picked again.
    #[inline]
    fn set_next(&mut self, cpu: CpuId, curr: Option<TaskId>, t: TaskId, now: Time) {
        if let Some(c) = curr {
            self.held[cpu] = NONE;
            self.n_held -= 1;
            if c != t {
                // put_prev_entity(curr), set_next_entity(t).
                let e = self.se.get_mut(c);
                e.state = State::Queued;
                let (d, v) = (e.deadline, e.vruntime);
                self.tree.replace(t, c, d, v);
            }
        } else {
            self.tree.remove(t);
        }
        self.waiting -= 1;
        self.clear_buddy(t);
        // The switch away from a task a wake-up pre-empted: the clock still stands at the
        // wake-up. Any other pick on this CPU (another class ran between) ends the freeze.
        let frozen = self.frozen.get_mut(cpu).and_then(Option::take);
        let start = frozen.filter(|&(_, who)| curr == Some(who)).map_or(now, |(at, _)| at.min(now));
        let e = self.se.get_mut(t);
        e.state = State::Running;
        e.cpu = cpu;
        e.exec_start = start;
        e.resched = false;
        self.running.push(t);
        if Some(t) != curr {
            self.set_protect_slice(t);
        }
    }

    /// `update_curr()` of the running entities at `now`, as the tick (`task_tick_fair()`) or a
    /// task's read of its own CPU clock (`task_sched_runtime()`) does it.
    pub fn update_at(&mut self, now: Time) {
        self.update_running(now);
    }

    /// Has `update_curr()` asked to reschedule `t` (its slice used up, or its protection over
    /// while others wait)?
    pub fn wants_resched(&self, t: TaskId) -> bool {
        self.e(t).resched
    }

    #[cfg(test)]
    fn record_pick(&mut self, t: TaskId) {
        if self.trace.is_none() {
            return;
        }
        let on_rq = self.on_rq().into_iter().map(|(_, w, v)| (w, v)).collect();
        let rec = PickRecord { picked: t, picked_vruntime: self.e(t).vruntime, on_rq, single: self.nr_queued == 1 };
        self.trace.as_mut().expect("tracing").push(rec);
    }

    /// How long the picked entity runs before `update_curr()` would ask to resched: until its
    /// vruntime reaches the deadline, or the end of its protection while others wait. A task
    /// kept past its protection is looked at again at every tick (task_tick_fair); without a
    /// tick, it runs to its deadline, as if slice ends were exact (HRTICK).
    #[inline]
    fn slice_of(&self, t: TaskId) -> Dur {
        let e = *self.e(t);
        let others = self.nr_queued > 1;
        let mut target = if others { e.deadline.min(e.vprot) } else { e.deadline };
        if target <= e.vruntime {
            if others && self.tick.is_some() {
                return 1;
            }
            target = e.deadline;
        }
        e.load.time_for(target.saturating_sub(e.vruntime).max(1) as u64)
    }

    /// The host stops a running entity and charges it (`update_curr()`); it waits to hear
    /// whether the task runs on or blocks.
    pub fn charge(&mut self, t: TaskId, now: Time) {
        self.update_running(now);
        if let Some(p) = self.running.iter().position(|&x| x == t) {
            self.running.swap_remove(p);
            self.se.get_mut(t).state = State::Stopped;
            self.stopped.push(t);
        }
    }

    /// The charged task blocks (`dequeue_task(DEQUEUE_SLEEP)`).
    pub fn blocked(&mut self, t: TaskId, now: Time) {
        if let Some(p) = self.stopped.iter().position(|&x| x == t) {
            self.stopped.swap_remove(p);
            self.block(t, now);
        }
    }

    /// `t` leaves this queue for a CPU it must run on now (a replay holds each burst of a host
    /// task on the CPU it began on): a stopped entity is dequeued as a sleeper (never delayed),
    /// a delayed one's dequeue is finished; its lag goes with it. Nothing else is on the queue.
    pub fn leave(&mut self, t: TaskId, now: Time) {
        self.update_running(now);
        if let Some(p) = self.stopped.iter().position(|&x| x == t) {
            self.stopped.swap_remove(p);
            self.finish_dequeue(t, true);
        } else if self.is_delayed(t) {
            self.finish_dequeue(t, true);
        }
    }

    /// The task exits: off the queue at once (a dead task's dequeue is never delayed, and its
    /// lag no longer matters).
    pub fn exit(&mut self, t: TaskId) {
        if let Some(p) = self.stopped.iter().position(|&x| x == t) {
            self.stopped.swap_remove(p);
        }
        let e = *self.e(t);
        if e.state != State::Off {
            if e.state == State::Running {
                self.running.retain(|&x| x != t);
            }
            self.leave_timeline(t);
        }
        *self.se.get_mut(t) = OFF;
    }

    /// A queued task leaves without running (another CPU takes it): DEQUEUE without SLEEP,
    /// the lag and a relative deadline saved.
    pub fn dequeue(&mut self, t: TaskId) {
        let e = *self.e(t);
        if (e.state == State::Queued && !e.delayed) || e.state == State::Held {
            self.finish_dequeue(t, false);
        }
    }

    /// `check_preempt_wakeup_fair()` for `woken` (just enqueued, or a delayed task a balancer
    /// moved here) against `running`, and the pick that follows: true if `running` is to stop
    /// for another task now (a delayed pick only finishes its dequeue).
    pub fn preempts(&self, woken: TaskId, running: TaskId, _now: Time) -> bool {
        let (se, pse) = (self.e(running), self.e(woken));
        if se.state != State::Running || pse.state != State::Queued {
            return false;
        }
        let cpu = se.cpu;
        // update_curr() at the wake-up (done by `enqueue`) may already have asked to resched;
        // then schedule() picks with the current task's protection as it is.
        if se.resched {
            if self.buddy_pick().is_some_and(|b| b != running) {
                return true;
            }
            return self.pick_eevdf(Some(running), true, cpu) != Some(running);
        }
        if !self.f.wakeup_preemption {
            return false;
        }
        let (cse_idle, pse_idle) = (se.policy == FairPolicy::Idle, pse.policy == FairPolicy::Idle);
        if cse_idle && !pse_idle {
            // A non-idle wakee pre-empts an idle task and cancels its protection.
            return self.pick_eevdf(Some(running), false, cpu) != Some(running);
        }
        if cse_idle != pse_idle || pse.policy != FairPolicy::Normal {
            // SCHED_IDLE does not pre-empt SCHED_OTHER; BATCH and IDLE wakees never do.
            return false;
        }
        // PREEMPT_SHORT: a wakee with a shorter slice ignores the protection. If the wakee is
        // the pick, schedule() picks it again (its protection cancelled, or not needed).
        let short = self.f.preempt_short && pse.slice < se.slice;
        self.pick_eevdf(Some(running), !short, cpu) == Some(woken)
    }
}
