//! Seed 001's calc_pi.c: estimate π by Monte Carlo sampling (CPU-bound).

use rand::{Rng, SeedableRng};

/// Sample `iterations` points in the unit square and return the π estimate.
/// A fixed seed keeps every child doing identical work.
pub fn monte_carlo_pi(iterations: u64, seed: u64) -> f64 {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut inside = 0u64;
    for _ in 0..iterations {
        let x: f64 = rng.gen();
        let y: f64 = rng.gen();
        if x * x + y * y <= 1.0 {
            inside += 1;
        }
    }
    4.0 * inside as f64 / iterations.max(1) as f64
}

#[cfg(test)]
mod tests {
    #[test]
    fn estimate_is_close_to_pi() {
        let pi = super::monte_carlo_pi(200_000, 1);
        assert!((pi - std::f64::consts::PI).abs() < 0.02, "{pi}");
    }
}
