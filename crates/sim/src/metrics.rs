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
/// allocation beyond 16 bytes per task).
pub fn overall(tasks: &[TaskResult], cpus: usize, end: Time) -> Overall {
    let mut acc = Accum::with_capacity(tasks.len());
    for t in tasks {
        acc.add(t);
    }
    acc.finish(cpus, end)
}

/// Running sums for [`Overall`], fed one task at a time (the engine feeds each result as it
/// builds it, so 100,000 results are not read back from memory); the second pass, for the
/// share error, runs over a compact (cpu, weight) list. Same arithmetic, same order as a loop
/// over the results, so the figures are bit-identical.
#[derive(Debug, Default)]
pub struct Accum {
    tasks: usize,
    finished: usize,
    turn: f64,
    wait: f64,
    max_wait: u64,
    responded: usize,
    resp: f64,
    cpu_total: u64,
    w_total: f64,
    cs: u64,
    pre: u64,
    mig: u64,
    miss: u64,
    jsum: f64,
    jsq: f64,
    shares: Vec<(u64, u32)>,
}

impl Accum {
    /// An accumulator expecting about `n` tasks.
    pub fn with_capacity(n: usize) -> Self {
        Accum { shares: Vec::with_capacity(n), ..Accum::default() }
    }

    /// Count one task's result.
    #[inline]
    pub fn add(&mut self, t: &TaskResult) {
        self.tasks += 1;
        if let Some(ta) = t.turnaround {
            self.finished += 1;
            self.turn += ta as f64;
            self.wait += t.waiting as f64;
            self.max_wait = self.max_wait.max(t.waiting);
        }
        if let Some(r) = t.response {
            self.responded += 1;
            self.resp += r as f64;
        }
        self.cpu_total += t.cpu;
        self.w_total += t.weight as f64;
        self.cs += t.context_switches;
        self.pre += t.preemptions;
        self.mig += t.migrations;
        self.miss += t.deadline_misses;
        let x = t.cpu as f64 / t.weight.max(1) as f64;
        self.jsum += x;
        self.jsq += x * x;
        self.shares.push((t.cpu, t.weight));
    }

    /// The overall metrics of a run that ended at `end` on `cpus` CPUs.
    pub fn finish(self, cpus: usize, end: Time) -> Overall {
        let makespan = end;
        let (cpu_total, w_total) = (self.cpu_total, self.w_total);
        let share_error_max = if cpu_total == 0 {
            0.0
        } else {
            self.shares
                .iter()
                .map(|&(cpu, weight)| {
                    let share = cpu as f64 / cpu_total as f64;
                    let expected = weight as f64 / w_total;
                    (share / expected - 1.0).abs()
                })
                .fold(0.0, f64::max)
        };
        let avg = |sum: f64, n: usize| if n == 0 { 0.0 } else { sum / n as f64 };
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
            jain_cpu_per_weight: if self.jsq == 0.0 {
                1.0
            } else {
                self.jsum * self.jsum / (self.tasks as f64 * self.jsq)
            },
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
