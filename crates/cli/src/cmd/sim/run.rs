//! `schedlab sim run`: a workload under one or more policies, side by side.

use super::time_arg;
use crate::host::Host;
use crate::output::{self, OutputArgs};
use crate::units;
use anyhow::{Context, Result};
use schedlab_lab::simstudy::compare::{self, TickChoice};
use schedlab_lab::simstudy::{job_tables, trace_out};
use schedlab_os::usage::OrUsage;
use schedlab_report::section::DataFile;
use schedlab_report::trace_event;
use schedlab_sim::engine::{OnMiss, SimConfig, WakeDelays};
use schedlab_sim::generate;
use schedlab_sim::workload::Workload;
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

/// Run a workload under one or more policies and compare them side by side.
///
/// Workload file (JSON; times in ms, fractions allowed; unknown fields are errors):
///   {"cpus":1,"tasks":[{"name":"P1","arrival":0,"bursts":[24],"priority":3,"weight":1}]}
/// Task fields: name, arrival, bursts (CPU, I/O, CPU, … — odd count), priority (lower number =
/// higher priority; default 0), weight (≥ 1; WRR/stride/lottery), nice (−20..19; CFS),
/// deadline (relative, per job), period + jobs (periodic tasks), affinity (CPU list),
/// class (queue for mlq: "0","1"…; linux: "deadline"/"fifo"/"rr"; freebsd: "interrupt"/
/// "realtime"/"idle"; windows: "realtime"/"foreground"), locks ([{"name":"L","burst":0}]: held
/// for the whole of that CPU burst).
///
/// Examples:
///   schedlab sim run --workload w.json --policy fcfs --policy rr:quantum=4ms --gantt g.svg
///   schedlab sim run --generate poisson:n=1000,rate=150,mean=5ms --cpus 2 --policy cfs --policy srtf
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct RunArgs {
    /// Workload file (JSON, or YAML when it ends in .yaml/.yml; times in ms; `schedlab sim
    /// schema` prints its schema); `-` reads it from stdin. The run directory keeps a copy
    /// (workload.json) and results.json its SHA-256.
    #[arg(long, conflicts_with = "generate", required_unless_present = "generate")]
    workload: Option<PathBuf>,
    /// Generate a seeded workload instead, e.g. `poisson:n=1000,rate=100,mean=5ms,seed=1`
    /// (also: bursts=N CPU bursts per task, io=TIME mean I/O between them, priorities=K, weights=K).
    #[arg(long)]
    generate: Option<String>,
    /// A policy spec; repeat to compare several (see `schedlab sim policies`).
    #[arg(long = "policy", required = true)]
    policies: Vec<String>,
    /// Number of CPUs (default: the workload's `cpus`, else 1).
    #[arg(long)]
    cpus: Option<usize>,
    /// The scheduler tick: a slice that has run out is noticed only at the next tick, as on a
    /// kernel without HRTICK (e.g. 4ms; `off` = exact slice ends). Default: the host's tick
    /// (CONFIG_HZ) for the policies that model Linux (linux, eevdf), exact ends for the others;
    /// a value given here applies to every policy.
    #[arg(long, conflicts_with = "hz")]
    tick: Option<String>,
    /// The tick as a frequency: --hz 250 is --tick 4ms.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    hz: Option<u32>,
    /// Context-switch cost, paid when a CPU switches to a different task (e.g. 50us).
    #[arg(long, default_value = "0ms")]
    switch_cost: String,
    /// How long wake-ups take to act, up to six values: a timer wake-up onto an idle CPU (the
    /// task starts that much later), one that pre-empts (the running task runs on that much),
    /// a task's wake-up of a task that pre-empts it, a task's wake-up onto another idle CPU,
    /// onto another CPU whose task it pre-empts, and a timer wake-up that pre-empts for a task
    /// of class fifo, rr or deadline (e.g. `8us,6us,3us,50us,20us,7us`; one value for all;
    /// missing ones are 0, a missing sixth is the second). `schedlab validate` measures this
    /// machine's.
    #[arg(
        long,
        value_name = "IDLE[,PREEMPT[,TASK[,REMOTE_IDLE[,REMOTE_PREEMPT[,RT_PREEMPT]]]]]",
        default_value = "0us"
    )]
    wake_delay: String,
    /// Stop at this virtual time, e.g. 2s (unfinished tasks show no finish).
    #[arg(long)]
    horizon: Option<String>,
    /// One run queue per CPU (with wake-up placement and idle pulling) instead of one global queue.
    #[arg(long)]
    per_cpu: bool,
    /// What a periodic task does when a job is late: `continue` (it runs to its end; jobs
    /// released meanwhile wait their turn, in order), `skip` (it runs to its end; jobs released
    /// after its deadline are not run) or `abort` (it is dropped at its deadline).
    #[arg(long, value_enum, default_value_t = OnMissArg::Continue)]
    on_miss: OnMissArg,
    /// Turn priority inheritance off (a lock holder keeps its own priority).
    #[arg(long)]
    no_inherit: bool,
    /// Also print one table per policy with every task.
    #[arg(long)]
    tasks: bool,
    /// Also print every job of the periodic tasks (release, start, finish, response, lateness);
    /// their per-task summary is printed whenever the workload has a periodic task.
    #[arg(long)]
    jobs: bool,
    /// Write a Gantt chart (SVG) of every policy's run.
    #[arg(long, value_parser = crate::paths::writable_file)]
    gantt: Option<PathBuf>,
    /// Draw only this span of the run in the Gantt chart, e.g. `--window 10ms..60ms`.
    #[arg(long, value_name = "FROM..TO", value_parser = units::window, requires = "gantt")]
    window: Option<(Duration, Duration)>,
    /// Write the runs as a Chrome Trace Event JSON file (open it in ui.perfetto.dev or
    /// chrome://tracing): one process per policy, a track per CPU and per task.
    #[arg(long, value_name = "FILE", value_parser = crate::paths::writable_file)]
    trace_out: Option<PathBuf>,
    /// Save the (generated) workload as a JSON file.
    #[arg(long, value_parser = crate::paths::writable_file)]
    save_workload: Option<PathBuf>,
    /// The most tasks a workload may have (default: what half the available memory holds at
    /// about 4 KiB per simulated task). A larger workload is refused before it is read whole.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    max_tasks: Option<u64>,
    #[command(flatten)]
    output: OutputArgs,
}

