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
mod thread;

use super::common::{Affinity, LiveTable};
use super::spec::{ms, Params, SpecError};
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};
use score::{History, PctCpu, HZ, PRI_MAX_INTERACT, PRI_MIN_BATCH, PRI_MIN_IDLE, PRI_MIN_KERN};
use score::{PRI_MAX_IDLE, PRI_MIN_ITHD, PRI_MIN_REALTIME, PRI_MIN_TIMESHARE, SCHED_TICK_SHIFT};
use tdq::{How, Tdq};
use thread::{Class, Thread};

/// `SCHED_SLICE_MIN_DIVISOR`.
const SLICE_MIN_DIVISOR: u32 = 6;
/// `steal_thresh`: least load of a CPU another may steal from.
const STEAL_THRESH: usize = 2;
const NS_PER_HZ_TICK: u64 = 1_000_000_000 / HZ as u64;

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
    /// Every thread from its first enqueue here to its exit.
    td: LiveTable<Thread>,
    affinity: Affinity,
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
            td: LiveTable::default(),
            affinity: Affinity::default(),
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

    /// The state of `t` (the default for a thread not seen).
    #[inline]
    fn th(&self, t: TaskId) -> Thread {
        self.td.get(t).copied().unwrap_or_default()
    }

    /// `td_priority` of `t`.
    #[inline]
    fn pri(&self, t: TaskId) -> i32 {
        self.td.get(t).map_or(0, |th| th.pri)
    }

    /// `ts_cpu` of `t`.
    #[inline]
    fn cpu_of(&self, t: TaskId) -> usize {
        self.td.get(t).map_or(0, |th| th.cpu)
    }

    /// `td_priority` of thread `th` now, from its class (and, timeshare, `sched_priority`).
    fn priority(&self, th: &Thread, view_prio: i32) -> i32 {
        let own = match th.class {
            Class::Ithd => (PRI_MIN_ITHD + view_prio).clamp(PRI_MIN_ITHD, PRI_MIN_REALTIME - 1),
            Class::Realtime => (PRI_MIN_REALTIME + view_prio).clamp(PRI_MIN_REALTIME, PRI_MIN_KERN - 1),
            Class::Idle => (PRI_MIN_IDLE + view_prio).clamp(PRI_MIN_IDLE, PRI_MAX_IDLE),
            Class::Timeshare => score::user_priority(&th.hist, &th.pct, th.nice, self.interact),
        };
        if view_prio < th.base {
            // Lent a better priority (priority inheritance).
            let top = match th.class {
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
        q.choose().map_or(run, |(t, _, _)| run.min(self.pri(t)))
    }

    /// `sched_pickcpu`, without cache topology: see the module documentation.
    fn pickcpu(&self, t: TaskId, pri: i32, waker: Option<CpuId>) -> usize {
        let n = self.tdqs.len();
        if n == 1 {
            return 0;
        }
        let last = self.cpu_of(t).min(n - 1);
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
            let pri = self.pri(t);
            let at = self.tdqs[c].add(t, pri, How::Normal);
            let th = self.td.entry(t);
            th.at = Some(at);
            th.cpu = c;
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
        self.th(t).hist
    }

    /// The priority `t` was last queued or picked at.
    pub fn td_priority(&self, t: TaskId) -> i32 {
        self.pri(t)
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
        let th = self.td.entry(t);
        let first = why == EnqueueReason::New || !th.known;
        match why {
            _ if first => {
                let class = match task.class {
                    Some("interrupt") | Some("ithd") => Class::Ithd,
                    Some("realtime") | Some("rt") => Class::Realtime,
                    Some("idle") => Class::Idle,
                    _ => Class::Timeshare,
                };
                *th = Thread {
                    class,
                    known: true,
                    nice: task.nice.clamp(-20, 20),
                    base: task.priority,
                    hist: History::default().fork(),
                    pct: PctCpu::at(hz_now),
                    slptick: None,
                    cpu: task.start_cpu.unwrap_or(0),
                    ..*th
                };
            }
            EnqueueReason::Woken => {
                // sched_wakeup: count the sleep if a tick passed; a fresh slice.
                if let Some(s) = th.slptick {
                    if s != hz_now {
                        let slept = ((hz_now - s) as u64) << SCHED_TICK_SHIFT;
                        th.hist.slptime = th.hist.slptime.saturating_add(slept.min(u32::MAX as u64) as u32);
                        th.hist.update();
                        th.pct.update(hz_now, false);
                    }
                }
                th.slptick = None;
                th.ts_slice = 0;
            }
            EnqueueReason::SliceExpired => th.ts_slice = 0,
            _ => {}
        }
        let th = *th;
        let mut pri = self.priority(&th, task.priority);
        if why == EnqueueReason::Woken && th.class == Class::Timeshare {
            pri = pri.min(PRI_MIN_BATCH); // static_boost
        }
        let last = th.cpu.min(self.tdqs.len() - 1);
        let c = match why {
            EnqueueReason::SliceExpired
            | EnqueueReason::Preempted
            | EnqueueReason::Yielded
            | EnqueueReason::Restored
                if self.affinity.allowed(t, last) =>
            {
                last
            }
            _ => self.pickcpu(t, pri, task.waker_cpu),
        };
        // sched_fork_thread: the first slice is only sched_slice_min.
        let fork_slice = first.then(|| {
            let s = self.tdq_slice(self.tdqs[c].load());
            s - self.slice_min.min(s)
        });
        let how = match why {
            EnqueueReason::Preempted => How::Preempted,
            EnqueueReason::Restored => How::Borrowing,
            _ => How::Normal,
        };
        let k = self.stat_ticks(now);
        self.tdqs[c].clock_to(k);
        let at = self.tdqs[c].add(t, pri, how);
        let th = self.td.entry(t);
        if let Some(s) = fork_slice {
            th.ts_slice = s;
        }
        th.at = Some(at);
        th.pri = pri;
        th.cpu = c;
    }

    fn dequeue(&mut self, task: TaskId) {
        if let Some(th) = self.td.get_mut(task) {
            if let Some(at) = th.at.take() {
                self.tdqs[th.cpu].remove(task, at);
            }
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
        let th = self.td.entry(t);
        th.at = None;
        th.cpu = c;
        th.pct.update(Self::hz_ticks(now), false);
        let (pri, used) = (th.pri, th.ts_slice);
        self.tdqs[c].running.push((t, pri));
        let others = self.tdqs[c].load() - 1;
        let left = self.tdq_slice(others).saturating_sub(used).max(1);
        let end = self.stat_tick_time(k + left as u64);
        Some(Pick { task: t, slice: Some(end - now) })
    }

    fn charge(&mut self, task: TaskId, ran: Dur, now: Time) {
        let c = self.cpu_of(task);
        let others = self.tdqs[c].load().saturating_sub(1);
        let full = self.tdq_slice(others);
        self.tdqs[c].running.retain(|r| r.0 != task);
        // sched_clock at every stathz tick that found it running.
        let (k0, k1) = (self.stat_ticks(now.saturating_sub(ran)), self.stat_ticks(now));
        let tickincr = self.tickincr;
        for k in k0 + 1..=k1 {
            let at = Self::hz_ticks(self.stat_tick_time(k));
            let th = self.td.entry(task);
            th.pct.update(at, true);
            if th.class == Class::Timeshare {
                th.hist.runtime = th.hist.runtime.saturating_add(tickincr);
                th.hist.update();
            }
            th.ts_slice += 1;
            if th.ts_slice >= full {
                th.ts_slice = 0;
            }
        }
        // sched_switch.
        self.td.entry(task).pct.update(Self::hz_ticks(now), true);
    }

    fn blocked(&mut self, task: TaskId, now: Time) {
        self.td.entry(task).slptick = Some(Self::hz_ticks(now)); // sched_sleep
    }

    fn preempts(&self, woken: TaskId, running: TaskId, _now: Time) -> bool {
        Self::should_preempt(self.pri(woken), self.pri(running))
    }

    fn prio_changed(&mut self, task: &TaskView, _now: Time) {
        let pri = self.priority(&self.th(task.id), task.priority);
        self.td.entry(task.id).pri = pri;
        for q in &mut self.tdqs {
            for r in q.running.iter_mut().filter(|r| r.0 == task.id) {
                r.1 = pri;
            }
        }
    }

    /// The thread leaves: off its queue, and its state is forgotten.
    fn task_exit(&mut self, task: TaskId) {
        self.dequeue(task);
        self.td.remove(task);
    }

    fn queued(&self) -> usize {
        self.tdqs.iter().map(Tdq::queued).sum()
    }

    fn placed_on(&self, task: TaskId) -> Option<CpuId> {
        (self.tdqs.len() > 1).then(|| self.cpu_of(task))
    }

    /// With a queue per CPU a CPU can idle while another's queue holds a thread it may run: the
    /// steal needs a load of 2 there, and `runq_steal_from` does not return the first thread it
    /// sees in the calendar, so with `tdq_ridx` = 0 a lone allowed thread at the head stays.
    fn work_conserving(&self) -> bool {
        self.tdqs.len() == 1
    }
}
