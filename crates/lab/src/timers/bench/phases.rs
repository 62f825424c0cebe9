//! Timing a run in phases: building the empty structure (setup, not counted), inserting every
//! timer, cancelling the chosen 10%, and advancing the clock to the end (expiry). Then the
//! medians over rounds and the cost per operation of each phase.

use super::workload::Workload;
use schedlab_report::stats::percentile;
use serde::Serialize;
use std::time::Instant;

/// What one run of one implementation measured, in seconds per phase.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Phases {
    /// Building the empty structure (a runtime, a preallocated wheel): reported, not counted
    /// in throughput, since a program builds its timer queue once.
    pub setup_s: f64,
    /// Inserting every timer at t = 0 (including keeping each one's handle).
    pub insert_s: f64,
    /// Cancelling the chosen timers by handle (or id).
    pub cancel_s: f64,
    /// Advancing the clock tick by tick to the last deadline, collecting what expires: ticks,
    /// cascades, lazily cancelled entries skipped on the way all count here.
    pub expiry_s: f64,
    /// Timers that expired (must be the workload's `expected()`).
    pub expired: u64,
}

impl Phases {
    /// The timed work: insert + cancel + expiry.
    pub fn work_s(&self) -> f64 {
        self.insert_s + self.cancel_s + self.expiry_s
    }
}

/// A stopwatch read at each phase boundary.
pub struct Laps(Instant);

impl Laps {
    /// Start timing.
    pub fn start() -> Self {
        Laps(Instant::now())
    }

    /// Seconds since the previous lap (or the start); starts the next lap.
    pub fn lap(&mut self) -> f64 {
        let now = Instant::now();
        let s = now.duration_since(self.0).as_secs_f64();
        self.0 = now;
        s
    }
}

/// One implementation at one size, summarised over rounds (medians, each phase on its own).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Summary {
    /// Inserts + cancels + expiries per second of timed work, in millions (median work time).
    pub mops: f64,
    /// Median of insert + cancel + expiry seconds.
    pub median_s: f64,
    pub ns_per_insert: f64,
    /// `None` when the workload cancels nothing (fewer than 5 timers).
    pub ns_per_cancel: Option<f64>,
    /// The whole expiry phase over the timers that expired, so ticks that expire nothing are
    /// paid for here (they dominate at 10^3 timers: 10,000 ticks for 900 expiries).
    pub ns_per_expiry: Option<f64>,
    pub median_setup_s: f64,
    /// Timed work per round, seconds, in round order.
    pub round_s: Vec<f64>,
    /// Every round's phases, in round order.
    pub rounds: Vec<Phases>,
}

/// Per-operation cost in ns: median phase seconds over `count` operations (`None` if none).
fn ns_per(secs: &[f64], count: u64) -> Option<f64> {
    (count > 0).then(|| percentile(secs, 50.0) * 1e9 / count as f64)
}

/// Summarise the rounds of one implementation (at least one) on workload `w`.
pub fn summarise(rounds: &[Phases], w: &Workload) -> Summary {
    let col = |f: fn(&Phases) -> f64| rounds.iter().map(f).collect::<Vec<f64>>();
    let round_s = col(Phases::work_s);
    let median_s = percentile(&round_s, 50.0);
    Summary {
        mops: w.ops() as f64 / median_s / 1e6,
        median_s,
        ns_per_insert: ns_per(&col(|p| p.insert_s), w.inserts()).unwrap_or(f64::NAN),
        ns_per_cancel: ns_per(&col(|p| p.cancel_s), w.cancelled()),
        ns_per_expiry: ns_per(&col(|p| p.expiry_s), w.expected()),
        median_setup_s: percentile(&col(|p| p.setup_s), 50.0),
        round_s,
        rounds: rounds.to_vec(),
    }
}
