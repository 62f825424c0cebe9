//! SCHED_DEADLINE after kernel/sched/deadline.c of Linux 6.18: earliest deadline first over a
//! constant bandwidth server (CBS) per task, and the admission test of `sched_setattr()`.
//!
//! A task has a runtime `R`, a relative deadline `D` and a period `P` (workload `runtime`,
//! `deadline`, `period`; `D` defaults to `P` and `P` to `D`, `R` to `D`). Functions followed:
//! - `update_dl_entity()` at a wake-up: if the server's deadline has passed, or
//!   `dl_entity_overflow()` says the runtime left cannot be used by the deadline at the
//!   reserved rate (`runtime / (deadline − now) > R / D`, checked in µs with multiplications
//!   as the kernel does), a new period starts (`replenish_dl_new_period()`: deadline = now + D,
//!   runtime = R) — except for a constrained task (D < P) whose deadline is still ahead, which
//!   gets `runtime = laxity × R/D` (`update_dl_revised_wakeup()`, density in 2^-20 units);
//!   `dl_check_constrained_dl()` throttles a constrained task that wakes after its deadline
//!   but before the next period;
//! - `update_curr_dl()`: runtime is spent while running; at ≤ 0 the task is throttled
//!   (`dl_runtime_exceeded()`) and its replenishment timer is armed at the next period,
//!   `deadline − D + P` (`start_dl_timer()`; if that is not in the future it is replenished at
//!   once);
//! - `replenish_dl_entity()`: `deadline += P, runtime += R` until the runtime is positive (an
//!   overrun is carried), or a new period if the deadline is still behind;
//! - `dl_entity_preempt()`: an earlier deadline pre-empts.
//!
//! Without HRTICK_DL (off by default) the kernel notices an exhausted runtime at the tick; a
//! host tick gives the same overrun, which the replenishment carries.
//!
//! A deadline task without a deadline or a period has no reservation (the kernel refuses such
//! a task): it is queued last among deadline tasks and never throttled.

use crate::policies::common::{KeyQueue, PerTask};
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, TaskId, TaskView, Time};
use crate::workload::{TaskSpec, Workload, DL_MIN_RUNTIME};

/// `DL_SCALE`: the overflow check works in 1024 ns units.
const DL_SCALE: u32 = 10;
/// `BW_SHIFT`: bandwidths are fractions in 2^-20 units.
pub const BW_SHIFT: u32 = 20;

