//! A calibration of the model's structure that no file on this host can say: whether a fair
//! task's positive lag, gained while its dequeue was delayed (DELAY_DEQUEUE), is dropped when it
//! finally leaves or wakes (the DELAY_ZERO feature; its flag lives in debugfs `sched/features`,
//! which this host refuses to read). Two sleepers (0.5 ms and 1.5 ms of work, each then 4.5 ms
//! asleep) beside a hog on one CPU are the mix that tells them apart: they block with negative
//! lag, their dequeues are delayed, and whether they keep what they gain meanwhile sets how often
//! they pre-empt the hog when they wake — which shows in the short sleeper's wake-up median (a
//! wake-up that pre-empts is served in µs, one that does not waits for the running task to stop). The mix runs
//! live under a trace, and the setting is chosen by the shadow ([`super::super::shadow`]): the
//! model's fair rules with the feature on and with it off, each kept beside every decision the
//! kernel made in the probe's trace; off only when it gets clearly fewer of them wrong
//! ([`choose_by_shadow`]), else 6.18's default (on) stays. The mix is also replayed under the
//! `linux` model both ways, and where the shadow cannot judge (too few decisions) the setting
//! whose replay comes closer to the live sleeper on both (see [`choose`]) is taken, unless the two
//! are within two of the sleeper's switches of each other ([`margin`]). It is measured apart from
//! the cases it is judged on, and reported as a calibration.

use super::super::cases::{Behaviour, Case, CaseTask};
use super::super::judge::Tolerances;
use super::super::measure::{self, RunPlan};
use super::super::replay::Model;
use super::super::shadow::{self, ShadowCount};
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::Path;

/// How much closer (in [`error`]'s units: relative error of the switch rate) one setting must
/// come to be chosen over the other: two of the live sleeper's switches in the window. Both
/// replays take the live trace's demand, so a replay's count differs from the live one by whole
/// switches of the setting's own making; one switch either way is where the window cuts.
pub fn margin(live: &Sleeper) -> f64 {
    2.0 / (live.switch_ins.max(1) as f64)
}

/// The wake-up median's relative error counts at the ratio of the validation's tolerances
/// (switches ±15% against p50 ±25%: 0.6), so an error of a given share of its tolerance weighs
/// the same in either metric.
fn p50_weight() -> f64 {
    let tol = Tolerances::default();
    tol.switches / tol.wake_p50
}

/// What the probe saw of its sleeper in one timeline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sleeper {
    pub switches_per_s: f64,
    /// Switch-ins in the compared window.
    pub switch_ins: u64,
    /// Wake-up latency median, µs (None without wake-ups).
    pub wake_p50_us: Option<f64>,
}

/// What the probe saw.
#[derive(Debug, Clone, Serialize)]
pub struct DelayZeroProbe {
    pub cpu: usize,
    /// The sleeper live, and replayed with DELAY_ZERO on and off.
    pub live: Sleeper,
    pub on: Sleeper,
    pub off: Sleeper,
    /// The kernel's decisions in the probe's trace under the rules with DELAY_ZERO on and off.
    pub shadow_on: Option<ShadowCount>,
    pub shadow_off: Option<ShadowCount>,
    /// The model runs with DELAY_ZERO off.
    pub off_chosen: bool,
    /// What chose: the shadow, or the replays where the shadow could not judge.
    pub chosen_by: &'static str,
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
        let p50 = |s: &Sleeper| s.wake_p50_us.map_or("no".to_string(), |v| format!("{v:.1} µs"));
        let shadow = match (self.shadow_on, self.shadow_off) {
            (Some(on), Some(off)) => format!(
                "; the kernel's {} decisions in its trace, under the rules with DELAY_ZERO on, {} wrong, with it off {}",
                on.decisions, on.wrong, off.wrong
            ),
            _ => String::new(),
        };
        format!(
            "The DELAY_ZERO probe, {MIX} on CPU {}: the first sleeper {:.0} switches/s and a {} wake-up median live, \
             {:.0} and {} replayed with DELAY_ZERO on, {:.0} and {} with it off{shadow} — the linux model runs with it \
             {} (chosen by the {}; a calibration).",
            self.cpu,
            self.live.switches_per_s,
            p50(&self.live),
            self.on.switches_per_s,
            p50(&self.on),
            self.off.switches_per_s,
            p50(&self.off),
            if self.off_chosen { "off" } else { "on, 6.18's default" },
            self.chosen_by
        )
    }
}

