//! `schedlab sim sweep`: a sweep of 10,000 points killed with SIGKILL half-way and resumed
//! writes every point exactly once, with the rows an uninterrupted sweep writes; shards run as
//! separate processes and merged equal the whole sweep; the Parquet copy holds the same rows
//! (read back with pyarrow, which scripts/setup.sh installs); mistakes are usage errors.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn schedlab(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab")).current_dir(dir).args(args).output().unwrap()
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = schedlab(dir, args);
    assert!(out.status.success(), "schedlab {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// 2 policies × 50 rates × 100 seeds = 10,000 points of 300 tasks each.
const BIG: &str = "policies: [fcfs, 'rr:quantum=2ms']\ngenerate: 'poisson:n=300,mean=5ms'\n\
                   vary: {rate: [4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 68, 72, 76, 80, 84, 88, \
                   92, 96, 100, 104, 108, 112, 116, 120, 124, 128, 132, 136, 140, 144, 148, 152, 156, 160, 164, 168, \
                   172, 176, 180, 184, 188, 192, 196, 199]}\nseeds: 100\n";

fn lines(path: &Path) -> usize {
    std::fs::read(path).map(|b| b.iter().filter(|&&c| c == b'\n').count()).unwrap_or(0)
}

#[test]
fn a_sweep_killed_half_way_and_resumed_writes_every_point_exactly_once() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::write(d.join("big.yaml"), BIG).unwrap();
    let whole_dir = ["--dir", "whole", "--no-save", "--format", "json"];
    ok(d, &[&["sim", "sweep", "big.yaml"][..], &whole_dir].concat());
    let whole = std::fs::read_to_string(d.join("whole/rows.csv")).unwrap();
    assert_eq!(whole.lines().count(), 10_001, "a header and 10,000 rows");

    let mut child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .current_dir(d)
        .args(["sim", "sweep", "big.yaml", "--dir", "killed", "--no-save"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let rows = d.join("killed/rows.csv");
    let t0 = Instant::now();
    while lines(&rows) < 4_000 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the sweep ended before it could be killed: make its points heavier"
        );
        assert!(t0.elapsed() < Duration::from_secs(120), "no rows after two minutes");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let left = lines(&rows) - 1;
    assert!(left < 10_000, "killed half-way: {left} rows");
    assert!(!d.join("killed/rows.parquet").exists(), "no Parquet copy before the sweep is complete");

    let again = schedlab(d, &["sim", "sweep", "big.yaml", "--dir", "killed", "--no-save"]);
    assert_eq!(again.status.code(), Some(2), "an existing sweep is not overwritten without --resume");
    assert!(String::from_utf8_lossy(&again.stderr).contains("--resume"));
    let out =
        schedlab(d, &["sim", "sweep", "big.yaml", "--dir", "killed", "--no-save", "--resume", "--format", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &doc["parameters"]["run"];
    assert_eq!(run["points_kept"].as_u64().unwrap() + run["points_run"].as_u64().unwrap(), 10_000, "{run}");
    assert!(
        run["points_kept"].as_u64().unwrap() >= left as u64 - 1,
        "the rows written before the kill are kept: {run}"
    );
    let resumed = std::fs::read_to_string(&rows).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for line in resumed.lines().skip(1) {
        assert!(seen.insert(line.split(',').next().unwrap().to_string()), "a point written twice: {line}");
    }
    assert_eq!(seen.len(), 10_000);
    assert!(resumed == whole, "the resumed sweep's rows equal the uninterrupted sweep's, row for row");
}

#[test]
fn shards_in_separate_processes_merge_into_the_whole_sweep() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let grid = [
        "sim",
        "sweep",
        "--policy",
        "srtf",
        "--policy",
        "eevdf",
        "--generate",
        "poisson:n=100,mean=4ms",
        "--vary",
        "rate=50,150",
        "--cpus",
        "1,2",
        "--seeds",
        "3",
        "--no-save",
    ];
    ok(d, &[&grid[..], &["--dir", "whole"]].concat());
    for k in 1..=4 {
        let shard = format!("{k}/4");
        let dir = format!("part-{k}");
        ok(d, &[&grid[..], &["--dir", &dir, "--shard", &shard, "--jobs", "1"]].concat());
    }
    let merged = ok(
        d,
        &[
            "sim",
            "sweep",
            "--merge",
            "part-1",
            "--merge",
            "part-2",
            "--merge",
            "part-3",
            "--merge",
            "part-4",
            "--dir",
            "merged",
            "--format",
            "json",
            "--no-save",
        ],
    );
    let doc: serde_json::Value = serde_json::from_str(&merged).unwrap();
    let summary = doc["results"]["summary"]["avg_turnaround_ms"].as_array().unwrap();
    assert_eq!(summary.len(), 2 * 2 * 2, "policies × rates × cpus, each over 3 seeds");
    assert!(
        summary.iter().all(|r| r["seeds"] == 3 && r["avg_turnaround_ms_mean"].as_f64().unwrap() > 0.0),
        "{summary:?}"
    );
    let read = |p: &str| std::fs::read_to_string(d.join(p)).unwrap();
    assert_eq!(read("merged/rows.csv"), read("whole/rows.csv"));
    assert_eq!(read("whole/rows.csv").lines().count(), 1 + 2 * 2 * 2 * 3);
    let missing =
        schedlab(d, &["sim", "sweep", "--merge", "part-1", "--merge", "part-2", "--dir", "half", "--no-save"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("missing"));

    if !common::pyarrow::require("reading a sweep's Parquet rows with pyarrow") {
        return;
    }
    const READ: &str = "import sys, json, pyarrow.parquet as pq\nt = pq.read_table(sys.argv[1])\n\
                        print(json.dumps({'rows': t.num_rows, 'policy': str(t.schema.field('policy').type), \
                        'turnaround': str(t.schema.field('avg_turnaround_ms').type), 'index': t.column('index').to_pylist()}))";
    let out = Command::new("python3").args(["-c", READ]).arg(d.join("merged/rows.parquet")).output().unwrap();
    assert!(out.status.success(), "pyarrow: {}", String::from_utf8_lossy(&out.stderr));
    let pq: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (pq["rows"].as_u64(), pq["policy"].as_str(), pq["turnaround"].as_str()),
        (Some(24), Some("string"), Some("double"))
    );
    assert_eq!(pq["index"], serde_json::json!((0..24).collect::<Vec<_>>()));
}

#[test]
fn scaling_is_measured_on_identical_rows_and_mistakes_are_usage_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let out = ok(
        d,
        &[
            "sim",
            "sweep",
            "--policy",
            "fcfs",
            "--generate",
            "poisson:n=200",
            "--vary",
            "rate=50,100",
            "--seeds",
            "4",
            "--measure-scaling",
            "--scaling-runs",
            "2",
            "--jobs",
            "2",
            "--format",
            "json",
            "--no-save",
        ],
    );
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["results"]["rows_identical"], true);
    assert_eq!(doc["results"]["points"], 8);
    assert_eq!(doc["results"]["ratios"].as_array().map(Vec::len), Some(2), "{}", doc["results"]);
    let goal = &doc["verdicts"][0];
    assert_eq!(goal["kind"], "goal", "{goal}");
    assert!(["met", "not_met", "inconclusive"].contains(&goal["status"].as_str().unwrap_or("")), "{goal}");
    assert!(!d.join("sweep").exists(), "--measure-scaling writes no rows");
    for (args, words) in [
        (&["sim", "sweep", "--policy", "nosuch", "--generate", "poisson"][..], "nosuch"),
        (&["sim", "sweep", "--policy", "fcfs", "--generate", "poisson", "--vary", "rate"][..], "KEY=V1"),
        (&["sim", "sweep", "--policy", "fcfs", "--generate", "poisson:seed=3"][..], "seeds"),
        (&["sim", "sweep", "--policy", "fcfs", "--generate", "poisson", "--metric", "speed"][..], "avg_waiting_ms"),
        (&["sim", "sweep", "--policy", "fcfs", "--generate", "poisson", "--resume", "--dir", "none"][..], "no sweep"),
        (&["sim", "sweep", "--policy", "fcfs", "--generate", "poisson", "--shard", "5/4"][..], "K/N"),
    ] {
        let out = schedlab(d, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(words), "{args:?}: {err}");
    }
}
