//! Three of the four peers, each used the way its documentation shows, on the same workload
//! (bitwheel, which needs sizing, has [`super::bitwheel_peer`]):
//!
//! - `std_binaryheap`: `std::collections::BinaryHeap<Reverse<(deadline, id)>>` used directly,
//!   with *lazy* cancellation (a flag per timer, skipped when popped) — the usual way to use
//!   it, and cheaper than true removal: the skipped entries are paid for in the expiry phase.
//! - `tokio_delayqueue`: tokio-util's `DelayQueue` (a hierarchical wheel of 6 levels × 64
//!   slots, 1 ms resolution, entries in a slab) in a current-thread runtime with *paused* time:
//!   `tokio::time::advance(1 ms)` per tick, then `poll_expired` until it is pending, so it does
//!   the same work without 10 s of real waiting.
//! - `hierarchical_hash_wheel_timer`: its cancellable `QuadWheelWithOverflow` (4 byte-wheels of
//!   256 slots, 1 ms per tick, range 2^32 ms, so 10,000 ms fits its first two wheels) with
//!   `IdOnlyTimerEntry<u32>` entries, `cancel(&id)` and one `tick()` per ms, as its
//!   cancellable-module example does. Its cancel only removes the id from an `FxHashMap`; the
//!   wheel holds a `Weak` that is dropped when its slot comes up (in the expiry phase).

use super::phases::{Laps, Phases};
use super::workload::Workload;
use anyhow::{bail, Context};
use hierarchical_hash_wheel_timer::wheels::cancellable::QuadWheelWithOverflow;
use hierarchical_hash_wheel_timer::IdOnlyTimerEntry;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::poll_fn;
use std::task::Poll;
use std::time::Duration;

/// `BinaryHeap` with lazy cancellation.
pub fn std_heap(w: &Workload) -> Phases {
    let mut laps = Laps::start();
    let mut heap = BinaryHeap::new();
    let setup_s = laps.lap();
    for (i, &d) in w.deadlines.iter().enumerate() {
        heap.push(Reverse((d, i as u32)));
    }
    let mut cancelled = vec![false; w.deadlines.len()];
    let insert_s = laps.lap();
    for &c in &w.cancels {
        cancelled[c as usize] = true;
    }
    let cancel_s = laps.lap();
    let mut expired = 0;
    for now in 1..=w.ticks {
        while let Some(&Reverse((d, id))) = heap.peek() {
            if d > now {
                break;
            }
            heap.pop();
            if !cancelled[id as usize] {
                expired += 1;
            }
        }
    }
    let expiry_s = laps.lap();
    Phases { setup_s, insert_s, cancel_s, expiry_s, expired }
}

/// tokio-util's `DelayQueue` on tokio's paused clock.
pub fn tokio_delay_queue(w: &Workload) -> anyhow::Result<Phases> {
    let mut laps = Laps::start();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .context("building a tokio runtime")?;
    Ok(rt.block_on(async {
        let mut dq = tokio_util::time::DelayQueue::new();
        let setup_s = laps.lap();
        let keys: Vec<_> =
            w.deadlines.iter().enumerate().map(|(i, &d)| dq.insert(i as u32, Duration::from_millis(d))).collect();
        let insert_s = laps.lap();
        for &c in &w.cancels {
            dq.remove(&keys[c as usize]);
        }
        let cancel_s = laps.lap();
        let mut expired = 0;
        for _ in 0..w.ticks {
            tokio::time::advance(Duration::from_millis(1)).await;
            while let Poll::Ready(Some(_)) = poll_fn(|cx| Poll::Ready(dq.poll_expired(cx))).await {
                expired += 1;
            }
        }
        let expiry_s = laps.lap();
        Phases { setup_s, insert_s, cancel_s, expiry_s, expired }
    }))
}

/// hierarchical_hash_wheel_timer's cancellable quad wheel.
pub fn hash_wheel(w: &Workload) -> anyhow::Result<Phases> {
    let mut laps = Laps::start();
    let mut q: QuadWheelWithOverflow<IdOnlyTimerEntry<u32>> = QuadWheelWithOverflow::new();
    let setup_s = laps.lap();
    let mut refused = 0u64;
    for (i, &d) in w.deadlines.iter().enumerate() {
        // A delay of 0 is refused as already expired; the workload's deadlines are ≥ 1 ms.
        refused += q.insert(IdOnlyTimerEntry::new(i as u32, Duration::from_millis(d))).is_err() as u64;
    }
    let insert_s = laps.lap();
    let mut missing = 0u64;
    for c in &w.cancels {
        missing += q.cancel(c).is_err() as u64;
    }
    let cancel_s = laps.lap();
    let mut expired = 0;
    for _ in 0..w.ticks {
        expired += q.tick().len() as u64;
    }
    let expiry_s = laps.lap();
    if refused + missing > 0 {
        bail!("hierarchical_hash_wheel_timer refused {refused} inserts and found {missing} timers to cancel missing");
    }
    Ok(Phases { setup_s, insert_s, cancel_s, expiry_s, expired })
}
