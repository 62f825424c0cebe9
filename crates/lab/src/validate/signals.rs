//! The load-tracking signals (PELT) behind the balancer's decisions, live and in the `linux`
//! replay of a two-CPU case. Live, the controller reads each case thread's `se.avg.load_avg`,
//! `runnable_avg` and `util_avg` from `/proc/<tid>/sched` at each of its looks (every 50 ms);
//! the replay keeps every update of the same signals ([`SignalLog`]). At each live reading the
//! model's value stored at the same instant (workload time = trace time − the replay's t0) is
//! taken, and the medians over the compared window are set side by side, with how often each
//! task changed CPU there. Both sides are values as last stored (at an enqueue, a dequeue, a
//! switch; the kernel also at each tick of a running task), not decayed to the reading.
//!
//! This is shown, not judged: no goal of the suite is about the signals. It says whether a
//! difference in the balancer's moves comes from its inputs or from its rules.

use schedlab_os::sched_signals::SchedSignals;
use schedlab_report::section::Table;
use schedlab_report::stats::percentile;
use schedlab_sim::policies::linux::smp::signals::SignalLog;
use schedlab_trace::{Pid, Timeline};
use serde::Serialize;
use std::collections::BTreeMap;

/// Medians of one task's signals over the paired readings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Signals {
    pub load: f64,
    pub runnable: f64,
    pub util: f64,
}

/// One task's signals and CPU changes, live and in the model, over the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskSignals {
    pub pid: Pid,
    pub name: String,
    /// Readings paired with a stored model value.
    pub samples: usize,
    pub live: Signals,
    pub model: Signals,
    /// CPU changes in the window: from the kernel's `se.nr_migrations`, and counted in each
    /// timeline (a run on another CPU than the one before).
    pub kernel_migrations: u64,
    pub live_moves: usize,
    pub model_moves: usize,
}

/// What a comparison needs of a run besides the readings and the log.
pub struct Pairing<'a> {
    /// The replay's task ids: `pids[id]` is the live thread of task `id`.
    pub pids: &'a [Pid],
    /// Workload time 0 on the trace clock.
    pub t0_ns: u64,
    /// The compared window on the trace clock.
    pub window: (u64, u64),
    /// The case's name of each of its threads (others are left out).
    pub names: &'a BTreeMap<Pid, String>,
}

/// Times a task's runs in `[from, to)` change CPU.
pub fn moves(tl: &Timeline, pid: Pid, (from, to): (u64, u64)) -> usize {
    let Some(t) = tl.tasks.get(&pid) else { return 0 };
    let cpus: Vec<usize> = t.runs.iter().filter(|r| r.end > from && r.start < to).map(|r| r.cpu).collect();
    cpus.windows(2).filter(|w| w[0] != w[1]).count()
}

/// Pair each case thread's live readings with the model's stored signals.
pub fn compare(
    readings: &BTreeMap<i32, Vec<(u64, SchedSignals)>>,
    log: &SignalLog,
    p: &Pairing,
    live: &Timeline,
    model: &Timeline,
) -> Vec<TaskSignals> {
    let mut out = Vec::new();
    for (&pid, name) in p.names {
        let (Some(id), Some(rs)) = (p.pids.iter().position(|&x| x == pid), readings.get(&pid)) else { continue };
        let in_window: Vec<&(u64, SchedSignals)> =
            rs.iter().filter(|(at, _)| (p.window.0..p.window.1).contains(at)).collect();
        let (mut lv, mut mv) = ([Vec::new(), Vec::new(), Vec::new()], [Vec::new(), Vec::new(), Vec::new()]);
        for (at, k) in &in_window {
            let Some(m) = log.stored_at(id, at.saturating_sub(p.t0_ns)) else { continue };
            for (v, x) in lv.iter_mut().zip([k.load_avg, k.runnable_avg, k.util_avg]) {
                v.push(x as f64);
            }
            for (v, x) in mv.iter_mut().zip([m.load, m.runnable, m.util]) {
                v.push(x as f64);
            }
        }
        if lv[0].is_empty() {
            continue;
        }
        let samples = lv[0].len();
        let median = |v: &[f64]| percentile(v, 50.0);
        let signals = |[l, r, u]: [Vec<f64>; 3]| Signals { load: median(&l), runnable: median(&r), util: median(&u) };
        let kernel_migrations = match (in_window.first(), in_window.last()) {
            (Some(a), Some(b)) => b.1.nr_migrations.saturating_sub(a.1.nr_migrations),
            _ => 0,
        };
        out.push(TaskSignals {
            pid,
            name: name.clone(),
            samples,
            live: signals(lv),
            model: signals(mv),
            kernel_migrations,
            live_moves: moves(live, pid, p.window),
            model_moves: moves(model, pid, p.window),
        });
    }
    out
}

