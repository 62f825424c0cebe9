//! The dispatcher ready queues: one FIFO list per priority level 0–31 and a summary bit mask of
//! the non-empty ones (`KPRCB.DispatcherReadyListHead[32]` and `ReadySummary`).

use super::super::common::Affinity;
use crate::policy::{CpuId, TaskId, TaskView};
use std::collections::VecDeque;

#[derive(Debug, Clone, Default)]
pub struct ReadyQueues {
    levels: [VecDeque<TaskId>; 32],
    summary: u32,
    len: usize,
    pub affinity: Affinity,
}

impl ReadyQueues {
    /// Queue `t` at `level`, at the head (a pre-empted thread) or the tail.
    pub fn insert(&mut self, t: &TaskView, level: u8, head: bool) {
        self.affinity.note(t);
        self.reinsert(t.id, level, head);
    }

    /// Queue `t`, queued before (its affinity is known), at `level`.
    pub fn reinsert(&mut self, t: TaskId, level: u8, head: bool) {
        let q = &mut self.levels[level as usize];
        if head {
            q.push_front(t);
        } else {
            q.push_back(t);
        }
        self.summary |= 1 << level;
        self.len += 1;
    }

    /// Take `t` out of `level`; false if it was not there.
    pub fn remove(&mut self, t: TaskId, level: u8) -> bool {
        let q = &mut self.levels[level as usize];
        let Some(i) = q.iter().position(|&x| x == t) else { return false };
        q.remove(i);
        if q.is_empty() {
            self.summary &= !(1 << level);
        }
        self.len -= 1;
        true
    }

    /// The first thread of the highest non-empty level that may run on `cpu`, taken out.
    pub fn pop(&mut self, cpu: CpuId) -> Option<(TaskId, u8)> {
        let mut mask = self.summary;
        while mask != 0 {
            let level = 31 - mask.leading_zeros() as u8;
            let q = &self.levels[level as usize];
            if let Some(&t) = q.iter().find(|&&t| self.affinity.allowed(t, cpu)) {
                self.remove(t, level);
                return Some((t, level));
            }
            mask &= !(1 << level);
        }
        None
    }

    /// The non-empty levels as a bit mask.
    pub fn summary(&self) -> u32 {
        self.summary
    }

    /// The threads at `level`, head first.
    pub fn level(&self, level: u8) -> &VecDeque<TaskId> {
        &self.levels[level as usize]
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
