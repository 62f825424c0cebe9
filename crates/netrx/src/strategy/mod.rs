//! How a receiver takes packets: the [`RxStrategy`] trait and one file per strategy.
//!
//! A host owns time, devices, the bounded buffer (the IP input queue) and the costs; a strategy
//! owns only decisions, like a Linux `sched_class` owns only its run queue. Two hosts drive the
//! same strategy objects: the discrete-event model ([`crate::model`]) and the live kernel role
//! (`schedlab_lab::livelock::kernel`). The host has two execution levels on one CPU:
//!
//! - the **interrupt level** runs whenever interrupts are enabled and a device has a packet;
//!   it pre-empts everything below it and asks [`RxStrategy::on_interrupt`] what to do;
//! - the **kernel thread** (softirq / polling thread, lower priority) runs the [`Job`]s that
//!   [`RxStrategy::next_job`] hands out and reports each back through [`RxStrategy::job_done`].

mod hybrid;
mod interrupt;
mod napi;
mod polling;

pub use hybrid::Hybrid;
pub use interrupt::Interrupt;
pub use napi::Napi;
pub use polling::Polling;

use crate::ParamError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What the host shows a strategy when it asks for a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RxView {
    /// Host time in nanoseconds since the start.
    pub now_ns: u64,
    /// Packets waiting in the bounded buffer, and its size (`sz`).
    pub buffer_len: usize,
    pub buffer_cap: usize,
    /// Packets waiting in the application's queue, and its size (0 = no feedback signal).
    pub app_queue: usize,
    pub app_queue_cap: usize,
    /// Number of devices.
    pub devices: usize,
}

/// What the interrupt handler does for one interrupt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IrqAction {
    /// Take one packet off the device into the buffer (dropped if the buffer is full) and wake
    /// the kernel thread. Cost: interrupt entry + device receive. The unmodified kernel.
    Enqueue,
    /// Only wake the polling thread; interrupts stay masked until the strategy re-enables them.
    /// Cost: interrupt entry. NAPI / Mogul & Ramakrishnan.
    SchedulePoll,
}

/// A job for the kernel thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// Take one packet from the buffer, do protocol work and deliver it.
    Deliver,
    /// Poll device `dev` for up to `quota` packets, each processed to completion.
    Poll { dev: usize, quota: usize },
    /// Service the output side for up to `quota` packets (the paper's transmit callback; a
    /// host without an output queue reports nothing found).
    Transmit { quota: usize },
    /// Nothing to do: sleep until an interrupt wakes the thread or `timer_ns` pass.
    Idle { timer_ns: Option<u64> },
}

/// What came of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct JobOutcome {
    /// Packets the job handled.
    pub found: usize,
    /// True when the polled source still has packets (the quota ran out first).
    pub pending: bool,
}

/// A receive strategy.
pub trait RxStrategy: Send {
    /// Registry name (`interrupt`, `polling`, `hybrid`, `napi`).
    fn name(&self) -> &'static str;
    /// Whether device arrivals raise interrupts right now (false = masked).
    fn interrupts_enabled(&self) -> bool;
    /// An interrupt was taken for device `dev`.
    fn on_interrupt(&mut self, dev: usize, v: &RxView) -> IrqAction;
    /// After an [`IrqAction::Enqueue`] put a packet in the buffer or dropped it.
    fn after_enqueue(&mut self, _v: &RxView) {}
    /// The kernel thread's next job.
    fn next_job(&mut self, v: &RxView) -> Job;
    /// The job handed out last finished (hosts do not report [`Job::Idle`]).
    fn job_done(&mut self, job: Job, out: JobOutcome, v: &RxView);
    /// How many times the strategy switched between interrupt and polling mode.
    fn switches(&self) -> u64;
}

/// The strategies by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StrategyKind {
    Interrupt,
    Polling,
    Hybrid,
    Napi,
}

impl StrategyKind {
    /// Every strategy, in report order.
    pub const ALL: [StrategyKind; 4] =
        [StrategyKind::Interrupt, StrategyKind::Polling, StrategyKind::Hybrid, StrategyKind::Napi];
}

impl fmt::Display for StrategyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StrategyKind::Interrupt => "interrupt",
            StrategyKind::Polling => "polling",
            StrategyKind::Hybrid => "hybrid",
            StrategyKind::Napi => "napi",
        })
    }
}