/// Run `schedlab sim run`.
pub fn run(a: RunArgs) -> Result<()> {
    // Everything is validated before anything runs.
    let cap = TaskCap::new(a.max_tasks);
    let w = match (&a.workload, &a.generate) {
        (Some(p), _) => {
            if p.as_os_str() != "-" {
                cap.check_file(p)?;
            }
            crate::workload_file::read(p)?
        }
        (None, Some(g)) => generate::by_spec_within(g, cap.tasks).context("--generate").or_usage()?,
        (None, None) => schedlab_os::bail_usage!("give --workload FILE or --generate SPEC"),
    };
    cap.check_count(w.tasks.len())?;
    let host = Host::collect();
    let specs: Vec<String> = a
        .policies
        .iter()
        .map(|s| compare::for_host(s, host.facts.cpus_online, host.facts.hz, host.facts.base_slice_ns))
        .collect();
    compare::check_specs(&specs).context("--policy").or_usage()?;
    let tick = tick_choice(&a, host.facts.hz)?;
    let cpus = a.cpus.or(w.cpus).unwrap_or(1);
    if cpus == 0 || cpus > 1024 {
        schedlab_os::bail_usage!("--cpus {cpus}: must be 1..=1024");
    }
    w.check_cpus(cpus).context("workload does not fit --cpus").or_usage()?;
    // What was simulated, CPU count included: saved, copied and hashed as one document.
    let w = Workload { cpus: Some(cpus), ..w };
    let workload_json = w.to_json_string();
    let wake = wake_delays(&a.wake_delay)?;
    let cfg = SimConfig {
        cpus,
        switch_cost: time_arg("switch-cost", &a.switch_cost)?,
        horizon: a.horizon.as_deref().map(|h| time_arg("horizon", h)).transpose()?,
        priority_inheritance: !a.no_inherit,
        record_slices: a.gantt.is_some() || a.trace_out.is_some() || job_tables::has_periodic(&w),
        task_results: true,
        check_invariants: false,
        tick: None,
        wake,
        on_miss: match a.on_miss {
            OnMissArg::Continue => OnMiss::Continue,
            OnMissArg::Skip => OnMiss::Skip,
            OnMissArg::Abort => OnMiss::Abort,
        },
    };
    if let Some(p) = &a.save_workload {
        std::fs::write(p, &workload_json).with_context(|| format!("writing {}", p.display()))?;
    }
    let results = compare::run_all(&w, &specs, &cfg, a.per_cpu, tick)?;
    if let Some(path) = &a.trace_out {
        let doc = trace_event::document(&trace_out::timelines(&w, &results), "schedlab sim run");
        std::fs::write(path, serde_json::to_string(&doc)?).with_context(|| format!("writing {}", path.display()))?;
    }
    let window = a.window.map(|(from, to)| (from.as_nanos() as u64, to.as_nanos() as u64));
    let mut s = compare::section(&w, &results, &cfg, a.per_cpu, a.tasks, window);
    if job_tables::has_periodic(&w) {
        let (tables, jobs) = job_tables::tables(&w, &results, a.jobs);
        s.tables.extend(tables);
        s.results["jobs"] = jobs;
    }
    s.files.push(DataFile::text("workload.json", workload_json.clone()));
    s.parameters = json!({"workload": a.workload, "workload_sha256": sha256_hex(&workload_json), "generate": a.generate, "policies": a.policies, "cpus": cpus,
        "switch_cost_ns": cfg.switch_cost, "wake_delays_ns": {"idle": cfg.wake.idle, "preempt": cfg.wake.preempt, "preempt_rt": cfg.wake.preempt_rt, "task_preempt": cfg.wake.task_preempt, "remote_idle": cfg.wake.remote_idle, "remote_preempt": cfg.wake.remote_preempt}, "horizon_ns": cfg.horizon, "tick": format!("{tick:?}"), "per_cpu": a.per_cpu, "priority_inheritance": !a.no_inherit, "on_miss": cfg.on_miss});
    let s = output::emit(s, &a.output, &host)?;
    if let (Some(path), Some(f)) = (&a.gantt, s.figures.first()) {
        std::fs::write(path, &f.svg).with_context(|| format!("writing {}", path.display()))?;
        if a.output.for_people() {
            println!("gantt: {}", path.display());
        }
    }
    if let Some(path) = a.trace_out.as_ref().filter(|_| a.output.for_people()) {
        println!("trace: {} (open in ui.perfetto.dev)", path.display());
    }
    Ok(())
}

