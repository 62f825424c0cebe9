//! Run-queue building blocks shared by the policies: per-task tables indexed by [`TaskId`],
//! remembered CPU affinity, a FIFO queue and a key-ordered queue (a red-black tree in Linux;
//! a binary heap with lazy deletion here) that both skip tasks not allowed on the picking CPU.
//! Large per-task tables hand their memory on to the next run's (see [`spare`]).

use crate::policy::{CpuId, EnqueueReason, TaskId, TaskView};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A per-task value, grown on demand (task ids are small dense integers in every host). A large
/// table's buffer is kept when the table is dropped, for the next table of its type ([`spare`]).
#[derive(Debug, Clone, Default)]
pub struct PerTask<T: Clone + Default + 'static>(Vec<T>);

impl<T: Clone + Default + 'static> Drop for PerTask<T> {
    fn drop(&mut self) {
        spare::put(std::mem::take(&mut self.0));
    }
}

impl<T: Clone + Default + 'static> PerTask<T> {
    #[inline]
    pub fn get(&self, t: TaskId) -> T {
        self.0.get(t).cloned().unwrap_or_default()
    }

    #[inline]
    pub fn get_ref(&self, t: TaskId) -> Option<&T> {
        self.0.get(t)
    }

    pub fn set(&mut self, t: TaskId, v: T) {
        *self.get_mut(t) = v;
    }

    /// The entry of `t` if the table already reaches it (no growth).
    #[inline]
    pub fn get_mut_existing(&mut self, t: TaskId) -> Option<&mut T> {
        self.0.get_mut(t)
    }

    #[inline]
    pub fn get_mut(&mut self, t: TaskId) -> &mut T {
        if t >= self.0.len() {
            // The next id within the capacity, as in most runs (ids come in order): no call
            // (without this, linux ran 16% slower: the out-of-line call on every new task).
            if t == self.0.len() && t < self.0.capacity() {
                self.0.push(T::default());
            } else {
                self.grow(t);
            }
        }
        &mut self.0[t]
    }

    /// Reach `t`. The capacity grows geometrically (hosts number tasks 0, 1, 2, … so growing
    /// it to `t + 1` each time would call into the allocator once per new task), but entries are
    /// written only up to `t` and at most [`AHEAD`](Self::AHEAD) beyond the old length: a large
    /// buffer's untouched tail stays out of resident memory (10 million tasks would otherwise
    /// touch up to 16.7 million entries), and a policy that reaches ids out of order (srtf
    /// picks the shortest, not the oldest) does not come here for every new highest id.
    #[cold]
    fn grow(&mut self, t: TaskId) {
        if t >= self.0.capacity() {
            let cap = (t + 1).max(2 * self.0.capacity()).max(16);
            if let Some(mut v) = spare::take::<T>(cap) {
                v.extend_from_slice(&self.0);
                self.0 = v;
            } else {
                self.0.reserve_exact(cap - self.0.len());
            }
        }
        // The capacity reaches `t` now, so the length does too.
        let len = (t + 1).max(self.0.len() + Self::AHEAD).min(self.0.capacity());
        self.0.resize(len, T::default());
    }

    /// Entries written ahead of the id reached when the table grows.
    const AHEAD: usize = 256;
}

/// Buffers of dropped [`PerTask`] tables, kept per thread for the next table of the same type.
///
/// A run grows its tables to the number of tasks (megabytes at 100,000 tasks) and frees them at
/// its end. Whether the allocator then keeps that memory for the next run or hands it back to
/// the system (which zeroes it again, a page fault per 4 KiB, when the next run touches it)
/// depends on where its other blocks happen to lie: the same run of the same policy took 1.4×
/// as long in one process as in another that had parsed one more argument. Kept here, the next
/// run's table starts in memory already touched, whatever the allocator does. Only buffers of
/// at least [`MIN_BYTES`] are kept, at most [`MAX_BYTES`] in all (the oldest go first).
pub mod spare {
    use std::any::Any;
    use std::cell::RefCell;
    use std::collections::VecDeque;

    /// Smaller buffers are not worth keeping (the allocator reuses them anyway).
    pub const MIN_BYTES: usize = 64 << 10;
    /// The most kept per thread.
    pub const MAX_BYTES: usize = 64 << 20;

    /// Kept buffers (each an empty `Vec<T>` of some `T`) with their sizes in bytes, and the sum.
    type Kept = (VecDeque<(usize, Box<dyn Any>)>, usize);

    thread_local! {
        static SPARE: RefCell<Kept> = const { RefCell::new((VecDeque::new(), 0)) };
    }

