//! Exact response-time analysis for pre-emptive fixed priorities on one CPU: the worst response
//! of task `i` when every task releases a job at the same instant (the critical instant),
//! `R = C_i + Σ_{j ∈ hp(i)} ⌈R/T_j⌉ C_j` iterated from below to its least fixed point
//! (M. Joseph and P. Pandya, "Finding Response Times in a Real-Time System", The Computer
//! Journal 29(5), 1986; N. Audsley, A. Burns, M. Richardson, K. Tindell and A. Wellings,
//! "Applying new scheduling theory to static priority pre-emptive scheduling", Software
//! Engineering Journal 8(5), 1993).
//!
//! So that the bound is the true worst case even when a job overruns its period (D > T, or a
//! late job in an overloaded set — the engine lets a late job run on and start the next after
//! it), every job of the level-i busy period is examined (J. P. Lehoczky, "Fixed Priority
//! Scheduling of Periodic Task Sets with Arbitrary Deadlines", RTSS 1990; K. Tindell, A. Burns
//! and A. Wellings, Real-Time Systems 6(2), 1994): job `q` (0-based) completes at the least
//! `w = (q+1)·C_i + Σ_{j ∈ hp(i)} ⌈w/T_j⌉ C_j`, its response is `w − q·T_i`, and the busy period
//! ends with the first job for which `w ≤ (q+1)·T_i`. For `q = 0` alone this is the classic
//! formula. When the tasks at or above `i`'s priority have `U > 1` the busy period never ends and
//! the response is unbounded.
//!
//! Priority orders match the policies: `rm` (`policies/rm.rs`) orders by the key
//! `(period, priority)`, `prio-preempt` (`policies/prio.rs`, without aging) by `priority`, a lower
//! key first; both pre-empt only for a strictly lower key and run equal keys first come, first
//! served. A task whose key equals another's is delayed by it or not depending on which job came
//! first, so equal-key tasks are counted as higher priority for each other: the bound is then
//! safe but may exceed what any schedule shows, and it is listed in `ties`.

use super::bounds::utilisation_cmp_one;
use super::{ms, Kind, Outcome, PeriodicTask, Verdict};
use crate::policy::Dur;
use serde::Serialize;
use std::cmp::Ordering;
use std::sync::Arc;

/// Fixed-point steps allowed per task before giving up (each step takes in at least one more
/// job, so this bounds the jobs of the busy period looked at).
pub const STEP_LIMIT: u64 = 1_000_000;

/// How a task's response time compares with its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RtaOutcome {
    /// Worst response ≤ D.
    MeetsDeadline,
    /// Worst response > D: unschedulable.
    ExceedsDeadline,
    /// The tasks at or above its priority need more than the CPU: no bound.
    Unbounded,
    /// [`STEP_LIMIT`] reached before the busy period ended.
    GaveUp,
}

/// One task's response-time bound under one priority order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RtaBound {
    pub outcome: RtaOutcome,
    /// Worst-case response time (ns): exact at the critical instant unless `ties` is non-empty.
    pub wcrt: Option<Dur>,
    /// Jobs of the level-i busy period examined.
    pub jobs_examined: u64,
    /// Other tasks with the same priority key, counted as higher priority.
    pub ties: Vec<Arc<str>>,
}

impl RtaBound {
    pub fn schedulable(&self) -> bool {
        self.outcome == RtaOutcome::MeetsDeadline
    }

    /// `R = 10 ms ≤ D = 10 ms`, `unschedulable: exceeds D (R = 8 ms > D = 7 ms)`, ….
    pub fn describe(&self, d: Dur) -> String {
        match (self.outcome, self.wcrt) {
            (RtaOutcome::MeetsDeadline, Some(r)) => format!("R = {} ≤ D = {}", ms(r), ms(d)),
            (RtaOutcome::ExceedsDeadline, Some(r)) => {
                format!("unschedulable: exceeds D (R = {} > D = {})", ms(r), ms(d))
            }
            (RtaOutcome::ExceedsDeadline, None) => "unschedulable: exceeds D".into(),
            (RtaOutcome::Unbounded, _) => "unschedulable: unbounded (U of its priority and above > 1)".into(),
            _ => format!("unknown: gave up after {STEP_LIMIT} steps"),
        }
    }
}

/// Response times under `rm`: key `(period, priority)`.
pub fn rm_response_times(ts: &[PeriodicTask]) -> Vec<RtaBound> {
    response_times(ts, |t| (t.t, t.priority))
}

