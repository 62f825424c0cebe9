//! Where a task goes when it wakes or is new: `select_task_rq()` of each class (Linux 6.18,
//! fair.c, rt.c, deadline.c), for CPUs that share one cache.
//!
//! - fair, wake-up (`select_task_rq_fair()` with WF_TTWU): the waker's CPU (`this`) or the
//!   task's previous one (`prev`) by `wake_affine()` — `this` if it is idle and `prev` is not,
//!   or on a sync wake-up (a pipe or socket write: every wake-up from task context here) when
//!   the waker is alone on it; `prev` if idle; else by load (`wake_affine_weight()`, the
//!   previous CPU favoured by half the domain's imbalance margin) — then `select_idle_sibling()`:
//!   that CPU if idle, `prev` if idle, the task's recently used CPU if idle, then a scan of up to
//!   `nr_idle_scan` other CPUs for an idle one (SIS_UTIL). `wake_wide()` is left out (it needs
//!   one waker to wake many tasks).
//! - fair, new task (`sched_balance_find_dst_cpu()`): the idlest CPU — an idle one, else the
//!   one with the fewest tasks, then the lightest load.
//! - real-time (`select_task_rq_rt()`): `prev`, unless an RT task of equal or higher priority
//!   runs there; then the CPU with the lowest RT priority below the task's (`find_lowest_rq()`:
//!   `prev` or the waker's CPU first).
//! - deadline (`select_task_rq_dl()`): `prev`, unless a deadline task it cannot pre-empt runs
//!   there; then a CPU without deadline tasks, else the one whose earliest deadline is latest
//!   and later than the task's (`find_later_rq()`).

use super::super::{Class, Linux};
use crate::policy::{CpuId, TaskId, Time};

/// `sd->imbalance_pct` of a domain of CPUs that share a cache.
pub const IMBALANCE_PCT: u64 = 117;

impl Linux {
    pub(crate) fn allowed(&self, t: TaskId, c: CpuId) -> bool {
        self.smp.as_ref().expect("smp").tasks.get_ref(t).is_none_or(|s| s.view.allowed(c))
    }

