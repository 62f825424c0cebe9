//! A hierarchical timing wheel: 11 levels of 64 slots, level `l` slots each spanning 64^l
//! ticks, so the wheel covers the whole u64 tick range (tokio's wheel has 6 levels; Linux's
//! 8–9). Insert and cancel are O(1); an entry is moved ("cascaded") at most once per level
//! on its way down, so a tick costs amortised O(1).
//!
//! Entries are placed in the slot that *contains* their deadline. A slot above level 0 is
//! visited when the clock reaches the slot's first tick — never after the deadlines it holds —
//! and its entries are re-filed one level down or lower, never fired there. Only level 0
//! fires, and a level-0 slot holds entries whose deadline is exactly that tick, so nothing
//! fires early or late. (Callers that turn durations into ticks round *up*; see the sleep
//! service.)

use crate::slab::Slab;
use crate::{Handle, OpCounts, Tick, TimerQueue};

const BITS: u32 = 6;
const SLOTS: usize = 1 << BITS;
const LEVELS: usize = 11; // 11 * 6 = 66 bits >= 64
const SLOT_MASK: u64 = SLOTS as u64 - 1;

struct Entry<T> {
    deadline: Tick,
    /// Which slot list holds the entry (`level * 64 + slot`) and where in it.
    slot: u16,
    pos: u32,
    value: T,
}

/// A hierarchical timing wheel.
pub struct Wheel<T> {
    slab: Slab<Entry<T>>,
    /// `LEVELS * SLOTS` lists of slab indices; unordered, so cancel is a swap-remove.
    slots: Vec<Vec<u32>>,
    /// Bit `s` of `occupied[l]` is set when slot `s` of level `l` is non-empty.
    occupied: [u64; LEVELS],
    now: Tick,
    ops: OpCounts,
}

/// The level an entry due at `deadline` belongs to when the clock reads `now`.
///
/// Read the tick numbers as base-64 digits, 6 bits per level. `now ^ deadline` has its
/// highest set bit in the most significant digit where the two differ; the entry belongs to
/// that digit's level, because every digit above it already agrees with `now` and the slot at
/// that level is the deadline's digit there. `| SLOT_MASK` sends deadlines in the current
/// 64-tick block (only the lowest digit differs, or none) to level 0; `63 - leading_zeros`
/// is the index of the highest set bit, and `/ 6` turns a bit index into a digit index.
#[inline]
fn level_for(now: Tick, deadline: Tick) -> usize {
    let masked = (now ^ deadline) | SLOT_MASK;
    let significant = 63 - masked.leading_zeros();
    (significant / BITS) as usize
}

/// The slot (base-64 digit of `deadline`) at `level`.
#[inline]
fn slot_for(deadline: Tick, level: usize) -> usize {
    ((deadline >> (level as u32 * BITS)) & SLOT_MASK) as usize
}

impl<T> Wheel<T> {
    /// An empty wheel at tick 0.
    pub fn new() -> Self {
        Wheel {
            slab: Slab::new(),
            slots: (0..LEVELS * SLOTS).map(|_| Vec::new()).collect(),
            occupied: [0; LEVELS],
            now: 0,
            ops: OpCounts::default(),
        }
    }

    /// File slab entry `idx` (deadline > now, or == now during a tick) into its slot.
    #[inline]
    fn file(&mut self, idx: u32, deadline: Tick) {
        let level = level_for(self.now, deadline);
        let slot = slot_for(deadline, level);
        let sid = level * SLOTS + slot;
        let list = &mut self.slots[sid];
        let pos = list.len() as u32;
        list.push(idx);
        self.occupied[level] |= 1 << slot;
        let e = self.slab.get_mut(idx);
        e.slot = sid as u16;
        e.pos = pos;
    }

