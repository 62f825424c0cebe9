//! Utilisation tests: `U = Σ C/T ≤ 1` (necessary on one CPU), the Liu–Layland bound for rate
//! monotonic, `U ≤ n(2^{1/n} − 1)` (C. L. Liu and J. W. Layland, "Scheduling Algorithms for
//! Multiprogramming in a Hard-Real-Time Environment", JACM 20(1), 1973, Theorem 5), and the
//! hyperbolic bound `Π (U_i + 1) ≤ 2` (E. Bini, G. C. Buttazzo and G. M. Buttazzo, "Rate
//! Monotonic Analysis: the Hyperbolic Bound", IEEE Trans. Computers 52(7), 2003), which admits
//! every set the Liu–Layland bound admits and more. Both bounds are sufficient only, and are
//! proved for deadlines equal to periods; they still hold when every `D ≥ T` (later deadlines
//! only help) but not when some `D < T`, where they are reported not applicable.
//!
//! `U ≤ 1` and the hyperbolic product are compared exactly in integers where 128 bits hold the
//! fractions, so a set at exactly `U = 1` or `Π = 2` is not decided by rounding.

use super::{ms, Kind, Outcome, PeriodicTask, Verdict};
use crate::policy::Dur;
use std::cmp::Ordering;

/// Σ C/T as a float (for reports).
pub fn utilisation(ts: &[PeriodicTask]) -> f64 {
    ts.iter().map(|t| t.c as f64 / t.t as f64).sum()
}

/// `n(2^{1/n} − 1)`: 1 for one task, 0.828… for two, → ln 2 ≈ 0.693.
pub fn liu_layland_bound(n: usize) -> f64 {
    let n = n as f64;
    n * (2f64.powf(1.0 / n) - 1.0)
}

/// lcm of the periods; None on overflow.
pub fn hyperperiod(ts: &[PeriodicTask]) -> Option<Dur> {
    ts.iter().try_fold(1u64, |h, t| (h / gcd(h as u128, t.t as u128) as u64).checked_mul(t.t))
}

pub(crate) fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `a/b + c/d` in lowest terms; None on overflow.
fn add(a: (u128, u128), b: (u128, u128)) -> Option<(u128, u128)> {
    let g = gcd(a.1, b.1);
    let den = (a.1 / g).checked_mul(b.1)?;
    let num = a.0.checked_mul(b.1 / g)?.checked_add(b.0.checked_mul(a.1 / g)?)?;
    let r = gcd(num, den).max(1);
    Some((num / r, den / r))
}

/// `a/b · c/d` in lowest terms; None on overflow.
fn mul(a: (u128, u128), b: (u128, u128)) -> Option<(u128, u128)> {
    let (g1, g2) = (gcd(a.0, b.1).max(1), gcd(b.0, a.1).max(1));
    let num = (a.0 / g1).checked_mul(b.0 / g2)?;
    let den = (a.1 / g2).checked_mul(b.1 / g1)?;
    Some((num, den))
}

/// `Σ C/T` of `ts` compared with 1: exact when the sum fits 128-bit fractions, else in floats.
pub fn utilisation_cmp_one<'a>(ts: impl IntoIterator<Item = &'a PeriodicTask> + Clone) -> Ordering {
    let exact = ts.clone().into_iter().try_fold((0u128, 1u128), |s, t| add(s, (t.c as u128, t.t as u128)));
    match exact {
        Some((num, den)) => num.cmp(&den),
        None => ts.into_iter().map(|t| t.c as f64 / t.t as f64).sum::<f64>().total_cmp(&1.0),
    }
}

/// `Π (C/T + 1)` compared with 2, exact where it fits.
pub fn hyperbolic_cmp_two(ts: &[PeriodicTask]) -> Ordering {
    let exact = ts.iter().try_fold((1u128, 1u128), |p, t| mul(p, (t.c as u128 + t.t as u128, t.t as u128)));
    match exact {
        Some((num, den)) => num.cmp(&den.saturating_mul(2)),
        None => ts.iter().map(|t| t.c as f64 / t.t as f64 + 1.0).product::<f64>().total_cmp(&2.0),
    }
}

/// The bounds apply when no deadline is shorter than its period.
fn bounds_apply(ts: &[PeriodicTask]) -> Option<&PeriodicTask> {
    ts.iter().find(|t| t.d < t.t)
}

pub fn utilisation_verdict(ts: &[PeriodicTask]) -> Verdict {
    let u = utilisation(ts);
    let over = utilisation_cmp_one(ts) == Ordering::Greater;
    Verdict {
        test: "utilisation U ≤ 1",
        policy: "any",
        kind: Kind::Necessary,
        outcome: if over { Outcome::Unschedulable } else { Outcome::Inconclusive },
        detail: format!("U = {u:.4}{}", if over { " > 1: no policy can meet every deadline" } else { " ≤ 1" }),
    }
}

pub fn liu_layland_verdict(ts: &[PeriodicTask]) -> Verdict {
    let (u, b) = (utilisation(ts), liu_layland_bound(ts.len()));
    let v =
        |outcome, detail| Verdict {
            test: "Liu–Layland bound", policy: "rm", kind: Kind::Sufficient, outcome, detail
        };
    if let Some(t) = bounds_apply(ts) {
        return v(Outcome::NotApplicable, format!("{}: D = {} < T = {}", t.name, ms(t.d), ms(t.t)));
    }
    if u <= b {
        v(Outcome::Schedulable, format!("U = {u:.4} ≤ n(2^(1/n) − 1) = {b:.4} (n = {})", ts.len()))
    } else {
        v(Outcome::Inconclusive, format!("U = {u:.4} > n(2^(1/n) − 1) = {b:.4} (n = {})", ts.len()))
    }
}

pub fn hyperbolic_verdict(ts: &[PeriodicTask]) -> Verdict {
    let p: f64 = ts.iter().map(|t| t.c as f64 / t.t as f64 + 1.0).product();
    let v =
        |outcome, detail| Verdict { test: "hyperbolic bound", policy: "rm", kind: Kind::Sufficient, outcome, detail };
    if let Some(t) = bounds_apply(ts) {
        return v(Outcome::NotApplicable, format!("{}: D = {} < T = {}", t.name, ms(t.d), ms(t.t)));
    }
    if hyperbolic_cmp_two(ts) != Ordering::Greater {
        v(Outcome::Schedulable, format!("Π(U_i + 1) = {p:.4} ≤ 2"))
    } else {
        v(Outcome::Inconclusive, format!("Π(U_i + 1) = {p:.4} > 2"))
    }
}