/// One table for the runs that kept signals: per case and task, each repeat's medians.
pub fn table<'a>(runs: impl Iterator<Item = (&'a str, usize, &'a [TaskSignals])>) -> Option<Table> {
    let mut t = Table::new(
        "Load tracking behind the balancer (two-CPU cases): the kernel's and the linux model's PELT signals",
        &[
            "case",
            "repeat",
            "task",
            "readings",
            "load live / model",
            "runnable live / model",
            "util live / model",
            "CPU changes live / model",
        ],
    )
    .keyed(&["case", "task", "repeat"]);
    for (case, repeat, tasks) in runs {
        for s in tasks {
            t.row(vec![
                case.to_string(),
                (repeat + 1).to_string(),
                s.name.clone(),
                s.samples.to_string(),
                format!("{:.0} / {:.0}", s.live.load, s.model.load),
                format!("{:.0} / {:.0}", s.live.runnable, s.model.runnable),
                format!("{:.0} / {:.0}", s.live.util, s.model.util),
                format!("{} / {}", s.live_moves, s.model_moves),
            ]);
        }
    }
    (!t.rows.is_empty()).then(|| {
        t.with_note(
            "Medians over the window of the values stored at each of the controller's readings (every 50 ms): live \
             from /proc/<tid>/sched (se.avg.load_avg, runnable_avg, util_avg), the model's as stored at the same \
             instant of the replay. load counts every moment on a run queue (a delayed dequeue's too), runnable only \
             the moments it could run, util the moments it ran; a nice-0 task always runnable tends to 1024. CPU \
             changes are counted in each timeline over the window. Shown, not judged.",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_sim::policies::linux::pelt::Pelt;

    fn reading(load: u64, migrations: u64) -> SchedSignals {
        SchedSignals {
            load_avg: load,
            runnable_avg: load / 2,
            util_avg: load / 4,
            util_est: None,
            nr_migrations: migrations,
            vruntime_ns: None,
            exec_start_ns: None,
        }
    }

    #[test]
    fn readings_pair_with_the_value_the_model_stored_at_the_same_instant() {
        // Task 0 is pid 40; workload time 0 is trace time 1,000. The model stored load 100 at
        // 0 and 300 at 50; the kernel was read at 1,010, 1,060, 1,070 (window 1,000..1,080)
        // and 2,000 (outside it).
        let mut log = SignalLog::default();
        log.push(0, 0, &Pelt { load_avg: 100, runnable_avg: 50, util_avg: 20, ..Pelt::default() });
        log.push(0, 50, &Pelt { load_avg: 300, runnable_avg: 150, util_avg: 60, ..Pelt::default() });
        let mut readings = BTreeMap::new();
        readings.insert(
            40,
            vec![
                (1_010, reading(110, 2)),
                (1_060, reading(290, 2)),
                (1_070, reading(310, 3)),
                (2_000, reading(999, 9)),
            ],
        );
        readings.insert(41, vec![(1_010, reading(500, 0))]); // not a case thread
        let names = BTreeMap::from([(40, "sleeper".to_string())]);
        let p = Pairing { pids: &[40, 41], t0_ns: 1_000, window: (1_000, 1_080), names: &names };
        let tl = Timeline::default();
        let out = compare(&readings, &log, &p, &tl, &tl);
        assert_eq!(out.len(), 1);
        let s = &out[0];
        assert_eq!((s.name.as_str(), s.samples, s.kernel_migrations), ("sleeper", 3, 1));
        // Live 110, 290, 310 → 290; model 100, 300, 300 → 300.
        assert_eq!((s.live.load, s.model.load), (290.0, 300.0));
        assert_eq!((s.live.runnable, s.model.runnable), (145.0, 150.0));
        let t = table([("case", 0, &out[..])].into_iter()).unwrap();
        assert_eq!(t.rows[0][4], "290 / 300");
        assert!(table(std::iter::empty()).is_none());
    }
}
