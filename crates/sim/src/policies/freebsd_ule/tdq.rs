//! One ULE thread queue (`struct tdq`): the three run queues of a CPU — `tdq_realtime`
//! (interrupt, realtime and interactive timeshare threads, by priority), `tdq_timeshare` (batch
//! threads on a calendar: 64 slots, inserted relative to `tdq_idx` and drained from
//! `tdq_ridx`) and `tdq_idle` — with `tdq_runq_add`, `tdq_runq_rem`, `tdq_choose`, `tdq_steal`
//! and the insert-index advance of `sched_clock`.

use super::score::{PRI_BATCH_RANGE, PRI_MAX_BATCH, PRI_MIN_BATCH};
use crate::policy::TaskId;
use std::collections::VecDeque;

/// `RQ_NQS`: queues per run queue (256 priorities / `RQ_PPQ` = 4).
pub const RQ_NQS: usize = 64;
const RQ_PPQ: i32 = 4;

/// Which of the three run queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runq {
    Realtime,
    Timeshare,
    Idle,
}

/// Where in a queue a thread goes (`sched_add` / `sched_switch` flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// At the tail of its queue; a batch thread in the slot its priority gives, counted from
    /// `tdq_idx`.
    Normal,
    /// `SRQ_PREEMPTED`: at the head; a batch thread in the slot being drained (`tdq_ridx`).
    Preempted,
    /// `SRQ_BORROWING`: a batch thread lent a priority goes to the tail of the slot being
    /// drained.
    Borrowing,
}

/// A per-CPU thread queue and the threads running from it.
#[derive(Debug, Clone)]
pub struct Tdq {
    realtime: Vec<VecDeque<TaskId>>,
    timeshare: Vec<VecDeque<TaskId>>,
    idle: Vec<VecDeque<TaskId>>,
    /// `tdq_idx`: where offset 0 of the calendar is now.
    pub idx: usize,
    /// `tdq_ridx`: the slot being drained; `idx == ridx` or `idx == ridx + 1` (mod 64).
    pub ridx: usize,
    in_timeshare: usize,
    queued: usize,
    /// Which slots of each queue (realtime, timeshare, idle) hold a thread: `rq_status`'s bits,
    /// so the best thread is found without walking empty slots (`runq_findbit`).
    bits: [u64; 3],
    /// Threads running from this queue, with their priorities (they count in `tdq_load`).
    pub running: Vec<(TaskId, i32)>,
    /// stathz ticks already applied to `idx` / `ridx`.
    clock: u64,
}

impl Default for Tdq {
    fn default() -> Self {
        let q = || vec![VecDeque::new(); RQ_NQS];
        Tdq {
            realtime: q(),
            timeshare: q(),
            idle: q(),
            idx: 0,
            ridx: 0,
            in_timeshare: 0,
            queued: 0,
            bits: [0; 3],
            running: Vec::new(),
            clock: 0,
        }
    }
}

impl Tdq {
    /// `tdq_load`: queued and running threads.
    pub fn load(&self) -> usize {
        self.queued + self.running.len()
    }

    pub fn queued(&self) -> usize {
        self.queued
    }

    /// `sched_clock`'s index advance for every stathz tick up to tick `k`: while the drain
    /// index has caught up with the insert index, the insert index moves one slot per tick
    /// (and the drain index with it past an empty slot), so new batch threads land further on
    /// and those already queued come nearer the head.
    pub fn clock_to(&mut self, k: u64) {
        while self.clock < k {
            if self.idx != self.ridx {
                break;
            }
            if self.in_timeshare == 0 {
                // Every slot is empty: both indices move one slot per remaining tick.
                let n = ((k - self.clock) % RQ_NQS as u64) as usize;
                self.idx = (self.idx + n) % RQ_NQS;
                self.ridx = self.idx;
                break;
            }
            self.clock += 1;
            self.idx = (self.idx + 1) % RQ_NQS;
            if self.timeshare[self.ridx].is_empty() {
                self.ridx = self.idx;
            }
        }
        self.clock = self.clock.max(k);
    }

    /// `tdq_runq_add`: queue `t` at priority `pri`; returns where it went.
    pub fn add(&mut self, t: TaskId, pri: i32, how: How) -> (Runq, usize) {
        let (rq, slot) = if pri < PRI_MIN_BATCH {
            (Runq::Realtime, (pri / RQ_PPQ) as usize)
        } else if pri <= PRI_MAX_BATCH {
            let slot = if how == How::Normal {
                let off = RQ_NQS as i32 * (pri - PRI_MIN_BATCH) / PRI_BATCH_RANGE;
                let mut s = (off as usize + self.idx) % RQ_NQS;
                // Keep one slot between the indices while the drain slot empties.
                if self.ridx != self.idx && s == self.ridx {
                    s = (s + RQ_NQS - 1) % RQ_NQS;
                }
                s
            } else {
                self.ridx
            };
            (Runq::Timeshare, slot)
        } else {
            (Runq::Idle, (pri.min(255) / RQ_PPQ) as usize)
        };
        let q = &mut self.queue_mut(rq)[slot];
        if how == How::Preempted {
            q.push_front(t);
        } else {
            q.push_back(t);
        }
        self.queued += 1;
        self.in_timeshare += usize::from(rq == Runq::Timeshare);
        self.bits[rq as usize] |= 1 << slot;
        (rq, slot)
    }

