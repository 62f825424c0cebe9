//! Constant arrivals: a send every `wait` seconds (the seed's experiment uses this one).

use super::Arrival;

/// Sends at 0, wait, 2·wait, ...
pub struct Constant {
    wait: f64,
    k: u64,
}

impl Constant {
    pub fn new(wait: f64) -> Self {
        Constant { wait, k: 0 }
    }
}

impl Arrival for Constant {
    fn next_send_s(&mut self) -> f64 {
        let t = self.k as f64 * self.wait;
        self.k += 1;
        t
    }
}
