//! Seed 002's landmark rates beside ours. The seed's figures are images; its text gives four
//! rates (`data/seed_numbers.json`, `landmarks_pps`): interrupt and hybrid keep delivered =
//! sent up to ≈250 pkt/s, polling starts losing at ≈150, interrupt and hybrid collapse near
//! ≈300, polling recovers to ≈745 delivered. The same landmarks are found in the live curves,
//! shown absolute and normalised to each side's knee (the rate interrupt keeps up to), in a
//! table and on normalised axes, and the claims they carry are judged. A sweep measures each
//! offered rate once, on a grid of ×`step` apart: a landmark is known to one grid step, so a
//! difference is claimed only at two steps or more, and an agreement within one.

use super::sweep::{Config, Mode, Point, SweepOutcome};
use crate::seed_data;
use schedlab_report::section::{ClaimKind, Figure, Table, Verdict};
use schedlab_report::svg::{LineChart, Series};

/// A strategy keeps up while it delivers at least this share of what is offered.
const KEEPS_UP: f64 = 0.95;

/// One strategy's live points: (offered, delivered), by offered rate.
fn curve(points: &[Point], strategy: &str) -> Vec<(f64, f64)> {
    super::figures::series_of(points, Mode::Live, strategy, |p| p.delivered_pps)
}

/// The highest offered rate up to which every point delivered ≥ 95% of it.
fn keeps_up_to(c: &[(f64, f64)]) -> Option<f64> {
    c.iter().take_while(|(o, d)| *d >= KEEPS_UP * o).last().map(|p| p.0)
}

/// The first offered rate at which it delivered less than 95%.
fn loses_from(c: &[(f64, f64)]) -> Option<f64> {
    c.iter().find(|(o, d)| *d < KEEPS_UP * o).map(|p| p.0)
}

/// The offered rate of the highest delivered rate (past it, the curve falls).
fn peaks_at(c: &[(f64, f64)]) -> Option<f64> {
    c.iter().max_by(|a, b| a.1.total_cmp(&b.1)).map(|p| p.0)
}

/// What was delivered at the highest offered rate.
fn at_top(c: &[(f64, f64)]) -> Option<f64> {
    c.last().map(|p| p.1)
}

/// Our landmarks, each None where the curve does not show it.
#[derive(Debug, Clone, Default)]
pub struct Landmarks {
    pub interrupt_keeps_up_to: Option<f64>,
    pub hybrid_keeps_up_to: Option<f64>,
    pub polling_loses_from: Option<f64>,
    pub interrupt_peaks_at: Option<f64>,
    pub polling_at_top: Option<f64>,
    /// What interrupt and hybrid delivered at the highest offered rate.
    pub interrupt_at_top: Option<f64>,
    pub hybrid_at_top: Option<f64>,
    /// The grid's step between offered rates (ratio of neighbours).
    pub step: f64,
}

impl Landmarks {
    pub fn of(o: &SweepOutcome) -> Landmarks {
        let (i, h, p) = (curve(&o.points, "interrupt"), curve(&o.points, "hybrid"), curve(&o.points, "polling"));
        let step = i.windows(2).map(|w| w[1].0 / w[0].0).fold(1.0, f64::max);
        Landmarks {
            interrupt_keeps_up_to: keeps_up_to(&i),
            hybrid_keeps_up_to: keeps_up_to(&h),
            polling_loses_from: loses_from(&p),
            interrupt_peaks_at: peaks_at(&i),
            polling_at_top: at_top(&p),
            interrupt_at_top: at_top(&i),
            hybrid_at_top: at_top(&h),
            step,
        }
    }

    /// Grid steps from `a` to `b` (positive when b is higher).
    fn steps(&self, a: f64, b: f64) -> f64 {
        if self.step <= 1.0 {
            return 0.0;
        }
        (b / a).ln() / self.step.ln()
    }
}

fn seed_rate(key: &str) -> f64 {
    seed_data::seed("002_receive_livelock")["landmarks_pps"][key].as_f64().unwrap_or(f64::NAN)
}

