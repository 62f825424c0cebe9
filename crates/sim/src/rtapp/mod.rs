//! rt-app workloads read into and written from schedlab's workload format.
//!
//! rt-app (scheduler-tools/rt-app) describes a workload as JSON. Its grammar is
//! `doc/tutorial.txt` of scheduler-tools/rt-app; where the text is silent this module follows
//! rt-app's parser (`src/rt-app_parse_config.c`) and thread body (`src/rt-app.c`). rt-app
//! times are µs; schedlab's are ns. rt-app's JSON may hold `/* */` and `//` comments and
//! trailing commas (json-c takes them): [`import`] strips them first.
//!
//! # What maps to what ([`import`])
//!
//! | rt-app | schedlab |
//! |---|---|
//! | task `"name"`, `instance` N | N tasks: `name` when N = 1, else `name-0` … `name-(N-1)` (rt-app's own thread names number threads across the whole file instead); N = 0 creates none |
//! | `delay` (µs) | `arrival` |
//! | `run`, `runtime` | CPU bursts (adjacent ones merge) |
//! | `sleep` | blocked intervals; a sleep before the first run adds to `arrival`, one after the last run (the thread's exit) is dropped |
//! | a body of runs/sleeps ending in one `timer` {`ref`, `period`} | a periodic task: `period` = the timer's, `bursts` = one job, `jobs` = the number of loops |
//! | `phases` of such bodies on one timer whose bodies differ (rt-app's example3) | a periodic task with `job_phases`: the thread's rounds unrolled, each phase `loop` jobs of its body, cut to the jobs released before `global.duration` |
//! | `loop`, `phases` (each with its own `loop`) | other bodies are unrolled, in order, into one burst list |
//! | `loop: -1` (also a task's default) | until `global.duration` (s): the loops and events that start before it at their nominal times |
//! | `policy` SCHED_OTHER / SCHED_IDLE, `global.default_policy` | class `other` / `idle`; SCHED_OTHER's `priority` is its `nice` (rt-app sets it with setpriority) |
//! | SCHED_FIFO / SCHED_RR, `priority` | class `fifo` / `rr`, `priority` = the RT priority 1–99 (rt-app's default 10), stored as the `linux` policy reads it: a higher number wins, so 90 stays more urgent than 10 |
//! | SCHED_DEADLINE, `dl-runtime`, `dl-period`, `dl-deadline` | class `deadline`, `runtime`, `period`, `deadline` (rt-app's defaults: period = runtime, deadline = period) |
//! | `dl-runtime` of a SCHED_OTHER/SCHED_IDLE task | `runtime` (its custom slice) |
//! | `cpus` | `affinity` |
//! | `lock` M … `unlock` M around the runs of one whole CPU burst | `locks`: M held over that burst (rt-app creates a mutex on first use; nested mutexes over the same burst are taken in the order locked) |
//! | `resources` entries of `"type": "mutex"` | accepted: `lock` creates them anyway |
//! | `global` calibration, logdir, log_basename, log_size, ftrace, gnuplot, lock_pages, io_device, mem_buffer_size, cumulative_slack | accepted and ignored: they do not change the schedule |
//! | `global.pi_enabled` | accepted and ignored: priority inheritance is a run option in schedlab (`sim run` inherits unless `--no-inherit`, rt-app's default `false`) |
//!
//! Event keys match by prefix as in rt-app (`run0`, `sleep1`, `timer_a` are a run, a sleep, a
//! timer); a key given twice in one object is refused (json-c would keep one of them).
//!
//! # What is refused
//!
//! Every key or event not listed above is refused with an [`RtAppError`] naming the task and
//! the key, never dropped: `mem`, `iorun`, `wait`, `signal`, `broad`, `sync`, `barrier`,
//! `suspend`, `resume`, `yield`, `fork`; a mutex that does not cover exactly one whole CPU
//! burst (locked after a run of the same burst, a sleep or a further run while held, held over
//! no run, unlocked without being held, never unlocked before the body ends); per-phase
//! `policy`/`priority`/`dl-*`/`cpus`; `util_min`/`util_max`, `taskgroup`, `nodes_membind`; the
//! legacy task keys `period`/`deadline`, and a task-level `runtime` event without `dl-runtime`
//! (rt-app reads it as the legacy dl-runtime as well); events beside `phases`; a `resources`
//! entry that is not a mutex; unknown keys. A timer is mapped only in the shape above: one
//! timer, last in the body, after a run, every phase with the same timer (where the bodies
//! differ: no locks, no phase of `loop: -1`), the body no longer than the period, the timer's `ref` not shared with another thread, and for SCHED_DEADLINE
//! the timer period equal to `dl-period` (schedlab has one period per task); any other timer is
//! refused by name. `loop: -1` without a positive `global.duration` is refused, as are loop
//! counts of 0 or below -1.
//!
//! # What is not exact
//!
//! - `run` is calibrated work and `runtime` busy wall-clock time; both become CPU time (a
//!   pre-empted `runtime` event gets less than its length in rt-app).
//! - A periodic task releases job k at `arrival + k × period`; rt-app's timer does the same while
//!   each job ends within its period (after an overrun its relative timer restarts late).
//! - `global.duration` counts loops at their nominal length (no waiting for a CPU).
//!
//! # Writing rt-app ([`export`])
//!
//! One rt-app task per task, or one task with `instance` N for `name-0` … `name-(N-1)` that are
//! alike but for their names; times in µs. A lock becomes `lock` … `unlock` around its burst's
//! run, and a document with locks sets `global.pi_enabled` (schedlab's runs inherit by
//! default). A periodic task (a `period`, except a SCHED_DEADLINE one of one job, whose period
//! is only its reservation's) is `loop` = `jobs` over its job's runs and sleeps and a timer
//! (with job phases: `loop` 1 and a phase per job phase, each `loop` = its jobs and a timer);
//! another task's bursts become runs and sleeps, a phase per run of equal (CPU, blocked) pairs
//! (locks included) and a last phase with the last CPU burst. `global` has `duration: -1`.
//! Refused, by task and field: times that are not whole µs (never rounded) or beyond rt-app's
//! 32-bit µs; zero-length blocked intervals; `wakes`, `until_woken`, `runtime_reads`,
//! `start_cpu`; a weight other than 1; a `priority` outside SCHED_FIFO/SCHED_RR; a `nice` outside
//! SCHED_OTHER; a `deadline` outside SCHED_DEADLINE; a job longer than its period; classes rt-app
//! has no policy for (`batch`, numbered queues, …). The workload's `cpus` is not written (rt-app
//! runs on the machine's CPUs).

