//! One kind of wake-up delay: a single value, or a measured spread of values that the engine
//! draws from, one per wake-up.
//!
//! A host's wake-up path does not take the same time twice (a timer wake-up that pre-empts a
//! hog took 6–10 µs here, half of them 7–8 µs). Given only the median, a model's latencies are
//! one value, and their median stays that value even where the kernel's is pushed up or down
//! by wake-ups that wait (the median of a mix of immediate and waiting wake-ups is a higher
//! quantile of the immediate ones). Given the spread, the model's immediate wake-ups scatter as
//! the probe's did. The draw is a hash of the task and the instant, so a run stays
//! deterministic.

use crate::policy::{Dur, TaskId, Time};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// How many equally likely values a spread keeps.
pub const WAKE_QUANTILES: usize = 16;

/// A delay: `WAKE_QUANTILES` equally likely values, all equal for a single value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WakeDelay {
    values: [Dur; WAKE_QUANTILES],
}

impl From<Dur> for WakeDelay {
    fn from(d: Dur) -> Self {
        WakeDelay { values: [d; WAKE_QUANTILES] }
    }
}

impl WakeDelay {
    /// The spread given by `quantile(q)` at the middle of each of `WAKE_QUANTILES` equal slices
    /// of probability (q = 1/32, 3/32, …, 31/32).
    pub fn spread(quantile: impl Fn(f64) -> Dur) -> Self {
        let mut values = [0; WAKE_QUANTILES];
        for (i, v) in values.iter_mut().enumerate() {
            *v = quantile((i as f64 + 0.5) / WAKE_QUANTILES as f64);
        }
        values.sort_unstable();
        WakeDelay { values }
    }

    /// The spread of several spreads taken together, each with equal weight: the quantiles of
    /// their mixture (probes of the same path at different moments, pooled). None when empty.
    pub fn pooled(parts: &[WakeDelay]) -> Option<Self> {
        let mut all: Vec<Dur> = parts.iter().flat_map(|p| p.values).collect();
        if all.is_empty() {
            return None;
        }
        all.sort_unstable();
        let n = all.len();
        // The q-quantile of n sorted values: the ⌈q·n⌉-th.
        Some(WakeDelay::spread(|q| all[((q * n as f64).ceil() as usize).clamp(1, n) - 1]))
    }

    /// Its median: the mean of the two middle values.
    pub fn median(&self) -> Dur {
        let m = WAKE_QUANTILES / 2;
        (self.values[m - 1] + self.values[m]) / 2
    }

    pub fn is_single(&self) -> bool {
        self.values.iter().all(|&v| v == self.values[0])
    }

    pub fn values(&self) -> &[Dur; WAKE_QUANTILES] {
        &self.values
    }

    /// The delay of `task`'s wake-up acted on at `now`, in the sequence of draws `draw`.
    #[inline]
    pub(crate) fn draw(&self, task: TaskId, now: Time, draw: u64) -> Dur {
        let key = now ^ (task as u64).rotate_left(40) ^ splitmix64(draw).wrapping_mul(u64::from(draw != 0));
        self.values[(splitmix64(key) % WAKE_QUANTILES as u64) as usize]
    }
}

/// A single value serializes as that number; a spread as its median and its values.
impl Serialize for WakeDelay {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.is_single() {
            return s.serialize_u64(self.values[0]);
        }
        #[derive(Serialize)]
        struct Spread<'a> {
            median: Dur,
            values: &'a [Dur; WAKE_QUANTILES],
        }
        Spread { median: self.median(), values: &self.values }.serialize(s)
    }
}

