//! `schedlab sim` end to end: the JSON document, the textbook numbers, Gantt output, the WRR
//! study, the benchmark, and bad input rejected with the offending field named.

mod common;

use common::trace_event;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn schedlab(args: &[&str], out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab")).args(args).arg("--out").arg(out).output().expect("run schedlab")
}

/// `schedlab` that must succeed (its stderr is the failure message).
fn ok(args: &[&str], out: &Path) -> Output {
    let o = schedlab(args, out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

const CLASSIC: &str = r#"{"cpus":1,"tasks":[{"name":"P1","arrival":0,"bursts":[24]},{"name":"P2","arrival":0,"bursts":[3]},{"name":"P3","arrival":0,"bursts":[3]}]}"#;

#[test]
fn run_json_has_the_textbook_numbers() {
    let d = tempfile::tempdir().unwrap();
    let w = write(d.path(), "w.json", CLASSIC);
    let gantt = d.path().join("g.svg");
    let o = ok(
        &[
            "sim",
            "run",
            "--workload",
            &w,
            "--policy",
            "fcfs",
            "--policy",
            "rr:quantum=4ms",
            "--json",
            "--gantt",
            gantt.to_str().unwrap(),
        ],
        d.path(),
    );
    let doc: Value = serde_json::from_slice(&o.stdout).expect("exactly one JSON document on stdout");
    let p = &doc["results"]["policies"];
    assert_eq!(p[0]["policy"], "fcfs");
    assert_eq!(p[0]["avg_waiting"], 17.0);
    assert!((p[1]["avg_waiting"].as_f64().unwrap() - 17.0 / 3.0).abs() < 1e-9);
    for key in ["avg_turnaround", "avg_response", "throughput", "context_switches"] {
        assert!(p[1][key].is_number(), "{key}");
    }
    let t = &p[1]["tasks"][0];
    assert_eq!(t["name"], "P1");
    assert_eq!(t["finish"], 30.0);
    assert_eq!(t["waiting"], 6.0);
    assert!(t["turnaround"].is_number() && t["response"].is_number());
    let svg = std::fs::read_to_string(&gantt).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("cpu0"));
    assert!(d.path().join("sim-run").read_dir().unwrap().next().is_some(), "results directory written");
}

#[test]
fn human_table_marks_the_best() {
    let d = tempfile::tempdir().unwrap();
    let o = ok(
        &[
            "sim",
            "run",
            "--generate",
            "poisson:n=50,rate=150,mean=5ms,bursts=2,io=3ms",
            "--cpus",
            "2",
            "--policy",
            "fcfs",
            "--policy",
            "srtf",
            "--per-cpu",
        ],
        d.path(),
    );
    let s = String::from_utf8_lossy(&o.stdout);
    // Whitespace-split words of the two policy rows: the border, the policy and "(per-CPU
    // queues)" come first, so avg waiting is word 4 and ctx switches word 11.
    let row = |policy: &str| -> Vec<String> {
        let line = s.lines().find(|l| l.contains(&format!("{policy} (per-CPU"))).unwrap_or_else(|| panic!("{s}"));
        line.split_whitespace().map(String::from).collect()
    };
    let (fcfs, srtf) = (row("fcfs"), row("srtf"));
    let value = |cell: &str| cell.trim_end_matches('*').parse::<f64>().unwrap();
    for (column, lower_is_better) in [(4, "avg waiting"), (11, "ctx switches")] {
        let (a, b) = (value(&fcfs[column]), value(&srtf[column]));
        assert_ne!(a, b, "{lower_is_better}: a tie would not test the mark\n{s}");
        let (best, other) = if a < b { (&fcfs, &srtf) } else { (&srtf, &fcfs) };
        assert!(best[column].ends_with('*'), "{lower_is_better}: the lower value is starred\n{s}");
        assert!(!other[column].ends_with('*'), "{lower_is_better}: only the lower value is starred\n{s}");
    }
    // SRTF runs the shortest remaining burst first, so it waits less than FCFS here.
    assert!(srtf[4].ends_with('*'), "{s}");
}

fn rejected(json: &str, field: &str) {
    let d = tempfile::tempdir().unwrap();
    let w = write(d.path(), "bad.json", json);
    let o = schedlab(&["sim", "run", "--workload", &w, "--policy", "fcfs"], d.path());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "accepted {json}");
    assert!(err.contains(field), "error for {json} should name {field}: {err}");
    assert!(!d.path().join("sim-run").exists(), "nothing may start on bad input");
}

