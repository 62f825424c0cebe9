//! The fair deadline server of Linux 6.18 (`rq->fair_server`, kernel/sched/deadline.c): a
//! deferred SCHED_DEADLINE reservation of 50 ms every 1000 ms per CPU that runs fair tasks
//! above real-time ones when real-time tasks have starved them.
//!
//! The server is deferred (`dl_defer`): while fair tasks get the CPU by themselves, their run
//! time is charged to it in the background and it never runs. Only when its runtime could no
//! longer be spent before its deadline (the zero-laxity instant, `deadline − runtime`) does its
//! timer put it on the deadline queue, where it pre-empts real-time tasks and serves fair ones
//! until its runtime is spent. States (the kernel's A–E):
//!
//! - **stopped** (`dl_server_active = 0`): no fair task has woken since it last found none.
//!   `dl_server_start()` on the first fair enqueue applies the CBS wake-up rule
//!   (`update_dl_entity()`: a deadline passed starts a new period, `deadline = now + period`,
//!   `runtime` full; a reservation that would overflow its density keeps its deadline with
//!   `runtime = density × (deadline − now)`, the revised rule the server uses) and then serves
//!   at once if it was running when it stopped (`dl_defer_running`), else waits for zero laxity;
//! - **waiting** (armed, throttled): its timer is set at `deadline − runtime`. Fair run time
//!   spends its runtime; spent, a new period starts and the wait moves out
//!   (`update_curr_dl_se()`). When the timer fires more than `dl_server_min_res` (1 ms) early
//!   for the runtime now left it is moved; otherwise the server starts running
//!   (`dl_defer_running = 1`) with `replenish_dl_entity()`: a reservation overflowing its
//!   density at that instant gets a new period;
//! - **serving** (queued): fair tasks run above real-time ones, spending its runtime. Spent, it
//!   is throttled until `deadline` (the next period of an implicit-deadline reservation) and
//!   then replenished (`deadline += period`, `runtime += 50 ms`). Picked with no fair task to
//!   run, it stops (`dl_server_stop()`), keeping `dl_defer_running`.
//!
//! Idle time counts as time the fair tasks could have had (`dl_server_update_idle_time()` of
//! 6.18): it spends the runtime too, whether or not the server is active, and once it is gone
//! the server leaves the running state (`dl_defer_running = 0`, runtime 0) — so on a CPU that
//! idles between fair wake-ups, the next starved fair task waits for zero laxity again.
//!
//! Not modelled: the server's place among deadline tasks by EDF (real deadline tasks, whose
//! deadlines are rarely a second away, always go first), GRUB and frequency scaling.

use crate::policy::{Dur, Time};

/// `dl_server_min_res`: a defer timer is not moved for less than this.
const MIN_RES: Dur = 1_000_000;

/// Where the server is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Not active.
    #[default]
    Stopped,
    /// Active, armed, waiting for its zero-laxity timer.
    Waiting,
    /// Queued: fair tasks run above real-time ones.
    Serving,
    /// Its runtime spent while serving: throttled until its deadline's replenishment.
    Spent,
}

/// One CPU's fair server.
#[derive(Debug, Clone, Copy)]
pub struct FairServer {
    /// `dl_runtime`, `dl_period` (= `dl_deadline`).
    pub dl_runtime: Dur,
    pub dl_period: Dur,
    pub runtime: i64,
    pub deadline: Time,
    /// `dl_defer_running`: it has found the fair tasks starved this period.
    pub running: bool,
    pub mode: Mode,
    /// When its timer fires (Waiting, Spent).
    pub timer_at: Time,
}

impl FairServer {
    /// 6.18's server: 50 ms every 1000 ms.
    pub fn new(dl_runtime: Dur, dl_period: Dur) -> Self {
        FairServer {
            dl_runtime,
            dl_period: dl_period.max(1),
            runtime: 0,
            deadline: 0,
            running: false,
            mode: Mode::Stopped,
            timer_at: 0,
        }
    }

