//! Normal gaps: each gap drawn from N(`mu`, `var`); a negative draw sends at once (gap 0).

use super::Arrival;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal as Gauss};

/// Gaps from a normal distribution, truncated at zero.
pub struct Normal {
    gap: Gauss<f64>,
    rng: ChaCha8Rng,
    t: f64,
    /// A deliberately broken process for negative controls: negative gaps kept.
    #[cfg(test)]
    pub(super) untruncated: bool,
}

impl Normal {
    /// `mu` > 0 and `var` ≥ 0 (checked by `ArrivalParams::validate`).
    pub fn new(mu: f64, var: f64, rng: ChaCha8Rng) -> Self {
        Normal {
            gap: Gauss::new(mu, var.sqrt()).expect("variance validated >= 0"),
            rng,
            t: 0.0,
            #[cfg(test)]
            untruncated: false,
        }
    }
}

impl Arrival for Normal {
    fn next_send_s(&mut self) -> f64 {
        let t = self.t;
        let gap = self.gap.sample(&mut self.rng);
        #[cfg(test)]
        if self.untruncated {
            self.t += gap;
            return t;
        }
        self.t += gap.max(0.0);
        t
    }
}
