//! How close a model came to the live runs of a case, task by task and metric by metric, over
//! every repeat: a metric is *met* when every repeat's error is within the tolerance, *missed*
//! when every repeat's error is beyond it, and *inconclusive* when the repeats disagree (the
//! run-to-run spread straddles the line). Each repeat is its own live run, imported and replayed
//! on its own, so the spread covers both the machine's noise and the replay's.

use super::measure::CaseRun;
use schedlab_trace::compare::TaskStats;
use serde::Serialize;

/// The goal the `linux` model is held to (issue 13's targets; never loosened to pass).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Tolerances {
    /// CPU share of the case's CPUs, percentage points.
    pub share_pp: f64,
    /// Context switches per second, relative.
    pub switches: f64,
    /// Wake-up latency p50, relative.
    pub wake_p50: f64,
    /// Fewer live switch-ins or wake-ups than this in a window: too few events to judge a rate
    /// or a percentile.
    pub min_events: u64,
}

impl Default for Tolerances {
    fn default() -> Self {
        Tolerances { share_pp: 2.0, switches: 0.15, wake_p50: 0.25, min_events: 20 }
    }
}

/// How one metric fared over the repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    Met,
    Missed,
    Inconclusive,
    /// Too few live events in every repeat.
    NotJudged,
}

impl Mark {
    pub fn symbol(self) -> &'static str {
        match self {
            Mark::Met => "✓",
            Mark::Missed => "✗",
            Mark::Inconclusive => "~",
            Mark::NotJudged => "",
        }
    }
}

/// One metric of one task under one model: the live and model values of each repeat.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metric {
    pub live: Vec<Option<f64>>,
    pub model: Vec<Option<f64>>,
    /// The error of each judged repeat (pp for shares, relative otherwise; ∞ when the model has
    /// no value where the live run has one).
    pub errors: Vec<f64>,
    /// Of each judged repeat: how many of the model's draws of the wake-up delays were within the
    /// tolerance, of how many ([`super::draws`]); a draw without the task counts as off. A miss
    /// that no draw meets is not the judged draw's luck: the model's outcome for that trace, or a
    /// turn of the kernel's that the trace does not carry.
    pub draws_within: Vec<(usize, usize)>,
    /// Whether the kernel's own judged repeats agree with each other within the tolerance (every
    /// pair, each side taken as the reference in turn): the goal's noise floor on this metric. None
    /// with fewer than two judged repeats.
    pub live_repeats_within: Option<bool>,
    pub mark: Mark,
}

impl Metric {
    /// Mean of the values that exist.
    pub fn mean(v: &[Option<f64>]) -> Option<f64> {
        let x: Vec<f64> = v.iter().flatten().copied().collect();
        (!x.is_empty()).then(|| x.iter().sum::<f64>() / x.len() as f64)
    }

    /// Smallest and largest of the values that exist.
    pub fn range(v: &[Option<f64>]) -> Option<(f64, f64)> {
        let x: Vec<f64> = v.iter().flatten().copied().collect();
        let lo = x.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (!x.is_empty()).then_some((lo, hi))
    }

    /// The largest error (None when nothing was judged).
    pub fn worst(&self) -> Option<f64> {
        self.errors.iter().copied().reduce(f64::max)
    }

    /// Draws within the tolerance over every judged repeat, of how many.
    pub fn draws_within_total(&self) -> (usize, usize) {
        self.draws_within.iter().fold((0, 0), |(w, n), &(a, b)| (w + a, n + b))
    }
}

fn mark(errors: &[f64], tol: f64) -> Mark {
    if errors.is_empty() {
        Mark::NotJudged
    } else if errors.iter().all(|&e| e <= tol) {
        Mark::Met
    } else if errors.iter().all(|&e| e > tol) {
        Mark::Missed
    } else {
        Mark::Inconclusive
    }
}

/// What a metric reads from a task's stats, whether a repeat has enough events to judge it,
/// and how the error is measured.
struct Rule {
    value: fn(&TaskStats) -> Option<f64>,
    judged: fn(&TaskStats, u64) -> bool,
    relative: bool,
}

