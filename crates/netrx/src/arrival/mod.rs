//! Arrival processes: when each device sends its next packet. One file per process, all
//! seeded, all with the seed's parameters (Table I): `wait` (s between sends), `lambda`
//! (Poisson rate, pkt/s), `mu` and `var` (mean and variance of a normal gap, s and s²) and
//! `inc` (the length in s of one half-cycle of peaks and ramp).

mod constant;
mod normal;
mod peaks;
mod poisson;
mod ramp;

pub use constant::Constant;
pub use normal::Normal;
pub use peaks::Peaks;
pub use poisson::Poisson;
pub use ramp::Ramp;

use crate::ParamError;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A sequence of send times.
pub trait Arrival: Send {
    /// Seconds from the start to the next send; never decreases between calls.
    fn next_send_s(&mut self) -> f64;
}

/// The seed's `fun`: which arrival process a device uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fun {
    /// A send every `wait` seconds.
    Constant,
    /// A Poisson process of rate `lambda` pkt/s (exponential gaps).
    Poisson,
    /// Gaps drawn from a normal distribution (`mu`, `var`), negative draws sending at once.
    Normal,
    /// On/off cycles: `inc` seconds sending every `wait`, `inc` seconds silent.
    Peaks,
    /// The rate rises linearly from a tenth of 1/`wait` to 1/`wait` over `inc` seconds, falls
    /// back over the next `inc` seconds, and repeats.
    Ramp,
}

impl Fun {
    /// Every process, in the order the seed lists them.
    pub const ALL: [Fun; 5] = [Fun::Constant, Fun::Poisson, Fun::Normal, Fun::Peaks, Fun::Ramp];
}

impl fmt::Display for Fun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Fun::Constant => "constant",
            Fun::Poisson => "poisson",
            Fun::Normal => "normal",
            Fun::Peaks => "peaks",
            Fun::Ramp => "ramp",
        })
    }
}

impl FromStr for Fun {
    type Err = ParamError;
    fn from_str(s: &str) -> Result<Self, ParamError> {
        let l = s.trim().to_ascii_lowercase();
        Fun::ALL
            .into_iter()
            .find(|f| f.to_string() == l)
            .ok_or_else(|| ParamError::new("fun", s, "expected one of constant, poisson, normal, peaks, ramp"))
    }
}

/// The device parameters of the seed's Table I that shape arrivals.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ArrivalParams {
    pub fun: Fun,
    /// Seconds between sends (constant, peaks, ramp's shortest gap).
    pub wait: f64,
    /// Poisson rate in packets per second.
    pub lambda: f64,
    /// Mean gap of the normal process, seconds.
    pub mu: f64,
    /// Variance of the normal gap, seconds².
    pub var: f64,
    /// Half-cycle length of peaks and ramp, seconds.
    pub inc: f64,
}

impl Default for ArrivalParams {
    fn default() -> Self {
        ArrivalParams { fun: Fun::Constant, wait: 0.001, lambda: 1000.0, mu: 0.001, var: 1e-8, inc: 0.5 }
    }
}

