//! `schedlab validate --replay`: the recordings of a validate run on this machine (2026-11-29,
//! one 5 s repeat each of nice-hogs, sleepers-vs-hog, fifo-over-other and deadline-beside-hogs,
//! kept in `fixtures/validate-run/recordings`) judged again without root or a live run. The
//! models are this build's, the runs the kernel's: a change to the `linux` model that no longer
//! predicts these four runs fails here, and CFS and round robin must still miss them (the
//! kernels differ visibly).

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/validate-run")
}

fn replay(extra: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["validate", "--json", "--no-save", "--replay"])
        .arg(fixture())
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "validate --replay failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not one JSON document: {e}"))
}

fn marks(doc: &Value) -> Vec<(String, String, String)> {
    doc["results"]["judgements"]
        .as_array()
        .expect("judgements")
        .iter()
        .map(|j| {
            let s = |k: &str| j[k].as_str().unwrap_or_default().to_string();
            (s("case"), s("model"), s("mark"))
        })
        .collect()
}

#[test]
fn the_linux_model_still_predicts_the_recorded_runs_and_cfs_and_rr_do_not() {
    let doc = replay(&[]);
    let marks = marks(&doc);
    let cases = ["nice-hogs", "sleepers-vs-hog", "fifo-over-other", "deadline-beside-hogs"];
    assert_eq!(marks.len(), 3 * cases.len(), "{marks:?}");
    for (case, model, mark) in &marks {
        assert!(cases.contains(&case.as_str()), "{case}");
        let expected = if model == "linux" { "met" } else { "missed" };
        assert_eq!(mark, expected, "{case} under {model}");
    }
    // The replay says where its runs came from and replays with the delays the live run probed.
    assert!(doc["parameters"]["replayed_from"].as_str().unwrap().ends_with("validate-run"));
    let linux = &doc["parameters"]["models"][0];
    assert!(linux["spec"].as_str().unwrap().starts_with("linux:"), "{linux}");
    assert!(linux["wake"]["preempt"]["values"].as_array().is_some_and(|v| v.len() == 16), "{linux}");
    // Each run's kernel readings came back with it: the shadow set the three hogs' places from
    // them hundreds of times and took the kernel's decisions (about 30% wrong from a start at
    // lag 0 without them, docs/validate.md).
    let runs = doc["results"]["runs"].as_array().unwrap();
    let shadow = &runs.iter().find(|r| r["case"] == "nice-hogs").unwrap()["shadow"];
    let n = |k: &str| shadow[k].as_u64().unwrap_or_else(|| panic!("{k} in {shadow}"));
    assert!(n("resyncs") > 100 && n("decisions") > 1_000, "{shadow}");
    assert!(n("wrong") * 50 < n("decisions"), "{shadow}");
    // The replay took its fair tasks' places from the first reading at which two of them waited
    // (once, on its one CPU); the two-CPU case's replays did not (their readings' frames differ).
    let places = |case: &str| {
        let run = runs.iter().find(|r| r["case"] == case).unwrap();
        let linux = run["models"].as_array().unwrap().iter().find(|m| m["label"] == "linux").unwrap();
        linux.get("places_set_ns").and_then(Value::as_array).map_or(0, Vec::len)
    };
    assert_eq!((places("nice-hogs"), places("deadline-beside-hogs")), (1, 0));
}

#[test]
fn cases_and_draws_can_be_chosen_and_an_unrecorded_case_is_named() {
    let doc = replay(&["--cases", "nice-hogs", "--draws", "1"]);
    let marks = marks(&doc);
    assert_eq!(marks.len(), 3, "{marks:?}");
    assert!(marks.iter().all(|(c, _, _)| c == "nice-hogs"));
    assert_eq!(doc["parameters"]["draws"], 1);
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["validate", "--no-save", "--cases", "rr-pair", "--replay"])
        .arg(fixture())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no recording of case 'rr-pair'") && err.contains("nice-hogs"), "{err}");
}

/// `trace import --json FILE`: (pid, CPU ns) of every task with at least 100 ms of CPU, and
/// how many lines were malformed.
fn heavy_tasks(file: &std::path::Path) -> (Vec<(i64, u64)>, u64) {
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["trace", "import", "--json", "--no-save"])
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "trace import {}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tasks = doc["results"]["report"]["tasks"].as_array().unwrap();
    let heavy = tasks
        .iter()
        .map(|t| (t["pid"].as_i64().unwrap(), t["cpu_ns"].as_u64().unwrap()))
        .filter(|&(_, ns)| ns >= 100_000_000)
        .collect();
    (heavy, doc["results"]["parse"]["malformed"].as_u64().unwrap())
}

#[test]
fn the_linux_replay_of_the_first_repeat_is_saved_as_a_trace_beside_the_live_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["validate", "--cases", "nice-hogs", "--draws", "1", "--replay"])
        .arg(fixture())
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "validate --replay failed: {}", String::from_utf8_lossy(&out.stderr));
    let run = std::fs::read_dir(dir.path().join("validate")).unwrap().next().unwrap().unwrap().path();
    let (live, live_bad) = heavy_tasks(&run.join("trace_nice-hogs.txt"));
    let (model, model_bad) = heavy_tasks(&run.join("trace_nice-hogs_linux.txt"));
    assert_eq!((live_bad, model_bad), (0, 0), "both traces read back whole");
    // The same three hogs, by their live pids, each with about the CPU it had live.
    assert_eq!(live.len(), 3, "{live:?}");
    let pids = |v: &[(i64, u64)]| v.iter().map(|t| t.0).collect::<Vec<_>>();
    assert_eq!(pids(&model), pids(&live), "the model's trace names the live tasks");
    for ((pid, a), (_, b)) in live.iter().zip(&model) {
        let diff = (*a as f64 - *b as f64).abs() / *a as f64;
        assert!(diff < 0.1, "pid {pid}: {a} ns live, {b} ns in the model's trace");
    }
}
