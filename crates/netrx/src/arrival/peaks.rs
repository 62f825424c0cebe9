//! Peaks: on/off cycles — `inc` seconds sending every `wait`, then `inc` seconds silent.

use super::Arrival;

/// On/off arrivals.
pub struct Peaks {
    wait: f64,
    inc: f64,
    t: f64,
}

impl Peaks {
    pub fn new(wait: f64, inc: f64) -> Self {
        Peaks { wait, inc, t: 0.0 }
    }
}

impl Arrival for Peaks {
    fn next_send_s(&mut self) -> f64 {
        let t = self.t;
        let mut next = t + self.wait;
        let phase = next % (2.0 * self.inc);
        if phase >= self.inc {
            // Landed in the silent half: skip to the start of the next on-phase.
            next += 2.0 * self.inc - phase;
        }
        self.t = next;
        t
    }
}
