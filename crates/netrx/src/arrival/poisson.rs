//! Poisson arrivals of rate `lambda` pkt/s: exponentially distributed gaps.

use super::Arrival;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};

/// A Poisson process.
pub struct Poisson {
    gap: Exp<f64>,
    rng: ChaCha8Rng,
    t: f64,
}

impl Poisson {
    /// `lambda` must be positive (checked by `ArrivalParams::validate`).
    pub fn new(lambda: f64, rng: ChaCha8Rng) -> Self {
        Poisson { gap: Exp::new(lambda).expect("lambda validated > 0"), rng, t: 0.0 }
    }
}

impl Arrival for Poisson {
    fn next_send_s(&mut self) -> f64 {
        let t = self.t;
        self.t += self.gap.sample(&mut self.rng);
        t
    }
}
