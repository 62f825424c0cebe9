//! The control list of seed 000 (Figures 8 and 10): an unordered list in which every entry
//! holds its remaining time and every tick decrements every entry. Insert and cancel are O(1)
//! (an unordered Vec with swap-remove); each tick touches all n entries, so an entry that
//! sleeps x ticks costs x timer operations and the whole run costs Γ = Σx.

use crate::slab::Slab;
use crate::{Handle, OpCounts, Tick, TimerQueue};

struct Entry<T> {
    remaining: Tick,
    /// Position in `list`.
    pos: u32,
    value: T,
}

/// Seed 000's control algorithm.
pub struct ControlList<T> {
    slab: Slab<Entry<T>>,
    list: Vec<u32>,
    now: Tick,
    ops: OpCounts,
}

impl<T> ControlList<T> {
    /// An empty list at tick 0.
    pub fn new() -> Self {
        ControlList { slab: Slab::new(), list: Vec::new(), now: 0, ops: OpCounts::default() }
    }

    fn unlink(&mut self, idx: u32) -> T {
        let pos = self.slab.get(idx).pos as usize;
        self.list.swap_remove(pos);
        if let Some(&moved) = self.list.get(pos) {
            self.slab.get_mut(moved).pos = pos as u32;
        }
        self.slab.remove(idx).value
    }
}

impl<T> Default for ControlList<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> TimerQueue<T> for ControlList<T> {
    fn insert(&mut self, delay: Tick, value: T) -> Handle {
        let pos = self.list.len() as u32;
        let h = self.slab.insert(Entry { remaining: delay.max(1), pos, value });
        self.list.push(h.idx);
        self.ops.insert_ops += 1;
        h
    }

    fn cancel(&mut self, handle: Handle) -> Option<T> {
        let idx = self.slab.resolve(handle)?;
        Some(self.unlink(idx))
    }

    fn tick(&mut self, out: &mut Vec<T>) {
        self.now += 1;
        self.ops.ticks += 1;
        self.ops.timer_ops += self.list.len() as u64;
        let mut i = 0;
        while i < self.list.len() {
            let idx = self.list[i];
            let e = self.slab.get_mut(idx);
            e.remaining -= 1;
            if e.remaining == 0 {
                // swap_remove moves the last entry to i; it has not been decremented yet.
                out.push(self.unlink(idx));
                self.ops.expired += 1;
            } else {
                i += 1;
            }
        }
    }

    fn next_deadline(&self) -> Option<Tick> {
        self.list.iter().map(|&i| self.slab.get(i).remaining).min().map(|r| self.now + r)
    }

    fn len(&self) -> usize {
        self.slab.len()
    }

    fn now(&self) -> Tick {
        self.now
    }

    fn ops(&self) -> OpCounts {
        self.ops
    }
}
