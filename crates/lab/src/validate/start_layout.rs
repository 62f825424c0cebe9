//! The kernel's layout of a two-CPU case's tasks when the compared window opens: each case
//! task's run queue then, as the trace shows it, for the `linux` replay to start the window from
//! ([`schedlab_sim::policies::linux::start_layout`]). The host's tasks are not in it: the replay
//! holds them on the CPUs they ran on live throughout.

use super::replay::Replay;
use schedlab_sim::policies::linux::start_layout::StartLayout;
use schedlab_trace::{Pid, Timeline};
use std::collections::BTreeSet;

/// Each task of `case` (by workload task) on the run queue `live` shows it on at `at_ns`
/// (trace time; `live` numbered as the replay's CPUs).
pub fn start_layout(replay: &Replay, live: &Timeline, case: &BTreeSet<Pid>, at_ns: u64) -> StartLayout {
    let pids = replay.imported.report.pids();
    let cpus = pids
        .iter()
        .enumerate()
        .filter(|(_, p)| case.contains(p))
        .filter_map(|(task, p)| Some((task, live.tasks.get(p)?.queue_at(at_ns)?)))
        .collect();
    StartLayout { at: at_ns.saturating_sub(replay.t0_ns), cpus }
}
