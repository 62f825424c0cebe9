//! A model replays each live run several times, each time with another draw of the wake-up
//! delays from the probe's spread (`WakeDelays::draw`), and the replay judged is the most typical
//! of them.
//!
//! Where the outcome hangs on a few microseconds early in a run (which CPU a forked thread
//! lands on, which task a balance finds cold, whether a ping-pong pair hands a hog the CPU at
//! the tick or between ticks), one draw is one sample of what the model predicts for that trace,
//! and a verdict on it is partly a coin. The medoid — the draw whose rates lie nearest every
//! metric's median over the draws, each metric scaled by its tolerance — is the model's central
//! prediction, chosen from the model's outcomes alone, never from the live values; the spread
//! over the draws says how much of a miss the trace leaves to chance (`judge`).

use super::judge::Tolerances;
use schedlab_report::stats::percentile;
use schedlab_trace::compare::{TaskComparison, TaskStats};

/// What a feature reads from a task's stats.
type Reading = fn(&TaskStats) -> Option<f64>;

/// One feature of a draw: a metric of one task (or of one rank of interchangeable tasks), in
/// units of its tolerance (shares in points over the points allowed; rates and latencies as
/// logarithms over the relative error allowed).
fn features(tasks: &[TaskComparison], groups: &[Vec<String>], tol: &Tolerances) -> Vec<Option<f64>> {
    let metrics: [(Reading, f64); 3] = [
        (|s| Some(100.0 * s.share_of_machine), tol.share_pp),
        (|s| (s.switches_per_sec > 0.0).then(|| s.switches_per_sec.ln()), tol.switches),
        (|s| s.wake_p50_ns.filter(|&n| n > 0).map(|n| (n as f64).ln()), tol.wake_p50),
    ];
    let mut out = Vec::new();
    for (value, scale) in metrics {
        let mut done: Vec<&Vec<String>> = Vec::new();
        for t in tasks {
            match groups.iter().find(|g| g.len() > 1 && g.contains(&t.name)) {
                None => out.push(value(&t.b).map(|v| v / scale)),
                Some(g) if !done.contains(&g) => {
                    done.push(g);
                    let mut ranked: Vec<f64> = tasks
                        .iter()
                        .filter(|m| g.contains(&m.name))
                        .map(|m| value(&m.b).unwrap_or(f64::INFINITY))
                        .collect();
                    ranked.sort_by(f64::total_cmp);
                    out.extend(ranked.into_iter().map(|v| v.is_finite().then_some(v / scale)));
                }
                Some(_) => {}
            }
        }
    }
    out
}

/// The index of the medoid of `draws` (each a replay's task comparisons, tasks in the same
/// order): the draw with the least sum of squared distances, in tolerances, to each feature's
/// median over the draws. Features some draw lacks are left out; ties go to the earlier draw.
pub fn medoid(draws: &[&[TaskComparison]], groups: &[Vec<String>], tol: &Tolerances) -> usize {
    let f: Vec<Vec<Option<f64>>> = draws.iter().map(|d| features(d, groups, tol)).collect();
    let width = f.iter().map(Vec::len).min().unwrap_or(0);
    let medians: Vec<Option<f64>> = (0..width)
        .map(|k| {
            let column: Option<Vec<f64>> = f.iter().map(|d| d[k]).collect();
            column.map(|c| percentile(&c, 50.0))
        })
        .collect();
    let distance = |d: &Vec<Option<f64>>| -> f64 {
        medians.iter().zip(d).filter_map(|(m, x)| Some((x.as_ref()? - m.as_ref()?).powi(2))).sum()
    };
    let mut best = 0;
    for (i, d) in f.iter().enumerate() {
        if distance(d) < distance(&f[best]) {
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(name: &str, share: f64, switches: f64) -> TaskComparison {
        let b = TaskStats {
            present: true,
            share_of_machine: share,
            switches_per_sec: switches,
            switch_ins: switches as u64,
            ..TaskStats::default()
        };
        TaskComparison { pid: 0, name: name.into(), a: b.clone(), b }
    }

    fn medoid_of(draws: &[Vec<TaskComparison>], groups: &[Vec<String>]) -> usize {
        let refs: Vec<&[TaskComparison]> = draws.iter().map(Vec::as_slice).collect();
        medoid(&refs, groups, &Tolerances::default())
    }

    #[test]
    fn the_medoid_is_the_draw_nearest_every_median() {
        // Three draws of a two-task case; the second is nearest the medians (0.30 / 0.70 of the
        // machine, 100 / 50 switches a second) on every metric.
        let draws = [
            vec![task("a", 0.25, 90.0), task("b", 0.75, 40.0)],
            vec![task("a", 0.30, 100.0), task("b", 0.70, 50.0)],
            vec![task("a", 0.40, 300.0), task("b", 0.60, 60.0)],
        ];
        assert_eq!(medoid_of(&draws, &[]), 1);
        // A bimodal outcome: two draws in one state, one in the other; the medoid is in the
        // majority's state.
        let draws = [
            vec![task("a", 0.50, 7_000.0), task("b", 0.50, 7_000.0)],
            vec![task("a", 0.47, 125.0), task("b", 0.53, 124.0)],
            vec![task("a", 0.48, 126.0), task("b", 0.52, 127.0)],
        ];
        assert_ne!(medoid_of(&draws, &[]), 0);
    }

    #[test]
    fn interchangeable_tasks_are_compared_by_rank() {
        // The same two values with the hogs' names swapped are the same outcome: by rank, the
        // first two draws are one point and the third is the outlier.
        let draws = [
            vec![task("hog-a", 0.30, 100.0), task("hog-b", 0.70, 200.0)],
            vec![task("hog-a", 0.70, 200.0), task("hog-b", 0.30, 100.0)],
            vec![task("hog-a", 0.50, 150.0), task("hog-b", 0.50, 150.0)],
        ];
        let groups = vec![vec!["hog-a".to_string(), "hog-b".to_string()]];
        assert_eq!(medoid_of(&draws, &groups), 0);
        // By name, the third draw sits on both medians.
        assert_eq!(medoid_of(&draws, &[]), 2);
    }

    #[test]
    fn one_draw_is_its_own_medoid() {
        assert_eq!(medoid_of(&[vec![task("a", 1.0, 10.0)]], &[]), 0);
    }
}