    fn bytes<T>(v: &Vec<T>) -> usize {
        v.capacity() * size_of::<T>()
    }

    /// Keep `v`'s buffer (emptied) if it is large enough.
    pub fn put<T: 'static>(mut v: Vec<T>) {
        let b = bytes(&v);
        if !(MIN_BYTES..=MAX_BYTES).contains(&b) {
            return;
        }
        v.clear();
        // At thread exit the store may be gone already: then the buffer is simply freed.
        let _ = SPARE.try_with(|s| {
            let (kept, total) = &mut *s.borrow_mut();
            while *total + b > MAX_BYTES {
                let Some((old, _)) = kept.pop_front() else { break };
                *total -= old;
            }
            kept.push_back((b, Box::new(v)));
            *total += b;
        });
    }

    /// An empty `Vec<T>` with room for at least `len` values, if one is kept.
    pub fn take<T: 'static>(len: usize) -> Option<Vec<T>> {
        if len * size_of::<T>() < MIN_BYTES {
            return None;
        }
        SPARE
            .try_with(|s| {
                let (kept, total) = &mut *s.borrow_mut();
                let i =
                    kept.iter().position(|(_, v)| v.downcast_ref::<Vec<T>>().is_some_and(|v| v.capacity() >= len))?;
                let (b, v) = kept.remove(i)?;
                *total -= b;
                v.downcast::<Vec<T>>().ok().map(|v| *v)
            })
            .ok()
            .flatten()
    }

    /// Bytes kept by this thread (for tests).
    pub fn kept_bytes() -> usize {
        SPARE.try_with(|s| s.borrow().1).unwrap_or(0)
    }
}

/// Per-task state kept only from a task's first store until [`LiveTable::remove`] (its exit):
/// the values sit in a few slots that exited tasks hand on, and each task id costs only a
/// 4-byte slot number. A run of 100,000 tasks of which a few dozen live at once then touches
/// 400 KB instead of a [`PerTask`] row per task (tens of bytes each, megabytes in all, grown
/// and page-faulted afresh by every run); and the slots, few, stay in cache.
#[derive(Debug, Clone)]
pub struct LiveTable<T: Copy + Default> {
    /// Per task id: its slot + 1 (0 = none).
    slot_of: PerTask<u32>,
    slots: Vec<T>,
    /// Slots handed back, reused last-in first-out (the most recently touched first).
    free: Vec<u32>,
}

impl<T: Copy + Default> Default for LiveTable<T> {
    fn default() -> Self {
        LiveTable { slot_of: PerTask::default(), slots: Vec::new(), free: Vec::new() }
    }
}

impl<T: Copy + Default> LiveTable<T> {
    #[inline]
    fn slot(&self, t: TaskId) -> Option<usize> {
        match self.slot_of.get_ref(t) {
            Some(&s) if s != 0 => Some(s as usize - 1),
            _ => None,
        }
    }

    /// The value of `t`, if it has one.
    #[inline]
    pub fn get(&self, t: TaskId) -> Option<&T> {
        self.slot(t).map(|s| &self.slots[s])
    }

    /// The value of `t`, if it has one.
    #[inline]
    pub fn get_mut(&mut self, t: TaskId) -> Option<&mut T> {
        self.slot(t).map(|s| &mut self.slots[s])
    }

    /// The value of `t`, made `T::default()` first if it has none.
    #[inline]
    pub fn entry(&mut self, t: TaskId) -> &mut T {
        let s = match self.slot(t) {
            Some(s) => s,
            None => self.insert(t),
        };
        &mut self.slots[s]
    }

    fn insert(&mut self, t: TaskId) -> usize {
        let s = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = T::default();
                s as usize
            }
            None => {
                self.slots.push(T::default());
                self.slots.len() - 1
            }
        };
        *self.slot_of.get_mut(t) = s as u32 + 1;
        s
    }

    /// Forget `t`: its value is `T::default()` again, its slot goes to the next new task.
    #[inline]
    pub fn remove(&mut self, t: TaskId) {
        if let Some(s) = self.slot(t) {
            *self.slot_of.get_mut(t) = 0;
            self.free.push(s as u32);
        }
    }
}

/// Each task's allowed CPUs as last seen at enqueue.
#[derive(Debug, Clone, Default)]
pub struct Affinity {
    masks: Vec<Option<Vec<CpuId>>>,
    restricted: usize,
}

