//! Turning a [`HostRun`] into numbers: per-task CPU share against the weight share, slice
//! length error (CPU received per slice against the budget), dispatcher cost, the work each
//! crypt task reported, and the Gantt chart of who ran when.

use super::host::{HostRun, SliceEnd};
use super::tasks::crypt_result;
use schedlab_report::section::DataFile;
use schedlab_report::stats::Spread;
use schedlab_report::svg::{Gantt, GanttBar};
use schedlab_report::trace_event::{TraceRun, TraceTimeline};
use serde::Serialize;
use serde_json::{json, Value};

/// One task's line in the results.
#[derive(Debug, Clone, Serialize)]
pub struct TaskSummary {
    pub weight: u32,
    pub label: String,
    pub command: String,
    pub pid: i32,
    /// CPU seconds the task received in the run.
    pub cpu_s: f64,
    /// cpu_s / Σ cpu_s.
    pub share: f64,
    /// weight / Σ weight.
    pub expected_share: f64,
    /// share / expected_share − 1.
    pub share_error: f64,
    /// Completed slices (budget used up or blocked).
    pub slices: usize,
    /// Iterations reported by a crypt workload, if the task is one.
    pub iterations: Option<u64>,
    /// Seconds from the release to the task's exit, if it exited during the run.
    pub exited_s: Option<f64>,
    pub exit: String,
}

/// The numbers of one run.
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    pub policy: String,
    pub mechanism: String,
    pub cpus: Vec<usize>,
    pub dispatcher_cpu: usize,
    pub wall_s: f64,
    pub tasks: Vec<TaskSummary>,
    /// |CPU received − budget| of every completed slice but each task's first (which includes
    /// exec and start-up), in ms.
    pub slice_error_ms: Spread,
    /// Wall-clock length − budget of completed slices, in ms (RT throttling shows here).
    pub slice_wall_stretch_ms: Spread,
    pub slices_measured: usize,
    pub dispatcher_cpu_s: f64,
    /// dispatcher_cpu_s / (wall_s × managed CPUs).
    pub dispatcher_cpu_fraction: f64,
    pub switches: usize,
    pub extensions: usize,
    pub interrupted: bool,
}

/// Summarise a run.
pub fn summarize(run: &HostRun) -> RunSummary {
    let total_cpu: f64 = run.tasks.iter().map(|t| t.cpu_ns as f64).sum();
    let total_w: f64 = run.tasks.iter().map(|t| t.weight as f64).sum();
    let tasks = run
        .tasks
        .iter()
        .map(|t| {
            let share = if total_cpu > 0.0 { t.cpu_ns as f64 / total_cpu } else { 0.0 };
            let expected = t.weight as f64 / total_w;
            TaskSummary {
                weight: t.weight,
                label: t.label.clone(),
                command: t.command.clone(),
                pid: t.end.pid,
                cpu_s: t.cpu_ns as f64 / 1e9,
                share,
                expected_share: expected,
                share_error: share / expected - 1.0,
                slices: t.slices,
                iterations: crypt_result(&t.end.output).map(|(n, _)| n),
                exited_s: t.exited_ns.map(|n| n as f64 / 1e9),
                exit: match (&t.end.exec_error, t.end.status) {
                    (Some(e), _) => format!("exec failed: {e}"),
                    (None, Some(s)) => format!("{s:?}"),
                    (None, None) => "unknown".into(),
                },
            }
        })
        .collect();
    let done: Vec<_> = run.slices.iter().filter(|s| matches!(s.end, SliceEnd::Expired) && !s.first).collect();
    let err: Vec<f64> = done.iter().map(|s| (s.cpu_ns as f64 - s.planned_ns as f64).abs() / 1e6).collect();
    let stretch: Vec<f64> = done.iter().map(|s| ((s.end_ns - s.start_ns) as f64 - s.planned_ns as f64) / 1e6).collect();
    let wall_s = run.wall_ns as f64 / 1e9;
    let disp = run.dispatcher_cpu_ns as f64 / 1e9;
    RunSummary {
        policy: run.policy.clone(),
        mechanism: format!("{:?}", run.config.mechanism).to_lowercase(),
        cpus: run.config.cpus.clone(),
        dispatcher_cpu: run.config.dispatcher_cpu,
        wall_s,
        tasks,
        slice_error_ms: Spread::of(&err),
        slice_wall_stretch_ms: Spread::of(&stretch),
        slices_measured: done.len(),
        dispatcher_cpu_s: disp,
        dispatcher_cpu_fraction: if wall_s > 0.0 { disp / (wall_s * run.config.cpus.len() as f64) } else { 0.0 },
        switches: run.switches,
        extensions: run.extensions,
        interrupted: run.interrupted,
    }
}

