//! schedlab-timerq: timer queues behind one [`TimerQueue`] trait (seed 000).
//!
//! Four implementations, one file each, all pure (no clocks, no threads): time is a tick
//! counter the caller advances.
//!
//! | kind | insert | cancel | per tick |
//! |---|---|---|---|
//! | [`control::ControlList`] (seed 000's Figures 8/10) | O(1) | O(1) | O(n): every entry decremented |
//! | [`delta::DeltaList`] (seed 000's delta queue, Xinu's `insertd`) | O(n) | O(1) | O(1): only the head |
//! | [`heap::Heap`] (4-ary min-heap with handles) | O(log n) | O(log n) | O(1) + O(log n) per expiry |
//! | [`wheel::Wheel`] (hierarchical timing wheel, 64 slots per level) | O(1) | amortised O(1): lazy, swept | amortised O(1) |
//!
//! Every queue counts its *timer operations*: entries touched while the clock advances
//! (summed over ticks), so seed 000's hypothesis — Δ = max(x) for the delta list versus
//! Γ = Σx for the control list — can be measured rather than asserted.

#![forbid(unsafe_code)]

pub mod control;
pub mod delta;
pub mod heap;
mod slab;
pub mod wheel;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A point on the queue's clock, in ticks since the queue was created.
pub type Tick = u64;

/// Names an inserted entry so it can be cancelled. Stale handles (the entry expired or was
/// cancelled, even if its slot was reused) are recognised by a generation count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Handle {
    pub(crate) idx: u32,
    pub(crate) gen: u32,
}

/// Work counters. `timer_ops` is the quantity of seed 000's hypothesis.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpCounts {
    /// Entries touched (key read or written, entry moved) while advancing the clock, summed over ticks.
    pub timer_ops: u64,
    /// Entries touched while inserting (the delta list's walk, the heap's sift-up).
    pub insert_ops: u64,
    /// Ticks advanced.
    pub ticks: u64,
    /// Entries that expired.
    pub expired: u64,
}

/// A queue of entries that expire at a tick.
///
/// Semantics shared by every implementation (and checked against a sorted-Vec model by the
/// property tests): `insert(delay, v)` at clock `now` makes `v` expire on the tick that brings
/// the clock to `now + max(delay, 1)` — never earlier, never later, never on the current tick.
pub trait TimerQueue<T> {
    /// Add an entry that expires `delay` ticks from now (a delay of 0 counts as 1).
    fn insert(&mut self, delay: Tick, value: T) -> Handle;
    /// Remove a pending entry; `None` if it already expired or was cancelled.
    fn cancel(&mut self, handle: Handle) -> Option<T>;
    /// Advance the clock by one tick and append what expired on it to `out`.
    fn tick(&mut self, out: &mut Vec<T>);
    /// Advance the clock to `until` (no-op if not in the future), appending `(tick, value)`
    /// for everything that expired, in tick order.
    fn advance_to(&mut self, until: Tick, out: &mut Vec<(Tick, T)>) {
        let mut buf = Vec::new();
        while self.now() < until {
            self.tick(&mut buf);
            let now = self.now();
            out.extend(buf.drain(..).map(|v| (now, v)));
        }
    }
    /// The earliest pending deadline (absolute tick), if any.
    fn next_deadline(&self) -> Option<Tick>;
    /// Entries pending.
    fn len(&self) -> usize;
    /// True when nothing is pending.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The current tick.
    fn now(&self) -> Tick;
    /// Work done so far.
    fn ops(&self) -> OpCounts;
}

/// The four queue kinds, by name (`control`, `delta`, `heap`, `wheel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Control,
    Delta,
    Heap,
    Wheel,
}

impl Kind {
    /// All kinds, in report order.
    pub const ALL: [Kind; 4] = [Kind::Control, Kind::Delta, Kind::Heap, Kind::Wheel];

    /// The lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Control => "control",
            Kind::Delta => "delta",
            Kind::Heap => "heap",
            Kind::Wheel => "wheel",
        }
    }

    /// A new, empty queue of this kind.
    pub fn new_queue<T: Send + 'static>(self) -> Box<dyn TimerQueue<T> + Send> {
        match self {
            Kind::Control => Box::new(control::ControlList::new()),
            Kind::Delta => Box::new(delta::DeltaList::new()),
            Kind::Heap => Box::new(heap::Heap::new()),
            Kind::Wheel => Box::new(wheel::Wheel::new()),
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Kind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == s.trim().to_ascii_lowercase())
            .ok_or_else(|| format!("unknown queue kind '{s}' (known: control, delta, heap, wheel)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_and_reject_unknown_names() {
        assert_eq!("wheel".parse::<Kind>().unwrap(), Kind::Wheel);
        assert_eq!("Delta".parse::<Kind>().unwrap(), Kind::Delta);
        let e = "splay".parse::<Kind>().unwrap_err();
        assert!(e.contains("'splay'"), "{e}");
    }
}
