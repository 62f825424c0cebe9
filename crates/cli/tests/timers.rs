//! `schedlab timers`: the must-show outputs of seed 000's area, run through the built binary.
//! These run live (real threads, a 1 ms ticker) at --quick scale: a few seconds each.

use serde_json::Value;
use std::process::{Command, Output};
use std::sync::Mutex;

/// Live runs take turns: a busy ticker spinning on one of two CPUs would otherwise show up
/// as another test's wake lateness.
static LIVE: Mutex<()> = Mutex::new(());

fn schedlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab")).args(args).output().expect("run schedlab")
}

fn json_of(args: &[&str]) -> Value {
    let out = schedlab(args);
    assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{args:?}: stdout is not one JSON document ({e}): {}", String::from_utf8_lossy(&out.stdout))
    })
}

fn rejects(args: &[&str], named: &str) {
    let out = schedlab(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} should fail");
    assert!(err.contains(named), "{args:?}: error should name '{named}': {err}");
    assert!(out.stdout.is_empty(), "{args:?}: nothing should run: {}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn reproduce_quick_json_has_every_queue_and_delta_beats_control() {
    let _turn = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let doc = json_of(&["timers", "reproduce", "--quick", "--json", "--out", out]);
    for q in ["control", "delta", "heap", "wheel"] {
        let e = &doc["results"]["queues"][q];
        for field in ["peak_rss_kb", "real_s", "user_s", "sys_s", "timer_ops"] {
            assert!(e[field].is_number(), "{q}.{field} missing: {e}");
        }
        for p in ["p50", "p99", "max"] {
            assert!(e["lateness_us"][p].as_f64().unwrap() >= 0.0, "{q} woke early: {}", e["lateness_us"]);
        }
        assert!(e["peak_rss_kb"].as_f64().unwrap() > 0.0);
        assert_eq!(e["trials"].as_array().unwrap().len(), 3);
    }
    let ops = |q: &str| doc["results"]["queues"][q]["timer_ops"].as_f64().unwrap();
    assert!(ops("delta") < ops("control"), "delta {} vs control {}", ops("delta"), ops("control"));
    // The control list touches every entry every tick: exactly Γ = Σx.
    assert_eq!(ops("control"), doc["results"]["queues"]["control"]["sum_x_ticks"].as_f64().unwrap());
    assert!(doc["results"]["scale_note"].as_str().unwrap().contains("divided by 20"));
    assert!(doc["machine"]["kernel"].is_string());
    // The run directory holds the same document.
    let runs: Vec<_> = std::fs::read_dir(dir.path().join("timers")).unwrap().collect();
    assert_eq!(runs.len(), 1);
    let run = runs[0].as_ref().unwrap().path();
    assert!(run.join("results.json").exists() && run.join("table1.csv").exists());
}

/// The wheel-driven sleep service wakes its sleepers on the tick after their time: the median
/// lateness is under one tick (1 ms at --quick); that none wakes early is the service's unit
/// test (`every_queue_wakes_every_sleeper_never_early`). The tail (the goal
/// "p99 ≤ 2 ms") is a verdict of `timers reproduce`, not of this test: on a shared VM the host
/// stalls every thread for 4–17 ms at times (CI saw p99 of 5–10 ms in three runs in a row while
/// the median stayed at 110 µs), so a short run's p99 measures the host. A wheel that rounds a
/// deadline to a coarser level, or fires a slot late, is late at the median too.
#[test]
fn wheel_sleep_mode_wakes_within_a_tick_at_the_median() {
    let _turn = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["timers", "reproduce", "--quick", "--json", "--tick-mode", "sleep", "--queues", "wheel"];
    // As root (CI), ticker and sleepers run SCHED_FIFO so the other tests' compiles and spins
    // on this 2-core machine do not set the number; without root they run SCHED_OTHER.
    if schedlab_os::is_root() {
        args.extend(["--rt-priority", "10"]);
    }
    args.extend(["--out", dir.path().to_str().unwrap()]);
    let doc = json_of(&args);
    assert!(doc["results"]["queues"]["control"].is_null(), "only the chosen queue runs");
    let late = &doc["results"]["queues"]["wheel"]["lateness_us"];
    eprintln!("wheel lateness (µs): {late}");
    let (p50, p99, max) = (late["p50"].as_f64().unwrap(), late["p99"].as_f64().unwrap(), late["max"].as_f64().unwrap());
    assert!(p50 >= 0.0 && p50 <= p99 && p99 <= max, "percentiles out of order: {late}");
    assert!(p50 < 1000.0, "the median sleeper woke more than a 1 ms tick late: {late}");
}

#[test]
fn bench_json_reports_every_implementation_and_the_ratio() {
    let _turn = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let doc = json_of(&[
        "timers",
        "bench",
        "--json",
        "--sizes",
        "5000,50000",
        "--rounds",
        "1",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let r = &doc["results"];
    // At the largest size: 50,000 inserts, 5,000 cancels, 45,000 expiries, each implementation
    // timed once, phase by phase.
    assert_eq!(r["verdict_timers"].as_u64(), Some(50_000));
    assert_eq!((r["expired_per_run"].as_u64(), r["ops_per_run"].as_u64()), (Some(45_000), Some(100_000)));
    let peers = ["bitwheel", "hierarchical_hash_wheel_timer", "tokio_delayqueue", "std_binaryheap"];
    for imp in ["schedlab_wheel", "schedlab_heap"].iter().chain(&peers) {
        let e = &r["implementations"][imp];
        assert_eq!(e["round_s"].as_array().map(Vec::len), Some(1), "{imp}");
        for op in ["insert", "cancel", "expiry"] {
            assert!(e[format!("ns_per_{op}")].as_f64().unwrap() > 0.0, "{imp} {op}");
        }
    }
    assert_eq!(r["by_size"].as_array().map(Vec::len), Some(2), "one document per size");
    assert!(peers.contains(&r["best_peer"].as_str().unwrap()), "{r}");
    // The verdict judges the printed ratio against our goal of at least 1.0×.
    let ratio = r["wheel_vs_best_peer"].as_f64().unwrap();
    let verdict = &doc["verdicts"][0];
    let detail = verdict["detail"].as_str().unwrap();
    assert!(detail.starts_with(&format!("wheel_vs_best_peer = {ratio:.2} (best peer: ")), "{verdict}");
    let expected = if ratio >= 1.0 { "met" } else { "not_met" };
    assert_eq!((verdict["kind"].as_str(), verdict["status"].as_str()), (Some("goal"), Some(expected)), "{verdict}");
}

#[test]
fn scale_writes_csv_and_log_log_svg() {
    let dir = tempfile::tempdir().unwrap();
    let doc = json_of(&["timers", "scale", "--max-n", "1000", "--json", "--out", dir.path().to_str().unwrap()]);
    assert_eq!(doc["results"]["cells"].as_array().unwrap().len(), 8, "2 sizes × 4 queues");
    let run = std::fs::read_dir(dir.path().join("timers-scale")).unwrap().next().unwrap().unwrap().path();
    let csv = std::fs::read_to_string(run.join("scale.csv")).unwrap();
    assert!(csv.starts_with("queue,n,ns_per_insert,ns_per_cancel,ns_per_tick,ns_per_expiry"));
    assert!(std::fs::read_to_string(run.join("scale_tick.svg")).unwrap().starts_with("<svg"));
}

#[test]
fn scale_says_where_a_series_stops() {
    let dir = tempfile::tempdir().unwrap();
    let out =
        schedlab(&["timers", "scale", "--max-n", "100000", "--budget", "1us", "--out", dir.path().to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("control stopped before N=1000"), "{text}");
}

#[test]
fn bad_input_is_rejected_naming_the_value() {
    rejects(&["timers", "reproduce", "--tick", "0ms"], "0ms");
    rejects(&["timers", "reproduce", "--tick=-1ms"], "-1ms");
    rejects(&["timers", "reproduce", "--tick", "5"], "'5'");
    rejects(&["timers", "reproduce", "--queues", "control,splay"], "splay");
    rejects(&["timers", "reproduce", "--tick-mode", "lazy"], "lazy");
    rejects(&["timers", "reproduce", "--array", "fig11"], "fig11");
    rejects(&["timers", "reproduce", "--trials", "0"], "0");
    rejects(&["timers", "reproduce", "--rt-priority", "99", "--tick-mode", "sleep"], "99");
    rejects(&["timers", "reproduce", "--rt-priority", "10", "--tick-mode", "busy"], "--tick-mode sleep");
    rejects(&["timers", "scale", "--max-n", "0"], "N = 0");
    rejects(&["timers", "scale", "--max-n", "50"], "N = 50");
    rejects(&["timers", "scale", "--max-n", "lots"], "'lots'");
    rejects(&["timers", "bench", "--timers", "0"], "N = 0");
    rejects(&["timers", "bench", "--sizes", "1000,0"], "N = 0");
    rejects(&["timers", "bench", "--sizes", "1000,many"], "'many'");
}

#[test]
fn reproduce_registry_runs_the_timers_experiment() {
    let _turn = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("index.html");
    let out = dir.path().to_str().unwrap();
    let doc = json_of(&[
        "reproduce",
        "--quick",
        "--only",
        "timers",
        "--json",
        "--out",
        out,
        "--report",
        report.to_str().unwrap(),
    ]);
    let s = &doc["sections"][0];
    assert_eq!(s["experiment"], "timers");
    assert_eq!(s["status"]["state"], "completed", "{}", s["status"]);
    let claims: Vec<&str> = s["verdicts"].as_array().unwrap().iter().map(|v| v["claim"].as_str().unwrap()).collect();
    assert!(claims.iter().any(|c| c.contains("fewer timer operations")), "{claims:?}");
    assert!(claims.iter().any(|c| c.contains("lateness")), "{claims:?}");
    assert!(s["figures"].as_array().unwrap().len() >= 4);
    for q in ["control", "delta", "heap", "wheel"] {
        assert!(s["data"]["results"]["queues"][q]["timer_ops"].is_number(), "{q}");
        assert!(s["data"]["results"]["sleep_mode"]["queues"][q]["lateness_us"]["p99"].is_number(), "{q}");
    }
    assert!(s["data"]["results"]["scale"]["cells"].as_array().unwrap().len() >= 8);
}
