//! Compare two timelines (typically live `a` against simulated `b`) over a window: per task
//! CPU time and shares, switch rates, wake-up latency percentiles; and the fraction of the
//! window in which both run the same task on the same CPU. Plain serde structs, for the lead's
//! report tables.
//!
//! Definitions (all over `[start, end)`):
//! - `share_of_machine` = CPU time / (window × cpus); `share_of_cpu` = CPU time / window
//!   (1.0 = one whole CPU).
//! - `switches_per_sec` = switch-ins inside the window / window in seconds (a run already
//!   going when the trace started is not a switch-in).
//! - wake-up latency = switch-in − sched_waking (or sched_wakeup where no sched_waking was
//!   recorded; see `WakeSample::latency`) for wake-ups from sleep whose switch-in is inside the
//!   window (new tasks' first starts are left out: the simulator has no such
//!   wake-up). Percentiles are nearest-rank: the ⌈p·n⌉-th smallest sample.
//! - `same_task`: time where both timelines run the same pid on that CPU, over the window;
//!   `both_idle`: time where neither runs a task there. With a pid filter, tasks outside it
//!   count as idle.
//! - `same_task_any_cpu`: time where a pid runs in both timelines at once, on whichever CPUs,
//!   over window × CPUs. Where two symmetric CPUs hold the same mix the other way round,
//!   `same_task` is near 0 though the schedules agree; this one is not.

use crate::event::Pid;
use crate::timeline::{Run, TaskTimeline, Timeline};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// What to compare.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CompareOptions {
    pub start: u64,
    pub end: u64,
    /// CPUs of the machine for `share_of_machine` (default: the larger of the two timelines').
    pub cpus: Option<usize>,
    /// Only these tasks (default: every task of either timeline).
    pub pids: Option<BTreeSet<Pid>>,
}

impl CompareOptions {
    /// The whole span both timelines cover: from the earlier start to the later end.
    pub fn spanning(a: &Timeline, b: &Timeline) -> Self {
        CompareOptions { start: a.start.min(b.start), end: a.end.max(b.end), cpus: None, pids: None }
    }
}

/// One task in one timeline.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TaskStats {
    /// The task appears in this timeline.
    pub present: bool,
    pub cpu_ns: u64,
    /// CPU time / (window × cpus).
    pub share_of_machine: f64,
    /// CPU time / window.
    pub share_of_cpu: f64,
    pub switch_ins: u64,
    pub switches_per_sec: f64,
    pub wake_samples: usize,
    /// On the timeline's clock grid ([`median_on_grid`]); of a simulated timeline, with its
    /// whole-µs samples read as the trace's ([`median_of_replayed`]).
    pub wake_p50_ns: Option<u64>,
    /// Nearest rank.
    pub wake_p99_ns: Option<u64>,
}

/// One task in both timelines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskComparison {
    pub pid: Pid,
    pub name: String,
    pub a: TaskStats,
    pub b: TaskStats,
}

/// Agreement on one CPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuAgreement {
    pub cpu: usize,
    pub same_task_ns: u64,
    pub both_idle_ns: u64,
    /// same_task_ns / window.
    pub same_task: f64,
    /// both_idle_ns / window.
    pub both_idle: f64,
}

/// The comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub start: u64,
    pub end: u64,
    pub window_ns: u64,
    pub cpus: usize,
    /// By pid.
    pub tasks: Vec<TaskComparison>,
    pub per_cpu: Vec<CpuAgreement>,
    /// Σ same_task_ns / (window × cpus).
    pub same_task: f64,
    /// Σ over tasks of the time both run it, on any CPU / (window × cpus).
    #[serde(default)]
    pub same_task_any_cpu: f64,
    /// Σ both_idle_ns / (window × cpus).
    pub both_idle: f64,
}

/// Nearest-rank percentile of sorted samples (`p` in 0..=100).
pub fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// The median of samples that are differences of times on a `grid` (ns): a sample `v` stands
/// for any value in `[v − grid/2, v + grid/2)`, and the median is interpolated in the group it
/// falls in (the median of grouped data). A 2.6 µs latency read on a 1 µs clock is 2 or 3 µs,
/// 3 more often: the nearest-rank median says 3, this says 2.67. With `grid` ≤ 1 it is the
/// nearest-rank median.
pub fn median_on_grid(sorted: &[u64], grid: u64) -> Option<u64> {
    if grid <= 1 {
        return percentile(sorted, 50.0);
    }
    quantile_on_grid(sorted, grid, 0.5)
}

