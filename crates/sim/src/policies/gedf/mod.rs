//! Global EDF (`gedf`): one run queue for all CPUs; the m jobs with the earliest absolute
//! deadlines run. A released job with an earlier deadline than the **latest-deadline** running
//! job pre-empts that one (not merely the first CPU the engine asks about). Jobs without a
//! deadline come after every job with one; equal deadlines go by task id and never pre-empt.
//!
//! The victim rule is Linux SCHED_DEADLINE's push target: `cpudl_find()` in
//! kernel/sched/cpudeadline.c (torvalds/linux, commit 03ab8e62) keeps a max-heap of the CPUs'
//! running deadlines and sends a task to `cpudl_maximum()`, the CPU whose deadline is latest, if
//! the task's deadline is earlier and the CPU is in its mask. Simpler than Linux: one global
//! queue instead of per-CPU queues with push/pull, and with affinity the latest-deadline running
//! job among the CPUs the task may use (Linux gives up if the latest CPU is outside the mask).
//! How the engine is steered to that victim, and the timer that fixes two releases at one
//! instant, are in `global.rs`.
//!
//! Global EDF is not optimal on m > 1 CPUs: Dhall's effect (S. K. Dhall and C. L. Liu, "On a
//! real-time scheduling problem", Operations Research 26(1), 1978) — m light short-period tasks
//! and one heavy task miss a deadline at a total utilisation barely above 1 (see `tests.rs`).

pub(crate) mod global;
#[cfg(test)]
mod tests;

use crate::policy::TaskView;
use global::{GlobalPolicy, NO_DEADLINE};

/// Global EDF: the shared global queue ordered by absolute deadline.
pub fn policy() -> GlobalPolicy {
    GlobalPolicy::new("gedf".into(), deadline_key, false, 0)
}

/// The job's absolute deadline as an urgency (lower = sooner).
fn deadline_key(task: &TaskView) -> i64 {
    task.deadline.map_or(NO_DEADLINE, |d| i64::try_from(d).unwrap_or(NO_DEADLINE))
}
