//! Seed 004's two experiments in simulation: six CPU-bound tasks with weights 1, 4, 8, 12, 16,
//! 20 on one CPU under weighted round robin (slice = 10 ms × weight).
//! 1. Work done in 30 s per weight, as a fold over weight 1.
//! 2. Time to finish a fixed job per weight, over every start order (6! = 720) or a seeded
//!    sample of them — the seed blames start order for the poor correlation with weight.
//!
//! The job of experiment 2 is "2 million encryptions"; its CPU length is derived from the
//! seed's own test 1 (total iterations per second of CPU across the six tasks), not fitted to
//! test 2's finish times.

use crate::seed_data;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use schedlab_sim::engine::{simulate, SimConfig, SimResult};
use schedlab_sim::policies::WeightedRoundRobin;
use schedlab_sim::workload::{TaskSpec, Workload};
use serde::Serialize;

/// Seed 004's key in `data/seed_numbers.json`.
pub const SEED_KEY: &str = "004_weighted_round_robin";
const MS: u64 = 1_000_000;

/// Parameters of the study.
#[derive(Debug, Clone, Serialize)]
pub struct Params {
    pub weights: Vec<u32>,
    pub quantum_ms: f64,
    pub work_window_s: f64,
    /// CPU seconds one fixed job needs.
    pub job_cpu_s: f64,
    /// Start orders to simulate: None = all permutations.
    pub orders: Option<usize>,
    pub seed: u64,
    pub switch_cost_us: f64,
}

impl Params {
    /// The seed's setup; the job length comes from test 1's iteration rate.
    pub fn from_seed(orders: Option<usize>, seed: u64) -> Params {
        let weights: Vec<u32> = seed_data::numbers(SEED_KEY, "weights").iter().map(|&w| w as u32).collect();
        let weights = if weights.is_empty() { vec![1, 4, 8, 12, 16, 20] } else { weights };
        let slice = seed_data::seed(SEED_KEY)["slice_ms_per_weight"].as_f64().unwrap_or(10.0);
        let iters_30s: f64 = seed_data::seed(SEED_KEY)["test1_iterations_30s"]["average"]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_f64()).sum())
            .unwrap_or(7_079_539.0);
        let rate = iters_30s / 30.0;
        Params {
            weights,
            quantum_ms: slice,
            work_window_s: 30.0,
            job_cpu_s: 2.0e6 / rate,
            orders,
            seed,
            switch_cost_us: 0.0,
        }
    }
}

/// Mean, min and max of one quantity per weight over start orders.
#[derive(Debug, Clone, Serialize)]
pub struct PerWeightRange {
    pub mean: Vec<f64>,
    pub min: Vec<f64>,
    pub max: Vec<f64>,
}

impl PerWeightRange {
    fn of(rows: &[Vec<f64>]) -> PerWeightRange {
        let n = rows[0].len();
        let col = |i: usize| rows.iter().map(move |r| r[i]);
        PerWeightRange {
            mean: (0..n).map(|i| col(i).sum::<f64>() / rows.len() as f64).collect(),
            min: (0..n).map(|i| col(i).fold(f64::INFINITY, f64::min)).collect(),
            max: (0..n).map(|i| col(i).fold(f64::NEG_INFINITY, f64::max)).collect(),
        }
    }
}

/// What the study found.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub params: Params,
    pub orders_run: usize,
    /// CPU seconds in the window, per weight.
    pub work_s: PerWeightRange,
    /// mean work(w) / mean work(1).
    pub work_fold: Vec<f64>,
    /// Per-order fold extremes.
    pub work_fold_min: Vec<f64>,
    pub work_fold_max: Vec<f64>,
    /// Finish time of the fixed job, seconds, per weight.
    pub finish_s: PerWeightRange,
    /// mean finish(w) / mean finish(highest weight).
    pub finish_fold: Vec<f64>,
    /// Fraction of orders in which the highest weight is not the first to finish.
    pub top_weight_not_first: f64,
    /// One order's run (the one with weight 8 first, as in the seed's figure) for a Gantt chart.
    #[serde(skip)]
    pub example: Option<(Workload, SimResult)>,
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = vec![];
    for p in permutations(n - 1) {
        for i in 0..=p.len() {
            let mut q = p.clone();
            q.insert(i, n - 1);
            out.push(q);
        }
    }
    out
}

fn workload(weights: &[u32], order: &[usize], burst: u64) -> Workload {
    // Equal arrival times: the engine starts them in list order, so the list order is the start order.
    let tasks = order
        .iter()
        .map(|&i| TaskSpec { weight: weights[i], ..TaskSpec::cpu(&format!("w{}", weights[i]), 0, burst) })
        .collect();
    Workload { cpus: Some(1), tasks }
}

