//! bitwheel as a peer, sized the way its README says ("Sizing for Your Workload": set
//! `SLOT_CAP` to the densest slot so inserts never probe or fail).
//!
//! bitwheel is a fixed-capacity wheel: `BitWheel<T, GEARS, RESOLUTION_MS, SLOT_CAP, MAX_PROBES>`
//! preallocates `64 × GEARS × SLOT_CAP` entries and refuses an insert whose slot (and its
//! `MAX_PROBES − 1` neighbours) is full. Here: 1 ms resolution like every other queue, 3 gears
//! (range 64³ ms ≈ 262 s, so 10,000 ms fits: its `PreciseWheel` shape) and `MAX_PROBES = 2`
//! (its "Large…" presets), with `SLOT_CAP` the smallest power of two, from 64 up to 2^19, that
//! holds the workload's densest slot — computed from the deadlines before the run. It never
//! cascades, so a slot of gear 2 (4,096 ms wide) holds every timer due in those 4 s: at 10^6
//! timers over 10 s that is ~410,000 timers, hence `SLOT_CAP` = 2^19 and ~2.4 GB preallocated
//! (setup, not timed). A workload whose densest slot needs more than 2^19 is not run (the
//! results say why) rather than overflowing into `BitWheelWithFailover`'s BTreeMap.
//!
//! Not cascading also means a timer fires when its *slot* comes up, not on its deadline: gear-1
//! timers (64..4,095 ms) up to 63 ms early, gear-2 timers up to 4,095 ms early. Every timer
//! still fires exactly once by the last tick, so the count matches; [`early_fires`] says how
//! many fired early, computed from the same arithmetic outside the timed run.
//!
//! Building a `SLOT_CAP` = 2^19 slot puts its 12 MB array on the stack before boxing it, so
//! bitwheel runs on a thread of its own with a 64 MB stack.

use super::phases::{Laps, Phases};
use super::workload::Workload;
use anyhow::{anyhow, bail};
use bitwheel::timer::{BitWheel, Timer, TimerHandle};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const GEARS: usize = 3;
const RESOLUTION_MS: u64 = 1;
const MAX_PROBES: usize = 2;
/// Ticks a 3-gear wheel can schedule ahead: 64³.
const RANGE_TICKS: u64 = 1 << (6 * GEARS);
/// The smallest and largest `SLOT_CAP` compiled in.
const MIN_SLOT_CAP: usize = 1 << 6;
pub const MAX_SLOT_CAP: usize = 1 << 19;
const STACK_BYTES: usize = 64 << 20;

/// The timer bitwheel fires: pushes its id into the context, as our queues push values.
struct Fire(u32);

impl Timer for Fire {
    type Context = Vec<u32>;

    fn fire(&mut self, ctx: &mut Vec<u32>) {
        ctx.push(self.0);
    }
}

/// Gear and slot bitwheel files a timer due `d` ticks after t = 0 in (its `gear_for_delay`
/// and `slot_for_tick`).
fn gear_slot(d: u64) -> (usize, usize) {
    let gear = (((63 - d.max(1).leading_zeros()) / 6) as usize).min(GEARS - 1);
    (gear, ((d >> (6 * gear)) & 63) as usize)
}

/// The tick at which bitwheel fires a timer due at `d` (inserted at t = 0): the first tick of
/// its slot, i.e. `d` rounded down to the gear's slot width.
pub fn fire_tick(d: u64) -> u64 {
    let (gear, slot) = gear_slot(d);
    (slot as u64) << (6 * gear)
}

/// Timers of the densest slot when every deadline is inserted at t = 0.
pub fn densest_slot(w: &Workload) -> usize {
    let mut count = vec![0usize; 64 * GEARS];
    for &d in &w.deadlines {
        let (g, s) = gear_slot(d);
        count[g * 64 + s] += 1;
    }
    count.into_iter().max().unwrap_or(0)
}

/// The `SLOT_CAP` used for `w`, or why bitwheel cannot run it as configured here.
pub fn slot_cap(w: &Workload) -> Result<usize, String> {
    if w.ticks >= RANGE_TICKS {
        return Err(format!("deadlines up to {} ms exceed a 3-gear 1 ms wheel's range of {RANGE_TICKS} ms", w.ticks));
    }
    let need = densest_slot(w);
    let cap = need.next_power_of_two().max(MIN_SLOT_CAP);
    if cap > MAX_SLOT_CAP {
        return Err(format!(
            "its densest slot holds {need} timers, more than the largest SLOT_CAP compiled in ({MAX_SLOT_CAP}, \
             ~2.4 GB preallocated)"
        ));
    }
    Ok(cap)
}

/// How many uncancelled timers bitwheel fires before their deadline, and the most ms early.
pub fn early_fires(w: &Workload) -> (u64, u64) {
    let cancelled = w.cancelled_mask();
    let mut n = 0;
    let mut most = 0;
    for (i, &d) in w.deadlines.iter().enumerate() {
        let early = d - fire_tick(d);
        if !cancelled[i] && early > 0 {
            n += 1;
            most = most.max(early);
        }
    }
    (n, most)
}

