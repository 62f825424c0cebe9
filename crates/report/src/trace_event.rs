//! Timelines as Chrome Trace Event JSON, the format Perfetto (ui.perfetto.dev), chrome://tracing
//! and speedscope open: a run becomes one process per timeline (a simulated policy, a live
//! run), with one track per CPU (which task ran) and one per task (when it ran, where, and what
//! it waited for). Every span is a complete event (`"ph": "X"` with `dur`), so no begin/end pair
//! can be left open; events are sorted by time within each track. Timestamps are microseconds,
//! as the format defines them, with nanoseconds kept as fractions.
//!
//! Format: "Trace Event Format", Google, the document chrome://tracing and Perfetto follow
//! (`traceEvents`, `ph` X / i / M, `pid`, `tid`, `ts`, `dur`).

use serde_json::{json, Value};

/// One timeline: what ran on which CPU, and when each task waited.
#[derive(Debug, Clone, Default)]
pub struct TraceTimeline {
    /// The process name the viewer shows, e.g. the policy or "live".
    pub name: String,
    pub cpus: usize,
    /// Task names, indexed by the `task` fields below.
    pub tasks: Vec<String>,
    pub runs: Vec<TraceRun>,
    pub waits: Vec<TraceWait>,
    pub marks: Vec<TraceMark>,
}

/// A task ran on a CPU over `[start_ns, end_ns)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRun {
    pub task: usize,
    pub cpu: usize,
    pub start_ns: u64,
    pub end_ns: u64,
}

/// A task waited (I/O, a lock, sleep) over `[start_ns, end_ns)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceWait {
    pub task: usize,
    pub start_ns: u64,
    pub end_ns: u64,
    pub what: String,
}

/// An instant on a task's track: an arrival, a wake-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceMark {
    pub task: usize,
    pub at_ns: u64,
    pub what: String,
}

/// The Trace Event document of `timelines` (one process each).
pub fn document(timelines: &[TraceTimeline], title: &str) -> Value {
    let mut events: Vec<Value> = Vec::new();
    for (i, t) in timelines.iter().enumerate() {
        let pid = i + 1;
        events.push(meta(pid, None, "process_name", json!({"name": t.name})));
        events.push(meta(pid, None, "process_sort_index", json!({"sort_index": i})));
        let cpu_tid = |c: usize| c + 1;
        let task_tid = |k: usize| t.cpus + 1 + k;
        for c in 0..t.cpus {
            events.push(meta(pid, Some(cpu_tid(c)), "thread_name", json!({"name": format!("CPU {c}")})));
            events.push(meta(pid, Some(cpu_tid(c)), "thread_sort_index", json!({"sort_index": c})));
        }
        for (k, name) in t.tasks.iter().enumerate() {
            events.push(meta(pid, Some(task_tid(k)), "thread_name", json!({"name": name})));
            events.push(meta(pid, Some(task_tid(k)), "thread_sort_index", json!({"sort_index": t.cpus + k})));
        }
        let mut timed: Vec<(usize, u64, Value)> = Vec::new();
        for r in t.runs.iter().filter(|r| r.end_ns > r.start_ns) {
            let name = &t.tasks[r.task];
            let args = json!({"task": name, "cpu": r.cpu});
            timed.push((
                cpu_tid(r.cpu),
                r.start_ns,
                span(pid, cpu_tid(r.cpu), name, "run", r.start_ns, r.end_ns, &args),
            ));
            let on = format!("CPU {}", r.cpu);
            timed.push((
                task_tid(r.task),
                r.start_ns,
                span(pid, task_tid(r.task), &on, "run", r.start_ns, r.end_ns, &args),
            ));
        }
        for w in t.waits.iter().filter(|w| w.end_ns > w.start_ns) {
            let args = json!({"task": t.tasks[w.task], "waits for": w.what});
            timed.push((
                task_tid(w.task),
                w.start_ns,
                span(pid, task_tid(w.task), &w.what, "wait", w.start_ns, w.end_ns, &args),
            ));
        }
        for m in &t.marks {
            let e = json!({"ph": "i", "s": "t", "pid": pid, "tid": task_tid(m.task), "name": m.what, "cat": "mark",
                           "ts": micros(m.at_ns)});
            timed.push((task_tid(m.task), m.at_ns, e));
        }
        // Within a track by time; a stable sort keeps a task's run before its wait at one instant.
        timed.sort_by_key(|(tid, at, _)| (*tid, *at));
        events.extend(timed.into_iter().map(|(_, _, e)| e));
    }
    json!({"traceEvents": events, "displayTimeUnit": "ns", "otherData": {"title": title, "source": "schedlab"}})
}

fn meta(pid: usize, tid: Option<usize>, name: &str, args: Value) -> Value {
    json!({"ph": "M", "pid": pid, "tid": tid.unwrap_or(0), "name": name, "args": args})
}

fn span(pid: usize, tid: usize, name: &str, cat: &str, start_ns: u64, end_ns: u64, args: &Value) -> Value {
    json!({"ph": "X", "pid": pid, "tid": tid, "name": name, "cat": cat, "ts": micros(start_ns),
           "dur": micros(end_ns - start_ns), "args": args})
}

fn micros(ns: u64) -> f64 {
    ns as f64 / 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_tasks() -> TraceTimeline {
        TraceTimeline {
            name: "rr".into(),
            cpus: 1,
            tasks: vec!["A".into(), "B".into()],
            runs: vec![
                TraceRun { task: 1, cpu: 0, start_ns: 4_000_000, end_ns: 6_000_000 },
                TraceRun { task: 0, cpu: 0, start_ns: 0, end_ns: 4_000_000 },
                TraceRun { task: 0, cpu: 0, start_ns: 6_000_000, end_ns: 6_000_000 },
            ],
            waits: vec![TraceWait { task: 0, start_ns: 4_000_000, end_ns: 5_500, what: "io".into() }],
            marks: vec![TraceMark { task: 1, at_ns: 1_500, what: "arrives".into() }],
        }
    }

    #[test]
    fn spans_go_on_the_cpu_and_the_task_track_in_time_order() {
        let doc = document(&[two_tasks()], "t");
        let ev = doc["traceEvents"].as_array().unwrap();
        let spans: Vec<&Value> = ev.iter().filter(|e| e["ph"] == "X").collect();
        // Two real runs on two tracks each; the empty run and the backwards wait are dropped.
        assert_eq!(spans.len(), 4);
        let cpu0: Vec<f64> = spans.iter().filter(|e| e["tid"] == 1).map(|e| e["ts"].as_f64().unwrap()).collect();
        assert_eq!(cpu0, vec![0.0, 4000.0], "CPU 0's track in time order");
        let a = spans.iter().find(|e| e["tid"] == 2).unwrap();
        assert_eq!((a["name"].as_str(), a["dur"].as_f64()), (Some("CPU 0"), Some(4000.0)));
        let mark = ev.iter().find(|e| e["ph"] == "i").unwrap();
        assert_eq!((mark["tid"].as_u64(), mark["ts"].as_f64()), (Some(3), Some(1.5)), "B's track, 1.5 µs");
        let names: Vec<&str> =
            ev.iter().filter(|e| e["name"] == "thread_name").map(|e| e["args"]["name"].as_str().unwrap()).collect();
        assert_eq!(names, vec!["CPU 0", "A", "B"]);
    }
}
