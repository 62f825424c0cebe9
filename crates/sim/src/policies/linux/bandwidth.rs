//! Real-time throttling: RT tasks get at most `rt_runtime` of every `rt_period` of a CPU
//! (`sched_rt_runtime_us` = 950 ms of `sched_rt_period_us` = 1000 ms) while fair tasks want
//! that CPU.
//!
//! In Linux 6.18 without RT group scheduling the classic RT throttling of rt.c
//! (`sched_rt_runtime_exceeded()`) is compiled out; the reservation is kept by the fair
//! deadline server (`fair_server`, deadline.c: 50 ms every 1000 ms per CPU, deferred until the
//! fair tasks have waited for it), which runs fair tasks above RT ones when RT tasks would
//! starve them, and lets RT tasks have the CPU when no fair task wants it. This model keeps that
//! effect in a simpler form: per CPU, RT run time is counted in windows of `rt_period` from
//! time 0; once a window's RT time reaches `rt_runtime` and a fair task is runnable on the CPU,
//! the fair class goes before the RT class there until the window ends. Two RT/fair hogs on a
//! CPU then share it 950/50 as in the kernel; where in each second the 50 ms fall, and how a
//! fair task's own run time counts against the server, are not modelled.

use crate::policy::{CpuId, Dur, Time};

#[derive(Debug, Clone, Copy, Default)]
struct Cpu {
    /// The window `used` counts (window k = [k·period, (k+1)·period)).
    window: u64,
    /// RT run time in the window (up to `since` while an RT task runs).
    used: Dur,
    /// An RT task runs here since.
    since: Option<Time>,
    /// The RT budget of the window ran out (noted at a stop or a timer).
    throttled: bool,
}

/// RT run time per CPU against the `rt_runtime` / `rt_period` budget.
#[derive(Debug, Clone)]
pub struct RtBandwidth {
    pub runtime: Dur,
    pub period: Dur,
    cpus: Vec<Cpu>,
}

impl RtBandwidth {
    pub fn new(runtime: Dur, period: Dur) -> Self {
        RtBandwidth { runtime, period: period.max(1), cpus: Vec::new() }
    }

    fn cpu(&mut self, c: CpuId) -> &mut Cpu {
        if c >= self.cpus.len() {
            self.cpus.resize(c + 1, Cpu::default());
        }
        &mut self.cpus[c]
    }

    /// Start a new window if `now` is past the current one; RT time before it is dropped.
    fn roll(&mut self, c: CpuId, now: Time) {
        let period = self.period;
        let k = now / period;
        let cpu = self.cpu(c);
        if k > cpu.window {
            cpu.window = k;
            cpu.used = 0;
            cpu.throttled = false;
            if let Some(s) = cpu.since.as_mut() {
                *s = (*s).max(k * period);
            }
        }
    }

    /// RT time used in the window that contains `now`, counting a run still going on.
    fn used_at(&self, c: CpuId, now: Time) -> Dur {
        let Some(cpu) = self.cpus.get(c) else { return 0 };
        let start = (now / self.period) * self.period;
        let (used, since) =
            if now / self.period > cpu.window { (0, cpu.since.map(|s| s.max(start))) } else { (cpu.used, cpu.since) };
        used + since.map_or(0, |s| now.saturating_sub(s))
    }

    /// Has the RT budget of `c`'s current window run out by `now`?
    pub fn exhausted(&self, c: CpuId, now: Time) -> bool {
        self.used_at(c, now) >= self.runtime
    }

    /// RT time left in `c`'s current window at `now`.
    pub fn left(&self, c: CpuId, now: Time) -> Dur {
        self.runtime.saturating_sub(self.used_at(c, now))
    }

    /// An RT task starts running on `c`.
    pub fn rt_start(&mut self, c: CpuId, now: Time) {
        self.roll(c, now);
        self.cpu(c).since = Some(now);
    }

    /// The RT task running on `c` stops.
    pub fn rt_stop(&mut self, c: CpuId, now: Time) {
        self.roll(c, now);
        let runtime = self.runtime;
        let cpu = self.cpu(c);
        if let Some(s) = cpu.since.take() {
            cpu.used += now.saturating_sub(s);
        }
        cpu.throttled |= cpu.used >= runtime;
    }

    /// Note the state at `now` (a timer: a budget ran out, or a window ended).
    pub fn update(&mut self, c: CpuId, now: Time) {
        self.roll(c, now);
        if self.exhausted(c, now) {
            self.cpu(c).throttled = true;
        }
    }

    pub fn throttled(&self, c: CpuId) -> bool {
        self.cpus.get(c).is_some_and(|cpu| cpu.throttled)
    }

    /// When something changes on `c` by itself: the end of the window if throttled; else, if
    /// an RT task runs and `fair_waits`, when its budget runs out (or the window ends).
    pub fn next_change(&self, c: CpuId, fair_waits: bool) -> Option<Time> {
        let cpu = self.cpus.get(c)?;
        let window_end = (cpu.window + 1) * self.period;
        if cpu.throttled {
            return Some(window_end);
        }
        let since = cpu.since.filter(|_| fair_waits)?;
        let out = since.max(cpu.window * self.period) + self.runtime.saturating_sub(cpu.used);
        Some(out.min(window_end))
    }

    pub fn cpus(&self) -> usize {
        self.cpus.len()
    }
}