/// `to_ratio(period, runtime)`: runtime / period in 2^-20 units.
pub fn to_ratio(period: Dur, runtime: Dur) -> u64 {
    if period == 0 {
        return 0;
    }
    (((runtime as u128) << BW_SHIFT) / period as u128) as u64
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DlEntity {
    /// Reservation: runtime, relative deadline, period (0 = no reservation).
    pub dl_runtime: Dur,
    pub dl_deadline: Dur,
    pub dl_period: Dur,
    /// The server's state: runtime left (may be negative after an overrun), absolute deadline.
    pub runtime: i64,
    pub deadline: Time,
    pub throttled: bool,
    /// When the replenishment timer fires (while throttled).
    pub replenish_at: Time,
    /// Waiting in the run queue (not running, not blocked)?
    pub queued: bool,
    exec_start: Time,
}

impl DlEntity {
    fn reserved(&self) -> bool {
        self.dl_deadline > 0
    }

    /// `dl_next_period()`.
    fn next_period(&self) -> Time {
        (self.deadline + self.dl_period).saturating_sub(self.dl_deadline)
    }
}

/// The deadline class's run queue.
#[derive(Debug, Clone, Default)]
pub struct DeadlineRq {
    se: PerTask<DlEntity>,
    /// Runnable, not throttled, keyed by server deadline (EDF, first come first served on ties);
    /// i64 keys (deadlines stay far below 2^63 ns).
    ready: KeyQueue<i64>,
    /// Throttled tasks waiting for their replenishment timer.
    throttled: Vec<TaskId>,
    /// Queued tasks (ready or throttled).
    queued: usize,
}

impl DeadlineRq {
    pub fn entity(&self, t: TaskId) -> DlEntity {
        self.se.get(t)
    }

    /// Tasks waiting (ready or throttled).
    #[inline]
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Ready (not throttled) tasks waiting.
    pub fn ready(&self) -> usize {
        self.ready.len()
    }

    /// The earliest deadline among ready tasks.
    pub fn earliest(&mut self) -> Option<Time> {
        self.ready.min_key().map(|k| k as Time)
    }

    pub fn is_throttled(&self, t: TaskId) -> bool {
        self.se.get_ref(t).is_some_and(|e| e.queued && e.throttled)
    }

    /// (runtime, relative deadline, period) of a task arriving at `now`: its first job's
    /// absolute deadline (the engine's release + deadline, or + period) minus its arrival.
    fn params(task: &TaskView, now: Time) -> (Dur, Dur, Dur) {
        let d = task.deadline.map_or(0, |abs| abs.saturating_sub(now));
        let p = task.period.unwrap_or(d);
        let r = task.runtime.unwrap_or(d).min(d);
        (r, d, p)
    }

    /// `enqueue_task_dl()`.
    pub fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, now: Time) {
        let t = task.id;
        self.ready.affinity.note(task);
        let e = self.se.get_mut(t);
        if why == EnqueueReason::New {
            // A new server: its first period starts now (replenish_dl_new_period()).
            let (r, d, p) = Self::params(task, now);
            *e = DlEntity { dl_runtime: r, dl_deadline: d, dl_period: p, ..DlEntity::default() };
            e.deadline = now + d;
            e.runtime = r as i64;
        }
        e.queued = true;
        self.queued += 1;
        if e.throttled && e.replenish_at <= now {
            // Its timer fired while it slept (dl_task_timer() replenishes a task not queued).
            Self::replenish(e, now);
        }
        if why == EnqueueReason::Woken && e.reserved() && !e.throttled {
            if e.dl_deadline != e.dl_period {
                Self::check_constrained(e, now);
            }
            if !e.throttled {
                Self::update_dl_entity(e, now);
            }
        }
        if e.throttled {
            self.throttled.push(t);
            return;
        }
        let key = if e.reserved() { e.deadline as i64 } else { i64::MAX };
        self.ready.enqueue(task, key, why);
    }

    /// `dl_check_constrained_dl()`: woken after its deadline but before its next period, a
    /// constrained task waits for that period.
    fn check_constrained(e: &mut DlEntity, now: Time) {
        if e.deadline < now && now < e.next_period() {
            e.throttled = true;
            e.runtime = e.runtime.min(0);
            e.replenish_at = e.next_period();
        }
    }

    /// `update_dl_entity()`: the CBS wake-up rule.
    fn update_dl_entity(e: &mut DlEntity, now: Time) {
        if e.deadline < now || Self::overflow(e, now) {
            if e.dl_deadline != e.dl_period && e.deadline >= now {
                // update_dl_revised_wakeup(): runtime = laxity × density.
                let density = to_ratio(e.dl_deadline, e.dl_runtime);
                e.runtime = ((density as u128 * (e.deadline - now) as u128) >> BW_SHIFT) as i64;
                return;
            }
            e.deadline = now + e.dl_deadline;
            e.runtime = e.dl_runtime as i64;
        }
    }

    /// `dl_entity_overflow()`: `runtime / (deadline − now) > dl_runtime / dl_deadline`, as
    /// `(deadline − now)·dl_runtime < dl_deadline·runtime` in 1024 ns units.
    fn overflow(e: &DlEntity, now: Time) -> bool {
        let left = (e.dl_deadline >> DL_SCALE) as u128 * (e.runtime.max(0) as u64 >> DL_SCALE) as u128;
        let right = (e.deadline.saturating_sub(now) >> DL_SCALE) as u128 * (e.dl_runtime >> DL_SCALE) as u128;
        right < left
    }

    /// `replenish_dl_entity()`.
    fn replenish(e: &mut DlEntity, now: Time) {
        if e.deadline == 0 {
            e.deadline = now + e.dl_deadline;
            e.runtime = e.dl_runtime as i64;
        }
        while e.runtime <= 0 {
            e.deadline += e.dl_period;
            e.runtime += e.dl_runtime as i64;
        }
        if e.deadline < now {
            // "DL replenish lagged too much": a new period.
            e.deadline = now + e.dl_deadline;
            e.runtime = e.dl_runtime as i64;
        }
        e.throttled = false;
    }

    /// `pick_task_dl()`: the earliest deadline; it runs until its runtime is spent.
    pub fn pick(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
        let (t, _) = self.ready.pop(cpu)?;
        self.queued -= 1;
        let e = self.se.get_mut(t);
        e.queued = false;
        e.exec_start = now;
        let slice = e.reserved().then(|| e.runtime.max(1) as Dur);
        Some(Pick { task: t, slice })
    }

    /// `update_curr_dl()`: spend runtime; out of it, the task is throttled until its next period.
    pub fn charge(&mut self, t: TaskId, now: Time) {
        let e = self.se.get_mut(t);
        let ran = now.saturating_sub(e.exec_start);
        e.exec_start = now;
        if !e.reserved() {
            return;
        }
        e.runtime -= ran as i64;
        if e.runtime <= 0 {
            e.throttled = true;
            e.replenish_at = e.next_period();
            if e.replenish_at <= now {
                // start_dl_timer() fails for a time already past: replenish at once.
                Self::replenish(e, now);
            }
        }
    }

    /// The task blocks or exits: off the run queue (its server state stays for the next job).
    pub fn blocked(&mut self, t: TaskId) {
        self.dequeue(t);
    }

    pub fn dequeue(&mut self, t: TaskId) {
        let e = self.se.get_mut(t);
        if e.queued {
            e.queued = false;
            self.queued -= 1;
            self.ready.remove(t);
            self.throttled.retain(|&x| x != t);
        }
    }

    pub fn exit(&mut self, t: TaskId) {
        self.dequeue(t);
        *self.se.get_mut(t) = DlEntity::default();
    }

    /// Hand `t` (dequeued) to another CPU's queue, with its server state.
    pub fn take(&mut self, t: TaskId) -> DlEntity {
        self.dequeue(t);
        std::mem::take(self.se.get_mut(t))
    }

    /// Receive a task from another CPU's queue ([`DeadlineRq::take`]); enqueue it next.
    pub fn adopt(&mut self, t: TaskId, e: DlEntity) {
        *self.se.get_mut(t) = DlEntity { queued: false, ..e };
    }

    /// Ready (not throttled) waiting tasks, earliest deadline first.
    pub fn ready_tasks(&self) -> Vec<TaskId> {
        let mut v = self.ready.members();
        v.sort_by_key(|&t| self.deadline_of(t));
        v
    }

    /// Tasks whose replenishment is due by `now` (for [`DeadlineRq::timer`]'s caller to push).
    pub fn due(&self, now: Time) -> Vec<TaskId> {
        self.throttled.iter().copied().filter(|&t| self.se.get(t).replenish_at <= now).collect()
    }

    /// `dl_entity_preempt()`: does the queued `woken` pre-empt the running `running`?
    pub fn preempts(&self, woken: TaskId, running: TaskId) -> bool {
        let (w, r) = (self.se.get(woken), self.se.get(running));
        let key = |e: &DlEntity| if e.reserved() { e.deadline } else { Time::MAX };
        w.queued && !w.throttled && key(&w) < key(&r)
    }

    /// The deadline of the running `t` (for pre-emption by a replenished task).
    pub fn deadline_of(&self, t: TaskId) -> Time {
        let e = self.se.get(t);
        if e.reserved() {
            e.deadline
        } else {
            Time::MAX
        }
    }

    /// The next replenishment.
    #[inline]
    pub fn next_timer(&self) -> Option<Time> {
        if self.throttled.is_empty() {
            return None;
        }
        self.throttled.iter().map(|&t| self.se.get(t).replenish_at).min()
    }

    /// `dl_task_timer()`: replenish every throttled task whose time has come; queued ones
    /// become ready.
    pub fn timer(&mut self, now: Time) {
        let mut i = 0;
        while i < self.throttled.len() {
            let t = self.throttled[i];
            let e = self.se.get_mut(t);
            if e.replenish_at > now {
                i += 1;
                continue;
            }
            self.throttled.swap_remove(i);
            Self::replenish(e, now);
            let key = e.deadline as i64;
            self.ready.push_again(t, key);
        }
    }
}

