//! Schedulability analysis of a workload of periodic tasks on one CPU, to set beside what the
//! simulator shows: utilisation, the Liu–Layland and hyperbolic bounds for rate monotonic
//! ([`bounds`]), exact response-time analysis for fixed priorities ([`rta`]) and the processor
//! demand test for EDF ([`demand`]).
//!
//! The task model is the classic one: task `i` releases a job every `T` (its `period`), each job
//! needs `C` of CPU (its one CPU burst) and must finish within `D` of its release (`deadline`,
//! else the period — the deadline the engine gives each job). Jobs of one task run in release
//! order, and a job is never dropped: a late one runs on and delays the next, as in the engine.
//! Workloads outside the model are refused with the task named: a task without a period, with
//! blocked intervals inside a job (self-suspension needs a different analysis), or with locks
//! (blocking is not modelled). Affinity, class and CPU count are ignored: this is uniprocessor
//! analysis. The tests assume every task's first release may coincide (the critical instant);
//! with offsets they stay safe but may be pessimistic, and a task's finite `jobs` count is
//! likewise ignored (the analysis is for jobs released forever).
//!
//! Each verdict says whether its test is exact (necessary and sufficient), sufficient only
//! (passing proves schedulability, failing proves nothing) or necessary only.

pub mod bounds;
pub mod demand;
pub mod rta;

#[cfg(test)]
mod tests;

use crate::policy::Dur;
use crate::workload::Workload;
use serde::Serialize;
use std::fmt;
use std::sync::Arc;

/// One periodic task as the analysis sees it. Times in ns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PeriodicTask {
    pub name: Arc<str>,
    /// CPU time of one job.
    pub c: Dur,
    /// Period.
    pub t: Dur,
    /// Relative deadline.
    pub d: Dur,
    /// The workload's `priority` (used by `prio-preempt`, and by `rm` to order equal periods).
    pub priority: i32,
    /// First release.
    pub arrival: Dur,
}

/// Why a workload cannot be analysed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnalysisError {
    /// The task at fault, if one is.
    pub task: Option<String>,
    pub message: String,
}

impl fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.task {
            Some(t) => write!(f, "task {t}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for AnalysisError {}

/// The workload's tasks as periodic tasks, or an error naming the first one that is not.
pub fn periodic_tasks(w: &Workload) -> Result<Vec<PeriodicTask>, AnalysisError> {
    if w.tasks.is_empty() {
        return Err(AnalysisError { task: None, message: "the workload has no tasks".into() });
    }
    w.tasks
        .iter()
        .map(|s| {
            let refuse = |m: &str| AnalysisError { task: Some(s.name.to_string()), message: m.into() };
            let Some(t) = s.period else {
                return Err(refuse("has no period; the analysis is for periodic tasks"));
            };
            if s.bursts.len() > 1 {
                return Err(refuse(
                    "has blocked intervals inside its jobs; the analysis covers jobs that only compute \
                     (self-suspending tasks need a suspension-aware analysis)",
                ));
            }
            if !s.locks.is_empty() {
                return Err(refuse("holds locks; blocking on shared resources is not modelled"));
            }
            if !s.job_phases.is_empty() {
                return Err(refuse(
                    "has jobs of different lengths (phases); the analysis takes one worst-case time per task",
                ));
            }
            Ok(PeriodicTask {
                name: s.name.clone(),
                c: s.bursts[0],
                t,
                d: s.deadline.unwrap_or(t),
                priority: s.priority,
                arrival: s.arrival,
            })
        })
        .collect()
}

/// What kind of test a verdict comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Necessary and sufficient: its answer is the truth either way.
    Exact,
    /// Passing proves schedulability; failing proves nothing.
    Sufficient,
    /// Failing proves unschedulability; passing proves nothing.
    Necessary,
}

/// A test's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Schedulable,
    Unschedulable,
    /// A one-sided test that could not decide.
    Inconclusive,
    /// The test's assumptions do not hold for this task set.
    NotApplicable,
}

/// One test's verdict on the whole task set.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// E.g. `Liu–Layland bound`.
    pub test: &'static str,
    /// The policy it speaks for: `rm`, `prio-preempt`, `edf`, or `any`.
    pub policy: &'static str,
    pub kind: Kind,
    pub outcome: Outcome,
    /// The numbers behind it, in words.
    pub detail: String,
}

/// One task's parameters and its response-time bounds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskAnalysis {
    pub name: Arc<str>,
    pub c: Dur,
    pub t: Dur,
    pub d: Dur,
    /// C / T.
    pub u: f64,
    /// Under `rm` (shorter period first; equal periods by lower `priority`).
    pub rm: rta::RtaBound,
    /// Under `prio-preempt` (lower `priority` first).
    pub prio: rta::RtaBound,
}

/// The whole analysis of one workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    pub tasks: Vec<TaskAnalysis>,
    /// Σ C/T.
    pub utilisation: f64,
    /// lcm of the periods (ns); none if it overflows 64 bits.
    pub hyperperiod: Option<Dur>,
    pub edf: demand::DemandResult,
    pub verdicts: Vec<Verdict>,
}

/// Analyse a workload of periodic tasks (see the module doc for what is refused).
pub fn analyze(w: &Workload) -> Result<Report, AnalysisError> {
    let ts = periodic_tasks(w)?;
    Ok(analyze_tasks(&ts))
}

/// Analyse periodic tasks directly.
pub fn analyze_tasks(ts: &[PeriodicTask]) -> Report {
    let rm = rta::rm_response_times(ts);
    let prio = rta::prio_response_times(ts);
    let edf = demand::edf_demand(ts);
    let synchronous = ts.iter().all(|t| t.arrival == ts[0].arrival);
    let verdicts = vec![
        bounds::utilisation_verdict(ts),
        bounds::liu_layland_verdict(ts),
        bounds::hyperbolic_verdict(ts),
        rta::verdict(&rm, "rm", synchronous),
        rta::verdict(&prio, "prio-preempt", synchronous),
        demand::verdict(&edf, synchronous),
    ];
    let tasks = ts
        .iter()
        .zip(rm)
        .zip(prio)
        .map(|((t, rm), prio)| TaskAnalysis {
            name: t.name.clone(),
            c: t.c,
            t: t.t,
            d: t.d,
            u: t.c as f64 / t.t as f64,
            rm,
            prio,
        })
        .collect();
    Report { tasks, utilisation: bounds::utilisation(ts), hyperperiod: bounds::hyperperiod(ts), edf, verdicts }
}

/// A duration in ms for verdict texts.
fn ms(ns: Dur) -> String {
    format!("{} ms", ns as f64 / 1e6)
}
