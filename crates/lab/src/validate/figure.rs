//! The live and simulated timelines of a case stacked: one lane per CPU for the live run, then
//! the same CPUs under each model, over a short stretch of the compared window, so a reader sees
//! where the model and the kernel made the same choices and where they parted.

use super::measure::CaseRun;
use schedlab_report::section::Figure;
use schedlab_report::svg::{Gantt, GanttBar};
use schedlab_trace::{Pid, Timeline};
use std::collections::BTreeMap;

/// How much of the window the chart shows (ns).
pub const SPAN_NS: u64 = 100_000_000;

/// One lane per case CPU (`host_cpus[i]` is the timeline's CPU `i`).
fn lanes(
    g: &mut Gantt,
    who: &str,
    tl: &Timeline,
    host_cpus: &[usize],
    names: &BTreeMap<Pid, (usize, String)>,
    from: u64,
) {
    let base = g.lanes.len();
    g.lanes.extend(host_cpus.iter().map(|c| format!("{who} cpu{c}")));
    let to = from + SPAN_NS;
    for (pid, t) in &tl.tasks {
        let Some((key, name)) = names.get(pid) else { continue };
        for r in t.runs.iter().filter(|r| r.end > from && r.start < to) {
            if r.cpu >= host_cpus.len() {
                continue;
            }
            g.bars.push(GanttBar {
                lane: base + r.cpu,
                start: (r.start.max(from) - from) as f64 / 1e6,
                end: (r.end.min(to) - from) as f64 / 1e6,
                label: name.clone(),
                colour_key: *key,
            });
        }
    }
}

/// The chart of one run of a case (the first 100 ms of its compared window).
pub fn stacked(run: &CaseRun) -> Figure {
    let from = run.release_ns + run.window_ns.0;
    let mut names: BTreeMap<Pid, (usize, String)> = BTreeMap::new();
    if let Some(m) = run.models.first() {
        for (i, t) in m.comparison.tasks.iter().enumerate() {
            names.insert(t.pid, (i, t.name.clone()));
        }
    }
    let mut g = Gantt {
        title: format!("{}: live and simulated, {} ms from the window's start", run.case, SPAN_NS / 1_000_000),
        time_label: "time (ms)".into(),
        ..Gantt::default()
    };
    lanes(&mut g, "live", &run.live, &run.host_cpus, &names, from);
    for m in &run.models {
        lanes(&mut g, m.label, &m.timeline, &run.host_cpus, &names, from);
    }
    Figure {
        title: format!("Timelines of {}", run.case),
        file: format!("timeline_{}.svg", run.case),
        svg: g.to_svg(),
        caption: "Live (from the trace) above the models' replays of the same trace; bars are the case's tasks, \
                  hatching is a CPU running none of them."
            .into(),
    }
}
