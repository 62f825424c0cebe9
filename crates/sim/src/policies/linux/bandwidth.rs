//! Classic RT throttling, as a kernel built with `CONFIG_RT_GROUP_SCHED=y` does it (this
//! machine's 6.18 is; kernel/sched/rt.c): every CPU's real-time run queue may run
//! `sched_rt_runtime_us` (950 ms) of every `sched_rt_period_us` (1000 ms).
//!
//! - `update_curr_rt()` adds what real-time tasks ran to the CPU's `rt_time` (so does
//!   `update_curr_dl_se()` for deadline tasks under RT group scheduling); when it finds
//!   `rt_time > rt_runtime` (`sched_rt_runtime_exceeded()`) the queue is throttled and its tasks
//!   leave the CPU, which runs fair tasks or idles — whether or not a fair task wants it. Without
//!   HRTICK the check runs at the tick (and when the task stops), so a throttle comes at the
//!   first tick past the budget and the overrun stays in `rt_time`.
//! - One period timer serves every CPU (`def_rt_bandwidth.rt_period_timer`): at each period it
//!   takes `min(rt_time, rt_runtime)` off each CPU's `rt_time` (`do_sched_rt_period_timer()`)
//!   and unthrottles a queue that is back under budget. The timer keeps the phase it had when
//!   it was first started (`hrtimer_forward_now()` steps whole periods), so the period
//!   boundaries of a host fall at `phase + k·period` for as long as it runs; a replay takes the
//!   phase from its trace, where a throttled CPU's real-time task resumes at a boundary.
//!
//! `RT_RUNTIME_SHARE` (borrowing budget from other CPUs) is off by default and not modelled.

use crate::policy::{CpuId, Dur, Time};

#[derive(Debug, Clone, Copy, Default)]
struct Cpu {
    /// RT (and deadline) run time not yet paid back by a period boundary.
    rt_time: Dur,
    /// An RT or deadline task runs here since (accounted up to then).
    since: Option<Time>,
    throttled: bool,
}

/// Every CPU's RT run time against the `rt_runtime` / `rt_period` budget.
#[derive(Debug, Clone)]
pub struct RtBandwidth {
    pub runtime: Dur,
    pub period: Dur,
    /// Where the period boundaries fall: at `phase + k·period` (phase < period).
    pub phase: Dur,
    cpus: Vec<Cpu>,
    /// The last boundary applied.
    last_boundary: Option<Time>,
}

impl RtBandwidth {
    pub fn new(runtime: Dur, period: Dur, phase: Dur) -> Self {
        let period = period.max(1);
        RtBandwidth { runtime, period, phase: phase % period, cpus: Vec::new(), last_boundary: None }
    }

    fn cpu(&mut self, c: CpuId) -> &mut Cpu {
        if c >= self.cpus.len() {
            self.cpus.resize(c + 1, Cpu::default());
        }
        &mut self.cpus[c]
    }

    /// The first period boundary after `t`.
    pub fn boundary_after(&self, t: Time) -> Time {
        if t < self.phase {
            return self.phase;
        }
        self.phase + ((t - self.phase) / self.period + 1) * self.period
    }

    /// Apply every period boundary up to `now` (`do_sched_rt_period_timer()`).
    #[inline]
    fn catch_up(&mut self, now: Time) {
        if self.next_boundary() <= now {
            self.catch_up_from(now);
        }
    }

    /// The next boundary to apply.
    #[inline]
    fn next_boundary(&self) -> Time {
        self.last_boundary.map_or(self.phase, |b| b + self.period)
    }

    #[cold]
    fn catch_up_from(&mut self, now: Time) {
        loop {
            let next = self.next_boundary();
            if next > now {
                return;
            }
            let runtime = self.runtime;
            for cpu in &mut self.cpus {
                if let Some(s) = cpu.since.as_mut() {
                    cpu.rt_time += next.saturating_sub(*s);
                    *s = (*s).max(next);
                }
                cpu.rt_time -= cpu.rt_time.min(runtime);
                if cpu.throttled && cpu.rt_time < runtime {
                    cpu.throttled = false;
                }
            }
            self.last_boundary = Some(next);
        }
    }