/// The columns of a slice row, in results.json and slices.csv alike.
pub const SLICE_COLUMNS: [&str; 7] = ["task", "cpu", "start_ms", "end_ms", "planned_ms", "cpu_ms", "end"];

/// Every slice of a run as a row of [`SLICE_COLUMNS`] (times in ms from the release).
pub fn slice_rows(run: &HostRun) -> ([&'static str; 7], Vec<Value>) {
    let rows = run
        .slices
        .iter()
        .map(|s| {
            json!([
                s.task,
                s.cpu,
                s.start_ns as f64 / 1e6,
                s.end_ns as f64 / 1e6,
                s.planned_ns as f64 / 1e6,
                s.cpu_ns as f64 / 1e6,
                s.end
            ])
        })
        .collect();
    (SLICE_COLUMNS, rows)
}

/// The same rows as `slices.csv`.
pub fn slice_csv(run: &HostRun) -> DataFile {
    let rows = run
        .slices
        .iter()
        .map(|s| {
            vec![
                s.task.to_string(),
                s.cpu.to_string(),
                format!("{:.3}", s.start_ns as f64 / 1e6),
                format!("{:.3}", s.end_ns as f64 / 1e6),
                format!("{:.3}", s.planned_ns as f64 / 1e6),
                format!("{:.3}", s.cpu_ns as f64 / 1e6),
                format!("{:?}", s.end).to_lowercase(),
            ]
        })
        .collect();
    DataFile::csv("slices.csv", &SLICE_COLUMNS, rows)
}

/// A Gantt chart of the first `window_s` seconds: one lane per task, like the seed's chart.
pub fn gantt(run: &HostRun, window_s: f64) -> Gantt {
    let lanes: Vec<String> = run.tasks.iter().map(|t| t.label.clone()).collect();
    let bars = run
        .slices
        .iter()
        .filter(|s| (s.start_ns as f64 / 1e9) < window_s)
        .map(|s| GanttBar {
            lane: s.task,
            start: s.start_ns as f64 / 1e9,
            end: (s.end_ns as f64 / 1e9).min(window_s),
            label: format!("w{}", run.tasks[s.task].weight),
            colour_key: s.task,
        })
        .collect();
    Gantt {
        title: format!(
            "{} on CPU {} ({}): the first {window_s:.1} s",
            run.policy,
            schedlab_os::affinity::format_cpu_list(&run.config.cpus),
            format!("{:?}", run.config.mechanism).to_lowercase()
        ),
        time_label: "seconds since release".into(),
        lanes,
        bars,
        ..Gantt::default()
    }
}

/// The run as a Trace Event timeline (Perfetto): the dispatcher's slices, per CPU and per task.
pub fn trace_timeline(run: &HostRun) -> TraceTimeline {
    TraceTimeline {
        name: run.policy.clone(),
        cpus: run.config.cpus.iter().max().map_or(1, |&c| c + 1),
        tasks: run.tasks.iter().map(|t| t.label.clone()).collect(),
        runs: run
            .slices
            .iter()
            .map(|s| TraceRun { task: s.task, cpu: s.cpu, start_ns: s.start_ns, end_ns: s.end_ns })
            .collect(),
        waits: vec![],
        marks: vec![],
    }
}
