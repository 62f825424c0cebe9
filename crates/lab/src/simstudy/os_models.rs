//! Seed 003's four operating-system schedulers (FreeBSD as ULE and as 4.4BSD) on one workload:
//! interactive tasks (short CPU bursts between waits, as an editor or a shell) beside batch tasks
//! (CPU-bound for longer than the run), on one CPU. Each model tells the two kinds apart by their
//! behaviour only — no task is marked interactive, foreground or real-time — so the table shows
//! what each mechanism makes of it: how long an interactive task waits for the CPU after each
//! wake-up, and how much CPU the batch tasks get done.

use super::compare::{self, TickChoice};
use crate::Scale;
use schedlab_report::section::Table;
use schedlab_report::stats::{mean, percentile};
use schedlab_sim::engine::{SimConfig, SimResult};
use schedlab_sim::workload::{TaskSpec, Workload};
use serde_json::{json, Value};

const MS: u64 = 1_000_000;

/// The OS models compared, by spec (their defaults).
pub const OS_MODELS: [&str; 5] = ["solaris_ts", "freebsd_ule", "freebsd_4bsd", "windows", "linux"];

/// Interactive tasks: `INTERACTIVE` of them, each `BURST_MS` of CPU then `WAIT_MS` blocked, again
/// and again; batch tasks: `BATCH` CPU hogs that do not finish within the run.
const INTERACTIVE: u64 = 4;
const BURST_MS: u64 = 2;
const WAIT_MS: u64 = 25;
const BATCH: u64 = 2;

/// How long the run lasts (the horizon), by scale.
pub fn horizon(scale: Scale) -> u64 {
    match scale {
        Scale::Quick => 3_000 * MS,
        Scale::Default | Scale::Full => 20_000 * MS,
    }
}

/// The workload: interactive tasks arrive 1 ms apart from 0, batch tasks at 0.
pub fn workload(scale: Scale) -> Workload {
    let rounds = (horizon(scale) / ((BURST_MS + WAIT_MS) * MS)) as usize + 1;
    let mut tasks: Vec<TaskSpec> =
        (0..BATCH).map(|i| TaskSpec::cpu(&format!("batch{i}"), 0, 2 * horizon(scale))).collect();
    for i in 0..INTERACTIVE {
        let mut bursts = [BURST_MS * MS, WAIT_MS * MS].repeat(rounds);
        bursts.pop();
        tasks.push(TaskSpec { bursts: bursts.into(), ..TaskSpec::cpu(&format!("int{i}"), i * MS, BURST_MS * MS) });
    }
    Workload { cpus: Some(1), tasks }
}

/// What one policy made of the workload.
#[derive(Debug, Clone, PartialEq)]
pub struct OsModelRow {
    pub policy: String,
    /// Wake-up (or arrival) to first run of the interactive tasks, ms.
    pub response_mean_ms: f64,
    pub response_p95_ms: f64,
    pub response_max_ms: f64,
    /// Wake-ups counted (those whose task ran again before the horizon).
    pub wakeups: usize,
    /// Batch CPU time over the run's length, % of the CPU.
    pub batch_cpu_pct: f64,
    /// Context switches into batch tasks per second.
    pub batch_switches_per_s: f64,
}

/// For each interactive wake-up (or arrival), the time until the task first ran after it, ms.
fn interactive_responses(r: &SimResult, w: &Workload) -> Vec<f64> {
    let mut out = vec![];
    for (id, spec) in w.tasks.iter().enumerate().filter(|(_, t)| t.name.starts_with("int")) {
        let mut starts: Vec<u64> = r.slices.iter().filter(|s| s.task == id).map(|s| s.start).collect();
        starts.sort_unstable();
        let wakes = std::iter::once(spec.arrival)
            .chain(r.blocked.iter().filter(|b| b.task == id && b.what == "io").map(|b| b.end));
        for wake in wakes {
            let k = starts.partition_point(|&s| s < wake);
            if let Some(&run) = starts.get(k) {
                out.push((run - wake) as f64 / 1e6);
            }
        }
    }
    out
}

/// Run the OS models on the workload of `scale`.
pub fn run(scale: Scale) -> Vec<OsModelRow> {
    let w = workload(scale);
    let cfg = SimConfig { cpus: 1, horizon: Some(horizon(scale)), record_slices: true, ..SimConfig::default() };
    let specs: Vec<String> = OS_MODELS.iter().map(|s| s.to_string()).collect();
    // The Linux model with this machine's tick (HZ=250); the others end slices exactly.
    let results = compare::run_all(&w, &specs, &cfg, false, TickChoice::ForLinux(Some(4 * MS))).expect("known specs");
    let secs = horizon(scale) as f64 / 1e9;
    results
        .iter()
        .map(|r| {
            let resp = interactive_responses(r, &w);
            let batch: Vec<_> = r.tasks.iter().filter(|t| t.name.starts_with("batch")).collect();
            OsModelRow {
                policy: r.policy.clone(),
                response_mean_ms: mean(&resp),
                response_p95_ms: percentile(&resp, 95.0),
                response_max_ms: resp.iter().copied().fold(0.0, f64::max),
                wakeups: resp.len(),
                batch_cpu_pct: 100.0 * batch.iter().map(|t| t.cpu).sum::<u64>() as f64 / horizon(scale) as f64,
                batch_switches_per_s: batch.iter().map(|t| t.context_switches).sum::<u64>() as f64 / secs,
            }
        })
        .collect()
}