fn judge_metric(samples: &[Sample<'_>], rule: &Rule, tol: f64, min: u64) -> Metric {
    let error = |l: f64, m: Option<f64>| match m {
        None => f64::INFINITY,
        Some(m) if rule.relative => (m - l).abs() / l.abs().max(f64::MIN_POSITIVE),
        Some(m) => (m - l).abs(),
    };
    let (mut live, mut model, mut errors, mut draws_within, mut judged_live) = (vec![], vec![], vec![], vec![], vec![]);
    for s in samples {
        let l = s.live.and_then(rule.value);
        live.push(l);
        model.push(s.model.and_then(rule.value));
        if let (Some(a), Some(l)) = (s.live, l) {
            if (rule.judged)(a, min) {
                errors.push(error(l, s.model.and_then(rule.value)));
                // A draw without the task is a draw off, as the judged replay would be.
                let within = s.draws.iter().filter(|d| error(l, d.and_then(rule.value)) <= tol).count();
                draws_within.push((within, s.draws.len()));
                judged_live.push(l);
            }
        }
    }
    let live_repeats_within = (judged_live.len() > 1)
        .then(|| judged_live.iter().all(|&a| judged_live.iter().all(|&b| error(a, Some(b)) <= tol)));
    Metric { mark: mark(&errors, tol), live, model, errors, draws_within, live_repeats_within }
}

/// One task of a case under one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskJudgement {
    pub task: String,
    /// % of the case's CPUs.
    pub share: Metric,
    pub switches_per_s: Metric,
    /// µs.
    pub wake_p50_us: Metric,
    /// µs; shown, not judged.
    pub wake_p99_us: Metric,
}

impl TaskJudgement {
    /// The metrics judged (p99 is shown only).
    pub fn judged(&self) -> [&Metric; 3] {
        [&self.share, &self.switches_per_s, &self.wake_p50_us]
    }
}

/// One case under one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseJudgement {
    pub case: String,
    pub model: String,
    pub repeats: usize,
    pub tasks: Vec<TaskJudgement>,
    /// Fraction of the window both timelines ran the same task on a CPU, per repeat.
    pub same_task: Vec<f64>,
    /// The same on whichever CPU (a symmetric layout the other way round agrees), per repeat.
    pub same_task_any_cpu: Vec<f64>,
    pub mark: Mark,
}

impl CaseJudgement {
    /// (met, missed, inconclusive) over every judged metric.
    pub fn counts(&self) -> (usize, usize, usize) {
        let marks = self.tasks.iter().flat_map(TaskJudgement::judged).map(|m| m.mark);
        marks.fold((0, 0, 0), |(m, x, i), k| match k {
            Mark::Met => (m + 1, x, i),
            Mark::Missed => (m, x + 1, i),
            Mark::Inconclusive => (m, x, i + 1),
            Mark::NotJudged => (m, x, i),
        })
    }
}

const SHARE: Rule = Rule { value: |s| Some(100.0 * s.share_of_machine), judged: |_, _| true, relative: false };
const SWITCHES: Rule =
    Rule { value: |s| Some(s.switches_per_sec), judged: |s, min| s.switch_ins >= min, relative: true };
const WAKE_P50: Rule = Rule {
    value: |s| s.wake_p50_ns.map(|n| n as f64 / 1e3),
    judged: |s, min| s.wake_samples as u64 >= min,
    relative: true,
};
const WAKE_P99: Rule = Rule { value: |s| s.wake_p99_ns.map(|n| n as f64 / 1e3), judged: |_, _| false, relative: true };

/// One task's stats in each repeat under `model`.
fn stats_of<'a>(runs: &'a [CaseRun], model: &str, name: &str) -> Vec<Sample<'a>> {
    let present = |s: &'a TaskStats| s.present.then_some(s);
    runs.iter()
        .map(|r| {
            let Some(m) = r.models.iter().find(|m| m.label == model) else { return Sample::default() };
            let t = m.comparison.tasks.iter().find(|t| t.name == name);
            // One entry per draw, in draw order; None where the task is missing from that draw.
            let draws = m.draws.iter().map(|d| d.iter().find(|t| t.name == name).and_then(|t| present(&t.b))).collect();
            Sample { live: t.and_then(|t| present(&t.a)), model: t.and_then(|t| present(&t.b)), draws }
        })
        .collect()
}

