//! Where the scheduler tick falls on a trace's clock.
//!
//! A kernel without HRTICK notices an expired slice only at its next tick, so a CPU-bound task
//! that is pre-empted after a long run is switched out a few µs after a tick. Those moments,
//! taken modulo the tick period, pile up at one phase; wake-up pre-emptions and blocks fall
//! anywhere. A simulator that replays the trace with its own tick must put its ticks at that
//! phase: which task a tick ends, and whether a wake-up lands before or after it, depend on it.

use crate::timeline::Timeline;
use serde::{Deserialize, Serialize};

/// The tick's phase on the trace clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TickPhase {
    /// Ticks fall at `phase_ns + k × tick_ns` on the trace clock (`phase_ns < tick_ns`).
    pub phase_ns: u64,
    pub tick_ns: u64,
    /// Pre-emptions within [`CLUSTER_NS`] of the phase, and all long-run pre-emptions seen.
    pub samples: usize,
    pub preemptions: usize,
}

/// How close to the phase a pre-emption must lie to count as the tick's.
pub const CLUSTER_NS: u64 = 50_000;

/// Histogram bin width.
const BIN_NS: u64 = 25_000;

/// The fewest tick pre-emptions that fix a phase.
const MIN_SAMPLES: usize = 8;

/// How many times more pre-emptions than an even spread would put there must lie near the
/// phase. Periodic sleepers make clusters of their own (their wake-ups pre-empt at phases that
/// repeat), so the tick's need not be most of them; it must stand out.
const MIN_EXCESS: u64 = 4;

impl TickPhase {
    /// Trace time that puts workload time 0 on a tick, at or before `at`.
    pub fn tick_at_or_before(&self, at: u64) -> u64 {
        at - (at % self.tick_ns + self.tick_ns - self.phase_ns) % self.tick_ns
    }
}