/// The table: each landmark, the seed's and ours, absolute and over the knee.
pub fn table(l: &Landmarks, config: Config) -> Table {
    let knee = seed_rate("interrupt_keeps_up_to");
    let ours_knee = l.interrupt_keeps_up_to;
    let mut t = Table::new(
        format!(
            "Seed 002's landmarks beside ours ({}; live; normalised to each side's knee, the rate interrupt keeps up to)",
            config.words()
        ),
        &["landmark", "seed pkt/s", "ours pkt/s", "seed ÷ knee", "ours ÷ knee"],
    );
    let rows = [
        ("interrupt keeps up to (the knee)", "interrupt_keeps_up_to", l.interrupt_keeps_up_to),
        ("hybrid keeps up to", "hybrid_keeps_up_to", l.hybrid_keeps_up_to),
        ("polling starts losing at", "polling_loses_from", l.polling_loses_from),
        ("interrupt collapses past (its peak)", "collapse_near", l.interrupt_peaks_at),
        ("polling delivers at the highest rate", "polling_recovers_to", l.polling_at_top),
    ];
    for (what, key, ours) in rows {
        let seed = seed_rate(key);
        let f = |v: Option<f64>| v.map_or("–".to_string(), |x| format!("{x:.0}"));
        let n = |v: Option<f64>, k: Option<f64>| match (v, k) {
            (Some(v), Some(k)) if k > 0.0 => format!("{:.2}", v / k),
            _ => "–".to_string(),
        };
        t.row(vec![what.into(), format!("{seed:.0}"), f(ours), format!("{:.2}", seed / knee), n(ours, ours_knee)]);
    }
    t.with_note(format!(
        "Keeping up = delivering at least 95% of the offered rate. The seed's rates are the four its text gives (its \
         figures are images); its machine and ours differ, so the rates compare over the knee, not absolutely. Our rates \
         are grid points of one sweep, ×{:.3} apart.",
        l.step
    ))
}

