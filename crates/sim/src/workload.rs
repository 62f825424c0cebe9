//! Workloads: tasks with arrival, alternating CPU/I-O bursts, priority, nice/weight, deadline,
//! period, runtime, affinity, named locks, and wake-ups between tasks. JSON files give times in
//! milliseconds (fractions allowed); inside, every time is an integer number of nanoseconds.
//!
//! A blocked interval normally lasts its length (a timer, a device). One listed in `until_woken`
//! lasts until another task wakes this one instead (a pipe read, a futex wait): the waker lists
//! the wake-up in its `wakes`, at a point of one of its CPU bursts (`{"burst": 0, "at": 0.05,
//! "task": 1}`: 0.05 ms into its first CPU burst it wakes task 1). A wake-up that comes while
//! the task is not waiting is kept and ends its next such interval at once, as a byte left in a
//! pipe does: the task then runs on without blocking.
//!
//! A task with `forked_by` arrives at the first wake-up that task gives it, not at its `arrival`:
//! that is a fork, at the point of the parent's CPU bursts where it happened, so a replayed child
//! starts after its parent's first 0.12 ms of work wherever the model runs it.
//!
//! `runtime_reads` are points of a task's CPU bursts where it reads its own CPU clock: the kernel
//! updates its run time then, and acts on a slice that has expired — a kernel without HRTICK
//! otherwise notices that only at its next tick.
//!
//! What `priority` means depends on the policy: for most, a lower number is a higher priority;
//! but in the `linux` policy a task of class `fifo` or `rr` takes `priority` as its Linux
//! real-time priority (`sched_priority`, 1–99), where **a higher number wins**, as in Linux.
//!
//! ```json
//! {"cpus":1,"tasks":[{"name":"P1","arrival":0,"bursts":[24],"priority":3,"weight":1}]}
//! ```
//!
//! Bad input is rejected with the offending field named (`tasks[2].arrival: negative time -1`).

use crate::policy::{CpuId, Dur, Time};
pub use crate::task_spec::{Bursts, JobPhase, RareFields, TaskSpec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Why a workload was rejected; the message names the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadError {
    /// Path of the offending field, e.g. `tasks[1].bursts`.
    pub field: String,
    pub message: String,
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for WorkloadError {}

fn err(field: impl Into<String>, message: impl Into<String>) -> WorkloadError {
    WorkloadError { field: field.into(), message: message.into() }
}

/// A named lock held for the whole of one CPU burst (index counts CPU bursts only: 0 = first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LockUse {
    /// The lock's name; tasks naming the same lock exclude each other.
    pub name: String,
    /// Which CPU burst holds it (0 = the first CPU burst).
    pub burst: usize,
}

/// A wake-up a task gives another task when it has run `at` into one of its CPU bursts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WakeUp {
    /// Which CPU burst (index counts CPU bursts only: 0 = first, as in each job of a periodic task).
    pub burst: usize,
    /// CPU time into that burst (at most its length: a wake-up at its end comes before the block).
    pub at: Dur,
    /// Index of the task woken, in the workload.
    pub task: usize,
}

/// A point of one of a task's CPU bursts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BurstPoint {
    /// Which CPU burst (index counts CPU bursts only: 0 = first).
    pub burst: usize,
    /// CPU time into that burst.
    pub at: Dur,
}

/// A point in one of the task's CPU bursts (the file form of a [`BurstPoint`]).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "BurstPoint")]
struct RawPoint {
    /// Which CPU burst (0 = the first CPU burst).
    burst: usize,
    /// Milliseconds into that burst.
    at: f64,
}

/// A wake-up this task gives another when it has run `at` ms into one of its CPU bursts (the
/// file form of a [`WakeUp`]).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "WakeUp")]
struct RawWakeUp {
    /// Which of the waker's CPU bursts (0 = the first CPU burst).
    burst: usize,
    /// Milliseconds into that burst.
    at: f64,
    /// The index of the task woken (in `tasks`); it must list the interval in `until_woken`.
    task: usize,
}

/// A workload: tasks and, optionally, the number of CPUs it was written for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Workload {
    pub cpus: Option<usize>,
    pub tasks: Vec<TaskSpec>,
}