/// How bitwheel was configured for `w` (for the results document).
pub fn config(w: &Workload) -> Value {
    let (early, most) = early_fires(w);
    match slot_cap(w) {
        Ok(cap) => json!({
            "type": format!("BitWheel<_, {GEARS}, {RESOLUTION_MS}, {cap}, {MAX_PROBES}>"),
            "slot_cap": cap,
            "densest_slot": densest_slot(w),
            "preallocated_mb": (64 * GEARS * cap * entry_bytes()) as f64 / 1e6,
            "fired_early": early,
            "max_early_ms": most,
        }),
        Err(why) => json!({ "not_run": why }),
    }
}

/// Bytes per preallocated entry: an `Entry` enum of the timer and two list links.
fn entry_bytes() -> usize {
    std::mem::size_of::<(u32, usize, usize)>()
}

fn drive<const CAP: usize>(w: &Workload) -> anyhow::Result<Phases> {
    let mut laps = Laps::start();
    let epoch = Instant::now();
    let mut wheel: Box<BitWheel<Fire, GEARS, RESOLUTION_MS, CAP, MAX_PROBES>> = BitWheel::boxed_with_epoch(epoch);
    let setup_s = laps.lap();
    let mut handles: Vec<Option<TimerHandle>> = Vec::with_capacity(w.deadlines.len());
    let mut refused = 0u64;
    for (i, &d) in w.deadlines.iter().enumerate() {
        let h = wheel.insert(epoch + Duration::from_millis(d), Fire(i as u32)).ok();
        refused += h.is_none() as u64;
        handles.push(h);
    }
    let insert_s = laps.lap();
    let mut missing = 0u64;
    for &c in &w.cancels {
        missing += match handles[c as usize].take() {
            Some(h) => wheel.cancel(h).is_none() as u64,
            None => 1,
        };
    }
    let cancel_s = laps.lap();
    let mut out = Vec::with_capacity(1024);
    let mut expired = 0;
    for t in 1..=w.ticks {
        wheel.poll(epoch + Duration::from_millis(t), &mut out);
        expired += out.len() as u64;
        out.clear();
    }
    let expiry_s = laps.lap();
    if missing > 0 || refused > 0 {
        bail!("bitwheel (SLOT_CAP {CAP}) refused {refused} inserts and could not cancel {missing} timers");
    }
    Ok(Phases { setup_s, insert_s, cancel_s, expiry_s, expired })
}

/// Run the workload through bitwheel sized for it (see [`slot_cap`]), on a thread with a
/// large stack. Errors if `w` is beyond what bitwheel can hold here.
pub fn run(w: &Workload) -> anyhow::Result<Phases> {
    let cap = slot_cap(w).map_err(|why| anyhow!("bitwheel cannot run this workload: {why}"))?;
    std::thread::scope(|s| {
        let worker = std::thread::Builder::new().name("bench-bitwheel".into()).stack_size(STACK_BYTES);
        let job = worker.spawn_scoped(s, || match cap {
            64 => drive::<64>(w),
            128 => drive::<128>(w),
            256 => drive::<256>(w),
            512 => drive::<512>(w),
            1024 => drive::<1024>(w),
            2048 => drive::<2048>(w),
            4096 => drive::<4096>(w),
            8192 => drive::<8192>(w),
            16384 => drive::<16384>(w),
            32768 => drive::<32768>(w),
            65536 => drive::<65536>(w),
            131072 => drive::<131072>(w),
            262144 => drive::<262144>(w),
            524288 => drive::<524288>(w),
            other => bail!("no bitwheel compiled with SLOT_CAP {other}"),
        })?;
        job.join().map_err(|_| anyhow!("the bitwheel thread panicked"))?
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timers::bench::Params;

    #[test]
    fn it_fires_each_timer_at_the_first_tick_of_its_slot() {
        let p = Params { max_deadline_ms: 5_000, ..Params::default() };
        let w = Workload::new(3_000, &p);
        let epoch = Instant::now();
        let mut wheel: Box<BitWheel<Fire, GEARS, RESOLUTION_MS, 2048, MAX_PROBES>> = BitWheel::boxed_with_epoch(epoch);
        for (i, &d) in w.deadlines.iter().enumerate() {
            wheel.insert(epoch + Duration::from_millis(d), Fire(i as u32)).unwrap();
        }
        let mut out = vec![];
        let mut fired = vec![0u64; w.deadlines.len()];
        for t in 1..=w.ticks {
            wheel.poll(epoch + Duration::from_millis(t), &mut out);
            for id in out.drain(..) {
                fired[id as usize] = t;
            }
        }
        for (i, &d) in w.deadlines.iter().enumerate() {
            assert_eq!(fired[i], fire_tick(d), "timer {i} due at {d}");
            assert!(fired[i] <= d);
        }
        assert_eq!((fire_tick(63), fire_tick(64), fire_tick(130), fire_tick(5_000)), (63, 64, 128, 4_096));
    }

    #[test]
    fn slot_capacity_covers_the_densest_slot_or_says_why_not() {
        let p = Params::default();
        let w = Workload::new(1_000, &p);
        let cap = slot_cap(&w).unwrap();
        assert!(cap >= densest_slot(&w) && cap / 2 < densest_slot(&w).max(MIN_SLOT_CAP), "{cap}");
        let mut huge = Workload::new(10, &p);
        huge.deadlines = vec![5_000; MAX_SLOT_CAP + 1];
        assert!(slot_cap(&huge).unwrap_err().contains("densest slot holds"));
        huge.ticks = RANGE_TICKS;
        assert!(slot_cap(&huge).unwrap_err().contains("range"));
    }
}
