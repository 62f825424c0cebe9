//! The simulator's prediction for the study's tasks: the same six CPU-bound tasks in the same
//! start orders under the simulator's WRR engine.

use super::plan::{order, Plan, QUANTUM_NS, WEIGHTS};
use schedlab_report::stats;
use schedlab_sim::engine::{simulate, SimConfig};
use schedlab_sim::policies::WeightedRoundRobin;
use schedlab_sim::workload::{TaskSpec, Workload};

fn workload(order: &[usize], demand_ns: u64) -> Workload {
    let tasks = order
        .iter()
        .map(|&i| TaskSpec { weight: WEIGHTS[i], ..TaskSpec::cpu(&format!("w{}", WEIGHTS[i]), 0, demand_ns) })
        .collect();
    Workload { cpus: Some(1), tasks }
}

/// Simulated CPU seconds per task (WEIGHTS order) after `horizon_ns` of WRR with CPU-bound tasks.
pub fn test1(order: &[usize], horizon_ns: u64) -> Vec<f64> {
    let cfg = SimConfig { horizon: Some(horizon_ns), record_slices: false, ..SimConfig::default() };
    let r = simulate(&workload(order, horizon_ns * 10), &mut WeightedRoundRobin::new(QUANTUM_NS), &cfg);
    let mut out = vec![0.0; 6];
    for (k, &i) in order.iter().enumerate() {
        out[i] = r.tasks[k].cpu as f64 / 1e9;
    }
    out
}

/// Simulated finish times (s, WEIGHTS order) when every task needs `demand_ns` of CPU.
pub fn test2(order: &[usize], demand_ns: u64) -> Vec<f64> {
    let cfg = SimConfig { record_slices: false, ..SimConfig::default() };
    let r = simulate(&workload(order, demand_ns), &mut WeightedRoundRobin::new(QUANTUM_NS), &cfg);
    let mut out = vec![0.0; 6];
    for (k, &i) in order.iter().enumerate() {
        out[i] = r.tasks[k].finish.unwrap_or(0) as f64 / 1e9;
    }
    out
}

/// Mean over the plan's start orders: test 1's CPU seconds and test 2's finish times per weight.
pub fn means(plan: &Plan, demand_ns: u64) -> (Vec<f64>, Vec<f64>) {
    let t1: Vec<Vec<f64>> = (0..plan.t1_runs.max(1)).map(|r| test1(&order(r), plan.t1_ns())).collect();
    let t2: Vec<Vec<f64>> = (0..plan.t2_runs.max(1)).map(|r| test2(&order(r), demand_ns)).collect();
    let mean =
        |rows: &[Vec<f64>]| (0..6).map(|i| stats::mean(&rows.iter().map(|v| v[i]).collect::<Vec<_>>())).collect();
    (mean(&t1), mean(&t2))
}

#[cfg(test)]
mod tests {
    use super::super::plan::round_ns;
    use super::*;

    #[test]
    fn simulated_shares_follow_weights_on_round_boundaries() {
        let cpu = test1(&order(2), 8 * round_ns());
        for i in 0..6 {
            assert!((cpu[i] / cpu[0] - WEIGHTS[i] as f64).abs() < 1e-9, "{cpu:?}");
        }
        let fin = test2(&order(0), 2_000_000_000);
        assert!(fin[0] > fin[5], "weight 1 finishes after weight 20: {fin:?}");
        assert!((fin[0] - 12.0).abs() < 1e-6, "the last task finishes at the total work: {fin:?}");
    }
}
