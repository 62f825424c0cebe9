//! Per-entity load tracking (PELT) after kernel/sched/pelt.c of Linux 6.18: a geometric series
//! over 1024 µs periods (the time unit is 1024 ns) whose weight halves every 32 periods
//! (`y^32 = 1/2`). Each signal sums, per period, the fraction of it the entity was runnable
//! (`load`, `runnable`) or running (`util`), older periods decayed by `y` each; the averages are
//! the sums over `LOAD_AVG_MAX`, so a task always runnable tends to its weight (load) and 1024
//! (util). The load balancer and the wake-up placement read these.
//!
//! Functions followed: `decay_load()`, `__accumulate_pelt_segments()`, `accumulate_sum()`,
//! `___update_load_sum()`, `___update_load_avg()` — the kernel's integer arithmetic, so the
//! model's averages are the kernel's for the same history.

use crate::policy::Time;

/// `LOAD_AVG_PERIOD`: the half-life in periods.
pub const LOAD_AVG_PERIOD: u64 = 32;
/// `LOAD_AVG_MAX`: the sum of a signal always on.
pub const LOAD_AVG_MAX: u64 = 47742;
/// The scale of util and of a nice-0 weight.
pub const SCALE: u64 = 1024;

/// `runnable_avg_yN_inv[]`: y^n in 2^-32 units, n < 32.
const Y_INV: [u64; 32] = [
    0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6, 0xe0ccdeeb, 0xdbfbb796, 0xd744fcc9,
    0xd2a81d91, 0xce248c14, 0xc9b9bd85, 0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46, 0xb504f333, 0xb123f581,
    0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9, 0x9837f050, 0x94f4efa8, 0x91c3d373,
    0x8ea4398a, 0x8b95c1e3, 0x88980e80, 0x85aac367, 0x82cd8698,
];

/// `decay_load()`: `val · y^n`.
pub fn decay_load(val: u64, n: u64) -> u64 {
    if n > LOAD_AVG_PERIOD * 63 {
        return 0;
    }
    let val = val >> (n / LOAD_AVG_PERIOD);
    ((val as u128 * Y_INV[(n % LOAD_AVG_PERIOD) as usize] as u128) >> 32) as u64
}

/// `__accumulate_pelt_segments()`: the contribution of `periods` full periods crossed, the end
/// of the period that was open (`d1`) decayed by all of them, and the start of the new one (`d3`).
fn accumulate_segments(periods: u64, d1: u64, d3: u64) -> u64 {
    let c1 = decay_load(d1, periods);
    let c2 = LOAD_AVG_MAX - decay_load(LOAD_AVG_MAX, periods) - SCALE;
    c1 + c2 + d3
}

/// What an entity did over an interval, as PELT counts it (`___update_load_sum()`'s `load`,
/// `runnable` and `running`): load counts every moment on a run queue, a delayed dequeue's
/// included (`se->on_rq`); runnable only the moments it could run (`se_runnable()` is false for
/// a delayed entity); util the moments it ran.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Presence {
    #[default]
    Off,
    /// Blocked, but kept on its queue until its lag is paid back (`DELAY_DEQUEUE`).
    Delayed,
    Waiting,
    Running,
}

impl Presence {
    fn load(self) -> bool {
        self != Presence::Off
    }
    fn runnable(self) -> bool {
        matches!(self, Presence::Waiting | Presence::Running)
    }
    fn running(self) -> bool {
        self == Presence::Running
    }
}

/// One entity's (or CPU's) signals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pelt {
    /// Time up to which the sums are accounted (ns; the sub-1024 ns rest is carried).
    pub last_update: Time,
    /// How much of the current period is accounted (0..1024).
    pub period_contrib: u64,
    pub load_sum: u64,
    pub runnable_sum: u64,
    pub util_sum: u64,
    pub load_avg: u64,
    pub runnable_avg: u64,
    pub util_avg: u64,
}

impl Pelt {
    /// A new task's signals (`init_entity_runnable_average()`): load as if always runnable,
    /// util and runnable `util` (what `post_init_entity_util_avg()` gave it), from `now`.
    pub fn new_task(weight: u64, util: u64, now: Time) -> Pelt {
        let divider = Self::divider(0);
        Pelt {
            last_update: now,
            load_avg: weight,
            load_sum: divider.max(1),
            util_avg: util,
            util_sum: util * divider,
            runnable_avg: util,
            runnable_sum: util * divider,
            ..Pelt::default()
        }
    }

    /// `get_pelt_divider()`.
    fn divider(period_contrib: u64) -> u64 {
        LOAD_AVG_MAX - SCALE + period_contrib
    }

    /// `___update_load_sum()` then `___update_load_avg()`: account `[last_update, now)` with the
    /// state it had, `weight` scaling the load average. Returns whether a period boundary was
    /// crossed (the averages changed).
    pub fn update(&mut self, now: Time, state: Presence, weight: u64) -> bool {
        if now < self.last_update {
            self.last_update = now;
            return false;
        }
        let delta = (now - self.last_update) >> 10;
        if delta == 0 {
            return false;
        }
        self.last_update += delta << 10;
        if self.accumulate(delta, state) {
            let d = Self::divider(self.period_contrib);
            self.load_avg = weight * self.load_sum / d;
            self.runnable_avg = self.runnable_sum / d;
            self.util_avg = self.util_sum / d;
            return true;
        }
        false
    }