impl ArrivalParams {
    /// Check every parameter the chosen process uses (and `wait`, which all share), naming the
    /// offending value.
    pub fn validate(&self) -> Result<(), ParamError> {
        let pos = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(ParamError::new(name, v, "must be a finite number greater than zero"))
            }
        };
        pos("wait", self.wait)?;
        match self.fun {
            Fun::Constant => {}
            Fun::Poisson => pos("lambda", self.lambda)?,
            Fun::Normal => {
                pos("mu", self.mu)?;
                if !(self.var.is_finite() && self.var >= 0.0) {
                    return Err(ParamError::new("var", self.var, "a variance must be zero or positive"));
                }
            }
            Fun::Peaks | Fun::Ramp => pos("inc", self.inc)?,
        }
        Ok(())
    }

    /// The long-run mean send rate of one device, pkt/s.
    pub fn mean_rate(&self) -> f64 {
        match self.fun {
            Fun::Constant => 1.0 / self.wait,
            Fun::Poisson => self.lambda,
            Fun::Normal => 1.0 / self.mu,
            Fun::Peaks => 0.5 / self.wait,
            Fun::Ramp => 0.55 / self.wait,
        }
    }

    /// Build the process for device `dev` (each device gets its own stream from `seed`).
    pub fn build(&self, seed: u64, dev: usize) -> Result<Box<dyn Arrival>, ParamError> {
        self.validate()?;
        let rng = ChaCha8Rng::seed_from_u64(seed ^ (dev as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        Ok(match self.fun {
            Fun::Constant => Box::new(Constant::new(self.wait)),
            Fun::Poisson => Box::new(Poisson::new(self.lambda, rng)),
            Fun::Normal => Box::new(Normal::new(self.mu, self.var, rng)),
            Fun::Peaks => Box::new(Peaks::new(self.wait, self.inc)),
            Fun::Ramp => Box::new(Ramp::new(self.wait, self.inc)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count_in(a: &mut dyn Arrival, secs: f64) -> usize {
        let mut n = 0;
        while a.next_send_s() < secs {
            n += 1;
        }
        n
    }

    #[test]
    fn every_process_meets_its_mean_rate() {
        for fun in Fun::ALL {
            let p = ArrivalParams { fun, wait: 0.001, lambda: 1000.0, mu: 0.001, var: 1e-8, inc: 0.25 };
            let mut a = p.build(7, 0).unwrap();
            let n = count_in(a.as_mut(), 10.0) as f64 / 10.0;
            let want = p.mean_rate();
            assert!((n / want - 1.0).abs() < 0.05, "{fun}: {n} pkt/s, want {want}");
        }
    }

    #[test]
    fn seeded_processes_repeat() {
        let p = ArrivalParams { fun: Fun::Poisson, ..Default::default() };
        let (mut a, mut b) = (p.build(3, 1).unwrap(), p.build(3, 1).unwrap());
        let mut c = p.build(3, 2).unwrap();
        let xa: Vec<f64> = (0..50).map(|_| a.next_send_s()).collect();
        let xb: Vec<f64> = (0..50).map(|_| b.next_send_s()).collect();
        let xc: Vec<f64> = (0..50).map(|_| c.next_send_s()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    #[test]
    fn bad_parameters_are_named() {
        let e = ArrivalParams { wait: 0.0, ..Default::default() }.validate().unwrap_err();
        assert_eq!(e.name, "wait");
        assert!(e.to_string().contains('0'));
        let e = ArrivalParams { wait: -1.5, ..Default::default() }.validate().unwrap_err();
        assert!(e.to_string().contains("-1.5"), "{e}");
        let e = ArrivalParams { fun: Fun::Poisson, lambda: -3.0, ..Default::default() }.validate().unwrap_err();
        assert_eq!(e.name, "lambda");
        let e = ArrivalParams { fun: Fun::Normal, var: -1.0, ..Default::default() }.validate().unwrap_err();
        assert_eq!(e.name, "var");
        let e = "zigzag".parse::<Fun>().unwrap_err();
        assert!(e.to_string().contains("zigzag"));
        assert_eq!("Poisson".parse::<Fun>().unwrap(), Fun::Poisson);
    }

    /// The first of `n` sends that came before the one preceding it: (index, previous, time).
    fn first_step_back(a: &mut dyn Arrival, n: usize) -> Option<(usize, f64, f64)> {
        let mut last = 0.0;
        for i in 0..n {
            let t = a.next_send_s();
            if t < last {
                return Some((i, last, t));
            }
            last = t;
        }
        None
    }

    proptest::proptest! {
        #[test]
        fn send_times_never_go_back(seed in 0u64..1000, f in 0usize..5, wait in 1e-6f64..1e-2) {
            let p = ArrivalParams { fun: Fun::ALL[f], wait, lambda: 1.0 / wait, mu: wait, var: wait * wait, inc: 0.01 };
            let back = first_step_back(p.build(seed, 0).unwrap().as_mut(), 500);
            proptest::prop_assert!(back.is_none(), "{}: send {:?} went back", p.fun, back);
        }
    }

    #[test]
    fn a_normal_process_that_keeps_negative_gaps_is_caught() {
        // The negative control: with σ = µ about one gap in six is negative, so 500 sends of the
        // untruncated process step back in time.
        let rng = ChaCha8Rng::seed_from_u64(3);
        let mut broken = Normal::new(0.001, 1e-6, rng.clone());
        broken.untruncated = true;
        assert!(first_step_back(&mut broken, 500).is_some());
        assert_eq!(first_step_back(&mut Normal::new(0.001, 1e-6, rng), 500), None);
    }
}
