//! `schedlab trace shadow FILE`: follow chosen fair tasks of one CPU through a live trace with
//! the eevdf model's run queue kept beside the kernel's ([`schedlab_trace::shadow`]), and report
//! each decision the model's rules would have made otherwise — which wake-ups, ticks and picks,
//! with the lags and protection they were made with.

use anyhow::{bail, Context, Result};
use schedlab_report::section::{DataFile, Section, Table};
use schedlab_sim::policies::eevdf;
use schedlab_trace::kernel_positions;
use schedlab_trace::shadow::{self, Decision, ShadowOptions};
use schedlab_trace::{Format, Pid, Timeline, TraceMeta};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What to follow, and how.
#[derive(Debug, Clone)]
pub struct ShadowRequest {
    pub trace: PathBuf,
    pub format: Option<Format>,
    pub meta: Option<PathBuf>,
    /// Task ids or command names (every task of that name).
    pub tasks: Vec<String>,
    /// The CPU whose queue is kept (None: the one the tasks ran on).
    pub cpu: Option<usize>,
    /// The rules: an `eevdf[:key=value,...]` spec.
    pub policy: String,
    /// The kernel's tick period (None: no ticks).
    pub tick_ns: Option<u64>,
    /// Judge from this far into the trace, to this far (ms).
    pub from_ms: f64,
    pub to_ms: Option<f64>,
    pub window_us: u64,
    /// How many wrong decisions to list.
    pub show: usize,
    /// Log every event between these times (ms into the trace) with the queue after it.
    pub log_ms: Option<(f64, f64)>,
    /// [`ShadowOptions::clock_skip`].
    pub clock_skip: bool,
    /// The kernel's positions read beside the trace ([`ShadowOptions::kernel_positions`]): a
    /// file `validate` saves as `positions_<case>.txt`.
    pub positions: Option<PathBuf>,
}

