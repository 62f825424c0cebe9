//! Seed 003's Table 2, measured: the array-traversal payload run by plain threads under OS
//! defaults (configuration D) and by the task manager (configuration C), with 1 … N threads,
//! under no load, load 1 and load 2, K repetitions each, perf counters per run (kernel
//! activity included) and the mean ± 95% confidence interval.
//!
//! One run = open counters on the calling thread (inherited by every thread it starts), allocate
//! the 5 MiB array, start the threads (D) or the manager (C: pin, SCHED_FIFO), split the
//! traversal into `threads` tasks, wait, stop, read the counters. As with `perf stat` on the
//! seed's program, the counts cover thread set-up too; the one exception is C's IRQ steering,
//! done just before the counters start (see `run_once`).
//!
//! On a machine whose first core is reserved for the system, C can start fewer workers than the
//! seed's thread count (a 2-CPU machine has one worker CPU): then C runs the same `threads`
//! tasks FCFS on the workers it has, and the entry says `workers` < `threads`.

use super::config::ManagerConfig;
use super::load::{Load, LoadSet};
use super::manager::{Manager, TaskResult};
use super::payload::{Array, ARRAY_BYTES};
use super::queue::QueueKind;
use crate::Scale;
use anyhow::{bail, Result};
use schedlab_os::irq::IrqSteering;
use schedlab_os::perf::{CounterSet, Event, Reading};
use schedlab_os::sched::LinuxPolicy;
use schedlab_os::topology::Topology;
use schedlab_report::stats::MeanCi;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// D: plain threads, OS defaults. C: the task manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Config {
    D,
    C,
}

impl std::fmt::Display for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Config::D => "D",
            Config::C => "C",
        })
    }
}

/// What to measure.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchParams {
    /// Repetitions per (load, threads, config) cell (the seed: 100).
    pub reps: usize,
    /// Element visits per run, split over the threads (the work is the same for every thread count).
    pub steps: u64,
    pub array_bytes: usize,
    pub threads: Vec<usize>,
    pub loads: Vec<Load>,
    pub configs: Vec<Config>,
    /// Cap on each load-2 process's memory (19% of RAM otherwise).
    pub load2_cap_bytes: u64,
    /// The manager's SCHED_FIFO priority.
    pub priority: i32,
    pub steer_irqs: bool,
    /// The binary that provides `taskman load` (normally this schedlab).
    #[serde(skip)]
    pub exe: PathBuf,
}

impl BenchParams {
    /// Sizes for a scale: quick ≈ 30 s, default ≈ 2–3 min on 2 CPUs; full = the seed's 100
    /// repetitions of a run ~ the seed's length.
    pub fn for_scale(scale: Scale, cpus: usize) -> Self {
        let visits_per_pass = (ARRAY_BYTES / 4) as u64;
        let (reps, passes) = match scale {
            Scale::Quick => (5, 60),
            Scale::Default => (10, 200),
            Scale::Full => (100, 4000),
        };
        BenchParams {
            reps,
            steps: passes * visits_per_pass,
            array_bytes: ARRAY_BYTES,
            threads: (1..=cpus.max(1)).collect(),
            loads: Load::ALL.to_vec(),
            configs: vec![Config::D, Config::C],
            load2_cap_bytes: 512 << 20,
            priority: super::config::DEFAULT_PRIORITY,
            steer_irqs: true,
            exe: std::env::current_exe().unwrap_or_else(|_| PathBuf::from("schedlab")),
        }
    }
}

/// One run's measurements.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sample {
    pub time_s: f64,
    pub counters: Vec<(Event, Reading)>,
}

impl Sample {
    /// The count of event `e` in this sample, if it was measured.
    pub fn count(&self, e: Event) -> Option<u64> {
        self.counters.iter().find(|(x, _)| *x == e).and_then(|(_, r)| r.count())
    }
}

/// One (config, threads, load) cell.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    pub config: Config,
    pub threads: usize,
    pub workers: usize,
    pub load: Load,
    pub samples: Vec<Sample>,
}

impl Cell {
    /// Mean ± CI of time in seconds.
    pub fn time(&self) -> MeanCi {
        MeanCi::of(&self.samples.iter().map(|s| s.time_s).collect::<Vec<_>>())
    }

