//! The kernel's own ways to weight CPU time, run with the same tasks as the live WRR host:
//! cgroup CPU weights (v2 `cpu.weight`, or v1 `cpu.shares`), nice levels, and SCHED_DEADLINE
//! reservations with runtime ∝ weight. Each run releases all tasks at once, lets them run for
//! a fixed time, freezes them together and reads their CPU time and reported work.

use super::spec::WrrTask;
use super::tasks::{crypt_result, TaskSet};
use anyhow::{bail, Context, Result};
use schedlab_os::cgroup::{CpuController, CpuGroupSet};
use schedlab_os::sched::{self, SchedParams};
use schedlab_os::{affinity, clock, signals};
use schedlab_sim::policies::cfs::NICE_TO_WEIGHT;
use serde::Serialize;
use std::time::Duration;

/// Which kernel mechanism weights the tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kernel {
    /// One cgroup per task, knob ∝ weight, under a parent with the maximum weight.
    Cgroup,
    /// SCHED_OTHER nice values whose CFS weights are closest to the weight ratios.
    Nice,
    /// SCHED_DEADLINE runtime = 0.9 × quantum × weight per period = quantum × Σ weight.
    Deadline,
}

impl Kernel {
    /// Column label.
    pub fn label(self) -> &'static str {
        match self {
            Kernel::Cgroup => "cgroup",
            Kernel::Nice => "nice",
            Kernel::Deadline => "SCHED_DEADLINE",
        }
    }
}

/// Total SCHED_DEADLINE bandwidth given to the tasks (fraction of one CPU; admission control
/// allows at most sched_rt_runtime/sched_rt_period = 95% per CPU).
pub const DEADLINE_BANDWIDTH: f64 = 0.9;

/// Nice values whose CFS weights best match `weights` (the largest weight gets nice −20).
pub fn nice_for(weights: &[u32]) -> Vec<i32> {
    let max = *weights.iter().max().unwrap_or(&1) as f64;
    weights
        .iter()
        .map(|&w| {
            let want = NICE_TO_WEIGHT[0] as f64 * w as f64 / max;
            (0..40)
                .min_by(|&a, &b| {
                    let da = (NICE_TO_WEIGHT[a] as f64 / want).ln().abs();
                    let db = (NICE_TO_WEIGHT[b] as f64 / want).ln().abs();
                    da.total_cmp(&db)
                })
                .map(|i| i as i32 - 20)
                .unwrap_or(0)
        })
        .collect()
}

/// One run of a kernel mechanism.
#[derive(Debug, Clone, Serialize)]
pub struct AltRun {
    pub kernel: Kernel,
    pub wall_s: f64,
    pub cpu_s: Vec<f64>,
    pub iterations: Vec<Option<u64>>,
    /// What was configured, per task (knob values, nice values, runtime/period).
    pub settings: Vec<String>,
    pub interrupted: bool,
}

/// Run `specs` for `duration` under `kernel`. Cgroup and nice runs are pinned to `cpus`;
/// SCHED_DEADLINE tasks cannot be pinned to part of a root domain, so they may use every CPU
/// (their total bandwidth stays below one CPU).
pub fn run(kernel: Kernel, specs: &[WrrTask], cpus: &[usize], duration: Duration, quantum_ns: u64) -> Result<AltRun> {
    if !schedlab_os::is_root() {
        bail!("cgroups, negative nice values and SCHED_DEADLINE need root: run with sudo");
    }
    let weights: Vec<u32> = specs.iter().map(|s| s.weight).collect();
    let mut settings = Vec::new();
    let (groups, set) = match kernel {
        Kernel::Cgroup => {
            let ctl = CpuController::detect()?;
            let groups = CpuGroupSet::create(&ctl, &format!("schedlab-wrr-{}", std::process::id()), &weights)?;
            let set = TaskSet::spawn(specs, cpus)?;
            for i in 0..set.len() {
                groups.add(i, set.pid(i))?;
                settings.push(format!("{}={}", ctl.knob(), groups.child_value(i)?));
            }
            (Some(groups), set)
        }
        Kernel::Nice => {
            let set = TaskSet::spawn(specs, cpus)?;
            for (i, n) in nice_for(&weights).into_iter().enumerate() {
                sched::set_sched(set.pid(i), &SchedParams::other_nice(n))?;
                settings.push(format!("nice {n}"));
            }
            (None, set)
        }
        Kernel::Deadline => {
            let all: Vec<usize> = (0..affinity::online_cpus()).collect();
            let set = TaskSet::spawn(specs, &all)?;
            let period = quantum_ns * weights.iter().map(|&w| w as u64).sum::<u64>();
            for (i, &w) in weights.iter().enumerate() {
                let runtime = ((quantum_ns * w as u64) as f64 * DEADLINE_BANDWIDTH) as u64;
                let p = SchedParams::deadline(runtime, period, period)?;
                sched::set_sched(set.pid(i), &p).with_context(|| {
                    format!(
                        "SCHED_DEADLINE runtime {:.2} ms / period {:.0} ms for task {i}",
                        runtime as f64 / 1e6,
                        period as f64 / 1e6
                    )
                })?;
                settings.push(format!("runtime {:.2} ms / {:.0} ms", runtime as f64 / 1e6, period as f64 / 1e6));
            }
            (None, set)
        }
    };
    let mut set = set;
    for i in 0..set.len() {
        set.release(i)?;
    }
    let t0 = clock::monotonic_ns();
    let end = t0 + duration.as_nanos() as u64;
    let mut interrupted = false;
    while clock::monotonic_ns() < end {
        if signals::stop_requested() {
            interrupted = true;
            break;
        }
        clock::sleep_until_ns(end.min(clock::monotonic_ns() + 50_000_000))?;
    }
    set.freeze();
    let wall_s = (clock::monotonic_ns() - t0) as f64 / 1e9;
    let cpu_s: Vec<f64> = (0..set.len()).map(|i| set.cpu_ns(i) as f64 / 1e9).collect();
    let ends = set.finish(Duration::from_secs(2));
    drop(groups);
    Ok(AltRun {
        kernel,
        wall_s,
        cpu_s,
        iterations: ends.iter().map(|e| crypt_result(&e.output).map(|(n, _)| n)).collect(),
        settings,
        interrupted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_values_follow_weight_ratios() {
        let n = nice_for(&[1, 4, 8, 12, 16, 20]);
        assert_eq!(n[5], -20);
        assert_eq!(n[0], -7); // 88761/20 = 4438 → nice −7 (4904) is the nearest in log terms
        assert!(n.windows(2).all(|w| w[0] >= w[1]));
    }
}
