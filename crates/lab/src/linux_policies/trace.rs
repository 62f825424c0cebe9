//! `--trace`: a tracefs instance that records the scheduler tracepoints during each case (the
//! raw text is kept in the run directory, ready for `schedlab trace import`), and the per-CPU
//! timeline drawn from its `sched_switch` events (who ran on which CPU when, in the spirit of
//! `perf sched map`), with a count of the children's pre-emptions to set beside rusage.

use schedlab_os::tracefs::{Instance, TraceFs, SCHED_EVENTS};
use schedlab_report::svg::{Gantt, GanttBar, GREY_KEY};
use schedlab_trace::event::Switch;
use schedlab_trace::{EventKind, Format};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Most bars drawn in one timeline; the window is cut where this is reached.
pub const MAX_BARS: usize = 3000;
/// Per-CPU trace buffer.
pub const BUFFER_KB: usize = 16 * 1024;

/// Our instances are `instances/schedlab-policies-<pid>`.
const INSTANCE_PREFIX: &str = "schedlab-policies-";

/// The tracefs mount and our instance; the instance goes first when dropped, then the mount.
pub struct Tracer {
    pub instance: Instance,
    pub fs: TraceFs,
}

impl Tracer {
    /// Find or mount tracefs and create `instances/schedlab-policies-<pid>`.
    pub fn open() -> anyhow::Result<Self> {
        let fs = TraceFs::open()?;
        let orphans = Instance::remove_orphans(&fs, INSTANCE_PREFIX);
        if orphans > 0 {
            eprintln!("schedlab: removed {orphans} trace instance(s) left by killed runs");
        }
        let name = format!("{INSTANCE_PREFIX}{}", std::process::id());
        let instance = Instance::create(&fs, &name, BUFFER_KB, SCHED_EVENTS)?;
        Ok(Tracer { instance, fs })
    }
}

/// A `sched_switch` and the CPU and time (ns) it happened at.
#[derive(Debug, Clone)]
pub struct SwitchEvent {
    pub cpu: usize,
    pub ts_ns: u64,
    pub switch: Switch,
}

impl std::ops::Deref for SwitchEvent {
    type Target = Switch;
    fn deref(&self) -> &Switch {
        &self.switch
    }
}

/// The `sched_switch` events of a raw trace (tracefs text).
pub fn switches(text: &str) -> Vec<SwitchEvent> {
    schedlab_trace::parse(text, Some(Format::Tracefs))
        .events
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::Switch(switch) => Some(SwitchEvent { cpu: e.cpu, ts_ns: e.ts, switch }),
            _ => None,
        })
        .collect()
}

/// What one case's trace says, in numbers.
#[derive(Debug, Clone, Serialize)]
pub struct TraceSummary {
    pub events: usize,
    /// Switches away from a child while it was still runnable (compare: rusage involuntary).
    pub child_preemptions: usize,
    /// Who took the CPU when a child was pre-empted: "comm (prio)" → count, the 8 most frequent
    /// (another child counts as "child"; prio as the kernel prints it: 0–99 RT, 100–139 normal).
    pub preempted_by: Vec<(String, usize)>,
    /// Switches away from a child that blocked or exited.
    pub child_blocking_switches: usize,
    /// Seconds each CPU spent running the case's children.
    pub child_run_s_per_cpu: BTreeMap<usize, f64>,
    /// Seconds each CPU spent running anything else (other tasks, the harness).
    pub other_run_s_per_cpu: BTreeMap<usize, f64>,
    /// The drawn window after release, in seconds.
    pub window_s: f64,
}

