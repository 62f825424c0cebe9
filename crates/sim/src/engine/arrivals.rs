//! The order tasks arrive in, shared by both engines: index order when the specs are sorted by
//! arrival (as generated workloads are), else the ids sorted by (arrival, id) — without the
//! tasks that arrive when woken, which come in when their wake-up does.

use crate::policy::{TaskId, Time};
use crate::workload::TaskSpec;

pub(super) struct ArrivalOrder(Option<Vec<TaskId>>);

impl ArrivalOrder {
    /// The order of `specs`; `sorted`: they are in arrival order already (no table kept).
    pub fn new(specs: &[TaskSpec], sorted: bool) -> Self {
        if sorted {
            return ArrivalOrder(None);
        }
        let mut order: Vec<TaskId> = (0..specs.len()).filter(|&i| specs[i].forked_by.is_none()).collect();
        order.sort_by_key(|&i| (specs[i].arrival, i));
        ArrivalOrder(Some(order))
    }

    /// The task at position `k` of the order and its arrival (None: none left).
    #[inline(always)]
    pub fn at(&self, k: usize, specs: &[TaskSpec]) -> Option<(TaskId, Time)> {
        let i = match &self.0 {
            None => Some(k),
            Some(o) => o.get(k).copied(),
        };
        i.and_then(|i| specs.get(i).map(|s| (i, s.arrival)))
    }
}