/// The `rank`-th smallest value (by `rule`) among interchangeable tasks' stats, live, model and
/// each draw, in each repeat: which of two identical tasks the kernel or the model put where
/// carries no information, so what is judged is the set of their values, compared in order.
fn ranked<'a>(members: &[Vec<Sample<'a>>], rule: &Rule, rank: usize) -> Vec<Sample<'a>> {
    let repeats = members.first().map_or(0, Vec::len);
    let nth = |side: Vec<&'a TaskStats>| {
        let mut side: Vec<(f64, &'a TaskStats)> =
            side.into_iter().map(|s| ((rule.value)(s).unwrap_or(f64::INFINITY), s)).collect();
        side.sort_by(|a, b| a.0.total_cmp(&b.0));
        side.get(rank).map(|x| x.1)
    };
    (0..repeats)
        .map(|r| {
            let draws = members.iter().map(|m| m[r].draws.len()).min().unwrap_or(0);
            Sample {
                live: nth(members.iter().filter_map(|m| m[r].live).collect()),
                model: nth(members.iter().filter_map(|m| m[r].model).collect()),
                // Ranked within each draw, over the members that draw has.
                draws: (0..draws).map(|d| nth(members.iter().filter_map(|m| m[r].draws[d]).collect())).collect(),
            }
        })
        .collect()
}

/// The row name of the `rank`-th (from 0, smallest first) of interchangeable tasks `names`.
fn rank_name(names: &[String], rank: usize) -> String {
    let which = match (names.len(), rank) {
        (2, 0) => "lower".to_string(),
        (2, _) => "higher".to_string(),
        (n, k) => format!("{} of {n}, lowest first", k + 1),
    };
    format!("{} ({which})", names.join("/"))
}

/// A task's stats in one repeat: live, the replay judged, and every draw of the replay (the
/// judged one among them).
#[derive(Debug, Clone, Default)]
struct Sample<'a> {
    live: Option<&'a TaskStats>,
    model: Option<&'a TaskStats>,
    /// In draw order; None where the draw lacks the task.
    draws: Vec<Option<&'a TaskStats>>,
}

/// Every metric of one row, from the pairs `metric` gives for each rule.
fn task_judgement<'a>(task: String, tol: &Tolerances, metric: &dyn Fn(&Rule) -> Vec<Sample<'a>>) -> TaskJudgement {
    TaskJudgement {
        task,
        share: judge_metric(&metric(&SHARE), &SHARE, tol.share_pp, tol.min_events),
        switches_per_s: judge_metric(&metric(&SWITCHES), &SWITCHES, tol.switches, tol.min_events),
        wake_p50_us: judge_metric(&metric(&WAKE_P50), &WAKE_P50, tol.wake_p50, tol.min_events),
        wake_p99_us: judge_metric(&metric(&WAKE_P99), &WAKE_P99, f64::INFINITY, tol.min_events),
    }
}