/// Why `sched_setattr(SCHED_DEADLINE)` would refuse a task, or the bandwidth it was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    /// The task's index in the workload.
    pub task: usize,
    pub name: String,
    /// Its bandwidth, runtime/period in 2^-20 units.
    pub bw: u64,
    /// None = admitted; Some(reason) = refused.
    pub refused: Option<String>,
}

/// The kernel's limits for the admission test (sysctls and the fair server).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AdmissionLimits {
    /// `sched_rt_runtime_us` / `sched_rt_period_us` (ns): the share of each CPU deadline tasks
    /// may reserve in all (950 ms / 1000 ms by default).
    pub rt_runtime: Dur,
    pub rt_period: Dur,
    /// The fair deadline server's reservation per CPU (50 ms every 1000 ms in 6.18), counted in
    /// the same total (`dl_server_apply_params()` adds it); None = not counted.
    pub fair_server: Option<(Dur, Dur)>,
    /// `sched_deadline_period_min_us` / `_max_us` (100 µs and 4.194304 s by default).
    pub period_min: Dur,
    pub period_max: Dur,
}

impl Default for AdmissionLimits {
    fn default() -> Self {
        AdmissionLimits {
            rt_runtime: 950_000_000,
            rt_period: 1_000_000_000,
            fair_server: Some((50_000_000, 1_000_000_000)),
            period_min: 100_000,
            period_max: 4_194_304_000,
        }
    }
}

