//! One trial of the seed's experiment: N sleepers and a ticker driving one queue. Each trial
//! runs in a fresh child process (`schedlab timers trial --spec <json>`), as the seed ran each
//! algorithm as its own program, so peak RSS and CPU time (from wait4) belong to that queue
//! alone — a process's peak RSS only ever grows.

use super::service::{run_sleepers, TickMode, TickerStats};
use anyhow::{bail, Context};
use schedlab_os::child::{Child, ChildSpec, Output};
use schedlab_os::clock;
use schedlab_report::stats::Spread;
use schedlab_timerq::Kind;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// What a trial child is asked to do.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialSpec {
    pub kind: Kind,
    pub tick_ns: u64,
    pub mode: TickMode,
    /// SCHED_FIFO priority for the ticker and sleepers (None = SCHED_OTHER).
    #[serde(default)]
    pub rt_priority: Option<i32>,
    /// One sleeper per entry, sleeping this many µs.
    pub sleep_us: Vec<u64>,
}

/// What the child prints (one JSON line).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChildReport {
    pub ticker: TickerStats,
    /// Actual minus requested wake time per sleeper, µs.
    pub lateness_us: Vec<f64>,
}

/// Run a trial in this process (the body of the child).
pub fn run_in_process(spec: &TrialSpec) -> anyhow::Result<ChildReport> {
    if spec.tick_ns == 0 {
        bail!("tick must be positive, got 0 ns");
    }
    let times: Vec<Duration> = spec.sleep_us.iter().map(|&us| Duration::from_micros(us)).collect();
    let (ticker, slept) =
        run_sleepers(spec.kind, Duration::from_nanos(spec.tick_ns), spec.mode, spec.rt_priority, &times)?;
    Ok(ChildReport { ticker, lateness_us: slept.iter().map(|s| s.lateness_us()).collect() })
}

/// One finished trial, as the reports use it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialResult {
    pub peak_rss_kb: i64,
    /// Wall time of the child process, spawn to reap (the seed's `time` "real").
    pub real_s: f64,
    pub user_s: f64,
    pub sys_s: f64,
    pub ticker_cpu_s: f64,
    pub lateness_us: Spread,
    pub timer_ops: u64,
    pub insert_ops: u64,
    pub ticks: u64,
    pub tick_late_max_us: f64,
    /// Raw per-sleeper lateness (µs), for pooling across trials.
    pub lateness_samples_us: Vec<f64>,
}

/// Run a trial in a fresh child process of `exe` (the schedlab binary), killed after `timeout`.
pub fn run_in_child(exe: &Path, spec: &TrialSpec, timeout: Duration) -> anyhow::Result<TrialResult> {
    let spec_json = serde_json::to_string(spec)?;
    let start = clock::monotonic_ns();
    let spec_child =
        ChildSpec::new(exe).args(["timers", "trial", "--spec", &spec_json]).stdout(Output::Pipe).stderr(Output::Pipe);
    let mut child = Child::spawn(&spec_child).with_context(|| format!("starting trial child {}", exe.display()))?;
    // The child's own rusage comes from wait4; the report is a few kB, well inside the pipe
    // buffer, so the child never blocks on its stdout. Dropping `child` kills it on any error.
    let reaped = match child.wait_timeout(timeout)? {
        Some(r) => r,
        None if schedlab_os::signals::stop_requested() => bail!("interrupted"),
        None => bail!("{} trial took longer than {:.0} s and was killed", spec.kind, timeout.as_secs_f64()),
    };
    let real_s = (clock::monotonic_ns() - start) as f64 / 1e9;
    let mut out = String::new();
    child.take_stdout().expect("piped stdout").read_to_string(&mut out)?;
    let mut err = String::new();
    child.take_stderr().expect("piped stderr").read_to_string(&mut err)?;
    if !reaped.status.success() {
        bail!("{} trial child failed ({:?}): {}", spec.kind, reaped.status, err.trim());
    }
    let report: ChildReport =
        serde_json::from_str(out.trim()).with_context(|| format!("reading the {} trial child's report", spec.kind))?;
    Ok(TrialResult {
        peak_rss_kb: reaped.usage.max_rss_kb,
        real_s,
        user_s: reaped.usage.user_s,
        sys_s: reaped.usage.sys_s,
        ticker_cpu_s: report.ticker.cpu_s,
        lateness_us: Spread::of(&report.lateness_us),
        timer_ops: report.ticker.ops.timer_ops,
        insert_ops: report.ticker.ops.insert_ops,
        ticks: report.ticker.ops.ticks,
        tick_late_max_us: report.ticker.tick_late_max_us,
        lateness_samples_us: report.lateness_us,
    })
}
