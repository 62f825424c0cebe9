//! What ULE keeps per thread (`struct td_sched` and the `struct thread` fields it reads), in one
//! record, so a call on a thread touches one cache line rather than one table per field.

use super::score::{History, PctCpu};
use super::tdq::Runq;

/// Priority class (`td_pri_class`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Class {
    Ithd,
    Realtime,
    #[default]
    Timeshare,
    Idle,
}

/// One thread's scheduling state. The default is a thread the policy has not seen.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Thread {
    pub class: Class,
    /// Set up by this instance. A host with a queue per CPU may hand it a task first seen by
    /// another instance: it starts afresh here (no history, a fork's first slice).
    pub known: bool,
    pub nice: i32,
    /// The workload priority it arrived with (a lower view priority later is a lent one).
    pub base: i32,
    /// `td_priority`: what it is queued or running at.
    pub pri: i32,
    /// `ts_slice`: stathz ticks of the current slice used.
    pub ts_slice: u32,
    pub hist: History,
    pub pct: PctCpu,
    /// `td_slptick`: the hz tick it went to sleep at.
    pub slptick: Option<i64>,
    /// `ts_cpu`: the CPU whose queue it is on, or last ran from.
    pub cpu: usize,
    /// Where it is queued.
    pub at: Option<(Runq, usize)>,
}
