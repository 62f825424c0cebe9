//! Pending events of the engine, packed so the event heap compares one `u128`: the key holds
//! the time (high 64 bits), the order class (bit 63: 0 = releases and I/O completions, 1 = CPU
//! stops) and a sequence number (low 63 bits), so events at one instant run in a fixed order.
//!
//! A CPU's *live* stop (the end of what runs on it now) is not kept here but in the CPU's own
//! slot, with a sequence number from [`EventQueue::take_seq`]; only a stop made stale by a
//! pre-emption is pushed here (with its original key), where it is counted when it comes due and
//! otherwise ignored, as before. This keeps the heap empty on the common path.

use crate::policy::{TaskId, Time};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// What happens when an event fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// The next job of a periodic task is released.
    Release(TaskId),
    /// The task's I/O burst is over.
    IoDone(TaskId),
    /// A CPU stop made stale by a pre-emption: counted as an event when due, nothing else.
    StaleStop,
    /// The deadline of a task's job has come (only set under `OnMiss::Abort`).
    Deadline(TaskId),
}

const TAG_SHIFT: u32 = 62;

impl Kind {
    #[inline]
    fn encode(self) -> u64 {
        match self {
            Kind::Release(t) => t as u64,
            Kind::IoDone(t) => (1 << TAG_SHIFT) | t as u64,
            Kind::StaleStop => 2 << TAG_SHIFT,
            Kind::Deadline(t) => (3 << TAG_SHIFT) | t as u64,
        }
    }

    #[inline]
    fn decode(p: u64) -> Kind {
        let low = p & ((1 << TAG_SHIFT) - 1);
        match p >> TAG_SHIFT {
            0 => Kind::Release(low as TaskId),
            1 => Kind::IoDone(low as TaskId),
            2 => Kind::StaleStop,
            _ => Kind::Deadline(low as TaskId),
        }
    }
}

/// A pending event in 24 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Event {
    key: u128,
    payload: u64,
}

impl Ord for Event {
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest first. Keys are unique.
        o.key.cmp(&self.key)
    }
}

impl PartialOrd for Event {
    #[inline]
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// The engine's future: events ordered by (time, order class, insertion).
#[derive(Default)]
pub(super) struct EventQueue {
    heap: BinaryHeap<Event>,
    seq: u64,
}

impl EventQueue {
    /// Schedule `kind` at `time`; `late` events (CPU stops) run after the others of that instant.
    #[inline]
    pub fn push(&mut self, time: Time, late: bool, kind: Kind) {
        let seq = self.take_seq();
        self.push_with_seq(time, late, seq, kind);
    }

    /// The next sequence number (insertion order among events of one instant and class).
    #[inline]
    pub fn take_seq(&mut self) -> u64 {
        self.seq += 1;
        debug_assert!(self.seq < 1 << 63);
        self.seq
    }

    /// Schedule `kind` with a sequence number taken earlier.
    #[inline]
    pub fn push_with_seq(&mut self, time: Time, late: bool, seq: u64, kind: Kind) {
        let key = ((time as u128) << 64) | ((late as u128) << 63) | seq as u128;
        self.heap.push(Event { key, payload: kind.encode() });
    }

    /// Time of the earliest event.
    #[inline]
    pub fn next_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| (e.key >> 64) as Time)
    }

    /// Remove and return the earliest event if it is due at `now`.
    #[inline]
    pub fn pop_due(&mut self, now: Time) -> Option<Kind> {
        if self.next_time() != Some(now) {
            return None;
        }
        self.heap.pop().map(|e| Kind::decode(e.payload))
    }

    /// Remove and return the earliest event if it is due at `now` and not a late one.
    #[inline]
    pub fn pop_due_early(&mut self, now: Time) -> Option<Kind> {
        let top = self.heap.peek()?.key;
        if (top >> 64) as Time != now || (top >> 63) & 1 == 1 {
            return None;
        }
        self.heap.pop().map(|e| Kind::decode(e.payload))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_and_order_is_time_class_then_insertion() {
        for k in [Kind::Release(7), Kind::IoDone(1 << 40), Kind::StaleStop] {
            assert_eq!(Kind::decode(k.encode()), k);
        }
        let mut q = EventQueue::default();
        q.push(5, true, Kind::StaleStop);
        q.push(5, false, Kind::IoDone(2));
        q.push(5, false, Kind::Release(3));
        q.push(4, true, Kind::Release(1));
        assert_eq!(q.pop_due(5), None);
        assert_eq!(q.pop_due(4), Some(Kind::Release(1)));
        assert_eq!(q.pop_due(5), Some(Kind::IoDone(2)));
        assert_eq!(q.pop_due(5), Some(Kind::Release(3)));
        assert_eq!(q.pop_due(5), Some(Kind::StaleStop));
        assert_eq!(q.next_time(), None);
    }

    #[test]
    fn early_pops_skip_late_events_and_kept_sequence_numbers_order_them() {
        let mut q = EventQueue::default();
        let kept = q.take_seq();
        q.push(5, false, Kind::IoDone(1));
        q.push_with_seq(5, true, kept, Kind::Release(0));
        q.push(5, true, Kind::Release(1));
        assert_eq!(q.pop_due_early(5), Some(Kind::IoDone(1)));
        assert_eq!(q.pop_due_early(5), None);
        // The stop whose number was taken first comes first.
        assert_eq!(q.pop_due(5), Some(Kind::Release(0)));
        assert_eq!(q.pop_due(5), Some(Kind::Release(1)));
    }
}
