//! `schedlab taskman` end to end: the machine is left as found (every IRQ mask, no RT task left
//! behind) after a normal run, SIGINT, SIGTERM, a panic inside a task and — with
//! `taskman restore` (or the run's guardian) — SIGKILL; bad input is rejected before anything changes; the benchmark
//! prints one JSON document with a `runs` array.
//!
//! These tests change real IRQ masks and start SCHED_FIFO workers, so they need root. Without
//! root they fail in CI (`CI=true`) and are skipped (with a message) on a developer's machine.
//! They run one at a time (IRQ steering is machine-wide).

use serde_json::Value;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static MACHINE: Mutex<()> = Mutex::new(());
const JOURNAL_DIR: &str = "/run/schedlab/journal";

/// Whether any run's journal holds IRQ masks not yet written back.
fn irq_masks_journaled() -> bool {
    let Ok(rd) = std::fs::read_dir(JOURNAL_DIR) else { return false };
    rd.flatten().any(|f| {
        let text = std::fs::read_to_string(f.path()).unwrap_or_default();
        let lines: Vec<Value> = text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let undone: Vec<&Value> = lines.iter().filter_map(|l| l.get("undone")).collect();
        lines.iter().filter(|l| l["change"]["kind"] == "irq_masks").any(|l| !undone.contains(&&l["id"]))
    })
}

/// The guardian of run `pid` (`schedlab restore --guard`), if it has one.
fn guardian_of(pid: u32) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let p: u32 = e.file_name().to_str()?.parse().ok()?;
        let stat = schedlab_os::procfs::stat(p as i32)?;
        let cmd = std::fs::read_to_string(e.path().join("cmdline")).ok()?;
        (stat.ppid == pid as i32 && cmd.contains("--guard")).then_some(p)
    })
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
}

fn serial() -> std::sync::MutexGuard<'static, ()> {
    MACHINE.lock().unwrap_or_else(|p| p.into_inner())
}

/// True when the live tests can run; in CI a missing privilege or CPU is a failure, not a skip.
fn live() -> bool {
    if !schedlab_os::root_for_test("the live task manager") {
        return false;
    }
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    schedlab_os::test_gate::require("live taskman tests", cpus >= 2, format!("they need 2+ CPUs (CPUs: {cpus})"))
}

/// Every IRQ's smp_affinity, sorted by IRQ.
fn irq_masks() -> Vec<(u32, String)> {
    let mut v: Vec<(u32, String)> = std::fs::read_dir("/proc/irq")
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let irq: u32 = e.file_name().to_str()?.parse().ok()?;
            Some((irq, std::fs::read_to_string(e.path().join("smp_affinity")).ok()?.trim().to_string()))
        })
        .collect();
    v.sort();
    v
}

/// (policy, comm) of every thread on the machine running SCHED_FIFO/RR whose name is ours.
fn our_rt_threads(marker: &str) -> Vec<String> {
    let mut out = Vec::new();
    for p in std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()) {
        let Ok(tasks) = std::fs::read_dir(p.path().join("task")) else { continue };
        for t in tasks.filter_map(|e| e.ok()) {
            let Ok(stat) = std::fs::read_to_string(t.path().join("stat")) else { continue };
            let cmdline = std::fs::read_to_string(p.path().join("cmdline")).unwrap_or_default().replace('\0', " ");
            let Some((_, rest)) = stat.rsplit_once(')') else { continue };
            let policy: u32 = rest.split_whitespace().nth(38).and_then(|s| s.parse().ok()).unwrap_or(0);
            if (policy == 1 || policy == 2) && (stat.contains("taskman-w") || cmdline.contains(marker)) {
                out.push(format!("{} policy {policy}: {cmdline}", t.path().display()));
            }
        }
    }
    out
}

/// Pids whose command line is exactly `argv`.
fn pids_with_cmdline(argv: &[&str]) -> Vec<u32> {
    let want: String = argv.iter().map(|a| format!("{a}\0")).collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            (std::fs::read_to_string(e.path().join("cmdline")).ok()? == want).then_some(pid)
        })
        .collect()
}

