//! `schedlab wrr` end to end: bad input is refused before anything starts, a short live run
//! prints the promised JSON, and killing the dispatcher (SIGKILL or SIGTERM) leaves no task
//! stopped, at an RT priority, or running at all. Live tests need root; CI runs as root, so
//! there they must run (a non-root CI fails loudly instead of passing unchecked).

mod common;

use common::trace_event;
use schedlab_os::procfs;
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_schedlab");
/// Live runs share the managed CPU: one at a time.
static LIVE: Mutex<()> = Mutex::new(());

fn live_ok() -> bool {
    schedlab_os::root_for_test("the live WRR host")
}

fn wrr(args: &[&str]) -> Output {
    Command::new(BIN).arg("wrr").args(args).output().expect("run schedlab")
}

fn crypt(weight: u32) -> String {
    format!("{weight}:{BIN} workload crypt --forever")
}

/// Processes whose command line contains `marker`.
fn running_with(marker: &str) -> Vec<i32> {
    let me = std::process::id() as i32;
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " ").contains(marker))
                .unwrap_or(false)
        })
        .filter(|&pid| procfs::stat(pid).map(|s| s.state) != Some('Z'))
        .collect()
}

/// The children of `parent` but its guardian (`schedlab restore --guard`, see docs/safety.md).
fn children_of(parent: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| procfs::stat(pid).map(|s| s.ppid) == Some(parent))
        .filter(|&pid| {
            !std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c.windows(7).any(|w| w == b"--guard"))
        })
        .collect()
}

fn assert_refused(args: &[&str], needle: &str, marker: &str) {
    let out = wrr(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} was accepted");
    assert!(err.contains(needle), "error for {args:?} does not name '{needle}': {err}");
    assert!(out.stdout.is_empty(), "nothing on stdout for a refused run");
    assert!(running_with(marker).is_empty(), "{args:?} left '{marker}' running");
}

#[test]
fn bad_input_is_refused_before_anything_starts() {
    let ok = "1:sleep 97531";
    assert_refused(&["run", "--task", ok, "--task", "0:sleep 97531"], "weight 0", "97531");
    assert_refused(&["run", "--task", ok, "--task", "21:sleep 97531"], "weight 21", "97531");
    assert_refused(&["run", "--task", ok, "--quantum", "0ms"], "0ms", "97531");
    assert_refused(&["run", "--duration", "1s"], "no tasks", "97531");
    assert_refused(&["run", "--task", ok, "--task", "2:no-such-command-97531"], "no-such-command-97531", "sleep 97531");
    assert_refused(&["run", "--task", ok, "--task", "x:sleep 1"], "'x'", "97531");
    let all = format!("0-{}", schedlab_os::affinity::online_cpus() - 1);
    assert_refused(&["run", "--task", ok, "--cpus", &all], "every CPU", "97531");
    assert_refused(&["run", "--task", ok, "--mechanism", "magic"], "magic", "97531");
    assert_refused(&["study", "--only", "wrr,bogus"], "bogus", "97531");
}

