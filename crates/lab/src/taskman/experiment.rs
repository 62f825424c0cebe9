//! The `taskman` experiment for `schedlab reproduce`: Table 2 and the queue benchmark at the
//! requested scale.

use super::bench::{self, BenchParams, BenchResult};
use super::qbench::{self, QueueBenchParams};
use super::table2;
use crate::{Experiment, Progress, RunContext, Scale};
use schedlab_os::perf::Event;
use schedlab_report::section::{DataFile, Section};

/// Seed 003's evaluation.
pub struct TaskmanExperiment;

/// Queue benchmark sizes per scale.
pub fn queue_params(scale: Scale) -> QueueBenchParams {
    match scale {
        Scale::Quick => QueueBenchParams { tasks: 100_000, reps: 5 },
        Scale::Default => QueueBenchParams { tasks: 200_000, reps: 10 },
        Scale::Full => QueueBenchParams { tasks: 1_000_000, reps: 30 },
    }
}

/// Run Table 2 and the queue benchmark and build the section, with every repetition as a row
/// of `runs.csv`.
pub fn run(params: &BenchParams, qp: QueueBenchParams, progress: &dyn Progress) -> anyhow::Result<Section> {
    let b = bench::run(params, &|f, what| progress.update(f * 0.95, what))?;
    let q = qbench::run(qp)?;
    let mut s = table2::section(&b, Some(&q));
    s.parameters = json_params(params, qp);
    s.results = table2::document(&b, Some(&q));
    s.files.push(runs_csv(&b));
    Ok(s)
}

/// Every repetition of every cell with its perf counters ("not supported" where the machine
/// has no such counter).
fn runs_csv(b: &BenchResult) -> DataFile {
    let rows: Vec<Vec<String>> = b
        .cells
        .iter()
        .flat_map(|c| {
            c.samples.iter().enumerate().map(move |(i, smp)| {
                let get = |e| smp.counters.iter().find(|(x, _)| *x == e).and_then(|(_, r)| r.count());
                let opt = |v: Option<u64>| v.map(|n| n.to_string()).unwrap_or_else(|| "not supported".into());
                vec![
                    c.config.to_string(),
                    c.load.to_string(),
                    c.threads.to_string(),
                    c.workers.to_string(),
                    i.to_string(),
                    format!("{:.6}", smp.time_s),
                    opt(get(Event::ContextSwitches)),
                    opt(get(Event::CpuMigrations)),
                    opt(get(Event::PageFaults)),
                    opt(get(Event::TaskClock)),
                ]
            })
        })
        .collect();
    let header = [
        "config",
        "load",
        "threads",
        "workers",
        "rep",
        "time_s",
        "context_switches",
        "cpu_migrations",
        "page_faults",
        "task_clock_ns",
    ];
    DataFile::csv("runs.csv", &header, rows)
}

fn json_params(p: &BenchParams, q: QueueBenchParams) -> serde_json::Value {
    serde_json::json!({ "bench": p, "queue_bench": q })
}

impl Experiment for TaskmanExperiment {
    fn name(&self) -> &'static str {
        "taskman"
    }
    fn seed(&self) -> &'static str {
        "003"
    }
    fn title(&self) -> &'static str {
        "Task manager for exclusive computation (Table 2)"
    }
    fn scale_of(&self, scale: Scale) -> String {
        let p = super::bench::BenchParams::for_scale(scale, 2);
        let seed = if scale == Scale::Full { ": the seed's scale" } else { " (seed: 100)" };
        format!("{} repetitions of each Table 2 run{seed}", p.reps)
    }
    fn estimate_s(&self, scale: Scale) -> f64 {
        match scale {
            Scale::Quick => 45.0,
            Scale::Default => 170.0,
            // The traversal dominates: scale the default's time by repetitions × passes
            // (100 × 4,000 against 10 × 200: 200×, about 9 h 26 min).
            Scale::Full => {
                let (full, default) = (
                    super::bench::BenchParams::for_scale(scale, 2),
                    super::bench::BenchParams::for_scale(Scale::Default, 2),
                );
                self.estimate_s(Scale::Default) * (full.reps as f64 * full.steps as f64)
                    / (default.reps as f64 * default.steps as f64)
            }
        }
    }
    fn run(&self, ctx: &RunContext) -> anyhow::Result<Section> {
        let unsupported = |why: String| Ok(Section::unsupported(self.name(), self.seed(), self.title(), why));
        if !schedlab_os::is_root() {
            return unsupported("configuration C needs root (SCHED_FIFO and IRQ masks)".into());
        }
        if let Err(e) = schedlab_os::sched::require_rt_throttling() {
            return unsupported(e.to_string());
        }
        let topo = schedlab_os::topology::Topology::read()?;
        if topo.worker_cpus().is_empty() {
            return unsupported("one CPU only: the task manager reserves the first core for the system".into());
        }
        let params = BenchParams::for_scale(ctx.scale, topo.cpus.len());
        run(&params, queue_params(ctx.scale), ctx.progress)
    }
}
