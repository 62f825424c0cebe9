//! Verdicts that respect the run-to-run spread: a difference between two measured samples, or
//! an agreement within a tolerance, is claimed only when the 95% confidence interval of the
//! difference of their means (Welch) says so; otherwise the verdict is `inconclusive` and says
//! how many trials per side would resolve a difference of the size seen.

use crate::section::{ClaimKind, Outcome, Verdict};
use crate::stats::{mean, t_975};

/// The difference of two sample means with its 95% confidence half-width (Welch's t with the
/// Welch–Satterthwaite degrees of freedom).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Difference {
    /// mean(a) − mean(b).
    pub diff: f64,
    /// Half-width of its 95% confidence interval; infinite with fewer than 2 trials a side.
    pub ci95: f64,
    pub n_a: usize,
    pub n_b: usize,
}

fn variance(xs: &[f64]) -> f64 {
    let m = mean(xs);
    xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (xs.len() - 1) as f64
}

impl Difference {
    /// Compare sample `a` with sample `b`.
    pub fn of(a: &[f64], b: &[f64]) -> Self {
        let (n_a, n_b) = (a.len(), b.len());
        let diff = mean(a) - mean(b);
        if n_a < 2 || n_b < 2 {
            return Difference { diff, ci95: f64::INFINITY, n_a, n_b };
        }
        let (va, vb) = (variance(a) / n_a as f64, variance(b) / n_b as f64);
        let se2 = va + vb;
        let ci95 = if se2 == 0.0 {
            0.0
        } else {
            let df = se2 * se2 / (va * va / (n_a - 1) as f64 + vb * vb / (n_b - 1) as f64);
            t_975(df.floor().max(1.0) as usize) * se2.sqrt()
        };
        Difference { diff, ci95, n_a, n_b }
    }

    /// Is the difference beyond the spread (the interval excludes 0)?
    pub fn resolved(&self) -> bool {
        self.diff.abs() > self.ci95
    }

    /// Trials per side that would shrink the interval below the difference seen (it shrinks as
    /// 1/√n), or None when there is no difference to resolve or too few trials to tell.
    pub fn trials_to_resolve(&self) -> Option<usize> {
        if self.diff == 0.0 || !self.ci95.is_finite() {
            return None;
        }
        let n = self.n_a.max(self.n_b) as f64;
        Some((n * (self.ci95 / self.diff.abs()).powi(2)).ceil() as usize + 1)
    }

    /// "a − b = d ± h (95%, n = 5 and 5)" in the given unit.
    pub fn describe(&self, unit: &str) -> String {
        format!("difference {:+.4} ± {:.4}{unit} (95%, n = {} and {})", self.diff, self.ci95, self.n_a, self.n_b)
    }

    fn need(&self) -> String {
        match self.trials_to_resolve() {
            _ if !self.ci95.is_finite() => "; at least 2 trials a side are needed to judge".into(),
            Some(n) => format!("; about {n} trials a side would resolve a difference this size"),
            None => "; no difference was seen".into(),
        }
    }
}

/// The claim "a is smaller than b" (`a_name` and `b_name` say what they are): reproduced when
/// the difference is beyond the spread and negative, differs when beyond it and positive,
/// inconclusive otherwise.
pub fn less(kind: ClaimKind, claim: impl Into<String>, a: (&str, &[f64]), b: (&str, &[f64]), unit: &str) -> Verdict {
    let d = Difference::of(a.1, b.1);
    let detail = format!("{} {:.4}{unit} vs {} {:.4}{unit}: {}", a.0, mean(a.1), b.0, mean(b.1), d.describe(unit));
    if !d.resolved() {
        return Verdict::inconclusive(kind, claim, format!("{detail}: within the spread{}", d.need()));
    }
    judged(kind, claim, d.diff < 0.0, detail)
}

