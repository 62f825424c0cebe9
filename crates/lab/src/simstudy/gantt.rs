//! Gantt charts of simulated runs: one lane per CPU per policy (bars = tasks, gaps = idle,
//! triangles = arrivals), and, for a single policy, one lane per task showing its I/O and lock
//! waits.

use schedlab_report::svg::{Gantt, GanttBar, GanttMark, GREY_KEY};
use schedlab_sim::engine::SimResult;
use schedlab_sim::workload::Workload;

/// At most this many task lanes are drawn (beyond it only the CPU lanes).
const MAX_TASK_LANES: usize = 24;

/// Build the chart; times in ms. `window` (ns, from..to) shows only that span (None = the
/// whole run).
pub fn chart(w: &Workload, results: &[SimResult], title: &str, window: Option<(u64, u64)>) -> Gantt {
    let end = window.map_or(u64::MAX, |(_, to)| to);
    let mut g = Gantt {
        title: title.into(),
        time_label: "time (ms)".into(),
        window: window.map(|(from, to)| (from as f64 / 1e6, to as f64 / 1e6)),
        ..Gantt::default()
    };
    for r in results {
        let base = g.lanes.len();
        for c in 0..r.cpus {
            g.lanes.push(if results.len() > 1 { format!("{} cpu{c}", short(&r.policy)) } else { format!("cpu{c}") });
        }
        for s in r.slices.iter().filter(|s| s.start < end) {
            g.bars.push(GanttBar {
                lane: base + s.cpu,
                start: s.start as f64 / 1e6,
                end: s.end.min(end) as f64 / 1e6,
                label: w.tasks[s.task].name.to_string(),
                colour_key: s.task,
            });
        }
        for t in w.tasks.iter().filter(|t| t.arrival < end) {
            g.marks.push(GanttMark { lane: base, at: t.arrival as f64 / 1e6, label: format!("{} arrives", t.name) });
        }
    }
    if results.len() == 1 && w.tasks.len() <= MAX_TASK_LANES && !results[0].blocked.is_empty() {
        let base = g.lanes.len();
        for t in &w.tasks {
            g.lanes.push(format!("{} waits", t.name));
        }
        for b in results[0].blocked.iter().filter(|b| b.start < end) {
            g.bars.push(GanttBar {
                lane: base + b.task,
                start: b.start as f64 / 1e6,
                end: b.end.min(end) as f64 / 1e6,
                label: b.what.clone(),
                colour_key: GREY_KEY, // blocked, not running
            });
        }
    }
    g
}

fn short(policy: &str) -> String {
    let s: String = policy.chars().take(40).collect();
    if s.len() < policy.len() {
        format!("{s}…")
    } else {
        s
    }
}