/// The verdicts on the claims the landmarks carry; under the seed configuration each claim
/// says so.
pub fn verdicts(l: &Landmarks, config: Config) -> Vec<Verdict> {
    let mut v = vec![];
    let prefix = match config {
        Config::Priorities => "seed",
        Config::Seed => "seed, in the seed's configuration",
    };
    let c1 = &format!("{prefix}: polling starts losing packets before interrupt does (≈150 against ≈250 pkt/s)");
    let c2 = &format!(
        "{prefix}: hybrid behaves like interrupt — both keep up to ≈250 pkt/s, and hybrid does no better past it (§VI; \
         judged: keep-up within 1 grid step and delivered at the highest rate within 20%; a difference from 2 steps or \
         50%)"
    );
    let c3 = &format!(
        "{prefix}: interrupt collapses just past its knee (≈300 against ≈250 pkt/s: 1.2×; judged: within 2 grid steps)"
    );
    let c4 = &format!(
        "{prefix}: polling delivers ≈745 pkt/s at the highest rates, 2.98× the knee (judged over each side's knee: \
         agreement within 1 grid step, a difference from 2)"
    );
    match (l.interrupt_keeps_up_to, l.polling_loses_from) {
        (Some(k), Some(p)) => {
            // Polling loses at p; interrupt first loses one step above its keep-up limit.
            let interrupt_loses = k * l.step;
            let s = l.steps(p, interrupt_loses);
            let detail =
                format!("polling first lost at {p:.0} pkt/s, interrupt at {interrupt_loses:.0} ({s:+.1} grid steps)");
            v.push(if s >= 2.0 {
                Verdict::seed_claim(c1, true, detail)
            } else if s <= -2.0 {
                Verdict::seed_claim(c1, false, detail)
            } else {
                Verdict::inconclusive(ClaimKind::SeedClaim, c1, format!("{detail}: less than two grid steps apart"))
            });
        }
        (Some(k), None) => {
            v.push(Verdict::seed_claim(c1, false, format!("polling never lost; interrupt kept up to {k:.0} pkt/s")))
        }
        _ => v.push(Verdict::not_measured(ClaimKind::SeedClaim, c1, "no live interrupt curve")),
    }
    match (l.interrupt_keeps_up_to, l.hybrid_keeps_up_to, l.interrupt_at_top, l.hybrid_at_top) {
        (Some(i), Some(h), Some(it), Some(ht)) => {
            let s = l.steps(i, h);
            // Past the knee: how much more (or less) hybrid delivers than interrupt.
            let r = (ht / it.max(1e-9)).ln().abs();
            let detail = format!(
                "interrupt keeps up to {i:.0} pkt/s, hybrid to {h:.0} ({s:+.1} grid steps); at the highest rate interrupt \
                 delivered {it:.0} pkt/s, hybrid {ht:.0} ({:.2}×)",
                ht / it.max(1e-9)
            );
            let agree = s.abs() <= 1.0 + 1e-9 && r <= 1.2f64.ln();
            let differ = s.abs() >= 2.0 - 1e-9 || r >= 1.5f64.ln();
            v.push(if differ {
                Verdict::seed_claim(c2, false, detail)
            } else if agree {
                Verdict::seed_claim(c2, true, detail)
            } else {
                Verdict::inconclusive(ClaimKind::SeedClaim, c2, detail)
            });
        }
        _ => v.push(Verdict::not_measured(ClaimKind::SeedClaim, c2, "no live interrupt or hybrid curve")),
    }
    match (l.interrupt_keeps_up_to, l.interrupt_peaks_at) {
        (Some(k), Some(p)) => {
            let s = l.steps(k, p);
            v.push(Verdict::seed_claim(
                c3,
                s <= 2.0 + 1e-9,
                format!("interrupt keeps up to {k:.0} pkt/s and peaks at {p:.0} offered ({:.2}× the knee, {s:.1} grid steps)", p / k),
            ));
        }
        _ => v.push(Verdict::not_measured(ClaimKind::SeedClaim, c3, "no live interrupt curve")),
    }
    match (l.interrupt_keeps_up_to, l.polling_at_top) {
        (Some(k), Some(top)) => {
            let seed_ratio = seed_rate("polling_recovers_to") / seed_rate("interrupt_keeps_up_to");
            let s = l.steps(seed_ratio * k, top);
            let detail = format!(
                "polling delivered {top:.0} pkt/s at our highest rate: {:.2}× our knee of {k:.0}, against the seed's \
                 {seed_ratio:.2}× ({s:+.1} grid steps)",
                top / k
            );
            v.push(if s.abs() <= 1.0 + 1e-9 {
                Verdict::published(c4, true, detail)
            } else if s.abs() >= 2.0 - 1e-9 {
                Verdict::published(c4, false, detail)
            } else {
                Verdict::inconclusive(ClaimKind::PublishedNumber, c4, detail)
            });
        }
        _ => v.push(Verdict::not_measured(ClaimKind::PublishedNumber, c4, "no live interrupt or polling curve")),
    }
    v
}