    /// Mean ± CI of a counter; `Err(reason)` if the machine has no such counter.
    pub fn counter(&self, e: Event) -> Result<MeanCi, String> {
        let vals: Option<Vec<f64>> = self.samples.iter().map(|s| s.count(e).map(|v| v as f64)).collect();
        match vals {
            Some(v) if !v.is_empty() => Ok(MeanCi::of(&v)),
            _ => Err(self
                .samples
                .iter()
                .flat_map(|s| s.counters.iter())
                .find_map(|(x, r)| match r {
                    Reading::NotSupported(why) if *x == e => Some(why.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| "not measured".to_string())),
        }
    }

    /// The entry of the `runs` array.
    pub fn to_json(&self) -> Value {
        let ci = |m: MeanCi| json!({ "mean": m.mean, "ci95": m.ci95, "n": m.n });
        let mut counters = Map::new();
        for e in Event::ALL {
            counters.insert(
                e.perf_name().to_string(),
                match self.counter(e) {
                    Ok(m) => ci(m),
                    Err(why) => {
                        Value::String(if why.starts_with("not ") { why } else { format!("not supported: {why}") })
                    }
                },
            );
        }
        let sw = |e: Event| self.counter(e).map(ci).unwrap_or_else(Value::String);
        json!({
            "config": self.config,
            "threads": self.threads,
            "workers": self.workers,
            "load": self.load,
            "reps": self.samples.len(),
            "time_s": ci(self.time()),
            "context_switches": sw(Event::ContextSwitches),
            "cpu_migrations": sw(Event::CpuMigrations),
            "page_faults": sw(Event::PageFaults),
            "counters": counters,
            "samples": self.samples.iter().map(|s| {
                let mut m = Map::new();
                m.insert("time_s".into(), json!(s.time_s));
                for (e, r) in &s.counters {
                    if let Some(v) = r.count() { m.insert(e.key(), json!(v)); }
                }
                Value::Object(m)
            }).collect::<Vec<_>>(),
            "note": if self.workers < self.threads {
                format!("{} tasks on {} worker(s): the first core is reserved for the system, so C cannot start {} RT workers here", self.threads, self.workers, self.threads)
            } else { String::new() },
        })
    }
}

/// Everything a bench run produced.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchResult {
    pub params: BenchParams,
    pub cells: Vec<Cell>,
    /// Bytes each load process used, per load.
    pub load_bytes: Vec<(Load, u64)>,
    /// IRQs the kernel refused to move (from the first C run).
    pub irq_refused: Vec<schedlab_os::irq::Refusal>,
    /// True if a stop signal cut the run short.
    pub interrupted: bool,
    pub wall_s: f64,
}

impl BenchResult {
    /// The cell for a combination, if measured.
    pub fn cell(&self, config: Config, threads: usize, load: Load) -> Option<&Cell> {
        self.cells.iter().find(|c| c.config == config && c.threads == threads && c.load == load)
    }
}

/// Run the benchmark. `progress(fraction, what)` is called between runs.
pub fn run(params: &BenchParams, progress: &dyn Fn(f64, &str)) -> Result<BenchResult> {
    let topo = Topology::read()?;
    let worker_cpus = topo.worker_cpus().len();
    if params.reps == 0 || params.threads.is_empty() || params.threads.contains(&0) {
        schedlab_os::bail_usage!(
            "invalid benchmark size: reps={} threads={:?} (need reps ≥ 1 and threads ≥ 1)",
            params.reps,
            params.threads
        );
    }
    if params.configs.contains(&Config::C) {
        if !schedlab_os::is_root() {
            bail!("configuration C sets SCHED_FIFO and IRQ masks, which needs root: run with sudo");
        }
        schedlab_os::sched::require_rt_throttling()?;
        if worker_cpus == 0 {
            bail!("configuration C needs a second core: the first is reserved for the system");
        }
    }
    let mem_total = schedlab_os::machine::meminfo_kb("MemTotal").unwrap_or(0) * 1024;
    let cpus = topo.cpus.len();
    let total = params.loads.len() * params.threads.len() * params.reps * params.configs.len();
    let started = Instant::now();
    let mut cells: Vec<Cell> = Vec::new();
    let mut load_bytes = Vec::new();
    let mut irq_refused = Vec::new();
    let mut done = 0usize;
    let mut interrupted = false;
    'outer: for &load in &params.loads {
        let bytes = load.bytes_per_process(mem_total, params.load2_cap_bytes);
        load_bytes.push((load, bytes));
        // Bounded life for the loads even if everything else fails: generous for this run.
        let max_s = 600 + (total as u64) * 120;
        let _loads = LoadSet::start(&params.exe, load, cpus, bytes, max_s)?;
        for &threads in &params.threads {
            for rep in 0..params.reps {
                for &config in &params.configs {
                    if schedlab_os::signals::stop_requested() {
                        interrupted = true;
                        break 'outer;
                    }
                    progress(done as f64 / total as f64, &format!("{config}{threads}T {load} rep {}", rep + 1));
                    let (sample, workers, refused) = run_once(config, threads, params, &topo)?;
                    if irq_refused.is_empty() {
                        irq_refused = refused;
                    }
                    match cells.iter_mut().find(|c| c.config == config && c.threads == threads && c.load == load) {
                        Some(c) => c.samples.push(sample),
                        None => cells.push(Cell { config, threads, workers, load, samples: vec![sample] }),
                    }
                    done += 1;
                }
            }
        }
    }
    progress(1.0, "done");
    Ok(BenchResult {
        params: params.clone(),
        cells,
        load_bytes,
        irq_refused,
        interrupted,
        wall_s: started.elapsed().as_secs_f64(),
    })
}

