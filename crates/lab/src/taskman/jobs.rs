//! Shell commands as tasks: `schedlab taskman run --jobs FILE` (one command per line) or
//! `schedlab taskman run -- CMD ARGS`. Each task starts its command from the worker thread, so
//! the child inherits the worker's CPU and real-time policy; tasks are taken FCFS; exit codes
//! and times are collected.
//!
//! The controlling thread (not a worker: workers block signals) watches for SIGINT/SIGTERM and
//! per-command time limits: it cancels what has not started and terminates running children
//! (SIGTERM, then SIGKILL after a grace period), so the manager can then restore everything.

use super::config::ManagerConfig;
use super::manager::{Manager, ManagerReport, TaskResult};
use anyhow::{Context, Result};
use schedlab_os::child::{Child, ChildSpec, Output};
use schedlab_os::process::{self, Signal};
use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One command to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Job {
    /// A line of a job file, run with `sh -c`.
    Shell(String),
    /// A program and its arguments, run directly.
    Argv(Vec<String>),
}

impl Job {
    /// How the job reads in a summary.
    pub fn display(&self) -> String {
        match self {
            Job::Shell(s) => s.clone(),
            Job::Argv(v) => v.join(" "),
        }
    }
}

/// Read a job file: one shell command per line; blank lines and `#` comments are skipped.
pub fn read_job_file(path: &Path) -> Result<Vec<Job>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read the job file {}", path.display()))?;
    let jobs: Vec<Job> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| Job::Shell(l.to_string()))
        .collect();
    if jobs.is_empty() {
        schedlab_os::bail_usage!(
            "the job file {} has no commands (one shell command per line; # starts a comment)",
            path.display()
        );
    }
    Ok(jobs)
}

/// How one command ended.
#[derive(Debug, Clone, Serialize)]
pub struct JobExit {
    pub pid: u32,
    /// Exit status, if it exited.
    pub exit_code: Option<i32>,
    /// The signal that killed it, if one did.
    pub signal: Option<i32>,
    pub wall_s: f64,
}

/// One line of the summary.
#[derive(Debug, Clone, Serialize)]
pub struct JobRecord {
    pub id: u64,
    pub command: String,
    pub worker: usize,
    pub cpu: i32,
    /// Seconds from submission to start (FCFS wait).
    pub wait_s: f64,
    /// `ok`, `failed`, `killed`, `panicked`, `cancelled` or `error`.
    pub status: String,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub wall_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What a `run` produced.
#[derive(Debug, Clone, Serialize)]
pub struct JobsReport {
    pub jobs: Vec<JobRecord>,
    pub manager: ManagerReport<Result<JobExit, String>>,
    pub wall_s: f64,
    /// True if SIGINT/SIGTERM stopped the run.
    pub interrupted: bool,
}

impl JobsReport {
    /// Jobs with the given status.
    pub fn count(&self, status: &str) -> usize {
        self.jobs.iter().filter(|j| j.status == status).count()
    }
}

/// Options of a run beyond the manager's configuration.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Kill a command that runs longer than this.
    pub timeout: Option<Duration>,
    /// Send the commands' stdout to our stderr (keeps `--json` output clean).
    pub stdout_to_stderr: bool,
    /// Test hook: one extra task that panics inside the worker.
    pub inject_panic: bool,
}

type Running = Arc<Mutex<HashMap<u64, (u32, Instant)>>>;

