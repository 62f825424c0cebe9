//! The managed task processes of one live run: spawned stopped before exec, their stdout
//! captured, reaped as they exit, and ended the same way on every exit path — frozen (SIGSTOP)
//! so work counters stop together, reset to SCHED_OTHER, asked to stop (SIGTERM), then killed
//! (SIGKILL to the whole process group) after a grace period. Dropping a [`TaskSet`] kills and
//! reaps whatever is still alive (each task is a [`Child`]); if the dispatcher itself is
//! killed, `PR_SET_PDEATHSIG` (set in each child before exec) kills the tasks.

use super::spec::WrrTask;
use anyhow::{Context, Result};
use schedlab_os::child::{self, Barrier, Child, ChildSpec, Output};
use schedlab_os::process::{self, Signal, TaskClock};
use schedlab_os::rusage::ExitStatus;
use schedlab_os::sched::{self, SchedParams};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Keep at most this much of a task's stdout.
const MAX_OUTPUT: usize = 1 << 20;

/// How one task ended, once the run is over.
#[derive(Debug, Clone, serde::Serialize)]
pub struct TaskEnd {
    pub pid: i32,
    /// CPU time of the task's own process (its threads), from its rusage when reaped.
    pub rusage_cpu_ns: u64,
    pub status: Option<ExitStatus>,
    /// Set when exec failed: the reason.
    pub exec_error: Option<String>,
    /// What the task printed on stdout (last 1 MiB).
    pub output: String,
}

struct Task {
    child: Child,
    clock: Option<TaskClock>,
    output: Option<mpsc::Receiver<String>>,
}

/// The processes of one run.
pub struct TaskSet {
    tasks: Vec<Task>,
}

impl TaskSet {
    /// Spawn every task stopped before exec, pinned to `cpus` (empty = no pinning).
    /// On an error the tasks already spawned are killed (by `Drop`).
    pub fn spawn(specs: &[WrrTask], cpus: &[usize]) -> Result<Self> {
        let mut set = TaskSet { tasks: Vec::new() };
        for s in specs {
            let mut spec = ChildSpec::from_argv(&s.argv)?.stdout(Output::Pipe).barrier(Barrier::Stop);
            if !cpus.is_empty() {
                spec = spec.cpus(cpus);
            }
            let mut child =
                Child::spawn(&spec).with_context(|| format!("starting task '{}:{}'", s.weight, s.command()))?;
            let output = child.take_stdout().map(|f| child::collect_output(f, MAX_OUTPUT));
            let clock = TaskClock::open(child.pid()).ok();
            set.tasks.push(Task { child, clock, output });
        }
        Ok(set)
    }

    /// Number of tasks.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// True when there are no tasks.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Process id of task `i`.
    pub fn pid(&self, i: usize) -> i32 {
        self.tasks[i].child.pid()
    }

    /// True while task `i` has not been reaped.
    pub fn alive(&self, i: usize) -> bool {
        self.tasks[i].child.is_alive()
    }

    /// Reap tasks that exited (without blocking); returns their indices.
    pub fn reap(&mut self) -> Vec<usize> {
        let mut out = Vec::new();
        for (i, t) in self.tasks.iter_mut().enumerate() {
            if t.child.is_alive() && matches!(t.child.try_wait(), Ok(Some(_))) {
                out.push(i);
            }
        }
        out
    }

    /// CPU time of task `i` so far: its task-clock counter (exact while it runs), else the
    /// process CPU clock, else its rusage once reaped.
    pub fn cpu_ns(&mut self, i: usize) -> u64 {
        let t = &mut self.tasks[i];
        if let Some(ns) = t.clock.as_mut().and_then(|k| k.read_ns().ok()) {
            return ns;
        }
        match t.child.reaped() {
            Some(r) => ((r.usage.user_s + r.usage.sys_s) * 1e9) as u64,
            None => process::process_cpu_ns(t.child.pid()).unwrap_or(0),
        }
    }

    /// Signal task `i`'s process (not its group), while it is unreaped.
    pub fn signal(&self, i: usize, sig: Signal) {
        let _ = self.tasks[i].child.signal(sig as i32);
    }

    /// Release task `i` from its start barrier (SIGCONT).
    pub fn release(&mut self, i: usize) -> Result<()> {
        Ok(self.tasks[i].child.release()?)
    }

