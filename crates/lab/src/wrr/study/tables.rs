//! The study's tables — test 1 and test 2 beside the seed, share errors of every mechanism, the
//! live host's accuracy — its summary sentence and its results document.

use super::measure::PerWeight;
use super::plan::{QUANTUM_NS, SEED, SEED_CRYPT_S, WEIGHTS};
use super::StudyData;
use crate::seed_data;
use schedlab_os::machine::MachineFacts;
use schedlab_report::section::Table;
use schedlab_report::stats;
use serde_json::{json, Value};

/// A column of the seed's table `table`.
pub fn seed_col(table: &str, key: &str) -> Vec<f64> {
    seed_data::seed(SEED)[table][key]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default()
}

/// Share of each task's work (iterations) relative to its weight share, minus 1.
pub fn share_errors(work: &[f64]) -> Vec<f64> {
    let total: f64 = work.iter().sum();
    let wsum: f64 = WEIGHTS.iter().map(|&w| w as f64).sum();
    work.iter()
        .zip(WEIGHTS)
        .map(|(x, w)| if total > 0.0 { (x / total) / (w as f64 / wsum) - 1.0 } else { 0.0 })
        .collect()
}

/// Mean share error and run-to-run CV of work per task over a set of runs.
pub fn share_stats(runs: &[PerWeight]) -> Vec<(f64, f64)> {
    (0..6)
        .map(|i| {
            let errs: Vec<f64> = runs.iter().map(|r| share_errors(&r.iterations)[i]).collect();
            let work: Vec<f64> = runs.iter().map(|r| r.iterations[i]).collect();
            (stats::mean(&errs), stats::cv(&work))
        })
        .collect()
}

/// A per-run quantity of task `i` over runs.
pub fn col(runs: &[PerWeight], i: usize, f: impl Fn(&PerWeight, usize) -> f64) -> Vec<f64> {
    runs.iter().map(|r| f(r, i)).collect()
}

fn pct(x: f64) -> String {
    format!("{:+.2}%", x * 100.0)
}

/// Test 1's folds and their spread, computed once for the tables, verdicts and figures.
pub struct Test1Stats {
    /// Per run, each task's iterations over the weight-1 task's.
    pub fold_runs: Vec<Vec<f64>>,
    pub fold_err_max: f64,
    pub fold_cv_max: f64,
    pub work_cv_max: f64,
    /// Largest |CPU fold / weight − 1|.
    pub cpu_fold_err: f64,
    pub live_stats: Vec<(f64, f64)>,
}

impl Test1Stats {
    pub fn of(d: &StudyData) -> Self {
        let runs = &d.t1.runs;
        let fold_runs: Vec<Vec<f64>> =
            runs.iter().map(|r| r.iterations.iter().map(|x| x / r.iterations[0].max(1.0)).collect()).collect();
        let (mut fold_err_max, mut fold_cv_max, mut work_cv_max, mut cpu_fold_err) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        if !runs.is_empty() {
            for i in 0..6 {
                let folds: Vec<f64> = fold_runs.iter().map(|f| f[i]).collect();
                fold_err_max = fold_err_max.max((stats::mean(&folds) / WEIGHTS[i] as f64 - 1.0).abs());
                work_cv_max = work_cv_max.max(stats::cv(&col(runs, i, |r, i| r.iterations[i])));
                if i > 0 {
                    fold_cv_max = fold_cv_max.max(stats::cv(&folds));
                }
                let cpu: Vec<f64> = runs.iter().map(|r| r.cpu_s[i] / r.cpu_s[0].max(1e-9)).collect();
                cpu_fold_err = cpu_fold_err.max((stats::mean(&cpu) / WEIGHTS[i] as f64 - 1.0).abs());
            }
        }
        Test1Stats { fold_runs, fold_err_max, fold_cv_max, work_cv_max, cpu_fold_err, live_stats: share_stats(runs) }
    }

    /// Mean fold of task `i`.
    pub fn fold(&self, i: usize) -> f64 {
        stats::mean(&self.fold_runs.iter().map(|f| f[i]).collect::<Vec<_>>())
    }
}

