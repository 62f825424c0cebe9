//! A calibration of the model's structure that no file on this host can say: whether a fair
//! task's positive lag, gained while its dequeue was delayed (DELAY_DEQUEUE), is dropped when it
//! finally leaves or wakes (the DELAY_ZERO feature; its flag lives in debugfs `sched/features`,
//! which this host refuses to read). A short sleeper (0.5 ms of work, then 4.5 ms asleep) beside
//! a hog on one CPU is the mix that tells them apart: it blocks with negative lag every time,
//! its dequeue is delayed, and whether it keeps what it gains meanwhile sets how often it
//! pre-empts the hog when it wakes. The mix runs live under a trace and is replayed under the
//! `linux` model with the feature on and off; the setting whose replay gives the sleeper's
//! switch rate closer to the live one is the one the cases are replayed with — unless the two
//! are within [`MARGIN`] of each other, when 6.18's default (on) stays. It is measured apart
//! from the cases it is judged on, and reported as a calibration.

use super::super::cases::{Behaviour, Case, CaseTask};
use super::super::measure::{self, RunPlan};
use super::super::replay::Model;
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::Path;

/// How much closer (relative error of the sleeper's switches per second) one setting must come
/// to be chosen over the other.
pub const MARGIN: f64 = 0.02;

/// What the probe saw.
#[derive(Debug, Clone, Serialize)]
pub struct DelayZeroProbe {
    pub cpu: usize,
    /// The sleeper's switches per second: live, replayed with DELAY_ZERO on and off.
    pub live: f64,
    pub on: f64,
    pub off: f64,
    /// The model runs with DELAY_ZERO off.
    pub off_chosen: bool,
}

impl DelayZeroProbe {
    /// The spec suffix the `linux` model takes.
    pub fn spec_suffix(&self) -> &'static str {
        if self.off_chosen {
            ",delay_zero=0"
        } else {
            ""
        }
    }

    pub fn sentence(&self) -> String {
        format!(
            "A 0.5 ms / 4.5 ms sleeper beside a hog on CPU {}: {:.0} switches/s live, {:.0} replayed with DELAY_ZERO on \
             and {:.0} with it off — the linux model runs with it {} (a calibration).",
            self.cpu,
            self.live,
            self.on,
            self.off,
            if self.off_chosen { "off" } else { "on, 6.18's default" }
        )
    }
}

/// Which setting to run with, from the sleeper's switch rates: off only when its replay comes
/// closer to the live rate by more than [`MARGIN`].
pub fn choose(live: f64, on: f64, off: f64) -> bool {
    let err = |m: f64| (m - live).abs() / live.abs().max(f64::MIN_POSITIVE);
    err(on) - err(off) > MARGIN
}

/// The probe's mix: the sleeper and a hog, SCHED_OTHER at nice 0.
fn mix() -> Case {
    Case {
        name: "delay-zero-probe",
        what: "a 0.5 ms / 4.5 ms sleeper beside a hog",
        cpus: 1,
        model_limits: None,
        tasks: vec![
            CaseTask::other("sleeper", Behaviour::Periodic { run_ms: 0.5, sleep_ms: 4.5 }, 0),
            CaseTask::other("hog", Behaviour::Hog, 0),
        ],
    }
}

/// Run the mix on `cpu` for `duration_ns` and replay it under `linux` (the cases' model, with
/// the host's tick and wake-up delays) with DELAY_ZERO on and off.
pub fn delay_zero(exe: &Path, cpu: usize, linux: &Model, duration_ns: u64) -> Result<DelayZeroProbe> {
    let plan = RunPlan { duration_ns, warmup_ns: duration_ns / 10, one_cpu: vec![cpu], two_cpus: vec![cpu] };
    let off = Model { spec: format!("{},delay_zero=0", linux.spec), ..linux.clone() };
    let run =
        measure::run_case(&mix(), 0, &plan, &[linux.clone(), off], exe, &|_| {}).context("the DELAY_ZERO probe")?;
    // The sleeper's comparison under each model: `a` is the live side (the same in both), `b`
    // the replay.
    let sleeper = |i: usize| run.models[i].comparison.tasks.iter().find(|t| t.name == "sleeper");
    let (live, on, off) = match (sleeper(0), sleeper(1)) {
        (Some(a), Some(b)) if a.a.switches_per_sec > 0.0 => {
            (a.a.switches_per_sec, a.b.switches_per_sec, b.b.switches_per_sec)
        }
        _ => anyhow::bail!("the DELAY_ZERO probe's sleeper did not run"),
    };
    Ok(DelayZeroProbe { cpu, live, on, off, off_chosen: choose(live, on, off) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_is_chosen_only_when_it_comes_clearly_closer() {
        // This host: 190 live, 182 on (4.2% off), 190 off (0%).
        assert!(choose(190.0, 182.0, 190.0));
        // Within the margin either way: the default stays.
        assert!(!choose(190.0, 188.0, 190.0));
        assert!(!choose(190.0, 190.0, 182.0));
        assert!(!choose(190.0, 190.0, 190.0));
    }

    #[test]
    fn the_mix_is_a_short_sleeper_and_a_hog_on_one_cpu() {
        let m = mix();
        assert_eq!(m.cpus, 1);
        assert_eq!(m.tasks[0].behaviour, Behaviour::Periodic { run_ms: 0.5, sleep_ms: 4.5 });
        assert_eq!(m.tasks[1].behaviour, Behaviour::Hog);
    }
}
