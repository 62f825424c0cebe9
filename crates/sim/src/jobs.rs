//! Per-job metrics of a run: for every job of every task, its release, first start, finish,
//! response time and lateness; per task, the worst and 99th-percentile response, misses and the
//! largest lateness. Read from a [`SimResult`]'s slices after the run, so any policy's run can be
//! measured the same way.
//!
//! Job `k` of a task is released at `arrival + k × period` (a task without a period has one job,
//! released at its arrival), as the engine releases them; its absolute deadline is the release
//! plus `deadline`, or plus the period when no deadline is set, or none. A job finishes at the
//! end of its last CPU slice once it has received all its CPU bursts (blocked intervals between
//! them do not end it). It misses when it finishes after its deadline — strictly, as the engine
//! counts `deadline_misses`: a job that finishes exactly at its deadline meets it, and one cut
//! short by the horizon is unfinished, not missed.

use crate::engine::SimResult;
use crate::policy::{Dur, TaskId, Time};
use crate::workload::{TaskSpec, Workload};
use serde::Serialize;
use std::fmt;
use std::sync::Arc;

/// One job of one task. Times in ns; `None` where it did not happen within the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobRecord {
    pub task: TaskId,
    pub name: Arc<str>,
    /// Index of the job within its task (0 = the first).
    pub job: u32,
    pub release: Time,
    /// Absolute deadline; none when the task has neither a deadline nor a period.
    pub deadline: Option<Time>,
    pub first_start: Option<Time>,
    /// End of its last CPU slice, once it received all its CPU bursts.
    pub finish: Option<Time>,
    /// `finish − release`.
    pub response: Option<Dur>,
    /// `finish − deadline` (negative: finished early).
    pub lateness: Option<i64>,
    /// Finished after its deadline.
    pub missed: bool,
}

/// Per-task summary of its jobs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskJobStats {
    pub task: TaskId,
    pub name: Arc<str>,
    /// Jobs released within the run (up to its end: the makespan, or the horizon).
    pub released: u32,
    pub jobs_done: u32,
    pub worst_response: Option<Dur>,
    /// Nearest-rank 99th percentile of the finished jobs' responses: the ⌈0.99·n⌉-th smallest.
    pub p99_response: Option<Dur>,
    pub deadline_misses: u64,
    /// Largest `finish − deadline` over finished jobs with a deadline.
    pub max_lateness: Option<i64>,
}

/// Every job and every task's summary, in workload order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobReport {
    pub jobs: Vec<JobRecord>,
    pub tasks: Vec<TaskJobStats>,
}

/// Why a result could not be read job by job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobsError(pub String);

impl fmt::Display for JobsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for JobsError {}

/// Release time of job `k` of `spec`.
pub fn release_of(spec: &TaskSpec, k: u32) -> Time {
    spec.arrival + spec.period.unwrap_or(0) * k as Dur
}

/// Relative deadline of each job of `spec`: `deadline`, else the period, as the engine sets it.
pub fn relative_deadline(spec: &TaskSpec) -> Option<Dur> {
    spec.deadline.or(spec.period)
}

/// CPU time job `k` of `spec` needs: the sum of its CPU bursts (the even entries).
pub fn job_cpu(spec: &TaskSpec, k: u32) -> Dur {
    spec.job_bursts(k).iter().step_by(2).sum()
}

/// What the slices say of one job so far.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    first: Option<Time>,
    last_end: Time,
    cpu: Dur,
}

/// The per-job metrics of `result`, a run of `workload` with `record_slices` on.
pub fn job_metrics(workload: &Workload, result: &SimResult) -> Result<JobReport, JobsError> {
    let n = workload.tasks.len();
    if !result.tasks.is_empty() && result.tasks.len() != n {
        return Err(JobsError(format!("the result has {} tasks, the workload {n}", result.tasks.len())));
    }
    if result.slices.is_empty() && result.tasks.iter().any(|t| t.cpu > 0) {
        return Err(JobsError("the run kept no slices (simulate with record_slices on)".into()));
    }
    let end = result.overall.makespan;
    // seen[t][k]: job k of task t.
    let mut seen: Vec<Vec<Seen>> = workload.tasks.iter().map(|s| vec![Seen::default(); s.jobs as usize]).collect();
    for s in &result.slices {
        let job = seen
            .get_mut(s.task)
            .and_then(|jobs| jobs.get_mut(s.job as usize))
            .ok_or_else(|| JobsError(format!("a slice of task {} job {} is not in the workload", s.task, s.job)))?;
        job.first = Some(job.first.map_or(s.start, |f| f.min(s.start)));
        job.last_end = job.last_end.max(s.end);
        job.cpu += s.end - s.start;
    }
    let mut jobs = Vec::new();
    let mut tasks = Vec::with_capacity(n);
    for (t, spec) in workload.tasks.iter().enumerate() {
        let first_job = jobs.len();
        for (k, got) in seen[t].iter().enumerate() {
            let need = job_cpu(spec, k as u32);
            let release = release_of(spec, k as u32);
            if release > end && got.first.is_none() {
                break;
            }
            let deadline = relative_deadline(spec).map(|d| release + d);
            let finish = (got.cpu >= need).then_some(got.last_end);
            let lateness = finish.zip(deadline).map(|(f, d)| (f as i128 - d as i128) as i64);
            jobs.push(JobRecord {
                task: t,
                name: spec.name.clone(),
                job: k as u32,
                release,
                deadline,
                first_start: got.first,
                finish,
                response: finish.map(|f| f - release),
                lateness,
                missed: lateness.is_some_and(|l| l > 0),
            });
        }
        tasks.push(summarise(t, spec, &jobs[first_job..]));
    }
    Ok(JobReport { jobs, tasks })
}

fn summarise(task: TaskId, spec: &TaskSpec, jobs: &[JobRecord]) -> TaskJobStats {
    let mut responses: Vec<Dur> = jobs.iter().filter_map(|j| j.response).collect();
    responses.sort_unstable();
    TaskJobStats {
        task,
        name: spec.name.clone(),
        released: jobs.len() as u32,
        jobs_done: responses.len() as u32,
        worst_response: responses.last().copied(),
        p99_response: nearest_rank(&responses, 99),
        deadline_misses: jobs.iter().filter(|j| j.missed).count() as u64,
        max_lateness: jobs.iter().filter_map(|j| j.lateness).max(),
    }
}

/// Nearest-rank percentile `p` (1..=100) of sorted values: the ⌈p·n/100⌉-th smallest.
pub fn nearest_rank(sorted: &[Dur], p: usize) -> Option<Dur> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    Some(sorted[rank - 1])
}

#[cfg(test)]
mod tests;