/// What was run, where, and on which machine.
pub fn summary(d: &StudyData, machine: &MachineFacts) -> String {
    let managed = machine.cpus_online.saturating_sub(1);
    let alts = if d.alts.is_empty() {
        "none".to_string()
    } else {
        format!(
            "{} runs each of {}",
            d.plan.alt_runs,
            d.alts.iter().map(|a| a.0.label()).collect::<Vec<_>>().join(", ")
        )
    };
    format!(
        "Six `schedlab workload crypt` tasks with weights 1,4,8,12,16,20 under the simulator's WRR policy (slice = \
         10 ms × weight of CPU time) driven live by a user-space dispatcher: tasks SCHED_FIFO on CPU {managed}, dispatcher \
         SCHED_FIFO {dp} on CPU {dc}, priority rotation. Test 1: {r1} runs of {t1:.2} s ({rounds} rounds); kernel \
         alternatives: {alts}. Test 2: {r2} runs, {h} crypt(3) calls per task ({scale:.0}% of the seed's 2M; one \
         call (traditional DES) costs {hs:.3} µs here, the seed's about {sr:.2} µs). Scale: {sc:?}. {machine}",
        dp = super::super::host::DISPATCHER_PRIO,
        dc = super::super::host::dispatcher_cpu_for(&[managed]),
        r1 = d.t1.runs.len(),
        t1 = d.plan.t1_s(),
        rounds = d.plan.t1_rounds,
        r2 = d.t2.len(),
        h = d.t2_hashes,
        scale = d.plan.t2_scale * 100.0,
        hs = d.hash_s * 1e6,
        sr = SEED_CRYPT_S * 1e6,
        sc = d.scale,
        machine = machine.sentence(),
    )
}

/// Every table that has data.
pub fn all(d: &StudyData, s: &Test1Stats) -> Vec<Table> {
    let mut tables = Vec::new();
    if !d.t1.runs.is_empty() {
        tables.push(test1(d, s));
    }
    if !d.t2.is_empty() {
        tables.push(test2(d));
    }
    if !d.t1.runs.is_empty() || !d.alts.is_empty() {
        tables.push(shares(d, s));
    }
    if !d.t1.runs.is_empty() {
        tables.push(accuracy(d));
    }
    tables
}

fn test1(d: &StudyData, s: &Test1Stats) -> Table {
    let (avg, sd, fold) = (
        seed_col("test1_iterations_30s", "average"),
        seed_col("test1_iterations_30s", "stddev"),
        seed_col("test1_iterations_30s", "fold_over_w1"),
    );
    let seed = |v: &[f64], i: usize, d: usize| format!("{:.d$}", v.get(i).copied().unwrap_or(f64::NAN));
    let mut t = Table::new(
        format!("Test 1: iterations in {:.2} s, fold over weight 1 (seed: 30 s, 10 runs)", d.plan.t1_s()),
        &[
            "weight",
            "seed mean",
            "seed sd",
            "seed fold",
            "live mean",
            "live mean × 30 s",
            "live sd",
            "live CV",
            "live fold",
            "fold CV",
            "CPU fold",
            "CPU fold CV",
            "simulated fold",
            "ideal",
        ],
    );
    for i in 0..6 {
        let it = col(&d.t1.runs, i, |r, i| r.iterations[i]);
        let folds: Vec<f64> = s.fold_runs.iter().map(|f| f[i]).collect();
        let cpu_folds: Vec<f64> = d.t1.runs.iter().map(|r| r.cpu_s[i] / r.cpu_s[0].max(1e-9)).collect();
        t.row(vec![
            WEIGHTS[i].to_string(),
            seed(&avg, i, 0),
            seed(&sd, i, 0),
            seed(&fold, i, 2),
            format!("{:.0}", stats::mean(&it)),
            format!("{:.0}", stats::mean(&it) * 30.0 / d.plan.t1_s()),
            format!("{:.0}", stats::stddev(&it)),
            format!("{:.2}%", stats::cv(&it) * 100.0),
            format!("{:.3}", stats::mean(&folds)),
            format!("{:.2}%", stats::cv(&folds) * 100.0),
            format!("{:.3}", stats::mean(&cpu_folds)),
            format!("{:.2}%", stats::cv(&cpu_folds) * 100.0),
            format!("{:.3}", d.sim_t1_mean[i] / d.sim_t1_mean[0]),
            WEIGHTS[i].to_string(),
        ]);
    }
    t.with_note(
        "Iterations are crypt(3) calls, the seed's unit. `live mean × 30 s` brings our run to the seed's 30 s (iterations \
         grow with the run's length): the figure to set beside the seed's mean. Live fold = mean over runs of \
         (iterations / weight-1 iterations in the same run). Live CV = run-to-run \
         stddev/mean of a task's iterations (includes hash-speed drift from other jobs on the sibling CPU); fold CV \
         = run-to-run variation of the fold itself. CPU fold = the same with CPU seconds received, which is \
         what the scheduler controls (work per CPU second varies with the load on the other CPU). Simulated = the \
         simulator's WRR engine on the same tasks, work ∝ CPU time.",
    )
}

