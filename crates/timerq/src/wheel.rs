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
//!
//! Layout, chosen so that moving time touches memory in order:
//! - a slot is a list of [`Node`]s, each the entry's deadline and its cell index, so a cascade
//!   reads the deadline from the list it walks and appends the node to another list — it never
//!   visits the entry's cell;
//! - the cells (value and generation) are touched once on insert, once on cancel and once when
//!   the entry fires;
//! - cancellation is lazy: `cancel` takes the value out of its cell and marks the cell a
//!   *zombie* in a bitmap (one bit per cell, small enough to stay in cache); the node stays in
//!   its list and is dropped — and its cell freed — when a cascade or the firing slot reaches
//!   it. Once zombies outnumber live entries (and at least [`COMPACT_MIN`]), every list is
//!   swept, so memory stays within about twice the live entries.

use crate::{Handle, OpCounts, Tick, TimerQueue};

const BITS: u32 = 6;
const SLOTS: usize = 1 << BITS;
const LEVELS: usize = 11; // 11 * 6 = 66 bits >= 64
const SLOT_MASK: u64 = SLOTS as u64 - 1;
/// Zombies tolerated before a sweep regardless of how few entries are live.
pub const COMPACT_MIN: usize = 1024;

/// An entry as a slot list holds it.
#[derive(Clone, Copy)]
struct Node {
    deadline: Tick,
    cell: u32,
}

/// Where an entry's value lives while it is pending.
struct Cell<T> {
    /// Bumped when the entry fires or is cancelled, so old handles go stale.
    gen: u32,
    value: Option<T>,
}

/// A hierarchical timing wheel.
pub struct Wheel<T> {
    cells: Vec<Cell<T>>,
    /// Cells ready for reuse (neither pending nor a zombie).
    free: Vec<u32>,
    /// Bit `i` set: cell `i` was cancelled but its node is still in a slot list.
    zombie: Vec<u64>,
    zombies: usize,
    live: usize,
    /// `LEVELS * SLOTS` lists of nodes, unordered.
    slots: Vec<Vec<Node>>,
    /// Bit `s` of `occupied[l]` is set when slot `s` of level `l` has nodes (live or zombie).
    occupied: [u64; LEVELS],
    now: Tick,
    ops: OpCounts,
    /// Sweeps done (tests check that they happen).
    #[cfg(test)]
    sweeps: usize,
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

/// Whether cell `i` is a zombie in `bits`.
#[inline]
fn is_zombie(bits: &[u64], i: u32) -> bool {
    bits[(i / 64) as usize] & (1 << (i % 64)) != 0
}

/// Clear zombie bit `i`.
#[inline]
fn bury(bits: &mut [u64], i: u32) {
    bits[(i / 64) as usize] &= !(1 << (i % 64));
}

impl<T> Wheel<T> {
    /// An empty wheel at tick 0.
    pub fn new() -> Self {
        Wheel {
            cells: Vec::new(),
            free: Vec::new(),
            zombie: Vec::new(),
            zombies: 0,
            live: 0,
            slots: (0..LEVELS * SLOTS).map(|_| Vec::new()).collect(),
            occupied: [0; LEVELS],
            now: 0,
            ops: OpCounts::default(),
            #[cfg(test)]
            sweeps: 0,
        }
    }

    /// File `node` (deadline > now, or == now during a tick) into its slot.
    #[inline]
    fn file(&mut self, node: Node) {
        let level = level_for(self.now, node.deadline);
        let slot = slot_for(node.deadline, level);
        self.slots[level * SLOTS + slot].push(node);
        self.occupied[level] |= 1 << slot;
    }

    /// Take slot `slot` of `level` out of the wheel (empty if it holds nothing).
    #[inline]
    fn take_slot(&mut self, level: usize, slot: usize) -> Vec<Node> {
        if self.occupied[level] & (1 << slot) == 0 {
            return Vec::new();
        }
        self.occupied[level] &= !(1 << slot);
        let list = std::mem::take(&mut self.slots[level * SLOTS + slot]);
        self.ops.timer_ops += list.len() as u64;
        list
    }