/// The claim "a and b agree within `tolerance`" (same unit): reproduced when the whole
/// interval of the difference lies inside ±tolerance, differs when it lies wholly outside,
/// inconclusive otherwise.
pub fn agree(
    kind: ClaimKind,
    claim: impl Into<String>,
    a: (&str, &[f64]),
    b: (&str, &[f64]),
    tolerance: f64,
    unit: &str,
) -> Verdict {
    let d = Difference::of(a.1, b.1);
    let detail = format!(
        "{} {:.4}{unit} vs {} {:.4}{unit}: {}, tolerance ±{tolerance}{unit}",
        a.0,
        mean(a.1),
        b.0,
        mean(b.1),
        d.describe(unit)
    );
    if d.diff.abs() + d.ci95 <= tolerance {
        judged(kind, claim, true, detail)
    } else if d.diff.abs() - d.ci95 > tolerance {
        judged(kind, claim, false, detail)
    } else {
        Verdict::inconclusive(kind, claim, format!("{detail}: the interval straddles the tolerance"))
    }
}

/// The claim "the quantity measured as `xs` (one value per trial) is below `limit`": judged
/// only when the 95% interval of its mean lies wholly on one side of the limit.
pub fn below(kind: ClaimKind, claim: impl Into<String>, xs: &[f64], limit: f64, unit: &str) -> Verdict {
    against_limit(kind, claim, xs, limit, unit, true)
}

/// The claim "the quantity measured as `xs` (one value per trial) is at least `limit`": judged
/// only when the 95% interval of its mean lies wholly on one side of the limit.
pub fn at_least(kind: ClaimKind, claim: impl Into<String>, xs: &[f64], limit: f64, unit: &str) -> Verdict {
    against_limit(kind, claim, xs, limit, unit, false)
}

fn against_limit(
    kind: ClaimKind,
    claim: impl Into<String>,
    xs: &[f64],
    limit: f64,
    unit: &str,
    below: bool,
) -> Verdict {
    let m = crate::stats::MeanCi::of(xs);
    let ci = if xs.len() < 2 { f64::INFINITY } else { m.ci95 };
    let detail = format!("mean {:.4}{unit} ± {ci:.4} (95%, n = {}) against {limit}{unit}", m.mean, xs.len());
    if m.mean + ci < limit {
        judged(kind, claim, below, detail)
    } else if m.mean - ci >= limit {
        judged(kind, claim, !below, detail)
    } else if xs.len() < 2 {
        Verdict::inconclusive(kind, claim, format!("{detail}: one trial has no spread to judge by"))
    } else {
        Verdict::inconclusive(kind, claim, format!("{detail}: the interval straddles the limit"))
    }
}

