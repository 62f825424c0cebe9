//! The simulator benchmark: a Poisson workload (100,000 tasks by default, load 0.9 on one CPU)
//! under several policies, reporting events per second; and the side-by-side run of the
//! equivalent SimPy round-robin model (`bench/sim/simpy_rr.py`) on the very same tasks, so the
//! ratio is measured in one run on one machine.
//!
//! Each policy is timed twice: producing only the overall metrics (as the SimPy model does: it
//! sums turnaround times) and producing a result record per task as well.

use anyhow::{bail, Context, Result};
use schedlab_os::child::{self, Child, ChildSpec, Output};
use schedlab_report::section::{Section, Table};
use schedlab_sim::engine::{simulate, SimConfig};
use schedlab_sim::generate;
use schedlab_sim::policies::by_spec;
use schedlab_sim::workload::Workload;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::io::{Read, Write};
use std::path::Path;
use std::time::Instant;

/// The benchmark workload: `n` tasks, Poisson arrivals at 180/s, exponential 5 ms bursts.
pub fn workload(n: usize, seed: u64) -> Workload {
    generate::poisson(n, 180.0, 5.0e6, 1, 0.0, 1, 1, seed)
}

/// One policy's measurement.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub engine: String,
    pub policy: String,
    /// `overall` (overall metrics only) or `per-task` (a result record per task as well).
    pub output: String,
    pub tasks: usize,
    pub events: u64,
    /// Best wall time over the repeats, seconds.
    pub seconds: f64,
    pub events_per_s: f64,
    /// For cross-checking the models: average turnaround, ms.
    pub avg_turnaround_ms: f64,
}

/// Simulate `w` under each spec `repeat` times in both output modes; keep the best times.
pub fn run(w: &Workload, specs: &[String], repeat: usize) -> Result<Vec<Row>> {
    let mut rows = vec![];
    for spec in specs {
        by_spec(spec)?;
        for task_results in [false, true] {
            rows.push(time_one(w, spec, repeat, task_results)?);
        }
    }
    Ok(rows)
}

fn time_one(w: &Workload, spec: &str, repeat: usize, task_results: bool) -> Result<Row> {
    let cfg = SimConfig { record_slices: false, task_results, ..SimConfig::default() };
    // One untimed run first: the first runs of a process pay for touching fresh memory (page
    // faults), which is not the engine's speed. The SimPy script warms up the same way.
    simulate(w, by_spec(spec)?.as_mut(), &cfg);
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..repeat.max(1) {
        let mut p = by_spec(spec)?;
        let t0 = Instant::now();
        let r = simulate(w, p.as_mut(), &cfg);
        best = best.min(t0.elapsed().as_secs_f64());
        last = Some(r);
    }
    let r = last.expect("ran at least once");
    Ok(Row {
        engine: "schedlab".into(),
        policy: r.policy.clone(),
        output: if task_results { "per-task" } else { "overall" }.into(),
        tasks: w.tasks.len(),
        events: r.events,
        seconds: best,
        events_per_s: r.events as f64 / best,
        avg_turnaround_ms: r.overall.avg_turnaround / 1e6,
    })
}