/// Summarise `events` and draw the timeline from `release_ns` on (times in ms after release).
pub fn timeline(events: &[SwitchEvent], pids: &[i32], release_ns: u64, title: &str) -> (Gantt, TraceSummary) {
    let index: HashMap<i32, usize> = pids.iter().enumerate().map(|(i, &p)| (p, i)).collect();
    let harness = std::process::id() as i32;
    let mut sorted: Vec<&SwitchEvent> = events.iter().collect();
    sorted.sort_by_key(|e| (e.ts_ns, e.cpu));
    let mut summary = TraceSummary {
        events: events.len(),
        child_preemptions: 0,
        preempted_by: Vec::new(),
        child_blocking_switches: 0,
        child_run_s_per_cpu: BTreeMap::new(),
        other_run_s_per_cpu: BTreeMap::new(),
        window_s: 0.0,
    };
    let cpus: Vec<usize> = {
        let mut c: Vec<usize> = sorted.iter().map(|e| e.cpu).collect();
        c.sort_unstable();
        c.dedup();
        c
    };
    let lane_of: HashMap<usize, usize> = cpus.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let mut gantt = Gantt {
        title: title.to_string(),
        time_label: "ms after release (hatched = idle)".into(),
        lanes: cpus.iter().map(|c| format!("CPU {c}")).collect(),
        ..Default::default()
    };
    // The task each CPU switched to last, and when.
    let mut running: HashMap<usize, (u64, i32, String)> = HashMap::new();
    let mut cut: Option<u64> = None;
    let mut by: HashMap<String, usize> = HashMap::new();
    for e in sorted {
        if index.contains_key(&e.prev_pid) {
            if e.preempted() {
                summary.child_preemptions += 1;
                let who = if index.contains_key(&e.next_pid) {
                    "child".to_string()
                } else {
                    format!("{} ({})", e.next_comm.trim_end_matches(|c: char| c.is_ascii_digit()), e.next_prio)
                };
                *by.entry(who).or_default() += 1;
            } else {
                summary.child_blocking_switches += 1;
            }
        }
        if let Some((since, pid, comm)) = running.insert(e.cpu, (e.ts_ns, e.next_pid, e.next_comm.clone())) {
            let ran = e.ts_ns.saturating_sub(since) as f64 / 1e9;
            if pid != 0 {
                let bucket = if index.contains_key(&pid) {
                    &mut summary.child_run_s_per_cpu
                } else {
                    &mut summary.other_run_s_per_cpu
                };
                *bucket.entry(e.cpu).or_default() += ran;
            }
            let drawn = pid != 0 && cut.is_none() && e.ts_ns > release_ns;
            if drawn {
                let (label, key) = match index.get(&pid) {
                    Some(&i) => (format!("#{i}"), i),
                    None if pid == harness => ("harness".to_string(), GREY_KEY),
                    None => (comm, GREY_KEY),
                };
                let ms = |t: u64| t.saturating_sub(release_ns) as f64 / 1e6;
                gantt.bars.push(GanttBar {
                    lane: lane_of[&e.cpu],
                    start: ms(since.max(release_ns)),
                    end: ms(e.ts_ns),
                    label,
                    colour_key: key,
                });
                if gantt.bars.len() >= MAX_BARS {
                    cut = Some(e.ts_ns);
                }
            }
        }
    }
    let mut by: Vec<(String, usize)> = by.into_iter().collect();
    by.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    by.truncate(8);
    summary.preempted_by = by;
    let last = cut.or_else(|| events.iter().map(|e| e.ts_ns).max()).unwrap_or(release_ns);
    summary.window_s = last.saturating_sub(release_ns) as f64 / 1e9;
    if cut.is_some() {
        gantt.title = format!("{title} (first {:.0} ms)", summary.window_s * 1e3);
    }
    (gantt, summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(cpu: usize, ms: u64, prev: i32, state: &str, next: i32) -> SwitchEvent {
        SwitchEvent {
            cpu,
            ts_ns: ms * 1_000_000,
            switch: Switch {
                prev_comm: format!("p{prev}"),
                prev_pid: prev,
                prev_prio: 120,
                prev_state: state.into(),
                next_comm: format!("p{next}"),
                next_pid: next,
                next_prio: 120,
            },
        }
    }

    #[test]
    fn timeline_counts_preemptions_and_run_time() {
        // CPU 1: idle -> 10 runs 0..5 ms -> pre-empted by 11 -> 11 exits at 8 -> 10 runs to 10 -> idle.
        let events = vec![
            ev(1, 0, 0, "R", 10),
            ev(1, 5, 10, "R", 11),
            ev(1, 8, 11, "X", 10),
            ev(1, 10, 10, "X", 0),
            ev(0, 2, 0, "R", 999),
            ev(0, 4, 999, "S", 0),
        ];
        let (g, s) = timeline(&events, &[10, 11], 0, "t");
        assert_eq!(s.child_preemptions, 1);
        assert_eq!(s.preempted_by, vec![("child".to_string(), 1)]);
        assert_eq!(s.child_blocking_switches, 2);
        assert!((s.child_run_s_per_cpu[&1] - 0.010).abs() < 1e-9);
        assert!((s.other_run_s_per_cpu[&0] - 0.002).abs() < 1e-9);
        assert_eq!(g.lanes, vec!["CPU 0", "CPU 1"]);
        assert_eq!(g.bars.len(), 4);
        assert!(g.to_svg().contains("#1"));
    }

    #[test]
    fn switches_are_read_from_tracefs_text() {
        let text =
            "# tracer: nop\n          <idle>-0       [001] d..2.   100.000100: sched_switch: prev_comm=swapper/1 \
                    prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=sh next_pid=42 next_prio=120\n\
                    sh-42 [001] d..2. 100.000300: sched_wakeup: comm=x pid=43 prio=120 target_cpu=001\n";
        let s = switches(text);
        assert_eq!(s.len(), 1, "only the switch");
        assert_eq!((s[0].cpu, s[0].ts_ns, s[0].next_pid), (1, 100_000_100_000, 42));
    }
}
