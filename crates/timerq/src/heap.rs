//! A 4-ary min-heap of deadlines with handles: each entry remembers its position in the
//! heap array so cancel can remove it in O(log n). Four children per node make the tree
//! half as deep as a binary heap and keep a node's children in one cache line.

use crate::slab::Slab;
use crate::{Handle, OpCounts, Tick, TimerQueue};

const ARITY: usize = 4;

struct Entry<T> {
    /// Index in `heap`.
    pos: u32,
    value: T,
}

/// A min-heap timer queue.
pub struct Heap<T> {
    slab: Slab<Entry<T>>,
    /// (deadline, slab index), heap-ordered by deadline.
    heap: Vec<(Tick, u32)>,
    now: Tick,
    ops: OpCounts,
}

impl<T> Heap<T> {
    /// An empty heap at tick 0.
    pub fn new() -> Self {
        Heap { slab: Slab::new(), heap: Vec::new(), now: 0, ops: OpCounts::default() }
    }

    #[inline]
    fn place(&mut self, pos: usize, item: (Tick, u32)) {
        self.heap[pos] = item;
        self.slab.get_mut(item.1).pos = pos as u32;
    }

    /// Move the item at `pos` up; returns how many entries moved.
    fn sift_up(&mut self, mut pos: usize) -> u64 {
        let item = self.heap[pos];
        let mut moved = 0;
        while pos > 0 {
            let parent = (pos - 1) / ARITY;
            if self.heap[parent].0 <= item.0 {
                break;
            }
            self.place(pos, self.heap[parent]);
            pos = parent;
            moved += 1;
        }
        self.place(pos, item);
        moved
    }

    /// Move the item at `pos` down; returns how many entries moved.
    fn sift_down(&mut self, mut pos: usize) -> u64 {
        let item = self.heap[pos];
        let n = self.heap.len();
        let mut moved = 0;
        loop {
            let first = pos * ARITY + 1;
            if first >= n {
                break;
            }
            let last = (first + ARITY).min(n);
            let mut best = first;
            for c in first + 1..last {
                if self.heap[c].0 < self.heap[best].0 {
                    best = c;
                }
            }
            if self.heap[best].0 >= item.0 {
                break;
            }
            self.place(pos, self.heap[best]);
            pos = best;
            moved += 1;
        }
        self.place(pos, item);
        moved
    }

    /// Remove the item at heap position `pos`; returns its slab index and the entries moved.
    fn remove_at(&mut self, pos: usize) -> (u32, u64) {
        let idx = self.heap[pos].1;
        let last = self.heap.pop().expect("non-empty heap");
        if pos == self.heap.len() {
            return (idx, 0);
        }
        self.heap[pos] = last;
        let moved =
            if pos > 0 && self.heap[(pos - 1) / ARITY].0 > last.0 { self.sift_up(pos) } else { self.sift_down(pos) };
        (idx, moved)
    }
}

impl<T> Default for Heap<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> TimerQueue<T> for Heap<T> {
    fn insert(&mut self, delay: Tick, value: T) -> Handle {
        let deadline = self.now + delay.max(1);
        let pos = self.heap.len();
        let h = self.slab.insert(Entry { pos: pos as u32, value });
        self.heap.push((deadline, h.idx));
        self.ops.insert_ops += 1 + self.sift_up(pos);
        h
    }

    fn cancel(&mut self, handle: Handle) -> Option<T> {
        let idx = self.slab.resolve(handle)?;
        let pos = self.slab.get(idx).pos as usize;
        let (idx, _) = self.remove_at(pos);
        Some(self.slab.remove(idx).value)
    }

    fn tick(&mut self, out: &mut Vec<T>) {
        self.now += 1;
        self.ops.ticks += 1;
        if self.heap.is_empty() {
            return;
        }
        self.ops.timer_ops += 1; // look at the root
        while let Some(&(deadline, _)) = self.heap.first() {
            if deadline > self.now {
                break;
            }
            let (idx, moved) = self.remove_at(0);
            self.ops.timer_ops += moved + 1;
            self.ops.expired += 1;
            out.push(self.slab.remove(idx).value);
        }
    }

    fn advance_to(&mut self, until: Tick, out: &mut Vec<(Tick, T)>) {
        // Nothing happens between deadlines, so jump from one to the next.
        while let Some(&(deadline, _)) = self.heap.first() {
            if deadline > until {
                break;
            }
            let (idx, moved) = self.remove_at(0);
            self.ops.timer_ops += moved + 1;
            self.ops.expired += 1;
            out.push((deadline, self.slab.remove(idx).value));
        }
        if until > self.now {
            self.ops.ticks += until - self.now;
            self.now = until;
        }
    }

    fn next_deadline(&self) -> Option<Tick> {
        self.heap.first().map(|&(d, _)| d)
    }

    fn len(&self) -> usize {
        self.heap.len()
    }

    fn now(&self) -> Tick {
        self.now
    }

    fn ops(&self) -> OpCounts {
        self.ops
    }
}
