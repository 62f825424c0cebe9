//! FreeBSD's ULE scheduler (`freebsd_ule`), after `sys/kern/sched_ule.c` of freebsd/freebsd-src
//! at commit d8d5f03610e905815989a61bef515126c14bd736 (the 2002-2007 Roberson file with
//! SPDX header, `tdq`/`td_sched`, `runq_add_pri`), with the priority map of `sys/sys/priority.h`
//! (FreeBSD ≥ 9: interrupt 0-47, realtime 48-79, kernel 80-119, timeshare 120-223, idle
//! 224-255) and the run-queue primitives of `sys/kern/kern_switch.c` (`runq_choose_from`,
//! `runq_remove_idx`, `runq_add_pri` — the era's version, found by text search in the stored
//! copies, whose commit the search did not name).
//!
//! What is modelled, by the kernel's function names:
//! - **Interactivity** ([`score`]): `ts_slptime` grows by the hz ticks slept (`sched_wakeup`,
//!   only if at least one tick passed), `ts_runtime` by `tickincr` per stathz tick that finds
//!   the thread running (`sched_clock`); both are hz ticks << `SCHED_TICK_SHIFT`.
//!   `sched_interact_score` gives 0-100 (the two formulas, and 50 at once for a thread that
//!   runs at least as much as it sleeps while `sched_interact` ≤ 50); `sched_interact_update`
//!   caps the history at `SCHED_SLP_RUN_MAX` (5 s); `sched_interact_fork` is implemented and
//!   tested, but a new task here has no parent, so it starts with no history (score 0).
//! - **Priority** (`sched_priority`): score + nice below `sched_interact` (30) gives
//!   `PRI_MIN_INTERACT` (120) + score; otherwise `SCHED_PRI_MIN` (172) + the %CPU of the last
//!   10 s (`sched_pctcpu_update`, `SCHED_PRI_TICKS`, at most 31) + nice, in 152..=223.
//!   The model recomputes it when the thread is queued (`sched_add`); the kernel also does at
//!   each stathz tick it runs, which changes only the running thread's priority (see below).
//! - **Queues** ([`tdq`]): per CPU, `tdq_realtime` (priority < 152: interrupt, realtime and
//!   interactive threads, 64 FIFO queues of 4 priorities), `tdq_timeshare` (a calendar: slot
//!   `RQ_NQS·(pri − 152)/72` counted from `tdq_idx`, drained from `tdq_ridx`, the insert index
//!   moving one slot per stathz tick once the drain index has caught up — so a batch thread is
//!   reached within 64 slots however many better ones arrive) and `tdq_idle`. A pre-empted
//!   thread goes back to the head (`SRQ_PREEMPTED`), a woken timeshare thread is queued at
//!   `static_boost` = `PRI_MIN_BATCH` (152) if its priority is worse (`sched_sleep`).
//! - **Slices** (`tdq_slice`): `sched_slice` = realstathz / 10 stathz ticks (12 ≈ 94.5 ms at
//!   127 Hz) divided by the number of other threads on the CPU (when 2..=5), `sched_slice_min`
//!   = `sched_slice` / 6 from 6 on; a new thread's first slice is only `sched_slice_min`
//!   (`sched_fork_thread`); a woken one starts a fresh slice. A slice ends at the stathz tick
//!   that completes it.
//! - **Pre-emption** (`sched_shouldpreempt` with `preempt_thresh` = `PRI_MIN_KERN`, GENERIC's
//!   `options PREEMPTION`): a queued thread displaces a running one if it is better and either
//!   the running one is idle-class, or it is at most 80 (interrupt, realtime), or it is
//!   interactive (≤ 151) and the running one is not. This is the remote-CPU rule of
//!   `tdq_notify`; the host's wake-ups (timers, devices, other CPUs) are taken to use it on the
//!   local CPU too, where the kernel switches at the waker's return to user mode.
//! - **CPUs** (when the host gives more than one to one instance): a queue per CPU;
//!   `sched_pickcpu` places a runnable thread on its last CPU if that is idle, else on the least
//!   loaded allowed CPU whose best priority is worse than its own, else the least loaded one,
//!   else the waker's CPU if that is as good (ties: the last CPU, then the lowest number — the
//!   kernel breaks them at random). An idle CPU steals before idling (`tdq_idled`, `tdq_steal`):
//!   from the most loaded CPU with a load of at least `steal_thresh` = 2, whenever it picks.
//!   So the policy is not work-conserving on several CPUs ([`Policy::work_conserving`]):
//!   `runq_steal_from` skips the first thread it sees, and a CPU whose only stealable thread is
//!   that one stays idle, as in the kernel until its next idle pass.
//!
//! Clocks: hz = 1000 (1 ms ticks) and stathz = 127 by default (the usual `stathz` of x86 event
//! timers; spec `stathz=`). stathz ticks fall at k·10⁹/stathz ns from time 0; CPU time is
//! charged by sampling at them, as the kernel does (a thread that always runs between two ticks
//! is never charged).
//!
//! Simpler than the source: the long-term balancer (`sched_balance`) and cache-affinity expiry
//! (`SCHED_AFFINITY`) are not modelled; `tdq_slice` is taken when the thread is picked, not at
//! each tick; a running thread's priority for pre-emption is the one it was picked with; a thread
//! lent a priority by the host's priority inheritance runs at `PRI_MIN_TIMESHARE` (120) or the
//! top of its realtime/interrupt range, as the host has no FreeBSD priority to lend; a workload
//! priority p maps to 0 + p (class `interrupt`), 48 + p (`realtime`, round-robin `rtprio`) or
//! 224 + p (`idle`); any other class is timeshare.

