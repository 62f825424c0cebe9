//! `schedlab livelock`: bad input is refused with the value named, ports are checked, the model
//! and the sweep print what the issue promises, and (as root) the live system livelocks with
//! interrupts, not with napi, runs as three processes and stops on Ctrl-C.

use serde_json::Value;
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Tests run one at a time: the live ones measure, and parallel tests would disturb them.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn schedlab(args: &[&str]) -> Output {
    let out = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_schedlab")).args(args).arg("--out").arg(out.path()).output().expect("run schedlab")
}

fn refused(args: &[&str], needle: &str) {
    let o = schedlab(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{args:?} should fail");
    assert!(err.contains(needle), "{args:?}: error should name {needle:?}: {err}");
}

/// Live tests need root; in CI (CI=true) not being root is a failure, elsewhere a skip.
fn can_run_live() -> bool {
    schedlab_os::root_for_test("the live livelock pipeline")
}

#[test]
fn bad_parameters_are_rejected_with_the_value_named() {
    let _serial = serial();
    refused(&["livelock", "live", "--wait", "0s"], "wait: 0");
    refused(&["livelock", "live", "--wait", "-0.25s"], "-0.25s");
    refused(&["livelock", "live", "--wait", "0.001"], "no unit");
    refused(&["livelock", "kernel", "--perc-occup", "150"], "150");
    refused(&["livelock", "live", "--perc-occup", "-5"], "perc_occup: -5");
    refused(&["livelock", "apps", "--sz", "0"], "sz: 0");
    refused(&["livelock", "device", "--fun", "zigzag"], "zigzag");
    refused(&["livelock", "live", "--fun", "poisson", "--lambda", "0"], "lambda: 0");
    refused(&["livelock", "live", "--kernel-port", "47000", "--app-port", "47001"], "47001");
    refused(&["livelock", "live", "--irq-prio", "40", "--softirq-prio", "50"], "40");
    refused(&["livelock", "model", "--input-pps", "0"], "0");
    refused(&["livelock", "sweep", "--mode", "dream"], "dream");
    refused(&["livelock", "model", "--preset", "vax"], "vax");
    refused(&["livelock", "sweep", "--config", "python"], "python");
    refused(&["livelock", "sweep", "--config", "seed", "--mode", "model"], "live only");
    refused(&["livelock", "live", "--threads", "many"], "many");
}

#[test]
fn a_port_in_use_is_named() {
    let _serial = serial();
    let taken = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let o = schedlab(&[
        "livelock",
        "apps",
        "--dev",
        "1",
        "--app-port",
        &port.to_string(),
        "--kernel-port",
        "1024",
        "--maxtime",
        "1s",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains(&format!("port {port}")) && err.contains("in use"), "{err}");
}

#[test]
fn the_model_reproduces_the_paper_points() {
    let _serial = serial();
    let run = |strategy: &str, quota: &str, input: &str| -> f64 {
        let o = schedlab(&[
            "livelock",
            "model",
            "--preset",
            "mogul96",
            "--strategy",
            strategy,
            "--quota",
            quota,
            "--input-pps",
            input,
            "--duration",
            "1s",
            "--json",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["results"]["result"]["delivered_pps"].as_f64().unwrap()
    };
    assert!((run("interrupt", "5", "4700") / 4700.0 - 1.0).abs() < 0.10);
    assert!(run("interrupt", "5", "10700") < 2000.0);
    assert!((run("napi", "5", "10700") / 5150.0 - 1.0).abs() < 0.10);
    assert!(run("napi", "20", "10000") < run("napi", "10", "10000"));
}

fn check_points(v: &Value, modes: &[&str]) -> Vec<Value> {
    let points = v["results"]["points"].as_array().expect("a points array").clone();
    assert!(!points.is_empty());
    for p in &points {
        assert!(modes.contains(&p["mode"].as_str().unwrap()), "{p}");
        for k in ["strategy", "offered_pps", "delivered_pps", "lost", "buffer_fills", "switches"] {
            assert!(!p[k].is_null(), "point lacks {k}: {p}");
        }
        for k in ["p50", "p99", "max"] {
            assert!(p["latency_us"][k].is_number(), "point lacks latency_us.{k}: {p}");
        }
    }
    for s in ["interrupt", "polling", "hybrid", "napi"] {
        assert!(points.iter().any(|p| p["strategy"] == s), "no {s} points");
    }
    points
}

#[test]
fn the_model_sweep_prints_one_json_document() {
    let _serial = serial();
    let o = schedlab(&["livelock", "sweep", "--quick", "--json", "--mode", "model"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("stdout is exactly one JSON document");
    assert_eq!(v["experiment"], "livelock");
    check_points(&v, &["model"]);
    assert!(v["results"]["paper_model"]["fig6_3"].as_array().unwrap().len() == 5);
}

/// (peak, delivered at the highest offered load) of one live strategy.
fn peak_tail(points: &[Value], strategy: &str) -> (f64, f64) {
    let pts: Vec<&Value> = points.iter().filter(|p| p["mode"] == "live" && p["strategy"] == strategy).collect();
    let peak = pts.iter().map(|p| p["delivered_pps"].as_f64().unwrap()).fold(0.0, f64::max);
    let top = pts
        .iter()
        .max_by(|a, b| a["offered_pps"].as_f64().unwrap().total_cmp(&b["offered_pps"].as_f64().unwrap()))
        .unwrap();
    (peak, top["delivered_pps"].as_f64().unwrap())
}

#[test]
fn live_sweep_shows_livelock_and_its_cure() {
    let _serial = serial();
    if !can_run_live() {
        return;
    }
    let o = schedlab(&["livelock", "sweep", "--quick", "--json", "--kernel-port", "47200", "--app-port", "47300"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    let points = check_points(&v, &["live", "model"]);
    let (ip, it) = peak_tail(&points, "interrupt");
    let (np, nt) = peak_tail(&points, "napi");
    let (_, ht) = peak_tail(&points, "hybrid");
    assert!(it < 0.30 * ip, "interrupt livelocks: peak {ip}, at the highest load {it}");
    // Saturated, what napi delivers varies ±10% from run to run here (4 runs: 0.95–1.00 of the
    // peak; once 0.89 in CI), while interrupt collapses below 0.3: "holds" is 0.75 and up.
    assert!(nt >= 0.75 * np, "napi holds: peak {np}, at the highest load {nt}");
    assert!(ht >= it, "hybrid does not fall below interrupt: {ht} vs {it}");
}

/// The seed's configuration: equal-priority threads time-share the kernel CPU, so a flood does
/// not stop delivery (as priorities do) but takes the delivery thread's share down to one
/// thread in four (3 receiving threads + 1): interrupt falls past its knee and stays well above
/// zero; polling, with no receiving threads, delivers what one CPU's delivery work allows.
#[test]
fn seed_configuration_time_shares_the_kernel_cpu() {
    let _serial = serial();
    if !can_run_live() {
        return;
    }
    let o = schedlab(&[
        "livelock",
        "sweep",
        "--config",
        "seed",
        "--quick",
        "--json",
        "--strategies",
        "interrupt,polling",
        "--kernel-port",
        "47200",
        "--app-port",
        "47300",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(v["parameters"]["config"], "seed");
    assert_eq!(v["parameters"]["base"]["threads"], "equal");
    let points = v["results"]["points"].as_array().unwrap().clone();
    assert!(points.iter().all(|p| p["mode"] == "live"), "the seed configuration runs live only");
    let c = &v["parameters"]["base"]["costs"];
    let ns = |k: &str| c[k].as_f64().unwrap();
    let knee = 1e9 / (ns("irq_ns") + ns("proto_ns") + ns("deliver_ns"));
    assert!((knee - 250.0).abs() < 1.0, "costs scaled to the seed's knee: {c}");
    let (ip, it) = peak_tail(&points, "interrupt");
    // One CPU of work per 4 ms packet: the peak lies near 250 pkt/s (the quick grid has 205
    // and 338 around it).
    assert!((170.0..=280.0).contains(&ip), "interrupt peaks near the calibrated knee: {ip}");
    assert!(it < 0.95 * ip && it > 0.3 * ip, "interrupt degrades without livelocking: peak {ip}, top {it}");
    let (pp, pt) = peak_tail(&points, "polling");
    let polling_max = 1e9 / (ns("proto_ns") + ns("deliver_ns"));
    assert!(pt > 0.8 * polling_max && pp < 1.05 * polling_max, "polling: top {pt}, one CPU allows {polling_max}");
    let kinds: Vec<&str> = v["verdicts"].as_array().unwrap().iter().map(|v| v["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"calibration") && kinds.contains(&"seed_claim"), "{kinds:?}");
}

#[test]
fn three_separate_processes_like_the_seeds_terminals() {
    let _serial = serial();
    if !can_run_live() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let common = [
        "--dev",
        "2",
        "--kernel-port",
        "47400",
        "--app-port",
        "47500",
        "--maxtime",
        "1s",
        "--lag",
        "300ms",
        "--grace",
        "5s",
        "--wait",
        "2ms",
        "--json",
    ];
    let spawn = |role: &str| {
        Command::new(env!("CARGO_BIN_EXE_schedlab"))
            .args(["livelock", role])
            .args(common)
            .arg("--out")
            .arg(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let apps = spawn("apps");
    std::thread::sleep(Duration::from_millis(300));
    let kernel = spawn("kernel");
    std::thread::sleep(Duration::from_millis(300));
    let dev = spawn("device").wait_with_output().unwrap();
    let kernel = kernel.wait_with_output().unwrap();
    let apps = apps.wait_with_output().unwrap();
    for (name, o) in [("device", &dev), ("kernel", &kernel), ("apps", &apps)] {
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
    }
    let d: Value = serde_json::from_slice(&dev.stdout).unwrap();
    let a: Value = serde_json::from_slice(&apps.stdout).unwrap();
    let sent: u64 = d["results"]["report"]["sent"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).sum();
    let got: u64 = a["results"]["report"]["received"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).sum();
    // The offered rate is measured, not assumed: a busy CPU delays sleeping senders.
    assert!(sent > 500, "2 devices × 500 pkt/s × 1 s: {sent}");
    assert!(got as f64 >= 0.95 * sent as f64, "napi at light load delivers: {got} of {sent}");
}

#[test]
fn ctrl_c_stops_every_role() {
    let _serial = serial();
    if !can_run_live() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args([
            "livelock",
            "live",
            "--maxtime",
            "60s",
            "--wait",
            "1ms",
            "--kernel-port",
            "47600",
            "--app-port",
            "47700",
            "--out",
        ])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let t = Instant::now();
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    assert!(t.elapsed() < Duration::from_secs(5), "stopped in {:?}", t.elapsed());
    assert!(!out.status.success());
    // The ports are free again: every role has ended.
    std::net::UdpSocket::bind("127.0.0.1:47600").unwrap();
    std::net::UdpSocket::bind("127.0.0.1:47700").unwrap();
}