/// The median of a simulated timeline's latencies (exact times), where some samples are whole
/// µs read off a 1 µs trace. A replay takes its durations from the trace it replays, and a
/// latency made only of them (the time a waker runs on after its wake-up, up to its block) is as
/// rounded as the trace's own; a latency with a drawn wake-up delay or a tick in it is not. So a
/// whole-µs sample `v` > 0 stands for any value in `[v − 0.5 µs, v + 0.5 µs)`, as a trace's
/// samples do in [`median_on_grid`], and any other sample for itself: read as exact, a replay's
/// median jumps between whole µs (2 or 3) where the trace's, read as grouped data, says 2.2.
/// With no whole-µs sample it is the nearest-rank median.
pub fn median_of_replayed(sorted: &[u64]) -> Option<u64> {
    const US: u64 = 1_000;
    let rounded = |v: u64| v > 0 && v.is_multiple_of(US);
    if !sorted.iter().any(|&v| rounded(v)) {
        return percentile(sorted, 50.0);
    }
    // Samples at or below x: a rounded one counts the part of its microsecond below x.
    let mass = |x: f64| -> f64 {
        let below = |v: u64| match (rounded(v), v as f64) {
            (true, v) => ((x - v) / US as f64 + 0.5).clamp(0.0, 1.0),
            (false, v) => f64::from(u8::from(v <= x)),
        };
        sorted.iter().map(|&v| below(v)).sum()
    };
    let half = sorted.len() as f64 / 2.0;
    let (mut lo, mut hi) = (0.0f64, *sorted.last()? as f64 + US as f64);
    while hi - lo > 0.5 {
        let mid = (lo + hi) / 2.0;
        if mass(mid) >= half {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi.round() as u64)
}

/// The quantile `q` (0 < q < 1) of samples on a `grid`, interpolated in its group as
/// [`median_on_grid`] does (the quantile of grouped data).
pub fn quantile_on_grid(sorted: &[u64], grid: u64, q: f64) -> Option<u64> {
    let at = sorted.len() as f64 * q;
    let mut below = 0usize;
    for group in sorted.chunk_by(|a, b| a == b) {
        let n = group.len();
        if (below + n) as f64 >= at {
            let low = group[0] as f64 - grid as f64 / 2.0;
            return Some((low + (at - below as f64) / n as f64 * grid as f64).max(0.0).round() as u64);
        }
        below += n;
    }
    None
}

fn stats(t: Option<&TaskTimeline>, start: u64, end: u64, cpus: usize, grid: u64) -> TaskStats {
    let Some(t) = t else { return TaskStats::default() };
    let window = (end - start) as f64;
    let cpu_ns = t.cpu_time_in(start, end);
    // A run already going when the trace started had no switch-in.
    let skip = usize::from(t.running_at_start);
    let switch_ins = t.runs.iter().skip(skip).filter(|r| (start..end).contains(&r.start)).count() as u64;
    let mut lat: Vec<u64> =
        t.wakes.iter().filter(|w| !w.new_task && (start..end).contains(&w.ran)).map(|w| w.latency()).collect();
    lat.sort_unstable();
    TaskStats {
        present: true,
        cpu_ns,
        share_of_machine: cpu_ns as f64 / (window * cpus as f64),
        share_of_cpu: cpu_ns as f64 / window,
        switch_ins,
        switches_per_sec: switch_ins as f64 / (window / 1e9),
        wake_samples: lat.len(),
        // A simulated timeline (grid 0) replays a trace; a trace (even one in ns) is itself.
        wake_p50_ns: if grid == 0 { median_of_replayed(&lat) } else { median_on_grid(&lat, grid) },
        wake_p99_ns: percentile(&lat, 99.0),
    }
}

/// Runs on `cpu` inside the window, by pid (only `keep`ed pids).
fn runs_on(tl: &Timeline, cpu: usize, start: u64, end: u64, keep: &dyn Fn(Pid) -> bool) -> BTreeMap<Pid, Vec<Run>> {
    let mut m: BTreeMap<Pid, Vec<Run>> = BTreeMap::new();
    for t in tl.tasks.values().filter(|t| keep(t.pid)) {
        for r in t.runs.iter().filter(|r| r.cpu == cpu && r.end > start && r.start < end) {
            m.entry(t.pid).or_default().push(Run { cpu, start: r.start.max(start), end: r.end.min(end) });
        }
    }
    m
}

/// Sort and merge overlapping intervals.
fn union(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Total length of the intersection of two merged interval lists.
fn overlap(a: &[(u64, u64)], b: &[(u64, u64)]) -> u64 {
    let (mut i, mut j, mut sum) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (s, e) = (a[i].0.max(b[j].0), a[i].1.min(b[j].1));
        sum += e.saturating_sub(s);
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    sum
}

/// Time each pid runs in both `a` and `b`, summed over the pids.
fn same_pid_ns(a: &BTreeMap<Pid, Vec<Run>>, b: &BTreeMap<Pid, Vec<Run>>) -> u64 {
    a.iter().filter_map(|(p, r)| b.get(p).map(|q| overlap(&spans(r), &spans(q)))).sum()
}

fn spans(runs: &[Run]) -> Vec<(u64, u64)> {
    union(runs.iter().map(|r| (r.start, r.end)).collect())
}

/// Compare `a` and `b` over `opts`' window.
pub fn compare(a: &Timeline, b: &Timeline, opts: &CompareOptions) -> Comparison {
    let (start, end) = (opts.start, opts.end.max(opts.start + 1));
    let window = end - start;
    let cpus = opts.cpus.unwrap_or(a.cpus.max(b.cpus)).max(1);
    let keep = |p: Pid| opts.pids.as_ref().is_none_or(|s| s.contains(&p));
    let pids: BTreeSet<Pid> = a.tasks.keys().chain(b.tasks.keys()).copied().filter(|&p| keep(p)).collect();
    let tasks = pids
        .iter()
        .map(|&pid| {
            let (ta, tb) = (a.tasks.get(&pid), b.tasks.get(&pid));
            TaskComparison {
                pid,
                name: ta.or(tb).map(|t| t.comm.clone()).unwrap_or_default(),
                a: stats(ta, start, end, cpus, a.resolution_ns),
                b: stats(tb, start, end, cpus, b.resolution_ns),
            }
        })
        .collect();
    let on_cpu: Vec<_> =
        (0..cpus).map(|cpu| (runs_on(a, cpu, start, end, &keep), runs_on(b, cpu, start, end, &keep))).collect();
    let per_cpu: Vec<CpuAgreement> = on_cpu
        .iter()
        .enumerate()
        .map(|(cpu, (ra, rb))| {
            let same_task_ns = same_pid_ns(ra, rb);
            let busy = union(ra.values().chain(rb.values()).flatten().map(|r| (r.start, r.end)).collect());
            let busy_ns: u64 = busy.iter().map(|(s, e)| e - s).sum();
            let both_idle_ns = window - busy_ns.min(window);
            CpuAgreement {
                cpu,
                same_task_ns,
                both_idle_ns,
                same_task: same_task_ns as f64 / window as f64,
                both_idle: both_idle_ns as f64 / window as f64,
            }
        })
        .collect();
    let total = (window * cpus as u64) as f64;
    let (mut all_a, mut all_b): (BTreeMap<Pid, Vec<Run>>, BTreeMap<Pid, Vec<Run>>) = Default::default();
    for (ra, rb) in on_cpu {
        for (all, runs) in [(&mut all_a, ra), (&mut all_b, rb)] {
            for (pid, r) in runs {
                all.entry(pid).or_default().extend(r);
            }
        }
    }
    let any_cpu_ns = same_pid_ns(&all_a, &all_b);
    Comparison {
        start,
        end,
        window_ns: window,
        cpus,
        tasks,
        same_task: per_cpu.iter().map(|c| c.same_task_ns).sum::<u64>() as f64 / total,
        same_task_any_cpu: any_cpu_ns as f64 / total,
        both_idle: per_cpu.iter().map(|c| c.both_idle_ns).sum::<u64>() as f64 / total,
        per_cpu,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_median_on_a_clock_grid_is_interpolated_in_its_group() {
        // A 2.6 µs latency on a 1 µs clock: 40% read 2 µs, 60% read 3 µs. The median falls
        // 0.1/0.6 of the way into the 3 µs group [2.5, 3.5): 2.5 + 1/6 µs.
        let mut v = vec![2000; 40];
        v.extend(vec![3000; 60]);
        assert_eq!(median_on_grid(&v, 1000), Some(2667));
        assert_eq!(percentile(&v, 50.0), Some(3000), "nearest rank");
        // A constant reads as itself; a split down the middle lands on the boundary.
        assert_eq!(median_on_grid(&[2000; 7], 1000), Some(2000));
        assert_eq!(median_on_grid(&[2000, 2000, 3000, 3000], 1000), Some(2500));
        // Exact times (grid 1) keep the nearest-rank median; nothing gives none.
        assert_eq!(median_on_grid(&[2000, 2500, 3000], 1), Some(2500));
        assert_eq!(median_on_grid(&[], 1000), None);
        // A replay's whole-µs latencies are read as the trace's are; other values as themselves.
        assert_eq!(median_of_replayed(&v), Some(2667), "all whole µs: as on the clock grid");
        let mut mixed = v.clone();
        mixed.extend([1_900; 20]);
        mixed.sort_unstable();
        // 20 at 1.9 µs, then 40 spread over [1.5, 2.5) µs, 60 over [2.5, 3.5): the 60th of 120
        // lies 40/40 into the first group, at 2.5 µs.
        assert_eq!(median_of_replayed(&mixed), Some(2500));
        assert_eq!(median_of_replayed(&[1_900, 2_100, 2_300]), Some(2_100), "no whole µs: nearest rank");
        assert_eq!(median_of_replayed(&[0, 0, 0]), Some(0), "a zero is exact");
        assert_eq!(median_of_replayed(&[]), None);
        // 6, 7, 8 and 9 µs ten times each stand for a spread even over [5.5, 9.5) µs.
        let even: Vec<u64> = [6000, 7000, 8000, 9000].iter().flat_map(|&v| [v; 10]).collect();
        assert_eq!(quantile_on_grid(&even, 1000, 0.25), Some(6500));
        assert_eq!(quantile_on_grid(&even, 1000, 0.5), Some(7500));
        assert_eq!(quantile_on_grid(&even, 1000, 0.9), Some(9100));
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), Some(50));
        assert_eq!(percentile(&v, 99.0), Some(99));
        assert_eq!(percentile(&[7], 99.0), Some(7));
        assert_eq!(percentile(&[1, 2, 3], 50.0), Some(2));
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn the_same_mix_on_swapped_cpus_agrees_on_any_cpu_only() {
        let task = |pid: Pid, runs: &[(usize, u64, u64)]| {
            let mut t = TaskTimeline::new(pid, "t", 0);
            t.runs = runs.iter().map(|&(cpu, start, end)| Run { cpu, start, end }).collect();
            t
        };
        // Live: 1 on CPU 0 and 2 on CPU 1 for 100 µs. Model: the same, the CPUs swapped, and
        // 2 stops 40 µs early.
        let mut live: Timeline = [task(1, &[(0, 0, 100)]), task(2, &[(1, 0, 100)])].into_iter().collect();
        let mut model: Timeline = [task(1, &[(1, 0, 100)]), task(2, &[(0, 0, 60)])].into_iter().collect();
        (live.cpus, model.cpus) = (2, 2);
        let c = compare(&live, &model, &CompareOptions { start: 0, end: 100, ..CompareOptions::default() });
        assert_eq!(c.same_task, 0.0);
        // (100 + 60) / (100 × 2).
        assert!((c.same_task_any_cpu - 0.8).abs() < 1e-12, "{}", c.same_task_any_cpu);
        // A task that moves between CPUs in one timeline and not in the other still counts.
        let moved: Timeline =
            [task(1, &[(0, 0, 50), (1, 50, 100)]), task(2, &[(1, 0, 50), (0, 50, 100)])].into_iter().collect();
        let c = compare(&live, &moved, &CompareOptions { start: 0, end: 100, cpus: Some(2), ..Default::default() });
        assert!((c.same_task - 0.5).abs() < 1e-12 && (c.same_task_any_cpu - 1.0).abs() < 1e-12);
    }

    #[test]
    fn interval_overlap() {
        assert_eq!(union(vec![(5, 7), (0, 2), (1, 3)]), vec![(0, 3), (5, 7)]);
        assert_eq!(overlap(&[(0, 3), (5, 7)], &[(2, 6)]), 2);
        assert_eq!(overlap(&[(0, 10)], &[(1, 2), (3, 4), (9, 12)]), 3);
    }
}
