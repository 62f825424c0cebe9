//! The kill matrix: every live command, killed with SIGKILL during set-up and mid-run, leaves
//! the machine as it found it — no process of it left, no IRQ mask, cgroup, trace instance,
//! autogroup setting or scheduling policy of another process changed, RT throttling on — by
//! each of the three nets:
//!
//! - `restore`: the run and its guardian are killed, then `schedlab restore` heals;
//! - `next`: the run and its guardian are killed, then the next live command heals before it
//!   starts (its stderr says so);
//! - `guardian`: only the run is killed; its guardian heals on its own.
//!
//! A run's processes are found by a token in their environment (children inherit it), so a
//! child reparented to init is still seen. Needs root and tracefs; fails in CI without them.

use schedlab_os::procfs;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_schedlab");
const LONG_CPU: &str = "3000000000";
/// Kill moments: during set-up, and mid-run (then also once its changes are journaled).
const SETUP: Duration = Duration::from_millis(150);
const MID: Duration = Duration::from_millis(1500);

/// What a live run could leave changed.
#[derive(Debug, PartialEq, Eq)]
struct Machine {
    irq_masks: BTreeMap<String, String>,
    cgroups: BTreeSet<PathBuf>,
    trace_instances: BTreeSet<String>,
    rt_throttling: String,
    autogroup: String,
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).map(|s| s.trim().to_string()).unwrap_or_default()
}

fn dirs(path: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(path) else { return Vec::new() };
    rd.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()).collect()
}

fn snapshot() -> Machine {
    let irq_masks = dirs(Path::new("/proc/irq"))
        .into_iter()
        .map(|d| (d.display().to_string(), read(&d.join("smp_affinity"))))
        .collect();
    // Every cgroup directory schedlab could create (it names them schedlab-*), two levels deep.
    let mut cgroups = BTreeSet::new();
    for root in ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"] {
        for d in dirs(Path::new(root)) {
            cgroups.extend(dirs(&d));
            cgroups.insert(d);
        }
    }
    let trace_instances = dirs(Path::new("/sys/kernel/tracing/instances"))
        .into_iter()
        .map(|d| d.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    Machine {
        irq_masks,
        cgroups,
        trace_instances,
        rt_throttling: read(Path::new("/proc/sys/kernel/sched_rt_runtime_us")),
        autogroup: read(Path::new("/proc/sys/kernel/sched_autogroup_enabled")),
    }
}

fn all_pids() -> Vec<i32> {
    std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect()
}

/// Scheduling policy (field 41 of stat) of every user process, by (pid, start time).
fn policies() -> BTreeMap<(i32, u64), String> {
    all_pids()
        .into_iter()
        .filter_map(|pid| {
            let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let s = procfs::parse_stat(&text)?;
            let rest = &text[text.rfind(')')? + 1..];
            let policy = rest.split_whitespace().nth(38)?.to_string();
            (s.ppid != 2 && pid != 2).then_some(((pid, s.start_ticks), policy))
        })
        .collect()
}

/// Live (non-zombie) processes carrying `token` in their environment, with their command lines.
fn marked(token: &str) -> Vec<(i32, String)> {
    let needle = format!("SCHEDLAB_KILL_MATRIX={token}");
    all_pids()
        .into_iter()
        .filter(|&pid| procfs::stat(pid).is_some_and(|s| s.state != 'Z'))
        .filter(|&pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|b| b.split(|&c| c == 0).any(|kv| kv == needle.as_bytes()))
        })
        .map(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            (pid, String::from_utf8_lossy(&cmd).replace('\0', " "))
        })
        .collect()
}

fn schedlab(args: &[&str]) -> Output {
    Command::new(BIN).args(args).stdin(Stdio::null()).output().expect("run schedlab")
}

#[derive(Clone, Copy, Debug)]
enum Net {
    Restore,
    Next,
    Guardian,
}

struct Case {
    name: &'static str,
    args: Vec<String>,
    /// Whether it has changes journaled mid-run (livelock's threads and sockets end with it).
    changes: bool,
}