fn judged(kind: ClaimKind, claim: impl Into<String>, held: bool, detail: String) -> Verdict {
    let outcome = match (kind, held) {
        (ClaimKind::SeedClaim | ClaimKind::PublishedNumber, true) => Outcome::Reproduced,
        (ClaimKind::SeedClaim | ClaimKind::PublishedNumber, false) => Outcome::Differs,
        (ClaimKind::Identity, true) => Outcome::Fact,
        (_, true) => Outcome::Met,
        (_, false) => Outcome::NotMet,
    };
    Verdict::new(kind, claim, outcome, detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn means_closer_than_their_spread_are_inconclusive() {
        // The case: 0.514 s against 0.516 s, each with a few ms of noise.
        let delta = [0.510, 0.518, 0.512, 0.516, 0.514];
        let control = [0.520, 0.512, 0.518, 0.514, 0.516];
        let v = less(ClaimKind::SeedClaim, "delta uses less CPU", ("delta", &delta), ("control", &control), " s");
        assert_eq!(v.outcome, Outcome::Inconclusive, "{v:?}");
        assert!(v.detail.contains("trials a side would resolve"), "{}", v.detail);
        assert_eq!(v.kind, ClaimKind::SeedClaim);
    }

    #[test]
    fn a_clear_difference_gets_a_verdict_either_way() {
        let fast = [1.0, 1.1, 0.9, 1.05, 0.95];
        let slow = [2.0, 2.1, 1.9, 2.05, 1.95];
        let v = less(ClaimKind::SeedClaim, "fast is faster", ("fast", &fast), ("slow", &slow), " s");
        assert_eq!(v.outcome, Outcome::Reproduced, "{v:?}");
        let v = less(ClaimKind::SeedClaim, "slow is faster", ("slow", &slow), ("fast", &fast), " s");
        assert_eq!(v.outcome, Outcome::Differs, "{v:?}");
        let v = less(ClaimKind::Goal, "fast under slow", ("fast", &fast), ("slow", &slow), " s");
        assert_eq!(v.outcome, Outcome::Met, "{v:?}");
    }

    #[test]
    fn welch_interval_by_hand() {
        // a: mean 2, variance 1 (n 3); b: mean 0, variance 1 (n 3). se² = 1/3 + 1/3 = 2/3,
        // df = (2/3)² / ((1/9)/2 · 2) = 4 → t = 2.776; half-width 2.776 · √(2/3) = 2.2666.
        let d = Difference::of(&[1.0, 2.0, 3.0], &[-1.0, 0.0, 1.0]);
        assert_eq!(d.diff, 2.0);
        assert!((d.ci95 - 2.776 * (2.0f64 / 3.0).sqrt()).abs() < 1e-9, "{d:?}");
        assert!(!d.resolved());
        // (2.2666 / 2)² · 3 = 3.85 → 4, + 1.
        assert_eq!(d.trials_to_resolve(), Some(5));
    }

    #[test]
    fn one_trial_a_side_cannot_be_judged() {
        let v = less(ClaimKind::SeedClaim, "x", ("a", &[1.0]), ("b", &[2.0]), "");
        assert_eq!(v.outcome, Outcome::Inconclusive);
        assert!(v.detail.contains("at least 2 trials"), "{}", v.detail);
    }

    #[test]
    fn below_a_limit_needs_the_interval_below_it() {
        assert_eq!(below(ClaimKind::SeedClaim, "x < 2", &[1.8, 1.82, 1.79], 2.0, "×").outcome, Outcome::Reproduced);
        assert_eq!(below(ClaimKind::SeedClaim, "x < 2", &[2.3, 2.32, 2.29], 2.0, "×").outcome, Outcome::Differs);
        assert_eq!(below(ClaimKind::SeedClaim, "x < 2", &[1.9, 2.1], 2.0, "×").outcome, Outcome::Inconclusive);
        assert_eq!(below(ClaimKind::SeedClaim, "x < 2", &[1.5], 2.0, "×").outcome, Outcome::Inconclusive);
    }

    #[test]
    fn at_least_a_limit_needs_the_interval_at_or_above_it() {
        // The sweep's scaling goal: 2 jobs against 1, at least 1.8×.
        assert_eq!(at_least(ClaimKind::Goal, "≥ 1.8×", &[1.90, 1.92, 1.91], 1.8, "×").outcome, Outcome::Met);
        assert_eq!(at_least(ClaimKind::Goal, "≥ 1.8×", &[1.60, 1.62, 1.59], 1.8, "×").outcome, Outcome::NotMet);
        let straddle = at_least(ClaimKind::Goal, "≥ 1.8×", &[1.90, 1.90, 1.73, 1.88, 1.81, 1.78, 1.83], 1.8, "×");
        assert_eq!(straddle.outcome, Outcome::Inconclusive, "{}", straddle.detail);
        assert_eq!(at_least(ClaimKind::Goal, "≥ 1.8×", &[2.5], 1.8, "×").outcome, Outcome::Inconclusive);
    }

    #[test]
    fn agreement_needs_the_whole_interval_inside_the_tolerance() {
        let a = [10.0, 10.2, 9.8, 10.1, 9.9];
        let b = [10.05, 10.1, 9.95, 10.0, 9.9];
        assert_eq!(agree(ClaimKind::SeedClaim, "a ≈ b", ("a", &a), ("b", &b), 0.5, "").outcome, Outcome::Reproduced);
        assert_eq!(agree(ClaimKind::SeedClaim, "a ≈ b", ("a", &a), ("b", &b), 0.1, "").outcome, Outcome::Inconclusive);
        let c = [12.0, 12.2, 11.8, 12.1, 11.9];
        assert_eq!(agree(ClaimKind::SeedClaim, "a ≈ c", ("a", &a), ("c", &c), 0.5, "").outcome, Outcome::Differs);
    }
}