    #[inline]
    pub fn active(&self) -> bool {
        self.mode != Mode::Stopped
    }

    /// Fair tasks go before real-time ones now.
    #[inline]
    pub fn serving(&self) -> bool {
        self.mode == Mode::Serving
    }

    /// The runtime left while serving (for the served task's slice).
    #[inline]
    pub fn left(&self) -> Dur {
        self.runtime.max(0) as Dur
    }

    /// The server's timer, if armed.
    #[inline]
    pub fn next_timer(&self) -> Option<Time> {
        matches!(self.mode, Mode::Waiting | Mode::Spent).then_some(self.timer_at)
    }

    /// `dl_entity_overflow()` of the server (deadline = period): in 1024 ns units, as deadline
    /// tasks check it.
    fn overflow(&self, now: Time) -> bool {
        let left = (self.dl_period >> 10) as u128 * (self.runtime.max(0) as u64 >> 10) as u128;
        let right = (self.deadline.saturating_sub(now) >> 10) as u128 * (self.dl_runtime >> 10) as u128;
        right < left
    }

    /// `replenish_dl_new_period()`.
    fn new_period(&mut self, now: Time) {
        self.deadline = now + self.dl_period;
        self.runtime = self.dl_runtime as i64;
    }

    /// Wait for zero laxity (or serve at once if that instant is not in the future, as
    /// `enqueue_dl_entity()` does when `start_dl_timer()` fails).
    fn arm(&mut self, now: Time) {
        let at = self.deadline.saturating_sub(self.left());
        if at > now {
            self.mode = Mode::Waiting;
            self.timer_at = at;
        } else {
            self.mode = Mode::Serving;
        }
    }

    /// `dl_server_start()`: the first fair task is enqueued on the CPU.
    pub fn start(&mut self, now: Time) {
        if self.active() {
            return;
        }
        // update_dl_entity() at the wake-up.
        if self.deadline <= now || self.overflow(now) {
            if self.deadline > now {
                // update_dl_revised_wakeup(): runtime = density × laxity.
                let density = ((self.dl_runtime as u128) << 20) / self.dl_period as u128;
                self.runtime = ((density * (self.deadline - now) as u128) >> 20) as i64;
            } else {
                self.running = false;
                self.new_period(now);
            }
        }
        if self.running {
            self.mode = Mode::Serving;
        } else {
            self.arm(now);
        }
    }

    /// `dl_server_update()`: a fair task ran `ran` (in the background or served).
    #[inline]
    pub fn charge(&mut self, ran: Dur, now: Time) {
        if !self.active() || ran == 0 {
            return;
        }
        self.runtime -= ran as i64;
        if self.runtime > 0 {
            return;
        }
        match self.mode {
            Mode::Waiting | Mode::Spent => {
                // Spent in the background: not needed this period; wait again from a new one.
                self.running = false;
                self.new_period(now);
                self.arm(now);
            }
            Mode::Serving => {
                // Throttled until the next period (deadline − dl_deadline + dl_period).
                if self.deadline > now {
                    self.mode = Mode::Spent;
                    self.timer_at = self.deadline;
                } else {
                    self.new_period(now);
                    self.running = false;
                    self.arm(now);
                }
            }
            Mode::Stopped => {}
        }
    }

    /// `dl_server_update_idle_time()`: the CPU idled for `idle`.
    #[inline]
    pub fn idle(&mut self, idle: Dur) {
        if self.runtime < 0 {
            return;
        }
        self.runtime -= idle as i64;
        if self.runtime < 0 {
            self.running = false;
            self.runtime = 0;
        }
    }

