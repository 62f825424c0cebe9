//! How often a CPU about to go idle looks for a task to pull: NI_RANDOM, "sched/fair:
//! Proportional newidle balance" (mainline commit 33cf66d88306, in 6.18.5 and later stable
//! kernels). Each CPU keeps, per scheduling domain, how many of its recent newidle balances
//! pulled a task (`sd->newidle_ratio`, out of 1024); a CPU going idle throws a 1024-sided die and
//! balances only if it shows at most `1 + ratio`, and a success then counts `1024 / (1 + ratio)`
//! times, so the ratio follows the success rate of the balances it lets through
//! (`update_newidle_stats()`, `sched_balance_newidle()` in kernel/sched/fair.c).
//!
//! The consequence a model sees: on a CPU whose newidle balances have been failing (tasks pinned
//! elsewhere, nothing worth taking), the ratio falls towards 0 and a CPU going idle beside an
//! overloaded one almost never pulls — it waits for the periodic or NOHZ balance, or for a
//! wake-up to be placed on it.

/// One CPU's newidle statistics for its one domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewidleStats {
    call: u32,
    success: u32,
    /// `sd->newidle_ratio`: successes per 1024 balances, as last computed.
    pub ratio: u32,
}

impl NewidleStats {
    /// Statistics that read as `ratio`: `sd_init()` starts every domain at 512 calls, 256
    /// successes, ratio 512.
    pub fn new(ratio: u32) -> Self {
        let ratio = ratio.min(1024);
        NewidleStats { call: 512, success: ratio / 2, ratio }
    }

    /// `update_newidle_stats()`: one more call, `success` more successes; every 1024 calls the
    /// ratio is taken and both counts halved.
    pub fn record(&mut self, success: u32) {
        self.call += 1;
        self.success += success;
        if self.call >= 1024 {
            self.ratio = self.success;
            self.call /= 2;
            self.success /= 2;
        }
    }

    /// The die shows `d1k` (0–1023): the weight a success of this balance counts with, or None
    /// when the balance is skipped (recorded as a failed call, as the kernel does).
    pub fn roll(&mut self, d1k: u32) -> Option<u32> {
        let weight = 1 + self.ratio;
        if d1k > weight {
            self.record(0);
            return None;
        }
        Some((1024 + weight / 2) / weight)
    }
}

impl Default for NewidleStats {
    fn default() -> Self {
        NewidleStats::new(super::super::NI_RATIO_AT_BOOT)
    }
}

/// The die: a fixed-seed generator (SplitMix64), so a run is reproducible.
#[derive(Debug, Clone)]
pub struct Die(u64);

impl Default for Die {
    fn default() -> Self {
        Die(0x5eed_1d1e)
    }
}

impl Die {
    /// A throw of the 1024-sided die.
    pub fn throw(&mut self) -> u32 {
        let z = crate::engine::splitmix64(self.0);
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        (z % 1024) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_halve_the_ratio_every_512_calls() {
        let mut s = NewidleStats::new(512);
        for _ in 0..511 {
            s.record(0);
        }
        assert_eq!(s.ratio, 512, "not yet 1024 calls");
        s.record(0);
        // 1024 calls, 256 successes: the ratio is 256, the counts 512 and 128.
        assert_eq!((s.ratio, s.call, s.success), (256, 512, 128));
        for _ in 0..512 {
            s.record(0);
        }
        assert_eq!(s.ratio, 128);
    }

    #[test]
    fn a_low_ratio_lets_few_balances_through_and_weighs_their_success() {
        let mut s = NewidleStats::new(0);
        // Ratio 0: the die must show 0 or 1; a success then counts 1024 / 1 = 1024.
        assert_eq!(s.roll(1), Some(1024));
        assert_eq!(s.roll(2), None);
        let mut s = NewidleStats::new(255);
        // Ratio 255: weight 256, a success counts (1024 + 128) / 256 = 4.
        assert_eq!(s.roll(256), Some(4));
        assert_eq!(s.roll(257), None);
        let mut die = Die::default();
        let through = (0..100_000).filter(|_| NewidleStats::new(0).roll(die.throw()).is_some()).count();
        // 2 faces of 1024: about 195 in 100,000.
        assert!((120..280).contains(&through), "{through} balances let through at ratio 0");
    }

    #[test]
    fn the_ratio_climbs_back_when_the_balances_let_through_succeed() {
        let mut s = NewidleStats::new(0);
        let mut die = Die::default();
        for _ in 0..4096 {
            if let Some(w) = s.roll(die.throw()) {
                s.record(w);
            }
        }
        // Every balance that runs succeeds: the weighted successes put the ratio near 1024.
        assert!(s.ratio > 600, "ratio {} after balances that all succeed", s.ratio);
    }
}