/// Test 2's folds over weight 20, per weight.
pub fn test2_folds(d: &StudyData) -> Vec<f64> {
    let fin = |r: &PerWeight, i: usize| r.finish_s[i].unwrap_or(f64::NAN);
    let live20 = stats::mean(&col(&d.t2, 5, fin));
    (0..6).map(|i| stats::mean(&col(&d.t2, i, fin)) / live20).collect()
}

fn test2(d: &StudyData) -> Table {
    let (avg, sd, fold) = (
        seed_col("test2_seconds_for_2M", "average"),
        seed_col("test2_seconds_for_2M", "stddev"),
        seed_col("test2_seconds_for_2M", "fold_over_w20"),
    );
    let seed = |v: &[f64], i: usize, d: usize| format!("{:.d$}", v.get(i).copied().unwrap_or(f64::NAN));
    let mut t = Table::new(
        format!("Test 2: seconds until each task finished {} crypt(3) calls, fold over weight 20", d.t2_hashes),
        &[
            "weight",
            "seed mean s",
            "seed sd",
            "seed fold",
            "live mean s",
            "live sd",
            "live fold",
            "simulated s",
            "simulated fold",
        ],
    );
    let folds = test2_folds(d);
    for i in 0..6 {
        let f = col(&d.t2, i, |r, i| r.finish_s[i].unwrap_or(f64::NAN));
        t.row(vec![
            WEIGHTS[i].to_string(),
            seed(&avg, i, 1),
            seed(&sd, i, 2),
            seed(&fold, i, 3),
            format!("{:.3}", stats::mean(&f)),
            format!("{:.3}", stats::stddev(&f)),
            format!("{:.3}", folds[i]),
            format!("{:.3}", d.sim_t2_mean[i]),
            format!("{:.3}", d.sim_t2_mean[i] / d.sim_t2_mean[5]),
        ]);
    }
    t.with_note(format!(
        "Seconds from the common release to the task's exit as seen by the dispatcher (polled every 5 ms). The start \
         order rotates from run to run, as the seed's varied. The job is {h} crypt(3) calls = {c:.2} s of CPU per task \
         here ({p:.0}% of the seed's 2M; the seed's rate, from its test 1, was about {sr:.2} µs a call).",
        h = d.t2_hashes,
        c = d.t2_hashes as f64 * d.hash_s,
        p = d.plan.t2_scale * 100.0,
        sr = SEED_CRYPT_S * 1e6
    ))
}

/// The column label of each kernel alternative (cgroup names its knob).
pub fn alt_labels(d: &StudyData) -> Vec<String> {
    use super::super::alternatives::Kernel;
    d.alts
        .iter()
        .map(|(k, _, raw)| match (k, raw.first()) {
            (Kernel::Cgroup, Some(r)) => {
                format!("cgroup {}", r.settings.first().map(|s| s.split('=').next().unwrap_or("")).unwrap_or(""))
            }
            _ => k.label().to_string(),
        })
        .collect()
}

fn shares(d: &StudyData, s: &Test1Stats) -> Table {
    let labels = alt_labels(d);
    let mut columns = vec!["weight", "ideal share", "simulated", "live WRR"];
    columns.extend(labels.iter().map(String::as_str));
    let mut t = Table::new(
        format!(
            "Share error per task (work share / weight share − 1, mean of runs) and run-to-run CV of work, {:.2} s runs",
            d.plan.t1_s()
        ),
        &columns,
    );
    let wsum: f64 = WEIGHTS.iter().map(|&w| w as f64).sum();
    let sim_err = share_errors(&d.sim_t1_mean);
    let alt_stats: Vec<Result<Vec<(f64, f64)>, String>> =
        d.alts.iter().map(|(_, r, _)| r.as_ref().map(|runs| share_stats(runs)).map_err(|e| e.clone())).collect();
    for i in 0..6 {
        let mut row = vec![
            WEIGHTS[i].to_string(),
            format!("{:.4}", WEIGHTS[i] as f64 / wsum),
            pct(sim_err[i]),
            if d.t1.runs.is_empty() {
                "-".into()
            } else {
                format!("{} (cv {:.2}%)", pct(s.live_stats[i].0), s.live_stats[i].1 * 100.0)
            },
        ];
        for a in &alt_stats {
            row.push(match a {
                Ok(st) if !st.is_empty() => format!("{} (cv {:.2}%)", pct(st[i].0), st[i].1 * 100.0),
                Ok(_) => "-".into(),
                Err(_) => "n/a".into(),
            });
        }
        t.row(row);
    }
    let mut note = String::from(
        "cgroup: one group per task, knob ∝ weight (v2 cpu.weight 100×w, or v1 cpu.shares 1024×w) under a parent with \
         the maximum weight; nice: the nice value whose CFS weight is nearest the weight ratio (w20 → −20, w1 → −7: \
         the 1.25× steps quantise ratios); SCHED_DEADLINE: runtime 0.9 × 10 ms × w per 610 ms period (total 90% of \
         one CPU; DEADLINE tasks cannot be pinned to one CPU of a root domain, so they could use both). Cgroup and \
         nice tasks are SCHED_OTHER pinned to the managed CPU and share it with whatever else runs there.",
    );
    for (k, r, _) in &d.alts {
        if let Err(e) = r {
            note.push_str(&format!(" {} not measured: {e}.", k.label()));
        }
    }
    t.with_note(note)
}