#[test]
fn bad_workloads_are_rejected_naming_the_field() {
    rejected(r#"{"tasks":[{"arrival":-2,"bursts":[1]}]}"#, "tasks[0].arrival");
    rejected(r#"{"tasks":[{"bursts":[5]},{"bursts":[]}]}"#, "tasks[1].bursts");
    rejected(r#"{"tasks":[{"bursts":[5],"colour":"red"}]}"#, "colour");
    rejected(r#"{"tasks":[{"bursts":[5,-1,2]}]}"#, "tasks[0].bursts[1]");
}

#[test]
fn bad_policies_are_rejected_naming_the_field() {
    let d = tempfile::tempdir().unwrap();
    let w = write(d.path(), "w.json", CLASSIC);
    for (spec, field) in
        [("bogus", "bogus"), ("rr:quantum=0ms", "quantum"), ("rr:slice=3ms", "slice"), ("mlfq:levels=0", "levels")]
    {
        let o = schedlab(&["sim", "run", "--workload", &w, "--policy", "fcfs", "--policy", spec], d.path());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(field), "{spec}: {err}");
    }
    assert!(!d.path().join("sim-run").exists());
}

#[test]
fn help_teaches_priorities_and_units() {
    let o = Command::new(env!("CARGO_BIN_EXE_schedlab")).args(["sim", "run", "--help"]).output().unwrap();
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("lower number"), "{s}");
    assert!(s.contains("ms"));
    let o = Command::new(env!("CARGO_BIN_EXE_schedlab")).args(["sim", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stdout).contains("LOWER number"));
}

#[test]
fn wrr_study_reproduces_the_work_folds() {
    let d = tempfile::tempdir().unwrap();
    let o = ok(&["sim", "wrr-study", "--orders", "48", "--json"], d.path());
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let folds: Vec<f64> = doc["results"]["work_fold"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    for (f, w) in folds.iter().zip([1.0, 4.0, 8.0, 12.0, 16.0, 20.0]) {
        assert!((f / w - 1.0).abs() < 0.02, "fold {f} for weight {w}");
    }
    assert_eq!(doc["results"]["finish_s"]["mean"].as_array().unwrap().len(), 6);
    // Human output prints the seed's numbers beside.
    let o = schedlab(&["sim", "wrr-study", "--orders", "12"], d.path());
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(s.contains("19.885") && s.contains("1.815"), "{s}");
}

#[test]
fn bench_reports_events_per_second() {
    let d = tempfile::tempdir().unwrap();
    let o = ok(&["sim", "bench", "--tasks", "2000", "--repeat", "1", "--json"], d.path());
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = doc["results"]["rows"].as_array().unwrap();
    // rr and cfs, each producing overall metrics only and per-task records as well.
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| r["events"].as_u64().unwrap() > 4000 && r["events_per_s"].as_f64().unwrap() > 0.0));
    // Both output modes simulate the same thing.
    for p in [&rows[0..2], &rows[2..4]] {
        assert_eq!(p[0]["output"], "overall");
        assert_eq!(p[1]["output"], "per-task");
        assert_eq!(p[0]["events"], p[1]["events"]);
        assert_eq!(p[0]["avg_turnaround_ms"], p[1]["avg_turnaround_ms"]);
    }
    assert!(rows.iter().all(|r| r["peak_rss_mib"].as_f64().unwrap() >= r["rss_before_mib"].as_f64().unwrap()));
    assert!(doc["results"]["process_peak_rss_mib"].as_f64().unwrap() > 1.0);
    assert_eq!(doc["verdicts"][0]["kind"], "goal", "the events/s target is judged: {}", doc["verdicts"]);

    // `all` is the catalogue; --overall-only times one mode.
    let o = ok(
        &["sim", "bench", "--tasks", "300", "--repeat", "1", "--policy", "all", "--overall-only", "--json"],
        d.path(),
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = doc["results"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), schedlab_sim::policies::CATALOGUE.len());
    assert!(rows.iter().all(|r| r["output"] == "overall"));
}

#[test]
fn bench_runs_the_simpy_peer_on_the_same_tasks() {
    let has_simpy = Command::new("python3").args(["-c", "import simpy"]).status().is_ok_and(|s| s.success());
    let why = "python3 cannot import simpy (scripts/setup.sh installs it)";
    if !schedlab_os::test_gate::require("the SimPy peer benchmark", has_simpy, why) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/sim/simpy_rr.py");
    let args = ["sim", "bench", "--tasks", "2000", "--repeat", "2", "--policy", "rr:quantum=2ms", "--simpy"];
    let o = ok(&[&args[..], &["--simpy-script", script, "--json"]].concat(), d.path());
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = doc["results"]["rows"].as_array().unwrap();
    let simpy = rows.iter().find(|r| r["engine"] == "simpy").expect("a SimPy row");
    let ours = rows.iter().find(|r| r["engine"] == "schedlab" && r["output"] == "overall").unwrap();
    // The same model on the same tasks: the same events and the same turnaround.
    assert_eq!(simpy["events"], ours["events"]);
    let (a, b) = (simpy["avg_turnaround_ms"].as_f64().unwrap(), ours["avg_turnaround_ms"].as_f64().unwrap());
    assert!((a / b - 1.0).abs() < 1e-9, "SimPy {a} ms vs schedlab {b} ms");
    let ratio = doc["results"]["simpy_wall_time_ratio"]["overall"].as_f64().unwrap();
    let expect = simpy["seconds"].as_f64().unwrap() / ours["seconds"].as_f64().unwrap();
    assert!((ratio - expect).abs() < 1e-9 * expect, "ratio {ratio} vs {expect}");
    // Every timed run is kept, and the goal is judged on the paired runs' ratios.
    for r in [simpy, ours] {
        assert_eq!(r["trials_s"].as_array().map(Vec::len), Some(2), "{r}");
    }
    let goal = doc["verdicts"].as_array().unwrap().iter().find(|v| v["claim"].as_str().unwrap().contains("SimPy"));
    let goal = goal.expect("the SimPy goal is judged");
    assert_eq!(goal["kind"], "goal");
    assert!(goal["claim"].as_str().unwrap().contains("(rr:quantum=2ms)"), "the claim names the quantum: {goal}");
    assert!(goal["detail"].as_str().unwrap().contains("n = 2"), "{goal}");
}

#[test]
fn a_simpy_peer_that_fails_is_named_with_what_it_said() {
    let d = tempfile::tempdir().unwrap();
    let script = write(d.path(), "broken.py", "import sys\nsys.exit('no model here')\n");
    let args = ["sim", "bench", "--tasks", "100", "--repeat", "1", "--policy", "rr:quantum=2ms", "--simpy"];
    let o = schedlab(&[&args[..], &["--simpy-script", &script, "--no-save"]].concat(), d.path());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "a run error, not a usage error: {stderr}");
    assert!(
        stderr.contains("the SimPy model failed at its warm-up run") && stderr.contains("no model here"),
        "{stderr}"
    );
    let left = std::fs::read_dir(std::env::temp_dir()).unwrap().flatten().any(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        name.starts_with("schedlab-simpy-tasks-") && name.ends_with(".csv") && {
            let pid = name.trim_start_matches("schedlab-simpy-tasks-").trim_end_matches(".csv");
            pid.parse::<i32>().is_ok_and(|p| !std::path::Path::new(&format!("/proc/{p}")).exists())
        }
    });
    assert!(!left, "the tasks file of a finished bench is removed");
}