/// Response times under `prio-preempt` without aging: key `priority`.
pub fn prio_response_times(ts: &[PeriodicTask]) -> Vec<RtaBound> {
    response_times(ts, |t| t.priority)
}

/// Response times for any fixed-priority order: a lower `key` is a higher priority.
pub fn response_times<K: Ord>(ts: &[PeriodicTask], key: impl Fn(&PeriodicTask) -> K) -> Vec<RtaBound> {
    let keys: Vec<K> = ts.iter().map(&key).collect();
    (0..ts.len())
        .map(|i| {
            let hp: Vec<&PeriodicTask> =
                (0..ts.len()).filter(|&j| j != i && keys[j] <= keys[i]).map(|j| &ts[j]).collect();
            let ties = (0..ts.len()).filter(|&j| j != i && keys[j] == keys[i]).map(|j| ts[j].name.clone()).collect();
            RtaBound { ties, ..task_response(&ts[i], &hp) }
        })
        .collect()
}

/// `Σ_{j ∈ hp} ⌈w/T_j⌉ C_j` (saturating).
fn interference(w: Dur, hp: &[&PeriodicTask]) -> Dur {
    hp.iter().fold(0u64, |s, j| s.saturating_add(w.div_ceil(j.t).saturating_mul(j.c)))
}

/// The worst response of `task` below the tasks `hp`, over its level-i busy period.
fn task_response(task: &PeriodicTask, hp: &[&PeriodicTask]) -> RtaBound {
    let mut bound = RtaBound { outcome: RtaOutcome::Unbounded, wcrt: None, jobs_examined: 0, ties: vec![] };
    if utilisation_cmp_one(hp.iter().copied().chain([task])) == Ordering::Greater {
        return bound;
    }
    let (c, t) = (task.c, task.t);
    let mut steps = 0u64;
    let mut worst = 0;
    // Job 0 starts from C_i + Σ C_j (every job released at 0 must run); job q from job q−1's
    // completion + C_i, which is at most its least fixed point.
    let mut w = c.saturating_add(hp.iter().map(|j| j.c).sum());
    for q in 0u64.. {
        let base = (q + 1).saturating_mul(c);
        loop {
            let next = base.saturating_add(interference(w, hp));
            if next == w {
                break;
            }
            w = next;
            steps += 1;
            if steps > STEP_LIMIT || w == Dur::MAX {
                bound.outcome = RtaOutcome::GaveUp;
                return bound;
            }
        }
        bound.jobs_examined = q + 1;
        worst = worst.max(w - q * t);
        if w <= (q + 1).saturating_mul(t) {
            break;
        }
        w = w.saturating_add(c);
    }
    bound.wcrt = Some(worst);
    bound.outcome = if worst <= task.d { RtaOutcome::MeetsDeadline } else { RtaOutcome::ExceedsDeadline };
    bound
}

/// The task set's verdict for one priority order.
pub fn verdict(bounds: &[RtaBound], policy: &'static str, synchronous: bool) -> Verdict {
    let test = "response-time analysis";
    let tied = bounds.iter().any(|b| !b.ties.is_empty());
    let kind = if tied || !synchronous { Kind::Sufficient } else { Kind::Exact };
    let late =
        bounds.iter().filter(|b| matches!(b.outcome, RtaOutcome::ExceedsDeadline | RtaOutcome::Unbounded)).count();
    let gave_up = bounds.iter().any(|b| b.outcome == RtaOutcome::GaveUp);
    let mut why = Vec::new();
    if tied {
        why.push("equal priority keys are counted as higher priority for each other");
    }
    if !synchronous {
        why.push("first releases differ; the critical instant is assumed");
    }
    let (outcome, mut detail) = if late > 0 {
        let o = if kind == Kind::Exact { Outcome::Unschedulable } else { Outcome::Inconclusive };
        (o, format!("{late} of {} tasks can exceed their deadline", bounds.len()))
    } else if gave_up {
        (Outcome::Inconclusive, format!("gave up after {STEP_LIMIT} steps on some task"))
    } else {
        (Outcome::Schedulable, format!("every task's worst response is within its deadline ({} tasks)", bounds.len()))
    };
    if !why.is_empty() {
        detail = format!("{detail}; {}", why.join("; "));
    }
    Verdict { test, policy, kind, outcome, detail }
}