    /// An RT or deadline task starts running on `c`.
    pub fn start(&mut self, c: CpuId, now: Time) {
        self.catch_up(now);
        self.cpu(c).since = Some(now);
    }

    /// The RT or deadline task running on `c` stops: its run time is accounted, and an RT
    /// queue past its budget is throttled (`sched_rt_runtime_exceeded()`).
    pub fn stop(&mut self, c: CpuId, now: Time, rt: bool) {
        self.catch_up(now);
        let runtime = self.runtime;
        let cpu = self.cpu(c);
        if let Some(s) = cpu.since.take() {
            cpu.rt_time += now.saturating_sub(s);
        }
        if rt && cpu.rt_time > runtime {
            cpu.throttled = true;
        }
    }

    /// Bring the accounts up to `now` (a timer).
    #[inline]
    pub fn update(&mut self, now: Time) {
        self.catch_up(now);
    }

    #[inline]
    pub fn throttled(&self, c: CpuId) -> bool {
        self.cpus.get(c).is_some_and(|cpu| cpu.throttled)
    }

    /// How long an RT task starting on `c` at `now` may run before its queue's `rt_time`
    /// exceeds the budget, period boundaries on the way counted (at least 1 ns: the check is
    /// `rt_time > rt_runtime`). None: never within `horizon` of `now`.
    pub fn budget(&mut self, c: CpuId, now: Time, horizon: Dur) -> Option<Dur> {
        self.catch_up(now);
        let runtime = self.runtime;
        let mut rt_time = self.cpu(c).rt_time;
        let mut t = now;
        let mut boundary = self.boundary_after(now);
        while t < now.saturating_add(horizon) {
            let cross = t + runtime.saturating_sub(rt_time) + 1;
            if cross <= boundary {
                return Some(cross - now);
            }
            rt_time += boundary - t;
            rt_time -= rt_time.min(runtime);
            t = boundary;
            boundary += self.period;
        }
        None
    }

    /// The next period boundary that changes something: one is due while any CPU is
    /// throttled, runs an RT task or has RT time to pay back.
    #[inline]
    pub fn next_change(&self, now: Time) -> Option<Time> {
        let busy = self.cpus.iter().any(|c| c.throttled || c.since.is_some() || c.rt_time > 0);
        busy.then(|| self.boundary_after(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: Dur = 1_000_000;

    #[test]
    fn an_rt_hog_is_throttled_past_its_budget_and_freed_at_the_boundary() {
        // Phase 300 ms: boundaries at 300, 1300, 2300 ms.
        let mut bw = RtBandwidth::new(950 * MS, 1000 * MS, 300 * MS);
        bw.start(0, 0);
        // From 0 the budget runs out at 950 ms (no boundary payback before: 300 ms of RT time
        // at 300 ms are paid back then, so 950 ms more from 300 ms: 1250 ms).
        assert_eq!(bw.budget(0, 0, 10_000 * MS), Some(1250 * MS + 1));
        // The tick notices it at 1252 ms: 952 ms since the boundary.
        bw.stop(0, 1252 * MS, true);
        assert!(bw.throttled(0));
        bw.update(1300 * MS);
        assert!(!bw.throttled(0), "the boundary pays 950 ms back");
        // The 2 ms overrun stays: the next budget is 948 ms.
        bw.start(0, 1300 * MS);
        assert_eq!(bw.budget(0, 1300 * MS, 10_000 * MS), Some(948 * MS + 1));
    }

    #[test]
    fn deadline_time_counts_but_throttles_only_rt() {
        let mut bw = RtBandwidth::new(950 * MS, 1000 * MS, 0);
        bw.start(1, 10 * MS);
        bw.stop(1, 990 * MS, false);
        assert!(!bw.throttled(1), "a deadline task is not throttled by the RT budget");
        assert_eq!(bw.budget(1, 990 * MS, 10_000 * MS), Some(1));
        assert_eq!(bw.next_change(990 * MS), Some(1000 * MS));
        assert_eq!(RtBandwidth::new(950 * MS, 1000 * MS, 0).next_change(5), None);
    }
}
