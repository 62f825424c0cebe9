//! The study's live runs: the hash-cost calibration, test 1 with the live WRR host, test 1 with
//! each kernel alternative, and test 2 with the live host. Every run rotates the start order.

use super::super::alternatives::{self, AltRun, Kernel};
use super::super::host::{self, HostConfig, HostRun, SliceEnd};
use super::super::summary;
use super::super::tasks::TaskSet;
use super::plan::{crypt_specs, order, round_ns, Mechanisms, Plan, QUANTUM_NS, WEIGHTS};
use crate::Progress;
use anyhow::{bail, Result};
use schedlab_os::signals;
use schedlab_sim::policies::WeightedRoundRobin;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Per-weight results of one run, in WEIGHTS order.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PerWeight {
    pub iterations: Vec<f64>,
    pub cpu_s: Vec<f64>,
    pub finish_s: Vec<Option<f64>>,
}

impl PerWeight {
    fn empty() -> Self {
        PerWeight { iterations: vec![0.0; 6], cpu_s: vec![0.0; 6], finish_s: vec![None; 6] }
    }

    fn of_host(run: &HostRun, order: &[usize]) -> Self {
        let mut p = PerWeight::empty();
        let sum = summary::summarize(run);
        for (k, &i) in order.iter().enumerate() {
            p.iterations[i] = sum.tasks[k].iterations.unwrap_or(0) as f64;
            p.cpu_s[i] = sum.tasks[k].cpu_s;
            p.finish_s[i] = sum.tasks[k].exited_s;
        }
        p
    }

    fn of_alternative(run: &AltRun, order: &[usize]) -> Self {
        let mut p = PerWeight::empty();
        for (k, &i) in order.iter().enumerate() {
            p.iterations[i] = run.iterations[k].unwrap_or(0) as f64;
            p.cpu_s[i] = run.cpu_s[k];
        }
        p
    }
}

/// Test 1 with the live host.
#[derive(Default)]
pub struct Test1 {
    pub runs: Vec<PerWeight>,
    /// Each run's summary with its start order and slices.
    pub raw: Vec<Value>,
    /// |CPU received − slice| of every expired slice but each task's first, ms.
    pub slice_err: Vec<f64>,
    /// Wall-clock length − budget of the same slices, ms.
    pub stretch: Vec<f64>,
    /// Dispatcher CPU over managed CPU time, per run.
    pub disp_frac: Vec<f64>,
    pub extensions: usize,
    /// The first run's first 2 s.
    pub gantt_svg: Option<String>,
    pub interrupted: bool,
}

/// A kernel alternative: its per-weight runs (or why it could not run) and the raw runs.
pub type AltResult = (Kernel, Result<Vec<PerWeight>, String>, Vec<AltRun>);

/// The live half of a study in progress.
pub struct Measure<'a> {
    exe: &'a str,
    plan: &'a Plan,
    which: &'a Mechanisms,
    progress: &'a dyn Progress,
    base: HostConfig,
    step: f64,
    steps: f64,
    /// A stop signal ended some part early.
    pub interrupted: bool,
}

impl<'a> Measure<'a> {
    pub fn new(exe: &'a str, plan: &'a Plan, which: &'a Mechanisms, progress: &'a dyn Progress) -> Self {
        let steps = (which.live_runs(plan) + which.kernels().len() * plan.alt_runs).max(1) as f64;
        Measure { exe, plan, which, progress, base: HostConfig::new(1), step: 0.0, steps, interrupted: false }
    }

    /// Report the next step; false when a stop was requested instead.
    fn next(&mut self, what: String) -> bool {
        if signals::stop_requested() {
            self.interrupted = true;
            return false;
        }
        self.progress.update(self.step / self.steps, &what);
        self.step += 1.0;
        true
    }

    /// The CPU cost of one crypt(3) call of the workload on the managed CPU (SCHED_OTHER,
    /// pinned), from 200,000 calls (about a second).
    pub fn hash_cost_s(&self) -> Result<f64> {
        let n = 200_000u64;
        let mut set = TaskSet::spawn(&crypt_specs(self.exe, &[0], Some(n)), &self.base.cpus)?;
        set.release(0)?;
        let deadline = Instant::now() + Duration::from_secs(30);
        while set.alive(0) && Instant::now() < deadline {
            set.reap();
            std::thread::sleep(Duration::from_millis(5));
        }
        let cpu = set.cpu_ns(0);
        set.finish(Duration::from_secs(1));
        if cpu == 0 {
            bail!("the calibration hash run used no CPU time");
        }
        Ok(cpu as f64 / 1e9 / n as f64)
    }