    /// Give a walked list's allocation back to its slot (which is empty again by then).
    #[inline]
    fn return_slot(&mut self, level: usize, slot: usize, mut list: Vec<Node>) {
        list.clear();
        let home = &mut self.slots[level * SLOTS + slot];
        if home.is_empty() && home.capacity() < list.capacity() {
            *home = list;
        }
    }

    /// A zombie's node has been reached: its cell can be reused.
    #[inline]
    fn release_zombie(&mut self, cell: u32) {
        bury(&mut self.zombie, cell);
        self.zombies -= 1;
        self.free.push(cell);
    }

    /// Re-file every node of slot `slot` at `level` (> 0) relative to the current clock,
    /// dropping zombies.
    fn cascade(&mut self, level: usize, slot: usize) {
        let list = self.take_slot(level, slot);
        for &node in &list {
            if is_zombie(&self.zombie, node.cell) {
                self.release_zombie(node.cell);
            } else {
                self.file(node);
            }
        }
        self.return_slot(level, slot, list);
    }

    /// Drop every zombie node from every list and free its cell.
    fn compact(&mut self) {
        for level in 0..LEVELS {
            let mut bits = self.occupied[level];
            while bits != 0 {
                let slot = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let list = &mut self.slots[level * SLOTS + slot];
                let (zombie, free) = (&mut self.zombie, &mut self.free);
                list.retain(|n| {
                    if is_zombie(zombie, n.cell) {
                        bury(zombie, n.cell);
                        free.push(n.cell);
                        false
                    } else {
                        true
                    }
                });
                if list.is_empty() {
                    self.occupied[level] &= !(1 << slot);
                }
            }
        }
        self.zombies = 0;
        #[cfg(test)]
        {
            self.sweeps += 1;
        }
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
        let (cell, gen) = match self.free.pop() {
            Some(i) => {
                let c = &mut self.cells[i as usize];
                c.value = Some(value);
                (i, c.gen)
            }
            None => {
                let i = u32::try_from(self.cells.len()).expect("more than 2^32 timers");
                self.cells.push(Cell { gen: 0, value: Some(value) });
                if i % 64 == 0 {
                    self.zombie.push(0);
                }
                (i, 0)
            }
        };
        self.file(Node { deadline, cell });
        self.live += 1;
        self.ops.insert_ops += 1;
        Handle { idx: cell, gen }
    }

    fn cancel(&mut self, handle: Handle) -> Option<T> {
        let c = self.cells.get_mut(handle.idx as usize)?;
        if c.gen != handle.gen {
            return None;
        }
        let value = c.value.take()?;
        c.gen = c.gen.wrapping_add(1);
        self.zombie[(handle.idx / 64) as usize] |= 1 << (handle.idx % 64);
        self.zombies += 1;
        self.live -= 1;
        if self.zombies > self.live.max(COMPACT_MIN) {
            self.compact();
        }
        Some(value)
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
        let list = self.take_slot(0, slot);
        for &node in &list {
            if is_zombie(&self.zombie, node.cell) {
                self.release_zombie(node.cell);
                continue;
            }
            let c = &mut self.cells[node.cell as usize];
            out.push(c.value.take().expect("a pending entry's cell holds its value"));
            c.gen = c.gen.wrapping_add(1);
            self.free.push(node.cell);
            self.live -= 1;
            self.ops.expired += 1;
        }
        self.return_slot(0, slot, list);
    }

    fn next_deadline(&self) -> Option<Tick> {
        // The lowest level with a live node holds the earliest deadlines, and within a level
        // every occupied slot lies ahead of the clock's digit, so the lowest slot with a live
        // node is the earliest. Zombies are skipped (a slot may hold nothing else).
        for level in 0..LEVELS {
            let mut bits = self.occupied[level];
            while bits != 0 {
                let slot = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let live = self.slots[level * SLOTS + slot].iter().filter(|n| !is_zombie(&self.zombie, n.cell));
                if let Some(d) = live.map(|n| n.deadline).min() {
                    return Some(d);
                }
            }
        }
        None
    }

