//! The bench's workload: N timers with random deadlines in 1..=max ms, all inserted at t = 0,
//! a random 10% of them cancelled, then the clock advanced to the last deadline in 1 ms ticks.
//! Every implementation is handed the same deadlines and the same cancellations.

use super::Params;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One size's workload.
pub struct Workload {
    /// Deadline of timer `i` in ms (= ticks) from t = 0; timer `i` carries the value `i`.
    pub deadlines: Vec<u64>,
    /// The timers cancelled after every insert, in the order they are cancelled.
    pub cancels: Vec<u32>,
    /// Ticks advanced after the cancellations (the largest possible deadline).
    pub ticks: u64,
}

impl Workload {
    /// The workload of `timers` timers under `p` (deadline range, cancelled fraction, seed).
    pub fn new(timers: usize, p: &Params) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
        let deadlines: Vec<u64> = (0..timers).map(|_| rng.gen_range(1..=p.max_deadline_ms)).collect();
        let mut ids: Vec<u32> = (0..timers as u32).collect();
        ids.shuffle(&mut rng);
        ids.truncate((timers as f64 * p.cancel_fraction).round() as usize);
        Workload { deadlines, cancels: ids, ticks: p.max_deadline_ms }
    }

    /// Timers inserted.
    pub fn inserts(&self) -> u64 {
        self.deadlines.len() as u64
    }

    /// Timers cancelled.
    pub fn cancelled(&self) -> u64 {
        self.cancels.len() as u64
    }

    /// Timers that must expire by the last tick: every one not cancelled.
    pub fn expected(&self) -> u64 {
        self.inserts() - self.cancelled()
    }

    /// Operations a run performs: inserts + cancels + expiries.
    pub fn ops(&self) -> u64 {
        self.inserts() + self.cancelled() + self.expected()
    }

    /// Whether timer `id` is among the cancelled ones (a mask, for analyses outside timing).
    pub fn cancelled_mask(&self) -> Vec<bool> {
        let mut m = vec![false; self.deadlines.len()];
        for &c in &self.cancels {
            m[c as usize] = true;
        }
        m
    }
}