/// `--on-miss`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum OnMissArg {
    Continue,
    Skip,
    Abort,
}

/// The tick each policy runs with: `--tick`/`--hz` for all, or the host's for the Linux models.
fn tick_choice(a: &RunArgs, host_hz: Option<u32>) -> Result<TickChoice> {
    if let Some(hz) = a.hz {
        return Ok(TickChoice::Every(Some(1_000_000_000 / hz as u64)));
    }
    match a.tick.as_deref() {
        Some("off" | "none" | "0") => Ok(TickChoice::Every(None)),
        Some(t) => {
            let ns = time_arg("tick", t)?;
            if ns == 0 {
                schedlab_os::bail_usage!("--tick {t}: must be > 0 (or `off`)");
            }
            Ok(TickChoice::Every(Some(ns)))
        }
        None => {
            if host_hz.is_none() {
                eprintln!(
                    "schedlab: this kernel's tick is unknown (no /proc/config.gz or /boot/config): the Linux \
                     models end slices exactly; pass --hz to set it"
                );
            }
            Ok(TickChoice::ForLinux(host_hz.map(|hz| 1_000_000_000 / hz as u64)))
        }
    }
}

/// `--wake-delay`: one value for every delay, or up to six in order (missing ones 0; a missing
/// RT pre-emption is the pre-emption's).
fn wake_delays(text: &str) -> Result<WakeDelays> {
    let v: Vec<u64> = text.split(',').map(|x| time_arg("wake-delay", x.trim())).collect::<Result<_>>()?;
    if v.len() > 6 {
        schedlab_os::bail_usage!(
            "--wake-delay '{text}': at most six values (idle, preempt, task, remote idle, remote preempt, RT preempt)"
        );
    }
    // One value stands for every delay; a missing RT pre-emption is drawn as the pre-emption.
    let at = |i: usize| if let [one] = v[..] { one } else { v.get(i).copied().unwrap_or(0) }.into();
    Ok(WakeDelays {
        idle: at(0),
        preempt: at(1),
        preempt_rt: v.get(5).map(|&d| d.into()),
        task_preempt: at(2),
        remote_idle: at(3),
        remote_preempt: at(4),
        draw: 0,
    })
}

