//! The managed task processes of one live run: spawned stopped before exec, their stdout
//! captured, reaped as they exit, and ended the same way on every exit path — frozen (SIGSTOP)
//! so work counters stop together, reset to SCHED_OTHER, asked to stop (SIGTERM), then killed
//! (SIGKILL to the whole process group) after a grace period. Dropping a [`TaskSet`] kills and
//! reaps whatever is still alive; if the dispatcher itself is killed, `PR_SET_PDEATHSIG`
//! (set in each child before exec) kills the tasks.

use super::spec::TaskSpec;
use anyhow::{Context, Result};
use schedlab_os::managed::{self, ManagedChild};
use schedlab_os::rusage::{self, ExitStatus};
use schedlab_os::sched::{self, SchedParams};
use std::io::Read;
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

struct Child {
    mc: ManagedChild,
    clock: Option<managed::TaskClock>,
    output: Option<mpsc::Receiver<String>>,
    reaped: Option<rusage::Reaped>,
}

/// The processes of one run.
pub struct TaskSet {
    children: Vec<Child>,
}

impl TaskSet {
    /// Spawn every task stopped before exec, pinned to `cpus` (empty = no pinning).
    /// On an error the tasks already spawned are killed (by `Drop`).
    pub fn spawn(specs: &[TaskSpec], cpus: &[usize]) -> Result<Self> {
        let mut set = TaskSet { children: Vec::new() };
        for s in specs {
            let mut mc = managed::spawn_stopped(&s.argv, cpus, true)
                .with_context(|| format!("starting task '{}:{}'", s.weight, s.command()))?;
            let output = mc.stdout.take().map(|mut f| {
                let (tx, rx) = mpsc::channel();
                std::thread::spawn(move || {
                    let mut buf = Vec::new();
                    let _ = f.read_to_end(&mut buf);
                    let start = buf.len().saturating_sub(MAX_OUTPUT);
                    let _ = tx.send(String::from_utf8_lossy(&buf[start..]).into_owned());
                });
                rx
            });
            let clock = managed::TaskClock::open(mc.pid).ok();
            set.children.push(Child { mc, clock, output, reaped: None });
        }
        Ok(set)
    }

    /// Number of tasks.
    pub fn len(&self) -> usize {
        self.children.len()
    }

    /// True when there are no tasks.
    pub fn is_empty(&self) -> bool {
        self.children.is_empty()
    }

    /// Process id of task `i`.
    pub fn pid(&self, i: usize) -> i32 {
        self.children[i].mc.pid
    }

    /// True while task `i` has not been reaped.
    pub fn alive(&self, i: usize) -> bool {
        self.children[i].reaped.is_none()
    }

    /// Reap tasks that exited (without blocking); returns their indices.
    pub fn reap(&mut self) -> Vec<usize> {
        let mut out = Vec::new();
        for (i, c) in self.children.iter_mut().enumerate() {
            if c.reaped.is_none() {
                if let Ok(Some(r)) = rusage::try_wait_pid(c.mc.pid) {
                    c.reaped = Some(r);
                    out.push(i);
                }
            }
        }
        out
    }

    /// CPU time of task `i` so far: its task-clock counter (exact while it runs), else the
    /// process CPU clock, else its rusage once reaped.
    pub fn cpu_ns(&mut self, i: usize) -> u64 {
        let c = &mut self.children[i];
        if let Some(ns) = c.clock.as_mut().and_then(|k| k.read_ns().ok()) {
            return ns;
        }
        match &c.reaped {
            Some(r) => ((r.usage.user_s + r.usage.sys_s) * 1e9) as u64,
            None => managed::process_cpu_ns(c.mc.pid).unwrap_or(0),
        }
    }

    /// Signal task `i`'s process (not its group).
    pub fn signal(&self, i: usize, sig: i32) {
        if self.alive(i) {
            let _ = managed::send_signal(self.children[i].mc.pid, sig);
        }
    }

    /// Release task `i` from its start barrier (SIGCONT).
    pub fn release(&self, i: usize) -> Result<()> {
        Ok(self.children[i].mc.release()?)
    }

    /// Stop every live task and wait (up to 500 ms) until each is in state T, so CPU clocks
    /// and work counters are read at one instant.
    pub fn freeze(&self) {
        for i in 0..self.len() {
            self.signal(i, libc::SIGSTOP);
        }
        let deadline = Instant::now() + Duration::from_millis(500);
        for c in self.children.iter().filter(|c| c.reaped.is_none()) {
            while Instant::now() < deadline {
                match managed::proc_state(c.mc.pid) {
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
                let pid = self.pid(i);
                let _ = sched::set_sched(pid, &SchedParams::other_nice(0));
                let _ = managed::send_signal(pid, libc::SIGTERM);
                let _ = managed::send_signal(pid, libc::SIGCONT);
            }
        }
        let deadline = Instant::now() + grace;
        while (0..self.len()).any(|i| self.alive(i)) && Instant::now() < deadline {
            self.reap();
            std::thread::sleep(Duration::from_millis(5));
        }
        self.kill_all();
        let children = std::mem::take(&mut self.children);
        children
            .into_iter()
            .map(|mut c| {
                let r = c.reaped.expect("kill_all reaps every child");
                let exec_error =
                    if r.status == ExitStatus::Exited(127) { c.mc.exec_error().map(|e| e.to_string()) } else { None };
                let output = c.output.and_then(|rx| rx.recv_timeout(Duration::from_secs(2)).ok()).unwrap_or_default();
                TaskEnd {
                    pid: r.pid,
                    rusage_cpu_ns: ((r.usage.user_s + r.usage.sys_s) * 1e9) as u64,
                    status: Some(r.status),
                    exec_error,
                    output,
                }
            })
            .collect()
    }

    /// SIGKILL every task's process group (stopped processes die too) and reap the tasks.
    fn kill_all(&mut self) {
        for c in self.children.iter_mut() {
            if c.reaped.is_none() {
                // kill(-pgid): each task leads its own process group (setpgid in the child).
                // Only while the leader is unreaped: its pid (= the group id) cannot have been
                // reused by an unrelated group yet.
                let _ = managed::send_signal(-c.mc.pid, libc::SIGKILL);
                let _ = managed::send_signal(c.mc.pid, libc::SIGKILL);
                if let Ok(r) = rusage::wait_pid(c.mc.pid) {
                    c.reaped = Some(r);
                }
            }
        }
    }
}

impl Drop for TaskSet {
    fn drop(&mut self) {
        self.kill_all();
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
        let specs = vec![TaskSpec { weight: 1, argv: vec!["sleep".into(), "30".into()] }];
        let pid;
        {
            let set = TaskSet::spawn(&specs, &[]).unwrap();
            pid = set.pid(0);
            set.release(0).unwrap();
        }
        assert_eq!(managed::proc_state(pid), None, "task {pid} survived its TaskSet");
    }

    #[test]
    fn finish_collects_output_after_sigterm() {
        let specs = vec![TaskSpec {
            weight: 1,
            argv: vec!["sh".into(), "-c".into(), "trap 'echo done; exit 0' TERM; while :; do sleep 0.01; done".into()],
        }];
        let set = TaskSet::spawn(&specs, &[]).unwrap();
        set.release(0).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let ends = set.finish(Duration::from_secs(2));
        assert_eq!(ends[0].output.trim(), "done");
        assert_eq!(ends[0].status, Some(ExitStatus::Exited(0)));
    }
}