pub mod score;
pub mod tdq;
#[cfg(test)]
mod tests;

use super::common::{Affinity, PerTask};
use super::spec::{ms, Params, SpecError};
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};
use score::{History, PctCpu, HZ, PRI_MAX_INTERACT, PRI_MIN_BATCH, PRI_MIN_IDLE, PRI_MIN_KERN};
use score::{PRI_MAX_IDLE, PRI_MIN_ITHD, PRI_MIN_REALTIME, PRI_MIN_TIMESHARE, SCHED_TICK_SHIFT};
use tdq::{How, Runq, Tdq};

/// `SCHED_SLICE_MIN_DIVISOR`.
const SLICE_MIN_DIVISOR: u32 = 6;
/// `steal_thresh`: least load of a CPU another may steal from.
const STEAL_THRESH: usize = 2;
const NS_PER_HZ_TICK: u64 = 1_000_000_000 / HZ as u64;

/// Priority class (`td_pri_class`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Class {
    Ithd,
    Realtime,
    #[default]
    Timeshare,
    Idle,
}

/// The FreeBSD ULE policy. See the module documentation.
#[derive(Debug, Clone)]
pub struct FreeBsdUle {
    stathz: u64,
    /// `sched_slice` and `sched_slice_min`, stathz ticks.
    slice: u32,
    slice_min: u32,
    /// `sched_interact`.
    interact: i32,
    /// `tickincr`: hz ticks << 10 per stathz tick.
    tickincr: u32,
    tdqs: Vec<Tdq>,
    class: PerTask<Class>,
    nice: PerTask<i32>,
    base: PerTask<i32>,
    hist: PerTask<History>,
    pct: PerTask<PctCpu>,
    /// `ts_slice`: stathz ticks of the current slice used.
    ts_slice: PerTask<u32>,
    /// `td_slptick`: the hz tick it went to sleep at.
    slptick: PerTask<Option<i64>>,
    /// `ts_cpu`: the CPU whose queue it is on, or last ran from.
    cpu: PerTask<usize>,
    /// Where it is queued.
    at: PerTask<Option<(Runq, usize)>>,
    /// `td_priority`: what it is queued or running at.
    pri: PerTask<i32>,
    affinity: Affinity,
    /// Tasks this instance has set up. A host with a queue per CPU may hand it a task first
    /// seen by another instance: it starts afresh here (no history, a fork's first slice).
    known: PerTask<bool>,
}

impl FreeBsdUle {
    /// `stathz` in Hz; `slice` as `kern.sched.quantum` (rounded to stathz ticks; None:
    /// realstathz / 10 ticks); `interact` = `kern.sched.interact`.
    pub fn new(stathz: u64, slice: Option<Dur>, interact: i32) -> Self {
        let stathz = stathz.max(1);
        let slice = match slice {
            // sysctl_kern_quantum: microseconds to stathz ticks, rounded.
            Some(d) => {
                let period = 1_000_000 / stathz;
                ((d / 1000 + period / 2) / period.max(1)).max(1) as u32
            }
            None => (stathz / 10).max(1) as u32,
        };
        FreeBsdUle {
            stathz,
            slice,
            slice_min: slice / SLICE_MIN_DIVISOR,
            interact: interact.clamp(1, 100),
            tickincr: (((HZ as u64) << SCHED_TICK_SHIFT) / stathz).max(1) as u32,
            tdqs: vec![Tdq::default()],
            class: PerTask::default(),
            nice: PerTask::default(),
            base: PerTask::default(),
            hist: PerTask::default(),
            pct: PerTask::default(),
            ts_slice: PerTask::default(),
            slptick: PerTask::default(),
            cpu: PerTask::default(),
            at: PerTask::default(),
            pri: PerTask::default(),
            affinity: Affinity::default(),
            known: PerTask::default(),
        }
    }

