//! `util_est` (Linux 6.18, fair.c): a task's utilisation as it was when it last went to sleep,
//! kept while it sleeps. PELT's `util_avg` decays while a task is blocked, so a task that runs
//! in bursts looks small just after it wakes; `util_est` remembers the size of its last
//! activations — raised at once to the utilisation at a dequeue that shows more, lowered by a
//! quarter of the difference otherwise (`util_est_update()`). A CPU's estimate is the sum over
//! its runnable fair tasks (`util_est_enqueue()`/`util_est_dequeue()`; a delayed entity no
//! longer counts), and its utilisation as placement and balancing read it (`cpu_util()`) is the
//! larger of that sum and its `util_avg`. It decides, among other things, whether a CPU with
//! more tasks than it can run at once is overloaded when a forked task is placed: three tasks
//! that just woke carry little `util_avg` but their full estimates.
//!
//! A replay starts with the tasks that were there before it (a traced case's tasks, stopped
//! until their release) at the estimates the kernel had for them ([`Linux::with_util_est`]):
//! the trace cannot show them, `/proc/<tid>/sched` can.

use super::super::pelt::{Presence, SCALE};
use super::super::Linux;
use super::Smp;
use crate::policy::{CpuId, TaskId, Time};

/// `UTIL_EST_MARGIN`: 1% of the capacity scale.
const MARGIN: u64 = SCALE / 100;
/// `UTIL_EST_WEIGHT_SHIFT`: a new sample weighs a quarter.
const WEIGHT_SHIFT: u32 = 2;

/// One task's estimate (`se.avg.util_est`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UtilEst {
    pub ewma: u64,
    /// `UTIL_AVG_UNCHANGED`: its PELT averages have not changed since the estimate was last
    /// taken, so a dequeue now takes no new sample.
    pub unchanged: bool,
}

impl UtilEst {
    /// `util_est_update()` at a dequeue to sleep, with the task's `util_avg` and
    /// `runnable_avg` then, on a CPU of `capacity`.
    pub fn at_sleep(&mut self, dequeued: u64, runnable: u64, capacity: u64) {
        if self.unchanged {
            return;
        }
        let ewma = self.ewma;
        if ewma <= dequeued {
            self.ewma = dequeued;
        } else {
            let diff = ewma - dequeued;
            if diff >= MARGIN {
                if dequeued > capacity {
                    return;
                }
                // A task that waited for the CPU ran less than it wanted: not a smaller sample.
                if dequeued + MARGIN >= runnable {
                    self.ewma = ((ewma << WEIGHT_SHIFT) - diff) >> WEIGHT_SHIFT;
                }
            }
        }
        self.unchanged = true;
    }
}

impl Smp {
    /// `cfs_rq->avg.util_est` of CPU `c`: the estimates of its runnable fair tasks.
    pub fn cpu_util_est(&self, c: CpuId) -> u64 {
        self.cpus[c]
            .attached
            .iter()
            .filter_map(|&t| self.tasks.get_ref(t))
            .filter(|s| matches!(s.presence, Presence::Running | Presence::Waiting))
            .map(|s| s.util_est.ewma)
            .sum()
    }
}

impl Linux {
    /// Start these tasks (workload indices), when they arrive as tasks that were there before
    /// the run, with these estimates; every other task starts at 0, as a forked one does.
    pub fn with_util_est(mut self, start: impl IntoIterator<Item = (TaskId, u64)>) -> Self {
        self.util_est_at_start = start.into_iter().collect();
        self
    }

    /// After `t` was dequeued to sleep at `now` (`arch_scale_cpu_capacity()` is the full scale:
    /// every CPU here is alike).
    pub(crate) fn util_est_at_sleep(&mut self, t: TaskId, now: Time) {
        let smp = self.smp.as_mut().expect("smp");
        let p = smp.pelt_of(t, now);
        smp.tasks.get_mut(t).util_est.at_sleep(p.util_avg, p.runnable_avg, SCALE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_estimate_rises_at_once_and_falls_by_a_quarter() {
        let mut e = UtilEst { ewma: 200, unchanged: false };
        e.at_sleep(500, 500, SCALE);
        assert_eq!(e, UtilEst { ewma: 500, unchanged: true });
        // No new sample until its averages change.
        e.at_sleep(100, 100, SCALE);
        assert_eq!(e.ewma, 500);
        // 500 − (500 − 100) / 4 = 400.
        e.unchanged = false;
        e.at_sleep(100, 100, SCALE);
        assert_eq!(e.ewma, 400);
        // Within 1% (10) of the estimate: kept.
        e.unchanged = false;
        e.at_sleep(395, 395, SCALE);
        assert_eq!(e.ewma, 400);
        // It waited for the CPU (runnable well above util): kept.
        e.unchanged = false;
        e.at_sleep(100, 300, SCALE);
        assert_eq!(e.ewma, 400);
    }
}