fn wait_for(what: &str, limit: Duration, mut cond: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_exit(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let t0 = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            panic!("schedlab did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn run_ok(args: &[&str]) -> Output {
    let out = bin().args(args).output().unwrap();
    assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out
}

#[test]
fn bad_input_is_rejected_before_anything_changes() {
    let _g = serial();
    let before = irq_masks();
    let cpus = std::thread::available_parallelism().unwrap().get().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["taskman", "run", "--workers", &cpus, "--", "true"], "--workers"),
        (vec!["taskman", "run", "--priority", "0", "--", "true"], "--priority 0"),
        (vec!["taskman", "run", "--priority", "100", "--", "true"], "--priority 100"),
        (vec!["taskman", "run", "--jobs", "/nonexistent/jobs.txt"], "/nonexistent/jobs.txt"),
        (vec!["taskman", "run"], "nothing to run"),
        (vec!["taskman", "bench", "--priority", "-3"], "--priority -3"),
        (vec!["taskman", "bench", "--threads", "0"], "--threads 0"),
    ];
    for (args, needle) in cases {
        let out = bin().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} should fail");
        assert!(err.contains(needle), "{args:?}: stderr should name {needle:?}: {err}");
        assert_eq!(irq_masks(), before, "{args:?} changed IRQ masks");
        assert!(!irq_masks_journaled(), "{args:?} left a journal");
    }
}