type RunOnce = (Sample, usize, Vec<schedlab_os::irq::Refusal>);

fn run_once(config: Config, threads: usize, p: &BenchParams, topo: &Topology) -> Result<RunOnce> {
    let worker_cpus = topo.worker_cpus().len();
    // C steers IRQs just before the counters start: writing /proc/irq masks sleeps in the
    // kernel (about six context switches for 19 IRQs here), which is set-up, not computation.
    let irq = match config {
        Config::C if p.steer_irqs => Some(IrqSteering::steer(&topo.reserved_core())?),
        _ => None,
    };
    let refused = irq.as_ref().map(|s| s.refused().to_vec()).unwrap_or_default();
    let mut counters = CounterSet::open(&Event::ALL);
    counters.enable();
    let t0 = Instant::now();
    let array = Arc::new(Array::new(p.array_bytes));
    let steps = p.steps;
    let workers = match config {
        Config::D => {
            let hs: Vec<_> = (0..threads)
                .map(|i| {
                    let a = array.clone();
                    std::thread::spawn(move || a.traverse_part(i, threads, steps))
                })
                .collect();
            for h in hs {
                std::hint::black_box(h.join().map_err(|_| anyhow::anyhow!("a D thread panicked"))?);
            }
            threads
        }
        Config::C => {
            let workers = threads.min(worker_cpus);
            let cfg = ManagerConfig {
                workers: Some(workers),
                policy: LinuxPolicy::Fifo,
                priority: p.priority,
                pin: true,
                steer_irqs: false, // steered above, outside the counted window
                queue: QueueKind::MutexFifo,
                ..Default::default()
            };
            let m = Manager::start_on(&cfg, topo)?;
            for i in 0..threads {
                let a = array.clone();
                m.submit(move |_| a.traverse_part(i, threads, steps));
            }
            m.wait(None);
            let r = m.shutdown()?;
            if let Some(t) = r.tasks.iter().find(|t| !matches!(t.result, TaskResult::Done(_))) {
                bail!("a benchmark task did not complete: {:?}", t.result);
            }
            if !r.workers.iter().all(|w| w.restored) || !r.irq_restore.failed.is_empty() {
                bail!("the manager could not restore everything: {:?} {:?}", r.workers, r.irq_restore.failed);
            }
            workers
        }
    };
    let time_s = t0.elapsed().as_secs_f64();
    counters.disable();
    drop(irq);
    drop(array);
    Ok((Sample { time_s, counters: counters.read() }, workers, refused))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn d_config_runs_and_counts() {
        let mut p = BenchParams::for_scale(Scale::Quick, 1);
        p.steps = 200_000;
        p.reps = 2;
        p.loads = vec![Load::None];
        p.configs = vec![Config::D];
        let r = run(&p, &|_, _| {}).unwrap();
        assert_eq!(r.cells.len(), 1);
        let c = &r.cells[0];
        assert_eq!(c.samples.len(), 2);
        assert!(c.time().mean > 0.0 && c.time().mean < 60.0, "{:?}", c.time());
        // Each run faults the fresh 5 MiB array in page by page: 1,280 faults of 4 KiB, or as
        // few as 2 of 2 MiB when transparent huge pages are on "always" — less the odd page the
        // allocator has touched already (1,278 seen here), hence 90%. Software counters always
        // exist here, so a missing one is a failure, not "not supported".
        let faults = c.counter(Event::PageFaults).unwrap().mean;
        let small_pages = (p.array_bytes / 4096) as f64;
        let fewest = (p.array_bytes as f64 / huge_page_bytes_if_always().unwrap_or(4096) as f64).floor();
        assert!(faults >= 0.9 * fewest && faults < 10.0 * small_pages, "{faults} faults for {small_pages} pages");
        let j = c.to_json();
        assert_eq!(j["config"], "D");
        assert_eq!(j["time_s"]["mean"].as_f64(), Some(c.time().mean));
        assert!(j["context_switches"]["mean"].is_number());
    }

    /// The PMD huge page size when THP backs every anonymous mapping ("always"), else None.
    fn huge_page_bytes_if_always() -> Option<u64> {
        let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").ok()?;
        if !mode.contains("[always]") {
            return None;
        }
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size").ok()?.trim().parse().ok()
    }

    #[test]
    fn bad_sizes_are_rejected() {
        let mut p = BenchParams::for_scale(Scale::Quick, 2);
        p.reps = 0;
        assert!(run(&p, &|_, _| {}).unwrap_err().to_string().contains("reps=0"));
    }
}
