//! The simulator benchmark: a Poisson workload (100,000 tasks by default, load 0.9 on one CPU)
//! under several policies, reporting events per second; and the side-by-side run of the
//! equivalent SimPy round-robin model ([`SimpyPeer`]) on the very same tasks, its timed runs
//! interleaved with round robin's, so the ratio is measured in one run on one machine.
//!
//! Each policy is timed twice: producing only the overall metrics (as the SimPy model does: it
//! sums turnaround times) and producing a result record per task as well.

use super::simpy_peer::SimpyPeer;
use anyhow::Result;
use schedlab_os::rusage;
use schedlab_report::judge;
use schedlab_report::section::{ClaimKind, Outcome, Section, Table, Verdict};
use schedlab_sim::engine::{simulate, SimConfig};
use schedlab_sim::generate;
use schedlab_sim::policies::by_spec;
use schedlab_sim::workload::Workload;
use serde::Serialize;
use serde_json::json;
use std::time::Instant;

/// The benchmark workload: `n` tasks, Poisson arrivals at 180/s, exponential 5 ms bursts.
pub fn workload(n: usize, seed: u64) -> Workload {
    generate::poisson(n, 180.0, 5.0e6, 1, 0.0, 1, 1, seed)
}

/// One policy's measurement.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub engine: String,
    pub policy: String,
    /// `overall` (overall metrics only) or `per-task` (a result record per task as well).
    pub output: String,
    pub tasks: usize,
    pub events: u64,
    /// Best wall time over the repeats, seconds.
    pub seconds: f64,
    pub events_per_s: f64,
    /// Every timed repeat's wall time, seconds, in order: the spread the goals are judged by.
    pub trials_s: Vec<f64>,
    /// For cross-checking the models: average turnaround, ms.
    pub avg_turnaround_ms: f64,
    /// This process's resident memory when the policy's runs began (the workload and what
    /// earlier runs left with the allocator), MiB; None where it cannot be read.
    pub rss_before_mib: Option<f64>,
    /// The process's peak resident memory over the policy's runs, warm-up included, MiB.
    pub peak_rss_mib: Option<f64>,
}

/// The events/s every policy should reach on the benchmark workload (overall metrics only).
pub const TARGET_EVENTS_PER_S: f64 = 15e6;
/// The wall-time ratio round robin should reach against SimPy, same run.
pub const TARGET_SIMPY_RATIO: f64 = 100.0;
/// The memory goal: this many tasks, per-task records off, in at most this peak (MiB).
pub const TARGET_MEMORY_TASKS: usize = 10_000_000;
pub const TARGET_PEAK_MIB: f64 = 2048.0;

/// Every policy of the catalogue, for `--policy all`.
pub fn catalogue_specs() -> Vec<String> {
    schedlab_sim::policies::CATALOGUE.iter().map(|(spec, _, _)| spec.to_string()).collect()
}

/// Simulate `w` under each spec `repeat` times in both output modes (only the overall one
/// with `overall_only`); keep the best times. With a `peer`, each timed run of its spec in the
/// overall mode is followed by one timed run of the peer; its row comes last.
pub fn run(
    w: &Workload,
    specs: &[String],
    repeat: usize,
    overall_only: bool,
    mut peer: Option<SimpyPeer>,
) -> Result<Vec<Row>> {
    let mut rows = vec![];
    for spec in specs {
        by_spec(spec)?;
        for task_results in [false, true] {
            if !(task_results && overall_only) {
                let paired = peer.as_mut().filter(|p| !task_results && p.spec == *spec && !p.timed());
                rows.push(time_one(w, spec, repeat, task_results, paired)?);
            }
        }
    }
    if let Some(p) = peer {
        rows.push(p.into_row()?);
    }
    Ok(rows)
}

fn mib(kb: u64) -> f64 {
    kb as f64 / 1024.0
}