    /// Test 1 with the live WRR host: every run exactly `t1_rounds` rounds long.
    pub fn test1(&mut self) -> Result<Test1> {
        let mut t = Test1::default();
        if !(self.which.wrr && self.which.test1) {
            return Ok(t);
        }
        for r in 0..self.plan.t1_runs {
            if !self.next(format!("test 1, live WRR, run {}", r + 1)) {
                break;
            }
            let ord = order(r);
            let mut cfg = self.base.clone();
            // End at the first round boundary after (rounds − ½) rounds: exactly `t1_rounds` rounds.
            cfg.duration_ns = self.plan.t1_ns() - round_ns() / 2;
            cfg.end_on_round = true;
            let run =
                host::run(Box::new(WeightedRoundRobin::new(QUANTUM_NS)), &crypt_specs(self.exe, &ord, None), &cfg)?;
            t.interrupted |= run.interrupted;
            for s in run.slices.iter().filter(|s| s.end == SliceEnd::Expired && !s.first) {
                t.slice_err.push((s.cpu_ns as f64 - s.planned_ns as f64).abs() / 1e6);
                t.stretch.push(((s.end_ns - s.start_ns) as f64 - s.planned_ns as f64) / 1e6);
            }
            let sum = summary::summarize(&run);
            t.disp_frac.push(sum.dispatcher_cpu_fraction);
            t.extensions += run.extensions;
            if t.gantt_svg.is_none() {
                t.gantt_svg = Some(summary::gantt(&run, 2.0).to_svg());
            }
            t.runs.push(PerWeight::of_host(&run, &ord));
            t.raw.push(raw_summary(&run, &ord)?);
        }
        Ok(t)
    }

    /// Test 1 with each kernel alternative asked for.
    pub fn alternatives(&mut self) -> Vec<AltResult> {
        let mut out = Vec::new();
        for k in self.which.kernels() {
            let (mut runs, mut raw, mut failure) = (Vec::new(), Vec::new(), None);
            for r in 0..self.plan.alt_runs {
                if !self.next(format!("test 1, {}, run {}", k.label(), r + 1)) {
                    break;
                }
                let ord = order(r);
                let specs = crypt_specs(self.exe, &ord, None);
                let duration = Duration::from_nanos(self.plan.t1_ns());
                match alternatives::run(k, &specs, &self.base.cpus, duration, QUANTUM_NS) {
                    Ok(a) => {
                        runs.push(PerWeight::of_alternative(&a, &ord));
                        raw.push(a);
                    }
                    Err(e) => {
                        failure = Some(format!("{e:#}"));
                        break;
                    }
                }
            }
            let res = match failure {
                Some(f) if runs.is_empty() => Err(f),
                _ => Ok(runs),
            };
            out.push((k, res, raw));
        }
        out
    }

    /// Test 2 with the live host: every task hashes `hashes` times; when does each finish?
    pub fn test2(&mut self, hashes: u64, hash_s: f64) -> Result<(Vec<PerWeight>, Vec<Value>)> {
        let (mut runs, mut raws) = (Vec::new(), Vec::new());
        if !(self.which.wrr && self.which.test2) {
            return Ok((runs, raws));
        }
        for r in 0..self.plan.t2_runs {
            if !self.next(format!("test 2, live WRR, run {}", r + 1)) {
                break;
            }
            let ord = order(r);
            let mut cfg = self.base.clone();
            let expected_s = 6.0 * hashes as f64 * hash_s;
            cfg.duration_ns = ((2.0 * expected_s + 5.0) * 1e9) as u64;
            cfg.end_on_round = false;
            cfg.poll_ns = 5_000_000;
            let specs = crypt_specs(self.exe, &ord, Some(hashes));
            let run = host::run(Box::new(WeightedRoundRobin::new(QUANTUM_NS)), &specs, &cfg)?;
            self.interrupted |= run.interrupted;
            runs.push(PerWeight::of_host(&run, &ord));
            raws.push(raw_summary(&run, &ord)?);
        }
        Ok((runs, raws))
    }
}

/// A run's summary with its start order (weights) and its slices.
fn raw_summary(run: &HostRun, ord: &[usize]) -> Result<Value> {
    let mut raw = serde_json::to_value(summary::summarize(run))?;
    raw["order"] = json!(ord.iter().map(|&i| WEIGHTS[i]).collect::<Vec<_>>());
    let (columns, rows) = summary::slice_rows(run);
    raw["slices_columns"] = json!(columns);
    raw["slices"] = json!(rows);
    Ok(raw)
}
