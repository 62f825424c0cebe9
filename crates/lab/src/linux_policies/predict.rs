//! Prediction beside measurement: each cpu-workload case put through the simulator's fcfs,
//! rr and cfs policies — N tasks arriving together, each costing the measured mean CPU time
//! of one process, on as many CPUs as the children used — and the predicted turnaround and
//! pre-emptions printed beside the measured ones.
//!
//! The model leaves out what the live run has: exec and process start-up outside the
//! measured CPU time, other tasks sharing the CPUs (which fair sharing lets in, and
//! SCHED_FIFO keeps out), RT throttling and cache effects. The gap is the lesson.

use super::case::CaseResult;
use super::params::{Params, WorkloadKind};
use schedlab_os::sched::LinuxPolicy;
use schedlab_report::section::Table;
use schedlab_report::stats;
use schedlab_sim::engine::{simulate, SimConfig};
use schedlab_sim::policies::by_spec;
use schedlab_sim::workload::{TaskSpec, Workload};
use serde::Serialize;
use serde_json::{json, Value};

/// The simulator policy that models a Linux policy.
pub fn model_of(p: LinuxPolicy) -> Option<&'static str> {
    match p {
        LinuxPolicy::Fifo => Some("fcfs"),
        LinuxPolicy::Rr => Some("rr"),
        LinuxPolicy::Other | LinuxPolicy::Batch => Some("cfs"),
        _ => None,
    }
}

/// One simulated policy for one case.
#[derive(Debug, Clone, Serialize)]
pub struct Prediction {
    pub model: String,
    pub turnaround_mean_s: f64,
    pub turnaround_p50_s: f64,
    pub turnaround_max_s: f64,
    /// Switch-outs while runnable per task (slice ends and pre-emptions).
    pub involuntary_per_task: f64,
    pub makespan_s: f64,
}

/// Simulate `procs` equal CPU-bound tasks of `cost_ns` each on `cpus` CPUs under `spec`.
pub fn simulate_case(procs: usize, cost_ns: u64, cpus: usize, spec: &str) -> anyhow::Result<Prediction> {
    let workload = Workload {
        cpus: Some(cpus),
        tasks: (0..procs).map(|i| TaskSpec::cpu(&format!("p{i}"), 0, cost_ns.max(1))).collect(),
    };
    let mut policy = by_spec(spec).map_err(|e| anyhow::anyhow!("{e}"))?;
    let config = SimConfig { cpus, record_slices: false, ..Default::default() };
    let r = simulate(&workload, policy.as_mut(), &config);
    let turn: Vec<f64> = r.tasks.iter().filter_map(|t| t.turnaround).map(|d| d as f64 / 1e9).collect();
    // A CPU-only task is switched to once to start; every further switch-to means it was
    // switched out while runnable — what rusage counts as an involuntary context switch.
    let involuntary: u64 = r.tasks.iter().map(|t| t.context_switches.saturating_sub(1)).sum();
    Ok(Prediction {
        model: spec.to_string(),
        turnaround_mean_s: stats::mean(&turn),
        turnaround_p50_s: stats::percentile(&turn, 50.0),
        turnaround_max_s: turn.iter().copied().fold(0.0, f64::max),
        involuntary_per_task: involuntary as f64 / procs.max(1) as f64,
        makespan_s: r.overall.makespan as f64 / 1e9,
    })
}

/// Predictions as a results fragment and a table.
pub struct Predictions {
    pub doc: Value,
    pub table: Option<Table>,
}

/// Predict every cpu-workload case of `cases`.
pub fn predictions(_params: &Params, cases: &[CaseResult]) -> Predictions {
    let specs =
        ["fcfs".to_string(), format!("rr:quantum={}ms", schedlab_os::sched::rr_timeslice_ms()), "cfs".to_string()];
    let mut table = Table::new(
        "Predicted (simulator) vs measured turnaround, cpu workload",
        &[
            "procs",
            "policy",
            "measured p50 ms",
            "measured mean ms",
            "invol/proc",
            "model",
            "pred p50 ms",
            "pred mean ms",
            "pred invol/task",
        ],
    )
    .keyed(&["policy", "model", "procs"]);
    let mut docs = Vec::new();
    for c in cases.iter().filter(|c| c.workload == WorkloadKind::Cpu && !c.timed_out && !c.interrupted) {
        let cost_ns = (c.avg_s * 1e9) as u64;
        let cpus = c.cpus.len().max(1);
        let mut preds = Vec::new();
        for spec in &specs {
            match simulate_case(c.procs, cost_ns, cpus, spec) {
                Ok(p) => preds.push(p),
                Err(e) => eprintln!("schedlab: simulating {spec}: {e}"),
            }
        }
        let matching = model_of(c.policy);
        for p in &preds {
            let is_model = matching.is_some_and(|m| p.model.starts_with(m));
            table.row(vec![
                c.procs.to_string(),
                c.policy.to_string(),
                format!("{:.1}", c.turnaround_p50_s * 1e3),
                format!("{:.1}", c.turnaround_mean_s * 1e3),
                format!("{:.3}", c.avg_involuntary_ctx),
                if is_model { format!("{} *", p.model) } else { p.model.clone() },
                format!("{:.1}", p.turnaround_p50_s * 1e3),
                format!("{:.1}", p.turnaround_mean_s * 1e3),
                format!("{:.3}", p.involuntary_per_task),
            ]);
        }
        docs.push(json!({
            "policy": c.policy, "procs": c.procs, "cpus": cpus, "task_cost_s": c.avg_s,
            "measured": { "turnaround_p50_s": c.turnaround_p50_s, "turnaround_mean_s": c.turnaround_mean_s,
                          "avg_involuntary_ctx": c.avg_involuntary_ctx, "wall_s": c.wall_s },
            "model": matching, "predicted": preds,
        }));
    }
    if docs.is_empty() {
        return Predictions { doc: json!({ "available": false, "why": "no cpu-workload case was run" }), table: None };
    }
    let table = table.with_note(
        "* = the model of the measured policy (FIFO ≈ fcfs, RR ≈ rr with Linux's RR slice, OTHER ≈ cfs). \
         Tasks all arrive at the release; each costs the case's measured mean CPU time. The model has no \
         exec/start-up time and no other tasks on the CPUs, so measured turnaround runs longer — most for \
         OTHER, which shares the CPUs with everything else that runs there.",
    );
    Predictions { doc: json!({ "available": true, "cases": docs }), table: Some(table) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_jobs_fcfs_beats_fair_sharing_on_mean_turnaround() {
        let fcfs = simulate_case(10, 10_000_000, 1, "fcfs").unwrap();
        let cfs = simulate_case(10, 10_000_000, 1, "cfs").unwrap();
        // FCFS: finishes at 10, 20, ..., 100 ms → mean 55 ms; fair sharing ends everyone near 100 ms.
        assert!((fcfs.turnaround_mean_s - 0.055).abs() < 1e-6, "{fcfs:?}");
        assert_eq!(fcfs.involuntary_per_task, 0.0);
        assert!(cfs.turnaround_mean_s > 0.08, "{cfs:?}");
        assert!(cfs.involuntary_per_task > 0.0);
        assert!((fcfs.makespan_s - 0.1).abs() < 1e-6);
    }
}