#[test]
fn topology_json_names_reserved_and_worker_cpus() {
    let out = run_ok(&["taskman", "topology", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let reserved = v["reserved_cpus"].as_array().unwrap();
    assert!(reserved.contains(&Value::from(0)));
    assert!(!v["topology"]["cpus"].as_array().unwrap().is_empty());
    assert!(v["worker_cpus"].as_array().unwrap().iter().all(|c| !reserved.contains(c)));
    let human = run_ok(&["taskman", "topology"]);
    assert!(String::from_utf8_lossy(&human.stdout).contains("reserved for the system"));
}

#[test]
fn normal_run_pins_children_under_fifo_steers_irqs_and_restores() {
    if !live() {
        return;
    }
    let _g = serial();
    let before = irq_masks();
    let dir = tempfile::tempdir().unwrap();
    let jobs = dir.path().join("jobs.txt");
    std::fs::write(
        &jobs,
        "# each line is one task\nchrt -p $$; grep Cpus_allowed_list /proc/self/status\n\
         for f in /proc/irq/*/smp_affinity_list; do echo \"irq $f $(cat $f)\"; done\nexit 7\n",
    )
    .unwrap();
    let out = bin().args(["taskman", "run", "--json", "--jobs"]).arg(&jobs).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The third task exits 7, so the run fails, as a shell running the three would.
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("1 of 3 task(s) did not succeed"), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document on stdout");
    // The child inherited the worker's policy, priority and CPU.
    assert!(stderr.contains("SCHED_FIFO") && stderr.contains("priority: 49"), "{stderr}");
    assert!(stderr.contains("Cpus_allowed_list:\t1"), "{stderr}");
    // While it ran, IRQs pointed at CPU 0 (those the kernel let us move).
    let refused: Vec<u64> =
        doc["manager"]["irq_refused"].as_array().unwrap().iter().map(|r| r["irq"].as_u64().unwrap()).collect();
    let steered = stderr.lines().filter(|l| l.starts_with("irq ")).filter(|l| l.ends_with(" 0")).count();
    assert!(steered > 0, "no IRQ was steered to CPU 0: {stderr}");
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 3);
    assert_eq!(jobs[0]["status"], "ok");
    assert_eq!(jobs[2]["exit_code"], 7);
    assert_eq!(jobs[2]["status"], "failed");
    assert!(doc["manager"]["workers"].as_array().unwrap().iter().all(|w| w["restored"] == true));
    assert_eq!(irq_masks(), before, "IRQ masks differ after a normal run (refused: {refused:?})");
    assert!(!irq_masks_journaled());
}

fn signal_case(sig: &str, signo: i32) {
    let _g = serial();
    let before = irq_masks();
    let marker = format!("31.{signo}7");
    let mut child = bin().args(["taskman", "run", "--", "sleep", &marker]).stdout(Stdio::null()).spawn().unwrap();
    wait_for("the steered run to start", Duration::from_secs(15), || {
        irq_masks_journaled() && !our_rt_threads(&marker).is_empty()
    });
    assert_ne!(irq_masks(), before, "IRQs should be steered while the run is going");
    let during = our_rt_threads(&marker);
    assert!(during.iter().any(|t| t.contains("sleep")), "the command runs under SCHED_FIFO: {during:?}");
    let status = Command::new("kill").args([&format!("-{sig}"), &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let st = wait_exit(&mut child, Duration::from_secs(15));
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(st.signal(), Some(signo), "schedlab should end like the signal ({st:?})");
    assert_eq!(irq_masks(), before, "IRQ masks differ after SIG{sig}");
    assert!(!irq_masks_journaled(), "journal left after SIG{sig}");
    assert!(our_rt_threads(&marker).is_empty(), "RT threads left after SIG{sig}: {:?}", our_rt_threads(&marker));
}

#[test]
fn sigint_restores_everything() {
    if live() {
        signal_case("INT", 2);
    }
}

#[test]
fn sigterm_restores_everything() {
    if live() {
        signal_case("TERM", 15);
    }
}

#[test]
fn panic_inside_a_task_restores_everything() {
    if !live() {
        return;
    }
    let _g = serial();
    let before = irq_masks();
    let out = bin().args(["taskman", "run", "--inject-panic", "--", "true"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "a panicked task fails the run: {}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("panicked") && stdout.contains("1 panicked"), "{stdout}");
    assert!(stdout.contains("restored: worker policies/affinity yes, IRQ masks yes"), "{stdout}");
    assert_eq!(irq_masks(), before);
    assert!(our_rt_threads("taskman-w").is_empty());
}

#[test]
fn sigkill_leaves_a_journal_that_restore_repairs() {
    if !live() {
        return;
    }
    let _g = serial();
    let before = irq_masks();
    let marker = "32.5";
    let mut child = bin().args(["taskman", "run", "--", "sleep", marker]).stdout(Stdio::null()).spawn().unwrap();
    wait_for("the steered run to start", Duration::from_secs(15), || {
        irq_masks_journaled() && !our_rt_threads(marker).is_empty()
    });
    // Its guardian first (it would heal at once), then the run: no destructor runs.
    let guardian = guardian_of(child.id()).expect("a live run has a guardian");
    assert!(Command::new("kill").args(["-KILL", &guardian.to_string()]).status().unwrap().success());
    child.kill().unwrap();
    child.wait().unwrap();
    assert_ne!(irq_masks(), before, "after SIGKILL the masks are still steered");
    assert!(irq_masks_journaled());
    let out = run_ok(&["taskman", "restore"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("undone:") && said.contains("IRQ masks") && said.contains("process group"), "{said}");
    assert_eq!(irq_masks(), before, "restore put every mask back");
    assert!(!irq_masks_journaled());
    wait_for("the orphaned command to die", Duration::from_secs(10), || {
        pids_with_cmdline(&["sleep", marker]).is_empty()
    });
    let again = run_ok(&["restore"]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("nothing to restore"));
}

#[test]
fn bench_prints_one_json_document_with_runs() {
    if !live() {
        return;
    }
    let _g = serial();
    let before = irq_masks();
    let out_dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args([
            "taskman",
            "bench",
            "--quick",
            "--json",
            "--reps",
            "2",
            "--passes",
            "4",
            "--load2-cap",
            "64MiB",
            "--out",
        ])
        .arg(out_dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("exactly one JSON document");
    let runs = doc["results"]["runs"].as_array().unwrap();
    let cpus = std::thread::available_parallelism().unwrap().get();
    assert_eq!(runs.len(), 2 * 3 * cpus, "D and C × 3 loads × 1..={cpus} threads");
    for r in runs {
        assert!(r["config"] == "D" || r["config"] == "C");
        assert!(["none", "load1", "load2"].contains(&r["load"].as_str().unwrap()));
        let time = r["time_s"]["mean"].as_f64().unwrap();
        assert!(time > 0.0 && time < 60.0 && r["time_s"]["ci95"].is_number(), "a quick pass takes seconds: {r}");
        assert!(r["context_switches"]["mean"].is_number());
        assert!(r["cpu_migrations"]["mean"].is_number());
        // Hardware counters are a number or say why not — never a silent zero.
        for (name, v) in r["counters"].as_object().unwrap() {
            assert!(v.is_object() || v.as_str().is_some_and(|s| s.starts_with("not ")), "{name}: {v}");
        }
    }
    assert!(doc["results"]["queue_bench"]["rows"].as_array().unwrap().len() == 4);
    assert!(doc["machine"]["kernel"].is_string());
    assert_eq!(irq_masks(), before);
    // The run directory holds results.json, the CSV and the figure.
    let dir = std::fs::read_dir(out_dir.path().join("taskman")).unwrap().next().unwrap().unwrap().path();
    for f in ["results.json", "runs.csv", "slowdown.svg"] {
        assert!(dir.join(f).exists(), "{f} missing");
    }
    // No load process outlived the benchmark.
    let leftovers = Command::new("pgrep").args(["-f", "taskman load --bytes"]).output().unwrap();
    assert!(leftovers.stdout.is_empty(), "load processes left: {}", String::from_utf8_lossy(&leftovers.stdout));
}

#[test]
fn queue_benchmark_reports_all_four_queues() {
    let out = run_ok(&["taskman", "bench-queue", "--json", "--tasks", "2000", "--reps", "2"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["queue"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 4, "{names:?}");
    assert!(names[0].contains("mutex") && names[1].contains("stealing"));
    for r in rows {
        // Two repetitions each, and an empty task costs well under a millisecond on any queue.
        assert_eq!(r["ns_per_task"]["n"], 2, "{r}");
        let ns = r["ns_per_task"]["mean"].as_f64().unwrap();
        assert!(ns > 0.0 && ns < 1e6, "{r}");
    }
    let workers = v["worker_cpus"].as_array().unwrap();
    assert_eq!(v["workers"].as_u64(), Some(workers.len() as u64));
    assert!(!workers.contains(&serde_json::json!(0)), "CPU 0 is the submitter's: {workers:?}");
}

#[test]
fn sigint_during_the_benchmark_kills_the_loads_and_restores() {
    if !live() {
        return;
    }
    let _g = serial();
    let before = irq_masks();
    let out_dir = tempfile::tempdir().unwrap();
    let mut child = bin()
        .args(["taskman", "bench", "--quick", "--json", "--loads", "load1", "--reps", "100", "--passes", "2", "--out"])
        .arg(out_dir.path())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(out_dir.path().join("stderr.txt")).unwrap())
        .spawn()
        .unwrap();
    let me = child.id().to_string();
    let loads = || {
        let out = Command::new("pgrep").args(["-P", &me, "-f", "taskman load --bytes"]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).split_whitespace().count()
    };
    wait_for("the load processes", Duration::from_secs(30), || loads() > 0);
    std::thread::sleep(Duration::from_millis(300));
    assert!(Command::new("kill").args(["-INT", &me]).status().unwrap().success());
    let st = wait_exit(&mut child, Duration::from_secs(30));
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(st.signal(), Some(2), "{st:?}");
    let leftovers = Command::new("pgrep").args(["-f", "taskman load --bytes"]).output().unwrap();
    assert!(leftovers.stdout.is_empty(), "loads left: {}", String::from_utf8_lossy(&leftovers.stdout));
    // What the run said (a mask it could not put back is named there) goes with a failure.
    let said = std::fs::read_to_string(out_dir.path().join("stderr.txt")).unwrap_or_default();
    assert_eq!(irq_masks(), before, "IRQ masks changed; the run said:\n{said}");
    assert!(!irq_masks_journaled(), "an IRQ change is still journaled; the run said:\n{said}");
    assert!(our_rt_threads("taskman-w").is_empty());
}
