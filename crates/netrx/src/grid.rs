//! The seed's sweep: inter-send waits from 8.85e-11 s to 0.005 s, each 1.176 times the last,
//! and evenly spread subsets of it for shorter runs.

/// The seed's smallest wait (s).
pub const SEED_WAIT_MIN_S: f64 = 8.85e-11;
/// The seed's largest wait (s).
pub const SEED_WAIT_MAX_S: f64 = 0.005;
/// The seed's step factor.
pub const SEED_WAIT_FACTOR: f64 = 1.176;

/// Every wait of the seed's grid, smallest first (111 values).
pub fn seed_waits() -> Vec<f64> {
    let mut v = Vec::new();
    let mut w = SEED_WAIT_MIN_S;
    while w <= SEED_WAIT_MAX_S * (1.0 + 1e-9) {
        v.push(w);
        w *= SEED_WAIT_FACTOR;
    }
    v
}

/// `n` waits of the seed's grid, largest first, spread evenly in log-rate between the largest
/// wait and `fastest_s` (the grid point nearest to it), always ending with the seed's smallest.
/// Waits far below what a sender can achieve all mean "send as fast as possible", so a short
/// sweep spends its points where the rate still changes.
pub fn subset(n: usize, fastest_s: f64) -> Vec<f64> {
    let all = seed_waits();
    if n == 0 {
        return vec![];
    }
    if n >= all.len() {
        return all.into_iter().rev().collect();
    }
    let hi = all.len() - 1;
    let lo = all.iter().position(|&w| w >= fastest_s).unwrap_or(0).min(hi);
    let mut idx: Vec<usize> = Vec::new();
    let m = n.saturating_sub(1).max(1);
    for k in 0..m {
        let f = k as f64 / (m.max(2) - 1).max(1) as f64;
        idx.push(hi - ((hi - lo) as f64 * f).round() as usize);
    }
    idx.push(0);
    idx.dedup();
    idx.into_iter().map(|i| all[i]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_matches_the_seed() {
        let w = seed_waits();
        assert!((w[0] - 8.85e-11).abs() < 1e-20);
        assert!(*w.last().unwrap() <= 0.005 && *w.last().unwrap() > 0.005 / 1.176);
        assert_eq!(w.len(), 111);
        for p in w.windows(2) {
            assert!((p[1] / p[0] - 1.176).abs() < 1e-9);
        }
    }

    #[test]
    fn subsets_run_from_slow_to_fastest() {
        let s = subset(6, 2e-5);
        assert_eq!(s.len(), 6);
        assert!(s[0] > 0.004);
        assert_eq!(*s.last().unwrap(), SEED_WAIT_MIN_S);
        for p in s.windows(2) {
            assert!(p[1] < p[0]);
        }
    }
}