/// One task of a workload file (times in milliseconds).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Task")]
struct RawTask {
    /// Unique within the workload (default `T<index>`).
    #[serde(default)]
    name: Option<String>,
    /// Milliseconds from the start.
    #[serde(default)]
    arrival: f64,
    /// Milliseconds: CPU burst, blocked time, CPU burst, … (an odd number of entries). Every
    /// task has these or `phases`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    bursts: Vec<f64>,
    /// A periodic task whose jobs differ, instead of `bursts`: its jobs in order, `jobs` of
    /// each shape, e.g. `[{"jobs": 10, "bursts": [3]}, {"jobs": 10, "bursts": [27]}]` (rt-app's
    /// phases on one timer). Needs a `period`; `jobs` is their sum.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    phases: Vec<RawPhase>,
    /// Most policies: a lower number runs first. `linux` with class fifo/rr: the Linux
    /// real-time priority 1–99, a higher number wins.
    #[serde(default)]
    priority: i32,
    /// Share for weighted policies (wrr, stride, lottery), ≥ 1.
    #[serde(default = "one")]
    weight: i64,
    /// Nice value −20…19 for the fair policies (cfs, eevdf, linux).
    #[serde(default)]
    nice: i32,
    /// Relative deadline in milliseconds (edf; deadline class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    deadline: Option<f64>,
    /// Period in milliseconds: the task releases a job every period (`jobs` of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    period: Option<f64>,
    /// Milliseconds of CPU per period for the deadline class (SCHED_DEADLINE's runtime), or a
    /// custom slice for a fair task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    runtime: Option<f64>,
    /// How many jobs a periodic task releases (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    jobs: Option<i64>,
    /// The CPUs it may run on (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    affinity: Option<Vec<CpuId>>,
    /// Scheduling class where the policy has several: other, batch, idle, fifo, rr, deadline,
    /// stop (linux; `stop` is the kernel's stopper thread, in a replayed trace); realtime,
    /// foreground (windows); a queue number (mlq).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    class: Option<String>,
    /// Locks held during CPU bursts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    locks: Vec<LockUse>,
    /// Wake-ups this task gives others.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    wakes: Vec<RawWakeUp>,
    /// Blocked intervals (0 = the first) that last until another task wakes this one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    until_woken: Vec<usize>,
    /// Points where the task reads its own CPU clock (the kernel then updates its run time).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    runtime_reads: Vec<RawPoint>,
    /// The CPU it starts on (per-CPU queues).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    start_cpu: Option<CpuId>,
    /// The CPU each CPU burst runs on, in place of `affinity` (a replayed trace's background
    /// task held where it ran live); past the last entry, the last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    burst_cpus: Vec<CpuId>,
    /// When each blocked interval ends, in ms of workload time, in place of its length (a
    /// replayed trace's background task, woken by the host's timers when it was live); a task of
    /// one job only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    block_ends: Vec<f64>,
    /// The index of the task that forks it (in `tasks`): it arrives at that task's first
    /// wake-up naming it in its `wakes` (the fork), not at `arrival`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    forked_by: Option<usize>,
}

/// A stretch of a periodic task's jobs of one shape (file form, times in ms).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "JobPhase")]
struct RawPhase {
    /// How many jobs in a row have this shape, ≥ 1.
    jobs: i64,
    /// Milliseconds: CPU burst, blocked time, CPU burst, … of each of these jobs.
    bursts: Vec<f64>,
}

fn one() -> i64 {
    1
}

/// A schedlab workload file: tasks and, optionally, the CPU count it was written for. Times
/// are milliseconds (fractions allowed).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Workload")]
struct RawWorkload {
    /// CPUs it was written for, 1–1024 (`--cpus` overrides).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cpus: Option<i64>,
    /// At least one task.
    tasks: Vec<RawTask>,
}

/// A parser's error, with the field it names (serde puts unknown and missing fields in the
/// message itself; the message is kept whole).
fn parse_error(msg: String) -> WorkloadError {
    let field = msg.split('`').nth(1).filter(|_| msg.contains("field")).map(str::to_string);
    err(field.unwrap_or_else(|| "workload".into()), msg)
}

/// Milliseconds (JSON) → nanoseconds, rejecting negative, NaN and absurd values.
fn ms_to_ns(field: &str, ms: f64) -> Result<Dur, WorkloadError> {
    if !ms.is_finite() {
        return Err(err(field, format!("not a finite time: {ms}")));
    }
    if ms < 0.0 {
        return Err(err(field, format!("negative time {ms} ms")));
    }
    if ms > 1.0e12 {
        return Err(err(field, format!("time {ms} ms is too large (max 1e12 ms)")));
    }
    Ok((ms * 1e6).round() as Dur)
}

fn ns_to_ms(ns: Dur) -> f64 {
    ns as f64 / 1e6
}

/// The JSON Schema of workload files, derived from the very types they are parsed into.
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(RawWorkload)).expect("a schema serializes")
}

impl Workload {
    /// Parse and validate a JSON workload (times in ms).
    pub fn from_json_str(s: &str) -> Result<Workload, WorkloadError> {
        let raw: RawWorkload = serde_json::from_str(s).map_err(|e| parse_error(e.to_string()))?;
        Self::from_raw(raw)
    }

    /// Parse and validate a YAML workload: the same fields as the JSON form (times in ms).
    pub fn from_yaml_str(s: &str) -> Result<Workload, WorkloadError> {
        let raw: RawWorkload = yaml_serde::from_str(s).map_err(|e| parse_error(e.to_string()))?;
        Self::from_raw(raw)
    }

    /// Parse a workload file's text: YAML when `yaml`, else JSON.
    pub fn from_text(s: &str, yaml: bool) -> Result<Workload, WorkloadError> {
        if yaml {
            Self::from_yaml_str(s)
        } else {
            Self::from_json_str(s)
        }
    }

    /// Serialize to the YAML file form (times in ms).
    pub fn to_yaml_string(&self) -> String {
        yaml_serde::to_string(&self.to_raw()).expect("workload serializes")
    }

    /// Serialize to the JSON file form (times in ms).
    pub fn to_json_string(&self) -> String {
        serde_json::to_string_pretty(&self.to_raw()).expect("workload serializes")
    }