impl Affinity {
    /// Remember the affinity of `t`.
    #[inline]
    pub fn note(&mut self, t: &TaskView) {
        // Nothing restricted so far and nothing new: every remembered mask is None already.
        if self.restricted != 0 || t.affinity.is_some() {
            self.note_slow(t.id, t.affinity);
        }
    }

    /// Takes the two fields rather than the view, so the view need not be built in memory.
    #[cold]
    fn note_slow(&mut self, id: TaskId, affinity: Option<&[CpuId]>) {
        if id >= self.masks.len() {
            if affinity.is_none() {
                return;
            }
            self.masks.resize(id + 1, None);
        }
        if self.masks[id].as_deref() != affinity {
            self.restricted = self.restricted + usize::from(affinity.is_some()) - usize::from(self.masks[id].is_some());
            self.masks[id] = affinity.map(<[CpuId]>::to_vec);
        }
    }

    /// Is any task restricted to some CPUs?
    #[inline]
    pub fn any_restricted(&self) -> bool {
        self.restricted != 0
    }

    /// May `t` run on `cpu`?
    #[inline]
    pub fn allowed(&self, t: TaskId, cpu: CpuId) -> bool {
        self.restricted == 0 || self.masks.get(t).and_then(|m| m.as_ref()).is_none_or(|m| m.contains(&cpu))
    }
}

/// A FIFO run queue (FCFS, RR, WRR-like policies).
#[derive(Debug, Clone, Default)]
pub struct Fifo {
    q: VecDeque<TaskId>,
    pub affinity: Affinity,
}

impl Fifo {
    #[inline]
    pub fn push_back(&mut self, t: &TaskView) {
        self.affinity.note(t);
        self.q.push_back(t.id);
    }

    #[inline]
    pub fn push_front(&mut self, t: &TaskView) {
        self.affinity.note(t);
        self.q.push_front(t.id);
    }

    /// Queue `t` as Linux's `enqueue_task` does: a pre-empted task goes back to the head, any
    /// other runnable task to the tail.
    #[inline]
    pub fn enqueue(&mut self, t: &TaskView, why: EnqueueReason) {
        if why == EnqueueReason::Preempted {
            self.push_front(t);
        } else {
            self.push_back(t);
        }
    }

    /// Remove and return the first task allowed on `cpu`.
    #[inline]
    pub fn pop(&mut self, cpu: CpuId) -> Option<TaskId> {
        if self.affinity.restricted == 0 {
            return self.q.pop_front();
        }
        self.pop_allowed(cpu)
    }

    #[cold]
    fn pop_allowed(&mut self, cpu: CpuId) -> Option<TaskId> {
        let pos = self.q.iter().position(|&t| self.affinity.allowed(t, cpu))?;
        if pos == 0 {
            self.q.pop_front()
        } else {
            self.q.remove(pos)
        }
    }

    pub fn remove(&mut self, t: TaskId) {
        if let Some(p) = self.q.iter().position(|&x| x == t) {
            self.q.remove(p);
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.q.len()
    }

    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
}

/// A run queue ordered by a key, first come first served among equal keys: a binary heap with
/// lazy deletion (a removed or re-keyed task leaves a stale heap entry that `pop` skips), which
/// is cheaper than a balanced tree for the pop-min / push pattern of a scheduler.
#[derive(Debug, Clone)]
pub struct KeyQueue<K: Ord + Copy + Default + 'static> {
    heap: BinaryHeap<Reverse<(K, i64, TaskId)>>,
    entry: PerTask<Option<(K, i64)>>,
    len: usize,
    back: i64,
    front: i64,
    skipped: Vec<(K, i64, TaskId)>,
    pub affinity: Affinity,
}

impl<K: Ord + Copy + Default + 'static> Default for KeyQueue<K> {
    fn default() -> Self {
        KeyQueue {
            heap: BinaryHeap::new(),
            entry: PerTask::default(),
            len: 0,
            back: 0,
            front: 0,
            skipped: Vec::new(),
            affinity: Affinity::default(),
        }
    }
}