/// Run the shadow; the section's file `shadow.json` has every decision.
pub fn shadow_file(req: &ShadowRequest) -> Result<Section> {
    let features = eevdf::features_of_spec(&req.policy).map_err(|e| anyhow::anyhow!("--policy: {e}"))?;
    let text = std::fs::read_to_string(&req.trace).with_context(|| format!("reading {}", req.trace.display()))?;
    let (mut tl, stats) = Timeline::from_text(&text, req.format);
    if let Some(p) = &req.meta {
        let m = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
        let meta: TraceMeta = serde_json::from_str(&m)
            .with_context(|| format!("{} is not a schedlab trace metadata file", p.display()))?;
        if let Some(c) = &meta.cpu_times {
            tl.trim_lost_ends(&c.ns, c.window);
        }
    }
    let pids = select(&tl, &req.tasks)?;
    let cpu = match req.cpu {
        Some(c) => c,
        None => only_cpu(&tl, &pids)?,
    };
    let tick = match req.tick_ns {
        Some(ns) => Some(schedlab_trace::tick_phase(&tl, ns).with_context(|| {
            format!(
                "the trace shows no {:.3} ms tick (too few long runs pre-empted at one phase); give --tick off to follow without one",
                ns as f64 / 1e6
            )
        })?),
        None => None,
    };
    let from = tl.start + (req.from_ms * 1e6) as u64;
    let to = req.to_ms.map_or(u64::MAX, |ms| tl.start + (ms * 1e6) as u64);
    let kernel_positions = match &req.positions {
        Some(p) => {
            let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            kernel_positions::parse_text(&text).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?
        }
        None => Vec::new(),
    };
    let opts = ShadowOptions {
        from,
        to,
        window_ns: req.window_us * 1_000,
        log: req.log_ms.map(|(a, b)| (tl.start + (a * 1e6) as u64, tl.start + (b * 1e6) as u64)),
        clock_skip: req.clock_skip,
        kernel_positions,
        ..ShadowOptions::new(cpu, pids.clone(), features, tick)
    };
    let report = shadow::shadow(&tl, &opts)?;

    let names: BTreeMap<Pid, String> = pids.iter().map(|p| (*p, format!("{}[{p}]", tl.tasks[p].comm))).collect();
    let name = |p: Pid| names.get(&p).cloned().unwrap_or_else(|| p.to_string());
    let wrong: Vec<&Decision> = report.wrong().collect();
    let mut s = Section::new("trace-shadow", "-", "The model's rules beside the kernel's decisions, one by one");
    s.summary = format!(
        "{}: {} lines, {} events ({} lost). Followed {} on CPU {cpu} under {}{}. {} decisions judged, {} wrong; \
         {} of {} switch-ins picked another task by the rules; {} unclear (the running task blocked within the \
         window, or another task took the CPU); {} wake-ups onto a CPU running no followed task; {} switch-ins \
         without a wake-up the trace showed.{}",
        req.trace.display(),
        stats.lines,
        stats.events,
        stats.lost_events(),
        pids.iter().map(|&p| name(p)).collect::<Vec<_>>().join(", "),
        eevdf::label(&opts.features),
        match tick {
            Some(t) => format!(
                ", ticks every {:.3} ms from the trace's tick phase ({} µs)",
                t.tick_ns as f64 / 1e6,
                t.phase_ns / 1_000
            ),
            None => ", no ticks".to_string(),
        },
        report.decisions.len(),
        wrong.len(),
        report.picks_differ.len(),
        report.picks,
        report.unclear,
        report.wakes_not_contested,
        report.repaired,
        match &req.positions {
            Some(p) => format!(
                " Places set to the kernel's at {} rounds of {} ({} readings; moved {:.1} µs of virtual time in all).",
                report.resyncs,
                p.display(),
                opts.kernel_positions.len(),
                report.resync_moved_ns as f64 / 1e3
            ),
            None => " Every task started at lag 0, the shadow's places its own (no --positions).".to_string(),
        },
    );
    let mut by = Table::new("Decisions by kind", &["decisions"]);
    for line in shadow::tally(&report, &names) {
        by.row(vec![line]);
    }
    s.tables.push(by);
    let ms = |ns: u64| format!("{:.3}", ns.saturating_sub(tl.start) as f64 / 1e6);
    let mut w = Table::new(
        format!("Wrong decisions (the first {} of {})", req.show.min(wrong.len()), wrong.len()),
        &[
            "at ms",
            "moment",
            "woken",
            "running",
            "ran ms",
            "margin µs",
            "protected",
            "rules",
            "kernel",
            "queue: task lag / deadline − V (µs)",
        ],
    );
    let yes = |b: bool| if b { "switch" } else { "keep" }.to_string();
    for d in wrong.iter().take(req.show) {
        w.row(vec![
            ms(d.at),
            format!("{:?}", d.moment),
            d.woken.map_or_else(|| "-".into(), name),
            name(d.running),
            format!("{:.3}", d.ran_ns as f64 / 1e6),
            format!("{:.0}", d.margin as f64 / 1e3),
            d.protected.to_string(),
            yes(d.rules),
            yes(d.kernel),
            shadow::describe_queue(&d.queue),
        ]);
    }
    s.tables.push(w);
    let mut p = Table::new(
        format!(
            "Picks that differ (the first {} of {})",
            req.show.min(report.picks_differ.len()),
            report.picks_differ.len()
        ),
        &["at ms", "kernel ran", "the rules pick"],
    );
    for d in report.picks_differ.iter().take(req.show) {
        p.row(vec![ms(d.at), name(d.kernel), d.rules.map_or_else(|| "none".into(), name)]);
    }
    s.tables.push(p);
    if !report.log.is_empty() {
        let mut l = Table::new("Events, each with the queue after it: task lag / deadline − V (µs)", &["event"]);
        for line in &report.log {
            l.row(vec![line.clone()]);
        }
        s.tables.push(l);
    }
    s.files.push(DataFile::text("shadow.json", serde_json::to_string_pretty(&report)?));
    s.parameters = json!({
        "trace": req.trace,
        "meta": req.meta,
        "tasks": req.tasks,
        "cpu": cpu,
        "policy": req.policy,
        "tick_ns": req.tick_ns,
        "from_ms": req.from_ms,
        "to_ms": req.to_ms,
        "window_us": req.window_us,
    });
    s.results = json!({
        "decisions": report.decisions.len(),
        "wrong": wrong.len(),
        "wrong_near_ties": report.wrong_near_ties(),
        "picks": report.picks,
        "picks_differ": report.picks_differ.len(),
        "unclear": report.unclear,
        "positions_read": opts.kernel_positions.len(),
        "places_set": report.resyncs,
        "places_moved_ns": report.resync_moved_ns,
    });
    Ok(s)
}

/// The tasks named: a number is a task id, anything else every task of that command name.
fn select(tl: &Timeline, names: &[String]) -> Result<Vec<Pid>> {
    let mut pids = Vec::new();
    for n in names {
        match n.parse::<Pid>() {
            Ok(p) if tl.tasks.contains_key(&p) => pids.push(p),
            Ok(p) => bail!("task {p} is not in the trace"),
            Err(_) => {
                let found: Vec<Pid> = tl
                    .tasks
                    .values()
                    .filter(|t| t.comms.iter().any(|c| c == n) && !t.runs.is_empty())
                    .map(|t| t.pid)
                    .collect();
                if found.is_empty() {
                    bail!("no task named `{n}` ran in the trace");
                }
                pids.extend(found);
            }
        }
    }
    pids.sort();
    pids.dedup();
    Ok(pids)
}

/// The one CPU every run of `pids` was on.
fn only_cpu(tl: &Timeline, pids: &[Pid]) -> Result<usize> {
    let mut cpus: Vec<usize> = pids.iter().flat_map(|p| tl.tasks[p].runs.iter().map(|r| r.cpu)).collect();
    cpus.sort();
    cpus.dedup();
    match cpus[..] {
        [c] => Ok(c),
        [] => bail!("the tasks never ran"),
        _ => bail!("the tasks ran on CPUs {cpus:?}: the shadow keeps one CPU's queue; give --cpu and tasks that ran on it alone"),
    }
}