/// How many simulated tasks fit: `--max-tasks`, or half the available memory at
/// [`TaskCap::BYTES_PER_TASK`]. Under the default, a file is also refused before it is read
/// when parsing it would need more than that half (JSON grows about
/// [`TaskCap::PARSE_GROWTH`]-fold in memory).
struct TaskCap {
    tasks: usize,
    /// Half the available memory, when the cap is sized from it (None with --max-tasks).
    budget_bytes: Option<u64>,
}

impl TaskCap {
    const BYTES_PER_TASK: u64 = 4096;
    const PARSE_GROWTH: u64 = 40;

    fn new(max_tasks: Option<u64>) -> Self {
        match max_tasks {
            Some(n) => TaskCap { tasks: n as usize, budget_bytes: None },
            None => {
                let available = schedlab_os::machine::meminfo_kb("MemAvailable").unwrap_or(4 << 20) * 1024;
                let budget = available / 2;
                TaskCap { tasks: (budget / Self::BYTES_PER_TASK).max(1) as usize, budget_bytes: Some(budget) }
            }
        }
    }

    fn why(&self) -> String {
        match self.budget_bytes {
            Some(b) => format!(
                "the default cap: {:.1} GiB, half the available memory, at about 4 KiB per task; --max-tasks N \
                 sets another",
                gib(b)
            ),
            None => "--max-tasks".to_string(),
        }
    }

    fn check_count(&self, n: usize) -> Result<()> {
        if n > self.tasks {
            schedlab_os::bail_usage!(
                "the workload has {n} tasks, more than the cap of {} ({})",
                self.tasks,
                self.why()
            );
        }
        Ok(())
    }

    fn check_file(&self, p: &std::path::Path) -> Result<()> {
        // With --max-tasks the user sized it; the count is checked after reading.
        let Some(budget) = self.budget_bytes else { return Ok(()) };
        let bytes = std::fs::metadata(p).with_context(|| format!("reading workload {}", p.display())).or_usage()?.len();
        let need = bytes.saturating_mul(Self::PARSE_GROWTH);
        if need > budget {
            schedlab_os::bail_usage!(
                "workload {} is {:.1} MiB; reading it would need about {:.1} GiB, more than the cap allows ({})",
                p.display(),
                bytes as f64 / (1u64 << 20) as f64,
                gib(need),
                self.why()
            );
        }
        Ok(())
    }
}

fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

/// The SHA-256 of `text`, in hex: names the exact workload a run simulated.
pub(super) fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}