    fn allowed_cpus(&self, t: TaskId) -> impl Iterator<Item = CpuId> + '_ {
        (0..self.rqs.len()).filter(move |&c| self.allowed(t, c))
    }

    /// `available_idle_cpu()`: nothing runs and nothing waits.
    pub(crate) fn idle(&self, c: CpuId) -> bool {
        self.rqs[c].is_idle()
    }

    /// A new task without a parent (a workload's arrival)'s CPU: an idle allowed one, else the
    /// fewest tasks, then the least load.
    pub(crate) fn select_new(&mut self, t: TaskId, now: Time) -> usize {
        let smp = self.smp.as_ref().expect("smp");
        let key = |c: CpuId| (!self.idle(c), self.rqs[c].nr_running(), smp.cpu_signals(c, now).0, c);
        self.allowed_cpus(t).min_by_key(|&c| key(c)).unwrap_or(0)
    }

    /// A waking task's CPU, by its class.
    pub(crate) fn select_woken(&mut self, t: TaskId, prev: CpuId, waker: Option<CpuId>, now: Time) -> usize {
        // Every wake-up passes here: no list of allowed CPUs is built.
        let prev = if self.allowed(t, prev) {
            prev
        } else {
            match self.allowed_cpus(t).next() {
                Some(first) => first,
                None => return prev,
            }
        };
        match self.class.get(t) {
            Class::Fair => {
                if self.rqs[prev].fair.is_delayed(t) || self.rqs[prev].fair.is_stopped(t) {
                    // A delayed entity is still queued there: it is woken in place. A stopped
                    // one never slept (its next job was already released): no CPU is chosen.
                    return prev;
                }
                self.select_fair(t, prev, waker, now)
            }
            Class::RealTime => self.select_rt(t, prev, waker),
            Class::Deadline => self.select_dl(t, prev, waker),
        }
    }

    fn select_fair(&mut self, t: TaskId, prev: CpuId, waker: Option<CpuId>, now: Time) -> usize {
        let this = waker.unwrap_or(prev);
        let sync = waker.is_some();
        let target =
            if this != prev && self.allowed(t, this) { self.wake_affine(t, this, prev, sync, now) } else { prev };
        self.select_idle_sibling(t, prev, target)
    }

    /// `wake_affine()`: `this` or `prev`.
    fn wake_affine(&self, t: TaskId, this: CpuId, prev: CpuId, sync: bool, now: Time) -> CpuId {
        // wake_affine_idle()
        if self.idle(this) {
            return if self.idle(prev) { prev } else { this };
        }
        let delayed = |c: CpuId| self.rqs[c].fair.nr_queued() as usize - self.rqs[c].fair_runnable();
        if sync && self.rqs[this].nr_running().saturating_sub(delayed(this)) == 1 {
            return this;
        }
        if self.idle(prev) {
            return prev;
        }
        // wake_affine_weight()
        let smp = self.smp.as_ref().expect("smp");
        let mut this_eff = smp.cpu_signals(this, now).0 as i128;
        if sync {
            let current = self.rqs[this].curr.map_or(0, |(c, _)| smp.pelt_of(c, now).load_avg) as i128;
            if current > this_eff {
                return this;
            }
            this_eff -= current;
        }
        let task_load = smp.pelt_of(t, now).load_avg as i128;
        this_eff = (this_eff + task_load) * 100 * smp.capacity(prev, now) as i128;
        let mut prev_eff =
            (smp.cpu_signals(prev, now).0 as i128 - task_load) * (100 + (IMBALANCE_PCT as i128 - 100) / 2);
        prev_eff *= smp.capacity(this, now) as i128;
        if sync {
            prev_eff += 1;
        }
        if this_eff < prev_eff {
            this
        } else {
            prev
        }
    }

    /// `select_idle_sibling()`.
    fn select_idle_sibling(&mut self, t: TaskId, prev: CpuId, target: CpuId) -> CpuId {
        if self.idle(target) {
            return target;
        }
        if prev != target && self.idle(prev) {
            return prev;
        }
        let smp = self.smp.as_mut().expect("smp");
        let recent = smp.tasks.get_mut(t).recent_used_cpu.replace(prev);
        if let Some(r) = recent {
            if r != prev && r != target && r < self.rqs.len() && self.idle(r) && self.allowed(t, r) {
                return r;
            }
        }
        // select_idle_cpu() with SIS_UTIL: `nr_idle_scan` CPUs at most, starting after target.
        let mut nr = self.smp.as_ref().expect("smp").nr_idle_scan + 1;
        if nr == 1 {
            return target;
        }
        let n = self.rqs.len();
        for k in 1..=n {
            let c = (target + k) % n;
            if !self.allowed(t, c) {
                continue;
            }
            nr -= 1;
            if nr == 0 {
                break;
            }
            if self.idle(c) {
                return c;
            }
        }
        target
    }

    /// The highest RT priority on CPU `c` (running or waiting), 0 if none.
    pub(crate) fn rt_top(&mut self, c: CpuId) -> i32 {
        let running = match self.rqs[c].curr {
            Some((r, Class::RealTime)) => self.rqs[c].rt.prio(r),
            // A deadline task outranks every RT priority (CPUPRI_HIGHER).
            Some((_, Class::Deadline)) => 100,
            _ => 0,
        };
        let dl = if self.rqs[c].dl.queued() > 0 { 100 } else { 0 };
        running.max(self.rqs[c].rt.top().unwrap_or(0)).max(dl)
    }

    fn select_rt(&mut self, t: TaskId, prev: CpuId, waker: Option<CpuId>) -> usize {
        let prio = self.rqs[prev].rt.prio(t).max(self.smp.as_ref().expect("smp").tasks.get(t).view.priority);
        let busy = match self.rqs[prev].curr {
            Some((r, Class::RealTime)) => self.rqs[prev].rt.prio(r) >= prio,
            Some((_, Class::Deadline)) => true,
            _ => false,
        };
        if !busy {
            return prev;
        }
        match self.find_lowest_rq(t, prio, prev, waker) {
            Some(c) if prio > self.rt_top(c) => c,
            _ => prev,
        }
    }

    /// `find_lowest_rq()`: among allowed CPUs whose highest RT priority is below `prio`, those
    /// of the lowest; `prev`, then the waker's CPU, then the first of them.
    pub(crate) fn find_lowest_rq(&mut self, t: TaskId, prio: i32, prev: CpuId, this: Option<CpuId>) -> Option<CpuId> {
        // rt_top needs `&mut self`, so the allowed CPUs are listed first.
        let allowed: Vec<CpuId> = self.allowed_cpus(t).collect();
        let cands: Vec<(CpuId, i32)> =
            allowed.into_iter().map(|c| (c, self.rt_top(c))).filter(|&(_, p)| p < prio).collect();
        let lowest = cands.iter().map(|&(_, p)| p).min()?;
        let set: Vec<CpuId> = cands.into_iter().filter(|&(_, p)| p == lowest).map(|(c, _)| c).collect();
        [Some(prev), this].into_iter().flatten().find(|c| set.contains(c)).or(set.first().copied())
    }

    /// The earliest deadline queued or running on `c` (None: no deadline task).
    pub(crate) fn dl_earliest(&mut self, c: CpuId) -> Option<Time> {
        let running = match self.rqs[c].curr {
            Some((r, Class::Deadline)) => Some(self.rqs[c].dl.deadline_of(r)),
            _ => None,
        };
        let queued = self.rqs[c].dl.earliest();
        match (running, queued) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn select_dl(&mut self, t: TaskId, prev: CpuId, waker: Option<CpuId>) -> usize {
        let deadline = self.rqs[prev].dl.deadline_of(t);
        let blocked = match self.rqs[prev].curr {
            Some((r, Class::Deadline)) => self.rqs[prev].dl.deadline_of(r) <= deadline,
            _ => false,
        };
        if !blocked {
            return prev;
        }
        match self.find_later_rq(t, deadline, prev, waker) {
            Some(c) if self.dl_earliest(c).is_none_or(|e| deadline < e) => c,
            _ => prev,
        }
    }

    /// `find_later_rq()` (`cpudl_find()`): allowed CPUs without a deadline task; else the one
    /// whose earliest deadline is the latest, if later than `deadline`. `prev`, then the
    /// waker's CPU, then the first.
    pub(crate) fn find_later_rq(
        &mut self,
        t: TaskId,
        deadline: Time,
        prev: CpuId,
        this: Option<CpuId>,
    ) -> Option<CpuId> {
        let allowed: Vec<CpuId> = self.allowed_cpus(t).collect();
        let earliest: Vec<(CpuId, Option<Time>)> = allowed.iter().map(|&c| (c, self.dl_earliest(c))).collect();
        let free: Vec<CpuId> = earliest.iter().filter(|(_, e)| e.is_none()).map(|&(c, _)| c).collect();
        let set = if free.is_empty() {
            let latest = earliest.iter().filter_map(|&(c, e)| e.map(|e| (e, c))).max()?;
            if deadline >= latest.0 {
                return None;
            }
            vec![latest.1]
        } else {
            free
        };
        [Some(prev), this].into_iter().flatten().find(|c| set.contains(c)).or(set.first().copied())
    }
}
