//! Ramp: the send rate rises linearly from a tenth of 1/`wait` to 1/`wait` over `inc` seconds,
//! falls back to a tenth over the next `inc` seconds, and repeats.

use super::Arrival;

/// A rising and falling rate.
pub struct Ramp {
    wait: f64,
    inc: f64,
    t: f64,
}

impl Ramp {
    pub fn new(wait: f64, inc: f64) -> Self {
        Ramp { wait, inc, t: 0.0 }
    }

    fn rate_at(&self, t: f64) -> f64 {
        let max = 1.0 / self.wait;
        let min = max / 10.0;
        let phase = t % (2.0 * self.inc);
        let up = if phase < self.inc { phase / self.inc } else { 2.0 - phase / self.inc };
        min + (max - min) * up
    }
}

impl Arrival for Ramp {
    fn next_send_s(&mut self) -> f64 {
        let t = self.t;
        self.t += 1.0 / self.rate_at(t);
        t
    }
}
