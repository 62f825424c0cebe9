//! `schedlab trace` live: a generated workload run for real under `trace record --workload`
//! and imported back gives the same tasks with the same CPU totals (within 2%, plus what lost
//! switches and the hypervisor's steal leave unknown, which the import and the recording
//! measure); and the private tracefs instance a recording makes is gone after SIGINT and
//! SIGTERM, and after SIGKILL the next recording removes it; `validate` on a two-CPU case sets
//! the kernel's load-tracking signals of each task beside the `linux` model's, and one killed
//! mid-suite keeps the runs it recorded, replayable. Needs root and
//! tracefs (and two CPUs for the last); fails in CI without them.

mod common;

use common::trace_event;
use serde_json::Value;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

static MACHINE: Mutex<()> = Mutex::new(());

const INSTANCES: &str = "/sys/kernel/tracing/instances";

fn schedlab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
}

fn ok(out: Output, what: &str) -> String {
    assert!(out.status.success(), "{what} failed: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// The one run directory under `<out>/<experiment>/`.
fn run_dir(out: &Path, experiment: &str) -> PathBuf {
    let dirs: Vec<PathBuf> =
        std::fs::read_dir(out.join(experiment)).expect("run directories").map(|e| e.unwrap().path()).collect();
    assert_eq!(dirs.len(), 1, "one run of {experiment}: {dirs:?}");
    dirs[0].clone()
}

fn live_ready(what: &str) -> bool {
    if !schedlab_os::root_for_test(what) {
        return false;
    }
    if !Path::new(INSTANCES).is_dir() {
        // The recorder mounts tracefs itself; a machine without it cannot run these tests.
        let _ = Command::new("mount").args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"]).status();
    }
    assert!(Path::new(INSTANCES).is_dir(), "{what} needs tracefs at /sys/kernel/tracing");
    true
}

/// Run `cmd` with `--out out` after its arguments, require success and read its stdout as JSON.
fn json_of(cmd: &mut Command, out: &Path, what: &str) -> Value {
    let stdout = ok(cmd.arg("--out").arg(out).output().unwrap(), what);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{what}: not JSON: {e}"))
}

/// The machine to this test alone and a scratch directory, when the live tests can run here
/// (otherwise the test is skipped, or fails on CI).
fn live_setup(what: &str) -> Option<(MutexGuard<'static, ()>, tempfile::TempDir)> {
    if !live_ready(what) {
        return None;
    }
    Some((MACHINE.lock().unwrap_or_else(|e| e.into_inner()), tempfile::tempdir().unwrap()))
}

#[test]
fn a_generated_workload_goes_live_and_comes_back_with_its_cpu_totals() {
    let Some((_machine, dir)) = live_setup("recording a live workload") else { return };
    let w = dir.path().join("w.json");
    ok(
        schedlab()
            .args([
                "sim",
                "run",
                "--generate",
                "poisson:n=4,rate=20,mean=40ms,bursts=3,io=10ms,seed=7",
                "--policy",
                "fcfs",
            ])
            .arg("--save-workload")
            .arg(&w)
            .arg("--out")
            .arg(dir.path())
            .output()
            .unwrap(),
        "sim run --generate",
    );
    let original: Value = serde_json::from_str(&std::fs::read_to_string(&w).unwrap()).unwrap();
    let doc = json_of(
        schedlab()
            // CPU 0: some VMs (this project's CI host among them) lose switches out of idle, all
            // of CPU 1's and a few of CPU 0's; a run without its switch-in counts from its wake-up.
            .args(["trace", "record", "--cpus", "0", "--for", "20s", "--json", "--workload"])
            .arg(&w),
        dir.path(),
        "trace record --workload",
    );
    let pids: Vec<String> =
        doc["results"]["tasks"].as_array().unwrap().iter().map(|t| t["pid"].as_i64().unwrap().to_string()).collect();
    let rec = run_dir(dir.path(), "trace-record");
    let back = dir.path().join("back.json");
    let report = json_of(
        schedlab()
            .args(["trace", "import", "--start-at-exec", "--json"])
            .arg(rec.join("trace.txt"))
            .arg("--meta")
            .arg(rec.join("meta.json"))
            .arg("--pid")
            .arg(pids.join(","))
            .arg("--workload-out")
            .arg(&back)
            .arg("--trace-out")
            .arg(dir.path().join("back.trace.json")),
        dir.path(),
        "trace import",
    );
    // This VM loses some sched_switch events (every switch out of idle on CPU 1, the switches
    // out of some host tasks on CPU 0); the importer repairs such a run over the window the lost
    // switch lies in and says how wide it is: each task's CPU time is known to ± that.
    let uncertain_ms: Vec<f64> = report["results"]["report"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["cpu_uncertain_ns"].as_f64().unwrap() / 1e6)
        .collect();
    // Time the hypervisor took from CPU 0 is in the trace's runs but not in the tasks' CPU
    // clocks; /proc/stat counts it in ticks, so any steal leaves up to one more tick unknown.
    let meta: Value = serde_json::from_str(&std::fs::read_to_string(rec.join("meta.json")).unwrap()).unwrap();
    let steal_ms = meta["steal_ns"][0].as_f64().expect("the recording measures steal") / 1e6;
    let steal_ms = if steal_ms > 0.0 { steal_ms + meta["steal_resolution_ns"].as_f64().unwrap() / 1e6 } else { 0.0 };
    let imported: Value = serde_json::from_str(&std::fs::read_to_string(&back).unwrap()).unwrap();
    // The timeline for Perfetto: valid Trace Event JSON, a track for every imported task that
    // holds at least the CPU time its workload got back.
    let timeline: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("back.trace.json")).unwrap()).unwrap();
    trace_event::check_format(&timeline).unwrap();
    let events = timeline["traceEvents"].as_array().unwrap();
    for (pid, task) in pids.iter().zip(imported["tasks"].as_array().unwrap()) {
        let track = events
            .iter()
            .find(|e| e["name"] == "thread_name" && e["args"]["name"].as_str().unwrap().ends_with(&format!(" {pid}")))
            .unwrap_or_else(|| panic!("no track for pid {pid}"))["tid"]
            .clone();
        let ran_ms: f64 = events
            .iter()
            .filter(|e| e["ph"] == "X" && e["tid"] == track && e["cat"] == "run")
            .map(|e| e["dur"].as_f64().unwrap() / 1e3)
            .sum();
        let got: f64 = task["bursts"].as_array().unwrap().iter().step_by(2).map(|x| x.as_f64().unwrap()).sum();
        assert!(ran_ms >= got - 0.01, "pid {pid}: its track ran {ran_ms:.3} ms, the workload got {got:.3} ms");
    }
    let (a, b) = (original["tasks"].as_array().unwrap(), imported["tasks"].as_array().unwrap());
    assert_eq!(a.len(), b.len(), "the same tasks come back");
    let cpu =
        |t: &Value| -> f64 { t["bursts"].as_array().unwrap().iter().step_by(2).map(|x| x.as_f64().unwrap()).sum() };
    let bursts = |t: &Value| t["bursts"].as_array().unwrap().len();
    let (sent, unknown): (f64, f64) = (a.iter().map(cpu).sum(), uncertain_ms.iter().sum());
    assert!(unknown <= 0.1 * sent, "the trace lost too many switches: ± {unknown:.3} ms of {sent:.3} ms of CPU");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let (want, got) = (cpu(x), cpu(y));
        // The last burst also holds the task's exit (tearing down its address space: 0.5–0.7 ms
        // here), and each burst its return from the wake-up or the pre-emption.
        let slack = 0.02 * want + 1.0;
        let unknown = uncertain_ms[i];
        let what = format!(
            "task {i}: {want:.3} ms of CPU went out, {got:.3} ms came back (± {unknown:.3} ms for lost switches, \
             {steal_ms:.0} ms stolen from the CPU)"
        );
        eprintln!("{what}");
        assert!(got - want <= slack + unknown + steal_ms && want - got <= slack + unknown, "{what}");
        // A wait inside the kernel (a `D` block: reclaim, a lock, the exit path) splits a burst;
        // the import keeps it and says so. Every other block is one of the workload's sleeps.
        let notes: Vec<&Value> = report["results"]["report"]["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n["pid"].as_i64().map(|p| p.to_string()).as_deref() == Some(pids[i].as_str()))
            .collect();
        let kernel_waits = notes.iter().filter(|n| n["kind"] == "kernel_wait").count();
        assert_eq!(
            bursts(x) + 2 * kernel_waits,
            bursts(y),
            "task {i}: its CPU bursts and blocked times come back one for one ({kernel_waits} waits in the kernel); \
             the import's notes on it: {notes:?}"
        );
    }
}