    /// `freebsd_ule:stathz=127,slice=94.5ms,interact=30` (every key optional).
    pub fn from_params(p: &mut Params) -> Result<Self, SpecError> {
        let stathz = p.uint("stathz", 127, 10, 1000)?;
        let slice = p.time_opt("slice")?;
        let interact = p.uint("interact", 30, 1, 100)? as i32;
        Ok(FreeBsdUle::new(stathz, slice, interact))
    }

    /// stathz ticks at or before `now` (in 64 bits while the product fits: 128-bit division is
    /// a library call on the hot path).
    fn stat_ticks(&self, now: Time) -> u64 {
        match now.checked_mul(self.stathz) {
            Some(x) => x / 1_000_000_000,
            None => (now as u128 * self.stathz as u128 / 1_000_000_000) as u64,
        }
    }

    /// When stathz tick `k` falls.
    fn stat_tick_time(&self, k: u64) -> Time {
        match k.checked_mul(1_000_000_000) {
            Some(x) => x.div_ceil(self.stathz),
            None => (k as u128 * 1_000_000_000).div_ceil(self.stathz as u128) as Time,
        }
    }

    fn hz_ticks(now: Time) -> i64 {
        (now / NS_PER_HZ_TICK) as i64
    }

    /// `tdq_slice` for a CPU with `others` threads besides the one running.
    fn tdq_slice(&self, others: usize) -> u32 {
        let s = if others >= SLICE_MIN_DIVISOR as usize {
            self.slice_min
        } else if others <= 1 {
            self.slice
        } else {
            self.slice / others as u32
        };
        s.max(1)
    }

    /// `td_priority` of `t` now, from its class (and, timeshare, `sched_priority`).
    fn priority(&self, t: TaskId, view_prio: i32) -> i32 {
        let own = match self.class.get(t) {
            Class::Ithd => (PRI_MIN_ITHD + view_prio).clamp(PRI_MIN_ITHD, PRI_MIN_REALTIME - 1),
            Class::Realtime => (PRI_MIN_REALTIME + view_prio).clamp(PRI_MIN_REALTIME, PRI_MIN_KERN - 1),
            Class::Idle => (PRI_MIN_IDLE + view_prio).clamp(PRI_MIN_IDLE, PRI_MAX_IDLE),
            Class::Timeshare => {
                score::user_priority(&self.hist.get(t), &self.pct.get(t), self.nice.get(t), self.interact)
            }
        };
        if view_prio < self.base.get(t) {
            // Lent a better priority (priority inheritance).
            let top = match self.class.get(t) {
                Class::Ithd => PRI_MIN_ITHD,
                Class::Realtime => PRI_MIN_REALTIME,
                _ => PRI_MIN_TIMESHARE,
            };
            return own.min(top);
        }
        own
    }

    /// The best priority on CPU `c`, running or queued (`tdq_lowpri`; 255 when idle).
    fn lowpri(&self, c: usize) -> i32 {
        let q = &self.tdqs[c];
        let run = q.running.iter().map(|r| r.1).min().unwrap_or(PRI_MAX_IDLE);
        q.choose().map_or(run, |(t, _, _)| run.min(self.pri.get(t)))
    }

    /// `sched_pickcpu`, without cache topology: see the module documentation.
    fn pickcpu(&self, t: TaskId, pri: i32, waker: Option<CpuId>) -> usize {
        let n = self.tdqs.len();
        if n == 1 {
            return 0;
        }
        let last = self.cpu.get(t).min(n - 1);
        let ok = |c: usize| self.affinity.allowed(t, c);
        if ok(last) && self.lowpri(last) >= PRI_MIN_IDLE {
            return last;
        }
        let lowest = |need: bool| {
            (0..n)
                .filter(|&c| ok(c) && (!need || self.lowpri(c) > pri))
                .min_by_key(|&c| (self.tdqs[c].load(), c != last, c))
        };
        let mut c = lowest(true).or_else(|| lowest(false)).unwrap_or(last);
        if let Some(w) = waker.filter(|&w| w < n && ok(w)) {
            if self.lowpri(w) > pri && self.lowpri(c) < PRI_MIN_IDLE && self.tdqs[w].load() <= self.tdqs[c].load() + 1 {
                c = w;
            }
        }
        c
    }

