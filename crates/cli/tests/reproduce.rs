//! `schedlab reproduce` and `schedlab results` as a person uses them: the README's main
//! command writes the report and the database; killing a run (SIGKILL or SIGTERM) leaves a
//! database that opens and lists the finished runs with the interrupted one marked; shards
//! split the work and merge back; concurrent runs share one database safely.
//!
//! Long-running work comes from the hidden, test-only `--test-drill` stand-ins (they sleep),
//! so these tests take seconds whatever experiments are registered.

use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn schedlab(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_schedlab"));
    c.current_dir(dir);
    c
}

fn run_ok(dir: &Path, args: &[&str]) -> Output {
    let out = schedlab(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "schedlab {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    out
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not one JSON document ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn runs(dir: &Path, db: &str) -> Vec<Value> {
    json_of(&run_ok(dir, &["results", "list", "--db", db, "--json"]))["runs"].as_array().unwrap().clone()
}

fn statuses(runs: &[Value]) -> Vec<String> {
    runs.iter().map(|r| r["status"].as_str().unwrap().to_string()).collect()
}

/// Wait until `n` runs are completed and one is running (the child is in its long drill).
fn wait_for_completed(dir: &Path, db: &str, n: usize, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(child.try_wait().unwrap().is_none(), "reproduce ended early");
        if dir.join(db).exists() {
            let st = statuses(&runs(dir, db));
            if st.iter().filter(|s| *s == "completed").count() == n && st.iter().any(|s| s == "running") {
                return;
            }
        }
        assert!(Instant::now() < deadline, "the drill runs never got going");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn readme_main_command_writes_a_report_with_five_seed_sections() {
    let dir = tempfile::tempdir().unwrap();
    let listed = json_of(&run_ok(dir.path(), &["reproduce", "--list", "--quick", "--json"]));
    let experiments = listed["experiments"].as_array().unwrap();
    // The list gives each experiment's estimate at all three scales, the chosen one first.
    for e in experiments {
        let by = &e["estimate_s_by_scale"];
        let (q, d, f) = (by["quick"].as_f64().unwrap(), by["default"].as_f64().unwrap(), by["full"].as_f64().unwrap());
        assert_eq!(e["estimate_s"].as_f64(), Some(q), "{e}");
        assert!(q <= d && d <= f, "{e}");
        // And what each scale runs, against the seed's: the full scale is the seed's own or says why not.
        let what = &e["scale_by_scale"];
        assert_eq!(e["scale_of"], what["quick"], "{e}");
        let full = what["full"].as_str().unwrap();
        assert!(full.contains("seed"), "{e}");
    }
    // With no experiment registered this is exactly the README's `schedlab reproduce`; with
    // some, the quickest one keeps the test short (if even that is slow, a drill stands in:
    // report_browser.rs runs the real one already).
    let mut args = vec!["reproduce".to_string()];
    let fastest =
        experiments.iter().min_by(|a, b| a["estimate_s"].as_f64().partial_cmp(&b["estimate_s"].as_f64()).unwrap());
    match fastest {
        Some(e) if e["estimate_s"].as_f64().unwrap() <= 30.0 => {
            args.extend(["--quick".into(), "--only".into(), e["name"].as_str().unwrap().to_string()])
        }
        Some(_) => args.extend(["--test-drill".into(), "10ms".into()]),
        None => {}
    }
    let out = schedlab(dir.path()).args(&args).output().unwrap();
    assert!(out.status.success(), "reproduce failed: {}", String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(dir.path().join("report/index.html")).unwrap();
    for seed in ["000", "001", "002", "003", "004"] {
        assert!(html.contains(&format!(r#"<section class="seed" id="seed-{seed}""#)), "no section for seed {seed}");
    }
    assert!(html.contains("Published"));
    assert!(dir.path().join("results/schedlab.db").is_file());
    assert_eq!(runs(dir.path(), "results/schedlab.db").len(), experiments.len().min(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("report:   report/index.html"), "{stdout}");
    if let Some(e) = fastest.filter(|_| args.iter().any(|a| a == "--only")) {
        // The section says the scale it ran at, against the seed's, in the report and the output.
        let scale = e["scale_of"].as_str().unwrap();
        assert!(html.contains(r#"<p class="scale"><strong>Scale:</strong>"#), "no scale in the report");
        assert!(stdout.contains("Scale: "), "{stdout}");
        let show = json_of(&run_ok(dir.path(), &["results", "show", "1", "--json"]));
        assert_eq!(show["data"]["scale"].as_str(), Some(scale), "{}", show["data"]);
    }
}

#[test]
fn sigkill_mid_run_leaves_a_database_that_lists_finished_runs_and_marks_the_interrupted_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = schedlab(dir.path())
        .args(["reproduce", "--quick", "--test-drill", "100ms,100ms,60s,100ms"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_completed(dir.path(), "results/schedlab.db", 2, &mut child);
    child.kill().unwrap(); // SIGKILL: no handler runs, the row stays "running" with a dead pid
    child.wait().unwrap();

    let listed = runs(dir.path(), "results/schedlab.db");
    assert_eq!(statuses(&listed), ["completed", "completed", "interrupted"]);
    assert!(listed[2]["reason"].as_str().unwrap().contains(&child.id().to_string()));
    assert_eq!(listed[0]["experiment"], "drill-1");
    // The finished runs keep their raw data; the report written after each run survives.
    let show = json_of(&run_ok(dir.path(), &["results", "show", "1", "--json"]));
    assert!(show["data"]["results"]["slept_s"].as_f64().unwrap() >= 0.1);
    let html = std::fs::read_to_string(dir.path().join("report/index.html")).unwrap();
    assert!(
        html.contains(r#"data-experiment="drill-2""#) && html.contains("pending: reproduce had not reached it yet")
    );
    assert!(html.contains("if reproduce is no longer running, it was killed"), "drill-3 is shown as running");
    // What the killed experiment kept as it went is still there; the finished ones removed theirs.
    assert_eq!(unfinished(dir.path(), "drill-1").len(), 0);
    let kept = unfinished(dir.path(), "drill-3");
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(std::fs::read_to_string(kept[0].join("started")).unwrap(), "drill-3");
    // A later run appends to the same database.
    run_ok(dir.path(), &["reproduce", "--test-drill", "10ms"]);
    assert_eq!(
        statuses(&runs(dir.path(), "results/schedlab.db")),
        ["completed", "completed", "interrupted", "completed"]
    );
}

#[test]
fn sigterm_stops_after_the_running_experiment_and_records_it_as_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = schedlab(dir.path())
        .args(["reproduce", "--test-drill", "50ms,60s,50ms"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_completed(dir.path(), "results/schedlab.db", 1, &mut child);
    let t0 = Instant::now();
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(10), "SIGTERM took {:?}", t0.elapsed());
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(15), "exit status tells the shell about SIGTERM");
    let listed = runs(dir.path(), "results/schedlab.db");
    assert_eq!(statuses(&listed), ["completed", "interrupted"], "drill-3 never started");
    let html = std::fs::read_to_string(dir.path().join("report/index.html")).unwrap();
    assert!(html.contains("interrupted before it started"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("stopped by a signal"));
}

/// A workload is stopped by its parent with a signal when the parent is done with it (the live
/// WRR host's `--forever` tasks): it ends as the signal says, without the notice a stopped
/// experiment prints, so six workers do not print six notices per run.
#[test]
fn a_workload_stopped_by_a_signal_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let child = schedlab(dir.path())
        .args(["workload", "crypt", "--forever"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(out.status.signal(), Some(15), "{out:?}");
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn shards_split_the_experiments_and_merge_back() {
    let dir = tempfile::tempdir().unwrap();
    let drill = "100ms,200ms,300ms,400ms,500ms";
    let mut names = Vec::new();
    for k in 1..=2 {
        let out = run_ok(
            dir.path(),
            &[
                "reproduce",
                "--test-drill",
                drill,
                "--shard",
                &format!("{k}/2"),
                "--out",
                &format!("s{k}"),
                "--report",
                &format!("s{k}/index.html"),
                "--json",
            ],
        );
        let doc = json_of(&out);
        assert_eq!(doc["shard"], format!("{k}/2"));
        let ran: Vec<String> =
            doc["runs"].as_array().unwrap().iter().map(|r| r["experiment"].as_str().unwrap().to_string()).collect();
        let skipped = doc["not_run"].as_array().unwrap();
        assert_eq!(ran.len() + skipped.len(), 5);
        assert!(skipped.iter().all(|n| n["reason"].as_str().unwrap().starts_with("runs in shard")));
        names.extend(ran);
    }
    names.sort();
    assert_eq!(names, ["drill-1", "drill-2", "drill-3", "drill-4", "drill-5"], "each case in exactly one shard");
    // Balanced by estimate: 0.5+0.2+0.1 vs 0.4+0.3 (longest first to the lighter shard).
    let merged = json_of(&run_ok(
        dir.path(),
        &["results", "merge", "s1/schedlab.db", "s2/schedlab.db", "--db", "all.db", "--json"],
    ));
    assert_eq!(merged["runs"], 5);
    let again = json_of(&run_ok(dir.path(), &["results", "merge", "s1/schedlab.db", "--db", "all.db", "--json"]));
    assert_eq!(again["merged"][0]["added"], 0, "merging a shard twice adds nothing");
    run_ok(dir.path(), &["results", "report", "--db", "all.db", "--html", "merged/index.html"]);
    let html = std::fs::read_to_string(dir.path().join("merged/index.html")).unwrap();
    for k in 1..=5 {
        assert!(html.contains(&format!(r#"data-experiment="drill-{k}""#)), "merged report lacks drill-{k}");
    }
    assert_eq!(html.matches("<figure").count(), 5);
    // A source that is no database fails the merge and leaves no new, empty target behind; an
    // existing target keeps its runs.
    std::fs::write(dir.path().join("corrupt.db"), "not a database").unwrap();
    for target in ["new.db", "all.db"] {
        let out = schedlab(dir.path()).args(["results", "merge", "corrupt.db", "--db", target]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert!(!dir.path().join("new.db").exists(), "a failed merge left the database it created");
    assert_eq!(runs(dir.path(), "all.db").len(), 5, "the failed merge changed the existing database");
}

#[test]
fn concurrent_reproduce_runs_share_one_database() {
    let dir = tempfile::tempdir().unwrap();
    let drill = "20ms,20ms,20ms,20ms,20ms,20ms";
    let children: Vec<Child> = (0..3)
        .map(|i| {
            schedlab(dir.path())
                .args([
                    "reproduce",
                    "--test-drill",
                    drill,
                    "--db",
                    "shared.db",
                    "--out",
                    &format!("o{i}"),
                    "--report",
                    &format!("r{i}.html"),
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let listed = runs(dir.path(), "shared.db");
    assert_eq!(listed.len(), 18);
    assert!(statuses(&listed).iter().all(|s| s == "completed"));
    let uids: std::collections::BTreeSet<&str> = listed.iter().map(|r| r["uid"].as_str().unwrap()).collect();
    assert_eq!(uids.len(), 18);
}

#[test]
fn failures_are_reported_and_the_rest_carry_on() {
    let dir = tempfile::tempdir().unwrap();
    let out = schedlab(dir.path())
        .args(["reproduce", "--test-drill", "fail,panic,unsupported,10ms", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a failed experiment makes the exit status 1");
    let doc = json_of(&out);
    let st: Vec<&str> = doc["runs"].as_array().unwrap().iter().map(|r| r["status"].as_str().unwrap()).collect();
    assert_eq!(st, ["failed", "failed", "unsupported", "completed"]);
    let html = std::fs::read_to_string(dir.path().join("report/index.html")).unwrap();
    assert!(html.contains("failed: panicked: the drill was told to panic"));
    assert!(html.contains("not run: the drill pretends a facility is missing"));
    // A failed experiment's work kept as it went stays, and its summary says where.
    let kept = unfinished(dir.path(), "drill-1");
    assert_eq!(kept.len(), 1, "{kept:?}");
    let summary = doc["sections"][0]["summary"].as_str().unwrap_or_default();
    assert!(summary.contains(&format!("kept in {}", kept[0].strip_prefix(dir.path()).unwrap().display())), "{summary}");
    assert_eq!(unfinished(dir.path(), "drill-4").len(), 0);
}

/// The `unfinished-*` directories under `results/<experiment>/`.
fn unfinished(dir: &Path, experiment: &str) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir.join("results").join(experiment)) else { return Vec::new() };
    entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("unfinished-"))
        .collect()
}

#[test]
fn results_commands_show_compare_and_export() {
    let dir = tempfile::tempdir().unwrap();
    run_ok(dir.path(), &["reproduce", "--test-drill", "30ms,60ms"]);
    let show = String::from_utf8(run_ok(dir.path(), &["results", "show", "2"]).stdout).unwrap();
    assert!(show.contains("drill-2") && show.contains("Drill: asked vs slept") && show.contains("kernel"));
    let cmp = json_of(&run_ok(dir.path(), &["results", "compare", "1", "2", "--json"]));
    let asked = cmp["leaves"].as_array().unwrap().iter().find(|l| l["path"] == "results.asked_s").unwrap();
    assert_eq!((asked["a"].as_f64(), asked["b"].as_f64()), (Some(0.03), Some(0.06)));
    assert!((asked["relative"].as_f64().unwrap() - 1.0).abs() < 1e-9);
    let human = String::from_utf8(run_ok(dir.path(), &["results", "compare", "1", "2"]).stdout).unwrap();
    assert!(human.contains("asked_s") && human.contains("+100.0%"), "{human}");
    let csv = String::from_utf8(run_ok(dir.path(), &["results", "export", "1", "--format", "leaves"]).stdout).unwrap();
    assert!(csv.starts_with("run,experiment,path,value\n"));
    assert!(csv.lines().any(|l| l == "1,drill-1,results.asked_s,0.03"), "{csv}");
    run_ok(dir.path(), &["results", "export", "2", "--format", "leaves", "-o", "two.csv"]);
    assert!(std::fs::read_to_string(dir.path().join("two.csv")).unwrap().contains("2,drill-2,results.asked_s,0.06"));
    let list =
        String::from_utf8(run_ok(dir.path(), &["results", "list", "--status", "completed", "--limit", "1"]).stdout)
            .unwrap();
    assert!(list.contains("drill-2") && !list.contains("drill-1"));
}

#[test]
fn bad_input_is_rejected_with_the_value_named() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["reproduce", "--shard", "3/2"], "'3/2'"),
        (&["reproduce", "--shard", "0/2"], "'0/2'"),
        (&["reproduce", "--only", "nope"], "'nope'"),
        (&["reproduce", "--quick", "--full"], "--full"),
        (&["results", "list"], "no results database at results/schedlab.db"),
        (&["results", "list", "--status", "done"], "'done'"),
        (&["results", "merge", "missing.db", "--db", "x.db"], "missing.db"),
    ];
    for (args, needle) in cases {
        let out = schedlab(dir.path()).args(*args).output().unwrap();
        assert!(!out.status.success(), "{args:?} should fail");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // Nothing was started by a rejected command.
    assert!(!dir.path().join("results").exists() && !dir.path().join("report").exists());
    run_ok(dir.path(), &["reproduce", "--test-drill", "10ms"]);
    let out = schedlab(dir.path()).args(["results", "show", "99"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("no run with id 99"));
}

#[test]
fn progress_goes_to_stderr_as_lines_when_not_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_ok(dir.path(), &["reproduce", "--test-drill", "50ms,50ms", "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[1/2] drill-1") && err.contains("[2/2] drill-2"), "{err}");
    assert!(err.contains("left"), "an estimate of time left: {err}");
    json_of(&out); // stdout holds exactly one JSON document
}