    /// `tdq_runq_rem`: take `t` out of `(rq, slot)`. Emptying the drain slot of the calendar
    /// moves the drain index on (`runq_remove_idx`), unless it is the insert slot too.
    pub fn remove(&mut self, t: TaskId, (rq, slot): (Runq, usize)) {
        let q = &mut self.queue_mut(rq)[slot];
        let Some(i) = q.iter().position(|&x| x == t) else { return };
        q.remove(i);
        let emptied = q.is_empty();
        if emptied {
            self.bits[rq as usize] &= !(1 << slot);
        }
        self.queued -= 1;
        if rq == Runq::Timeshare {
            self.in_timeshare -= 1;
            if emptied && self.idx != self.ridx && self.ridx == slot {
                self.ridx = (slot + 1) % RQ_NQS;
            }
        }
    }

    fn queue(&self, rq: Runq) -> &[VecDeque<TaskId>] {
        match rq {
            Runq::Realtime => &self.realtime,
            Runq::Timeshare => &self.timeshare,
            Runq::Idle => &self.idle,
        }
    }

    fn queue_mut(&mut self, rq: Runq) -> &mut Vec<VecDeque<TaskId>> {
        match rq {
            Runq::Realtime => &mut self.realtime,
            Runq::Timeshare => &mut self.timeshare,
            Runq::Idle => &mut self.idle,
        }
    }

    /// Every queued thread in `tdq_choose` order (realtime by priority, the calendar from
    /// the drain slot round, idle by priority).
    pub fn in_order(&self) -> impl Iterator<Item = (TaskId, Runq, usize)> + '_ {
        let rt = self.realtime.iter().enumerate().flat_map(|(s, q)| q.iter().map(move |&t| (t, Runq::Realtime, s)));
        let ts = (0..RQ_NQS)
            .map(move |i| (self.ridx + i) % RQ_NQS)
            .flat_map(move |s| self.timeshare[s].iter().map(move |&t| (t, Runq::Timeshare, s)));
        let idle = self.idle.iter().enumerate().flat_map(|(s, q)| q.iter().map(move |&t| (t, Runq::Idle, s)));
        rt.chain(ts).chain(idle)
    }

    /// `tdq_choose`: the first thread of the best non-empty queue — the first of
    /// [`Tdq::in_order`], found from the status bits: realtime and idle from slot 0, the
    /// calendar from `ridx` round.
    pub fn choose(&self) -> Option<(TaskId, Runq, usize)> {
        let head = |rq: Runq, slot: u32| self.queue(rq)[slot as usize].front().map(|&t| (t, rq, slot as usize));
        let [rt, ts, idle] = self.bits;
        if rt != 0 {
            head(Runq::Realtime, rt.trailing_zeros())
        } else if ts != 0 {
            let from = self.ridx as u32;
            head(Runq::Timeshare, (from + ts.rotate_right(from).trailing_zeros()) % RQ_NQS as u32)
        } else if idle != 0 {
            head(Runq::Idle, idle.trailing_zeros())
        } else {
            None
        }
    }

    /// `tdq_steal`: a thread another CPU may take — the first allowed realtime one; else from
    /// the calendar as `runq_steal_from` does; else the first allowed idle one.
    pub fn steal(&self, allowed: impl Fn(TaskId) -> bool) -> Option<(TaskId, Runq, usize)> {
        let first_allowed = |rq: Runq| self.in_order().filter(|x| x.1 == rq).find(|x| allowed(x.0));
        first_allowed(Runq::Realtime).or_else(|| self.steal_from(&allowed)).or_else(|| first_allowed(Runq::Idle))
    }

    /// `runq_steal_from(tdq_timeshare, cpu, tdq_ridx)`: scan the slots from `ridx` to the end
    /// and then, if `ridx` was not 0, the whole array again; return the first allowed thread
    /// seen after the first one (so the head of a lone slot is left to its own CPU unless the
    /// second pass comes back to it), or else the last thread seen if it is allowed.
    fn steal_from(&self, allowed: &impl Fn(TaskId) -> bool) -> Option<(TaskId, Runq, usize)> {
        let second = if self.ridx != 0 { 0..RQ_NQS } else { 0..0 };
        let mut first = None;
        for s in (self.ridx..RQ_NQS).chain(second) {
            for &t in &self.timeshare[s] {
                if first.is_some() && allowed(t) {
                    return Some((t, Runq::Timeshare, s));
                }
                first = Some((t, Runq::Timeshare, s));
            }
        }
        first.filter(|x| allowed(x.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The status bits find what walking the queues in order finds, through random adds (at
    /// every priority and way), removals and calendar advances.
    #[test]
    fn choose_from_the_bits_is_the_first_in_order() {
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let mut tdq = Tdq::default();
        let mut queued: Vec<(TaskId, (Runq, usize))> = Vec::new();
        for step in 0..20_000 {
            match next(4) {
                0 | 1 => {
                    let how = [How::Normal, How::Preempted, How::Borrowing][next(3) as usize];
                    let at = tdq.add(step, next(256) as i32, how);
                    queued.push((step, at));
                }
                2 if !queued.is_empty() => {
                    let (t, at) = queued.swap_remove(next(queued.len() as u64) as usize);
                    tdq.remove(t, at);
                }
                _ => tdq.clock_to(tdq.clock + next(5)),
            }
            assert_eq!(tdq.choose(), tdq.in_order().next(), "step {step}");
        }
    }
}