fn time_one(
    w: &Workload,
    spec: &str,
    repeat: usize,
    task_results: bool,
    mut peer: Option<&mut SimpyPeer>,
) -> Result<Row> {
    let cfg = SimConfig { record_slices: false, task_results, ..SimConfig::default() };
    let reset = rusage::reset_peak_rss();
    let before = rusage::rss_now_and_peak_kb().filter(|_| reset).map(|(now, _)| mib(now));
    // One untimed run first: the first runs of a process pay for touching fresh memory (page
    // faults), which is not the engine's speed. The SimPy script warms up the same way.
    let t0 = Instant::now();
    simulate(w, by_spec(spec)?.as_mut(), &cfg);
    // Paired with the peer, a trial is as many runs back to back as fill the peer's run (its
    // warm-up's length), timed as one and divided: both sides of a pair then measure the same
    // stretch of the host, where one run of a few ms would catch a spike the peer's half second
    // averages out.
    let runs_per_trial =
        peer.as_ref().map_or(1, |p| (p.warm_s() / t0.elapsed().as_secs_f64()).ceil().clamp(1.0, 1e4) as u32);
    let mut trials_s = Vec::with_capacity(repeat.max(1));
    let mut last = None;
    for _ in 0..repeat.max(1) {
        if peer.is_some() && !trials_s.is_empty() {
            // The peer's run in between (half a second of Python) evicted our workload from the
            // caches; warm up again, as the peer's run is warm for all but its first moments.
            simulate(w, by_spec(spec)?.as_mut(), &cfg);
        }
        let t0 = Instant::now();
        for _ in 0..runs_per_trial {
            let mut p = by_spec(spec)?;
            last = Some(simulate(w, p.as_mut(), &cfg));
        }
        trials_s.push(t0.elapsed().as_secs_f64() / f64::from(runs_per_trial));
        if let Some(p) = peer.as_deref_mut() {
            p.trial()?;
        }
    }
    let best = trials_s.iter().copied().fold(f64::INFINITY, f64::min);
    let r = last.expect("ran at least once");
    Ok(Row {
        engine: "schedlab".into(),
        policy: r.policy.clone(),
        output: if task_results { "per-task" } else { "overall" }.into(),
        tasks: w.tasks.len(),
        events: r.events,
        seconds: best,
        events_per_s: r.events as f64 / best,
        trials_s,
        avg_turnaround_ms: r.overall.avg_turnaround / 1e6,
        rss_before_mib: before,
        peak_rss_mib: rusage::rss_now_and_peak_kb().filter(|_| reset).map(|(_, peak)| mib(peak)),
    })
}

/// `schedlab sim bench` as a section: events per second of each engine and policy, and the
/// wall-time ratio to SimPy measured in the same run when it ran.
pub fn section(tasks: usize, rows: Vec<Row>) -> Section {
    let mut t = Table::new(
        format!("{tasks} tasks, Poisson arrivals 180/s, exponential bursts mean 5 ms (load 0.9), 1 CPU"),
        &[
            "engine",
            "policy",
            "output",
            "events",
            "seconds",
            "events/s",
            "avg turnaround ms",
            "RSS before MiB",
            "peak RSS MiB",
        ],
    );
    let opt = |v: Option<f64>| v.map_or("–".to_string(), |x| format!("{x:.0}"));
    for r in &rows {
        t.row(vec![
            r.engine.clone(),
            r.policy.clone(),
            r.output.clone(),
            r.events.to_string(),
            format!("{:.4}", r.seconds),
            format!("{:.0}", r.events_per_s),
            format!("{:.3}", r.avg_turnaround_ms),
            opt(r.rss_before_mib),
            opt(r.peak_rss_mib),
        ]);
    }
    let mut ratios = serde_json::Map::new();
    if let Some(py) = rows.iter().find(|r| r.engine == "simpy") {
        let rr = |output: &str| {
            rows.iter().find(|r| r.engine == "schedlab" && r.policy.starts_with("rr") && r.output == output)
        };
        if let (Some(overall), Some(per_task)) = (rr("overall"), rr("per-task")) {
            for r in [overall, per_task] {
                ratios.insert(r.output.clone(), json!(py.seconds / r.seconds));
            }
            t.note = format!(
                "Same tasks, same RR model: SimPy took {:.3} s ({:.0} events/s). schedlab is {:.1}× faster producing \
                 the overall metrics (as the SimPy model does) and {:.1}× faster producing a record per task as well \
                 (wall-time ratios). Avg turnaround agrees to {:.4}%.",
                py.seconds,
                py.events_per_s,
                py.seconds / overall.seconds,
                py.seconds / per_task.seconds,
                100.0 * (overall.avg_turnaround_ms / py.avg_turnaround_ms - 1.0).abs()
            );
        }
    }
    let mut s = Section::new("sim-bench", "003", "Simulator benchmark");
    let ours: Vec<&Row> = rows.iter().filter(|r| r.engine == "schedlab" && r.output == "overall").collect();
    if !ours.is_empty() {
        s.verdicts.push(every_policy_fast_enough(&ours));
    }
    let rr_overall =
        rows.iter().find(|r| r.engine == "schedlab" && r.policy.starts_with("rr") && r.output == "overall");
    if let (Some(py), Some(rr)) = (rows.iter().find(|r| r.engine == "simpy"), rr_overall) {
        // Trial i of SimPy against trial i of schedlab: both warmed up, timed back to back.
        let paired: Vec<f64> = py.trials_s.iter().zip(&rr.trials_s).map(|(p, o)| p / o).collect();
        s.verdicts.push(judge::at_least(
            ClaimKind::Goal,
            format!(
                "Round robin ({}) at least {TARGET_SIMPY_RATIO:.0}× SimPy's speed on the same tasks (same run)",
                rr.policy
            ),
            &paired,
            TARGET_SIMPY_RATIO,
            "×",
        ));
    }
    let peak = rusage::usage(rusage::Who::Process).max_rss_kb;
    let records_off = rows.iter().filter(|r| r.engine == "schedlab").all(|r| r.output == "overall");
    s.verdicts.extend(memory_goal(tasks, records_off, peak as f64 / 1024.0));
    s.summary = format!(
        "Peak resident memory of this process over the whole benchmark, workload included: {:.0} MiB.",
        peak as f64 / 1024.0
    );
    s.tables.push(t);
    s.results = json!({"rows": rows, "simpy_wall_time_ratio": ratios, "process_peak_rss_mib": peak as f64 / 1024.0});
    s
}