/// The comparison as a report table.
pub fn table(rows: &[OsModelRow], scale: Scale) -> Table {
    let mut t = Table::new(
        format!(
            "The OS models (FreeBSD twice: ULE and 4.4BSD) on {INTERACTIVE} interactive tasks ({BURST_MS} ms CPU, {WAIT_MS} ms wait) beside \
             {BATCH} batch hogs, 1 CPU, {} s",
            horizon(scale) / 1_000 / MS
        ),
        &[
            "policy",
            "interactive response mean ms",
            "interactive response p95 ms",
            "interactive response max ms",
            "wake-ups",
            "batch CPU %",
            "batch switches per s",
        ],
    );
    for r in rows {
        t.row(vec![
            r.policy.clone(),
            format!("{:.3}", r.response_mean_ms),
            format!("{:.3}", r.response_p95_ms),
            format!("{:.3}", r.response_max_ms),
            r.wakeups.to_string(),
            format!("{:.1}", r.batch_cpu_pct),
            format!("{:.1}", r.batch_switches_per_s),
        ]);
    }
    t.with_note(
        "Response: from an interactive task's wake-up (or arrival) to its next run. The interactive tasks ask for \
         about 30% of the CPU; the batch tasks can have the rest. linux runs with a 4 ms tick; the other models \
         end slices exactly. No task is marked foreground or real-time.",
    )
}

/// The rows as JSON for the section's results.
pub fn json(rows: &[OsModelRow]) -> Value {
    rows.iter()
        .map(|r| {
            json!({
                "policy": r.policy,
                "interactive_response_mean_ms": r.response_mean_ms,
                "interactive_response_p95_ms": r.response_p95_ms,
                "interactive_response_max_ms": r.response_max_ms,
                "wakeups": r.wakeups,
                "batch_cpu_pct": r.batch_cpu_pct,
                "batch_switches_per_s": r.batch_switches_per_s,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_os_model_runs_and_its_figures_are_consistent() {
        let rows = run(Scale::Quick);
        let names: Vec<&str> = rows.iter().map(|r| r.policy.split(':').next().unwrap()).collect();
        assert_eq!(names, OS_MODELS);
        // 3 s / 27 ms = 111 rounds per interactive task: at most 112 wake-ups (arrival included)
        // each, 448 for the four; a model that keeps them waiting answers fewer.
        for r in &rows {
            assert!((1..=448).contains(&r.wakeups), "{r:?}");
            // The batch hogs are always runnable: the CPU is never idle, so they get what the
            // interactive tasks (at most 4 × 2/27 = 29.6%) leave, and at most all of it.
            assert!((70.0..=100.0).contains(&r.batch_cpu_pct), "{r:?}");
            assert!(r.response_mean_ms <= r.response_max_ms + 1e-9 && r.response_p95_ms <= r.response_max_ms + 1e-9);
        }
    }

    #[test]
    fn a_wake_up_response_is_measured_to_the_next_run() {
        // int0 arrives at 0 behind nothing: response 0. Under FCFS-like order after its first
        // block the batch hog runs to the horizon, so no later wake-up is answered.
        let w = Workload {
            cpus: Some(1),
            tasks: vec![
                TaskSpec { bursts: vec![MS, 2 * MS, MS].into(), ..TaskSpec::cpu("int0", 0, MS) },
                TaskSpec::cpu("batch0", 0, 50 * MS),
            ],
        };
        let cfg = SimConfig { record_slices: true, horizon: Some(20 * MS), ..SimConfig::default() };
        let r = compare::run_all(&w, &["fcfs".to_string()], &cfg, false, TickChoice::NONE).unwrap();
        // int0 runs 0–1 ms, blocks 1–3 ms; batch0 runs from 1 ms to the horizon: the wake at 3 ms
        // has no run before 20 ms.
        assert_eq!(interactive_responses(&r[0], &w), vec![0.0]);
        let r = compare::run_all(&w, &["rr:quantum=4ms".to_string()], &cfg, false, TickChoice::NONE).unwrap();
        // RR: int0 0–1, batch0 1–5 (its quantum), int0 woke at 3 and runs at 5: 2 ms.
        assert_eq!(interactive_responses(&r[0], &w), vec![0.0, 2.0]);
    }
}
