//! A slab of entries addressed by [`Handle`]s: a Vec of slots, a free list, and a generation
//! per slot so a handle to a freed (and possibly reused) slot is recognised as stale.

use crate::Handle;

struct Slot<E> {
    gen: u32,
    entry: Option<E>,
}

/// Entries of type `E`, each reachable by index (inside a queue) or by handle (from callers).
pub(crate) struct Slab<E> {
    slots: Vec<Slot<E>>,
    free: Vec<u32>,
    len: usize,
}

impl<E> Slab<E> {
    pub fn new() -> Self {
        Slab { slots: Vec::new(), free: Vec::new(), len: 0 }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// Store an entry; returns its handle.
    pub fn insert(&mut self, e: E) -> Handle {
        self.len += 1;
        if let Some(idx) = self.free.pop() {
            let s = &mut self.slots[idx as usize];
            s.entry = Some(e);
            Handle { idx, gen: s.gen }
        } else {
            let idx = u32::try_from(self.slots.len()).expect("more than 2^32 timers");
            self.slots.push(Slot { gen: 0, entry: Some(e) });
            Handle { idx, gen: 0 }
        }
    }

    /// The index of a live handle, or `None` if it is stale.
    pub fn resolve(&self, h: Handle) -> Option<u32> {
        let s = self.slots.get(h.idx as usize)?;
        (s.gen == h.gen && s.entry.is_some()).then_some(h.idx)
    }

    /// The live entry at `idx` (panics on a free slot: an internal invariant).
    #[inline]
    pub fn get(&self, idx: u32) -> &E {
        self.slots[idx as usize].entry.as_ref().expect("live slab slot")
    }

    #[inline]
    pub fn get_mut(&mut self, idx: u32) -> &mut E {
        self.slots[idx as usize].entry.as_mut().expect("live slab slot")
    }

    /// Free the slot at `idx` and return its entry.
    pub fn remove(&mut self, idx: u32) -> E {
        let s = &mut self.slots[idx as usize];
        let e = s.entry.take().expect("live slab slot");
        s.gen = s.gen.wrapping_add(1);
        self.free.push(idx);
        self.len -= 1;
        e
    }
}