/// Start `trace record` of an endless hog, wait for its instance and the hog, and return them.
fn start_recording(out: &Path) -> (Child, PathBuf, i32) {
    let exe = env!("CARGO_BIN_EXE_schedlab");
    let mut c = schedlab()
        .args(["trace", "record", "--cpus", "0", "--for", "120s", "--out"])
        .arg(out)
        .args(["--", exe, "workload", "bursts", "--ms", "inf"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let instance = Path::new(INSTANCES).join(format!("schedlab-trace-{}", c.id()));
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(c.try_wait().unwrap().is_none(), "trace record ended early");
        let hog = schedlab_os::procfs::descendants(c.id() as i32).into_iter().next();
        if let (true, Some(hog)) = (instance.is_dir(), hog) {
            return (c, instance, hog);
        }
        assert!(Instant::now() < deadline, "no instance {} and hog after 60 s", instance.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_gone(pid: i32) -> bool {
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end {
        if schedlab_os::procfs::stat(pid).is_none_or(|s| s.state == 'Z') {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn the_tracefs_instance_goes_away_on_every_exit_path() {
    let Some((_machine, dir)) = live_setup("recording under signals") else { return };
    for (sig, number) in [("-INT", 2), ("-TERM", 15)] {
        let (mut c, instance, hog) = start_recording(dir.path());
        std::thread::sleep(Duration::from_millis(300));
        Command::new("kill").args([sig, &c.id().to_string()]).status().unwrap();
        let status = c.wait().unwrap();
        // A stopped command ends the way the signal would have ended it.
        assert_eq!(status.signal(), Some(number), "kill {sig}: exit status {status}");
        assert!(!instance.exists(), "kill {sig}: {} is still there", instance.display());
        assert!(wait_gone(hog), "kill {sig}: the recorded program {hog} outlived the recording");
    }
    let (mut c, instance, hog) = start_recording(dir.path());
    c.kill().unwrap();
    c.wait().unwrap();
    assert!(
        instance.is_dir(),
        "after SIGKILL nothing could remove {} (else this test shows nothing)",
        instance.display()
    );
    assert!(wait_gone(hog), "the recorded program {hog} outlived a SIGKILLed recording");
    ok(
        schedlab()
            .args(["trace", "record", "--for", "1s", "--out"])
            .arg(dir.path())
            .args(["--", "true"])
            .output()
            .unwrap(),
        "the next recording",
    );
    assert!(!instance.exists(), "the next recording did not remove {}", instance.display());
}

#[test]
fn validate_sets_the_kernels_load_tracking_beside_the_models() {
    let two = schedlab_os::affinity::online_cpus() >= 2;
    if !schedlab_os::test_gate::require("validating a two-CPU case", two, "needs two CPUs") {
        return;
    }
    let Some((_machine, dir)) = live_setup("validating a two-CPU case") else { return };
    let autogroup = || std::fs::read_to_string(schedlab_os::autogroup::SETTING).unwrap_or_default();
    let before = autogroup();
    let doc = json_of(
        schedlab().args([
            "validate",
            "--cases",
            "sleepers-vs-hogs-2cpu",
            "--repeats",
            "1",
            "--for",
            "2s",
            "--draws",
            "3",
            "--json",
        ]),
        dir.path(),
        "validate",
    );
    // Autogroup was off while the cases ran (the models have no task groups) and is back as found.
    assert_eq!(autogroup(), before);
    let said = doc["parameters"]["autogroup"].as_str().expect("the autogroup setting is in the parameters");
    assert!(said.starts_with(if before.trim() == "1" { "autogroup turned off" } else { "autogroup off" }), "{said}");
    let runs = doc["results"]["runs"].as_array().expect("runs");
    let models = runs[0]["models"].as_array().expect("models");
    let linux = models.iter().find(|m| m["label"] == "linux").expect("the linux model");
    let signals = linux["signals"].as_array().expect("the linux replay keeps its signals on two CPUs");
    let by_name = |n: &str| signals.iter().find(|s| s["name"] == n).unwrap_or_else(|| panic!("{n} in {signals:?}"));
    for s in signals {
        // About 1.8 s of window read every 50 ms.
        assert!(s["samples"].as_u64().unwrap() >= 20, "{s}");
    }
    // A nice-0 hog is always runnable: the kernel's load and the model's both near 1024.
    for hog in ["hog-a", "hog-b"] {
        let s = by_name(hog);
        for side in ["live", "model"] {
            let load = s[side]["load"].as_f64().unwrap();
            assert!((950.0..=1024.0).contains(&load), "{hog} {side} load {load}");
        }
    }
    // A sleeper that runs 1 or 2 ms in 5 or 10 has a fraction of that, in both.
    for sleeper in ["sleep-2/8", "sleep-1/4"] {
        let s = by_name(sleeper);
        for side in ["live", "model"] {
            let (load, util) = (s[side]["load"].as_f64().unwrap(), s[side]["util"].as_f64().unwrap());
            assert!(load > 100.0 && load < 800.0 && util > 50.0 && util < 400.0, "{sleeper} {side}: {s}");
        }
    }
    // Only the linux replay keeps them.
    assert!(models.iter().filter(|m| m["label"] != "linux").all(|m| m.get("signals").is_none()));
    // Each model replayed the run three times, with three draws of the wake-up delays; the one
    // judged is one of them, and every judged metric counts the draws within the goal.
    assert_eq!(doc["parameters"]["draws"], 3);
    for m in models {
        assert!(m["draw"].as_u64().is_some_and(|d| d < 3), "{}: draw {}", m["label"], m["draw"]);
    }
    assert!(linux["draws_with_live_layout"].as_u64().is_some_and(|n| n <= 3), "{}", linux["draws_with_live_layout"]);
    let judgements = doc["results"]["judgements"].as_array().expect("judgements");
    let counts: Vec<&Value> = judgements
        .iter()
        .flat_map(|j| j["tasks"].as_array().unwrap())
        .flat_map(|t| ["share", "switches_per_s"].map(|k| &t[k]["draws_within"]))
        .collect();
    assert!(!counts.is_empty());
    for c in counts {
        let c = c.as_array().expect("draws_within");
        assert_eq!(c.len(), 1, "one judged repeat: {c:?}");
        assert!(c[0][1] == 3 && c[0][0].as_u64().unwrap() <= 3, "{c:?}");
    }
    // A probe ran just before the run, shown per run; the replays drew from it pooled with the
    // probe before the cases.
    let probes = doc["parameters"]["wake_probes_per_run"].as_array().expect("the per-run probes");
    assert_eq!(
        (probes.len(), probes[0]["case"].as_str(), probes[0]["repeat"].as_u64()),
        (1, Some("sleepers-vs-hogs-2cpu"), Some(0))
    );
    // Every replay drew from the probe before the cases and this one, pooled: each kind's pooled
    // median lies between the two spreads' middle values (the 8th and 9th of 16).
    let (before, pooled) = (&doc["parameters"]["wake_probe"], &doc["parameters"]["wake_delays_pooled"]);
    let middle = |spread: &Value, i: usize| spread["values"][i].as_u64().or_else(|| spread.as_u64()).unwrap();
    for kind in ["idle", "preempt", "preempt_rt", "task_preempt", "remote_idle", "remote_preempt"] {
        let p50 = probes[0]["probe"][kind]["p50_ns"].as_u64().unwrap_or(0);
        assert!(p50 > 0 && p50 < 1_000_000, "{kind}: {}", probes[0]["probe"][kind]);
        let spreads = [&before[kind]["spread"], &probes[0]["probe"][kind]["spread"]];
        let low = spreads.iter().map(|s| middle(s, 7)).min().unwrap();
        let high = spreads.iter().map(|s| middle(s, 8)).max().unwrap();
        let median = pooled[kind]["median"].as_u64().or_else(|| pooled[kind].as_u64()).unwrap();
        assert!((low..=high).contains(&median), "{kind}: pooled {median} from {spreads:?}");
    }
    // The run is kept whole: replayed from its directory, without root or a live run, it is
    // judged exactly as it was (the trace, the readings, the probes' delays all came back).
    let run = run_dir(dir.path(), "validate");
    let kept = std::fs::read_dir(run.join("recordings")).expect("recordings").count();
    assert_eq!(kept, 2, "one recording and the setup");
    let again: Value = serde_json::from_str(&ok(
        schedlab().args(["validate", "--json", "--no-save", "--replay"]).arg(&run).output().unwrap(),
        "validate --replay",
    ))
    .unwrap();
    assert_eq!(again["results"]["judgements"], doc["results"]["judgements"]);
    assert_eq!(again["results"]["runs"], doc["results"]["runs"]);
    assert_eq!(again["parameters"]["replayed_from"], run.display().to_string());
}

#[test]
fn a_recording_keeps_the_kernels_count_of_each_threads_cpu_time() {
    let Some((_machine, dir)) = live_setup("recording a hog") else { return };
    let doc: Value = serde_json::from_str(&ok(
        schedlab()
            .args(["trace", "record", "--cpus", "1", "--for", "1s", "--json", "--out"])
            .arg(dir.path())
            .args(["--", "sh", "-c", "while :; do :; done"])
            .output()
            .unwrap(),
        "trace record",
    ))
    .unwrap();
    let root = doc["results"]["root_pid"].as_i64().unwrap();
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir(dir.path(), "trace-record").join("meta.json")).unwrap())
            .unwrap();
    // The hog ran until the time limit: the kernel's count (schedstat at both ends of the
    // recording) is most of the window, and the trace's runs, imported, agree with it.
    let window = &meta["cpu_times"]["window"];
    let window_ms = (window[1].as_f64().unwrap() - window[0].as_f64().unwrap()) / 1e6;
    let kernel_ms = meta["cpu_times"]["ns"][root.to_string()].as_f64().expect("the hog's CPU time") / 1e6;
    assert!(kernel_ms > 0.8 * window_ms && kernel_ms <= window_ms, "{kernel_ms:.1} ms of a {window_ms:.1} ms window");
    let rec = run_dir(dir.path(), "trace-record");
    let report = json_of(
        schedlab()
            .args(["trace", "import", "--json", "--pid", &root.to_string(), "--meta"])
            .arg(rec.join("meta.json"))
            .arg(rec.join("trace.txt")),
        dir.path(),
        "trace import",
    );
    let traced_ms = report["results"]["report"]["tasks"][0]["cpu_ns"].as_f64().unwrap() / 1e6;
    assert!(
        (kernel_ms - traced_ms).abs() <= 0.05 * kernel_ms + 10.0,
        "kernel {kernel_ms:.1} ms, trace {traced_ms:.1} ms"
    );
}

/// A validate run SIGKILLed after its first case keeps that case's recording (written as soon as
/// the run was over, under `<out>/validate/unfinished-…`), which `validate --replay` judges;
/// `schedlab restore` then puts back what the dead run changed (autogroup).
#[test]
fn a_validate_killed_mid_suite_keeps_what_it_recorded() {
    let Some((_machine, dir)) = live_setup("killing a validate run") else { return };
    let autogroup = || std::fs::read_to_string(schedlab_os::autogroup::SETTING).unwrap_or_default();
    let before = autogroup();
    let mut c = schedlab()
        .args(["validate", "--cases", "nice-hogs,rr-pair", "--repeats", "2", "--for", "1s", "--draws", "1", "--out"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let recordings = |d: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(d).map_or_else(|_| Vec::new(), |r| r.map(|e| e.unwrap().path()).collect())
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    let unfinished = loop {
        let found = recordings(&dir.path().join("validate"))
            .into_iter()
            .find(|d| recordings(&d.join("recordings")).iter().any(|f| f.to_string_lossy().ends_with(".json.gz")));
        if let Some(d) = found {
            break d;
        }
        assert!(Instant::now() < deadline, "no recording written within 120 s");
        assert!(c.try_wait().unwrap().is_none(), "validate ended before it recorded a run");
        std::thread::sleep(Duration::from_millis(100));
    };
    c.kill().unwrap();
    c.wait().unwrap();
    let name = unfinished.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("unfinished-"), "{name}");
    let files: Vec<String> = recordings(&unfinished.join("recordings"))
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(files.contains(&"setup.json".to_string()), "{files:?}");
    assert!(files.contains(&"nice-hogs-1.json.gz".to_string()), "{files:?}");
    assert!(files.iter().all(|f| !f.ends_with(".partial")), "a half-written file: {files:?}");
    let doc: Value = serde_json::from_str(&ok(
        schedlab().args(["validate", "--json", "--no-save", "--replay"]).arg(&unfinished).output().unwrap(),
        "validate --replay of the killed run",
    ))
    .unwrap();
    let judged = doc["results"]["judgements"].as_array().expect("judgements");
    assert!(judged.iter().any(|j| j["case"] == "nice-hogs" && j["model"] == "linux"), "{judged:?}");
    // The dead run's guardian heals it as the run dies; `restore` heals whatever it has not yet.
    ok(schedlab().arg("restore").output().unwrap(), "schedlab restore");
    let deadline = Instant::now() + Duration::from_secs(10);
    while autogroup() != before && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(autogroup(), before, "autogroup put back after the killed run");
}