    fn from_raw(raw: RawWorkload) -> Result<Workload, WorkloadError> {
        let cpus = match raw.cpus {
            None => None,
            Some(c) if (1..=1024).contains(&c) => Some(c as usize),
            Some(c) => return Err(err("cpus", format!("must be 1..=1024, got {c}"))),
        };
        if raw.tasks.is_empty() {
            return Err(err("tasks", "no tasks"));
        }
        let tasks: Vec<TaskSpec> =
            raw.tasks.into_iter().enumerate().map(|(i, t)| task_from_raw(i, t, cpus)).collect::<Result<_, _>>()?;
        let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (i, t) in tasks.iter().enumerate() {
            if let Some(first) = seen.insert(&*t.name, i) {
                return Err(err(
                    format!("tasks[{i}].name"),
                    format!("\"{}\" is also the name of tasks[{first}]; task names must be unique", t.name),
                ));
            }
        }
        let w = Workload { cpus, tasks };
        w.check_wakes()?;
        Ok(w)
    }

    /// Every wake-up names another task of the workload, and every forked task is woken by its
    /// parent, which is not itself forked by the child's descendants.
    pub fn check_wakes(&self) -> Result<(), WorkloadError> {
        let n = self.tasks.len();
        for (i, t) in self.tasks.iter().enumerate() {
            for (k, w) in t.wakes.iter().enumerate() {
                if w.task >= n || w.task == i {
                    let why = if w.task == i {
                        "a task cannot wake itself".to_string()
                    } else {
                        format!("no task {} (the workload has {n})", w.task)
                    };
                    return Err(err(format!("tasks[{i}].wakes[{k}].task"), why));
                }
            }
        }
        for (i, t) in self.tasks.iter().enumerate() {
            let Some(p) = t.forked_by else { continue };
            let field = format!("tasks[{i}].forked_by");
            if p >= n || p == i {
                let why = if p == i { "a task cannot fork itself".to_string() } else { format!("no task {p}") };
                return Err(err(field, why));
            }
            if !self.tasks[p].wakes.iter().any(|w| w.task == i) {
                return Err(err(
                    field,
                    format!("task {p} never wakes it, so it would never arrive (list the fork in task {p}'s `wakes`)"),
                ));
            }
            // Up the chain of parents: back to this task means none of them would ever arrive.
            let mut up = p;
            for _ in 0..n {
                match self.tasks[up].forked_by {
                    Some(q) if q == i => return Err(err(field, "its parents fork each other: none would arrive")),
                    Some(q) if q < n => up = q,
                    _ => break,
                }
            }
        }
        Ok(())
    }

    fn to_raw(&self) -> RawWorkload {
        RawWorkload { cpus: self.cpus.map(|c| c as i64), tasks: self.tasks.iter().map(task_to_raw).collect() }
    }