impl<K: Ord + Copy + Default + 'static> KeyQueue<K> {
    /// Queue `t` behind every task with the same key.
    pub fn push(&mut self, t: &TaskView, key: K) {
        self.back += 1;
        self.insert(t, key, self.back);
    }

    /// Queue `t` ahead of every task with the same key (a pre-empted task keeps its place).
    pub fn push_front(&mut self, t: &TaskView, key: K) {
        self.front -= 1;
        self.insert(t, key, self.front);
    }

    /// Queue `t` as Linux's `enqueue_task` does: a pre-empted task goes back to the head of its
    /// key, any other runnable task to the tail.
    pub fn enqueue(&mut self, t: &TaskView, key: K, why: EnqueueReason) {
        if why == EnqueueReason::Preempted {
            self.push_front(t, key);
        } else {
            self.push(t, key);
        }
    }

    #[inline]
    fn insert(&mut self, t: &TaskView, key: K, seq: i64) {
        self.remove(t.id);
        self.affinity.note(t);
        self.put(t.id, key, seq);
    }

    #[inline]
    fn put(&mut self, t: TaskId, key: K, seq: i64) {
        self.heap.push(Reverse((key, seq, t)));
        self.entry.set(t, Some((key, seq)));
        self.len += 1;
        if self.heap.len() > 2 * self.len + 64 {
            self.compact();
        }
    }

    /// Drop stale heap entries.
    fn compact(&mut self) {
        let entry = &self.entry;
        let live: Vec<_> = self
            .heap
            .drain()
            .filter(|Reverse((k, s, t))| entry.get_ref(*t).copied().flatten() == Some((*k, *s)))
            .collect();
        self.heap = BinaryHeap::from(live);
    }

    #[inline]
    fn live(&self, e: &(K, i64, TaskId)) -> bool {
        self.entry.get_ref(e.2).copied().flatten() == Some((e.0, e.1))
    }

    /// Queue `t` again (it was queued before, so its affinity is known) behind its equals.
    pub fn push_again(&mut self, t: TaskId, key: K) {
        self.remove(t);
        self.back += 1;
        self.put(t, key, self.back);
    }

    /// Move a queued task to `key`, behind its equals (its affinity is kept); false if absent.
    pub fn rekey(&mut self, t: TaskId, key: K) -> bool {
        if self.remove(t).is_none() {
            return false;
        }
        self.back += 1;
        self.put(t, key, self.back);
        true
    }

    /// Is `t` queued?
    pub fn contains(&self, t: TaskId) -> bool {
        self.entry.get_ref(t).copied().flatten().is_some()
    }

    /// The queued tasks, in queue order (key, then place among equals).
    pub fn members(&self) -> Vec<TaskId> {
        let mut v: Vec<&(K, i64, TaskId)> = self.heap.iter().map(|Reverse(e)| e).filter(|e| self.live(e)).collect();
        v.sort();
        v.into_iter().map(|e| e.2).collect()
    }

    /// Take `t` out of the queue; its key if it was queued.
    pub fn remove(&mut self, t: TaskId) -> Option<K> {
        let (k, _) = self.entry.get_ref(t).copied().flatten()?;
        self.entry.set(t, None);
        self.len -= 1;
        Some(k)
    }

    /// Remove and return the first (smallest key) task allowed on `cpu`.
    pub fn pop(&mut self, cpu: CpuId) -> Option<(TaskId, K)> {
        let mut found = None;
        while let Some(Reverse(e)) = self.heap.pop() {
            if !self.live(&e) {
                continue;
            }
            if self.affinity.allowed(e.2, cpu) {
                found = Some(e);
                break;
            }
            self.skipped.push(e);
        }
        for e in self.skipped.drain(..) {
            self.heap.push(Reverse(e));
        }
        let (k, _, t) = found?;
        self.entry.set(t, None);
        self.len -= 1;
        Some((t, k))
    }

    /// The smallest key queued.
    pub fn min_key(&mut self) -> Option<K> {
        while let Some(Reverse(e)) = self.heap.peek() {
            if self.live(e) {
                return Some(e.0);
            }
            self.heap.pop();
        }
        None
    }

    /// The queued key of `t`.
    pub fn key_of(&self, t: TaskId) -> Option<K> {
        self.entry.get_ref(t).copied().flatten().map(|e| e.0)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Tasks in the order they were queued, to find one that has waited too long (anti-starvation
/// in `solaris_ts` and `windows`) in amortised O(1).
#[derive(Debug, Clone, Default)]
pub struct WaitWatch {
    q: VecDeque<(crate::policy::Time, TaskId, u64)>,
    token: PerTask<u64>,
}

impl WaitWatch {
    /// `t` started waiting at `now`.
    pub fn note(&mut self, t: TaskId, now: crate::policy::Time) {
        let tok = self.token.get(t) + 1;
        self.token.set(t, tok);
        self.q.push_back((now, t, tok));
    }

    /// `t` stopped waiting (picked or removed).
    pub fn forget(&mut self, t: TaskId) {
        *self.token.get_mut(t) += 1;
    }

    /// The longest-waiting task if it has waited at least `limit`.
    pub fn starved(&mut self, now: crate::policy::Time, limit: crate::policy::Dur) -> Option<TaskId> {
        while let Some(&(at, t, tok)) = self.q.front() {
            if tok != self.token.get(t) {
                self.q.pop_front();
                continue;
            }
            if now.saturating_sub(at) >= limit {
                self.q.pop_front();
                *self.token.get_mut(t) += 1;
                return Some(t);
            }
            break;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_queue_orders_by_key_then_fifo_and_honours_affinity() {
        let mut q = KeyQueue::<i32>::default();
        q.push(&TaskView::new(0), 5);
        q.push(&TaskView::new(1), 1);
        q.push(&TaskView::new(2), 5);
        q.push_front(&TaskView::new(3), 5);
        q.push(&TaskView { affinity: Some(&[1]), ..TaskView::new(4) }, 0);
        assert_eq!(q.pop(0), Some((1, 1)));
        assert_eq!(q.pop(0), Some((3, 5)));
        assert_eq!(q.remove(0), Some(5));
        assert_eq!(q.pop(0), Some((2, 5)));
        assert_eq!(q.pop(0), None);
        assert_eq!(q.pop(1), Some((4, 0)));
        assert!(q.is_empty());
    }

    #[test]
    fn a_large_dropped_table_lends_its_buffer_to_the_next_one_of_its_type() {
        let n = spare::MIN_BYTES / size_of::<u64>() * 2;
        let mut a = PerTask::<u64>::default();
        a.set(n - 1, 7);
        let before = spare::kept_bytes();
        drop(a);
        assert!(spare::kept_bytes() >= before + n * size_of::<u64>(), "kept");
        // Another type does not take it; the next u64 table does, and starts empty.
        assert!(spare::take::<i64>(n).is_none());
        let mut b = PerTask::<u64>::default();
        b.set(n - 1, 1);
        assert_eq!((b.get(0), b.get(n - 2), b.get(n - 1)), (0, 0, 1));
        assert_eq!(spare::kept_bytes(), before);
        // Small tables are not kept.
        let mut c = PerTask::<u8>::default();
        c.set(10, 1);
        drop(c);
        assert_eq!(spare::kept_bytes(), before);
    }

    #[test]
    fn a_table_writes_entries_only_up_to_the_task_it_reaches() {
        let mut t = PerTask::<u64>::default();
        for id in 0..100 {
            t.set(id, id as u64);
            // Capacity grows by doubling; the written length is the capacity while it is small.
            assert_eq!(t.0.len(), t.0.capacity().min(id + PerTask::<u64>::AHEAD).max(id + 1));
        }
        assert!(t.0.capacity() < 200, "capacity {}", t.0.capacity());
        t.set(1000, 5);
        assert_eq!((t.get(999), t.get(1000), t.get(5000)), (0, 5, 0));
        // A large table is written up to the id reached and at most AHEAD beyond its old length.
        let far = 1 << 20;
        t.set(far, 1);
        assert_eq!(t.0.len(), far + 1);
        assert!(t.0.capacity() >= 2 * 1001);
        t.set(far + 1, 2);
        assert_eq!(t.0.len(), far + 1 + PerTask::<u64>::AHEAD, "AHEAD beyond the old length");
        t.set(far + 10, 3);
        assert_eq!(t.0.len(), far + 1 + PerTask::<u64>::AHEAD, "within what was written: no growth");
        assert_eq!((t.get(far), t.get(far + 1), t.get(far + 10)), (1, 2, 3));
    }

    #[test]
    fn live_table_rows_go_back_to_default_and_their_slots_are_reused() {
        let mut t = LiveTable::<(u32, u64)>::default();
        *t.entry(5) = (1, 2);
        *t.entry(900) = (3, 4);
        assert_eq!((t.get(5), t.get(6), t.get(900)), (Some(&(1, 2)), None, Some(&(3, 4))));
        t.remove(5);
        assert_eq!(t.get(5), None);
        assert_eq!(*t.entry(7), (0, 0), "a new row starts from the default");
        assert_eq!(t.slots.len(), 2, "task 7 took task 5's slot");
    }

    #[test]
    fn fifo_skips_disallowed() {
        let mut f = Fifo::default();
        f.push_back(&TaskView { affinity: Some(&[1]), ..TaskView::new(0) });
        f.push_back(&TaskView::new(1));
        assert_eq!(f.pop(0), Some(1));
        assert_eq!(f.pop(0), None);
        assert_eq!(f.pop(1), Some(0));
    }
}
