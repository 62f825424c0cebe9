//! Simulated runs as Trace Event timelines (one per policy) for Perfetto and chrome://tracing:
//! the slices a task ran, its I/O and lock waits, and its arrival.

use schedlab_report::trace_event::{TraceMark, TraceRun, TraceTimeline, TraceWait};
use schedlab_sim::engine::SimResult;
use schedlab_sim::workload::Workload;

/// One timeline per result, named by its policy. The results must have recorded slices.
pub fn timelines(w: &Workload, results: &[SimResult]) -> Vec<TraceTimeline> {
    let tasks: Vec<String> = w.tasks.iter().map(|t| t.name.to_string()).collect();
    results
        .iter()
        .map(|r| TraceTimeline {
            name: r.policy.clone(),
            cpus: r.cpus,
            tasks: tasks.clone(),
            runs: r
                .slices
                .iter()
                .map(|s| TraceRun { task: s.task, cpu: s.cpu, start_ns: s.start, end_ns: s.end })
                .collect(),
            waits: r
                .blocked
                .iter()
                .map(|b| TraceWait { task: b.task, start_ns: b.start, end_ns: b.end, what: b.what.clone() })
                .collect(),
            marks: w
                .tasks
                .iter()
                .enumerate()
                .map(|(i, t)| TraceMark { task: i, at_ns: t.arrival, what: "arrives".into() })
                .collect(),
        })
        .collect()
}
