//! `schedlab sim` for real-time users: `sim analyze` beside the simulator, per-job metrics and
//! `--on-miss` in `sim run`, and the policy list naming each policy's source.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn schedlab(args: &[&str], out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab")).args(args).arg("--out").arg(out).output().expect("run schedlab")
}

fn json_of(o: &Output) -> Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("one JSON document on stdout")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// (C, T) = (2, 5), (4, 7) ms: U = 0.971; rate monotonic misses, EDF does not.
const RM_FAILS: &str =
    r#"{"tasks":[{"name":"a","bursts":[2],"period":5,"jobs":10},{"name":"b","bursts":[4],"period":7,"jobs":10}]}"#;

#[test]
fn analyze_prints_each_bound_beside_the_simulated_worst_response() {
    let d = tempfile::tempdir().unwrap();
    let w = write(d.path(), "w.json", RM_FAILS);
    let doc = json_of(&schedlab(&["sim", "analyze", "--workload", &w, "--json"], d.path()));
    let r = &doc["results"];
    let tasks = r["analysis"]["tasks"].as_array().unwrap();
    // b under rm: R = 4 + ⌈R/5⌉·2 → 6 → 8 ms > D = 7 ms; the critical-instant run's worst is 8.
    assert_eq!(tasks[1]["rm"]["wcrt"], 8_000_000);
    assert_eq!(tasks[1]["rm"]["outcome"], "exceeds_deadline");
    assert_eq!(r["simulated_worst_response_ns"]["rm"][1], 8_000_000);
    assert_eq!(r["simulated_deadline_misses"]["edf"], 0);
    let verdicts = doc["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 2);
    for v in verdicts {
        assert_eq!((v["kind"].as_str(), v["status"].as_str()), (Some("goal"), Some("met")), "{v}");
    }
    assert_eq!(doc["parameters"]["workload"], w.as_str());
}

#[test]
fn analyze_refuses_a_task_it_cannot_analyse_naming_it() {
    let d = tempfile::tempdir().unwrap();
    let w = write(d.path(), "w.json", r#"{"tasks":[{"name":"oneshot","bursts":[3]}]}"#);
    let o = schedlab(&["sim", "analyze", "--workload", &w], d.path());
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("oneshot"), "{err}");
}

#[test]
fn run_reports_each_job_and_skips_late_releases_on_request() {
    let d = tempfile::tempdir().unwrap();
    // Period 10 ms, four jobs of 15 ms: every job overruns.
    let w = write(d.path(), "w.json", r#"{"tasks":[{"name":"late","bursts":[15],"period":10,"jobs":4}]}"#);
    let run = |on_miss: &str| {
        json_of(&schedlab(
            &["sim", "run", "--workload", &w, "--policy", "fcfs", "--on-miss", on_miss, "--jobs", "--json"],
            d.path(),
        ))
    };
    // continue: jobs finish at 15, 30, 45, 60 ms; responses 15, 20, 25, 30 ms.
    let doc = run("continue");
    let jobs = &doc["results"]["jobs"][0];
    let resp: Vec<u64> = jobs["jobs"].as_array().unwrap().iter().map(|j| j["response"].as_u64().unwrap()).collect();
    assert_eq!(resp, [15_000_000, 20_000_000, 25_000_000, 30_000_000]);
    assert_eq!(jobs["tasks"][0]["worst_response"], 30_000_000);
    assert_eq!(jobs["tasks"][0]["deadline_misses"], 4);
    // skip: job 0 runs 0–15, the release at 10 is skipped, job 2 runs 20–35, the one at 30 is
    // skipped.
    let doc = run("skip");
    let t = &doc["results"]["policies"][0]["tasks"][0];
    assert_eq!((t["jobs_done"].as_u64(), t["jobs_skipped"].as_u64()), (Some(2), Some(2)));
    assert_eq!(doc["parameters"]["on_miss"], "skip");
    // abort: each job runs until its deadline (0–10, 10–20, 20–30, 30–40) and is dropped.
    let doc = run("abort");
    let t = &doc["results"]["policies"][0]["tasks"][0];
    assert_eq!(
        (t["jobs_done"].as_u64(), t["jobs_aborted"].as_u64(), t["deadline_misses"].as_u64()),
        (Some(0), Some(4), Some(4))
    );
    assert_eq!(t["cpu"], 40.0);
    let o = schedlab(&["sim", "run", "--workload", &w, "--policy", "fcfs", "--on-miss", "drop"], d.path());
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn policies_names_the_source_each_policy_follows() {
    let o =
        Command::new(env!("CARGO_BIN_EXE_schedlab")).args(["sim", "policies"]).env("COLUMNS", "400").output().unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    for (name, source) in [
        ("solaris_ts", "ts_dptbl.c"),
        ("freebsd_ule", "sched_ule.c"),
        ("eevdf", "fair.c"),
        ("llf", "Mok 1983"),
        ("rm", "Liu & Layland 1973"),
    ] {
        let line = text.lines().find(|l| l.contains(name)).unwrap_or_else(|| panic!("{name} missing:\n{text}"));
        assert!(line.contains(source), "{name}: {line}");
    }
}
