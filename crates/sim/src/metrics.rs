//! Overall metrics of a run: averages, makespan, throughput, utilisation, Jain's fairness index
//! and CPU share per weight. Pure arithmetic on per-task results (this crate must not depend on
//! `schedlab-report`, so Jain's index and the mean live here too).

use crate::engine::TaskResult;
use crate::policy::Time;
use serde::Serialize;

/// Whole-run metrics. Times in ns, rates per second, fractions in 0..=1.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overall {
    /// Tasks that finished before the horizon.
    pub finished: usize,
    pub tasks: usize,
    /// Time of the last event (the last completion when every task finished).
    pub makespan: Time,
    /// Averages over finished tasks (response: over tasks that ran).
    pub avg_turnaround: f64,
    pub avg_waiting: f64,
    pub avg_response: f64,
    pub max_waiting: u64,
    /// Finished tasks per second of virtual time.
    pub throughput: f64,
    /// CPU time used by tasks / (CPUs × makespan).
    pub utilisation: f64,
    pub context_switches: u64,
    pub preemptions: u64,
    pub migrations: u64,
    pub deadline_misses: u64,
    /// Jain's index of CPU received per unit weight (1 = shares exactly follow the weights).
    pub jain_cpu_per_weight: f64,
    /// max over tasks of |share / (weight / Σweight) − 1|, share = cpu / Σcpu.
    pub share_error_max: f64,
}

/// Arithmetic mean; 0 for an empty slice.
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

/// Jain's fairness index (Σx)² / (n·Σx²): 1 when all equal, 1/n when one takes everything.
pub fn jain(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if sq == 0.0 {
        1.0
    } else {
        sum * sum / (xs.len() as f64 * sq)
    }
}

/// Compute the overall metrics of a run that ended at `end` on `cpus` CPUs (two passes, no
/// allocation: the benchmark runs this on 100,000 tasks).
pub fn overall(tasks: &[TaskResult], cpus: usize, end: Time) -> Overall {
    let makespan = end;
    let (mut finished, mut turn, mut wait, mut max_wait) = (0usize, 0f64, 0f64, 0u64);
    let (mut responded, mut resp) = (0usize, 0f64);
    let (mut cpu_total, mut w_total) = (0u64, 0f64);
    let (mut cs, mut pre, mut mig, mut miss) = (0u64, 0u64, 0u64, 0u64);
    let (mut jsum, mut jsq) = (0f64, 0f64);
    for t in tasks {
        if let Some(ta) = t.turnaround {
            finished += 1;
            turn += ta as f64;
            wait += t.waiting as f64;
            max_wait = max_wait.max(t.waiting);
        }
        if let Some(r) = t.response {
            responded += 1;
            resp += r as f64;
        }
        cpu_total += t.cpu;
        w_total += t.weight as f64;
        cs += t.context_switches;
        pre += t.preemptions;
        mig += t.migrations;
        miss += t.deadline_misses;
        let x = t.cpu as f64 / t.weight.max(1) as f64;
        jsum += x;
        jsq += x * x;
    }
    let share_error_max = if cpu_total == 0 {
        0.0
    } else {
        tasks
            .iter()
            .map(|t| {
                let share = t.cpu as f64 / cpu_total as f64;
                let expected = t.weight as f64 / w_total;
                (share / expected - 1.0).abs()
            })
            .fold(0.0, f64::max)
    };
    let avg = |sum: f64, n: usize| if n == 0 { 0.0 } else { sum / n as f64 };
    let secs = makespan as f64 / 1e9;
    Overall {
        finished,
        tasks: tasks.len(),
        makespan,
        avg_turnaround: avg(turn, finished),
        avg_waiting: avg(wait, finished),
        avg_response: avg(resp, responded),
        max_waiting: max_wait,
        throughput: if secs > 0.0 { finished as f64 / secs } else { 0.0 },
        utilisation: if makespan > 0 { cpu_total as f64 / (cpus as f64 * makespan as f64) } else { 0.0 },
        context_switches: cs,
        preemptions: pre,
        migrations: mig,
        deadline_misses: miss,
        jain_cpu_per_weight: if jsq == 0.0 { 1.0 } else { jsum * jsum / (tasks.len() as f64 * jsq) },
        share_error_max,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_bounds() {
        assert!((jain(&[1.0, 1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert_eq!(mean(&[]), 0.0);
        assert_eq!(mean(&[1.0, 2.0]), 1.5);
    }
}
