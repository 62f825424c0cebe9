//! The fair class's integer arithmetic, as Linux 6.18 does it on 64-bit: task weights and their
//! precomputed inverses (`sched_prio_to_weight[]` / `sched_prio_to_wmult[]`, kernel/sched/core.c;
//! `WEIGHT_IDLEPRIO`/`WMULT_IDLEPRIO`, sched.h), virtual time `calc_delta_fair()` through the
//! multiply-and-shift `__calc_delta()` of fair.c (6.18 still uses it on 64-bit; a plain division
//! came only in 2026, "sched/fair: Use full weight to __calc_delta()"), and the weighted average
//! `avg_vruntime()` with its floor bias and the division-free eligibility test
//! `vruntime_eligible()`.

use crate::policies::cfs::NICE_TO_WEIGHT;

/// `NICE_0_LOAD` after `scale_load_down()`: the weight of a nice-0 task.
pub const NICE_0_WEIGHT: u32 = 1024;

/// Linux's `sched_prio_to_wmult[]`: 2^32 / weight, nice −20 … 19.
pub const NICE_TO_WMULT: [u32; 40] = [
    48388, 59856, 76040, 92818, 118348, 147320, 184698, 229616, 287308, 360437, 449829, 563644, 704093, 875809,
    1099582, 1376151, 1717300, 2157191, 2708050, 3363326, 4194304, 5237765, 6557202, 8165337, 10153587, 12820798,
    15790321, 19976592, 24970740, 31350126, 39045157, 49367440, 61356676, 76695844, 95443717, 119304647, 148102320,
    186737708, 238609294, 286331153,
];

/// A SCHED_IDLE task's weight and inverse (`WEIGHT_IDLEPRIO`, `WMULT_IDLEPRIO`).
pub const WEIGHT_IDLEPRIO: u32 = 3;
pub const WMULT_IDLEPRIO: u32 = 1431655765;

/// A task's load weight with `__calc_delta(·, NICE_0_LOAD, lw)` reduced to one multiplication
/// and one shift: `fact = 1024 × inv_weight`, shifted right until it fits 32 bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Load {
    pub weight: u32,
    fact: u32,
    shift: u32,
}

/// The load of a nice-0 task (`Load::of_nice(0)`).
pub const NICE_0: Load = Load { weight: NICE_0_WEIGHT, fact: 1 << 31, shift: 31 };

impl Default for Load {
    fn default() -> Self {
        NICE_0
    }
}

impl Load {
    fn new(weight: u32, wmult: u32) -> Load {
        // __calc_delta(): fact = scale_load_down(NICE_0_LOAD) * lw->inv_weight, then drop the
        // high bits (fls of the high word) from fact and from the shift alike.
        let mut fact = NICE_0_WEIGHT as u64 * wmult as u64;
        let mut shift = 32;
        let hi = (fact >> 32) as u32;
        if hi != 0 {
            let fs = 32 - hi.leading_zeros();
            shift -= fs;
            fact >>= fs;
        }
        Load { weight, fact: fact as u32, shift }
    }

    /// The weight of a nice value (clamped to −20..=19).
    pub fn of_nice(nice: i32) -> Load {
        let i = (nice.clamp(-20, 19) + 20) as usize;
        Load::new(NICE_TO_WEIGHT[i] as u32, NICE_TO_WMULT[i])
    }

    /// SCHED_IDLE's weight 3.
    pub fn idle() -> Load {
        Load::new(WEIGHT_IDLEPRIO, WMULT_IDLEPRIO)
    }

    /// `calc_delta_fair(delta, se)`: `delta × 1024 / weight` in the kernel's fixed point
    /// (`mul_u64_u32_shr(delta, fact, shift)`); exact for nice 0.
    #[inline]
    pub fn vdelta(self, delta: u64) -> u64 {
        if self.weight == NICE_0_WEIGHT {
            return delta;
        }
        ((delta as u128 * self.fact as u128) >> self.shift) as u64
    }

    /// The least real time `d ≥ 1` with `vdelta(d) ≥ v`: when a running task's virtual time
    /// reaches a point `v` ahead.
    #[inline]
    pub fn time_for(self, v: u64) -> u64 {
        if self.weight == NICE_0_WEIGHT {
            return v.max(1);
        }
        let need = (v as u128) << self.shift;
        (need.div_ceil(self.fact as u128) as u64).max(1)
    }
}

