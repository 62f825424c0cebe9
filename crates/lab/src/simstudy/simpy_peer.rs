//! The SimPy round-robin model (`bench/sim/simpy_rr.py`) as the benchmark's peer: one Python
//! process that reads the benchmark's tasks, warms up, and then runs the model once each time it
//! is asked. Its timed runs interleave with schedlab's round-robin runs (ours, then SimPy's,
//! pair after pair), so the paired ratios compare the two engines over the same few hundred
//! milliseconds of the host: a slow spell of a shared machine falls on both sides of a pair
//! instead of on one engine's whole series.

use super::bench::Row;
use anyhow::{bail, Context, Result};
use schedlab_os::child::{self, Child, ChildSpec, Input, Output};
use schedlab_sim::workload::Workload;
use serde::Deserialize;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;

/// The running model, between its warm-up and the end of its input.
pub struct SimpyPeer {
    /// The round-robin spec its runs pair with (the model's quantum is that spec's).
    pub spec: String,
    child: Child,
    requests: Option<File>,
    answers: BufReader<File>,
    stderr: Receiver<String>,
    csv: PathBuf,
    tasks: usize,
    quantum_ns: u64,
    events: u64,
    avg_turnaround_ms: f64,
    warm_s: f64,
    trials_s: Vec<f64>,
}

/// What the model says once warmed up.
#[derive(Deserialize)]
struct Warm {
    events: u64,
    avg_turnaround_ms: f64,
    /// Its warm-up run's wall time.
    seconds: f64,
}

/// What the model says after a timed run.
#[derive(Deserialize)]
struct Trial {
    seconds: f64,
}

impl SimpyPeer {
    /// Start the model on `w`'s tasks with `quantum_ns`, paired with round-robin `spec`, and
    /// wait for its warm-up run. The tasks go to it through a temporary CSV file, removed when
    /// the peer is dropped.
    pub fn start(python: &str, script: &Path, w: &Workload, spec: &str, quantum_ns: u64) -> Result<Self> {
        if !script.exists() {
            schedlab_os::bail_usage!(
                "SimPy script {} not found: run from the repository root or pass --simpy-script",
                script.display()
            );
        }
        let csv = std::env::temp_dir().join(format!("schedlab-simpy-tasks-{}.csv", std::process::id()));
        write_tasks_csv(w, &csv)?;
        let started = ChildSpec::new(python)
            .arg(script.display().to_string())
            .arg(csv.display().to_string())
            .arg(quantum_ns.to_string())
            .stdin(Input::Pipe)
            .stdout(Output::Pipe)
            .stderr(Output::Pipe);
        let mut child = match Child::spawn(&started) {
            Ok(c) => c,
            Err(e) => {
                let _ = std::fs::remove_file(&csv);
                return Err(e).with_context(|| format!("running {python} {}", script.display()));
            }
        };
        let stderr = child::collect_output(child.take_stderr().expect("piped stderr"), 1 << 16);
        let requests = child.take_stdin();
        let answers = BufReader::new(child.take_stdout().expect("piped stdout"));
        let mut peer = SimpyPeer {
            spec: spec.to_string(),
            child,
            requests,
            answers,
            stderr,
            csv,
            tasks: w.tasks.len(),
            quantum_ns,
            events: 0,
            avg_turnaround_ms: 0.0,
            warm_s: 0.0,
            trials_s: vec![],
        };
        let warm: Warm = peer.answer("its warm-up run")?;
        (peer.events, peer.avg_turnaround_ms, peer.warm_s) = (warm.events, warm.avg_turnaround_ms, warm.seconds);
        Ok(peer)
    }

    /// How long the model's warm-up run took (a timed run takes about as long).
    pub fn warm_s(&self) -> f64 {
        self.warm_s
    }

    /// Whether the model has been timed (it pairs with one series of runs).
    pub fn timed(&self) -> bool {
        !self.trials_s.is_empty()
    }

    /// One timed run of the model.
    pub fn trial(&mut self) -> Result<()> {
        let requests = self.requests.as_mut().expect("requests are open until the row is made");
        if requests.write_all(b"run\n").and_then(|()| requests.flush()).is_err() {
            return Err(self.failure("a timed run"));
        }
        let t: Trial = self.answer("a timed run")?;
        self.trials_s.push(t.seconds);
        Ok(())
    }

    /// End the model's input, wait for it to exit, and give its row: the best run in `seconds`,
    /// every run in order in `trials_s`.
    pub fn into_row(mut self) -> Result<Row> {
        self.requests = None;
        let status = self.child.wait()?.status;
        if !status.success() {
            return Err(self.failure("its exit"));
        }
        if self.trials_s.is_empty() {
            bail!("the SimPy model was never timed: no round-robin run was paired with it");
        }
        let best = self.trials_s.iter().copied().fold(f64::INFINITY, f64::min);
        Ok(Row {
            engine: "simpy".into(),
            policy: format!("rr:quantum={}ms", self.quantum_ns as f64 / 1e6),
            output: "overall".into(),
            tasks: self.tasks,
            events: self.events,
            seconds: best,
            events_per_s: self.events as f64 / best,
            trials_s: std::mem::take(&mut self.trials_s),
            avg_turnaround_ms: self.avg_turnaround_ms,
            rss_before_mib: None,
            peak_rss_mib: None,
        })
    }

    /// Read the model's next line as `T`; if it has none, the model failed.
    fn answer<T: for<'de> Deserialize<'de>>(&mut self, what: &str) -> Result<T> {
        let mut line = String::new();
        if self.answers.read_line(&mut line).unwrap_or(0) == 0 {
            return Err(self.failure(what));
        }
        serde_json::from_str(&line).with_context(|| format!("reading the SimPy model's answer to {what}: {line:?}"))
    }

    /// The model stopped answering: its exit and the end of what it wrote to stderr.
    fn failure(&mut self, what: &str) -> anyhow::Error {
        self.requests = None;
        let status = self.child.wait().map(|r| format!("{:?}", r.status)).unwrap_or_else(|e| e.to_string());
        let stderr = self.stderr.recv().unwrap_or_default();
        anyhow::anyhow!(
            "the SimPy model failed at {what} ({status}): {} (is SimPy installed? `pip install simpy`)",
            stderr.trim()
        )
    }
}

impl Drop for SimpyPeer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.csv);
    }
}

/// Write the tasks for the SimPy model: `arrival_ns,burst_ns` per line.
fn write_tasks_csv(w: &Workload, path: &Path) -> Result<()> {
    let mut f = std::io::BufWriter::new(File::create(path).with_context(|| format!("creating {}", path.display()))?);
    for t in &w.tasks {
        writeln!(f, "{},{}", t.arrival, t.bursts[0])?;
    }
    f.flush()?;
    Ok(())
}
