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

/// Compute the overall metrics of a run that ended at `end` on `cpus` CPUs.
pub fn overall(tasks: &[TaskResult], cpus: usize, end: Time) -> Overall {
    let done: Vec<&TaskResult> = tasks.iter().filter(|t| t.finish.is_some()).collect();
    let makespan = end;
    let turn: Vec<f64> = done.iter().filter_map(|t| t.turnaround).map(|x| x as f64).collect();
    let wait: Vec<f64> = done.iter().map(|t| t.waiting as f64).collect();
    let resp: Vec<f64> = tasks.iter().filter_map(|t| t.response).map(|x| x as f64).collect();
    let cpu_total: u64 = tasks.iter().map(|t| t.cpu).sum();
    let w_total: f64 = tasks.iter().map(|t| t.weight as f64).sum();
    let per_weight: Vec<f64> = tasks.iter().map(|t| t.cpu as f64 / t.weight.max(1) as f64).collect();
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
    let secs = makespan as f64 / 1e9;
    Overall {
        finished: done.len(),
        tasks: tasks.len(),
        makespan,
        avg_turnaround: mean(&turn),
        avg_waiting: mean(&wait),
        avg_response: mean(&resp),
        max_waiting: done.iter().map(|t| t.waiting).max().unwrap_or(0),
        throughput: if secs > 0.0 { done.len() as f64 / secs } else { 0.0 },
        utilisation: if makespan > 0 { cpu_total as f64 / (cpus as f64 * makespan as f64) } else { 0.0 },
        context_switches: tasks.iter().map(|t| t.context_switches).sum(),
        preemptions: tasks.iter().map(|t| t.preemptions).sum(),
        migrations: tasks.iter().map(|t| t.migrations).sum(),
        deadline_misses: tasks.iter().map(|t| t.deadline_misses).sum(),
        jain_cpu_per_weight: jain(&per_weight),
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