/// The admission test of `sched_setattr()` for every task of class `deadline`, in workload
/// order, as if each were set up in turn on a root domain of `cpus` CPUs: `__checkparam_dl()`
/// (runtime ≥ 1024 ns, runtime ≤ deadline ≤ period, period within the sysctl limits) and
/// `__dl_overflow()`: the new total of bandwidths (tasks admitted so far, the fair servers of
/// every CPU, this task) must not exceed `to_ratio(rt_period, rt_runtime) × cpus`. Pure: the
/// CLI can call it before a run. A task's deadline defaults to its period and vice versa; its
/// runtime to its deadline.
pub fn admission(w: &Workload, cpus: usize, limits: &AdmissionLimits) -> Vec<Admitted> {
    let cpus = cpus.max(1) as u64;
    let cap = to_ratio(limits.rt_period, limits.rt_runtime) * cpus;
    let mut total = limits.fair_server.map_or(0, |(r, p)| to_ratio(p, r) * cpus);
    let mut out = Vec::new();
    for (i, t) in w.tasks.iter().enumerate().filter(|(_, t)| t.class.as_deref() == Some("deadline")) {
        let (r, d, p) = params_of(t);
        let bw = to_ratio(p, r);
        let refused = check_params(r, d, p, limits).or_else(|| {
            (total + bw > cap).then(|| {
                format!(
                    "bandwidth {:.4} would bring the total to {:.4} of {:.4} ({} CPUs × {}/{} ms{})",
                    bw as f64 / (1u64 << BW_SHIFT) as f64,
                    (total + bw) as f64 / (1u64 << BW_SHIFT) as f64,
                    cap as f64 / (1u64 << BW_SHIFT) as f64,
                    cpus,
                    limits.rt_runtime as f64 / 1e6,
                    limits.rt_period as f64 / 1e6,
                    if limits.fair_server.is_some() { ", fair servers counted" } else { "" }
                )
            })
        });
        if refused.is_none() {
            total += bw;
        }
        out.push(Admitted { task: i, name: t.name.to_string(), bw, refused });
    }
    out
}

