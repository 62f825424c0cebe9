//! A recorded or imported trace as a Trace Event timeline (`timeline.trace.json` in the run
//! directory; `--trace-out FILE` puts a copy where the user wants it), for Perfetto and
//! chrome://tracing: the chosen tasks' runs per CPU and per task, their blocked spans named by
//! the state they blocked in, and who woke them.

use schedlab_report::section::{DataFile, Section};
use schedlab_report::trace_event::{self, TraceMark, TraceRun, TraceTimeline, TraceWait};
use schedlab_trace::{Pid, Timeline};
use std::path::Path;

/// The name of the timeline file in a section.
pub const FILE: &str = "timeline.trace.json";

/// The timeline of `pids` (in that order), times from the trace's first event.
pub fn timeline(tl: &Timeline, pids: &[Pid], name: &str) -> TraceTimeline {
    let mut t = TraceTimeline { name: name.into(), cpus: tl.cpus, ..TraceTimeline::default() };
    let at = |ns: u64| ns.saturating_sub(tl.start);
    for (k, task) in pids.iter().filter_map(|p| tl.tasks.get(p)).enumerate() {
        t.tasks.push(format!("{} {}", task.comm, task.pid));
        t.runs.extend(task.runs.iter().map(|r| TraceRun {
            task: k,
            cpu: r.cpu,
            start_ns: at(r.start),
            end_ns: at(r.end),
        }));
        for b in &task.blocked {
            t.waits.push(TraceWait {
                task: k,
                start_ns: at(b.start),
                end_ns: at(b.end),
                what: format!("blocked ({})", b.state),
            });
            if let Some(w) = &b.woken_by {
                t.marks.push(TraceMark { task: k, at_ns: at(w.at), what: format!("woken by {}", w.pid) });
            }
        }
    }
    t
}

/// The timeline file of `pids` for a section, named [`FILE`].
pub fn file(tl: &Timeline, pids: &[Pid], name: &str, title: &str) -> anyhow::Result<DataFile> {
    file_named(FILE, &[timeline(tl, pids, name)], title)
}

/// A Trace Event file of `timelines` for a section.
pub fn file_named(file: &str, timelines: &[TraceTimeline], title: &str) -> anyhow::Result<DataFile> {
    Ok(DataFile::text(file, serde_json::to_string(&trace_event::document(timelines, title))?))
}

/// Copy the section's timeline file to `dest` (for `--trace-out`).
pub fn copy_out(s: &Section, dest: &Path) -> anyhow::Result<()> {
    let text = s
        .files
        .iter()
        .find_map(|f| match f {
            DataFile::Text { name, text } if name == FILE => Some(text),
            _ => None,
        })
        .ok_or_else(|| anyhow::anyhow!("the run kept no timeline to write to {}", dest.display()))?;
    std::fs::write(dest, text).map_err(|e| anyhow::anyhow!("writing {}: {e}", dest.display()))
}
