//! The study's verdicts: the seed's claims on work, CPU shares, run-to-run variation, slice
//! accuracy, switching overhead and finish times, judged on the live runs.

use super::tables::{test2_folds, Test1Stats};
use super::StudyData;
use schedlab_report::judge;
use schedlab_report::section::{ClaimKind, Verdict};
use schedlab_report::stats;

/// Every verdict the runs allow.
pub fn all(d: &StudyData, s: &Test1Stats) -> Vec<Verdict> {
    let mut v = Vec::new();
    if !d.t1.runs.is_empty() {
        v.extend(test1(d, s));
    }
    if !d.t2.is_empty() {
        let w1_fold = test2_folds(d)[0];
        let sim_w1 = d.sim_t2_mean[0] / d.sim_t2_mean[5];
        // One fold per run, so the claim is judged against the run-to-run spread.
        let per_run: Vec<f64> =
            d.t2.iter().filter_map(|r| Some(r.finish_s.first().copied()?? / r.finish_s.get(5).copied()??)).collect();
        let mut verdict = judge::below(
            ClaimKind::SeedClaim,
            "Finishing a fixed job is far from proportional to weight: weight 1 takes < 2× as long as weight 20 (seed 1.81×)",
            &per_run,
            2.0,
            "×",
        );
        verdict.detail = format!(
            "live w1/w20 per run: {}; {}; live fold of the means {w1_fold:.2}×, simulated {sim_w1:.2}× (the last task \
             always finishes at the total work time)",
            per_run.iter().map(|f| format!("{f:.2}")).collect::<Vec<_>>().join(", "),
            verdict.detail
        );
        v.push(verdict);
    }
    v
}

fn test1(d: &StudyData, s: &Test1Stats) -> Vec<Verdict> {
    let t1_s = d.plan.t1_s();
    let err = d.slice_err();
    let disp_max = d.t1.disp_frac.iter().copied().fold(0.0, f64::max);
    let short = if t1_s < 29.0 {
        " (the goal is set for the seed's 30 s runs: in short runs each task's start-up — exec and page faults, 1–2 \
         ms of CPU without hashes — is a visible part of weight 1's few slices)"
    } else {
        ""
    };
    vec![
        Verdict::goal(
            "Work done in a fixed time follows the weight (seed fold 4.09, 7.40, 10.61, 16.60, 19.89); goal: every fold within 2% of its weight",
            s.fold_err_max <= 0.02,
            format!(
                "largest |fold/weight − 1| = {:.2}% over {} runs of {t1_s:.2} s{short}",
                s.fold_err_max * 100.0,
                d.t1.runs.len()
            ),
        ),
        Verdict::goal(
            "The CPU time each task receives follows its weight within 2% (what the dispatcher controls)",
            s.cpu_fold_err <= 0.02,
            format!("largest |CPU fold/weight − 1| = {:.2}%", s.cpu_fold_err * 100.0),
        ),
        Verdict::goal(
            "Run-to-run variation at most 2% (the seed's stddev reached 30%)",
            s.fold_cv_max <= 0.02,
            format!(
                "largest CV of a task's fold = {:.2}%; largest CV of raw iterations = {:.2}% (hash speed drifts with the \
                 load on the sibling CPU)",
                s.fold_cv_max * 100.0,
                s.work_cv_max * 100.0
            ),
        ),
        Verdict::goal(
            "Slices are accurate (seed: 'very little variation'); goal p99 error ≤ 1 ms for 10 ms slices",
            err.p99 <= 1.0,
            format!(
                "p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms over {} slices",
                err.p50,
                err.p99,
                err.max,
                d.t1.slice_err.len()
            ),
        ),
        Verdict::goal(
            "Switching overhead is minuscule (seed); goal: dispatcher CPU ≤ 1% of the managed CPU",
            disp_max <= 0.01,
            format!(
                "mean {:.3}%, max {:.3}% over {} runs",
                stats::mean(&d.t1.disp_frac) * 100.0,
                disp_max * 100.0,
                d.t1.disp_frac.len()
            ),
        ),
    ]
}
