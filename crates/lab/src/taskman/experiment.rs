//! The `taskman` experiment for `schedlab reproduce`: Table 2 and the queue benchmark at the
//! requested scale, written to `<out>/taskman/<UTC timestamp>/`.

use super::bench::{self, BenchParams};
use super::qbench::{self, QueueBenchParams};
use super::report;
use crate::{Experiment, RunContext, Scale};
use schedlab_report::results::{envelope, RunDir};
use schedlab_report::section::{Section, Status};

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

/// Run Table 2 and the queue benchmark, write the run directory, build the section.
pub fn run_and_write(params: &BenchParams, qp: QueueBenchParams, ctx: &RunContext) -> anyhow::Result<Section> {
    let b = bench::run(params, &|f, what| ctx.progress.update(f * 0.95, what))?;
    let q = qbench::run(qp)?;
    let mut s = report::section(&b, Some(&q));
    let dir = RunDir::create(&ctx.out_root, "taskman")?;
    let doc = envelope("taskman", &json_params(params, qp), report::document(&b, Some(&q)));
    dir.write_json(&doc)?;
    let rows: Vec<Vec<String>> = b
        .cells
        .iter()
        .flat_map(|c| {
            c.samples.iter().enumerate().map(move |(i, smp)| {
                let get = |e| smp.counters.iter().find(|(x, _)| *x == e).and_then(|(_, r)| r.count());
                let opt = |v: Option<u64>| v.map(|n| n.to_string()).unwrap_or_else(|| "not supported".into());
                vec![
                    c.config.to_string(),
                    c.threads.to_string(),
                    c.workers.to_string(),
                    c.load.to_string(),
                    i.to_string(),
                    format!("{:.6}", smp.time_s),
                    opt(get(schedlab_os::perf::Event::ContextSwitches)),
                    opt(get(schedlab_os::perf::Event::CpuMigrations)),
                    opt(get(schedlab_os::perf::Event::PageFaults)),
                    opt(get(schedlab_os::perf::Event::TaskClock)),
                ]
            })
        })
        .collect();
    dir.write_csv(
        "runs.csv",
        &[
            "config",
            "threads",
            "workers",
            "load",
            "rep",
            "time_s",
            "context_switches",
            "cpu_migrations",
            "page_faults",
            "task_clock_ns",
        ],
        &rows,
    )?;
    for f in &s.figures {
        dir.write_text(&f.file, &f.svg)?;
    }
    s.run_dir = Some(dir.path().display().to_string());
    s.data = doc;
    Ok(s)
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
    fn estimate_s(&self, scale: Scale) -> f64 {
        match scale {
            Scale::Quick => 45.0,
            Scale::Default => 170.0,
            Scale::Full => 4.0 * 3600.0,
        }
    }
    fn run(&self, ctx: &RunContext) -> anyhow::Result<Section> {
        let unsupported = |why: String| {
            let mut s = Section::new(self.name(), self.seed(), self.title());
            s.status = Status::Unsupported(why);
            Ok(s)
        };
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
        run_and_write(&params, queue_params(ctx.scale), ctx)
    }
}
