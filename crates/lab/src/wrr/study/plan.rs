//! What the study runs: which mechanisms, how many runs of how long at each scale, and the
//! seed's constants (weights, quantum, the CPU cost of one of its crypts).

use super::super::spec::WrrTask;
use crate::Scale;
use anyhow::Result;

/// The seed's weights.
pub const WEIGHTS: [u32; 6] = [1, 4, 8, 12, 16, 20];
/// The seed's base quantum (10 ms × weight).
pub const QUANTUM_NS: u64 = 10_000_000;
/// The seed's work rate: 7,079,539 crypt(3) calls in 30 s by all six tasks together (test 1
/// totals), i.e. the CPU time of one of the seed's calls; used for time estimates (ours cost
/// about the same) and shown beside our measured cost.
pub const SEED_CRYPT_S: f64 = 30.0 / 7_079_539.0;
/// The seed's key in `data/seed_numbers.json`.
pub const SEED: &str = "004_weighted_round_robin";

/// Which mechanisms to measure, and which of the two tests the live host runs.
#[derive(Debug, Clone, Copy)]
pub struct Mechanisms {
    pub wrr: bool,
    /// Run test 1 (work in a fixed time) with the live host.
    pub test1: bool,
    /// Run test 2 (time to finish a fixed job) with the live host.
    pub test2: bool,
    pub cgroup: bool,
    pub nice: bool,
    pub deadline: bool,
}

impl Mechanisms {
    /// Everything.
    pub fn all() -> Self {
        Mechanisms { wrr: true, test1: true, test2: true, cgroup: true, nice: true, deadline: true }
    }

    /// Parse `wrr,cgroup,nice,deadline` (any subset), naming an unknown entry.
    pub fn parse(list: &[String]) -> Result<Self> {
        let mut w = Mechanisms { wrr: false, test1: true, test2: true, cgroup: false, nice: false, deadline: false };
        for item in list {
            match item.trim() {
                "wrr" => w.wrr = true,
                "cgroup" => w.cgroup = true,
                "nice" => w.nice = true,
                "deadline" => w.deadline = true,
                other => schedlab_os::bail_usage!(
                    "unknown mechanism '{other}' in --only (expected wrr, cgroup, nice, deadline)"
                ),
            }
        }
        Ok(w)
    }

    /// The kernel alternatives asked for, in table order.
    pub fn kernels(&self) -> Vec<super::super::alternatives::Kernel> {
        use super::super::alternatives::Kernel;
        [(self.cgroup, Kernel::Cgroup), (self.nice, Kernel::Nice), (self.deadline, Kernel::Deadline)]
            .into_iter()
            .filter_map(|(on, k)| on.then_some(k))
            .collect()
    }

    /// Number of live-host runs asked for under `plan`.
    pub fn live_runs(&self, plan: &Plan) -> usize {
        if !self.wrr {
            return 0;
        }
        (if self.test1 { plan.t1_runs } else { 0 }) + if self.test2 { plan.t2_runs } else { 0 }
    }
}

/// Sizes of one study.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Plan {
    /// Test 1 runs of the live WRR host.
    pub t1_runs: usize,
    /// Test 1 length in WRR rounds (one round = 10 ms × Σ weights = 610 ms).
    pub t1_rounds: u64,
    /// Test 1 runs of each kernel alternative.
    pub alt_runs: usize,
    /// Test 2 runs.
    pub t2_runs: usize,
    /// Test 2 job as a fraction of the seed's (2 million seed crypts of CPU work per task).
    pub t2_scale: f64,
}

impl Plan {
    /// The plan for a scale: quick ≈ 90 s, default ≈ 3–4 min, full = the seed's 10 × 30 s.
    pub fn for_scale(scale: Scale) -> Self {
        match scale {
            Scale::Quick => Plan { t1_runs: 3, t1_rounds: 8, alt_runs: 3, t2_runs: 2, t2_scale: 0.05 },
            Scale::Default => Plan { t1_runs: 5, t1_rounds: 16, alt_runs: 3, t2_runs: 3, t2_scale: 0.25 },
            Scale::Full => Plan { t1_runs: 10, t1_rounds: 49, alt_runs: 10, t2_runs: 10, t2_scale: 1.0 },
        }
    }

    /// Test 1 duration in ns (a whole number of rounds).
    pub fn t1_ns(&self) -> u64 {
        self.t1_rounds * round_ns()
    }

    /// Test 1 duration in seconds.
    pub fn t1_s(&self) -> f64 {
        self.t1_ns() as f64 / 1e9
    }
}

/// One WRR round: every task's slice once.
pub fn round_ns() -> u64 {
    QUANTUM_NS * WEIGHTS.iter().map(|&w| w as u64).sum::<u64>()
}

/// Rotate the six tasks so run `r` starts with a different one (the seed's release order
/// varied from run to run); returns the task order as indices into WEIGHTS.
pub fn order(r: usize) -> Vec<usize> {
    (0..WEIGHTS.len()).map(|i| (i + r) % WEIGHTS.len()).collect()
}

/// The six crypt tasks in `order`: hashing forever, or `iterations` hashes each.
pub fn crypt_specs(exe: &str, order: &[usize], iterations: Option<u64>) -> Vec<WrrTask> {
    order
        .iter()
        .map(|&i| {
            let mut argv = vec![exe.to_string(), "workload".into(), "crypt".into()];
            match iterations {
                Some(n) => argv.extend(["--iterations".into(), n.to_string()]),
                None => argv.push("--forever".into()),
            }
            WrrTask { weight: WEIGHTS[i], argv }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_fit_their_budgets() {
        let secs = |p: Plan, kernels: usize| {
            let t1 = p.t1_s();
            let t2 = 6.0 * 2_000_000.0 * SEED_CRYPT_S * p.t2_scale;
            p.t1_runs as f64 * t1 + kernels as f64 * p.alt_runs as f64 * t1 + p.t2_runs as f64 * t2
        };
        assert!(secs(Plan::for_scale(Scale::Quick), 3) < 80.0);
        assert!(secs(Plan::for_scale(Scale::Default), 3) < 220.0);
        let full = Plan::for_scale(Scale::Full);
        assert_eq!((full.t1_runs, full.t1_ns()), (10, 29_890_000_000));
    }

    #[test]
    fn mechanisms_parse_and_name_unknown_ones() {
        let m = Mechanisms::parse(&["wrr".into(), "nice".into()]).unwrap();
        assert!(m.wrr && m.nice && !m.cgroup && !m.deadline);
        assert_eq!(m.kernels().len(), 1);
        assert!(Mechanisms::parse(&["wrr".into(), "bogus".into()]).unwrap_err().to_string().contains("bogus"));
    }
}