/// `Σ w_i·v_i` and `Σ w_i` over the entities on the run queue (queued, delayed and current ones).
/// The kernel keeps `Σ w_i·(v_i − v0)` in s64 around a moving `v0` (`min_vruntime` in 6.18.0,
/// `zero_vruntime` after the 6.18.y fixes) to avoid overflow; with i128 no base is needed, and
/// the results are the same: `v0 + ⌊Σ w(v − v0) / W⌋ = ⌊Σ w·v / W⌋` for an integer `v0`, and
/// `Σ w(v_j − v0) ≥ (v − v0)·W ⇔ Σ w·v_j ≥ v·W`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sums {
    pub wv: i128,
    pub w: i64,
}

impl Sums {
    #[inline]
    pub fn add(&mut self, weight: u32, v: i64) {
        self.wv += weight as i128 * v as i128;
        self.w += weight as i64;
    }

    #[inline]
    pub fn sub(&mut self, weight: u32, v: i64) {
        self.wv -= weight as i128 * v as i128;
        self.w -= weight as i64;
    }

    /// `avg_vruntime()`: the weighted average, rounded down (the kernel subtracts `load − 1`
    /// from a negative sum before dividing so that `avg_vruntime() + 0` stays eligible).
    /// None when the queue is empty.
    #[inline]
    pub fn avg(&self) -> Option<i64> {
        if self.w == 0 {
            return None;
        }
        if let Ok(wv) = i64::try_from(self.wv) {
            return Some(wv.div_euclid(self.w));
        }
        Some(self.wv.div_euclid(self.w as i128) as i64)
    }

    /// `vruntime_eligible()`: `v ≤ V` without the division, `Σ w·v ≥ v·W`.
    #[inline]
    pub fn eligible(&self, v: i64) -> bool {
        self.wv >= v as i128 * self.w as i128
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_weights_are_two_to_the_32_over_the_weight() {
        for (i, &w) in NICE_TO_WEIGHT.iter().enumerate() {
            let exact = (1u64 << 32) as f64 / w as f64;
            assert!((NICE_TO_WMULT[i] as f64 - exact).abs() < 1.0, "nice {}", i as i32 - 20);
        }
        assert!((WMULT_IDLEPRIO as f64 - (1u64 << 32) as f64 / 3.0).abs() < 1.0);
    }

    #[test]
    fn vdelta_is_the_kernels_fixed_point() {
        // nice 0: identity.
        assert_eq!(Load::of_nice(0), NICE_0);
        assert_eq!(Load::of_nice(0).vdelta(1_400_000), 1_400_000);
        // nice -5 (w 3121, inv 1376151): fact = 1024 * 1376151 = 1409178624 < 2^32, shift 32;
        // 1.4 ms -> 1_400_000 * 1409178624 >> 32 = 459_339 (exact 1_400_000*1024/3121 = 459_339.96).
        assert_eq!(Load::of_nice(-5).vdelta(1_400_000), 459_339);
        // nice 19 (w 15, inv 286331153): fact = 293203100672 = 68.3 * 2^32, fls(68) = 7:
        // fact >> 7 = 2290649223, shift 25; 1 ms -> 1e6 * 2290649223 >> 25 = 68_266_666.
        assert_eq!(Load::of_nice(19).vdelta(1_000_000), 68_266_666);
        // SCHED_IDLE (w 3): ~341x.
        assert_eq!(Load::idle().vdelta(1_000_000), 341_333_333);
        for nice in -20..=19 {
            let l = Load::of_nice(nice);
            for v in [1u64, 7, 1000, 459_339, 1_400_000, 68_266_666, 10_000_000_000] {
                let d = l.time_for(v);
                assert!(l.vdelta(d) >= v, "nice {nice} v {v}");
                assert!(d == 1 || l.vdelta(d - 1) < v, "nice {nice} v {v}: {d} is not the least");
            }
        }
    }

    #[test]
    fn average_rounds_down_and_eligibility_needs_no_division() {
        let mut s = Sums::default();
        assert_eq!(s.avg(), None);
        s.add(1024, 10);
        s.add(1024, 13);
        // (10 + 13) / 2 = 11.5 -> 11; 11 is eligible, 12 is not.
        assert_eq!(s.avg(), Some(11));
        assert!(s.eligible(11) && !s.eligible(12));
        let mut n = Sums::default();
        n.add(1024, -10);
        n.add(1024, -13);
        // -11.5 -> -12 (floor, not truncation): the average itself stays eligible.
        assert_eq!(n.avg(), Some(-12));
        assert!(n.eligible(-12) && !n.eligible(-11));
        n.sub(1024, -13);
        assert_eq!(n.avg(), Some(-10));
    }
}