/// Run `jobs` on a manager configured by `cfg`; returns after every job ended or a stop signal.
pub fn run_jobs(cfg: &ManagerConfig, jobs: &[Job], opts: &RunOptions) -> Result<JobsReport> {
    let start = Instant::now();
    let manager = Manager::<Result<JobExit, String>>::start(cfg)?;
    let running: Running = Arc::new(Mutex::new(HashMap::new()));
    for (i, job) in jobs.iter().enumerate() {
        let job = job.clone();
        let running = running.clone();
        let to_stderr = opts.stdout_to_stderr;
        manager.submit(move |_| run_child(i as u64, &job, &running, to_stderr));
        if opts.inject_panic && i == 0 {
            manager.submit(|_| panic!("injected panic inside a task (test hook)"));
        }
    }
    let mut interrupted = false;
    let mut term_sent: Option<Instant> = None;
    while !manager.wait(Some(Duration::from_millis(20))) {
        if schedlab_os::signals::stop_requested() && term_sent.is_none() {
            interrupted = true;
            manager.cancel();
            signal_all(&running, Signal::SIGTERM);
            term_sent = Some(Instant::now());
        }
        if term_sent.is_some_and(|t| t.elapsed() > Duration::from_secs(2)) {
            signal_all(&running, Signal::SIGKILL);
        }
        if let Some(limit) = opts.timeout {
            let over: Vec<u32> =
                lock(&running).values().filter(|(_, t)| t.elapsed() > limit).map(|(pid, _)| *pid).collect();
            for pid in over {
                let _ = process::signal(pid as i32, Signal::SIGKILL);
            }
        }
    }
    let report = manager.shutdown()?;
    let records = report
        .tasks
        .iter()
        .map(|t| {
            let command = jobs_command(jobs, t.id, opts.inject_panic);
            let mut r = JobRecord {
                id: t.id,
                command,
                worker: t.worker,
                cpu: t.cpu,
                wait_s: t.start_ns.saturating_sub(t.queued_ns) as f64 / 1e9,
                status: String::new(),
                exit_code: None,
                signal: None,
                wall_s: t.end_ns.saturating_sub(t.start_ns) as f64 / 1e9,
                error: None,
            };
            match &t.result {
                TaskResult::Done(Ok(e)) => {
                    r.exit_code = e.exit_code;
                    r.signal = e.signal;
                    r.wall_s = e.wall_s;
                    r.status = match (e.exit_code, e.signal) {
                        (Some(0), _) => "ok",
                        (Some(_), _) => "failed",
                        _ => "killed",
                    }
                    .into();
                }
                TaskResult::Done(Err(why)) => {
                    r.status = "error".into();
                    r.error = Some(why.clone());
                }
                TaskResult::Panicked(msg) => {
                    r.status = "panicked".into();
                    r.error = Some(msg.clone());
                }
                TaskResult::Cancelled => r.status = "cancelled".into(),
            }
            r
        })
        .collect();
    Ok(JobsReport { jobs: records, manager: report, wall_s: start.elapsed().as_secs_f64(), interrupted })
}

/// The command for a task id (the injected panic task sits right after job 0).
fn jobs_command(jobs: &[Job], id: u64, injected: bool) -> String {
    let idx = match (injected, id) {
        (true, 1) => return "(injected panic)".to_string(),
        (true, i) if i > 1 => i as usize - 1,
        (_, i) => i as usize,
    };
    jobs.get(idx).map(Job::display).unwrap_or_default()
}

fn run_child(id: u64, job: &Job, running: &Running, stdout_to_stderr: bool) -> Result<JobExit, String> {
    let spec = match job {
        Job::Shell(line) => ChildSpec::shell(line),
        Job::Argv(v) => ChildSpec::from_argv(v).map_err(|e| e.to_string())?,
    };
    let spec = if stdout_to_stderr { spec.stdout(Output::Stderr) } else { spec };
    let t0 = Instant::now();
    // Forked from the worker thread: the command inherits its CPU affinity and scheduling
    // policy, but not its blocked signals (the child builder resets them), and dies if the
    // worker thread does.
    let mut child = Child::spawn(&spec).map_err(|e| format!("cannot start `{}`: {e}", job.display()))?;
    let pid = child.pid() as u32;
    lock(running).insert(id, (pid, t0));
    let reaped = child.wait();
    lock(running).remove(&id);
    let reaped = reaped.map_err(|e| format!("waiting for `{}`: {e}", job.display()))?;
    let (exit_code, signal) = match reaped.status {
        schedlab_os::rusage::ExitStatus::Exited(c) => (Some(c), None),
        schedlab_os::rusage::ExitStatus::Signaled(s) => (None, Some(s)),
    };
    Ok(JobExit { pid, exit_code, signal, wall_s: t0.elapsed().as_secs_f64() })
}

fn lock(r: &Running) -> std::sync::MutexGuard<'_, HashMap<u64, (u32, Instant)>> {
    r.lock().unwrap_or_else(|p| p.into_inner())
}

fn signal_all(running: &Running, sig: Signal) {
    for (pid, _) in lock(running).values() {
        let _ = process::signal(*pid as i32, sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_files_skip_blanks_and_comments() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("jobs.txt");
        std::fs::write(&p, "# a comment\necho one\n\n  exit 3  \n").unwrap();
        assert_eq!(read_job_file(&p).unwrap(), vec![Job::Shell("echo one".into()), Job::Shell("exit 3".into())]);
        std::fs::write(&p, "# only a comment\n").unwrap();
        assert!(read_job_file(&p).unwrap_err().to_string().contains("no commands"));
        let missing = d.path().join("nope.txt");
        assert!(read_job_file(&missing).unwrap_err().to_string().contains("nope.txt"));
    }

    #[test]
    fn injected_panic_is_named_in_the_summary() {
        let jobs = vec![Job::Shell("a".into()), Job::Shell("b".into())];
        assert_eq!(jobs_command(&jobs, 0, true), "a");
        assert_eq!(jobs_command(&jobs, 1, true), "(injected panic)");
        assert_eq!(jobs_command(&jobs, 2, true), "b");
        assert_eq!(jobs_command(&jobs, 1, false), "b");
    }
}
