//! Overall metrics of a run: averages, makespan, throughput, utilisation, Jain's fairness index
//! and CPU share per weight. Pure arithmetic on per-task results (this crate must not depend on
//! `schedlab-report`, so Jain's index and the mean live here too).

use crate::engine::TaskResult;
use crate::policy::Time;
use serde::Serialize;
use std::collections::BTreeMap;

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
    /// Stops by a task the policy preferred (wake-up or arrival pre-emption).
    pub preemptions: u64,
    /// Stops because a slice ran out with work left.
    pub quantum_expiries: u64,
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
    let mut acc = Accum::new();
    for t in tasks {
        acc.add(&TaskSums::of(t));
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
    pub quantum_expiries: u64,
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
            quantum_expiries: t.quantum_expiries,
            migrations: t.migrations,
            deadline_misses: t.deadline_misses,
        }
    }
}

/// Feeds [`Overall`] one task at a time, in any order, keeping O(distinct weights) memory:
/// sums are exact integers, so the result does not depend on the order tasks finish in.
#[derive(Debug, Clone, Default)]
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
    expiries: u64,
    mig: u64,
    miss: u64,
    /// Per distinct weight (at least 1): exact (Σ cpu, Σ cpu²), for Jain's index.
    by_weight: BTreeMap<u64, (u128, u128)>,
    /// The same sums for the weight of the latest tasks (0 = none yet), kept out of the map
    /// until the weight changes: most workloads have runs of one weight, so most tasks then
    /// cost no map lookup.
    recent: (u64, u128, u128),
    /// The tasks with the smallest and largest CPU time per unit weight, as (cpu, weight).
    share_min: Option<(u64, u32)>,
    share_max: Option<(u64, u32)>,
    /// A task of weight 0 received CPU time (its share error is infinite).
    zero_weight_ran: bool,
}

/// a.0/a.1 < b.0/b.1, exactly (weights are at least 1 here).
fn ratio_less(a: (u64, u32), b: (u64, u32)) -> bool {
    (a.0 as u128) * (b.1 as u128) < (b.0 as u128) * (a.1 as u128)
}

impl Accum {
    /// An empty accumulator.
    pub fn new() -> Self {
        Accum::default()
    }

    /// Count one task (each task exactly once, in any order).
    #[inline(always)]
    pub fn add(&mut self, t: &TaskSums) {
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
        self.expiries += t.quantum_expiries;
        self.mig += t.migrations;
        self.miss += t.deadline_misses;
        self.add_share(t.cpu, t.weight);
    }

    #[inline(always)]
    fn add_share(&mut self, cpu: u64, weight: u32) {
        let w = weight.max(1) as u64;
        let c = cpu as u128;
        if w != self.recent.0 {
            self.flush_recent();
            self.recent.0 = w;
        }
        self.recent.1 += c;
        self.recent.2 += c * c;
        if weight == 0 {
            self.zero_weight_ran |= cpu > 0;
            return;
        }
        let r = (cpu, weight);
        if self.share_min.is_none_or(|m| ratio_less(r, m)) {
            self.share_min = Some(r);
        }
        if self.share_max.is_none_or(|m| ratio_less(m, r)) {
            self.share_max = Some(r);
        }
    }

    /// Move the recent weight's sums into the map.
    #[cold]
    fn flush_recent(&mut self) {
        let (w, cpu, cpu_sq) = std::mem::take(&mut self.recent);
        if w != 0 {
            let sums = self.by_weight.entry(w).or_default();
            sums.0 += cpu;
            sums.1 += cpu_sq;
        }
    }

    /// The overall metrics of a run that ended at `end` on `cpus` CPUs.
    pub fn finish(mut self, cpus: usize, end: Time) -> Overall {
        self.flush_recent();
        let makespan = end;
        let (cpu_total, w_total) = (self.cpu_total, self.w_total as f64);
        // Jain's index of x = cpu / weight: Σx and Σx² from the exact sums per weight.
        let (mut jsum, mut jsq) = (0.0f64, 0.0f64);
        for (&w, &(cpu, cpu_sq)) in &self.by_weight {
            let w = w as f64;
            jsum += cpu as f64 / w;
            jsq += cpu_sq as f64 / (w * w);
        }
        // |share / expected − 1| grows with |cpu/weight − Σcpu/Σweight|, so its maximum is at
        // the task with the smallest or the largest CPU time per unit weight.
        let mut share_error_max = 0.0f64;
        if cpu_total > 0 {
            // (With every weight 0 each expected share is 0/0: no value, as before.)
            if self.zero_weight_ran && self.w_total > 0 {
                share_error_max = f64::INFINITY;
            }
            for (cpu, weight) in [self.share_min, self.share_max].into_iter().flatten() {
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
            quantum_expiries: self.expiries,
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

    /// The straightforward computation over every task, in task order.
    fn reference(shares: &[(u64, u32)]) -> (f64, f64) {
        let cpu_total: u64 = shares.iter().map(|s| s.0).sum();
        let w_total: u64 = shares.iter().map(|s| s.1 as u64).sum();
        let xs: Vec<f64> = shares.iter().map(|&(c, w)| c as f64 / w.max(1) as f64).collect();
        let mut err = 0.0f64;
        if cpu_total > 0 {
            for &(c, w) in shares {
                let share = c as f64 / cpu_total as f64;
                err = err.max((share / (w as f64 / w_total as f64) - 1.0).abs());
            }
        }
        (jain(&xs), err)
    }

    #[test]
    fn jain_and_share_error_match_the_per_task_computation_in_any_order() {
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for round in 0..300 {
            let n = 1 + next(40) as usize;
            let zero_weights = round % 5 == 0;
            let shares: Vec<(u64, u32)> =
                (0..n).map(|_| (next(3) * next(50_000_000), next(6) as u32 + u32::from(!zero_weights))).collect();
            let mut acc = Accum::new();
            for &(cpu, weight) in shares.iter().rev() {
                acc.add(&TaskSums { cpu, weight, ..TaskSums::default() });
            }
            let o = acc.finish(1, 1);
            let (jain_ref, err_ref) = reference(&shares);
            assert!((o.jain_cpu_per_weight - jain_ref).abs() <= 1e-12, "{shares:?}");
            assert!(
                o.share_error_max == err_ref || (o.share_error_max - err_ref).abs() <= 1e-12 * err_ref,
                "{shares:?}: {} vs {err_ref}",
                o.share_error_max
            );
        }
    }

    #[test]
    fn jain_bounds() {
        assert!((jain(&[1.0, 1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert_eq!(mean(&[]), 0.0);
        assert_eq!(mean(&[1.0, 2.0]), 1.5);
    }
}
