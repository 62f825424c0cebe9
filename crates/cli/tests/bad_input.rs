//! Bad input, the way a user's bad day supplies it: every case is refused before anything
//! changes (no IRQ mask moved, no run started: the refusal comes in seconds), with one line that
//! names the offending value — exit 2 when the command line is wrong, 1 when the run failed or
//! the machine refused it (no root, a CPU another run holds, a task that failed) — never a
//! panic. Needs root (the live commands check root first); fails in CI without it.

use schedlab_os::process::Signal;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_schedlab");

/// One test at a time: the CPU-lock test holds a CPU the others' live commands want.
static MACHINE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Root (else a failure in CI, a skip elsewhere) and the machine to ourselves.
fn live(what: &str) -> Option<std::sync::MutexGuard<'static, ()>> {
    schedlab_os::root_for_test(what).then(|| MACHINE.lock().unwrap_or_else(|p| p.into_inner()))
}

fn irq_masks() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir("/proc/irq")
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| {
            let mask = std::fs::read_to_string(e.path().join("smp_affinity")).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), mask)
        })
        .collect();
    v.sort();
    v
}

fn schedlab(args: &[&str], dir: &std::path::Path) -> (Output, Duration) {
    let t0 = Instant::now();
    let out = Command::new(BIN).args(args).current_dir(dir).stdin(Stdio::null()).output().unwrap();
    (out, t0.elapsed())
}