#[test]
fn linux_runs_fifo_90_before_10_and_gives_a_2_in_10_ms_deadline_task_a_fifth() {
    let d = tempfile::tempdir().unwrap();
    let w = write(
        d.path(),
        "linux.json",
        r#"{"cpus":1,"tasks":[
            {"name":"lo","bursts":[50],"class":"fifo","priority":10},
            {"name":"hi","bursts":[50],"class":"fifo","priority":90},
            {"name":"dl","bursts":[10000],"class":"deadline","runtime":2,"deadline":10,"period":10},
            {"name":"hog","bursts":[10000]}]}"#,
    );
    let o = ok(&["sim", "run", "--workload", &w, "--policy", "linux", "--horizon", "1000ms", "--json"], d.path());
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let tasks = doc["results"]["policies"][0]["tasks"].as_array().unwrap();
    let task = |n: &str| tasks.iter().find(|t| t["name"] == n).unwrap();
    let (hi, lo) = (task("hi")["finish"].as_f64().unwrap(), task("lo")["finish"].as_f64().unwrap());
    assert!(hi < lo, "priority 90 finishes first (hi {hi} ms, lo {lo} ms)");
    assert_eq!(task("lo")["response"].as_f64(), Some(hi), "priority 10 starts only when 90 is done");
    assert_eq!(task("dl")["cpu"].as_f64(), Some(200.0), "2 ms of every 10 ms over 1 s");
}

