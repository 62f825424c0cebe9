//! ULE's per-thread history and the priority it yields: the interactivity score from voluntary
//! sleep and run time (`sched_interact_score`, `sched_interact_update`, `sched_interact_fork`),
//! the %CPU estimate of the last ten seconds (`sched_pctcpu_update`) and the user priority
//! made of them and nice (`sched_priority`). All in the kernel's integer units: times are hz
//! ticks shifted left by `SCHED_TICK_SHIFT`, priorities are 0..=255, lower is better.

/// `hz`: the model's clock-interrupt rate (GENERIC's default on amd64); one hz tick = 1 ms.
pub const HZ: i64 = 1000;
/// `SCHED_TICK_SHIFT`: history is kept in hz ticks << 10 so stathz → hz conversion keeps its
/// fraction.
pub const SCHED_TICK_SHIFT: u32 = 10;
/// `SCHED_TICK_TARG`: the %CPU window, 10 seconds of hz ticks.
const SCHED_TICK_TARG: i64 = HZ * 10;
/// `SCHED_TICK_MAX`: how far the window may grow before it is scaled back.
const SCHED_TICK_MAX: i64 = SCHED_TICK_TARG + HZ;
/// `SCHED_SLP_RUN_MAX`: most sleep + run history kept (5 s).
pub const SCHED_SLP_RUN_MAX: u32 = ((HZ as u32) * 5) << SCHED_TICK_SHIFT;
/// `SCHED_SLP_RUN_FORK`: most history a child inherits (0.5 s).
pub const SCHED_SLP_RUN_FORK: u32 = ((HZ as u32) / 2) << SCHED_TICK_SHIFT;
/// `SCHED_INTERACT_MAX` and its half.
pub const SCHED_INTERACT_MAX: i32 = 100;
pub const SCHED_INTERACT_HALF: i32 = SCHED_INTERACT_MAX / 2;
/// `SCHED_INTERACT_THRESH`, the default of `kern.sched.interact` (`sched_interact`).
pub const SCHED_INTERACT_THRESH: i32 = 30;

// sys/sys/priority.h (FreeBSD ≥ 9: interrupt 0-47, realtime 48-79, kernel 80-119, timeshare
// 120-223, idle 224-255).
pub const PRI_MIN_ITHD: i32 = 0;
pub const PRI_MIN_REALTIME: i32 = 48;
pub const PRI_MIN_KERN: i32 = 80;
pub const PRI_MIN_TIMESHARE: i32 = 120;
pub const PRI_MAX_TIMESHARE: i32 = PRI_MIN_IDLE - 1;
pub const PRI_MIN_IDLE: i32 = 224;
pub const PRI_MAX_IDLE: i32 = 255;

// sched_ule.c's split of the timeshare range, with PRIO_MIN = -20, PRIO_MAX = 20.
const SCHED_PRI_NRESV: i32 = 40;
const SCHED_PRI_NHALF: i32 = SCHED_PRI_NRESV / 2;
const PRI_TIMESHARE_RANGE: i32 = PRI_MAX_TIMESHARE - PRI_MIN_TIMESHARE + 1; // 104
const PRI_INTERACT_RANGE: i32 = (PRI_TIMESHARE_RANGE - SCHED_PRI_NRESV) / 2; // 32
/// `PRI_BATCH_RANGE` = 72.
pub const PRI_BATCH_RANGE: i32 = PRI_TIMESHARE_RANGE - PRI_INTERACT_RANGE;
pub const PRI_MIN_INTERACT: i32 = PRI_MIN_TIMESHARE; // 120
pub const PRI_MAX_INTERACT: i32 = PRI_MIN_TIMESHARE + PRI_INTERACT_RANGE - 1; // 151
pub const PRI_MIN_BATCH: i32 = PRI_MIN_TIMESHARE + PRI_INTERACT_RANGE; // 152
pub const PRI_MAX_BATCH: i32 = PRI_MAX_TIMESHARE; // 223
const SCHED_PRI_MIN: i32 = PRI_MIN_BATCH + SCHED_PRI_NHALF; // 172
const SCHED_PRI_MAX: i32 = PRI_MAX_BATCH - SCHED_PRI_NHALF; // 203
const SCHED_PRI_RANGE: i32 = SCHED_PRI_MAX - SCHED_PRI_MIN + 1; // 32

/// `ts_slptime` / `ts_runtime`: voluntary sleep and run time, hz ticks << 10.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct History {
    pub slptime: u32,
    pub runtime: u32,
}