    /// `tdq_idled`: idle CPU `c` takes a thread from the most loaded CPU it can.
    fn idle_steal(&mut self, c: usize, now: Time) {
        let k = self.stat_ticks(now);
        let mut from: Vec<usize> = (0..self.tdqs.len())
            .filter(|&s| s != c && self.tdqs[s].load() >= STEAL_THRESH && self.tdqs[s].queued() > 0)
            .collect();
        from.sort_by_key(|&s| (std::cmp::Reverse(self.tdqs[s].load()), s));
        for s in from {
            self.tdqs[s].clock_to(k);
            let Some((t, rq, slot)) = self.tdqs[s].steal(|t| self.affinity.allowed(t, c)) else { continue };
            // tdq_move: sched_rem there, tdq_add(SRQ_YIELDING) here.
            self.tdqs[s].remove(t, (rq, slot));
            self.tdqs[c].clock_to(k);
            let at = self.tdqs[c].add(t, self.pri.get(t), How::Normal);
            self.at.set(t, Some(at));
            self.cpu.set(t, c);
            return;
        }
    }

    /// `sched_shouldpreempt(pri, cpri, remote = 1)` with `preempt_thresh` = `PRI_MIN_KERN`.
    fn should_preempt(pri: i32, cpri: i32) -> bool {
        if pri >= cpri {
            return false;
        }
        cpri >= PRI_MIN_IDLE || pri <= PRI_MIN_KERN || (pri <= PRI_MAX_INTERACT && cpri > PRI_MAX_INTERACT)
    }

    /// The interactivity history of `t` (for tests and reports).
    pub fn history(&self, t: TaskId) -> History {
        self.hist.get(t)
    }

    /// The priority `t` was last queued or picked at.
    pub fn td_priority(&self, t: TaskId) -> i32 {
        self.pri.get(t)
    }
}

impl Policy for FreeBsdUle {
    fn name(&self) -> String {
        let slice = self.slice as u64 * 1_000_000_000 / self.stathz;
        format!("freebsd_ule:stathz={},slice={},interact={}", self.stathz, ms(slice), self.interact)
    }

    fn set_cpus(&mut self, cpus: usize) {
        self.tdqs = vec![Tdq::default(); cpus.max(1)];
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, now: Time) {
        let t = task.id;
        let hz_now = Self::hz_ticks(now);
        self.affinity.note(task);
        let first = why == EnqueueReason::New || !self.known.get(t);
        if first {
            self.known.set(t, true);
        }
        match why {
            _ if first => {
                let class = match task.class {
                    Some("interrupt") | Some("ithd") => Class::Ithd,
                    Some("realtime") | Some("rt") => Class::Realtime,
                    Some("idle") => Class::Idle,
                    _ => Class::Timeshare,
                };
                self.class.set(t, class);
                self.nice.set(t, task.nice.clamp(-20, 20));
                self.base.set(t, task.priority);
                self.hist.set(t, History::default().fork());
                self.pct.set(t, PctCpu::at(hz_now));
                self.slptick.set(t, None);
                self.cpu.set(t, task.start_cpu.unwrap_or(0));
            }
            EnqueueReason::Woken => {
                // sched_wakeup: count the sleep if a tick passed; a fresh slice.
                if let Some(s) = self.slptick.get(t) {
                    if s != hz_now {
                        let h = self.hist.get_mut(t);
                        let slept = ((hz_now - s) as u64) << SCHED_TICK_SHIFT;
                        h.slptime = h.slptime.saturating_add(slept.min(u32::MAX as u64) as u32);
                        h.update();
                        self.pct.get_mut(t).update(hz_now, false);
                    }
                }
                self.slptick.set(t, None);
                self.ts_slice.set(t, 0);
            }
            EnqueueReason::SliceExpired => self.ts_slice.set(t, 0),
            _ => {}
        }
        let mut pri = self.priority(t, task.priority);
        if why == EnqueueReason::Woken && self.class.get(t) == Class::Timeshare {
            pri = pri.min(PRI_MIN_BATCH); // static_boost
        }
        let c = match why {
            EnqueueReason::SliceExpired
            | EnqueueReason::Preempted
            | EnqueueReason::Yielded
            | EnqueueReason::Restored
                if self.affinity.allowed(t, self.cpu.get(t).min(self.tdqs.len() - 1)) =>
            {
                self.cpu.get(t).min(self.tdqs.len() - 1)
            }
            _ => self.pickcpu(t, pri, task.waker_cpu),
        };
        if first {
            // sched_fork_thread: the first slice is only sched_slice_min.
            let s = self.tdq_slice(self.tdqs[c].load());
            self.ts_slice.set(t, s - self.slice_min.min(s));
        }
        let how = match why {
            EnqueueReason::Preempted => How::Preempted,
            EnqueueReason::Restored => How::Borrowing,
            _ => How::Normal,
        };
        let k = self.stat_ticks(now);
        self.tdqs[c].clock_to(k);
        let at = self.tdqs[c].add(t, pri, how);
        self.at.set(t, Some(at));
        self.pri.set(t, pri);
        self.cpu.set(t, c);
    }