/// Our live delivered curves over the knee, with the seed's landmarks (dashed).
pub fn figure(o: &SweepOutcome, l: &Landmarks, config: Config) -> Option<Figure> {
    let knee = l.interrupt_keeps_up_to?;
    let seed_knee = seed_rate("interrupt_keeps_up_to");
    let mut series: Vec<Series> = ["interrupt", "hybrid", "polling", "napi"]
        .iter()
        .map(|s| (s, curve(&o.points, s)))
        .filter(|(_, c)| !c.is_empty())
        .map(|(s, c)| Series::new(format!("{s} (live)"), c.iter().map(|(x, y)| (x / knee, y / knee)).collect()))
        .collect();
    let top = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(1.0, f64::max);
    let recover = seed_rate("polling_recovers_to") / seed_knee;
    let right = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).fold(1.0, f64::max);
    let vertical = |name: &str, key: &str| {
        let x = seed_rate(key) / seed_knee;
        Series::new(name, vec![(x, 0.0), (x, top.max(recover))]).dashed()
    };
    series.push(Series::new("seed: keeps up to y = x (knee)", vec![(0.1, 0.1), (1.0, 1.0)]).dashed());
    series.push(vertical("seed: polling loses from", "polling_loses_from"));
    series.push(vertical("seed: collapse near", "collapse_near"));
    series.push(Series::new("seed: polling recovers to", vec![(1.0, recover), (right, recover)]).dashed());
    let chart = LineChart {
        title: format!("Delivered vs offered over the knee ({}), with the seed's landmarks", config.words()),
        x_label: "offered ÷ knee (log)".into(),
        y_label: "delivered ÷ knee".into(),
        log_x: true,
        log_y: false,
        series,
    };
    Some(Figure {
        title: format!("Seed 002's landmarks on our curves ({})", config.words()),
        file: format!("fig2_landmarks{}.svg", config.file_suffix()),
        svg: chart.to_svg(),
        caption: format!(
            "Both axes over each side's knee (ours {knee:.0} pkt/s, the seed's {seed_knee:.0}): our live curves solid, the \
             seed's landmarks dashed (its figures are images; its text gives these rates)."
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn landmarks_are_found_on_a_curve() {
        let c = [(100.0, 100.0), (150.0, 149.0), (200.0, 180.0), (250.0, 150.0), (300.0, 40.0)];
        assert_eq!(keeps_up_to(&c), Some(150.0));
        assert_eq!(loses_from(&c), Some(200.0));
        assert_eq!(peaks_at(&c), Some(200.0));
        assert_eq!(at_top(&c), Some(40.0));
        let l = Landmarks {
            interrupt_keeps_up_to: Some(250.0),
            hybrid_keeps_up_to: Some(250.0),
            polling_loses_from: Some(150.0),
            interrupt_peaks_at: Some(300.0),
            polling_at_top: Some(745.0),
            interrupt_at_top: Some(40.0),
            hybrid_at_top: Some(45.0),
            step: 1.176,
        };
        use schedlab_report::section::Outcome;
        let v = verdicts(&l, Config::Priorities);
        assert_eq!(v.len(), 4);
        assert!(v.iter().all(|v| v.outcome == Outcome::Reproduced), "{v:?}");
        assert_eq!(v[3].kind, ClaimKind::PublishedNumber);
        // One step apart is not a difference.
        let close = Landmarks { polling_loses_from: Some(250.0), ..l.clone() };
        assert_eq!(verdicts(&close, Config::Priorities)[0].outcome, Outcome::Inconclusive);
        let far = Landmarks { hybrid_keeps_up_to: Some(250.0 * 1.176 * 1.176), ..l.clone() };
        assert_eq!(verdicts(&far, Config::Priorities)[1].outcome, Outcome::Differs);
        // Hybrid doing far better than interrupt past the knee is not "like interrupt".
        let better = Landmarks { hybrid_at_top: Some(70.0), ..l.clone() };
        assert_eq!(verdicts(&better, Config::Priorities)[1].outcome, Outcome::Differs);
        let somewhat = Landmarks { hybrid_at_top: Some(52.0), ..l.clone() };
        assert_eq!(verdicts(&somewhat, Config::Priorities)[1].outcome, Outcome::Inconclusive);
        // Polling's recovery over the knee: 650 against 2.98 × 250 = 745 is within one step of
        // 1.176; 500 is more than two steps below.
        let near = Landmarks { polling_at_top: Some(650.0), ..l.clone() };
        assert_eq!(verdicts(&near, Config::Seed)[3].outcome, Outcome::Reproduced);
        let low = Landmarks { polling_at_top: Some(500.0), ..l.clone() };
        assert_eq!(verdicts(&low, Config::Seed)[3].outcome, Outcome::Differs);
        let between = Landmarks { polling_at_top: Some(590.0), ..l };
        let b = &verdicts(&between, Config::Seed)[3];
        assert_eq!(b.outcome, Outcome::Inconclusive);
        assert!(b.claim.starts_with("seed, in the seed's configuration"), "{}", b.claim);
    }
}