/// Run `args`; it must exit `code` within a few seconds, its stderr must name `needle`, say no
/// word of a panic, and the IRQ masks must be as before.
fn refused(args: &[&str], code: i32, needle: &str, dir: &std::path::Path) {
    let before = irq_masks();
    let (out, took) = schedlab(args, dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: exit status; stderr: {err}");
    // One line says it all: ours start "schedlab: ", clap's "error: " (then a hint to --help).
    let said = err.lines().any(|l| (l.starts_with("schedlab: ") || l.starts_with("error: ")) && l.contains(needle));
    assert!(said, "{args:?}: no one line names {needle:?}: {err}");
    assert!(err.contains(needle), "{args:?}: stderr does not name {needle:?}: {err}");
    assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{args:?} panicked: {err}");
    assert!(took < Duration::from_secs(8), "{args:?} took {took:?}: it ran before refusing");
    assert_eq!(irq_masks(), before, "{args:?} changed IRQ masks");
}

#[test]
fn every_bad_input_is_refused_before_anything_changes() {
    let Some(_machine) = live("the bad-input table") else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let dir = d.path();
    let task = format!("1:{BIN} workload cpu --iterations 3000000000");
    // 6. Durations beyond a day.
    refused(&["wrr", "run", "--duration", "1e99s", "--task", &task], 2, "1e99s", dir);
    refused(&["taskman", "run", "--timeout", "1e99s", "--", "true"], 2, "1e99s", dir);
    refused(&["policies", "run", "--timeout", "1e99s"], 2, "1e99s", dir);
    refused(&["livelock", "live", "--maxtime", "1e99s"], 2, "1e99s", dir);
    refused(&["timers", "reproduce", "--tick", "1e99s"], 2, "1e99s", dir);
    refused(&["wrr", "run", "--duration", "25h", "--task", &task], 2, "25h", dir);
    // A count out of its range: no replay at all, or more draws than a run can afford.
    refused(&["validate", "--cases", "nice-hogs", "--draws", "0"], 2, "--draws", dir);
    refused(&["validate", "--cases", "nice-hogs", "--draws", "26"], 2, "--draws", dir);
    // A replay needs a validate run's recordings, and runs nothing live.
    let no_recordings = dir.to_str().unwrap();
    refused(&["validate", "--replay", no_recordings], 2, "holds no validate recordings", dir);
    refused(&["validate", "--replay", no_recordings, "--quick"], 2, "--quick", dir);
    // 7. Output paths that cannot be written, refused before the run.
    refused(&["wrr", "run", "--duration", "5s", "--task", &task, "--out", "/proc/nope"], 2, "/proc/nope", dir);
    refused(&["wrr", "run", "--duration", "5s", "--task", &task, "--gantt", "/proc/nope/g.svg"], 2, "/proc/nope", dir);
    refused(&["taskman", "bench", "--quick", "--out", "/proc/nope"], 2, "/proc/nope", dir);
    refused(&["livelock", "live", "--out", "/proc/nope"], 2, "/proc/nope", dir);
    refused(&["timers", "reproduce", "--out", "/proc/nope"], 2, "/proc/nope", dir);
    refused(&["reproduce", "--quick", "--report", "/proc/nope/index.html"], 2, "/proc/nope", dir);
    refused(
        &["sim", "run", "--generate", "poisson:n=10", "--policy", "fcfs", "--gantt", dir.to_str().unwrap()],
        2,
        "is a directory",
        dir,
    );
    // 9. Too many simulated tasks, and two tasks of one name.
    refused(
        &["sim", "run", "--generate", "poisson:n=1000", "--policy", "fcfs", "--max-tasks", "999"],
        2,
        "cap of 999",
        dir,
    );
    let twins = dir.join("twins.json");
    std::fs::write(&twins, r#"{"tasks":[{"name":"A","bursts":[5]},{"name":"A","bursts":[3]}]}"#).unwrap();
    refused(&["sim", "run", "--workload", twins.to_str().unwrap(), "--policy", "fcfs"], 2, "\"A\"", dir);
    let many: Vec<String> = (0..50).map(|i| format!(r#"{{"name":"T{i}","bursts":[1]}}"#)).collect();
    let big = dir.join("many.json");
    std::fs::write(&big, format!(r#"{{"tasks":[{}]}}"#, many.join(","))).unwrap();
    refused(
        &["sim", "run", "--workload", big.to_str().unwrap(), "--policy", "fcfs", "--max-tasks", "10"],
        2,
        "50 tasks",
        dir,
    );
    // 10. A command that does not exist is refused before IRQs move; one that fails fails the run.
    refused(&["taskman", "run", "--", "/nonexistent/cmd"], 2, "/nonexistent/cmd", dir);
    refused(&["taskman", "run", "--", "schedlab-no-such-program"], 2, "schedlab-no-such-program", dir);
    refused(&["taskman", "run", "--", "false"], 1, "1 of 1 task(s) did not succeed", dir);
    refused(&["reproduce", "--test-drill", "fail", "--out", ".", "--report", "r.html"], 1, "failed", dir);
    refused(&["reproduce", "--test-drill", "soon", "--out", "."], 2, "'soon'", dir);
    refused(&["results", "list", "--db", "/nonexistent/schedlab.db"], 2, "/nonexistent/schedlab.db", dir);
    refused(&["sim", "run", "--generate", "poisson:n=10", "--policy", "rr:quantm=4"], 2, "quantm", dir);
    refused(&["sim", "run", "--workload", "/nonexistent/w.json", "--policy", "fcfs"], 2, "/nonexistent/w.json", dir);
    refused(&["policies", "run", "--procs", "0"], 2, "--procs value 0", dir);
    refused(&["wrr", "run", "--duration", "5s", "--task", "0:true"], 2, "weight 0", dir);
    refused(&["livelock", "live", "--kernel-cpu", "99"], 2, "99", dir);
    // 14. The machine refuses: without root, the live runs that need it fail (exit 1).
    let nobody = |args: &[&str]| {
        let mut full = vec!["--reuid=65534", "--regid=65534", "--clear-groups", BIN];
        full.extend_from_slice(args);
        Command::new("setpriv").args(&full).current_dir("/tmp").stdin(Stdio::null()).output().unwrap()
    };
    for (args, needle) in [
        (vec!["policies", "run", "--policy", "fifo", "--procs", "2", "--out", "/tmp"], "need root"),
        (vec!["wrr", "run", "--duration", "2s", "--task", "1:true", "--out", "/tmp"], "needs root"),
    ] {
        let out = nobody(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?} without root: {err}");
        assert!(err.lines().last().is_some_and(|l| l.contains(needle)), "{args:?} without root: {err}");
    }
    // 12. A failed merge leaves no database behind.
    let corrupt = dir.join("corrupt.db");
    std::fs::write(&corrupt, "this is not SQLite").unwrap();
    let merged = dir.join("merged.db");
    refused(&["results", "merge", corrupt.to_str().unwrap(), "--db", merged.to_str().unwrap()], 2, "corrupt.db", dir);
    assert!(!merged.exists(), "a failed merge left {}", merged.display());
    // 13. RT children on every CPU, and a priority above the harness's.
    if std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2 {
        refused(&["policies", "run", "--cpus", "0-1", "--policy", "fifo"], 2, "every CPU", dir);
    }
    refused(&["policies", "run", "--priority", "99"], 2, "1..=98", dir);
}

/// Item 11: a second live run that wants a CPU another one holds is refused, naming the
/// holder; `--force` lets it share deliberately.
#[test]
fn a_second_run_on_a_held_cpu_is_refused_naming_the_holder() {
    let Some(_machine) = live("the CPU lock") else {
        return;
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if !schedlab_os::test_gate::require("the CPU lock", cpus >= 2, "needs 2+ CPUs") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let task = format!("1:{BIN} workload cpu --iterations 3000000000");
    let mut first = Command::new(BIN)
        .args(["wrr", "run", "--duration", "20s", "--task", &task, "--out"])
        .arg(d.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let holder = format!("pid {}", first.id());
    // Until the first run holds its CPU (its lock file names it).
    let last = cpus - 1;
    let lock = std::path::Path::new("/run/schedlab").join(format!("cpu{last}.lock"));
    let t0 = Instant::now();
    while !std::fs::read_to_string(&lock).is_ok_and(|t| t.starts_with(&holder)) {
        assert!(t0.elapsed() < Duration::from_secs(20), "the first run never locked CPU {last}");
        std::thread::sleep(Duration::from_millis(20));
    }
    refused(
        &["wrr", "run", "--duration", "1s", "--task", &task, "--out", d.path().to_str().unwrap()],
        1,
        &holder,
        d.path(),
    );
    // The traced runs lock their CPUs too: a pinned `trace record` and `validate`.
    let last_cpu = last.to_string();
    refused(
        &["trace", "record", "--cpus", &last_cpu, "--out", d.path().to_str().unwrap(), "--", "true"],
        1,
        &holder,
        d.path(),
    );
    refused(
        &["validate", "--cases", "nice-hogs", "--quick", "--out", d.path().to_str().unwrap()],
        1,
        &holder,
        d.path(),
    );
    let (forced, _) = schedlab(
        &["wrr", "run", "--force", "--duration", "1s", "--task", &task, "--out", d.path().to_str().unwrap()],
        d.path(),
    );
    let err = String::from_utf8_lossy(&forced.stderr);
    assert!(forced.status.success(), "--force was refused: {err}");
    assert!(err.contains("going on because of --force"), "{err}");
    let _ = first.kill();
    let _ = first.wait();
}

/// Item 8: a run stopped by SIGINT or SIGTERM ends the way the signal would have ended it (a
/// shell then shows 130 / 143), and an experiment stopped inside `reproduce` is stored as
/// `interrupted`, not `failed`.
#[test]
fn a_stopped_run_ends_like_the_signal_and_is_stored_as_interrupted() {
    let Some(_machine) = live("stopping live runs") else {
        return;
    };
    use std::os::unix::process::ExitStatusExt;
    let d = tempfile::tempdir().unwrap();
    let o = d.path().to_str().unwrap().to_string();
    let report = d.path().join("report.html");
    let cases: [(&str, Vec<&str>, i32); 3] = [
        (
            "timers reproduce",
            vec!["timers", "reproduce", "--queues", "delta", "--trials", "1", "--out", &o],
            Signal::SIGTERM as i32,
        ),
        ("wrr study", vec!["wrr", "study", "--quick", "--only", "wrr", "--out", &o], Signal::SIGINT as i32),
        (
            "reproduce --only timers",
            vec!["reproduce", "--quick", "--only", "timers", "--out", &o, "--report", report.to_str().unwrap()],
            Signal::SIGINT as i32,
        ),
    ];
    for (name, args, sig) in cases {
        let mut run = Command::new(BIN).args(&args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        std::thread::sleep(Duration::from_secs(3));
        assert!(run.try_wait().unwrap().is_none(), "{name} ended before it was stopped");
        assert!(Command::new("kill").args([&format!("-{sig}"), &run.id().to_string()]).status().unwrap().success());
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = run.try_wait().unwrap() {
                break s;
            }
            assert!(t0.elapsed() < Duration::from_secs(30), "{name} ignored signal {sig}");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(status.signal(), Some(sig), "{name}: {status:?}");
    }
    let db = d.path().join("schedlab.db");
    let (list, _) = schedlab(&["results", "list", "--db", db.to_str().unwrap()], d.path());
    let text = String::from_utf8_lossy(&list.stdout);
    let row = text.lines().find(|l| l.contains("timers")).unwrap_or_else(|| panic!("no timers run stored: {text}"));
    assert!(row.contains("interrupted") && !row.contains("failed"), "stored as: {row}");
}