    fn dequeue(&mut self, task: TaskId) {
        if let Some(at) = self.at.get(task) {
            self.tdqs[self.cpu.get(task)].remove(task, at);
            self.at.set(task, None);
        }
    }

    fn pick_next(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
        let c = if self.tdqs.len() == 1 { 0 } else { cpu.min(self.tdqs.len() - 1) };
        let k = self.stat_ticks(now);
        self.tdqs[c].clock_to(k);
        if self.tdqs[c].queued() == 0 && self.tdqs.len() > 1 {
            self.idle_steal(c, now);
        }
        let (t, rq, slot) = self.tdqs[c].choose()?;
        self.tdqs[c].remove(t, (rq, slot));
        self.at.set(t, None);
        self.tdqs[c].running.push((t, self.pri.get(t)));
        self.cpu.set(t, c);
        self.pct.get_mut(t).update(Self::hz_ticks(now), false);
        let others = self.tdqs[c].load() - 1;
        let left = self.tdq_slice(others).saturating_sub(self.ts_slice.get(t)).max(1);
        let end = self.stat_tick_time(k + left as u64);
        Some(Pick { task: t, slice: Some(end - now) })
    }

    fn charge(&mut self, task: TaskId, ran: Dur, now: Time) {
        let c = self.cpu.get(task);
        let others = self.tdqs[c].load().saturating_sub(1);
        let full = self.tdq_slice(others);
        self.tdqs[c].running.retain(|r| r.0 != task);
        // sched_clock at every stathz tick that found it running.
        let (k0, k1) = (self.stat_ticks(now.saturating_sub(ran)), self.stat_ticks(now));
        for k in k0 + 1..=k1 {
            let at = Self::hz_ticks(self.stat_tick_time(k));
            self.pct.get_mut(task).update(at, true);
            if self.class.get(task) == Class::Timeshare {
                let h = self.hist.get_mut(task);
                h.runtime = h.runtime.saturating_add(self.tickincr);
                h.update();
            }
            let s = self.ts_slice.get_mut(task);
            *s += 1;
            if *s >= full {
                *s = 0;
            }
        }
        // sched_switch.
        self.pct.get_mut(task).update(Self::hz_ticks(now), true);
    }

    fn blocked(&mut self, task: TaskId, now: Time) {
        self.slptick.set(task, Some(Self::hz_ticks(now))); // sched_sleep
    }

    fn preempts(&self, woken: TaskId, running: TaskId, _now: Time) -> bool {
        Self::should_preempt(self.pri.get(woken), self.pri.get(running))
    }

    fn prio_changed(&mut self, task: &TaskView, _now: Time) {
        let pri = self.priority(task.id, task.priority);
        self.pri.set(task.id, pri);
        for q in &mut self.tdqs {
            for r in q.running.iter_mut().filter(|r| r.0 == task.id) {
                r.1 = pri;
            }
        }
    }

    fn task_exit(&mut self, task: TaskId) {
        self.dequeue(task);
        self.slptick.set(task, None);
    }

    fn queued(&self) -> usize {
        self.tdqs.iter().map(Tdq::queued).sum()
    }

    fn placed_on(&self, task: TaskId) -> Option<CpuId> {
        (self.tdqs.len() > 1).then(|| self.cpu.get(task))
    }

    /// With a queue per CPU a CPU can idle while another's queue holds a thread it may run: the
    /// steal needs a load of 2 there, and `runq_steal_from` does not return the first thread it
    /// sees in the calendar, so with `tdq_ridx` = 0 a lone allowed thread at the head stays.
    fn work_conserving(&self) -> bool {
        self.tdqs.len() == 1
    }
}
