//! The delta list of seed 000 (Figures 7, 9 and 13), written after Xinu's `insertd`,
//! `clkhandler`, `wakeup` and `unsleep`: entries are kept in deadline order and each holds only
//! its delay *relative to its predecessor*, so a tick decrements the head alone.
//!
//! - insert walks from the head subtracting predecessors' keys (O(n)), then takes its own key
//!   off its successor's;
//! - tick decrements the head's key and pops every leading entry whose key reached 0;
//! - cancel adds the entry's key to its successor and unlinks it (O(1)).
//!
//! The list is linked by indices into a slab (no pointers): `prev`/`next` are slab indices.

use crate::slab::Slab;
use crate::{Handle, OpCounts, Tick, TimerQueue};

const NIL: u32 = u32::MAX;

struct Entry<T> {
    /// Ticks after the predecessor's deadline (after `now` for the head).
    key: Tick,
    prev: u32,
    next: u32,
    value: T,
}

/// Seed 000's delta queue.
pub struct DeltaList<T> {
    slab: Slab<Entry<T>>,
    head: u32,
    now: Tick,
    ops: OpCounts,
}

impl<T> DeltaList<T> {
    /// An empty list at tick 0.
    pub fn new() -> Self {
        DeltaList { slab: Slab::new(), head: NIL, now: 0, ops: OpCounts::default() }
    }

    fn unlink(&mut self, idx: u32) -> T {
        let (prev, next) = {
            let e = self.slab.get(idx);
            (e.prev, e.next)
        };
        if prev == NIL {
            self.head = next;
        } else {
            self.slab.get_mut(prev).next = next;
        }
        if next != NIL {
            self.slab.get_mut(next).prev = prev;
        }
        self.slab.remove(idx).value
    }
}

impl<T> Default for DeltaList<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> TimerQueue<T> for DeltaList<T> {
    fn insert(&mut self, delay: Tick, value: T) -> Handle {
        // insertd: skip entries due no later than us (ties stay in arrival order).
        let mut key = delay.max(1);
        let (mut prev, mut next) = (NIL, self.head);
        while next != NIL {
            self.ops.insert_ops += 1;
            let e = self.slab.get(next);
            if e.key > key {
                break;
            }
            key -= e.key;
            prev = next;
            next = e.next;
        }
        let h = self.slab.insert(Entry { key, prev, next, value });
        if prev == NIL {
            self.head = h.idx;
        } else {
            self.slab.get_mut(prev).next = h.idx;
        }
        if next != NIL {
            let succ = self.slab.get_mut(next);
            succ.prev = h.idx;
            succ.key -= key;
        }
        self.ops.insert_ops += 1;
        h
    }

    fn cancel(&mut self, handle: Handle) -> Option<T> {
        // unsleep: the successor inherits our key so its deadline is unchanged.
        let idx = self.slab.resolve(handle)?;
        let (key, next) = {
            let e = self.slab.get(idx);
            (e.key, e.next)
        };
        if next != NIL {
            self.slab.get_mut(next).key += key;
        }
        Some(self.unlink(idx))
    }

    fn tick(&mut self, out: &mut Vec<T>) {
        self.now += 1;
        self.ops.ticks += 1;
        if self.head == NIL {
            return;
        }
        // clkhandler: decrement the head only (one timer operation per tick) ...
        self.ops.timer_ops += 1;
        self.slab.get_mut(self.head).key -= 1;
        // ... wakeup: pop every leading entry whose key is 0; each further entry looked at is
        // one more operation (the head was already counted).
        let mut first = true;
        while self.head != NIL {
            if !first {
                self.ops.timer_ops += 1;
            }
            first = false;
            if self.slab.get(self.head).key != 0 {
                break;
            }
            let h = self.head;
            out.push(self.unlink(h));
            self.ops.expired += 1;
        }
    }

    fn next_deadline(&self) -> Option<Tick> {
        (self.head != NIL).then(|| self.now + self.slab.get(self.head).key)
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

    /// Figure 13 of the seed: A sleeps 10, B 17 (key 7), then C 14 goes between them. (The
    /// seed inserts C a tick later, hence its 5; here all three are inserted at tick 0.)
    #[test]
    fn keys_are_relative_and_cancel_folds_into_successor() {
        let mut q = DeltaList::new();
        let _a = q.insert(10, 'A');
        let _b = q.insert(17, 'B');
        let c = q.insert(14, 'C');
        let keys: Vec<Tick> = {
            let mut v = vec![];
            let mut i = q.head;
            while i != NIL {
                v.push(q.slab.get(i).key);
                i = q.slab.get(i).next;
            }
            v
        };
        assert_eq!(keys, vec![10, 4, 3]);
        assert_eq!(q.cancel(c), Some('C'));
        assert_eq!(q.next_deadline(), Some(10));
        let mut out = vec![];
        q.advance_to(17, &mut out);
        assert_eq!(out, vec![(10, 'A'), (17, 'B')]);
        assert!(q.is_empty());
        // 17 ticks with a non-empty list: one op per tick for the head plus the look at B
        // after A expired at tick 10.
        assert_eq!(q.ops().timer_ops, 18);
    }
}