use crate::policy::{CpuId, Dur, Time};
use crate::workload::{TaskSpec, Workload};
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fmt;

mod export;
mod import;
mod job_phases;
mod json;
mod lock_spans;
mod model;
#[cfg(test)]
mod tests;

pub use export::export;
pub use import::import;
use json::*;
use model::*;

const US: Dur = 1_000;
const SEC: Dur = 1_000_000_000;
/// The most events one thread may unroll to (a guard against loops that never end).
const MAX_EVENTS: u64 = 5_000_000;

/// Why an rt-app document could not be read or a workload could not be written as one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtAppError {
    /// The task concerned (rt-app's task key on import, the schedlab task on export); None for
    /// the document itself or `global`.
    pub task: Option<String>,
    /// The event or key concerned, e.g. `mem`, `phases.heavy.timer`, `global.duration`.
    pub key: String,
    /// What is wrong.
    pub message: String,
}

impl RtAppError {
    fn new(task: Option<&str>, key: impl Into<String>, message: impl Into<String>) -> Self {
        RtAppError { task: task.map(str::to_string), key: key.into(), message: message.into() }
    }
}

impl fmt::Display for RtAppError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.task {
            Some(t) => write!(f, "rt-app task \"{t}\", \"{}\": {}", self.key, self.message),
            None => write!(f, "rt-app \"{}\": {}", self.key, self.message),
        }
    }
}

impl std::error::Error for RtAppError {}
