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
//! The sample is what `util_est_update()` reads in `dequeue_task_fair()`, before the dequeue
//! brings the task's averages up to the sleep: its `util_avg` and `runnable_avg` as last stored —
//! at its pick or at the last tick it ran through ([`AtStop`]). The dequeue's own update then
//! clears UTIL_AVG_UNCHANGED if it crosses a PELT period, so the next sleep samples again. A
//! wake-up onto another CPU ages the task without clearing it (`migrate_task_rq_fair()`).
//!
//! A replay starts with the tasks that were there before it (a traced case's tasks, stopped
//! until their release) at the estimates the kernel had for them ([`Linux::with_util_est`]):
//! the trace cannot show them, `/proc/<tid>/sched` can.

use super::super::pelt::{Pelt, Presence, SCALE};
use super::super::Linux;
use super::{Smp, TaskSmp};
use crate::policy::{CpuId, Dur, TaskId, Time};

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

/// A task's load tracking as it was when it last stopped running, before that stop's update:
/// what a sleep right after samples (see the module). Copied at every stop, read only at a sleep.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AtStop {
    pelt: Pelt,
    weight: u64,
    unchanged: bool,
}

/// The averages `util_est_update()` reads at a sleep at `now`, and whether the dequeue's own
/// update (from the stored instant to `now`) then crosses a PELT period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stored {
    util: u64,
    runnable: u64,
    unchanged: bool,
    clears_after: bool,
}

impl AtStop {
    /// Of a running task, before its stop's update.
    pub fn of(s: &TaskSmp) -> AtStop {
        AtStop { pelt: s.pelt, weight: s.weight, unchanged: s.util_est.unchanged }
    }

    /// The averages as stored when it stopped at `now`: brought to the last tick it ran through
    /// (`entity_tick()` updates the running entity), if later than its last update.
    fn stored(&self, now: Time, tick: Dur) -> Stored {
        let mut at = self.pelt;
        let mut unchanged = self.unchanged;
        let last_tick = now - now % tick.max(1);
        if last_tick > at.last_update && at.update(last_tick, Presence::Running, self.weight) {
            unchanged = false;
        }
        let mut rest = at;
        let clears_after = rest.update(now, Presence::Running, self.weight);
        Stored { util: at.util_avg, runnable: at.runnable_avg, unchanged, clears_after }
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

    /// After `t` went to sleep at `now`: sample the averages stored when it stopped running
    /// (`arch_scale_cpu_capacity()` is the full scale: every CPU here is alike).
    pub(crate) fn util_est_at_sleep(&mut self, t: TaskId, now: Time) {
        let smp = self.smp.as_mut().expect("smp");
        let tick = smp.tick;
        let s = smp.tasks.get_mut(t);
        let Some(at_stop) = s.stopped.take() else { return };
        let stored = at_stop.stored(now, tick);
        s.util_est.unchanged = stored.unchanged;
        s.util_est.at_sleep(stored.util, stored.runnable, SCALE);
        if stored.clears_after {
            s.util_est.unchanged = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    #[test]
    fn a_sleep_samples_the_averages_stored_at_the_pick_or_the_last_tick() {
        let s = TaskSmp { pelt: Pelt::new_task(1024, 512, 0), weight: 1024, ..TaskSmp::default() };
        let stop = AtStop::of(&s);
        // Stopped 1 ms after its pick (at 0), no tick between: the pick's averages, and the
        // dequeue's update crosses no period (one is 1024 × 1024 ns).
        let a = stop.stored(MS, 4 * MS);
        assert_eq!((a.util, a.unchanged, a.clears_after), (512, false, false));
        // Stopped at 5 ms: as the tick at 4 ms stored them — higher, for it ran — and the
        // update from 4 to 5 ms crosses the period boundary at 4.19 ms.
        let b = stop.stored(5 * MS, 4 * MS);
        let at_tick = Pelt::new_task(1024, 512, 0).at(4 * MS, Presence::Running, 1024);
        assert_eq!(b.util, at_tick.util_avg);
        assert!(b.util > 512 && b.clears_after, "{b:?}");
    }

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
