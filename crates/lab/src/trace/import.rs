//! `schedlab trace import FILE`: a trace (tracefs text, `perf script` or `trace-cmd report`,
//! with an optional metadata sidecar) into a simulator workload — per task its arrival, CPU
//! bursts and blocked intervals, policy, nice / RT priority and affinity — with every line the
//! parser could not use counted and every task the import could not fully rebuild explained.

use anyhow::{Context, Result};
use schedlab_report::section::{DataFile, Section, Table};
use schedlab_trace::{import, Format, ImportOptions, Select, Timeline, TraceMeta};
use serde_json::json;
use std::path::PathBuf;

/// What to import.
#[derive(Debug, Clone)]
pub struct ImportRequest {
    pub trace: PathBuf,
    /// The format (None = detect it).
    pub format: Option<Format>,
    pub meta: Option<PathBuf>,
    pub select: Select,
    pub start_at_exec: bool,
    /// The kernel's tick period to put workload time 0 on (see [`ImportOptions::align_tick`]).
    pub align_tick_ns: Option<u64>,
}

/// Import the trace; the section's files are `workload.json` and the import report.
pub fn import_file(req: &ImportRequest) -> Result<Section> {
    let text = std::fs::read_to_string(&req.trace).with_context(|| format!("reading {}", req.trace.display()))?;
    let meta: Option<TraceMeta> = match &req.meta {
        Some(p) => {
            let m = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            Some(
                serde_json::from_str(&m)
                    .with_context(|| format!("{} is not a schedlab trace metadata file", p.display()))?,
            )
        }
        None => None,
    };
    let (mut tl, stats) = Timeline::from_text(&text, req.format);
    // Runs whose switch-out was lost, shortened to the kernel's count when the recording kept it.
    let trimmed = meta.as_ref().and_then(|m| m.cpu_times.as_ref()).map(|c| tl.trim_lost_ends(&c.ns, c.window));
    let opts = ImportOptions {
        select: req.select.clone(),
        start_at_exec: req.start_at_exec,
        align_tick: req.align_tick_ns,
        meta,
        ..ImportOptions::new(req.select.clone())
    };
    let imported = import(&tl, &opts);
    let w = &imported.workload;
    let mut s = Section::new("trace-import", "-", "A scheduler trace as a simulator workload");
    s.summary = format!(
        "{}: {} lines, {} events ({} lost, {} malformed, {} of unknown kinds); {} tasks imported on {} CPU(s), {} notes.{}",
        req.trace.display(),
        stats.lines,
        stats.events,
        stats.lost_events(),
        stats.malformed,
        stats.unknown_events.values().sum::<usize>(),
        w.tasks.len(),
        w.cpus.unwrap_or(tl.cpus),
        imported.report.notes.len(),
        trimmed.filter(|t| t.runs > 0).map_or(String::new(), |t| format!(
            " {} run(s) of {} task(s) whose switch-out the trace lost were shortened by {:.3} ms in all, to the CPU time the kernel counted (meta.json cpu_times).",
            t.runs, t.tasks, t.ns as f64 / 1e6
        ))
    );
    if let Some(tick) = req.align_tick_ns {
        s.summary.push_str(&match imported.report.tick_phase {
            Some(p) => format!(
                " Time 0 is on the kernel's tick: {:.3} ms ticks fall {:.0} µs past each multiple of the period on the trace clock ({} of {} long-run pre-emptions there).",
                tick as f64 / 1e6,
                p.phase_ns as f64 / 1e3,
                p.samples,
                p.preemptions
            ),
            None => format!(
                " The trace shows no {:.3} ms tick (too few long runs pre-empted at one phase): time 0 is the first task's start, not a tick.",
                tick as f64 / 1e6
            ),
        });
    }
    let mut t = Table::new("Imported tasks", &["pid", "name", "arrival ms", "CPU ms", "bursts", "class", "nice/prio"]);
    for (spec, it) in w.tasks.iter().zip(&imported.report.tasks) {
        t.row(vec![
            it.pid.to_string(),
            spec.name.to_string(),
            format!("{:.3}", spec.arrival as f64 / 1e6),
            format!("{:.3}", it.cpu_ns as f64 / 1e6),
            spec.bursts.len().div_ceil(2).to_string(),
            spec.class.clone().unwrap_or_else(|| "other".into()),
            if matches!(spec.class.as_deref(), Some("fifo" | "rr")) {
                spec.priority.to_string()
            } else {
                spec.nice.to_string()
            },
        ]);
    }
    s.tables.push(t);
    if !imported.report.notes.is_empty() {
        let mut n = Table::new("What the import could not rebuild exactly", &["pid", "kind", "detail"]);
        for note in &imported.report.notes {
            let pid = note.pid.map_or_else(|| "-".to_string(), |p| p.to_string());
            n.row(vec![pid, format!("{:?}", note.kind), note.detail.clone()]);
        }
        s.tables.push(n);
    }
    s.files.push(DataFile::text("workload.json", w.to_json_string()));
    let pids: Vec<_> = imported.report.tasks.iter().map(|t| t.pid).collect();
    s.files.push(super::perfetto::file(&tl, &pids, &req.trace.display().to_string(), "schedlab trace import")?);
    s.parameters = json!({
        "trace": req.trace,
        "format": req.format.map(|f| format!("{f:?}")),
        "meta": req.meta,
        "select": req.select,
        "start_at_exec": req.start_at_exec,
        "align_tick_ns": req.align_tick_ns,
    });
    s.results = json!({
        "parse": stats,
        "lost_ends_trimmed": trimmed,
        "report": imported.report,
        "workload": serde_json::from_str::<serde_json::Value>(&w.to_json_string())?,
    });
    Ok(s)
}