fn accuracy(d: &StudyData) -> Table {
    let (err, stretch) = (d.slice_err(), d.stretch());
    let disp_max = d.t1.disp_frac.iter().copied().fold(0.0, f64::max);
    let mut t = Table::new("Live host accuracy (test 1 runs)", &["measure", "unit", "value", "goal at most"]);
    let mut row = |measure: &str, unit: &str, value: String, goal: &str| {
        t.row(vec![measure.into(), unit.into(), value, goal.into()]);
    };
    row("slice error p50 (|CPU received − slice|)", "ms", format!("{:.3}", err.p50), "");
    row("slice error p99", "ms", format!("{:.3}", err.p99), "1");
    row("slice error max", "ms", format!("{:.3}", err.max), "");
    row("slices measured", "", d.t1.slice_err.len().to_string(), "");
    row("wall-clock stretch p99 (RT throttling)", "ms", format!("{:.3}", stretch.p99), "");
    let disp_mean = stats::mean(&d.t1.disp_frac) * 100.0;
    row("dispatcher CPU / managed CPU, mean", "%", format!("{disp_mean:.3}"), "");
    row("dispatcher CPU / managed CPU, max", "%", format!("{:.3}", disp_max * 100.0), "1");
    row("slice extensions (task short of its budget)", "", d.t1.extensions.to_string(), "");
    t
}

/// The results document: raw runs of every mechanism, the statistics behind the verdicts, the
/// simulator's numbers and the seed's.
pub fn data(d: &StudyData, s: &Test1Stats) -> Value {
    let alt_data: Vec<Value> = d
        .alts
        .iter()
        .map(|(k, r, raw)| match r {
            Ok(runs) => json!({"kernel": k, "runs": raw, "per_weight": runs, "share_stats": share_stats(runs)}),
            Err(e) => json!({"kernel": k, "error": e}),
        })
        .collect();
    json!({
        "weights": WEIGHTS,
        "quantum_ms": QUANTUM_NS as f64 / 1e6,
        "hash_cost_us": d.hash_s * 1e6,
        "t2_hashes": d.t2_hashes,
        "test1": {"seconds": d.plan.t1_s(), "runs": d.t1.runs, "summaries": d.t1.raw, "fold_runs": s.fold_runs,
                   "fold_err_max": s.fold_err_max, "fold_cv_max": s.fold_cv_max, "work_cv_max": s.work_cv_max,
                   "share_stats": s.live_stats},
        "test2": {"runs": d.t2, "summaries": d.t2_raw, "fold_over_w20": test2_folds(d)},
        "simulated": {"test1_cpu_s": d.sim_t1_mean, "test2_finish_s": d.sim_t2_mean},
        "alternatives": alt_data,
        "slice_error_ms": d.slice_err(),
        "slice_wall_stretch_ms": d.stretch(),
        "dispatcher_cpu_fraction": d.t1.disp_frac,
        "seed": seed_data::seed(SEED),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_errors_are_relative() {
        let exact: Vec<f64> = WEIGHTS.iter().map(|&w| w as f64 * 100.0).collect();
        assert!(share_errors(&exact).iter().all(|e| e.abs() < 1e-12));
        let mut skew = exact.clone();
        skew[0] *= 1.1;
        assert!(share_errors(&skew)[0] > 0.09);
    }
}
