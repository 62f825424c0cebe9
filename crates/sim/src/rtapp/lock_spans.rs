//! rt-app's `lock` / `unlock` events mapped onto schedlab's locks. A schedlab lock is held over
//! one whole CPU burst (`LockUse { name, burst }`), so a mutex is taken only where the locked
//! stretch is exactly one CPU burst: locked before the burst's first run, unlocked after its
//! last, no sleep in between. Nested mutexes must cover the same burst. Anything else — a lock
//! taken in the middle of a run, a sleep or a further run while it is held, a lock held over no
//! run, an unlock of a mutex not held — is refused by its key, never approximated.

use super::*;
use crate::workload::LockUse;

/// A mutex taken and not yet released.
struct Held {
    name: String,
    key: String,
    /// How many bursts had been built when it was taken (a run since then makes its burst).
    bursts_at_lock: usize,
    /// Locks taken before it in this burst list: a burst's locks are listed in the order taken.
    order: usize,
}

/// The locks of one burst list as it is built event by event.
#[derive(Default)]
pub(super) struct LockSpans {
    held: Vec<Held>,
    /// The current CPU burst ended in an unlock: a further run would extend it past the lock.
    sealed: bool,
    taken: usize,
    /// (order taken, use).
    uses: Vec<(usize, LockUse)>,
}

impl LockSpans {
    /// Before a run of non-zero length; `continues` = it extends the CPU burst being built.
    pub(super) fn before_run(&self, t: &Thread, key: &dyn Fn() -> String, continues: bool) -> Result<(), RtAppError> {
        if continues && self.sealed {
            return Err(t.at(&key()).err(
                "a run right after an unlock continues the CPU burst the mutex was held over: schedlab holds a lock for a whole CPU burst",
            ));
        }
        Ok(())
    }

    /// Before a sleep of non-zero length.
    pub(super) fn before_sleep(&mut self, t: &Thread, key: &dyn Fn() -> String) -> Result<(), RtAppError> {
        if let Some(h) = self.held.last() {
            return Err(t.at(&key()).err(format!(
                "a sleep while mutex \"{}\" is held: schedlab holds a lock over one CPU burst, not across a block",
                h.name
            )));
        }
        self.sealed = false;
        Ok(())
    }

    /// `lock`: `in_cpu_burst` = a CPU burst is being built (the lock would cover only its end).
    pub(super) fn lock(
        &mut self,
        t: &Thread,
        key: &str,
        name: &str,
        bursts: usize,
        in_cpu_burst: bool,
    ) -> Result<(), RtAppError> {
        if self.held.iter().any(|h| h.name == name) {
            return Err(t
                .at(key)
                .err(format!("mutex \"{name}\" is already held by this thread (rt-app would deadlock)")));
        }
        if in_cpu_burst {
            return Err(t.at(key).err(format!(
                "mutex \"{name}\" is taken after a run, in the middle of a CPU burst: schedlab holds a lock for a whole CPU burst (put a sleep before the lock)"
            )));
        }
        self.held.push(Held {
            name: name.to_string(),
            key: key.to_string(),
            bursts_at_lock: bursts,
            order: self.taken,
        });
        self.taken += 1;
        Ok(())
    }

    /// `unlock`, with the bursts built so far (the last one is the CPU burst it was held over).
    pub(super) fn unlock(&mut self, t: &Thread, key: &str, name: &str, bursts: usize) -> Result<(), RtAppError> {
        let Some(pos) = self.held.iter().rposition(|h| h.name == name) else {
            return Err(t.at(key).err(format!("unlock of mutex \"{name}\", which this thread does not hold")));
        };
        let h = self.held.remove(pos);
        if bursts == h.bursts_at_lock {
            return Err(t
                .at(&h.key)
                .err(format!("mutex \"{name}\" is held over no run: schedlab's locks are held over CPU bursts")));
        }
        self.uses.push((h.order, LockUse { name: h.name, burst: (bursts - 1) / 2 }));
        self.sealed = true;
        Ok(())
    }

    /// The body ended: its locks in the order taken. `cut`: rt-app stopped the thread at
    /// `global.duration` with whatever it held (a mutex held over a run keeps that burst);
    /// otherwise a mutex still held is refused.
    pub(super) fn finish(mut self, t: &Thread, bursts: usize, cut: bool) -> Result<Vec<LockUse>, RtAppError> {
        for h in std::mem::take(&mut self.held) {
            if !cut {
                return Err(t.at(&h.key).err(format!("mutex \"{}\" is never unlocked", h.name)));
            }
            if bursts > h.bursts_at_lock {
                self.uses.push((h.order, LockUse { name: h.name, burst: (bursts - 1) / 2 }));
            }
        }
        self.uses.sort_by_key(|(order, _)| *order);
        Ok(self.uses.into_iter().map(|(_, u)| u).collect())
    }
}
