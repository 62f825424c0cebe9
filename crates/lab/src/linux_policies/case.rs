//! One measured case (policy × workload × process count): the seed's rusage sums and
//! averages, plus wall time, turnaround from release to reap, and throughput.

use super::params::WorkloadKind;
use schedlab_os::rusage::Usage;
use schedlab_os::sched::LinuxPolicy;
use schedlab_report::stats;
use serde::{Deserialize, Serialize};

/// Everything measured in one case. Sums are over every reaped child, as seed 001's
/// sched_test.c sums the rusage wait3 returns; averages divide by the children reaped.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CaseResult {
    pub policy: LinuxPolicy,
    pub workload: WorkloadKind,
    pub procs: usize,
    /// Children that exited with status 0.
    pub completed: usize,
    /// Children killed at the timeout or on a stop signal.
    pub killed: usize,
    /// Children that exited with another status.
    pub failed: usize,
    pub sys_s: f64,
    pub user_s: f64,
    pub total_s: f64,
    /// total_s / children reaped (the seed's "Average Time").
    pub avg_s: f64,
    /// Standard deviation of one child's CPU time (user + system) over the children that
    /// completed: with [`CaseResult::cpu_s`] the spread the verdicts are judged by.
    #[serde(default)]
    pub cpu_sd_s: f64,
    pub voluntary_ctx: i64,
    pub involuntary_ctx: i64,
    pub avg_voluntary_ctx: f64,
    pub avg_involuntary_ctx: f64,
    /// Release to the last reap.
    pub wall_s: f64,
    /// Forking every child and getting it to the start gate.
    pub spawn_s: f64,
    pub turnaround_mean_s: f64,
    pub turnaround_p50_s: f64,
    pub turnaround_p95_s: f64,
    pub turnaround_max_s: f64,
    /// Children completed per second of wall time.
    pub throughput_per_s: f64,
    pub max_rss_kb: i64,
    /// CPUs the children were pinned to.
    pub cpus: Vec<usize>,
    /// RT priority (FIFO/RR) or 0; SCHED_DEADLINE runtime/period in ns when used.
    pub priority: i32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_runtime_ns: Option<u64>,
    pub timed_out: bool,
    pub interrupted: bool,
    /// CPU time (user + system, s) of each child that completed, in reap order: the per-process
    /// samples the verdicts compare. Kept out of results.json (its mean and spread are there).
    #[serde(skip)]
    pub cpu_s: Vec<f64>,
    /// Involuntary context switches of each child that completed, in the same order.
    #[serde(skip)]
    pub involuntary: Vec<f64>,
}

/// One reaped child: its rusage, exit and turnaround.
#[derive(Debug, Clone, Copy)]
pub struct ChildOutcome {
    pub usage: Usage,
    pub success: bool,
    pub killed: bool,
    pub turnaround_s: f64,
}

/// How the case ran (everything but the children's numbers).
#[derive(Debug, Clone)]
pub struct CaseFrame {
    pub policy: LinuxPolicy,
    pub workload: WorkloadKind,
    pub procs: usize,
    pub cpus: Vec<usize>,
    pub priority: i32,
    pub deadline_runtime_ns: Option<u64>,
    pub spawn_s: f64,
    pub wall_s: f64,
    pub timed_out: bool,
    pub interrupted: bool,
}

impl CaseResult {
    /// Sum and summarise the children of a case.
    pub fn from_children(frame: CaseFrame, children: &[ChildOutcome]) -> Self {
        let mut sum = Usage::default();
        for c in children {
            sum.add(&c.usage);
        }
        let reaped = children.len().max(1) as f64;
        let turn: Vec<f64> = children.iter().filter(|c| !c.killed).map(|c| c.turnaround_s).collect();
        let completed = children.iter().filter(|c| c.success).count();
        let cpu_s: Vec<f64> = children.iter().filter(|c| c.success).map(|c| c.usage.user_s + c.usage.sys_s).collect();
        let involuntary: Vec<f64> =
            children.iter().filter(|c| c.success).map(|c| c.usage.involuntary_ctx as f64).collect();
        let killed = children.iter().filter(|c| c.killed).count();
        CaseResult {
            policy: frame.policy,
            workload: frame.workload,
            procs: frame.procs,
            completed,
            killed,
            failed: children.len() - completed - killed,
            sys_s: sum.sys_s,
            user_s: sum.user_s,
            total_s: sum.sys_s + sum.user_s,
            avg_s: (sum.sys_s + sum.user_s) / reaped,
            cpu_sd_s: if cpu_s.len() >= 2 { stats::stddev(&cpu_s) } else { 0.0 },
            voluntary_ctx: sum.voluntary_ctx,
            involuntary_ctx: sum.involuntary_ctx,
            avg_voluntary_ctx: sum.voluntary_ctx as f64 / reaped,
            avg_involuntary_ctx: sum.involuntary_ctx as f64 / reaped,
            wall_s: frame.wall_s,
            spawn_s: frame.spawn_s,
            turnaround_mean_s: stats::mean(&turn),
            turnaround_p50_s: stats::percentile(&turn, 50.0),
            turnaround_p95_s: stats::percentile(&turn, 95.0),
            turnaround_max_s: turn.iter().copied().fold(0.0, f64::max),
            throughput_per_s: if frame.wall_s > 0.0 { completed as f64 / frame.wall_s } else { 0.0 },
            max_rss_kb: sum.max_rss_kb,
            cpus: frame.cpus,
            priority: frame.priority,
            deadline_runtime_ns: frame.deadline_runtime_ns,
            timed_out: frame.timed_out,
            interrupted: frame.interrupted,
            cpu_s,
            involuntary,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_and_averages_like_the_seed() {
        let u = |user: f64, inv: i64| Usage {
            user_s: user,
            sys_s: 0.01,
            voluntary_ctx: 7,
            involuntary_ctx: inv,
            ..Default::default()
        };
        let kids = [
            ChildOutcome { usage: u(0.1, 2), success: true, killed: false, turnaround_s: 0.1 },
            ChildOutcome { usage: u(0.1, 4), success: true, killed: false, turnaround_s: 0.2 },
            ChildOutcome { usage: u(0.05, 0), success: false, killed: true, turnaround_s: 9.0 },
        ];
        let frame = CaseFrame {
            policy: LinuxPolicy::Other,
            workload: WorkloadKind::Cpu,
            procs: 3,
            cpus: vec![1],
            priority: 0,
            deadline_runtime_ns: None,
            spawn_s: 0.01,
            wall_s: 0.5,
            timed_out: true,
            interrupted: false,
        };
        let r = CaseResult::from_children(frame, &kids);
        assert!((r.user_s - 0.25).abs() < 1e-12);
        assert!((r.total_s - 0.28).abs() < 1e-12);
        assert_eq!(r.involuntary_ctx, 6);
        assert!((r.avg_involuntary_ctx - 2.0).abs() < 1e-12);
        assert_eq!((r.completed, r.killed, r.failed), (2, 1, 0));
        // Killed children do not count towards turnaround.
        assert!((r.turnaround_max_s - 0.2).abs() < 1e-12);
        assert!((r.throughput_per_s - 4.0).abs() < 1e-12);
        // Per-process samples: the completed children only (0.11 s each), so no spread.
        assert_eq!(r.cpu_s.len(), 2);
        assert!(r.cpu_s.iter().all(|x| (x - 0.11).abs() < 1e-12), "{:?}", r.cpu_s);
        assert_eq!(r.cpu_sd_s, 0.0);
    }
}