    /// `accumulate_sum()`: `delta` in 1024 ns units.
    fn accumulate(&mut self, delta: u64, state: Presence) -> bool {
        let mut contrib = delta;
        let delta = delta + self.period_contrib;
        let periods = delta / SCALE;
        if periods > 0 {
            self.load_sum = decay_load(self.load_sum, periods);
            self.runnable_sum = decay_load(self.runnable_sum, periods);
            self.util_sum = decay_load(self.util_sum, periods);
            if state.load() {
                contrib = accumulate_segments(periods, SCALE - self.period_contrib, delta % SCALE);
            }
        }
        self.period_contrib = delta % SCALE;
        if state.load() {
            self.load_sum += contrib;
        }
        if state.runnable() {
            self.runnable_sum += contrib << 10;
        }
        if state.running() {
            self.util_sum += contrib << 10;
        }
        periods > 0
    }

    /// The averages as of `now` for an entity that has been in the given state since its last
    /// update (the signals themselves are left as they are).
    pub fn at(&self, now: Time, state: Presence, weight: u64) -> Pelt {
        let mut p = *self;
        p.update(now, state, weight);
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Time = 1_000_000;

    #[test]
    fn decay_halves_every_32_periods() {
        assert_eq!(decay_load(1024, 0), 1023, "y^0 in 2^-32 units is 0xffffffff");
        // y^0 is 1 − 2^-32: the kernel's products round down by one.
        assert_eq!(decay_load(1 << 20, 32), (1 << 19) - 1);
        assert_eq!(decay_load(1 << 20, 64), (1 << 18) - 1);
        assert_eq!(decay_load(u64::MAX, 32 * 64), 0);
        // y^16 = 1/√2: 0xb504f333 / 2^32 = 0.70710678.
        assert_eq!(decay_load(1_000_000, 16), 707_106);
    }

    #[test]
    fn an_always_running_task_tends_to_its_weight_and_a_sleeper_decays() {
        let mut p = Pelt { last_update: 0, ..Pelt::default() };
        // Running for 32 periods (≈33.5 ms): half of the way; for 300 ms: all but 0.2 %.
        p.update(32 * 1024 * 1024, Presence::Running, 1024);
        assert!((500..=530).contains(&p.util_avg), "util after one half-life: {}", p.util_avg);
        p.update(300 * MS, Presence::Running, 1024);
        assert!(p.util_avg >= 1000 && p.load_avg >= 1000, "{p:?}");
        assert!(p.util_avg <= 1024 && p.load_avg <= 1024);
        // Asleep for 32 more periods: halved.
        let before = p.load_avg;
        let at = p.last_update + 32 * 1024 * 1024;
        p.update(at, Presence::Off, 1024);
        assert!(p.load_avg.abs_diff(before / 2) <= 2, "{} → {}", before, p.load_avg);
        // Runnable but waiting for 100 ms (97 periods): load at 1 − 2^(−97/32) = 87.8 % of the
        // weight, util nothing.
        let mut q = Pelt::default();
        q.update(100 * MS, Presence::Waiting, 3121);
        assert!((2700..2760).contains(&q.load_avg) && q.util_avg == 0, "{q:?}");
        // Under 1024 ns nothing is accounted yet; the rest carries over.
        let mut r = Pelt::default();
        assert!(!r.update(1000, Presence::Running, 1024));
        assert_eq!(r.last_update, 0);
    }

    #[test]
    fn a_delayed_entity_adds_load_but_is_not_runnable() {
        // 100 ms delayed after 100 ms waiting: the load keeps growing towards the weight, the
        // runnable average decays by y^97 (about 12% of it is left), util stays 0.
        let mut p = Pelt::default();
        p.update(100 * MS, Presence::Waiting, 1024);
        let (load, runnable) = (p.load_avg, p.runnable_avg);
        assert_eq!(load, runnable, "waiting counts in both: {p:?}");
        p.update(200 * MS, Presence::Delayed, 1024);
        assert!(p.load_avg > load && p.load_avg >= 1000, "{p:?}");
        assert!(p.runnable_avg < runnable / 7 && p.runnable_avg > runnable / 10, "{p:?}");
        assert_eq!(p.util_avg, 0);
    }

    #[test]
    fn a_new_task_starts_at_its_weight() {
        let p = Pelt::new_task(1024, 512, 7 * MS);
        assert_eq!((p.load_avg, p.util_avg, p.last_update), (1024, 512, 7 * MS));
        // Asleep from then on, its load halves in 32 periods.
        let q = p.at(7 * MS + 32 * 1024 * 1024, Presence::Off, 1024);
        assert!(q.load_avg.abs_diff(512) <= 2, "{q:?}");
    }
}
