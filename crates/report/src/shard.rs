//! `--shard K/N`: a deterministic share of the cases for one of N machines. The unit is one
//! experiment. Cases are dealt longest-estimate-first to the least-loaded shard (ties: lower
//! shard, then name order), so the shards take about equal time and every machine that runs
//! the same schedlab with the same `--only` and scale computes the same split.

use std::fmt;
use std::str::FromStr;

/// Shard `k` of `n` (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub k: usize,
    pub n: usize,
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("'{s}' is not a shard: write K/N with 1 ≤ K ≤ N, e.g. 2/4");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n): (usize, usize) = (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if n == 0 || k == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// The shard (1-based) of each case, given (name, estimated seconds) per case.
pub fn assign(cases: &[(&str, f64)], n: usize) -> Vec<usize> {
    let n = n.max(1);
    let mut order: Vec<usize> = (0..cases.len()).collect();
    order.sort_by(|&a, &b| cases[b].1.total_cmp(&cases[a].1).then_with(|| cases[a].0.cmp(cases[b].0)));
    let mut load = vec![0.0f64; n];
    let mut out = vec![0; cases.len()];
    for i in order {
        let target = (0..n).min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b))).unwrap_or(0);
        load[target] += cases[i].1.max(0.0);
        out[i] = target + 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { k: 2, n: 4 }));
        for bad in ["0/4", "5/4", "1/0", "x/2", "3", "", "1/2/3"] {
            let err = bad.parse::<Shard>().unwrap_err();
            assert!(err.contains(&format!("'{bad}'")), "{err}");
        }
        assert_eq!(Shard { k: 1, n: 3 }.to_string(), "1/3");
    }

    #[test]
    fn longest_first_balances() {
        let cases = [("a", 10.0), ("b", 60.0), ("c", 30.0), ("d", 30.0)];
        let s = assign(&cases, 2);
        assert_eq!(s, vec![1, 1, 2, 2]); // b + a (70) vs c + d (60)
        assert_eq!(assign(&cases, 1), vec![1; 4]);
    }

    #[test]
    fn every_case_in_exactly_one_shard_whatever_the_listing_order() {
        // A small deterministic sweep instead of a property test (no proptest in this crate).
        let mut x = 7u64;
        for len in 0..12 {
            for n in 1..5 {
                let est: Vec<f64> = (0..len)
                    .map(|_| {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        ((x >> 33) % 100) as f64
                    })
                    .collect();
                let names: Vec<String> = (0..len).map(|i| format!("e{i:02}")).collect();
                let cases: Vec<(&str, f64)> = names.iter().map(String::as_str).zip(est.iter().copied()).collect();
                let s = assign(&cases, n);
                assert!(s.iter().all(|&k| (1..=n).contains(&k)));
                let mut rev = cases.clone();
                rev.reverse();
                let mut s2 = assign(&rev, n);
                s2.reverse();
                assert_eq!(s, s2, "{cases:?} into {n}");
            }
        }
    }
}
