//! A fact of the host the model must be told and cannot read: whether the kernel ends an
//! expired fair slice of a CPU-bound task at once (the HRTICK feature: a high-resolution timer
//! per slice; it lives in debugfs `sched/features`, unreadable on many hosts) or only at the next
//! scheduler tick. Two nice-0 hogs (`workload bursts --ms inf`, which never enter the kernel while
//! they compute) share one CPU for a moment under a trace: with a tick, their runs last one tick
//! (4 ms at HZ=250); ended exactly, one base slice (1.4 ms on two CPUs). A program that makes
//! system calls while it computes has its slice ended at the first one after expiry whatever
//! this says (each runs `update_curr()`). This is a calibration of the model's structure,
//! measured apart from the cases it is judged on. The wake-up path's costs are [`wake`]'s, measured
//! again before every live run of a case and pooled ([`per_run`]).

pub mod delay_zero;
pub mod per_run;
pub mod wake;

use crate::trace::live::{self, LiveTask};
use anyhow::{Context, Result};
use schedlab_os::sched::SchedParams;
use schedlab_trace::Timeline;
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// What the probe saw.
#[derive(Debug, Clone, Serialize)]
pub struct SliceProbe {
    pub cpu: usize,
    /// Runs of the two hogs between switches (the first and last of each left out).
    pub runs: usize,
    pub median_run_ns: u64,
    pub tick_ns: Option<u64>,
    /// The kernel ends slices exactly (the model runs without a tick).
    pub exact: bool,
}

impl SliceProbe {
    /// The tick the model should run with.
    pub fn model_tick(&self) -> Option<u64> {
        if self.exact {
            None
        } else {
            self.tick_ns
        }
    }

    /// One sentence for the report.
    pub fn sentence(&self) -> String {
        let tick = self.tick_ns.map_or("unknown".to_string(), |t| format!("{:.1} ms", t as f64 / 1e6));
        format!(
            "Two nice-0 hogs on CPU {}: median run {:.3} ms over {} runs (tick {tick}) — the kernel ends expired slices {}, \
             so the linux and cfs models run {}.",
            self.cpu,
            self.median_run_ns as f64 / 1e6,
            self.runs,
            if self.exact { "at once (HRTICK)" } else { "at the next tick" },
            if self.exact { "without a tick" } else { "with the host's tick" }
        )
    }
}

/// Median run length of the tasks `pids` on `cpu`, their first and last runs left out.
pub fn median_run(tl: &Timeline, pids: &[i32], cpu: usize) -> (usize, u64) {
    let mut lens: Vec<u64> = Vec::new();
    for pid in pids {
        if let Some(t) = tl.tasks.get(pid) {
            let runs: Vec<u64> = t.runs.iter().filter(|r| r.cpu == cpu).map(|r| r.end - r.start).collect();
            if runs.len() > 2 {
                lens.extend(&runs[1..runs.len() - 1]);
            }
        }
    }
    lens.sort_unstable();
    (lens.len(), lens.get(lens.len() / 2).copied().unwrap_or(0))
}

/// A probe's task: `schedlab workload <what> --stopped-start ARGS…` pinned to `cpu`.
fn workload(exe: &Path, name: &str, what: &str, args: &[&str], sched: SchedParams, cpu: usize) -> LiveTask {
    LiveTask {
        name: name.into(),
        argv: [exe.display().to_string(), "workload".into(), what.into(), "--stopped-start".into()]
            .into_iter()
            .chain(args.iter().map(|a| a.to_string()))
            .collect(),
        sched,
        cpus: Some(vec![cpu]),
        arrival_ns: 0,
        stopped_start: true,
    }
}

/// Run the probe on `cpu` for `span`.
pub fn slice_end(exe: &Path, cpu: usize, tick_ns: Option<u64>, span: Duration) -> Result<SliceProbe> {
    let hog = |name: &str| workload(exe, name, "bursts", &["--ms", "inf"], SchedParams::other_nice(0), cpu);
    let run = live::run(&[hog("probe-a"), hog("probe-b")], span, &|_| {}).context("the slice probe")?;
    let (tl, _) = Timeline::from_text(&run.text, Some(schedlab_trace::Format::Tracefs));
    let (runs, median_run_ns) = median_run(&tl, &run.pids, cpu);
    anyhow::ensure!(runs >= 10, "the slice probe saw only {runs} runs of its two hogs on CPU {cpu}");
    let exact = tick_ns.is_none_or(|t| median_run_ns < t / 2);
    Ok(SliceProbe { cpu, runs, median_run_ns, tick_ns, exact })
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_trace::timeline::{Run, TaskTimeline};

    fn tl(lens_ms: &[f64]) -> Timeline {
        let mut t = TaskTimeline::new(7, "hog", 0);
        let mut at = 0;
        for l in lens_ms {
            let e = at + (l * 1e6) as u64;
            t.runs.push(Run { cpu: 1, start: at, end: e });
            at = e + 1_000_000;
        }
        let mut tl = Timeline::default();
        tl.tasks.insert(7, t);
        tl
    }

    #[test]
    fn the_median_leaves_out_the_first_and_last_run() {
        assert_eq!(median_run(&tl(&[0.1, 1.4, 1.4, 1.5, 9.0]), &[7], 1), (3, 1_400_000));
        assert_eq!(median_run(&tl(&[0.1, 4.0, 4.0, 4.0, 0.2]), &[7], 1), (3, 4_000_000));
        assert_eq!(median_run(&tl(&[4.0, 4.0, 4.0]), &[7], 0).0, 0, "other CPUs' runs do not count");
    }
}
