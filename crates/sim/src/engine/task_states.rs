//! The engine's per-task state, indexed by task id. When tasks arrive in id order and no
//! per-task results are kept, the states of the tasks that finished before the oldest live one
//! are dropped: a run of millions of tasks then holds the states of its live window, not one
//! per task it ever ran.

use super::state::{Phase, TaskState};
use crate::policy::TaskId;
use std::ops::{Index, IndexMut};

/// A task's record in a [`TaskStates`]: it says when the task is done for good.
pub(super) trait Record {
    fn done(&self) -> bool;
}

impl Record for TaskState {
    #[inline(always)]
    fn done(&self) -> bool {
        self.phase == Phase::Done
    }
}

pub(super) struct TaskStates<T: Record = TaskState> {
    /// Task id of `v[0]`; every task below it finished and its state was dropped.
    base: usize,
    v: Vec<T>,
    /// Offset in `v` of the first task not yet known to be done.
    live_from: usize,
    /// Drop the finished prefix (arrivals in id order, no per-task results, nothing that
    /// refers to a finished task later).
    trim: bool,
    /// Finishes since the done prefix was last looked for.
    unscanned: u32,
}

impl<T: Record> TaskStates<T> {
    const SCAN_EVERY: u32 = 32;

    /// States created as tasks arrive, in id order; `trim` drops finished ones.
    pub fn arriving(capacity: usize, trim: bool) -> Self {
        // Trimmed, the states kept stay few: let the vector grow as it needs.
        let reserve = if trim { capacity.min(1024) } else { capacity };
        TaskStates { base: 0, v: Vec::with_capacity(reserve), live_from: 0, trim, unscanned: 0 }
    }

    /// Every state created up front (arrivals out of id order); nothing is dropped.
    pub fn all(states: Vec<T>) -> Self {
        TaskStates { base: 0, v: states, live_from: 0, trim: false, unscanned: 0 }
    }

    /// Tasks whose state was created (ids below this), dropped ones included.
    #[inline]
    pub fn len(&self) -> usize {
        self.base + self.v.len()
    }

    #[inline]
    pub fn push(&mut self, s: T) {
        self.v.push(s);
    }

    /// The state of `t`: `Ok(None)` when it has not arrived, `Err(())` when it finished and its
    /// state was dropped.
    pub fn get(&self, t: TaskId) -> Result<Option<&T>, ()> {
        if t < self.base {
            Err(())
        } else {
            Ok(self.v.get(t - self.base))
        }
    }

    /// The ids whose states are kept.
    pub fn kept_ids(&self) -> std::ops::Range<TaskId> {
        self.base..self.len()
    }

    /// The states kept (dropped ones are of finished tasks).
    pub fn kept_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.v.iter_mut()
    }

    /// Note that a task finished: drop the finished prefix once it is at least half the
    /// states kept, so each state is moved at most once on average.
    #[inline]
    pub fn finished(&mut self) {
        // Looked at once every SCAN_EVERY finishes: how far the done prefix reaches varies from
        // one finish to the next, so a walk after each one mispredicts its end nearly every time.
        self.unscanned += 1;
        if !self.trim || self.unscanned < Self::SCAN_EVERY {
            return;
        }
        self.unscanned = 0;
        while self.live_from < self.v.len() && self.v[self.live_from].done() {
            self.live_from += 1;
        }
        if self.live_from * 2 >= self.v.len() && self.live_from > 0 {
            self.v.drain(..self.live_from);
            self.base += self.live_from;
            self.live_from = 0;
        }
    }
}

impl<T: Record> Index<TaskId> for TaskStates<T> {
    type Output = T;
    #[inline(always)]
    fn index(&self, t: TaskId) -> &T {
        &self.v[t - self.base]
    }
}

impl<T: Record> IndexMut<TaskId> for TaskStates<T> {
    #[inline(always)]
    fn index_mut(&mut self, t: TaskId) -> &mut T {
        &mut self.v[t - self.base]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy)]
    struct Rec(bool);

    impl Record for Rec {
        fn done(&self) -> bool {
            self.0
        }
    }

    #[test]
    fn the_done_prefix_is_dropped_once_looked_for_and_never_a_live_state() {
        let n = 4 * TaskStates::<Rec>::SCAN_EVERY as usize;
        let mut s = TaskStates::arriving(n, true);
        for _ in 0..n {
            s.push(Rec(false));
        }
        // Task 0 stays live: nothing behind it may go, however many finish.
        for t in 1..n {
            s.v[t - s.base].0 = true;
            s.finished();
        }
        assert_eq!(s.kept_ids(), 0..n);
        // Task 0 finishes: a look within SCAN_EVERY finishes drops every state, and a dropped id
        // reads as such.
        s.v[0].0 = true;
        let mut finishes = 0;
        while s.kept_ids().start == 0 {
            s.finished();
            finishes += 1;
            assert!(finishes <= TaskStates::<Rec>::SCAN_EVERY, "not looked for in {finishes} finishes");
        }
        assert_eq!(s.kept_ids(), n..n);
        assert!(s.get(0).is_err() && s.get(n - 1).is_err());
        assert!(matches!(s.get(n), Ok(None)));
        // Untrimmed states are all kept.
        let mut all = TaskStates::all(vec![Rec(true); n]);
        for _ in 0..n {
            all.finished();
        }
        assert_eq!(all.kept_ids(), 0..n);
    }
}
