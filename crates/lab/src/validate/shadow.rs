//! The shadow ([`schedlab_trace::shadow`]) of each one-CPU run: the `linux` model's fair rules
//! beside every decision the kernel made for the case's fair tasks in the compared window —
//! which wake-ups pre-empted, which ticks ended a slice, which task each switch picked — counted
//! per run. A replay's metrics say that the model differs; this says at which decisions.

use schedlab_os::sched_signals::SchedSignals;
use schedlab_report::section::Table;
use schedlab_sim::policies::{eevdf, Params};
use schedlab_trace::event::PrioClass;
use schedlab_trace::kernel_positions::KernelPosition;
use schedlab_trace::shadow::{self, ShadowOptions, NEAR_TIE_NS};
use schedlab_trace::{Pid, TickPhase, Timeline};
use serde::Serialize;
use std::collections::BTreeMap;

use super::measure::CaseRun;

/// How one run's decisions went under the model's rules.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ShadowCount {
    /// The case's fair tasks followed.
    pub tasks: usize,
    pub decisions: usize,
    pub wrong: usize,
    /// Wrong decisions within [`NEAR_TIE_NS`] of the other answer.
    pub near_ties: usize,
    pub picks: usize,
    pub picks_differ: usize,
    /// Rounds of the kernel's readings that set the lags right.
    pub resyncs: usize,
}

/// The kernel's places for the case's threads, from the controller's readings of
/// `/proc/<tid>/sched` (timed on the monotonic clock the trace uses).
pub fn positions(readings: &BTreeMap<i32, Vec<(u64, SchedSignals)>>) -> Vec<KernelPosition> {
    readings
        .iter()
        .flat_map(|(&pid, rs)| {
            rs.iter().filter_map(move |&(at, s)| {
                Some(KernelPosition { at, pid, vruntime: s.vruntime_ns?, exec_start: s.exec_start_ns? })
            })
        })
        .collect()
}

/// The shadow of a one-CPU run (`live` numbered as the case's CPUs) over `window`, under the
/// fair rules of `linux_spec` (the `linux` model's spec, DELAY_ZERO as the probe chose), its
/// lags set to the kernel's at each round of `kernel` readings. None on two CPUs (the shadow
/// keeps one queue) or with fewer than two fair tasks.
pub fn count(
    live: &Timeline,
    pids: &[Pid],
    tick: Option<TickPhase>,
    window: (u64, u64),
    linux_spec: &str,
    kernel: &[KernelPosition],
) -> Option<ShadowCount> {
    let fair: Vec<Pid> = pids
        .iter()
        .copied()
        .filter(|p| {
            live.tasks.get(p).is_some_and(|t| {
                !t.runs.is_empty()
                    && t.runs.iter().all(|r| r.cpu == 0)
                    && matches!(t.class_at(t.runs[0].start), Some(PrioClass::Fair { .. }) | None)
            })
        })
        .collect();
    if live.cpus != 1 || fair.len() < 2 {
        return None;
    }
    let mut p = Params::parse(linux_spec).ok()?;
    let features = eevdf::features(&mut p).ok()?;
    let opts = ShadowOptions {
        from: window.0,
        to: window.1,
        kernel_positions: kernel.to_vec(),
        ..ShadowOptions::new(0, fair.clone(), features, tick)
    };
    let r = shadow::shadow(live, &opts).ok()?;
    Some(ShadowCount {
        tasks: fair.len(),
        decisions: r.decisions.len(),
        wrong: r.wrong().count(),
        near_ties: r.wrong_near_ties(),
        picks: r.picks,
        picks_differ: r.picks_differ.len(),
        resyncs: r.resyncs,
    })
}

/// The runs' shadows, one row each (None when no run has one).
pub fn table(runs: &[CaseRun]) -> Option<Table> {
    let mut t = Table::new(
        "The kernel's decisions under the model's fair rules (shadow, one-CPU cases)",
        &[
            "case",
            "repeat",
            "fair tasks",
            "decisions",
            "wrong",
            "wrong %",
            "near ties",
            "picks",
            "picks that differ",
            "lags set",
        ],
    )
    .keyed(&["case", "repeat"]);
    for r in runs {
        let Some(s) = r.shadow else { continue };
        t.row(vec![
            r.case.clone(),
            (r.repeat + 1).to_string(),
            s.tasks.to_string(),
            s.decisions.to_string(),
            s.wrong.to_string(),
            format!("{:.1}", 100.0 * s.wrong as f64 / s.decisions.max(1) as f64),
            s.near_ties.to_string(),
            s.picks.to_string(),
            s.picks_differ.to_string(),
            s.resyncs.to_string(),
        ]);
    }
    if t.rows.is_empty() {
        return None;
    }
    Some(t.with_note(format!(
        "The `linux` model's run queue kept beside each run's fair tasks and driven by what the kernel did \
         (schedlab trace shadow, docs/validate.md#shadow): every wake-up of one while another ran, every tick, \
         every clock read that asked to reschedule, and every switch-in, judged against the model's rules in the \
         state they would have had. lags set: rounds of the controller's readings of the tasks' `se.vruntime` and \
         `se.exec_start` (/proc/<tid>/sched, every 10 ms on one CPU) at which the shadow set the tasks' places \
         against each other to the kernel's (the trace's µs times alone let a fast pair's lags drift); each case's \
         first repeat's readings are saved as positions_<case>.txt for `trace shadow --positions`. near ties: \
         wrong decisions within {} µs of the other answer (a lag, the protection left, or two deadlines that \
         close). On two CPUs the shadow does not run (it keeps one queue).",
        NEAR_TIE_NS / 1_000
    )))
}