impl FromStr for StrategyKind {
    type Err = ParamError;
    fn from_str(s: &str) -> Result<Self, ParamError> {
        let l = s.trim().to_ascii_lowercase();
        StrategyKind::ALL
            .into_iter()
            .find(|k| k.to_string() == l)
            .ok_or_else(|| ParamError::new("strategy", s, "expected one of interrupt, polling, hybrid, napi"))
    }
}

/// The kernel's parameters (seed Table II plus NAPI's quota and feedback).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StrategyParams {
    /// Buffer size in packets (`sz`).
    pub sz: usize,
    /// Hybrid returns to interrupts when occupancy ≤ `perc_occup` % of `sz`.
    pub perc_occup: f64,
    /// NAPI packets per poll callback (`usize::MAX` = no quota).
    pub quota: usize,
    /// NAPI feedback: stop polling at this fraction of the app queue, resume at `fb_low`
    /// or after `fb_timeout_ns`. Ignored when the host shows no app queue.
    pub fb_high: f64,
    pub fb_low: f64,
    pub fb_timeout_ns: u64,
    /// The seed's polling strategy sleeps this long after a round that found nothing.
    pub poll_interval_ns: u64,
}

impl Default for StrategyParams {
    fn default() -> Self {
        StrategyParams {
            sz: 100,
            perc_occup: 80.0,
            quota: 5,
            fb_high: 0.75,
            fb_low: 0.25,
            fb_timeout_ns: 4_000_000,
            poll_interval_ns: 200_000,
        }
    }
}

impl StrategyParams {
    /// Check the values, naming the offending one.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.sz == 0 {
            return Err(ParamError::new("sz", self.sz, "the buffer must hold at least one packet"));
        }
        if !(0.0..=100.0).contains(&self.perc_occup) || self.perc_occup.is_nan() {
            return Err(ParamError::new("perc_occup", self.perc_occup, "a percentage must be within 0..=100"));
        }
        if self.quota == 0 {
            return Err(ParamError::new("quota", self.quota, "a poll must be allowed at least one packet"));
        }
        if !(0.0..=1.0).contains(&self.fb_high) || !(0.0..=1.0).contains(&self.fb_low) || self.fb_low > self.fb_high {
            return Err(ParamError::new(
                "feedback thresholds",
                format!("high={} low={}", self.fb_high, self.fb_low),
                "need 0 <= low <= high <= 1",
            ));
        }
        if self.poll_interval_ns == 0 {
            return Err(ParamError::new("poll interval", "0", "must be greater than zero"));
        }
        Ok(())
    }
}

/// Build a strategy for `devices` devices.
pub fn build(kind: StrategyKind, p: &StrategyParams, devices: usize) -> Result<Box<dyn RxStrategy>, ParamError> {
    p.validate()?;
    if devices == 0 {
        return Err(ParamError::new("dev", 0, "at least one device is needed"));
    }
    Ok(match kind {
        StrategyKind::Interrupt => Box::new(Interrupt::new()),
        StrategyKind::Polling => Box::new(Polling::new(devices, p.poll_interval_ns)),
        StrategyKind::Hybrid => Box::new(Hybrid::new(devices, p.perc_occup)),
        StrategyKind::Napi => Box::new(Napi::new(devices, p)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_kernel_parameters_are_named() {
        let p = StrategyParams { sz: 0, ..Default::default() };
        assert_eq!(p.validate().unwrap_err().name, "sz");
        let p = StrategyParams { perc_occup: 120.0, ..Default::default() };
        let e = p.validate().unwrap_err();
        assert_eq!(e.name, "perc_occup");
        assert!(e.to_string().contains("120"));
        let p = StrategyParams { perc_occup: -1.0, ..Default::default() };
        assert_eq!(p.validate().unwrap_err().name, "perc_occup");
        assert!("fast".parse::<StrategyKind>().unwrap_err().to_string().contains("fast"));
        for k in StrategyKind::ALL {
            assert_eq!(k.to_string().parse::<StrategyKind>().unwrap(), k);
            assert_eq!(build(k, &StrategyParams::default(), 3).unwrap().name(), k.to_string());
        }
        assert!(build(StrategyKind::Napi, &StrategyParams::default(), 0).is_err());
    }
}
