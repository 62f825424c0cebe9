//! `schedlab trace shadow` on a recorded trace (the trace crate's fixture of sleepers-vs-hog on
//! this 6.18 VM): the JSON results count the decisions it judged and how many the model's rules
//! got wrong, and what it cannot follow it refuses with a message that says why. Needs no root.

use serde_json::Value;
use std::io::Read;
use std::process::{Command, Output};

fn fixture() -> String {
    format!("{}/../trace/tests/fixtures/capture/sleepers-vs-hog.txt", env!("CARGO_MANIFEST_DIR"))
}

fn shadow(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(["trace", "shadow", &fixture(), "--no-save"])
        .args(args)
        .output()
        .expect("schedlab runs")
}

#[test]
fn the_json_counts_the_decisions_and_the_wrong_ones() {
    let out = shadow(&["--tasks", "7038,7039,7040", "--from-ms", "500", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let r = &v["results"];
    let (judged, wrong) = (r["decisions"].as_u64().unwrap(), r["wrong"].as_u64().unwrap());
    assert!(judged > 500 && wrong * 25 <= judged, "{r}");
    assert!(r["wrong_near_ties"].as_u64().unwrap() <= wrong && r["picks"].as_u64().unwrap() > 500, "{r}");
    // Without DELAY_ZERO the same trace is followed with several times the wrong decisions.
    let out = shadow(&["--tasks", "7038,7039,7040", "--from-ms", "500", "--json", "--policy", "eevdf:delay_zero=0"]);
    let off: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(off["results"]["wrong"].as_u64().unwrap() >= 3 * wrong, "{}", off["results"]);
}

#[test]
fn what_it_cannot_follow_it_refuses_and_says_why() {
    for (args, says) in [
        (vec!["--tasks", "nosuch"], "no task named `nosuch`"),
        (vec!["--tasks", "7038", "--policy", "cfs"], "expected `eevdf"),
        (vec!["--tasks", "7038", "--tick", "1ms"], "give --tick off"),
        (vec!["--tasks", "7038", "--log-ms", "5,1"], "below TO"),
        (vec!["--tasks", "7038", "--positions", &fixture()], "expected `trace_ns tid vruntime_ns exec_start_ns`"),
    ] {
        let out = shadow(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn the_log_lists_the_events_of_its_span() {
    let out = shadow(&["--tasks", "7038,7039,7040", "--log-ms", "740,745", "--show", "0"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("7038 is switched in") && text.contains("tick:"), "{text}");
}

/// The trace crate's drift fixture (a hog and a pipe pair, 0.5 s) with the kernel's positions
/// read beside it: `--positions` sets the shadow's places to them and counts how often.
#[test]
fn positions_set_the_places_and_the_results_count_how_often() {
    let dir = tempfile::tempdir().unwrap();
    let capture = format!("{}/../trace/tests/fixtures/capture", env!("CARGO_MANIFEST_DIR"));
    let mut text = String::new();
    let gz = std::fs::File::open(format!("{capture}/pingpong-hog-drift.txt.gz")).unwrap();
    flate2::read::GzDecoder::new(gz).read_to_string(&mut text).unwrap();
    let trace = dir.path().join("trace.txt");
    std::fs::write(&trace, text).unwrap();
    let positions = format!("{capture}/pingpong-hog-positions.txt");
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
            .args(["trace", "shadow", trace.to_str().unwrap(), "--no-save", "--tasks", "11786,11787,11789"])
            .args(["--from-ms", "50", "--json"])
            .args(extra)
            .output()
            .expect("schedlab runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).expect("JSON")
    };
    let (alone, set) = (run(&[]), run(&["--positions", &positions]));
    let wrong = |v: &Value| v["results"]["wrong"].as_u64().unwrap();
    assert!(wrong(&set) * 10 <= wrong(&alone), "{} wrong with the positions, {} without", wrong(&set), wrong(&alone));
    let r = &set["results"];
    assert!(r["places_set"].as_u64().unwrap() >= 10 && r["positions_read"].as_u64().unwrap() >= 60, "{r}");
    assert_eq!(alone["results"]["places_set"].as_u64(), Some(0));
}