fn case(name: &'static str, args: &[&str]) -> Case {
    Case { name, args: args.iter().map(|s| s.to_string()).collect(), changes: true }
}

fn cases(out: &Path) -> Vec<Case> {
    let o = out.to_str().unwrap();
    let task = |w: u32| format!("{w}:{BIN} workload cpu --iterations {LONG_CPU}");
    let policies = |policy: &str, extra: &[&str]| {
        let mut a = vec!["policies", "run", "--procs", "20", "--workload", "cpu", "--iterations", LONG_CPU];
        a.extend(["--timeout", "60s", "--out", o, "--policy", policy]);
        a.extend(extra);
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let (t1, t2) = (task(1), task(2));
    vec![
        Case { name: "policies fifo", args: policies("fifo", &[]), changes: true },
        Case { name: "policies deadline", args: policies("deadline", &[]), changes: true },
        Case { name: "policies --trace", args: policies("other", &["--trace"]), changes: true },
        // A shell's background grandchild is beyond PR_SET_PDEATHSIG's reach.
        case("taskman run", &["taskman", "run", "--timeout", "60s", "--", "sh", "-c", "sleep 300 & sleep 300"]),
        // Its changes (IRQ masks, then the load processes) are pending from about 0.5 s until
        // its measured runs end; enough passes keep that well past the mid-run kill.
        case(
            "taskman bench",
            &["taskman", "bench", "--threads", "1", "--loads", "load1", "--reps", "1", "--passes", "1000", "--out", o],
        ),
        case("wrr run prio", &["wrr", "run", "--duration", "60s", "--mechanism", "prio", "--task", &t1, "--task", &t2]),
        case(
            "wrr run signal",
            &["wrr", "run", "--duration", "60s", "--mechanism", "signal", "--task", &t1, "--task", &t2],
        ),
        case("wrr study cgroup", &["wrr", "study", "--quick", "--only", "cgroup", "--out", o]),
        case(
            "timers reproduce",
            &[
                "timers",
                "reproduce",
                "--queues",
                "delta",
                "--trials",
                "1",
                "--tick-mode",
                "sleep",
                "--rt-priority",
                "10",
            ],
        ),
        // Autogroup goes off before its probes start, with a trace instance and the probes' tasks.
        case("validate", &["validate", "--cases", "nice-hogs", "--repeats", "1", "--for", "5s", "--out", o]),
        Case { changes: false, ..case("livelock live", &["livelock", "live", "--maxtime", "60s", "--out", o]) },
    ]
}

/// Kills the run if the test fails half-way (std's Child does not on drop).
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let t0 = Instant::now();
    while !done() {
        if t0.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

fn kill_and_check(c: &Case, at: Duration, net: Net, out: &Path) {
    let what = format!("{} killed after {at:?}, healed by {net:?}", c.name);
    // A fresh random token per run (the kernel's UUID generator).
    let token = read(Path::new("/proc/sys/kernel/random/uuid"));
    let before = snapshot();
    let policies_before = policies();
    // Its stderr is kept: a run that ends before it is killed says why there.
    let err_path = out.join(format!("stderr-{}.txt", token.trim()));
    let child = Command::new(BIN)
        .args(&c.args)
        .env("SCHEDLAB_KILL_MATRIX", &token)
        .current_dir(out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let mut run = KillOnDrop(child);
    let pid = run.0.id() as i32;
    std::thread::sleep(at);
    let mid_run = c.changes && at == MID;
    if mid_run {
        // "Mid-run" is once its changes are journaled; how long set-up takes varies with the
        // machine's load, so a late set-up is waited for rather than killed early.
        wait_until(Duration::from_secs(15), || journal_of(pid).is_some_and(|j| pending_changes(&j) > 0));
    }
    if let Some(status) = run.0.try_wait().unwrap() {
        let err = std::fs::read_to_string(&err_path).unwrap_or_default();
        let lines: Vec<&str> = err.lines().collect();
        let tail = &lines[lines.len().saturating_sub(8)..];
        panic!("{what}: the run ended ({status}) before it was killed; it said: {tail:?}");
    }
    if !matches!(net, Net::Guardian) {
        for (g, _) in marked(&token).into_iter().filter(|(_, cmd)| cmd.contains("--guard")) {
            let _ = Command::new("kill").args(["-KILL", &g.to_string()]).status();
        }
    }
    // Read just before the kill: a guardian heals (and removes the journal) right after it.
    let journal = journal_of(pid);
    let pending = journal.as_ref().map_or(0, |j| pending_changes(j));
    let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    run.0.wait().unwrap();
    eprintln!("{what}: {pending} change(s) pending in its journal");
    if mid_run {
        assert!(pending > 0, "{what}: nothing journaled mid-run, so nothing here tests healing");
    }
    match net {
        Net::Restore => {
            let o = schedlab(&["restore"]);
            assert!(o.status.success(), "{what}: restore failed: {}", String::from_utf8_lossy(&o.stderr));
        }
        Net::Next => {
            let o = schedlab(&["taskman", "run", "--timeout", "10s", "--", "true"]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(o.status.success(), "{what}: the next live command failed: {err}");
            if pending > 0 {
                assert!(err.contains("undid what"), "{what}: {pending} changes pending, the next command said: {err}");
            }
        }
        Net::Guardian => {}
    }
    if let Some(j) = &journal {
        let healed = wait_until(Duration::from_secs(20), || !j.exists());
        assert!(healed, "{what}: its journal {} stays", j.display());
    }
    let gone = wait_until(Duration::from_secs(20), || marked(&token).is_empty());
    assert!(gone, "{what}: processes left: {:?}", marked(&token));
    // Trace instances and cgroups are removed by the same heal; give the kernel a moment.
    wait_until(Duration::from_secs(5), || snapshot() == before);
    let after = snapshot();
    assert_eq!(after.rt_throttling, before.rt_throttling, "{what}: RT throttling changed");
    assert_ne!(after.rt_throttling, "-1", "{what}: RT throttling is off");
    assert_eq!(after.trace_instances, before.trace_instances, "{what}: trace instances differ");
    assert_eq!(after.cgroups, before.cgroups, "{what}: cgroups differ");
    assert_eq!(after.irq_masks, before.irq_masks, "{what}: IRQ masks differ");
    let policies_after = policies();
    for (key, policy) in &policies_before {
        if let Some(now) = policies_after.get(key) {
            assert_eq!(now, policy, "{what}: process {} changed policy", key.0);
        }
    }
}

/// The journal file of run `pid`, if it wrote one.
fn journal_of(pid: i32) -> Option<PathBuf> {
    let rd = std::fs::read_dir("/run/schedlab/journal").ok()?;
    rd.flatten().map(|e| e.path()).find(|p| p.file_name().unwrap().to_string_lossy().starts_with(&format!("{pid}.")))
}

/// Changes recorded and not marked undone in a journal file.
fn pending_changes(path: &Path) -> usize {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let made = text.lines().filter(|l| l.contains("\"change\"")).count();
    let undone = text.lines().filter(|l| l.contains("\"undone\"")).count();
    made.saturating_sub(undone)
}

#[test]
fn every_live_command_killed_with_sigkill_leaves_the_machine_as_found() {
    if !schedlab_os::root_for_test("the kill matrix") {
        return;
    }
    let tracefs = Path::new("/sys/kernel/tracing/instances").is_dir();
    if !schedlab_os::test_gate::require("the kill matrix", tracefs, "needs tracefs mounted") {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    // Start from a healed machine: what an earlier, unrelated run left is not this test's.
    assert!(schedlab(&["restore"]).status.success());
    for c in cases(out.path()) {
        for at in [SETUP, MID] {
            kill_and_check(&c, at, Net::Restore, out.path());
            kill_and_check(&c, at, Net::Next, out.path());
        }
        kill_and_check(&c, MID, Net::Guardian, out.path());
    }
}