    /// Check that the workload fits `cpus` CPUs (affinity names existing CPUs).
    pub fn check_cpus(&self, cpus: usize) -> Result<(), WorkloadError> {
        for (i, t) in self.tasks.iter().enumerate() {
            if let Some(c) = t.start_cpu.filter(|&c| c >= cpus) {
                return Err(err(format!("tasks[{i}].start_cpu"), format!("CPU {c} does not exist (cpus = {cpus})")));
            }
            if let Some(c) = t.burst_cpus.iter().find(|&&c| c >= cpus) {
                return Err(err(format!("tasks[{i}].burst_cpus"), format!("CPU {c} does not exist (cpus = {cpus})")));
            }
            if let Some(a) = &t.affinity {
                if let Some(bad) = a.iter().find(|&&x| x >= cpus) {
                    return Err(err(
                        format!("tasks[{i}].affinity"),
                        format!("CPU {bad} does not exist (cpus = {cpus})"),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Validate one on-disk task (index `i` names it in errors) and convert ms → ns.
fn task_from_raw(i: usize, t: RawTask, cpus: Option<usize>) -> Result<TaskSpec, WorkloadError> {
    let f = |name: &str| format!("tasks[{i}].{name}");
    if t.bursts.is_empty() && t.phases.is_empty() {
        return Err(err(f("bursts"), "missing or empty: a task needs at least one CPU burst (or `phases`)"));
    }
    if !t.bursts.is_empty() && !t.phases.is_empty() {
        return Err(err(f("phases"), "give `bursts` or `phases`, not both (the first phase is the first job)"));
    }
    let mut job_phases = Vec::with_capacity(t.phases.len());
    for (k, p) in t.phases.iter().enumerate() {
        let field = f(&format!("phases[{k}]"));
        if !(1..=1_000_000).contains(&p.jobs) {
            return Err(err(format!("{field}.jobs"), format!("must be 1..=1000000, got {}", p.jobs)));
        }
        job_phases.push(JobPhase {
            jobs: p.jobs as u32,
            bursts: parse_bursts(&format!("{field}.bursts"), &p.bursts)?.into(),
        });
    }
    let bursts = match job_phases.first() {
        Some(p) => p.bursts.to_vec(),
        None => parse_bursts(&f("bursts"), &t.bursts)?,
    };
    if t.weight < 1 || t.weight > 1_000_000 {
        return Err(err(f("weight"), format!("must be 1..=1000000, got {}", t.weight)));
    }
    if !(-20..=19).contains(&t.nice) {
        return Err(err(f("nice"), format!("must be -20..=19, got {}", t.nice)));
    }
    let deadline = t.deadline.map(|d| ms_to_ns(&f("deadline"), d)).transpose()?;
    if deadline == Some(0) {
        return Err(err(f("deadline"), "must be > 0 ms"));
    }
    let period = t.period.map(|d| ms_to_ns(&f("period"), d)).transpose()?;
    if period == Some(0) {
        return Err(err(f("period"), "must be > 0 ms"));
    }
    let runtime = t.runtime.map(|d| ms_to_ns(&f("runtime"), d)).transpose()?;
    check_runtime(&f("runtime"), runtime, t.class.as_deref(), deadline, period)?;
    let phase_jobs: u64 = job_phases.iter().map(|p| u64::from(p.jobs)).sum();
    if !job_phases.is_empty() {
        if period.is_none() {
            return Err(err(f("phases"), "phases are jobs released every period: the task needs a period"));
        }
        if phase_jobs > 1_000_000 {
            return Err(err(f("phases"), format!("{phase_jobs} jobs in all: at most 1000000")));
        }
        if let Some(j) = t.jobs.filter(|&j| j as u64 != phase_jobs) {
            return Err(err(f("jobs"), format!("{j}, but the phases have {phase_jobs} jobs (omit it)")));
        }
        let beside = [
            ("locks", t.locks.is_empty()),
            ("wakes", t.wakes.is_empty()),
            ("until_woken", t.until_woken.is_empty()),
            ("runtime_reads", t.runtime_reads.is_empty()),
        ];
        if let Some((key, _)) = beside.iter().find(|(_, empty)| !empty) {
            return Err(err(f(key), "not with phases: its burst indices would name a different burst in each phase"));
        }
    }
    if t.forked_by.is_some() && (period.is_some() || !job_phases.is_empty()) {
        return Err(err(
            f("forked_by"),
            "a periodic task releases its jobs from `arrival`: it cannot also arrive when woken",
        ));
    }
    let jobs = match t.jobs {
        _ if !job_phases.is_empty() => phase_jobs as u32,
        None => 1,
        Some(j) if (1..=1_000_000).contains(&j) && (j == 1 || period.is_some()) => j as u32,
        Some(j) if period.is_none() => {
            return Err(err(f("jobs"), format!("{j} jobs need a period")));
        }
        Some(j) => return Err(err(f("jobs"), format!("must be 1..=1000000, got {j}"))),
    };
    if let Some(a) = &t.affinity {
        if a.is_empty() {
            return Err(err(f("affinity"), "empty CPU list (omit it to allow every CPU)"));
        }
        if let Some(c) = cpus {
            if let Some(bad) = a.iter().find(|&&x| x >= c) {
                return Err(err(f("affinity"), format!("CPU {bad} does not exist (cpus = {c})")));
            }
        }
    }
    let n_cpu = bursts.len().div_ceil(2);
    for (k, l) in t.locks.iter().enumerate() {
        if l.name.is_empty() {
            return Err(err(format!("tasks[{i}].locks[{k}].name"), "empty lock name"));
        }
        if l.burst >= n_cpu {
            return Err(err(
                format!("tasks[{i}].locks[{k}].burst"),
                format!("CPU burst {} does not exist (the task has {n_cpu})", l.burst),
            ));
        }
    }
    if let (Some(c), Some(n)) = (t.start_cpu, cpus) {
        if c >= n {
            return Err(err(f("start_cpu"), format!("CPU {c} does not exist (cpus = {n})")));
        }
    }
    if let Some(n) = cpus {
        if let Some(c) = t.burst_cpus.iter().find(|&&c| c >= n) {
            return Err(err(f("burst_cpus"), format!("CPU {c} does not exist (cpus = {n})")));
        }
    }
    let most_cpu = job_phases.iter().map(|p| p.bursts.len().div_ceil(2)).fold(n_cpu, usize::max);
    if t.burst_cpus.len() > most_cpu {
        return Err(err(
            f("burst_cpus"),
            format!("{} entries for {most_cpu} CPU burst(s) per job", t.burst_cpus.len()),
        ));
    }
    if let (Some(s), Some(&first)) = (t.start_cpu, t.burst_cpus.first()) {
        if s != first {
            return Err(err(f("start_cpu"), format!("CPU {s}, but burst_cpus holds its first burst on CPU {first}")));
        }
    }
    let n_io = bursts.len() / 2;
    let mut wakes = Vec::with_capacity(t.wakes.len());
    for (k, w) in t.wakes.iter().enumerate() {
        let field = format!("tasks[{i}].wakes[{k}]");
        if w.burst >= n_cpu {
            return Err(err(
                format!("{field}.burst"),
                format!("CPU burst {} does not exist (the task has {n_cpu})", w.burst),
            ));
        }
        let at = ms_to_ns(&format!("{field}.at"), w.at)?;
        let len = bursts[2 * w.burst];
        if at > len {
            return Err(err(
                format!("{field}.at"),
                format!("{} ms is past the end of CPU burst {} ({} ms)", w.at, w.burst, ns_to_ms(len)),
            ));
        }
        if wakes.last().is_some_and(|p: &WakeUp| (p.burst, p.at) > (w.burst, at)) {
            return Err(err(field, "wake-ups must be in order of (burst, at)"));
        }
        wakes.push(WakeUp { burst: w.burst, at, task: w.task });
    }
    let mut runtime_reads = Vec::with_capacity(t.runtime_reads.len());
    for (k, r) in t.runtime_reads.iter().enumerate() {
        let field = format!("tasks[{i}].runtime_reads[{k}]");
        if r.burst >= n_cpu {
            return Err(err(
                format!("{field}.burst"),
                format!("CPU burst {} does not exist (the task has {n_cpu})", r.burst),
            ));
        }
        let at = ms_to_ns(&format!("{field}.at"), r.at)?;
        if at > bursts[2 * r.burst] {
            return Err(err(format!("{field}.at"), format!("{} ms is past the end of CPU burst {}", r.at, r.burst)));
        }
        let p = BurstPoint { burst: r.burst, at };
        if runtime_reads.last().is_some_and(|q: &BurstPoint| (q.burst, q.at) > (p.burst, p.at)) {
            return Err(err(field, "points must be in order of (burst, at)"));
        }
        runtime_reads.push(p);
    }
    for (k, &io) in t.until_woken.iter().enumerate() {
        if io >= n_io {
            return Err(err(
                format!("tasks[{i}].until_woken[{k}]"),
                format!("blocked interval {io} does not exist (the task has {n_io})"),
            ));
        }
        if k > 0 && t.until_woken[k - 1] >= io {
            return Err(err(format!("tasks[{i}].until_woken[{k}]"), "indices must be increasing"));
        }
    }
    let block_ends = block_ends_of(&t.block_ends, n_io, jobs, &f("block_ends"))?;
    let spec = TaskSpec {
        name: t.name.map_or_else(|| format!("T{i}").into(), Into::into),
        arrival: ms_to_ns(&f("arrival"), t.arrival)?,
        bursts: bursts.into(),
        priority: t.priority,
        weight: t.weight as u32,
        nice: t.nice,
        jobs,
        ..TaskSpec::default()
    };
    Ok(spec.with(RareFields {
        deadline,
        period,
        runtime,
        affinity: t.affinity,
        class: t.class,
        locks: t.locks,
        wakes,
        until_woken: t.until_woken,
        runtime_reads,
        start_cpu: t.start_cpu,
        burst_cpus: t.burst_cpus,
        block_ends,
        forked_by: t.forked_by,
        job_phases,
    }))
}

/// `block_ends` in ms → ns: a task of one job, at most one per blocked interval, in order.
fn block_ends_of(ms: &[f64], n_io: usize, jobs: u32, field: &str) -> Result<Vec<Time>, WorkloadError> {
    if ms.is_empty() {
        return Ok(Vec::new());
    }
    if jobs != 1 {
        return Err(err(field, format!("a task of one job only (it has {jobs}): the ends are times, not per job")));
    }
    if ms.len() > n_io {
        return Err(err(field, format!("{} ends for {n_io} blocked interval(s)", ms.len())));
    }
    let mut out = Vec::with_capacity(ms.len());
    for (k, &m) in ms.iter().enumerate() {
        let end = ms_to_ns(&format!("{field}[{k}]"), m)?;
        if out.last().is_some_and(|&p| p > end) {
            return Err(err(format!("{field}[{k}]"), "ends must be in order"));
        }
        out.push(end);
    }
    Ok(out)
}

/// CPU, I/O, CPU, … in ms (`field` names the list in errors) → ns: an odd count, no CPU burst
/// of 0.
fn parse_bursts(field: &str, ms: &[f64]) -> Result<Vec<Dur>, WorkloadError> {
    if ms.is_empty() {
        return Err(err(field, "empty: a job needs at least one CPU burst"));
    }
    if ms.len() % 2 != 1 {
        return Err(err(
            field,
            format!("{} bursts: bursts alternate CPU, I/O, CPU, … and must end with a CPU burst", ms.len()),
        ));
    }
    let mut bursts = Vec::with_capacity(ms.len());
    for (k, b) in ms.iter().enumerate() {
        let ns = ms_to_ns(&format!("{field}[{k}]"), *b)?;
        if k % 2 == 0 && ns == 0 {
            return Err(err(format!("{field}[{k}]"), "a CPU burst must be longer than 0 ms"));
        }
        bursts.push(ns);
    }
    Ok(bursts)
}

/// The smallest runtime Linux accepts for SCHED_DEADLINE (`1 << DL_SCALE` ns, __checkparam_dl).
pub const DL_MIN_RUNTIME: Dur = 1 << 10;

/// `runtime` must be > 0; a deadline task's must fit `runtime ≤ deadline ≤ period` (the order
/// Linux's `__checkparam_dl` requires, with a missing deadline taken as the period); real-time
/// (`fifo`/`rr`) tasks have none.
fn check_runtime(
    field: &str,
    runtime: Option<Dur>,
    class: Option<&str>,
    deadline: Option<Dur>,
    period: Option<Dur>,
) -> Result<(), WorkloadError> {
    let Some(r) = runtime else { return Ok(()) };
    if r == 0 {
        return Err(err(field, "must be > 0 ms (omit it for the default)"));
    }
    match class {
        Some("fifo") | Some("rr") | Some("stop") => {
            Err(err(field, "a real-time (fifo/rr/stop) task has no runtime; it is for deadline and fair tasks"))
        }
        Some("deadline") => {
            if r < DL_MIN_RUNTIME {
                return Err(err(field, format!("a deadline task's runtime must be at least {DL_MIN_RUNTIME} ns")));
            }
            let Some(d) = deadline.or(period) else {
                return Err(err(field, "a deadline task with a runtime needs a deadline or a period"));
            };
            if r > d {
                let what = if deadline.is_some() { "deadline" } else { "period" };
                return Err(err(field, format!("runtime {} ms exceeds the {what} {} ms", ns_to_ms(r), ns_to_ms(d))));
            }
            if let (Some(d), Some(p)) = (deadline, period) {
                if d > p {
                    return Err(err(
                        field,
                        format!("deadline {} ms exceeds the period {} ms", ns_to_ms(d), ns_to_ms(p)),
                    ));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn task_to_raw(t: &TaskSpec) -> RawTask {
    RawTask {
        name: Some(t.name.to_string()),
        arrival: ns_to_ms(t.arrival),
        bursts: if t.job_phases.is_empty() { t.bursts.iter().map(|&b| ns_to_ms(b)).collect() } else { vec![] },
        phases: t
            .job_phases
            .iter()
            .map(|p| RawPhase { jobs: p.jobs.into(), bursts: p.bursts.iter().map(|&b| ns_to_ms(b)).collect() })
            .collect(),
        priority: t.priority,
        weight: t.weight as i64,
        nice: t.nice,
        deadline: t.deadline.map(ns_to_ms),
        period: t.period.map(ns_to_ms),
        runtime: t.runtime.map(ns_to_ms),
        jobs: (t.jobs != 1 && t.job_phases.is_empty()).then_some(t.jobs as i64),
        affinity: t.affinity.clone(),
        class: t.class.clone(),
        locks: t.locks.clone(),
        wakes: t.wakes.iter().map(|w| RawWakeUp { burst: w.burst, at: ns_to_ms(w.at), task: w.task }).collect(),
        until_woken: t.until_woken.clone(),
        runtime_reads: t.runtime_reads.iter().map(|p| RawPoint { burst: p.burst, at: ns_to_ms(p.at) }).collect(),
        start_cpu: t.start_cpu,
        burst_cpus: t.burst_cpus.clone(),
        block_ends: t.block_ends.iter().map(|&e| ns_to_ms(e)).collect(),
        forked_by: t.forked_by,
    }
}

/// A task serializes in the file form (times in ms) and is validated when read.
impl Serialize for TaskSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        task_to_raw(self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for TaskSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawTask::deserialize(d)?;
        task_from_raw(0, raw, None).map_err(serde::de::Error::custom)
    }
}

impl Serialize for Workload {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_raw().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Workload {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = RawWorkload::deserialize(d)?;
        Workload::from_raw(raw).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::MS;

    #[test]
    fn yaml_files_hold_the_same_workloads() {
        let json = r#"{"cpus":2,"tasks":[{"name":"A","bursts":[5,3,4],"class":"fifo","priority":50},{"name":"B","arrival":1.5,"bursts":[2]}]}"#;
        let yaml = "cpus: 2\ntasks:\n  - name: A\n    bursts: [5, 3, 4]\n    class: fifo\n    priority: 50\n  - name: B\n    arrival: 1.5\n    bursts: [2]\n";
        assert_eq!(Workload::from_yaml_str(yaml).unwrap(), Workload::from_json_str(json).unwrap());
        let e = Workload::from_yaml_str("tasks:\n  - name: A\n    burst: [5]\n").unwrap_err();
        assert!(e.to_string().contains("burst"), "{e}");
    }

    #[test]
    fn the_schema_describes_every_field_a_file_may_hold() {
        let schema = json_schema();
        let text = serde_json::to_string(&schema).unwrap();
        let defs = &schema["$defs"];
        let task = &defs["Task"];
        let mut fields: Vec<&str> = task["properties"].as_object().unwrap().keys().map(String::as_str).collect();
        fields.sort_unstable();
        // Every key a fully populated task serializes to is described.
        let full = TaskSpec { jobs: 2, ..TaskSpec::cpu("A", 0, 1) }.with(RareFields {
            deadline: Some(1),
            period: Some(1),
            runtime: Some(1),
            affinity: Some(vec![0]),
            class: Some("fifo".into()),
            locks: vec![LockUse { name: "L".into(), burst: 0 }],
            wakes: vec![WakeUp { burst: 0, at: 0, task: 0 }],
            until_woken: vec![0],
            runtime_reads: vec![BurstPoint { burst: 0, at: 0 }],
            start_cpu: Some(0),
            burst_cpus: vec![0],
            block_ends: vec![1],
            forked_by: Some(0),
            job_phases: vec![],
        });
        let phased = Workload::from_json_str(
            r#"{"tasks":[{"period":30,"phases":[{"jobs":2,"bursts":[3]},{"jobs":1,"bursts":[27]}]}]}"#,
        )
        .unwrap();
        let w = Workload { cpus: Some(1), tasks: vec![full, phased.tasks[0].clone()] };
        let written: serde_json::Value = serde_json::from_str(&w.to_json_string()).unwrap();
        for t in written["tasks"].as_array().unwrap() {
            for key in t.as_object().unwrap().keys() {
                assert!(fields.contains(&key.as_str()), "the schema lacks {key}: {fields:?}");
            }
        }
        assert!(fields.contains(&"phases") && defs["JobPhase"]["required"] == serde_json::json!(["jobs", "bursts"]));
        // A task has `bursts` or `phases`: the file check says which is missing.
        assert!(task.get("required").is_none(), "{task}");
        assert_eq!(task["additionalProperties"], false, "unknown fields are errors, and the schema says so");
        assert_eq!(schema["required"], serde_json::json!(["tasks"]));
        assert!(text.contains("Milliseconds"), "field descriptions come from the doc comments");
    }

    #[test]
    fn a_forked_task_needs_a_parent_that_wakes_it_and_no_period() {
        let forked = r#"{"tasks":[{"name":"parent","bursts":[2],"wakes":[{"burst":0,"at":0.5,"task":1}]},
            {"name":"child","arrival":0.5,"bursts":[1],"forked_by":0}]}"#;
        let w = Workload::from_json_str(forked).unwrap();
        assert_eq!((w.tasks[0].forked_by, w.tasks[1].forked_by), (None, Some(0)));
        assert_eq!(Workload::from_json_str(&w.to_json_string()).unwrap(), w, "it round-trips");
        let refused = |json: &str, field: &str, says: &str| {
            let e = Workload::from_json_str(json).unwrap_err().to_string();
            assert!(e.starts_with(field) && e.contains(says), "{e}");
        };
        refused(r#"{"tasks":[{"bursts":[2]},{"bursts":[1],"forked_by":0}]}"#, "tasks[1].forked_by", "never arrive");
        refused(r#"{"tasks":[{"bursts":[1],"forked_by":3}]}"#, "tasks[0].forked_by", "no task 3");
        refused(
            r#"{"tasks":[{"bursts":[1],"wakes":[{"burst":0,"at":0,"task":1}],"forked_by":1},
                {"bursts":[1],"wakes":[{"burst":0,"at":0,"task":0}],"forked_by":0}]}"#,
            "tasks[0].forked_by",
            "fork each other",
        );
        refused(
            r#"{"tasks":[{"bursts":[1],"wakes":[{"burst":0,"at":0,"task":1}]},{"bursts":[1],"period":10,"jobs":3,"forked_by":0}]}"#,
            "tasks[1].forked_by",
            "periodic",
        );
    }

    #[test]
    fn phases_give_a_periodic_task_jobs_of_different_shapes() {
        let w = Workload::from_json_str(
            r#"{"tasks":[{"name":"p","period":30,"phases":[{"jobs":2,"bursts":[3]},{"jobs":1,"bursts":[2,5,20]}]}]}"#,
        )
        .unwrap();
        let t = &w.tasks[0];
        assert_eq!((t.jobs, t.bursts.to_vec()), (3, vec![3 * MS]), "jobs sum the phases; bursts are the first job's");
        assert_eq!(t.job_bursts(0), [3 * MS]);
        assert_eq!(t.job_bursts(1), [3 * MS]);
        assert_eq!(t.job_bursts(2), [2 * MS, 5 * MS, 20 * MS]);
        assert_eq!(Workload::from_json_str(&w.to_json_string()).unwrap(), w, "written and read back");
        let phases = r#""phases":[{"jobs":2,"bursts":[3]}]"#;
        for (json, field) in [
            (format!(r#"{{"tasks":[{{{phases}}}]}}"#), "tasks[0].phases"),
            (format!(r#"{{"tasks":[{{"period":30,"bursts":[3],{phases}}}]}}"#), "tasks[0].phases"),
            (format!(r#"{{"tasks":[{{"period":30,"jobs":3,{phases}}}]}}"#), "tasks[0].jobs"),
            (format!(r#"{{"tasks":[{{"period":30,"until_woken":[0],{phases}}}]}}"#), "tasks[0].until_woken"),
            (r#"{"tasks":[{"period":30,"phases":[{"jobs":0,"bursts":[3]}]}]}"#.into(), "tasks[0].phases[0].jobs"),
            (r#"{"tasks":[{"period":30,"phases":[{"jobs":1,"bursts":[3,1]}]}]}"#.into(), "tasks[0].phases[0].bursts"),
        ] {
            assert_eq!(bad(&json).field, field, "{json}");
        }
    }

    #[test]
    fn block_ends_are_times_in_order_one_per_blocked_interval_of_one_job() {
        let w = Workload::from_json_str(r#"{"tasks":[{"bursts":[1,2,1,2,1],"block_ends":[4,8.5]}]}"#).unwrap();
        assert_eq!(w.tasks[0].block_ends, [4 * MS, 8 * MS + MS / 2]);
        assert_eq!(Workload::from_json_str(&w.to_json_string()).unwrap(), w, "written and read back");
        for (json, field) in [
            (r#"{"tasks":[{"bursts":[1,2,1],"block_ends":[4,8]}]}"#, "tasks[0].block_ends"),
            (r#"{"tasks":[{"bursts":[1,2,1,2,1],"block_ends":[8,4]}]}"#, "tasks[0].block_ends[1]"),
            (r#"{"tasks":[{"bursts":[1,2,1],"period":10,"jobs":2,"block_ends":[4]}]}"#, "tasks[0].block_ends"),
            (r#"{"tasks":[{"bursts":[1,2,1],"block_ends":[-4]}]}"#, "tasks[0].block_ends[0]"),
        ] {
            assert_eq!(bad(json).field, field, "{json}");
        }
    }

    fn bad(json: &str) -> WorkloadError {
        Workload::from_json_str(json).unwrap_err()
    }

    #[test]
    fn parses_the_issue_example() {
        let w = Workload::from_json_str(
            r#"{"cpus":1,"tasks":[{"name":"P1","arrival":0,"bursts":[24],"priority":3,"weight":1}]}"#,
        )
        .unwrap();
        assert_eq!(w.cpus, Some(1));
        assert_eq!(w.tasks[0].bursts.to_vec(), vec![24_000_000]);
        assert_eq!(w.tasks[0].priority, 3);
        let back = Workload::from_json_str(&w.to_json_string()).unwrap();
        assert_eq!(back, w);
        let t: TaskSpec = serde_json::from_str(r#"{"name":"x","bursts":[1.5]}"#).unwrap();
        assert_eq!(t.bursts.to_vec(), vec![1_500_000]);
        assert_eq!(serde_json::to_value(&t).unwrap()["bursts"][0], 1.5);
        assert!(serde_json::from_str::<TaskSpec>(r#"{"bursts":[]}"#).is_err());
    }

    #[test]
    fn runtime_round_trips_for_deadline_and_fair_tasks() {
        let json = r#"{"tasks":[{"bursts":[5],"class":"deadline","runtime":2,"deadline":10,"period":10},
            {"bursts":[5],"runtime":0.5}]}"#;
        let w = Workload::from_json_str(json).unwrap();
        assert_eq!(w.tasks[0].runtime, Some(2_000_000));
        assert_eq!(w.tasks[1].runtime, Some(500_000));
        let back = Workload::from_json_str(&w.to_json_string()).unwrap();
        assert_eq!(back, w);
        assert!(w.to_json_string().contains("\"runtime\": 2.0"));
        // Absent stays absent.
        let w = Workload::from_json_str(r#"{"tasks":[{"bursts":[5]}]}"#).unwrap();
        assert_eq!(w.tasks[0].runtime, None);
        assert!(!w.to_json_string().contains("runtime"));
    }

    #[test]
    fn fractions_of_ms_become_ns() {
        let w = Workload::from_json_str(r#"{"tasks":[{"arrival":0.5,"bursts":[1.25,2,0.001]}]}"#).unwrap();
        assert_eq!(w.tasks[0].arrival, 500_000);
        assert_eq!(w.tasks[0].bursts.to_vec(), vec![1_250_000, 2_000_000, 1_000]);
        assert_eq!(&*w.tasks[0].name, "T0");
    }

    #[test]
    fn bad_input_names_the_field() {
        let e = bad(r#"{"tasks":[{"bursts":[1]},{"arrival":-1,"bursts":[1]}]}"#);
        assert_eq!(e.field, "tasks[1].arrival");
        assert!(e.message.contains("negative"));
        assert_eq!(bad(r#"{"tasks":[{"bursts":[]}]}"#).field, "tasks[0].bursts");
        assert_eq!(bad(r#"{"tasks":[{"bursts":[1,2]}]}"#).field, "tasks[0].bursts");
        assert_eq!(bad(r#"{"tasks":[{"bursts":[0]}]}"#).field, "tasks[0].bursts[0]");
        assert_eq!(bad(r#"{"tasks":[{"bursts":[1,-3,1]}]}"#).field, "tasks[0].bursts[1]");
        let e = bad(r#"{"tasks":[{"bursts":[1],"colour":"red"}]}"#);
        assert_eq!(e.field, "colour");
        assert!(e.to_string().contains("unknown field"));
        assert_eq!(bad(r#"{"tasks":[{"bursts":[1],"weight":0}]}"#).field, "tasks[0].weight");
        assert_eq!(bad(r#"{"tasks":[{"bursts":[1],"nice":40}]}"#).field, "tasks[0].nice");
        assert_eq!(bad(r#"{"cpus":0,"tasks":[{"bursts":[1]}]}"#).field, "cpus");
        assert_eq!(bad(r#"{"cpus":2,"tasks":[{"bursts":[1],"affinity":[2]}]}"#).field, "tasks[0].affinity");
        assert_eq!(bad(r#"{"tasks":[{"bursts":[1],"jobs":3}]}"#).field, "tasks[0].jobs");
        assert_eq!(
            bad(r#"{"tasks":[{"bursts":[1],"locks":[{"name":"L","burst":1}]}]}"#).field,
            "tasks[0].locks[0].burst"
        );
        assert_eq!(bad(r#"{"tasks":[]}"#).field, "tasks");
        for json in [
            r#"{"tasks":[{"bursts":[1],"runtime":0}]}"#,
            r#"{"tasks":[{"bursts":[1],"runtime":-1}]}"#,
            r#"{"tasks":[{"bursts":[1],"class":"deadline","runtime":3,"deadline":2,"period":10}]}"#,
            r#"{"tasks":[{"bursts":[1],"class":"deadline","runtime":3,"period":2}]}"#,
            r#"{"tasks":[{"bursts":[1],"class":"deadline","runtime":1,"deadline":20,"period":10}]}"#,
            r#"{"tasks":[{"bursts":[1],"class":"deadline","runtime":1}]}"#,
            r#"{"tasks":[{"bursts":[1],"class":"deadline","runtime":0.0001,"period":10}]}"#,
            r#"{"tasks":[{"bursts":[1],"class":"fifo","runtime":1}]}"#,
        ] {
            assert_eq!(bad(json).field, "tasks[0].runtime", "{json}");
        }
        assert!(bad(r#"{"tasks":[{"bursts":[1],"class":"deadline","runtime":3,"deadline":2}]}"#)
            .message
            .contains("exceeds the deadline"));
        assert_eq!(bad(r#"{"tasks":[{"name":"x"}]}"#).field, "tasks[0].bursts");
    }
}