/// How far a replayed sleeper is from the live one: the switch rate's relative error plus the
/// wake-up median's, weighted by [`p50_weight`]; each capped at 1, so a median that jumps from
/// µs to a tick cannot drown the rate.
pub fn error(live: &Sleeper, model: &Sleeper) -> f64 {
    let rel = |m: f64, l: f64| ((m - l).abs() / l.abs().max(f64::MIN_POSITIVE)).min(1.0);
    let p50 = match (live.wake_p50_us, model.wake_p50_us) {
        (Some(l), Some(m)) => rel(m, l),
        (Some(_), None) => 1.0,
        _ => 0.0,
    };
    rel(model.switches_per_s, live.switches_per_s) + p50_weight() * p50
}

/// Which setting to run with: off only when its replay comes closer to the live sleeper by more
/// than the [`margin`].
pub fn choose(live: &Sleeper, on: &Sleeper, off: &Sleeper) -> bool {
    error(live, on) - error(live, off) > margin(live)
}

/// The fewest decisions the shadow must judge to choose.
const MIN_SHADOW_DECISIONS: usize = 100;

/// Which setting the shadow chooses (None when it judged too few decisions): off only when its
/// rules get fewer of the kernel's decisions wrong than on's by more than two and a tenth of on's
/// count — a setting must be clearly better to replace the kernel's default.
pub fn choose_by_shadow(on: &ShadowCount, off: &ShadowCount) -> Option<bool> {
    if on.decisions.min(off.decisions) < MIN_SHADOW_DECISIONS {
        return None;
    }
    Some(off.wrong + 2 + on.wrong / 10 < on.wrong)
}

/// What the probe's mix is, for its sentence and its case.
const MIX: &str = "a 0.5 ms / 4.5 ms and a 1.5 ms / 4.5 ms sleeper beside a hog";

/// The probe's mix: two sleepers and a hog, SCHED_OTHER at nice 0. The short sleeper alone
/// hardly tells the settings apart (its decisions come out about as often wrong either way);
/// the longer one, run past its fair share and blocked with negative lag at most of its
/// periods, is delayed and woken often enough to. Their periods (5 and 6 ms) are none of the
/// judged cases'.
fn mix() -> Case {
    Case {
        name: "delay-zero-probe",
        what: MIX,
        cpus: 1,
        model_limits: None,
        tasks: vec![
            CaseTask::other("sleeper", Behaviour::Periodic { run_ms: 0.5, sleep_ms: 4.5 }, 0),
            CaseTask::other("sleeper-b", Behaviour::Periodic { run_ms: 1.5, sleep_ms: 4.5 }, 0),
            CaseTask::other("hog", Behaviour::Hog, 0),
        ],
    }
}

/// The mix run live on one CPU, waiting to be replayed ([`record`], then [`judge`]).
pub struct Recorded {
    cpu: usize,
    plan: RunPlan,
    run: measure::Recorded,
}

/// Run the mix on `cpu` for `duration_ns` under a recording (workload time 0 on the live tick when
/// the models run with one, `tick_ns`); `draws` replays per setting, as the cases have.
pub fn record(exe: &Path, cpu: usize, tick_ns: Option<u64>, duration_ns: u64, draws: usize) -> Result<Recorded> {
    let plan = RunPlan { duration_ns, warmup_ns: duration_ns / 10, one_cpu: vec![cpu], two_cpus: vec![cpu], draws };
    let recording = measure::record_case(&mix(), 0, &plan, exe).context("the DELAY_ZERO probe")?;
    let run = measure::import_case(&mix(), recording, &plan, tick_ns);
    Ok(Recorded { cpu, plan, run })
}