/// The memory goal, judged only on the run it names: at least [`TARGET_MEMORY_TASKS`] tasks
/// with per-task records off. The process's peak (`ru_maxrss`, the workload included) is one
/// reading of a deterministic allocation, so no spread is needed.
fn memory_goal(tasks: usize, records_off: bool, peak_mib: f64) -> Option<Verdict> {
    (tasks >= TARGET_MEMORY_TASKS && records_off).then(|| {
        Verdict::goal(
            format!(
                "{} million tasks with per-task records off in at most {:.0} GiB of peak resident memory",
                TARGET_MEMORY_TASKS / 1_000_000,
                TARGET_PEAK_MIB / 1024.0
            ),
            peak_mib <= TARGET_PEAK_MIB,
            format!("{tasks} tasks: process peak {peak_mib:.0} MiB (ru_maxrss), the workload included"),
        )
    })
}

/// "Every policy reaches the target events/s", judged per policy on its trials' 95% interval
/// ([`judge::at_least`]): met when every policy's is at or above the target, not met when any
/// policy's lies wholly below it, inconclusive otherwise.
fn every_policy_fast_enough(ours: &[&Row]) -> Verdict {
    let claim =
        format!("Every policy timed simulates at least {:.0} M events/s (overall metrics)", TARGET_EVENTS_PER_S / 1e6);
    let (mut below, mut straddle) = (Vec::new(), Vec::new());
    for r in ours {
        let rates: Vec<f64> = r.trials_s.iter().map(|t| r.events as f64 / t.max(1e-12) / 1e6).collect();
        let v = judge::at_least(ClaimKind::Goal, &claim, &rates, TARGET_EVENTS_PER_S / 1e6, " M");
        let mean = schedlab_report::stats::mean(&rates);
        match v.outcome {
            Outcome::NotMet => below.push(format!("{} {mean:.1} M", r.policy)),
            Outcome::Inconclusive => straddle.push(format!("{} {mean:.1} M", r.policy)),
            _ => {}
        }
    }
    let n = ours[0].trials_s.len();
    let slowest = ours.iter().min_by(|a, b| a.events_per_s.total_cmp(&b.events_per_s)).expect("a row");
    let detail = format!(
        "judged on each policy's {n} trial(s) (95% interval of the mean events/s); {} of {} wholly below{}{}; {} \
         straddling{}{}; best trial of the slowest: {} at {:.1} M events/s",
        below.len(),
        ours.len(),
        if below.is_empty() { "" } else { ": " },
        below.join(", "),
        straddle.len(),
        if straddle.is_empty() { "" } else { ": " },
        straddle.join(", "),
        slowest.policy,
        slowest.events_per_s / 1e6
    );
    if !below.is_empty() {
        Verdict::goal(claim, false, detail)
    } else if !straddle.is_empty() {
        Verdict::inconclusive(ClaimKind::Goal, claim, detail)
    } else {
        Verdict::goal(claim, true, detail)
    }
}

#[cfg(test)]
mod memory_tests {
    use super::*;

    #[test]
    fn the_memory_goal_is_judged_only_on_the_run_it_names() {
        assert!(memory_goal(100_000, true, 10.0).is_none());
        assert!(memory_goal(TARGET_MEMORY_TASKS, false, 10.0).is_none(), "per-task records on");
        assert_eq!(memory_goal(TARGET_MEMORY_TASKS, true, 1560.0).unwrap().outcome, Outcome::Met);
        assert_eq!(memory_goal(TARGET_MEMORY_TASKS, true, 4760.0).unwrap().outcome, Outcome::NotMet);
    }
}