#[test]
fn help_teaches_units_and_examples() {
    let out = wrr(&["run", "--help"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in ["QUANTUM × WEIGHT", "10ms", "WEIGHT:CMD", "--allow-wide-weights", "Example", "PDEATHSIG"] {
        assert!(text.contains(needle), "--help lacks '{needle}'");
    }
}

#[test]
fn wide_weights_need_the_flag() {
    if !live_ok() {
        return;
    }
    let _g = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let out = wrr(&[
        "run",
        "--allow-wide-weights",
        "--duration",
        "200ms",
        "--exact-duration",
        "--quantum",
        "1ms",
        "--task",
        "30:sleep 5",
        "--json",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["results"]["tasks"][0]["weight"], 30);
}

/// One live run of weights 1 and 3 (10 ms quantum, 1.2 s): the promised JSON, and per-slice
/// checks that hold whatever the host does.
fn one_live_run(dir: &std::path::Path) -> serde_json::Value {
    let gantt = dir.join("g.svg");
    let timeline = dir.join("t.json");
    let (a, b) = (crypt(1), crypt(3));
    let out = wrr(&[
        "run",
        "--quantum",
        "10ms",
        "--duration",
        "1200ms",
        "--task",
        &a,
        "--task",
        &b,
        "--json",
        "--gantt",
        gantt.to_str().unwrap(),
        "--trace-out",
        timeline.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("exactly one JSON document on stdout");
    let tasks = doc["results"]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 2);
    for t in tasks {
        for k in ["weight", "cpu_s", "share", "expected_share", "share_error", "slices"] {
            assert!(t[k].is_number(), "task lacks {k}: {t}");
        }
        assert!(t["iterations"].as_u64().unwrap() > 0, "crypt reported no work: {t}");
    }
    assert_eq!(tasks[0]["slices"], tasks[1]["slices"], "the run ends on a round boundary");
    for k in ["p50", "p99", "max"] {
        assert!(doc["results"]["slice_error_ms"][k].is_number(), "slice_error_ms lacks {k}");
    }
    // A 1.2 s run measures under 60 slices, so its p99 is about its worst slice, and one hiccup of the
    // VM (CI saw a single 3.2 ms slice) sets it. The tail is measured by the 20 s runs in
    // docs/wrr.md; here the median shows slices end on time (a drifting or mis-sized slice is
    // off by milliseconds in most slices, not one).
    assert!(doc["results"]["slice_error_ms"]["p50"].as_f64().unwrap() < 1.0, "{}", doc["results"]["slice_error_ms"]);
    // Weights are tracked slice by slice: each task's median slice is its weight × 10 ms of CPU.
    let cols: Vec<&str> =
        doc["results"]["slices_columns"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    let col = |name: &str| cols.iter().position(|&c| c == name).unwrap_or_else(|| panic!("no {name} column"));
    let (task_c, cpu_c) = (col("task"), col("cpu_ms"));
    for (i, weight) in [(0u64, 1.0), (1, 3.0)] {
        let mut cpu: Vec<f64> = doc["results"]["slices"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r[task_c].as_u64() == Some(i))
            .skip(1) // the first slice holds exec and start-up
            .map(|r| r[cpu_c].as_f64().unwrap())
            .collect();
        cpu.sort_by(f64::total_cmp);
        assert!(cpu.len() >= 5, "task {i}: {} slices", cpu.len());
        let median = cpu[cpu.len() / 2];
        assert!((median / (10.0 * weight) - 1.0).abs() < 0.05, "task {i} (weight {weight}): median slice {median} ms");
    }
    assert!(doc["results"]["dispatcher_cpu_s"].as_f64().unwrap() > 0.0);
    assert!(std::fs::read_to_string(&gantt).unwrap().starts_with("<svg"));
    // The Perfetto timeline holds every slice twice (its CPU's track and its task's).
    let trace: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&timeline).unwrap()).unwrap();
    trace_event::check_format(&trace).unwrap();
    let spans = trace["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "X").count();
    assert_eq!(spans, 2 * doc["results"]["slices"].as_array().unwrap().len(), "a span per slice per track");
    assert!(running_with("workload crypt --forever").is_empty(), "tasks outlived the run");
    doc
}

/// The longest slice error of a run the host did not disturb: a stall of the dispatcher's CPU
/// (4–75 ms on CI's VM) lets the running task overrun its slice by that much, which moves a
/// 1.2 s run's shares by several percent while every per-slice check still holds.
const UNDISTURBED_MAX_ERROR_MS: f64 = 5.0;

#[test]
fn live_run_prints_the_promised_json_and_tracks_weights() {
    if !live_ok() {
        return;
    }
    let _g = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let mut disturbed = Vec::new();
    for _ in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        let doc = one_live_run(dir.path());
        let tasks = doc["results"]["tasks"].as_array().unwrap();
        let worst = tasks.iter().map(|t| t["share_error"].as_f64().unwrap().abs()).fold(0.0, f64::max);
        let max_error = doc["results"]["slice_error_ms"]["max"].as_f64().unwrap();
        if worst < 0.05 {
            return;
        }
        // Shares off in a run whose every slice ended on time: the dispatcher is wrong.
        assert!(max_error > UNDISTURBED_MAX_ERROR_MS, "share off by more than 5% in an undisturbed run: {tasks:?}");
        eprintln!("a host stall lengthened a slice by {max_error:.1} ms; shares {worst:.3} off: run again");
        disturbed.push((worst, max_error));
    }
    // Each run's per-slice checks held (one_live_run); the aggregate share could not be judged
    // on a host that stalled every run. Said, not hidden.
    eprintln!(
        "NOT JUDGED: the 1.2 s share, three runs in a row disturbed by host stalls (share error, longest slice \
         error ms): {disturbed:?}"
    );
}

/// Start a long run, wait until its tasks exist, then send `sig` to the dispatcher; no task may
/// remain stopped, at an RT priority, or alive.
fn kill_dispatcher(mechanism: &str, sig: i32) {
    let _g = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let tasks = [crypt(1), crypt(2), crypt(5)];
    let mut child = Command::new(BIN)
        .args(["wrr", "run", "--duration", "60s", "--mechanism", mechanism, "--json", "--out"])
        .arg(dir.path())
        .args(tasks.iter().flat_map(|t| ["--task", t.as_str()]))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let start = Instant::now();
    let mut kids = Vec::new();
    while start.elapsed() < Duration::from_secs(10) {
        kids = children_of(pid);
        if kids.len() == 3 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(kids.len(), 3, "the dispatcher did not start its three tasks");
    std::thread::sleep(Duration::from_millis(400)); // let a few slices pass, so some are stopped/demoted
    if mechanism == "signal" {
        assert!(
            kids.iter().any(|&k| procfs::stat(k).map(|s| s.state) == Some('T')),
            "signal mode should hold waiting tasks stopped"
        );
    }
    schedlab_os::process::send_signal(pid, sig).unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success());
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left: Vec<(i32, Option<char>)> = kids
            .iter()
            .map(|&k| (k, procfs::stat(k).map(|s| s.state)))
            .filter(|(_, s)| !matches!(s, None | Some('Z')))
            .collect();
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "tasks survived the dispatcher's {sig}: {left:?}");
        for (k, s) in &left {
            assert_ne!(*s, Some('T'), "task {k} left stopped");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sigkill_of_the_dispatcher_leaves_no_task_stopped_prio() {
    if live_ok() {
        kill_dispatcher("prio", libc_sig::SIGKILL);
    }
}

#[test]
fn sigkill_of_the_dispatcher_leaves_no_task_stopped_signal() {
    if live_ok() {
        kill_dispatcher("signal", libc_sig::SIGKILL);
    }
}

#[test]
fn sigterm_ends_the_run_cleanly() {
    if live_ok() {
        kill_dispatcher("signal", libc_sig::SIGTERM);
    }
}

/// Signal numbers (Linux, all architectures schedlab supports).
mod libc_sig {
    pub const SIGKILL: i32 = 9;
    pub const SIGTERM: i32 = 15;
}
