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
    let mut acc = Accum::new(tasks.len());
    for (i, t) in tasks.iter().enumerate() {
        acc.add(i, &TaskSums::of(t));
    }
    acc.finish(cpus, end)
}

/// What [`Overall`] needs of one task.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskSums {
    pub turnaround: Option<u64>,
    pub waiting: u64,
    pub response: Option<u64>,
    pub cpu: u64,
    pub weight: u32,
    pub context_switches: u64,
    pub preemptions: u64,
    pub migrations: u64,
    pub deadline_misses: u64,
}

impl TaskSums {
    pub fn of(t: &TaskResult) -> Self {
        TaskSums {
            turnaround: t.turnaround,
            waiting: t.waiting,
            response: t.response,
            cpu: t.cpu,
            weight: t.weight,
            context_switches: t.context_switches,
            preemptions: t.preemptions,
            migrations: t.migrations,
            deadline_misses: t.deadline_misses,
        }
    }
}

/// Running sums for [`Overall`], fed one task at a time in any order (the engine feeds each
/// task when it finishes, so 100,000 results are never read back). Time sums are kept as exact
/// integers, so the order does not matter; Jain's index and the share error are computed at
/// the end from each task's (CPU, weight), in task order.
#[derive(Debug, Default)]
pub struct Accum {
    tasks: usize,
    finished: usize,
    turn: u128,
    wait: u128,
    max_wait: u64,
    responded: usize,
    resp: u128,
    cpu_total: u64,
    w_total: u64,
    cs: u64,
    pre: u64,
    mig: u64,
    miss: u64,
    /// Per task index: (CPU received, weight).
    shares: Vec<(u64, u32)>,
}

impl Accum {
    /// An accumulator for tasks `0..n`.
    pub fn new(n: usize) -> Self {
        Accum { shares: vec![(0, 0); n], ..Accum::default() }
    }

    /// Count task `i` (each task exactly once).
    #[inline]
    pub fn add(&mut self, i: usize, t: &TaskSums) {
        self.tasks += 1;
        if let Some(ta) = t.turnaround {
            self.finished += 1;
            self.turn += ta as u128;
            self.wait += t.waiting as u128;
            self.max_wait = self.max_wait.max(t.waiting);
        }
        if let Some(r) = t.response {
            self.responded += 1;
            self.resp += r as u128;
        }
        self.cpu_total += t.cpu;
        self.w_total += t.weight as u64;
        self.cs += t.context_switches;
        self.pre += t.preemptions;
        self.mig += t.migrations;
        self.miss += t.deadline_misses;
        self.shares[i] = (t.cpu, t.weight);
    }

    /// The overall metrics of a run that ended at `end` on `cpus` CPUs.
    pub fn finish(self, cpus: usize, end: Time) -> Overall {
        let makespan = end;
        let (cpu_total, w_total) = (self.cpu_total, self.w_total as f64);
        let (mut jsum, mut jsq, mut share_error_max) = (0.0f64, 0.0f64, 0.0f64);
        for &(cpu, weight) in &self.shares {
            let x = cpu as f64 / weight.max(1) as f64;
            jsum += x;
            jsq += x * x;
            if cpu_total > 0 {
                let share = cpu as f64 / cpu_total as f64;
                let expected = weight as f64 / w_total;
                share_error_max = share_error_max.max((share / expected - 1.0).abs());
            }
        }
        let avg = |sum: u128, n: usize| if n == 0 { 0.0 } else { sum as f64 / n as f64 };
        let secs = makespan as f64 / 1e9;
        let finished = self.finished;
        Overall {
            finished,
            tasks: self.tasks,
            makespan,
            avg_turnaround: avg(self.turn, finished),
            avg_waiting: avg(self.wait, finished),
            avg_response: avg(self.resp, self.responded),
            max_waiting: self.max_wait,
            throughput: if secs > 0.0 { finished as f64 / secs } else { 0.0 },
            utilisation: if makespan > 0 { cpu_total as f64 / (cpus as f64 * makespan as f64) } else { 0.0 },
            context_switches: self.cs,
            preemptions: self.pre,
            migrations: self.mig,
            deadline_misses: self.miss,
            jain_cpu_per_weight: if jsq == 0.0 { 1.0 } else { jsum * jsum / (self.tasks as f64 * jsq) },
            share_error_max,
        }
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
