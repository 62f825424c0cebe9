//! The processor demand test for pre-emptive EDF on one CPU (S. Baruah, A. Mok and L. Rosier,
//! "Preemptively Scheduling Hard-Real-Time Sporadic Tasks on One Processor", RTSS 1990): the
//! jobs that must both be released and be due within `[0, t]` need
//! `dbf(t) = Σ_i max(0, ⌊(t − D_i)/T_i⌋ + 1)·C_i`, and EDF meets every deadline if and only if
//! `U ≤ 1` and `dbf(t) ≤ t` at every absolute deadline `t`.
//!
//! With `U ≤ 1` the deadlines to check stop at the length `L` of the synchronous busy period,
//! the least `L = Σ ⌈L/T_i⌉ C_i` (M. Spuri, INRIA RR-2772, 1996; L. George, N. Rivierre and
//! M. Spuri, INRIA RR-2966, 1996): no longer than the hyperperiod, and often much shorter. The
//! test is exact for synchronous releases (and for sporadic tasks); with offsets it is
//! sufficient.

use super::bounds::utilisation_cmp_one;
use super::{ms, Kind, Outcome, PeriodicTask, Verdict};
use crate::policy::Dur;
use serde::Serialize;
use std::cmp::Ordering;

/// Deadlines checked (and busy-period steps taken) before giving up.
pub const POINT_LIMIT: u64 = 10_000_000;

/// A deadline where the demand exceeds the time available.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Overload {
    /// Absolute deadline (ns from the common release).
    pub t: Dur,
    /// dbf(t) (ns).
    pub demand: Dur,
}

/// The demand test's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DemandResult {
    /// `None`: gave up (more than [`POINT_LIMIT`] points or steps).
    pub schedulable: Option<bool>,
    /// U > 1 (then nothing else is checked).
    pub overutilised: bool,
    /// Length of the synchronous busy period: deadlines up to here were checked.
    pub busy_period: Option<Dur>,
    pub points_checked: u64,
    /// The first deadline where dbf(t) > t.
    pub first_overload: Option<Overload>,
}

/// dbf(t).
pub fn dbf(ts: &[PeriodicTask], t: Dur) -> Dur {
    ts.iter().filter(|x| t >= x.d).fold(0u64, |s, x| s.saturating_add(((t - x.d) / x.t + 1).saturating_mul(x.c)))
}

/// The least `L = Σ ⌈L/T_i⌉ C_i` (needs U ≤ 1); None past [`POINT_LIMIT`] steps.
pub fn busy_period(ts: &[PeriodicTask]) -> Option<Dur> {
    let mut l: Dur = ts.iter().map(|x| x.c).sum();
    for _ in 0..POINT_LIMIT {
        let next = ts.iter().fold(0u64, |s, x| s.saturating_add(l.div_ceil(x.t).saturating_mul(x.c)));
        if next == l {
            return Some(l);
        }
        l = next;
    }
    None
}

/// Run the test.
pub fn edf_demand(ts: &[PeriodicTask]) -> DemandResult {
    let mut r = DemandResult {
        schedulable: None,
        overutilised: false,
        busy_period: None,
        points_checked: 0,
        first_overload: None,
    };
    if utilisation_cmp_one(ts) == Ordering::Greater {
        r.overutilised = true;
        r.schedulable = Some(false);
        return r;
    }
    let Some(l) = busy_period(ts) else { return r };
    r.busy_period = Some(l);
    // Walk the deadlines ≤ L in increasing order, one cursor per task.
    let mut next: Vec<Dur> = ts.iter().map(|x| x.d).collect();
    while let Some(t) = next.iter().copied().filter(|&d| d <= l).min() {
        for (k, x) in ts.iter().enumerate() {
            if next[k] == t {
                next[k] = next[k].saturating_add(x.t);
            }
        }
        r.points_checked += 1;
        let demand = dbf(ts, t);
        if demand > t {
            r.first_overload = Some(Overload { t, demand });
            r.schedulable = Some(false);
            return r;
        }
        if r.points_checked >= POINT_LIMIT {
            return r;
        }
    }
    r.schedulable = Some(true);
    r
}

pub fn verdict(r: &DemandResult, synchronous: bool) -> Verdict {
    let kind = if synchronous { Kind::Exact } else { Kind::Sufficient };
    let (outcome, detail) = match (r.schedulable, r.first_overload, r.overutilised) {
        (Some(false), _, true) => (Outcome::Unschedulable, "U > 1".to_string()),
        (Some(false), Some(o), _) => (
            if synchronous { Outcome::Unschedulable } else { Outcome::Inconclusive },
            format!("dbf({}) = {} > {}", ms(o.t), ms(o.demand), ms(o.t)),
        ),
        (Some(true), _, _) => (
            Outcome::Schedulable,
            format!(
                "dbf(t) ≤ t at all {} deadlines up to the busy period L = {}",
                r.points_checked,
                ms(r.busy_period.unwrap_or(0))
            ),
        ),
        _ => (Outcome::Inconclusive, format!("gave up after {POINT_LIMIT} points")),
    };
    Verdict { test: "processor demand", policy: "edf", kind, outcome, detail }
}