    /// `dl_server_timer()` at `now`.
    pub fn timer(&mut self, now: Time) {
        if self.next_timer().is_none_or(|t| t > now) {
            return;
        }
        if self.mode == Mode::Waiting {
            let zero_lax = self.deadline.saturating_sub(self.left());
            if now + MIN_RES < zero_lax {
                self.timer_at = zero_lax;
                return;
            }
            self.running = true;
            // replenish_dl_entity() of an armed reservation.
            if self.overflow(now) {
                self.new_period(now);
            }
        }
        while self.runtime <= 0 {
            self.deadline += self.dl_period;
            self.runtime += self.dl_runtime as i64;
        }
        if self.deadline < now {
            self.new_period(now);
        }
        self.mode = Mode::Serving;
    }

    /// `dl_server_stop()`: picked with no fair task to run.
    pub fn stop(&mut self) {
        self.mode = Mode::Stopped;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: Dur = 1_000_000;

    #[test]
    fn a_starved_fair_task_waits_for_zero_laxity_then_later_ones_are_served_at_once() {
        let mut s = FairServer::new(50 * MS, 1000 * MS);
        // A fair task wakes at 100 ms on a CPU an RT task holds: a new period (deadline
        // 1100 ms), the wait until 1050 ms.
        s.start(100 * MS);
        assert_eq!((s.mode, s.deadline, s.next_timer()), (Mode::Waiting, 1100 * MS, Some(1050 * MS)));
        // At zero laxity, 50 ms of runtime in 50 ms to the deadline overflows 5%: a new period
        // (deadline 2050 ms), serving.
        s.timer(1050 * MS);
        assert_eq!((s.mode, s.deadline, s.left()), (Mode::Serving, 2050 * MS, 50 * MS));
        s.charge(20 * MS, 1070 * MS);
        s.stop();
        // Woken again at 1080 ms: 30 ms for 970 ms does not overflow; it serves at once
        // (dl_defer_running), with what is left.
        s.start(1080 * MS);
        assert_eq!((s.mode, s.deadline, s.left()), (Mode::Serving, 2050 * MS, 30 * MS));
        s.charge(5 * MS, 1085 * MS);
        s.stop();
        // At 2040 ms, 25 ms for 10 ms overflows: the revised rule keeps the deadline with 5% of
        // the 10 ms left.
        s.start(2040 * MS);
        assert_eq!((s.mode, s.deadline), (Mode::Serving, 2050 * MS));
        assert!((s.left() as i64 - MS as i64 / 2).abs() < 1000, "{}", s.left());
        // Spent: throttled until its deadline, then replenished with the overrun carried.
        s.charge(MS, 2041 * MS);
        assert_eq!((s.mode, s.next_timer()), (Mode::Spent, Some(2050 * MS)));
        s.timer(2050 * MS);
        assert_eq!((s.mode, s.deadline), (Mode::Serving, 3050 * MS));
        assert!((s.left() as i64 - 49 * MS as i64 - MS as i64 / 2).abs() < 1000, "{}", s.left());
    }

    #[test]
    fn idle_time_and_background_runs_push_the_wait_out() {
        let mut s = FairServer::new(50 * MS, 1000 * MS);
        s.start(0);
        s.timer(950 * MS);
        assert!(s.serving() && s.running);
        assert_eq!(s.deadline, 1950 * MS);
        s.stop();
        // 60 ms of idle spend the runtime: the next starved task waits for zero laxity again.
        s.idle(60 * MS);
        assert!(!s.running);
        s.start(1100 * MS);
        assert_eq!((s.mode, s.next_timer()), (Mode::Waiting, Some(1950 * MS)));
        // Fair tasks that get 50 ms in the background spend it: a new period, a later wait.
        s.charge(50 * MS, 1200 * MS);
        assert_eq!((s.mode, s.deadline, s.next_timer()), (Mode::Waiting, 2200 * MS, Some(2150 * MS)));
        // A timer that finds the zero-laxity instant moved (runtime spent since it was set)
        // moves itself.
        s.charge(10 * MS, 1300 * MS);
        s.timer(2150 * MS);
        assert_eq!((s.mode, s.next_timer()), (Mode::Waiting, Some(2160 * MS)));
    }
}