    fn len(&self) -> usize {
        self.live
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

    #[test]
    fn a_cancelled_entry_is_skipped_where_it_lies_and_its_cell_reused_after() {
        let mut w = Wheel::new();
        let a = w.insert(10, 'a');
        let b = w.insert(200, 'b');
        w.insert(300, 'c');
        assert_eq!(w.cancel(a), Some('a'));
        assert_eq!(w.cancel(a), None, "a handle cancels once");
        assert_eq!((w.len(), w.zombies, w.next_deadline()), (2, 1, Some(200)));
        // The zombie's cell is not reused while its node is still in a slot list.
        let d = w.insert(5, 'd');
        assert_ne!(d.idx, a.idx);
        let mut out = vec![];
        w.advance_to(10, &mut out);
        assert_eq!((out, w.zombies, w.free.contains(&a.idx)), (vec![(5, 'd')], 0, true));
        assert_eq!(w.cancel(b), Some('b'));
        assert_eq!(w.next_deadline(), Some(300), "a slot of zombies only is looked past");
    }

    #[test]
    fn sweeping_keeps_zombies_below_the_live_count() {
        let mut w = Wheel::new();
        let keep: Vec<Handle> = (0..10).map(|i| w.insert(5_000 + i, i)).collect();
        for round in 0..20 {
            let hs: Vec<Handle> = (0..500).map(|i| w.insert(9_000 + i, round * 1000 + i)).collect();
            for h in hs {
                w.cancel(h);
            }
            assert!(w.zombies <= COMPACT_MIN, "round {round}: {} zombies", w.zombies);
        }
        let nodes: usize = w.slots.iter().map(Vec::len).sum();
        assert!(nodes <= w.len() + COMPACT_MIN, "{nodes} nodes for {} live entries", w.len());
        assert!(w.cells.len() <= 10 + 2 * COMPACT_MIN, "cells are reused: {}", w.cells.len());
        let mut out = vec![];
        w.advance_to(10_000, &mut out);
        assert_eq!(out.len(), keep.len());
        assert_eq!((w.len(), w.next_deadline()), (0, None));
    }

    #[test]
    fn long_churn_with_sweeps_matches_a_sorted_model() {
        // Enough cancels to sweep many times (the model tests' sequences are too short to).
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let mut w = Wheel::new();
        let mut model: std::collections::BTreeSet<(Tick, u32)> = Default::default();
        let mut handles: Vec<(Handle, Tick, u32)> = vec![];
        for id in 0..60_000u32 {
            match rng.gen_range(0..10) {
                0..=3 => {
                    let delay = if rng.gen_bool(0.1) { rng.gen_range(0..300_000) } else { rng.gen_range(0..5_000) };
                    let deadline = w.now() + delay.max(1);
                    handles.push((w.insert(delay, id), deadline, id));
                    model.insert((deadline, id));
                }
                4..=7 if !handles.is_empty() => {
                    let (h, deadline, was) = handles.swap_remove(rng.gen_range(0..handles.len()));
                    let want = model.remove(&(deadline, was)).then_some(was);
                    assert_eq!(w.cancel(h), want, "cancel {was}");
                    assert_eq!(w.cancel(h), None, "cancel {was} again");
                }
                _ => {
                    let mut out = vec![];
                    w.tick(&mut out);
                    out.sort_unstable();
                    let mut due = vec![];
                    while let Some(&(d, i)) = model.first() {
                        if d > w.now() {
                            break;
                        }
                        model.pop_first();
                        due.push(i);
                    }
                    due.sort_unstable();
                    assert_eq!(out, due, "tick {}", w.now());
                }
            }
            assert_eq!(w.len(), model.len(), "after op {id}");
            assert_eq!(w.next_deadline(), model.first().map(|&(d, _)| d), "after op {id}");
        }
        assert!(w.sweeps > 3, "only {} sweeps", w.sweeps);
    }
}