/// Judge `model` on the repeats `runs` of one case. `interchangeable`: groups of the case's
/// tasks that are the same program under the same scheduling on the same CPUs; each group is
/// judged as ranks (its lowest value live against the model's lowest, and so on), each metric
/// ranked on its own.
pub fn judge(runs: &[CaseRun], model: &str, tol: &Tolerances, interchangeable: &[Vec<String>]) -> CaseJudgement {
    let mut names: Vec<String> = Vec::new();
    for r in runs {
        for m in r.models.iter().filter(|m| m.label == model) {
            for t in &m.comparison.tasks {
                if !names.contains(&t.name) {
                    names.push(t.name.clone());
                }
            }
        }
    }
    let mut tasks = Vec::new();
    let mut ranked_groups: Vec<&Vec<String>> = Vec::new();
    for name in &names {
        match interchangeable.iter().find(|g| g.len() > 1 && g.contains(name)) {
            None => tasks.push(task_judgement(name.clone(), tol, &|_| stats_of(runs, model, name))),
            Some(g) if !ranked_groups.contains(&g) => {
                ranked_groups.push(g);
                let members: Vec<_> = g.iter().map(|n| stats_of(runs, model, n)).collect();
                for rank in 0..g.len() {
                    tasks.push(task_judgement(rank_name(g, rank), tol, &|rule| ranked(&members, rule, rank)));
                }
            }
            Some(_) => {}
        }
    }
    let of_model = || runs.iter().filter_map(|r| r.models.iter().find(|m| m.label == model));
    let same_task = of_model().map(|m| m.comparison.same_task).collect();
    let same_task_any_cpu = of_model().map(|m| m.comparison.same_task_any_cpu).collect();
    let mut j = CaseJudgement {
        case: runs.first().map(|r| r.case.clone()).unwrap_or_default(),
        model: model.to_string(),
        repeats: runs.len(),
        tasks,
        same_task,
        same_task_any_cpu,
        mark: Mark::NotJudged,
    };
    j.mark = match j.counts() {
        (0, 0, 0) => Mark::NotJudged,
        (_, 0, 0) => Mark::Met,
        (_, x, _) if x > 0 => Mark::Missed,
        _ => Mark::Inconclusive,
    };
    j
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(share: f64, switch_ins: u64, wake: Option<(usize, u64)>) -> TaskStats {
        TaskStats {
            present: true,
            share_of_machine: share,
            switch_ins,
            switches_per_sec: switch_ins as f64,
            wake_samples: wake.map_or(0, |w| w.0),
            wake_p50_ns: wake.map(|w| w.1),
            ..TaskStats::default()
        }
    }

    fn pair<'a>(a: &'a TaskStats, b: &'a TaskStats) -> Sample<'a> {
        Sample { live: Some(a), model: Some(b), draws: vec![Some(b)] }
    }

    fn metric(pairs: &[(TaskStats, TaskStats)], rule: &Rule, tol: f64) -> Metric {
        let p: Vec<_> = pairs.iter().map(|(a, b)| pair(a, b)).collect();
        judge_metric(&p, rule, tol, 20)
    }

    #[test]
    fn shares_are_judged_in_points_and_rates_relatively() {
        let met = metric(&[(stats(0.50, 100, None), stats(0.519, 114, None))], &SHARE, 2.0);
        assert_eq!(met.mark, Mark::Met);
        assert!((met.errors[0] - 1.9).abs() < 1e-9);
        let missed = metric(&[(stats(0.50, 100, None), stats(0.521, 100, None))], &SHARE, 2.0);
        assert_eq!(missed.mark, Mark::Missed);
        let sw = metric(&[(stats(0.5, 100, None), stats(0.5, 116, None))], &SWITCHES, 0.15);
        assert_eq!((sw.mark, (sw.errors[0] * 100.0).round()), (Mark::Missed, 16.0));
    }

    #[test]
    fn repeats_that_disagree_are_inconclusive_and_few_events_are_not_judged() {
        let runs = [(stats(0.5, 100, None), stats(0.51, 100, None)), (stats(0.5, 100, None), stats(0.53, 100, None))];
        assert_eq!(metric(&runs, &SHARE, 2.0).mark, Mark::Inconclusive);
        let few = metric(&[(stats(0.5, 19, None), stats(0.5, 40, None))], &SWITCHES, 0.15);
        assert_eq!((few.mark, few.errors.len()), (Mark::NotJudged, 0));
        let no_model_wakes = metric(&[(stats(0.1, 50, Some((50, 10_000))), stats(0.1, 50, None))], &WAKE_P50, 0.25);
        assert_eq!((no_model_wakes.mark, no_model_wakes.errors[0]), (Mark::Missed, f64::INFINITY));
        let close =
            metric(&[(stats(0.1, 50, Some((50, 10_000))), stats(0.1, 50, Some((40, 12_400))))], &WAKE_P50, 0.25);
        assert_eq!(close.mark, Mark::Met);
    }

    #[test]
    fn each_repeat_counts_the_draws_within_the_tolerance() {
        // A hog at 125 switches a second live; the model's draws settle at 130, 210 and 120 (a
        // two-state outcome), the medoid at 130.
        let live = stats(0.5, 125, None);
        let (d0, d1, d2) = (stats(0.5, 130, None), stats(0.5, 210, None), stats(0.5, 120, None));
        let s = Sample { live: Some(&live), model: Some(&d0), draws: vec![Some(&d0), Some(&d1), Some(&d2), None] };
        let m = judge_metric(&[s.clone(), s], &SWITCHES, 0.15, 20);
        // A fourth draw lacks the task: it counts, as a draw off.
        assert_eq!((m.mark, m.draws_within.clone()), (Mark::Met, vec![(2, 4), (2, 4)]));
        assert_eq!(m.draws_within_total(), (4, 8));
        // The kernel's two repeats (125 and 125) agree; a third at 250 does not with them.
        assert_eq!(m.live_repeats_within, Some(true));
        let two_states = stats(0.5, 250, None);
        let other = Sample { live: Some(&two_states), model: Some(&d0), draws: vec![Some(&d0)] };
        let one = Sample { live: Some(&live), model: Some(&d0), draws: vec![Some(&d0)] };
        let m = judge_metric(&[one.clone(), other], &SWITCHES, 0.15, 20);
        assert_eq!(m.live_repeats_within, Some(false));
        assert_eq!(judge_metric(&[one], &SWITCHES, 0.15, 20).live_repeats_within, None);
        // Draws of identical hogs are ranked within each draw: a draw that swapped them is
        // the same outcome.
        let (lo, hi) = (stats(0.4, 160, None), stats(0.45, 193, None));
        let a = Sample { live: Some(&lo), model: Some(&lo), draws: vec![Some(&lo), Some(&hi)] };
        let b = Sample { live: Some(&hi), model: Some(&hi), draws: vec![Some(&hi), Some(&lo)] };
        let lower = judge_metric(&ranked(&[vec![a], vec![b]], &SWITCHES, 0), &SWITCHES, 0.15, 20);
        assert_eq!((lower.mark, lower.draws_within), (Mark::Met, vec![(2, 2)]));
        // A draw in which hog-a did not run ranks what it has: hog-b is its lower, and it has no
        // higher, which counts as off.
        let a = Sample { live: Some(&lo), model: Some(&lo), draws: vec![Some(&lo), None] };
        let b = Sample { live: Some(&hi), model: Some(&hi), draws: vec![Some(&hi), Some(&hi)] };
        let members = [vec![a], vec![b]];
        let higher = judge_metric(&ranked(&members, &SWITCHES, 1), &SWITCHES, 0.15, 20);
        assert_eq!(higher.draws_within, vec![(1, 2)]);
        let lower = judge_metric(&ranked(&members, &SWITCHES, 0), &SWITCHES, 0.15, 20);
        assert_eq!(lower.draws_within, vec![(1, 2)], "the second draw's lower is hog-b's 193, 21% off 160");
    }

    /// Two identical hogs whose roles the model swapped: judged by name they disagree, as a
    /// set they agree; a model that gets one of them wrong still misses.
    #[test]
    fn interchangeable_tasks_are_judged_as_ranks() {
        let (a, b) = (stats(0.40, 160, None), stats(0.45, 193, None));
        let swapped = [pair(&a, &b), pair(&b, &a)];
        let members = vec![vec![swapped[0].clone()], vec![swapped[1].clone()]];
        let by_name = judge_metric(&[swapped[0].clone()], &SWITCHES, 0.15, 20);
        assert_eq!(by_name.mark, Mark::Missed);
        let lower = judge_metric(&ranked(&members, &SWITCHES, 0), &SWITCHES, 0.15, 20);
        let higher = judge_metric(&ranked(&members, &SWITCHES, 1), &SWITCHES, 0.15, 20);
        assert_eq!((lower.live, lower.model), (vec![Some(160.0)], vec![Some(160.0)]));
        assert_eq!((higher.live, higher.model, higher.mark), (vec![Some(193.0)], vec![Some(193.0)], Mark::Met));
        let wrong = stats(0.45, 260, None);
        let members = vec![vec![pair(&a, &wrong)], vec![pair(&b, &a)]];
        let higher = judge_metric(&ranked(&members, &SWITCHES, 1), &SWITCHES, 0.15, 20);
        assert_eq!((higher.model[0], higher.mark), (Some(260.0), Mark::Missed));
        assert_eq!(rank_name(&["hog-a".into(), "hog-b".into()], 1), "hog-a/hog-b (higher)");
    }
}