#[test]
fn trace_out_is_trace_event_json_with_a_track_per_cpu_and_per_task() {
    let d = tempfile::tempdir().unwrap();
    let w = write(
        d.path(),
        "w.json",
        r#"{"tasks":[{"name":"A","bursts":[5,3,4]},{"name":"B","bursts":[6]},{"name":"C","arrival":2,"bursts":[2]}]}"#,
    );
    let trace = d.path().join("t.json");
    ok(
        &[
            "sim",
            "run",
            "--workload",
            &w,
            "--policy",
            "fcfs",
            "--policy",
            "rr:quantum=2ms",
            "--trace-out",
            trace.to_str().unwrap(),
        ],
        d.path(),
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    trace_event::check_format(&doc).unwrap();
    // The checker can fail: an unnamed track, a step back in time and an open B are caught.
    let breach = |e: Value, at_start: bool| {
        let mut broken = doc.clone();
        let v = broken["traceEvents"].as_array_mut().unwrap();
        if at_start {
            v.insert(0, e);
        } else {
            v.push(e);
        }
        trace_event::check_format(&broken).unwrap_err()
    };
    assert!(breach(serde_json::json!({"ph": "B", "pid": 1, "tid": 1, "name": "x", "ts": 1e9}), false)
        .contains("never closed"));
    assert!(
        breach(serde_json::json!({"ph": "i", "pid": 1, "tid": 1, "name": "y", "ts": 0.0}), false).contains("before")
    );
    assert!(breach(serde_json::json!({"ph": "i", "pid": 9, "tid": 9, "name": "z", "ts": 0.0}), true)
        .contains("no thread_name"));
    assert!(breach(serde_json::json!({"ph": "X", "pid": 1, "tid": 1, "name": "w", "ts": 1e9}), false)
        .contains("without dur"));

    let events = doc["traceEvents"].as_array().unwrap();
    let thread = |pid: u64, name: &str| {
        events
            .iter()
            .find(|e| e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == pid && e["args"]["name"] == name)
            .and_then(|e| e["tid"].as_u64())
            .unwrap_or_else(|| panic!("no track {name} in process {pid}"))
    };
    let spans = |pid: u64, tid: u64, cat: &str| -> Vec<(f64, f64)> {
        events
            .iter()
            .filter(|e| e["ph"] == "X" && e["pid"] == pid && e["tid"] == tid && e["cat"] == cat)
            .map(|e| (e["ts"].as_f64().unwrap(), e["dur"].as_f64().unwrap()))
            .collect()
    };
    for pid in [1, 2] {
        // Each task's track holds exactly its CPU demand (ms → µs), and A's I/O wait.
        for (task, cpu_us) in [("A", 9000.0), ("B", 6000.0), ("C", 2000.0)] {
            let ran: f64 = spans(pid, thread(pid, task), "run").iter().map(|s| s.1).sum();
            assert!((ran - cpu_us).abs() < 1e-6, "process {pid}: {task} ran {ran} µs, not {cpu_us}");
        }
        let waited: f64 = spans(pid, thread(pid, "A"), "wait").iter().map(|s| s.1).sum();
        assert!((waited - 3000.0).abs() < 1e-6, "process {pid}: A waited {waited} µs");
        // The CPU runs one task at a time: its spans never overlap, and add up to all demand.
        let cpu = spans(pid, thread(pid, "CPU 0"), "run");
        assert!(cpu.windows(2).all(|w| w[0].0 + w[0].1 <= w[1].0 + 1e-6), "overlapping spans on CPU 0: {cpu:?}");
        assert!((cpu.iter().map(|s| s.1).sum::<f64>() - 17000.0).abs() < 1e-6);
    }
    let rr = events.iter().find(|e| e["name"] == "process_name" && e["pid"] == 2).unwrap();
    assert!(rr["args"]["name"].as_str().unwrap().starts_with("rr"), "{rr}");
}

#[test]
fn a_workload_from_stdin_is_kept_in_the_run_directory_with_its_hash() {
    use std::io::Write;
    let d = tempfile::tempdir().unwrap();
    let saved = d.path().join("saved.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["sim", "run", "--workload", "-", "--policy", "fcfs", "--cpus", "2", "--json", "--save-workload"])
        .arg(&saved)
        .arg("--out")
        .arg(d.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(CLASSIC.replace(r#""cpus":1,"#, "").as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["results"]["cpus"], 2);
    // --save-workload keeps the CPU count the run used.
    let back: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(back["cpus"], 2, "{back}");
    // The run directory holds the same document, and results.json its SHA-256.
    let dir = std::fs::read_dir(d.path().join("sim-run")).unwrap().next().unwrap().unwrap().path();
    let copy = std::fs::read(dir.join("workload.json")).unwrap();
    assert_eq!(copy, std::fs::read(&saved).unwrap());
    let sha = Command::new("sha256sum").arg(dir.join("workload.json")).output().unwrap();
    let want = String::from_utf8_lossy(&sha.stdout).split_whitespace().next().unwrap().to_string();
    assert_eq!(doc["parameters"]["workload_sha256"], want.as_str());
}

#[test]
fn tables_fit_the_width_columns_gives() {
    let d = tempfile::tempdir().unwrap();
    for cols in ["60", "80", "120"] {
        let width: usize = cols.parse().unwrap();
        for args in [
            vec!["sim", "policies"],
            vec!["sim", "run", "--generate", "poisson:n=6", "--policy", "rr", "--policy", "cfs", "--tasks", "--out"],
        ] {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_schedlab"));
            cmd.args(&args).env("COLUMNS", cols);
            if args.last() == Some(&"--out") {
                cmd.arg(d.path());
            }
            let out = cmd.output().unwrap();
            assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
            let text = String::from_utf8(out.stdout).unwrap();
            let widest = text.lines().max_by_key(|l| l.chars().count()).unwrap_or_default();
            // The run directory's path is one word; it may be wider than a narrow terminal.
            let fits = |l: &&str| l.chars().count() <= width || l.starts_with("results: ");
            assert!(
                text.lines().all(|l| fits(&l)),
                "COLUMNS={cols} {args:?}: {} columns: {widest}",
                widest.chars().count()
            );
        }
    }
}

#[test]
fn the_gantt_of_a_thousand_tasks_stays_small_and_a_window_narrows_it() {
    let d = tempfile::tempdir().unwrap();
    let (full, part) = (d.path().join("full.svg"), d.path().join("part.svg"));
    for (svg, window) in [(&full, None), (&part, Some("100ms..300ms"))] {
        let mut args = vec!["sim", "run", "--generate", "poisson:n=1000,rate=150,mean=5ms,bursts=3,io=10ms,seed=2"];
        args.extend(["--cpus", "2", "--policy", "rr", "--policy", "cfs", "--gantt", svg.to_str().unwrap()]);
        if let Some(w) = window {
            args.extend(["--window", w]);
        }
        ok(&args, d.path());
    }
    let (full, part) = (std::fs::read_to_string(full).unwrap(), std::fs::read_to_string(part).unwrap());
    assert!(full.len() < 200_000, "the chart of 1,000 tasks is {} bytes", full.len());
    assert!(full.contains("… and 970 more"), "the legend is capped and says how many it left out");
    // The window's axis runs from 100 to 300 ms; the whole run's far beyond.
    let ticks = |s: &str| -> Vec<f64> {
        s.split(r#"text-anchor="middle">"#).skip(1).filter_map(|t| t.split('<').next()?.parse().ok()).collect()
    };
    let t = ticks(&part);
    assert!(t.iter().all(|&x| (100.0..=300.0).contains(&x)) && t.len() >= 3, "window ticks {t:?}");
    assert!(ticks(&full).iter().any(|&x| x > 1000.0));
    let o = schedlab(&["sim", "run", "--generate", "poisson:n=5", "--policy", "rr", "--window", "5ms..1ms"], d.path());
    assert_eq!(o.status.code(), Some(2), "a backwards window is a usage error");
}

#[test]
fn runs_are_recorded_in_the_database_and_no_save_writes_nothing() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("res");
    let bin = env!("CARGO_BIN_EXE_schedlab");
    let run = |extra: &[&str]| {
        let o = Command::new(bin)
            .args(["sim", "run", "--generate", "poisson:n=5", "--policy", "rr", "--json", "--out"])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    let doc = run(&["--no-save"]);
    assert_eq!(doc["experiment"], "sim-run", "--no-save still prints the document");
    assert!(!out.exists(), "--no-save wrote {}", out.display());
    run(&[]);
    let list =
        Command::new(bin).args(["results", "list", "--json", "--db"]).arg(out.join("schedlab.db")).output().unwrap();
    assert!(list.status.success(), "{}", String::from_utf8_lossy(&list.stderr));
    let runs: Value = serde_json::from_slice(&list.stdout).unwrap();
    let runs = runs["runs"].as_array().or_else(|| runs.as_array()).expect("a list of runs");
    assert_eq!(runs.len(), 1, "one saved run, one row: {runs:?}");
    assert_eq!(runs[0]["experiment"], "sim-run");
}

#[test]
fn results_compare_pairs_policies_by_name_and_shows_changed_parameters() {
    let d = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_schedlab");
    for order in [["rr:quantum=4ms", "fcfs"], ["fcfs", "rr:quantum=4ms"]] {
        let o = Command::new(bin)
            .args([
                "sim",
                "run",
                "--generate",
                "poisson:n=8,seed=3",
                "--policy",
                order[0],
                "--policy",
                order[1],
                "--out",
            ])
            .arg(d.path())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let o = Command::new(bin)
        .args(["results", "compare", "1", "2", "--json", "--db"])
        .arg(d.path().join("schedlab.db"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cmp: Value = serde_json::from_slice(&o.stdout).unwrap();
    let changed: Vec<&Value> = cmp["leaves"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["path"].as_str().unwrap().starts_with("results.policies"))
        .collect();
    assert!(changed.is_empty(), "the same policies in another order differ: {changed:?}");
    // The two runs' creation times differ when they fall in different seconds.
    let texts: Vec<&str> = cmp["text_changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["path"].as_str().unwrap())
        .filter(|p| *p != "created_utc")
        .collect();
    assert_eq!(texts, ["parameters.policies[0]", "parameters.policies[1]"], "the changed order is shown");
}

#[test]
fn a_yaml_workload_runs_like_its_json_twin() {
    let d = tempfile::tempdir().unwrap();
    let json = write(d.path(), "w.json", CLASSIC);
    let yaml = write(
        d.path(),
        "w.yaml",
        "cpus: 1\ntasks:\n  - {name: P1, arrival: 0, bursts: [24]}\n  - {name: P2, arrival: 0, bursts: [3]}\n  - {name: P3, arrival: 0, bursts: [3]}\n",
    );
    let results = |w: &str| {
        let o = ok(&["sim", "run", "--workload", w, "--policy", "rr:quantum=4ms", "--json"], d.path());
        serde_json::from_slice::<Value>(&o.stdout).unwrap()["results"].clone()
    };
    assert_eq!(results(&yaml), results(&json));
    let bad = write(d.path(), "bad.yaml", "tasks:\n  - {name: P1, burts: [24]}\n");
    let o = schedlab(&["sim", "run", "--workload", &bad, "--policy", "fcfs"], d.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("burts"), "the unknown field is named");
}

#[test]
fn format_csv_and_jsonl_print_the_tables_tidy() {
    let d = tempfile::tempdir().unwrap();
    let w = write(d.path(), "w.json", CLASSIC);
    let out = |format: &str| {
        let o = ok(
            &[
                "sim",
                "run",
                "--workload",
                &w,
                "--policy",
                "fcfs",
                "--policy",
                "rr:quantum=4ms",
                "--format",
                format,
                "--no-save",
            ],
            d.path(),
        );
        String::from_utf8(o.stdout).unwrap()
    };
    let csv = out("csv");
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("# Policies side by side (* = best in column)"));
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&header[..3], ["policy", "avg_waiting_ms", "avg_turnaround_ms"]);
    assert_eq!(lines.next().unwrap().split(',').nth(1), Some("17"), "FCFS waits 17 ms on average, no star");
    assert_eq!(lines.next().unwrap().split(',').nth(1), Some("5.667"), "RR's best value without its star");
    let rows: Vec<Value> = out("jsonl").lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["policy"], "rr:quantum=4ms");
    assert_eq!(rows[1]["avg_waiting_ms"].as_f64(), Some(5.667));
    assert!(rows[0]["table"].as_str().unwrap().starts_with("Policies side by side"));
    let as_json: Value = serde_json::from_str(&out("json")).unwrap();
    assert_eq!(as_json["experiment"], "sim-run", "--format json prints the results document, as --json does");
}

#[test]
fn convert_moves_a_workload_between_schedlab_yaml_and_rt_app() {
    let d = tempfile::tempdir().unwrap();
    let rtapp_example = format!("{}/../sim/tests/data/rtapp/example2.json", env!("CARGO_MANIFEST_DIR"));
    let convert_to = |input: &str, to: &str, out: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_schedlab"))
            .args(["sim", "convert", "--workload", input, "--to", to])
            .args(out)
            .output()
            .unwrap()
    };
    let convert = |input: &str, to: &str, out: &str| {
        let o = convert_to(input, to, &["-o", out]);
        assert!(o.status.success(), "{input} → {to}: {}", String::from_utf8_lossy(&o.stderr));
    };
    let p = |n: &str| d.path().join(n).to_str().unwrap().to_string();
    convert(&rtapp_example, "json", &p("a.json"));
    convert(&p("a.json"), "yaml", &p("a.yaml"));
    convert(&p("a.yaml"), "rtapp", &p("b.rtapp.json"));
    convert(&p("b.rtapp.json"), "json", &p("b.json"));
    assert_eq!(std::fs::read_to_string(p("a.json")).unwrap(), std::fs::read_to_string(p("b.json")).unwrap());
    // rt-app's example: 10 ms every 100 ms for 2 s is a periodic task of 20 jobs, and runs as one.
    let w: Value = serde_json::from_str(&std::fs::read_to_string(p("a.json")).unwrap()).unwrap();
    assert_eq!((w["tasks"][0]["period"].as_f64(), w["tasks"][0]["jobs"].as_u64()), (Some(100.0), Some(20)));
    let o = ok(&["sim", "run", "--workload", &rtapp_example, "--policy", "linux", "--json", "--no-save"], d.path());
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["results"]["policies"][0]["tasks"][0]["cpu"].as_f64(), Some(200.0), "20 jobs × 10 ms");
    // A lock over a whole CPU burst is an rt-app mutex around the run, and comes back.
    let locked = write(d.path(), "l.json", r#"{"tasks":[{"name":"A","bursts":[5],"locks":[{"name":"L","burst":0}]}]}"#);
    convert(&locked, "rtapp", &p("l.rtapp.json"));
    let text = std::fs::read_to_string(p("l.rtapp.json")).unwrap();
    assert!(text.contains(r#""lock": "L""#) && text.contains(r#""unlock": "L""#), "{text}");
    convert(&p("l.rtapp.json"), "json", &p("l2.json"));
    let back: Value = serde_json::from_str(&std::fs::read_to_string(p("l2.json")).unwrap()).unwrap();
    assert_eq!(back["tasks"][0]["locks"], serde_json::json!([{"name": "L", "burst": 0}]));
    // What rt-app cannot express is refused by name: a share weight.
    let weighted = write(d.path(), "w.json", r#"{"tasks":[{"name":"A","bursts":[5],"weight":3}]}"#);
    let o = convert_to(&weighted, "rtapp", &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("weight"), "{}", String::from_utf8_lossy(&o.stderr));
}