fn params_of(t: &TaskSpec) -> (Dur, Dur, Dur) {
    let d = t.deadline.or(t.period).unwrap_or(0);
    let p = t.period.or(t.deadline).unwrap_or(0);
    (t.runtime.unwrap_or(d), d, p)
}

/// `__checkparam_dl()`.
fn check_params(r: Dur, d: Dur, p: Dur, limits: &AdmissionLimits) -> Option<String> {
    if d == 0 {
        return Some("no deadline and no period".into());
    }
    if r < DL_MIN_RUNTIME {
        return Some(format!("runtime {r} ns is below {DL_MIN_RUNTIME} ns"));
    }
    if r > d {
        return Some(format!("runtime {} ms exceeds the deadline {} ms", r as f64 / 1e6, d as f64 / 1e6));
    }
    if d > p {
        return Some(format!("deadline {} ms exceeds the period {} ms", d as f64 / 1e6, p as f64 / 1e6));
    }
    if p < limits.period_min || p > limits.period_max {
        return Some(format!(
            "period {} ms is outside {}..={} ms",
            p as f64 / 1e6,
            limits.period_min as f64 / 1e6,
            limits.period_max as f64 / 1e6
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::MS;

    /// A view as the engine gives it at arrival 0 (absolute deadline = relative one).
    fn task(id: TaskId, r: Dur, d: Dur, p: Dur) -> TaskView<'static> {
        TaskView { runtime: Some(r), deadline: Some(d), period: Some(p), ..TaskView::new(id) }
    }

    /// New at 0 with R = 2, D = P = 10 ms; runs 1 ms and blocks: runtime 1 ms, deadline 10 ms.
    fn ran_one_ms() -> DeadlineRq {
        let mut q = DeadlineRq::default();
        q.enqueue(&task(0, 2 * MS, 10 * MS, 10 * MS), EnqueueReason::New, 0);
        assert_eq!((q.entity(0).deadline, q.entity(0).runtime), (10 * MS, 2 * MS as i64));
        assert_eq!(q.pick(0, 0), Some(Pick { task: 0, slice: Some(2 * MS) }));
        q.charge(0, MS);
        q.blocked(0);
        q
    }

    #[test]
    fn a_wakeup_keeps_the_server_while_its_rate_holds() {
        // Woken at 2 ms: 1 ms left for the 8 ms to the deadline, 1/8 ≤ 2/10: kept.
        // In 1024 ns units: left = (10e6 >> 10)·(1e6 >> 10) = 9765·976 = 9_530_640,
        // right = ((10e6 − 2e6) >> 10)·(2e6 >> 10) = 7812·1953 = 15_256_836: no overflow.
        let mut q = ran_one_ms();
        q.enqueue(&task(0, 2 * MS, 10 * MS, 10 * MS), EnqueueReason::Woken, 2 * MS);
        assert_eq!((q.entity(0).deadline, q.entity(0).runtime), (10 * MS, MS as i64));
        // It runs its 1 ms (2..3 ms) and is throttled until the next period at 10 ms.
        assert_eq!(q.pick(0, 2 * MS), Some(Pick { task: 0, slice: Some(MS) }));
        q.charge(0, 3 * MS);
        q.enqueue(&task(0, 2 * MS, 10 * MS, 10 * MS), EnqueueReason::SliceExpired, 3 * MS);
        assert!(q.is_throttled(0));
        assert_eq!((q.next_timer(), q.pick(0, 5 * MS)), (Some(10 * MS), None));
        // Replenished at 10 ms: runtime 0 + 2 ms, deadline 10 + 10 = 20 ms.
        q.timer(10 * MS);
        assert!(!q.is_throttled(0));
        assert_eq!((q.entity(0).deadline, q.entity(0).runtime), (20 * MS, 2 * MS as i64));
        assert_eq!(q.pick(0, 10 * MS).map(|p| p.task), Some(0));
    }

    #[test]
    fn a_wakeup_that_cannot_keep_the_rate_starts_a_new_period() {
        // Woken at 9 ms: 1 ms left for 1 ms, 1/1 > 2/10: deadline = 9 + 10 = 19 ms, runtime 2 ms.
        let mut q = ran_one_ms();
        q.enqueue(&task(0, 2 * MS, 10 * MS, 10 * MS), EnqueueReason::Woken, 9 * MS);
        assert_eq!((q.entity(0).deadline, q.entity(0).runtime), (19 * MS, 2 * MS as i64));
        // Woken after its deadline: likewise a new period.
        let mut q = ran_one_ms();
        q.enqueue(&task(0, 2 * MS, 10 * MS, 10 * MS), EnqueueReason::Woken, 12 * MS);
        assert_eq!((q.entity(0).deadline, q.entity(0).runtime), (22 * MS, 2 * MS as i64));
    }

    #[test]
    fn a_constrained_task_gets_the_revised_wakeup_rule() {
        // R = 1, D = 5, P = 10 ms; runs 0.5 ms and blocks: 0.5 ms left, deadline 5 ms.
        let v = task(0, MS, 5 * MS, 10 * MS);
        let mut q = DeadlineRq::default();
        q.enqueue(&v, EnqueueReason::New, 0);
        q.pick(0, 0);
        q.charge(0, MS / 2);
        q.blocked(0);
        // Woken at 3 ms: 0.5/2 > 1/5, deadline ahead: runtime = laxity × density
        // = 2 ms × ⌊2^20/5⌋ / 2^20 = 2_000_000 · 209_715 >> 20 = 399_999 ns; deadline kept.
        q.enqueue(&v, EnqueueReason::Woken, 3 * MS);
        assert_eq!((q.entity(0).deadline, q.entity(0).runtime), (5 * MS, 399_999));
        q.blocked(0);
        // Woken at 7 ms, after its deadline but before its next period (5 − 5 + 10 = 10 ms):
        // throttled until 10 ms, then runtime 0 + 1 ms and deadline 5 + 10 = 15 ms.
        q.enqueue(&v, EnqueueReason::Woken, 7 * MS);
        assert!(q.is_throttled(0));
        assert_eq!(q.next_timer(), Some(10 * MS));
        q.timer(10 * MS);
        assert_eq!((q.entity(0).deadline, q.entity(0).runtime), (15 * MS, MS as i64));
    }

    #[test]
    fn an_overrun_is_carried_into_the_next_periods() {
        // R = 2, D = P = 10 ms, noticed only at a 4 ms tick: runtime 2 − 4 = −2 ms. The timer at
        // the next period (10 ms) adds one period: −2 + 2 = 0, still not positive, so another:
        // runtime 2 ms, deadline 10 + 10 + 10 = 30 ms.
        let v = task(0, 2 * MS, 10 * MS, 10 * MS);
        let mut q = DeadlineRq::default();
        q.enqueue(&v, EnqueueReason::New, 0);
        q.pick(0, 0);
        q.charge(0, 4 * MS);
        q.enqueue(&v, EnqueueReason::SliceExpired, 4 * MS);
        assert_eq!(q.next_timer(), Some(10 * MS));
        q.timer(10 * MS);
        assert_eq!((q.entity(0).deadline, q.entity(0).runtime), (30 * MS, 2 * MS as i64));
    }

    #[test]
    fn the_earlier_deadline_preempts() {
        let mut q = DeadlineRq::default();
        q.enqueue(&task(0, MS, 10 * MS, 10 * MS), EnqueueReason::New, 0);
        q.pick(0, 0);
        q.enqueue(&TaskView { deadline: Some(6 * MS), ..task(1, MS, 5 * MS, 10 * MS) }, EnqueueReason::New, MS);
        q.enqueue(&TaskView { deadline: Some(21 * MS), ..task(2, MS, 20 * MS, 20 * MS) }, EnqueueReason::New, MS);
        assert!(q.preempts(1, 0), "deadline 6 ms < 10 ms");
        assert!(!q.preempts(2, 0), "deadline 21 ms > 10 ms");
    }

    #[test]
    fn admission_counts_bandwidth_against_95_percent_of_each_cpu() {
        let dl = |name: &str, r: Dur, d: Dur, p: Dur| {
            let mut t = TaskSpec::cpu(name, 0, MS);
            t.class = Some("deadline".into());
            t.runtime = Some(r);
            t.deadline = Some(d);
            t.period = Some(p);
            t
        };
        let w = Workload {
            cpus: Some(2),
            tasks: vec![
                dl("a", 5 * MS, 10 * MS, 10 * MS),
                TaskSpec::cpu("fair", 0, MS),
                dl("b", 8 * MS, 10 * MS, 10 * MS),
                dl("c", 5 * MS, 10 * MS, 10 * MS),
                dl("d", 3 * MS, 10 * MS, 10 * MS),
                dl("e", 3 * MS, 2 * MS, 10 * MS),
                dl("f", MS, 10 * MS, 5_000 * MS),
            ],
        };
        // Capacity: to_ratio(1 s, 0.95 s) = ⌊0.95·2^20⌋ = 996_147 per CPU, ×2 = 1_992_294.
        // Fair servers: to_ratio(1 s, 50 ms) = 52_428 per CPU, ×2 = 104_856 taken already.
        // a: 0.5 -> 524_288, total 629_144; b: 0.8 -> 838_860, total 1_468_004;
        // c: 524_288 would make 1_992_292 <= 1_992_294: admitted (just);
        // d: 0.3 -> 314_572 would make 2_306_864: refused.
        let r = admission(&w, 2, &AdmissionLimits::default());
        let got: Vec<(&str, u64, bool)> = r.iter().map(|a| (a.name.as_str(), a.bw, a.refused.is_none())).collect();
        assert_eq!(
            got,
            vec![
                ("a", 524_288, true),
                ("b", 838_860, true),
                ("c", 524_288, true),
                ("d", 314_572, false),
                ("e", 314_572, false),
                ("f", 209, false),
            ]
        );
        assert_eq!(r[0].task, 0);
        assert!(r[3].refused.as_deref().unwrap().contains("total"), "{:?}", r[3].refused);
        assert!(r[4].refused.as_deref().unwrap().contains("exceeds the deadline"));
        assert!(r[5].refused.as_deref().unwrap().contains("outside"));
        // One CPU (capacity 996_147, its fair server 52_428): a (0.5) fits, b (0.8) does not.
        let r = admission(&w, 1, &AdmissionLimits::default());
        assert_eq!((r[0].refused.is_none(), r[1].refused.is_none()), (true, false));
        // The fair server's 5% matters: 0.5 + 0.45 (471_859) = 996_147 fits exactly without it,
        // and 52_428 too many with it.
        let w = Workload {
            cpus: Some(1),
            tasks: vec![dl("a", 5 * MS, 10 * MS, 10 * MS), dl("h", 4_500_000, 10 * MS, 10 * MS)],
        };
        let with = admission(&w, 1, &AdmissionLimits::default());
        let without = admission(&w, 1, &AdmissionLimits { fair_server: None, ..AdmissionLimits::default() });
        assert_eq!((with[1].bw, with[1].refused.is_none(), without[1].refused.is_none()), (471_859, false, true));
    }
}