impl History {
    /// `sched_interact_score`: 0 (sleeps far more than it runs) to 100 (the reverse). With a
    /// threshold of at most 50 a thread that runs at least as much as it sleeps scores 50 at
    /// once (the kernel skips the rest: it cannot be interactive).
    pub fn score(&self, interact: i32) -> i32 {
        let (run, slp) = (self.runtime as i64, self.slptime as i64);
        let half = SCHED_INTERACT_HALF as i64;
        if interact <= SCHED_INTERACT_HALF && run >= slp {
            return SCHED_INTERACT_HALF;
        }
        if run > slp {
            let div = (run / half).max(1);
            return (half + (half - slp / div)) as i32;
        }
        if slp > run {
            let div = (slp / half).max(1);
            return (run / div) as i32;
        }
        if run != 0 {
            SCHED_INTERACT_HALF
        } else {
            0
        }
    }

    /// `sched_interact_update`: keep at most `SCHED_SLP_RUN_MAX` of history, scaling both parts
    /// so their ratio (the score) survives: to 4/5 just past the limit, by half past 6/5 of it,
    /// and to (limit, 1) or (1, limit) past twice it.
    pub fn update(&mut self) {
        let sum = self.runtime.saturating_add(self.slptime);
        if sum < SCHED_SLP_RUN_MAX {
            return;
        }
        if sum > SCHED_SLP_RUN_MAX * 2 {
            if self.runtime > self.slptime {
                *self = History { runtime: SCHED_SLP_RUN_MAX, slptime: 1 };
            } else {
                *self = History { slptime: SCHED_SLP_RUN_MAX, runtime: 1 };
            }
            return;
        }
        if sum > (SCHED_SLP_RUN_MAX / 5) * 6 {
            self.runtime /= 2;
            self.slptime /= 2;
            return;
        }
        self.runtime = (self.runtime / 5) * 4;
        self.slptime = (self.slptime / 5) * 4;
    }

    /// `sched_interact_fork`: a child keeps its parent's ratio but at most
    /// `SCHED_SLP_RUN_FORK` of history, so it shows its own behaviour quickly.
    pub fn fork(&self) -> History {
        let sum = self.runtime + self.slptime;
        if sum > SCHED_SLP_RUN_FORK {
            let ratio = sum / SCHED_SLP_RUN_FORK;
            return History { runtime: self.runtime / ratio, slptime: self.slptime / ratio };
        }
        *self
    }
}

/// `ts_ticks` / `ts_ftick` / `ts_ltick`: CPU ticks (hz ticks << 10) used in the window
/// `[ftick, ltick]` of hz ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PctCpu {
    pub ticks: i64,
    pub ftick: i64,
    pub ltick: i64,
}

impl PctCpu {
    /// A new thread's window starts now (`schedinit` / a parent with no history).
    pub fn at(t: i64) -> PctCpu {
        PctCpu { ticks: 0, ftick: t, ltick: t }
    }

    /// `sched_pctcpu_update`: at hz tick `t`, slide the window (forget it after 10 s without
    /// running, scale it back when it has grown past 11 s) and, if the thread ran since
    /// `ltick`, count that time.
    pub fn update(&mut self, t: i64, run: bool) {
        if t - self.ltick >= SCHED_TICK_TARG {
            self.ticks = 0;
            self.ftick = t - SCHED_TICK_TARG;
        } else if t - self.ftick >= SCHED_TICK_MAX {
            self.ticks = (self.ticks / (self.ltick - self.ftick)) * (self.ltick - (t - SCHED_TICK_TARG));
            self.ftick = t - SCHED_TICK_TARG;
        }
        if run {
            self.ticks += (t - self.ltick) << SCHED_TICK_SHIFT;
        }
        self.ltick = t;
    }

    /// `SCHED_PRI_TICKS`: the %CPU of the window scaled to 0..SCHED_PRI_RANGE.
    fn pri_ticks(&self) -> i64 {
        let total = (self.ltick - self.ftick).max(HZ);
        let range = SCHED_PRI_RANGE as i64;
        // roundup(total, range) / range
        (self.ticks >> SCHED_TICK_SHIFT) / ((total + range - 1) / range)
    }
}

/// `sched_priority` for a timeshare thread: an interactive one (score + nice below
/// `interact`) gets `PRI_MIN_INTERACT` + score steps of `PRI_INTERACT_RANGE / interact`;
/// any other gets `SCHED_PRI_MIN` + its %CPU (at most `SCHED_PRI_RANGE - 1`) + nice.
pub fn user_priority(h: &History, pct: &PctCpu, nice: i32, interact: i32) -> i32 {
    let score = (h.score(interact) + nice).max(0);
    if score < interact {
        return PRI_MIN_INTERACT + (PRI_MAX_INTERACT - PRI_MIN_INTERACT + 1) / interact * score;
    }
    let mut pri = SCHED_PRI_MIN;
    if pct.ticks != 0 {
        pri += pct.pri_ticks().min(SCHED_PRI_RANGE as i64 - 1) as i32;
    }
    (pri + nice).clamp(PRI_MIN_BATCH, PRI_MAX_BATCH)
}
