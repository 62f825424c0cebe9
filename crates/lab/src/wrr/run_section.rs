//! `schedlab wrr run` as a section: one live run of the WRR host with the user's tasks — each
//! task's CPU share against its weight share, the host's accuracy, the Gantt chart, every
//! slice in results.json and slices.csv, and the slices as a Perfetto timeline.

use super::host::HostRun;
use super::spec::WrrTask;
use super::summary::{self, RunSummary};
use schedlab_report::section::{Figure, Section, Table};
use serde_json::json;

/// The section of one live run; `gantt_window_s` is how much of it the chart shows.
pub fn section(run: &HostRun, tasks: &[WrrTask], quantum_ns: u64, duration_s: f64, gantt_window_s: f64) -> Section {
    let sum = summary::summarize(run);
    let mut s = Section::new("wrr-run", "004", "Live weighted round robin: one run");
    s.summary = format!(
        "slice error (|CPU received − slice|): p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms over {} slices; wall-clock \
         stretch of slices p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms; dispatcher CPU {:.4} s = {:.3}% of the managed \
         CPU time; {} switches, {} slice extensions{}",
        sum.slice_error_ms.p50,
        sum.slice_error_ms.p99,
        sum.slice_error_ms.max,
        sum.slices_measured,
        sum.slice_wall_stretch_ms.p50,
        sum.slice_wall_stretch_ms.p99,
        sum.slice_wall_stretch_ms.max,
        sum.dispatcher_cpu_s,
        sum.dispatcher_cpu_fraction * 100.0,
        sum.switches,
        sum.extensions,
        if sum.interrupted { " (interrupted)" } else { "" }
    );
    if sum.interrupted {
        s.status = schedlab_report::section::Status::Interrupted;
    }
    s.tables.push(shares_table(&sum));
    s.figures.push(Figure {
        title: "Who ran when".into(),
        file: "gantt.svg".into(),
        svg: summary::gantt(run, gantt_window_s).to_svg(),
        caption: format!("The first {gantt_window_s:.1} s of the run."),
    });
    s.files.push(summary::slice_csv(run));
    let title = "schedlab wrr run: the dispatcher's slices";
    if let Ok(f) =
        crate::trace::perfetto::file_named(crate::trace::perfetto::FILE, &[summary::trace_timeline(run)], title)
    {
        s.files.push(f);
    }
    s.parameters = json!({
        "quantum_ms": quantum_ns as f64 / 1e6,
        "tasks": tasks,
        "duration_s": duration_s,
        "end_on_round": run.config.end_on_round,
        "cpus": run.config.cpus,
        "mechanism": run.config.mechanism,
    });
    let mut data = serde_json::to_value(&sum).unwrap_or_default();
    let (columns, rows) = summary::slice_rows(run);
    data["slices"] = json!(rows);
    data["slices_columns"] = json!(columns);
    s.results = data;
    s
}

fn shares_table(sum: &RunSummary) -> Table {
    let mut t = Table::new(
        format!(
            "{} on CPU {} ({} mechanism), {:.2} s",
            sum.policy,
            schedlab_os::affinity::format_cpu_list(&sum.cpus),
            sum.mechanism,
            sum.wall_s
        ),
        &["task", "weight", "CPU s", "share", "expected", "share error", "slices", "iterations", "exit"],
    );
    for ts in &sum.tasks {
        t.row(vec![
            ts.label.clone(),
            ts.weight.to_string(),
            format!("{:.3}", ts.cpu_s),
            format!("{:.4}", ts.share),
            format!("{:.4}", ts.expected_share),
            format!("{:+.2}%", ts.share_error * 100.0),
            ts.slices.to_string(),
            ts.iterations.map(|n| n.to_string()).unwrap_or_else(|| "-".into()),
            ts.exit.clone(),
        ]);
    }
    t
}