/// Values of a run, reordered back to weight order.
fn by_weight(order: &[usize], r: &SimResult, f: impl Fn(&schedlab_sim::engine::TaskResult) -> f64) -> Vec<f64> {
    let mut v = vec![0.0; order.len()];
    for (pos, &i) in order.iter().enumerate() {
        v[i] = f(&r.tasks[pos]);
    }
    v
}

/// Run both experiments.
pub fn run(params: &Params) -> Outcome {
    let n = params.weights.len();
    let mut orders = permutations(n);
    if let Some(k) = params.orders.filter(|&k| k < orders.len()) {
        orders.shuffle(&mut ChaCha8Rng::seed_from_u64(params.seed));
        orders.truncate(k);
    }
    let cfg = SimConfig {
        cpus: 1,
        switch_cost: (params.switch_cost_us * 1e3) as u64,
        horizon: Some((params.work_window_s * 1e9) as u64),
        record_slices: false,
        ..SimConfig::default()
    };
    let quantum = (params.quantum_ms * 1e6) as u64;
    let endless = 1_000_000_000 * MS;
    let mut work = vec![];
    let mut folds = vec![];
    for o in &orders {
        let w = workload(&params.weights, o, endless);
        let r = simulate(&w, &mut WeightedRoundRobin::new(quantum), &cfg);
        let v = by_weight(o, &r, |t| t.cpu as f64 / 1e9);
        folds.push(v.iter().map(|x| x / v[0]).collect::<Vec<_>>());
        work.push(v);
    }
    let job = (params.job_cpu_s * 1e9) as u64;
    let cfg2 = SimConfig { horizon: None, ..cfg.clone() };
    let mut finish = vec![];
    let mut not_first = 0usize;
    for o in &orders {
        let w = workload(&params.weights, o, job);
        let r = simulate(&w, &mut WeightedRoundRobin::new(quantum), &cfg2);
        let v = by_weight(o, &r, |t| t.finish.unwrap_or(0) as f64 / 1e9);
        let top = v[n - 1];
        if v.iter().take(n - 1).any(|&x| x < top) {
            not_first += 1;
        }
        finish.push(v);
    }
    let work_s = PerWeightRange::of(&work);
    let fold_spread = PerWeightRange::of(&folds);
    let finish_s = PerWeightRange::of(&finish);
    let work_fold = work_s.mean.iter().map(|x| x / work_s.mean[0]).collect();
    let finish_fold = finish_s.mean.iter().map(|x| x / finish_s.mean[n - 1]).collect();
    // The seed's figure: weight 8 ran first. Show the first 3 s of that order.
    let w8 = params.weights.iter().position(|&w| w == 8).unwrap_or(0);
    let mut order: Vec<usize> = (0..n).collect();
    order.retain(|&i| i != w8);
    order.insert(0, w8);
    let ex_w = workload(&params.weights, &order, job);
    let ex_cfg = SimConfig { horizon: Some(3_000 * MS), record_slices: true, ..cfg2 };
    let ex_r = simulate(&ex_w, &mut WeightedRoundRobin::new(quantum), &ex_cfg);
    Outcome {
        params: params.clone(),
        orders_run: orders.len(),
        work_s,
        work_fold,
        work_fold_min: fold_spread.min,
        work_fold_max: fold_spread.max,
        finish_s,
        finish_fold,
        top_weight_not_first: not_first as f64 / orders.len() as f64,
        example: Some((ex_w, ex_r)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_720_orders() {
        assert_eq!(permutations(6).len(), 720);
        let mut p = permutations(4);
        p.sort();
        p.dedup();
        assert_eq!(p.len(), 24);
    }

    #[test]
    fn work_follows_weight_within_two_percent() {
        let o = run(&Params::from_seed(Some(60), 1));
        for (w, f) in o.params.weights.iter().zip(&o.work_fold) {
            let err = (f / *w as f64 - 1.0).abs();
            assert!(err < 0.02, "weight {w}: fold {f:.3} is {:.2}% off", 100.0 * err);
        }
        // The job is 2M iterations at test 1's rate (≈ 8.5 s of CPU); six of them ≈ 51 s in all.
        let last = o.finish_s.mean.iter().cloned().fold(0.0, f64::max);
        assert!((last - 6.0 * o.params.job_cpu_s).abs() < 0.01, "the CPU is never idle: {last}");
    }
}