/// What [`Serialize`] writes: a number, or a median with its values (the median is derived, so
/// it is read and dropped).
impl<'de> Deserialize<'de> for WakeDelay {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Single(Dur),
            Spread {
                #[allow(dead_code)]
                median: Dur,
                values: [Dur; WAKE_QUANTILES],
            },
        }
        Ok(match Form::deserialize(d)? {
            Form::Single(v) => WakeDelay::from(v),
            Form::Spread { values, .. } => {
                if values.windows(2).any(|w| w[0] > w[1]) {
                    return Err(serde::de::Error::custom("a wake-up delay's values must be sorted"));
                }
                WakeDelay { values }
            }
        })
    }
}

/// SplitMix64's output function of `x`: the simulator's one hash for reproducible draws.
pub(crate) fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_value_is_always_drawn_and_serializes_as_a_number() {
        let d = WakeDelay::from(7_000);
        assert!(d.is_single());
        assert!((0..100u64).all(|i| d.draw((i % 5) as usize, i * 1_000, 0) == 7_000));
        assert_eq!(serde_json::to_string(&d).unwrap(), "7000");
        assert_eq!(d.median(), 7_000);
    }

    #[test]
    fn pooled_spreads_are_the_quantiles_of_their_mixture() {
        // Three probes of 8 µs and one of 20 µs, pooled: three quarters of the values are 8 µs.
        let (fast, slow) = (WakeDelay::from(8_000), WakeDelay::from(20_000));
        let pooled = WakeDelay::pooled(&[fast, slow, fast, fast]).unwrap();
        assert_eq!(pooled.values().iter().filter(|&&v| v == 8_000).count(), 12);
        assert_eq!((pooled.median(), pooled.values()[15]), (8_000, 20_000));
        // One spread pooled alone is itself.
        let d = WakeDelay::spread(|q| 6_000 + (4_000.0 * q) as u64);
        assert_eq!(WakeDelay::pooled(&[d]), Some(d));
        assert_eq!(WakeDelay::pooled(&[]), None);
    }

    #[test]
    fn a_spread_keeps_the_quantiles_and_draws_each_about_equally_often() {
        // Uniform on [6 µs, 10 µs): quantile q = 6000 + 4000 q.
        let d = WakeDelay::spread(|q| 6_000 + (4_000.0 * q) as u64);
        assert_eq!(d.values()[0], 6_125);
        assert_eq!(d.values()[15], 9_875);
        assert_eq!(d.median(), 8_000);
        let mut counts = [0usize; WAKE_QUANTILES];
        for i in 0..16_000u64 {
            let v = d.draw((i % 7) as usize, 1_000_000 + i * 4_001, 0);
            counts[d.values().iter().position(|&x| x == v).unwrap()] += 1;
        }
        assert!(counts.iter().all(|&c| (850..1150).contains(&c)), "{counts:?}");
        // The same task at the same instant draws the same delay.
        assert_eq!(d.draw(3, 42, 0), d.draw(3, 42, 0));
        // Another sequence of draws takes other values for the same wake-ups, equally often.
        let differ = (0..1_000u64).filter(|&i| d.draw(1, i * 4_001, 0) != d.draw(1, i * 4_001, 7)).count();
        assert!((900..=960).contains(&differ), "{differ} of 1000 differ (15/16 expected)");
        let json = serde_json::to_value(d).unwrap();
        assert_eq!(json["median"], 8_000);
        assert_eq!(json["values"].as_array().unwrap().len(), WAKE_QUANTILES);
    }

    #[test]
    fn both_forms_read_back_as_written_and_unsorted_values_are_refused() {
        let spread = WakeDelay::spread(|q| 6_000 + (4_000.0 * q) as u64);
        for d in [WakeDelay::from(7_000), spread] {
            let back: WakeDelay = serde_json::from_str(&serde_json::to_string(&d).unwrap()).unwrap();
            assert_eq!(back, d);
        }
        let mut json = serde_json::to_value(spread).unwrap();
        json["values"][0] = serde_json::json!(99_000);
        let e = serde_json::from_value::<WakeDelay>(json).unwrap_err();
        assert!(e.to_string().contains("sorted"), "{e}");
    }
}
