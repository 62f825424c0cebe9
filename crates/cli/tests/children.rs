//! Every way schedlab starts a child — the policy benchmark's workloads, the live WRR host's
//! tasks, the task manager's loads and commands, the timer trials — hands the child only
//! descriptors 0, 1 and 2 and no ignored or blocked signal, even when schedlab itself was
//! started holding an extra descriptor (without close-on-exec), ignoring SIGUSR2 and blocking
//! SIGUSR1. schedlab's own state is checked too, so the test shows the inheritance it guards
//! against was really there.
//!
//! The children are inspected from /proc while they run, after their exec (their command line
//! names their role). Needs root (the live paths); fails in CI without it.

use schedlab_os::process::Signal;
use schedlab_os::procfs::{self, SignalMasks};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static MACHINE: Mutex<()> = Mutex::new(());

/// The extra descriptor schedlab inherits.
const EXTRA_FD: i32 = 9;

/// Start schedlab with `args` holding descriptor 9 open (no close-on-exec), SIGUSR2 ignored and
/// SIGUSR1 blocked: Python sets that up and execs it (exec keeps all three).
fn start(args: &[&str], out: &std::path::Path) -> Child {
    const LEAKY_EXEC: &str = "import os, signal, sys\n\
        signal.signal(signal.SIGUSR2, signal.SIG_IGN)\n\
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})\n\
        os.dup2(os.open('/etc/hostname', os.O_RDONLY), 9, inheritable=True)\n\
        os.execv(sys.argv[1], sys.argv[1:])";
    let mut c = Command::new("python3");
    c.args(["-c", LEAKY_EXEC, env!("CARGO_BIN_EXE_schedlab")]);
    // `taskman run` writes no results directory; the others write theirs under `out`.
    let takes_out = args[..2] != ["taskman", "run"];
    c.current_dir(out).args(args).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    if takes_out {
        c.arg("--out").arg(out);
    }
    c.spawn().expect("start schedlab through python3")
}

fn fds(pid: i32) -> Option<Vec<i32>> {
    let mut v: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    v.sort_unstable();
    Some(v)
}

fn cmdline(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// Descendants of `root` whose command line contains `role` (children of the threads of a
/// process have the process as parent).
fn descendants_with(root: i32, role: &str) -> Vec<i32> {
    let mut found = Vec::new();
    let mut frontier = vec![root];
    let all: Vec<(i32, i32)> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| Some((pid, procfs::stat(pid)?.ppid)))
        .collect();
    while let Some(p) = frontier.pop() {
        for &(pid, ppid) in &all {
            if ppid == p {
                frontier.push(pid);
                if cmdline(pid).contains(role) {
                    found.push(pid);
                }
            }
        }
    }
    found
}

/// Wait (at most 60 s) for a child of `root` running `role`, then for it to settle (a Rust
/// child gives SIGPIPE back its default right after start), and return what it holds.
fn inspect(root: &mut Child, role: &str) -> (i32, Vec<i32>, SignalMasks) {
    let t0 = Instant::now();
    loop {
        assert!(root.try_wait().unwrap().is_none(), "schedlab ended before a '{role}' child was seen");
        if let Some(&pid) = descendants_with(root.id() as i32, role).first() {
            let seen = Instant::now();
            // Until it ends (then look for another) or 5 s pass (then report what it holds).
            while let (Some(f), Some(m)) = (fds(pid), procfs::signal_masks(Some(pid))) {
                let clean = f == [0, 1, 2] && m.ignored == 0 && m.blocked == 0;
                if clean || seen.elapsed() > Duration::from_secs(5) {
                    return (pid, f, m);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "no '{role}' child of schedlab within 60 s");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// schedlab itself really holds what it was given (the test's control).
fn check_parent(root: &Child) {
    let pid = root.id() as i32;
    assert!(fds(pid).unwrap().contains(&EXTRA_FD), "schedlab did not inherit descriptor {EXTRA_FD}");
    let m = procfs::signal_masks(Some(pid)).unwrap();
    let bit = |sig: Signal| 1u64 << (sig as i32 - 1);
    assert_ne!(m.ignored & bit(Signal::SIGUSR2), 0, "schedlab does not ignore SIGUSR2: {m:?}");
    assert_ne!(m.blocked & bit(Signal::SIGUSR1), 0, "schedlab does not block SIGUSR1: {m:?}");
}

fn stop(mut root: Child) {
    let _ = Command::new("kill").args(["-TERM", &root.id().to_string()]).status();
    let t0 = Instant::now();
    while root.try_wait().unwrap().is_none() {
        assert!(t0.elapsed() < Duration::from_secs(30), "schedlab ignored SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kills schedlab if the test fails half-way (std's Child does not on drop).
struct KillOnDrop(Option<Child>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn check_path(name: &str, args: &[&str], role: &str) {
    let _g = MACHINE.lock().unwrap_or_else(|p| p.into_inner());
    let out = tempfile::tempdir().unwrap();
    let mut root = KillOnDrop(Some(start(args, out.path())));
    let (pid, f, m) = inspect(root.0.as_mut().unwrap(), role);
    check_parent(root.0.as_ref().unwrap());
    let cmd = cmdline(pid);
    stop(root.0.take().unwrap());
    assert_eq!(f, vec![0, 1, 2], "{name}: child {pid} ({cmd}) holds other descriptors");
    assert_eq!(m.ignored, 0, "{name}: child {pid} ({cmd}) ignores signals {:#x}", m.ignored);
    assert_eq!(m.blocked, 0, "{name}: child {pid} ({cmd}) blocks signals {:#x}", m.blocked);
}

const LONG_CPU: &str = "3000000000";

#[test]
fn policy_benchmark_children() {
    if !schedlab_os::root_for_test("starting children of every kind") {
        return;
    }
    let args = ["policies", "run", "--policy", "other", "--procs", "2", "--workload", "cpu", "--iterations", LONG_CPU];
    check_path("policies", &[&args[..], &["--timeout", "60s"]].concat(), "schedlab-work cpu");
}

#[test]
fn wrr_tasks() {
    if !schedlab_os::root_for_test("starting children of every kind") {
        return;
    }
    let task = format!("1:{} workload cpu --iterations {LONG_CPU}", env!("CARGO_BIN_EXE_schedlab"));
    check_path("wrr run", &["wrr", "run", "--duration", "20s", "--task", &task], "workload cpu");
}

#[test]
fn taskman_loads_and_commands() {
    if !schedlab_os::root_for_test("starting children of every kind") {
        return;
    }
    // About 2 s per run: the load processes live through two runs.
    let bench = ["taskman", "bench", "--threads", "1", "--loads", "load1", "--reps", "1", "--passes", "100"];
    check_path("taskman load", &bench, "taskman load");
    check_path("taskman run", &["taskman", "run", "--timeout", "20s", "--", "sleep", "20"], "sleep 20");
}

#[test]
fn timer_trials() {
    if !schedlab_os::root_for_test("starting children of every kind") {
        return;
    }
    let args = ["timers", "reproduce", "--queues", "delta", "--trials", "1", "--tick-mode", "sleep"];
    check_path("timers trial", &args, "timers trial");
}