/// `schedlab sim bench` as a section: events per second of each engine and policy, and the
/// wall-time ratio to SimPy measured in the same run when it ran.
pub fn section(tasks: usize, rows: Vec<Row>) -> Section {
    let mut t = Table::new(
        format!("{tasks} tasks, Poisson arrivals 180/s, exponential bursts mean 5 ms (load 0.9), 1 CPU"),
        &["engine", "policy", "output", "events", "seconds", "events/s", "avg turnaround ms"],
    );
    for r in &rows {
        t.row(vec![
            r.engine.clone(),
            r.policy.clone(),
            r.output.clone(),
            r.events.to_string(),
            format!("{:.4}", r.seconds),
            format!("{:.0}", r.events_per_s),
            format!("{:.3}", r.avg_turnaround_ms),
        ]);
    }
    let mut ratios = serde_json::Map::new();
    if let Some(py) = rows.iter().find(|r| r.engine == "simpy") {
        let rr = |output: &str| {
            rows.iter().find(|r| r.engine == "schedlab" && r.policy.starts_with("rr") && r.output == output)
        };
        if let (Some(overall), Some(per_task)) = (rr("overall"), rr("per-task")) {
            for r in [overall, per_task] {
                ratios.insert(r.output.clone(), json!(py.seconds / r.seconds));
            }
            t.note = format!(
                "Same tasks, same RR model: SimPy took {:.3} s ({:.0} events/s). schedlab is {:.1}× faster producing \
                 the overall metrics (as the SimPy model does) and {:.1}× faster producing a record per task as well \
                 (wall-time ratios). Avg turnaround agrees to {:.4}%.",
                py.seconds,
                py.events_per_s,
                py.seconds / overall.seconds,
                py.seconds / per_task.seconds,
                100.0 * (overall.avg_turnaround_ms / py.avg_turnaround_ms - 1.0).abs()
            );
        }
    }
    let mut s = Section::new("sim-bench", "003", "Simulator benchmark");
    s.tables.push(t);
    s.results = json!({"rows": rows, "simpy_wall_time_ratio": ratios});
    s
}

/// What `simpy_rr.py` prints.
#[derive(Debug, Clone, Deserialize)]
struct SimpyOut {
    events: u64,
    seconds: f64,
    avg_turnaround_ms: f64,
}

/// Write the tasks for the SimPy model: `arrival_ns,burst_ns` per line.
pub fn write_tasks_csv(w: &Workload, path: &Path) -> Result<()> {
    let mut f =
        std::io::BufWriter::new(std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?);
    for t in &w.tasks {
        writeln!(f, "{},{}", t.arrival, t.bursts[0])?;
    }
    f.flush()?;
    Ok(())
}

/// Run the SimPy round-robin model on the same tasks, `repeat` times; keep the best time (as
/// [`run`] does for schedlab, so both sides are timed alike). The tasks go to the model through
/// a temporary CSV file, removed afterwards.
pub fn run_simpy(python: &str, script: &Path, w: &Workload, quantum_ns: u64, repeat: usize) -> Result<Row> {
    if !script.exists() {
        schedlab_os::bail_usage!(
            "SimPy script {} not found: run from the repository root or pass --simpy-script",
            script.display()
        );
    }
    let csv = std::env::temp_dir().join(format!("schedlab-simpy-tasks-{}.csv", std::process::id()));
    write_tasks_csv(w, &csv)?;
    let row = run_simpy_on(python, script, &csv, w.tasks.len(), quantum_ns, repeat);
    let _ = std::fs::remove_file(&csv);
    row
}

fn run_simpy_on(python: &str, script: &Path, csv: &Path, tasks: usize, quantum_ns: u64, repeat: usize) -> Result<Row> {
    let spec = ChildSpec::new(python)
        .arg(script.display().to_string())
        .arg(csv.display().to_string())
        .args([quantum_ns.to_string(), repeat.max(1).to_string()])
        .stdout(Output::Pipe)
        .stderr(Output::Pipe);
    let mut child = Child::spawn(&spec).with_context(|| format!("running {python} {}", script.display()))?;
    let stderr = child::collect_output(child.take_stderr().expect("piped stderr"), 1 << 16);
    let mut stdout = String::new();
    child.take_stdout().expect("piped stdout").read_to_string(&mut stdout)?;
    let status = child.wait()?.status;
    if !status.success() {
        bail!(
            "{} failed ({status:?}): {} (is SimPy installed? `pip install simpy`)",
            script.display(),
            stderr.recv().unwrap_or_default().trim()
        );
    }
    let s: SimpyOut = serde_json::from_str(&stdout).context("reading the SimPy script's JSON")?;
    Ok(Row {
        engine: "simpy".into(),
        policy: format!("rr:quantum={}ms", quantum_ns as f64 / 1e6),
        output: "overall".into(),
        tasks,
        events: s.events,
        seconds: s.seconds,
        events_per_s: s.events as f64 / s.seconds,
        avg_turnaround_ms: s.avg_turnaround_ms,
    })
}
