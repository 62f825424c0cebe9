//! The engine's per-task state, indexed by task id. When tasks arrive in id order and no
//! per-task results are kept, the states of the tasks that finished before the oldest live one
//! are dropped: a run of millions of tasks then holds the states of its live window, not one
//! per task it ever ran.

use super::state::{Phase, TaskState};
use crate::policy::TaskId;
use std::ops::{Index, IndexMut};

pub(super) struct TaskStates {
    /// Task id of `v[0]`; every task below it finished and its state was dropped.
    base: usize,
    v: Vec<TaskState>,
    /// Offset in `v` of the first task not yet known to be done.
    live_from: usize,
    /// Drop the finished prefix (arrivals in id order, no per-task results, nothing that
    /// refers to a finished task later).
    trim: bool,
}

impl TaskStates {
    /// States created as tasks arrive, in id order; `trim` drops finished ones.
    pub fn arriving(capacity: usize, trim: bool) -> Self {
        // Trimmed, the states kept stay few: let the vector grow as it needs.
        let reserve = if trim { capacity.min(1024) } else { capacity };
        TaskStates { base: 0, v: Vec::with_capacity(reserve), live_from: 0, trim }
    }

    /// Every state created up front (arrivals out of id order); nothing is dropped.
    pub fn all(states: Vec<TaskState>) -> Self {
        TaskStates { base: 0, v: states, live_from: 0, trim: false }
    }

    /// Tasks whose state was created (ids below this), dropped ones included.
    #[inline]
    pub fn len(&self) -> usize {
        self.base + self.v.len()
    }

    #[inline]
    pub fn push(&mut self, s: TaskState) {
        self.v.push(s);
    }

    /// The state of `t`: `Ok(None)` when it has not arrived, `Err(())` when it finished and its
    /// state was dropped.
    pub fn get(&self, t: TaskId) -> Result<Option<&TaskState>, ()> {
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
    pub fn kept_mut(&mut self) -> impl Iterator<Item = &mut TaskState> {
        self.v.iter_mut()
    }

    /// Note that a task finished: drop the finished prefix once it is at least half the
    /// states kept, so each state is moved at most once on average.
    #[inline]
    pub fn finished(&mut self) {
        if !self.trim {
            return;
        }
        while self.live_from < self.v.len() && self.v[self.live_from].phase == Phase::Done {
            self.live_from += 1;
        }
        if self.live_from * 2 >= self.v.len() && self.live_from > 0 {
            self.v.drain(..self.live_from);
            self.base += self.live_from;
            self.live_from = 0;
        }
    }
}

impl Index<TaskId> for TaskStates {
    type Output = TaskState;
    #[inline(always)]
    fn index(&self, t: TaskId) -> &TaskState {
        &self.v[t - self.base]
    }
}

impl IndexMut<TaskId> for TaskStates {
    #[inline(always)]
    fn index_mut(&mut self, t: TaskId) -> &mut TaskState {
        &mut self.v[t - self.base]
    }
}