    /// Stop every live task and wait (up to 500 ms) until each is in state T, so CPU clocks
    /// and work counters are read at one instant.
    pub fn freeze(&self) {
        for i in 0..self.len() {
            self.signal(i, Signal::SIGSTOP);
        }
        let deadline = Instant::now() + Duration::from_millis(500);
        for t in self.tasks.iter().filter(|t| t.child.is_alive()) {
            while Instant::now() < deadline {
                match schedlab_os::procfs::stat(t.child.pid()).map(|s| s.state) {
                    Some('T') | Some('t') | Some('Z') | None => break,
                    _ => std::thread::sleep(Duration::from_micros(200)),
                }
            }
        }
    }

    /// End the run: reset live tasks to SCHED_OTHER, SIGTERM + SIGCONT them, wait up to
    /// `grace` for them to exit, SIGKILL their process groups, reap all and collect output.
    pub fn finish(mut self, grace: Duration) -> Vec<TaskEnd> {
        for i in 0..self.len() {
            if self.alive(i) {
                let _ = sched::set_sched(self.pid(i), &SchedParams::other_nice(0));
                self.signal(i, Signal::SIGTERM);
                self.signal(i, Signal::SIGCONT);
            }
        }
        let deadline = Instant::now() + grace;
        while (0..self.len()).any(|i| self.alive(i)) && Instant::now() < deadline {
            self.reap();
            std::thread::sleep(Duration::from_millis(5));
        }
        std::mem::take(&mut self.tasks)
            .into_iter()
            .map(|mut t| {
                // Each task leads its own process group: SIGKILL takes its stopped children too.
                let reaped = t.child.kill().ok();
                let exec_error = match reaped.map(|r| r.status) {
                    Some(ExitStatus::Exited(127)) => t.child.exec_error().map(|e| e.to_string()),
                    _ => None,
                };
                let output = t.output.and_then(|rx| rx.recv_timeout(Duration::from_secs(2)).ok()).unwrap_or_default();
                TaskEnd {
                    pid: t.child.pid(),
                    rusage_cpu_ns: reaped.map_or(0, |r| ((r.usage.user_s + r.usage.sys_s) * 1e9) as u64),
                    status: reaped.map(|r| r.status),
                    exec_error,
                    output,
                }
            })
            .collect()
    }
}

/// Parse the crypt workload's last JSON line (`{"iterations":N,"seconds":S}`), if present.
pub fn crypt_result(output: &str) -> Option<(u64, f64)> {
    output.lines().rev().find_map(|l| {
        let v: serde_json::Value = serde_json::from_str(l.trim()).ok()?;
        Some((v["iterations"].as_u64()?, v["seconds"].as_f64().unwrap_or(0.0)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crypt_output_is_parsed() {
        assert_eq!(crypt_result("noise\n{\"iterations\":12,\"seconds\":0.5}\n"), Some((12, 0.5)));
        assert_eq!(crypt_result("nothing"), None);
    }

    #[test]
    fn tasks_are_killed_and_reaped_on_drop() {
        let specs = vec![WrrTask { weight: 1, argv: vec!["sleep".into(), "30".into()] }];
        let pid;
        {
            let mut set = TaskSet::spawn(&specs, &[]).unwrap();
            pid = set.pid(0);
            set.release(0).unwrap();
        }
        assert_eq!(schedlab_os::procfs::stat(pid), None, "task {pid} survived its TaskSet");
    }

    #[test]
    fn finish_collects_output_after_sigterm() {
        // The shell touches a marker once its trap is set, so SIGTERM never beats the trap.
        let dir = tempfile::tempdir().unwrap();
        let ready = dir.path().join("trap-set");
        let script =
            format!("trap 'echo done; exit 0' TERM; touch '{}'; while :; do sleep 0.01; done", ready.display());
        let specs = vec![WrrTask { weight: 1, argv: vec!["sh".into(), "-c".into(), script] }];
        let mut set = TaskSet::spawn(&specs, &[]).unwrap();
        set.release(0).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !ready.exists() {
            assert!(std::time::Instant::now() < deadline, "the shell did not set its trap within 20 s");
            std::thread::sleep(Duration::from_millis(5));
        }
        let ends = set.finish(Duration::from_secs(2));
        assert_eq!(ends[0].output.trim(), "done");
        assert_eq!(ends[0].status, Some(ExitStatus::Exited(0)));
    }
}
