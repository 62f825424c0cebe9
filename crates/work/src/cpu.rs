//! Seed 001's calc_pi.c: estimate π by Monte Carlo sampling (CPU-bound).
//!
//! The samples come from SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom
//! number generators", OOPSLA 2014), written out here so the workload needs nothing but std;
//! each 64-bit output becomes a double in [0, 1) from its top 53 bits.

/// SplitMix64: a 64-bit state advanced by a constant, each output mixed by two multiplies.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A double in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Sample `iterations` points in the unit square and return the π estimate.
/// A fixed seed keeps every child doing identical work.
pub fn monte_carlo_pi(iterations: u64, seed: u64) -> f64 {
    let mut rng = SplitMix64::new(seed);
    let mut inside = 0u64;
    for _ in 0..iterations {
        let x = rng.next_f64();
        let y = rng.next_f64();
        if x * x + y * y <= 1.0 {
            inside += 1;
        }
    }
    4.0 * inside as f64 / iterations.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_is_close_to_pi() {
        let pi = monte_carlo_pi(200_000, 1);
        assert!((pi - std::f64::consts::PI).abs() < 0.02, "{pi}");
    }

    #[test]
    fn splitmix64_matches_the_reference_outputs() {
        // The first outputs of the reference splitmix64.c (Vigna) seeded with 1234567.
        let mut r = SplitMix64::new(1_234_567);
        assert_eq!(r.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(r.next_u64(), 3_203_168_211_198_807_973);
        assert_eq!(r.next_u64(), 9_817_491_932_198_370_423);
    }

    #[test]
    fn doubles_stay_in_the_unit_interval() {
        let mut r = SplitMix64::new(7);
        assert!((0..10_000).map(|_| r.next_f64()).all(|x| (0.0..1.0).contains(&x)));
    }
}
