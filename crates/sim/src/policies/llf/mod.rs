//! Least laxity first (`llf`), global over all CPUs: the m jobs with the least laxity run, where
//! laxity = absolute deadline − now − remaining execution. A running job's laxity stays constant
//! while a waiting job's falls by 1 ns per ns, so the order changes between scheduling events.
//!
//! Textbook LLF (A. K. Mok, MIT PhD thesis, 1983; "least slack time first" in J. W. S. Liu,
//! *Real-Time Systems*, Prentice Hall 2000, ch. 4) comes in two forms that Liu names: *nonstrict*
//! decides only at scheduling events (releases, completions), *strict* re-evaluates
//! continuously and pre-empts the moment a waiting job's laxity drops below a running one's —
//! which makes two jobs of equal laxity swap at every instant (thrashing). What this model does:
//!
//! - At every scheduling event (a release, a wake-up, a completion or block, a pick) the strict
//!   order is restored: a queued job with strictly less laxity than the largest running laxity
//!   displaces that job (highest task id on ties), through the engine's `preempts` or, when the
//!   engine cannot ask (see `gedf/global.rs`), a timer at the same instant. Equal laxities never
//!   pre-empt; in the queue, ties go by task id.
//! - `quantum` (default 1 ms) approximates strict LLF with the engine's timers: a timer at each
//!   laxity crossing, set at the instant the most urgent waiting job's laxity is `quantum / 2`
//!   below the largest running laxity. Two jobs of equal laxity then take turns of `quantum`
//!   (the first swap comes after `quantum / 2`) instead of thrashing. `quantum=0` sets no crossing
//!   timers: nonstrict LLF.
//!
//! Simpler than the theory: "remaining execution" is what is left of the current CPU burst
//! (`TaskView::remaining`) — the whole job for the usual one-burst real-time job; a job's later
//! bursts, after I/O, are not counted. A running job's laxity is taken at its pick, so a context
//! switch cost (which the policy is not told) is not counted in it. Jobs without a deadline come
//! after every job with one and never pre-empt.

#[cfg(test)]
mod tests;

use super::gedf::global::{GlobalPolicy, NO_DEADLINE};
use crate::policy::{Dur, TaskView};

/// Global LLF; `quantum`: the turn length of jobs with equal laxity (0 = decide only at events).
pub fn policy(quantum: Dur) -> GlobalPolicy {
    GlobalPolicy::new(format!("llf:quantum={}", super::spec::ms(quantum)), laxity_key, true, quantum / 2)
}

/// The queue key: deadline − remaining (the latest start time), so that laxity = key − now.
fn laxity_key(task: &TaskView) -> i64 {
    let Some(d) = task.deadline else { return NO_DEADLINE };
    let rem = task.remaining.or(task.burst).unwrap_or(0);
    i64::try_from(d).unwrap_or(NO_DEADLINE - 1).saturating_sub(i64::try_from(rem).unwrap_or(i64::MAX))
}