/// The phase of a `tick_ns` tick in `tl`, from the pre-emptions that end runs of at least a
/// quarter tick. None when fewer than [`MIN_SAMPLES`] pre-emptions fall within [`CLUSTER_NS`]
/// of one phase, or fewer than [`MIN_EXCESS`] times what an even spread would put there: the
/// trace then says nothing about the tick.
pub fn tick_phase(tl: &Timeline, tick_ns: u64) -> Option<TickPhase> {
    if tick_ns < 4 * BIN_NS {
        return None;
    }
    let mut ends = Vec::new();
    for t in tl.tasks.values() {
        let mut waits = t.waiting.iter().map(|w| w.start).peekable();
        for r in t.runs.iter().filter(|r| r.end - r.start >= tick_ns / 4) {
            while waits.next_if(|&w| w < r.end).is_some() {}
            if waits.peek() == Some(&r.end) {
                ends.push(r.end % tick_ns);
            }
        }
    }
    let bins = tick_ns.div_ceil(BIN_NS) as usize;
    let mut hist = vec![0usize; bins];
    for &e in &ends {
        hist[(e / BIN_NS) as usize] += 1;
    }
    // The densest window of three bins, wrapping around the period.
    let window = |i: usize| hist[(i + bins - 1) % bins] + hist[i] + hist[(i + 1) % bins];
    let centre_bin = (0..bins).max_by_key(|&i| (window(i), std::cmp::Reverse(i)))?;
    let centre = centre_bin as u64 * BIN_NS + BIN_NS / 2;
    // Offsets from the centre in (-tick/2, tick/2], so a cluster astride 0 stays together.
    let offset = |e: u64| {
        let d = (e + tick_ns - centre) % tick_ns;
        if d > tick_ns / 2 {
            d as i64 - tick_ns as i64
        } else {
            d as i64
        }
    };
    let mut near: Vec<i64> = ends.iter().map(|&e| offset(e)).filter(|d| d.unsigned_abs() <= CLUSTER_NS).collect();
    let even = ends.len() as u64 * 2 * CLUSTER_NS / tick_ns;
    if near.len() < MIN_SAMPLES || (near.len() as u64) < MIN_EXCESS * even {
        return None;
    }
    near.sort_unstable();
    let median = near[near.len() / 2];
    let phase_ns = (centre as i64 + median).rem_euclid(tick_ns as i64) as u64;
    Some(TickPhase { phase_ns, tick_ns, samples: near.len(), preemptions: ends.len() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::{Run, Span, TaskTimeline};

    const MS: u64 = 1_000_000;
    const TICK: u64 = 4 * MS;

    /// A task whose runs end at `ends` (pre-empted: it waits from each end until the next run),
    /// each run starting `len` before its end.
    fn preempted(pid: i32, ends: &[u64], len: u64) -> TaskTimeline {
        let mut t = TaskTimeline::new(pid, "hog", 0);
        for (i, &e) in ends.iter().enumerate() {
            t.runs.push(Run { cpu: 0, start: e - len, end: e });
            let next = ends.get(i + 1).map_or(e + MS, |&n| n - len);
            t.waiting.push(Span { start: e, end: next });
        }
        t
    }

    #[test]
    fn tick_preemptions_give_the_phase_and_wakeup_preemptions_do_not_move_it() {
        // Ticks at 1.230 ms + k·4 ms; the switch follows 5–15 µs later.
        let jitter = [5_000, 9_000, 12_000, 7_000, 15_000, 8_000];
        let ticks: Vec<u64> = (10..40).map(|k| k * TICK + 1_230_000 + jitter[k as usize % 6]).collect();
        // A second task pre-empted at other phases (wake-up pre-emptions), fewer of them.
        let phases = [300, 2_100, 3_000, 600, 2_700, 3_500, 100, 1_800, 2_400, 3_300];
        let odd: Vec<u64> = phases.iter().enumerate().map(|(k, us)| (50 + 3 * k as u64) * TICK + us * 1_000).collect();
        let p =
            tick_phase(&Timeline::from_iter([preempted(1, &ticks, 3 * MS), preempted(2, &odd, 2 * MS)]), TICK).unwrap();
        assert!((1_235_000..=1_245_000).contains(&p.phase_ns), "{p:?}");
        assert_eq!((p.samples, p.preemptions), (30, 40));
        // Workload time 0 goes on a tick at or before the release.
        let release = 123 * MS + 456_789;
        let t0 = p.tick_at_or_before(release);
        assert!(t0 <= release && release - t0 < TICK);
        assert_eq!(t0 % TICK, p.phase_ns);
    }

    #[test]
    fn a_phase_astride_the_period_boundary_stays_one_cluster() {
        let ends: Vec<u64> =
            (10..30).map(|k| if k % 2 == 0 { k * TICK + 10_000 } else { (k + 1) * TICK - 20_000 }).collect();
        let p = tick_phase(&Timeline::from_iter([preempted(1, &ends, 3 * MS)]), TICK).unwrap();
        assert!(p.phase_ns <= 10_000 || p.phase_ns >= TICK - 20_000, "{p:?}");
        assert_eq!(p.samples, 20);
    }

    #[test]
    fn blocks_short_runs_and_scattered_preemptions_fix_no_phase() {
        // Runs that end in a block (no wait follows) are not pre-emptions.
        let mut blocked = preempted(1, &(10..40).map(|k| k * TICK + 1_000_000).collect::<Vec<_>>(), 3 * MS);
        blocked.waiting.clear();
        // Short runs (a ping-pong thread) are not long enough to have met a tick.
        let short = preempted(2, &(10..40).map(|k| k * TICK + 2_000_000).collect::<Vec<_>>(), 50_000);
        // Long runs pre-empted at phases spread over the whole period.
        let spread = preempted(3, &(0..24).map(|k| 100 * MS + k * 4_170_000).collect::<Vec<_>>(), 2 * MS);
        assert_eq!(tick_phase(&Timeline::from_iter([blocked, short, spread]), TICK), None);
    }
}