    /// Re-file every entry of slot `slot` at `level` (> 0) relative to the current clock.
    fn cascade(&mut self, level: usize, slot: usize) {
        if self.occupied[level] & (1 << slot) == 0 {
            return;
        }
        self.occupied[level] &= !(1 << slot);
        let sid = level * SLOTS + slot;
        let mut list = std::mem::take(&mut self.slots[sid]);
        self.ops.timer_ops += list.len() as u64;
        for &idx in &list {
            let deadline = self.slab.get(idx).deadline;
            self.file(idx, deadline);
        }
        list.clear();
        self.slots[sid] = list; // keep the capacity
    }
}

impl<T> Default for Wheel<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> TimerQueue<T> for Wheel<T> {
    fn insert(&mut self, delay: Tick, value: T) -> Handle {
        let deadline = self.now + delay.max(1);
        let h = self.slab.insert(Entry { deadline, slot: 0, pos: 0, value });
        self.file(h.idx, deadline);
        self.ops.insert_ops += 1;
        h
    }

    fn cancel(&mut self, handle: Handle) -> Option<T> {
        let idx = self.slab.resolve(handle)?;
        let (sid, pos) = {
            let e = self.slab.get(idx);
            (e.slot as usize, e.pos as usize)
        };
        let list = &mut self.slots[sid];
        list.swap_remove(pos);
        if let Some(&moved) = list.get(pos) {
            self.slab.get_mut(moved).pos = pos as u32;
        } else if list.is_empty() {
            self.occupied[sid / SLOTS] &= !(1 << (sid % SLOTS));
        }
        Some(self.slab.remove(idx).value)
    }

    fn tick(&mut self, out: &mut Vec<T>) {
        self.now += 1;
        self.ops.ticks += 1;
        let now = self.now;
        // Each level whose lower digits all just rolled over to 0 has entered a new slot:
        // cascade it. Entries are re-filed relative to the new `now`, so they land directly at
        // their final level; the lower levels' new slots are empty at a rollover (their entries
        // were filed under the old upper digits), so the order of the levels does not matter.
        let top = ((now.trailing_zeros() / BITS) as usize).min(LEVELS - 1);
        for level in (1..=top).rev() {
            self.cascade(level, slot_for(now, level));
        }
        let slot = (now & SLOT_MASK) as usize;
        if self.occupied[0] & (1 << slot) == 0 {
            return;
        }
        self.occupied[0] &= !(1 << slot);
        let mut list = std::mem::take(&mut self.slots[slot]);
        self.ops.timer_ops += list.len() as u64;
        self.ops.expired += list.len() as u64;
        for &idx in &list {
            out.push(self.slab.remove(idx).value);
        }
        list.clear();
        self.slots[slot] = list;
    }

    fn next_deadline(&self) -> Option<Tick> {
        // The lowest non-empty level holds the earliest deadlines, and within a level every
        // occupied slot lies ahead of the clock's digit, so the lowest set bit is the earliest.
        let level = self.occupied.iter().position(|&bits| bits != 0)?;
        let slot = self.occupied[level].trailing_zeros() as usize;
        self.slots[level * SLOTS + slot].iter().map(|&i| self.slab.get(i).deadline).min()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_follow_the_highest_differing_digit() {
        assert_eq!(level_for(0, 1), 0);
        assert_eq!(level_for(0, 63), 0);
        assert_eq!(level_for(0, 64), 1);
        assert_eq!(level_for(100, 130), 1);
        assert_eq!(level_for(0, 4095), 1);
        assert_eq!(level_for(0, 4096), 2);
        assert_eq!(level_for(0, u64::MAX), 10);
    }

    #[test]
    fn far_deadlines_cascade_down_and_fire_exactly() {
        let mut w = Wheel::new();
        w.insert(130, 'a');
        w.insert(4097, 'b');
        w.insert(64, 'c');
        assert_eq!(w.next_deadline(), Some(64));
        let mut out = vec![];
        w.advance_to(5000, &mut out);
        assert_eq!(out, vec![(64, 'c'), (130, 'a'), (4097, 'b')]);
    }
}