/// Replay the recorded mix under `linux` (the cases' model, with the host's tick and the wake-up
/// delays the cases are replayed with) with DELAY_ZERO on and off, and choose.
pub fn judge(recorded: Recorded, linux: &Model) -> Result<DelayZeroProbe> {
    let Recorded { cpu, plan, run } = recorded;
    let off = Model { spec: format!("{},delay_zero=0", linux.spec), ..linux.clone() };
    let run =
        measure::replay_case(&mix(), run, &plan, &[linux.clone(), off.clone()]).context("the DELAY_ZERO probe")?;
    let pids: Vec<schedlab_trace::Pid> = run.models[0].comparison.tasks.iter().map(|t| t.pid).collect();
    let window = (run.release_ns + run.window_ns.0, run.release_ns + run.window_ns.1);
    // With it on, the shadow is the one every run gets (`CaseRun::shadow`, the first `linux` model).
    let (shadow_on, shadow_off) =
        (run.shadow, shadow::count(&run.live, &pids, run.tick_phase, window, &off.spec, &run.kernel_positions));
    // The sleeper's comparison under each model: `a` is the live side (the same in both), `b`
    // the replay.
    let sleeper = |i: usize| run.models[i].comparison.tasks.iter().find(|t| t.name == "sleeper");
    let seen = |s: &schedlab_trace::compare::TaskStats| Sleeper {
        switches_per_s: s.switches_per_sec,
        switch_ins: s.switch_ins,
        wake_p50_us: s.wake_p50_ns.map(|n| n as f64 / 1e3),
    };
    let (live, on, off) = match (sleeper(0), sleeper(1)) {
        (Some(a), Some(b)) if a.a.switches_per_sec > 0.0 => (seen(&a.a), seen(&a.b), seen(&b.b)),
        _ => anyhow::bail!("the DELAY_ZERO probe's sleeper did not run"),
    };
    let by_shadow = shadow_on.zip(shadow_off).and_then(|(a, b)| choose_by_shadow(&a, &b));
    let (off_chosen, chosen_by) = match by_shadow {
        Some(c) => (c, "shadow"),
        None => (choose(&live, &on, &off), "replays"),
    };
    Ok(DelayZeroProbe { cpu, live, on, off, shadow_on, shadow_off, off_chosen, chosen_by })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sleeper seen for 1.8 s (the probe's window).
    fn s(switches_per_s: f64, p50: Option<f64>) -> Sleeper {
        Sleeper { switches_per_s, switch_ins: (switches_per_s * 1.8).round() as u64, wake_p50_us: p50 }
    }

    #[test]
    fn off_is_chosen_only_when_it_comes_closer_by_more_than_two_switches() {
        // This host, 2026-11-28: 185.5 live and off, 182.2 on (6 switches fewer in 1.8 s).
        assert!(choose(&s(185.5, None), &s(182.2, None), &s(185.5, None)));
        // 334 switches in the window: two of them are 0.6%.
        assert!((margin(&s(185.5, None)) - 2.0 / 334.0).abs() < 1e-12);
        // One switch apart either way: the default stays.
        assert!(!choose(&s(185.5, None), &s(185.0, None), &s(185.5, None)));
        assert!(!choose(&s(185.5, None), &s(185.5, None), &s(182.2, None)));
        assert!(!choose(&s(185.5, None), &s(185.5, None), &s(185.5, None)));
    }

    #[test]
    fn the_wake_up_median_weighs_in_at_the_tolerances_ratio() {
        // The rates one switch apart: within the margin...
        let (live, on, off) = (s(185.5, Some(9.0)), s(185.0, Some(9.0)), s(185.5, Some(9.0)));
        assert!(!choose(&live, &on, &off));
        // ...a median 20% off with it on (0.6 × 20% = 12%) decides for off.
        assert!(choose(&live, &s(185.0, Some(10.8)), &off));
        assert!((error(&live, &s(185.0, Some(10.8))) - (0.5 / 185.5 + 0.12)).abs() < 1e-9);
        // A median a tick away counts as 100%, no more; no model median where live has one too.
        assert!((error(&live, &s(185.5, Some(4000.0))) - 0.6).abs() < 1e-9);
        assert!((error(&live, &s(185.5, None)) - 0.6).abs() < 1e-9);
    }

    fn counted(decisions: usize, wrong: usize) -> ShadowCount {
        ShadowCount { tasks: 2, decisions, wrong, near_ties: 0, picks: decisions, picks_differ: 0, resyncs: 0 }
    }

    #[test]
    fn the_shadow_chooses_off_only_when_it_is_clearly_wrong_less_often() {
        // sleepers-vs-hog of 2026-11-29: on 53 of 2,401 wrong, off 309.
        assert_eq!(choose_by_shadow(&counted(2401, 53), &counted(2400, 309)), Some(false));
        assert_eq!(choose_by_shadow(&counted(2401, 309), &counted(2400, 53)), Some(true));
        // 40 against 35: within two and a tenth (40 / 10 = 4; 35 + 2 + 4 = 41), the default stays.
        assert_eq!(choose_by_shadow(&counted(900, 40), &counted(900, 35)), Some(false));
        assert_eq!(choose_by_shadow(&counted(900, 40), &counted(900, 33)), Some(true));
        // Too few decisions judged: the shadow does not choose.
        assert_eq!(choose_by_shadow(&counted(99, 40), &counted(99, 3)), None);
    }

    #[test]
    fn the_mix_is_two_sleepers_and_a_hog_on_one_cpu() {
        let m = mix();
        assert_eq!(m.cpus, 1);
        assert_eq!(m.tasks[0].behaviour, Behaviour::Periodic { run_ms: 0.5, sleep_ms: 4.5 });
        assert_eq!(m.tasks[1].behaviour, Behaviour::Periodic { run_ms: 1.5, sleep_ms: 4.5 });
        assert_eq!(m.tasks[2].behaviour, Behaviour::Hog);
    }
}
