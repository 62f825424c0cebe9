//! `schedlab policies run` end to end: the quick sweep's JSON, input checks before anything is
//! spawned, running without root, timeouts and SIGTERM killing and reaping every child, and
//! `--trace`. Live tests need root; CI runs as root, so there a missing root fails loudly.

mod common;

use common::trace_event;
use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn schedlab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
}

static MACHINE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Root (or a skip), and the machine to ourselves: live runs lock the CPUs they use, so a
/// second one at the same time would be refused.
fn root_or_skip() -> Option<std::sync::MutexGuard<'static, ()>> {
    schedlab_os::root_for_test("the live policy benchmark").then(|| MACHINE.lock().unwrap_or_else(|p| p.into_inner()))
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("running schedlab")
}

fn json_of(out: &Output) -> Value {
    assert!(out.status.success(), "schedlab failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

/// Processes whose command line contains `marker` (children left behind would show up here).
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(marker) && cmd.contains("schedlab-work") {
            found.push(format!("{}: {cmd}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

#[test]
fn quick_json_has_every_case_and_fifo_is_rarely_preempted() {
    let Some(_machine) = root_or_skip() else {
        return;
    };
    let out_dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let out = run(schedlab().args(["policies", "run", "--quick", "--json", "--out"]).arg(out_dir.path()));
    let doc = json_of(&out);
    assert!(start.elapsed() < Duration::from_secs(90), "--quick took {:?}", start.elapsed());
    let cases = doc["results"]["cases"].as_array().expect("cases array");
    assert_eq!(cases.len(), 2 * 3 * 4, "quick = 2 process counts × 3 policies × 3 workloads and `empty`");
    for c in cases {
        for key in [
            "policy",
            "workload",
            "procs",
            "sys_s",
            "user_s",
            "voluntary_ctx",
            "involuntary_ctx",
            "wall_s",
            "turnaround_p50_s",
        ] {
            assert!(!c[key].is_null(), "case lacks {key}: {c}");
        }
        assert_eq!(c["completed"], c["procs"], "every child should finish: {c}");
        assert!(c["user_s"].as_f64().unwrap() > 0.0 || c["workload"] == "io" || c["workload"] == "empty", "{c}");
        assert!(c["wall_s"].as_f64().unwrap() > 0.0);
    }
    // The seed's headline: FIFO is pre-empted far less than OTHER (cpu workload).
    for n in [50, 200] {
        let get = |p: &str| {
            cases.iter().find(|c| c["policy"] == p && c["workload"] == "cpu" && c["procs"] == n).unwrap()
                ["avg_involuntary_ctx"]
                .as_f64()
                .unwrap()
        };
        assert!(get("fifo") < get("other"), "{n} procs: fifo {} vs other {}", get("fifo"), get("other"));
    }
    // Files: results.json, CSV, the seed layout and one pair of charts per process count.
    let run_dir = std::fs::read_dir(out_dir.path().join("policies")).unwrap().next().unwrap().unwrap().path();
    for f in ["results.json", "cases.csv", "table_data.txt", "avg_time_50.svg", "avg_ctx_200.svg"] {
        assert!(run_dir.join(f).exists(), "{f} missing in {}", run_dir.display());
    }
    let text = std::fs::read_to_string(run_dir.join("table_data.txt")).unwrap();
    assert!(text.contains("Scheduling Policy:    SCHED_FIFO") && text.contains("Average Involuntary"));
    assert_eq!(doc["results"]["predictions"]["available"], true);
    assert!(doc["verdicts"].as_array().unwrap().len() >= 4);
}

#[test]
fn bad_input_is_rejected_before_anything_is_spawned() {
    let out_dir = tempfile::tempdir().unwrap();
    let cpus = schedlab_os::affinity::online_cpus();
    let every_cpu = format!("0-{}", cpus - 1);
    let rt_everywhere: &[&str] = &["--policy", "fifo", "--cpus", &every_cpu];
    let mut cases: Vec<(&[&str], &str)> = vec![
        (&["--timeout", "1e99s"], "1e99s"),
        (&["--timeout", "25h"], "25h"),
        (&["--cpus", "3-1"], "3-1"),
        (&["--cpus", "4000"], "4000"),
        (&["--policy", "other,fast"], "fast"),
        (&["--procs", "100,0"], "0"),
        (&["--policy", "fifo", "--priority", "0"], "0"),
        (&["--policy", "rr", "--priority", "150"], "150"),
        (&["--policy", "fifo", "--priority", "99"], "99"),
        (&["--workload", "gpu"], "gpu"),
        (&["--unpinned", "--cpus", "1"], "--unpinned"),
    ];
    if cpus > 1 {
        // Real-time children on every CPU (a one-CPU machine has no other choice).
        cases.push((rt_everywhere, "every CPU"));
    }
    for (args, named) in cases {
        let out = run(schedlab().args(["policies", "run", "--out"]).arg(out_dir.path()).args(args));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(err.contains(named), "{args:?}: the error does not name '{named}': {err}");
        assert!(out.stdout.is_empty(), "{args:?} printed on stdout");
    }
    assert!(std::fs::read_dir(out_dir.path()).unwrap().next().is_none(), "a rejected run wrote results");
}

#[test]
fn without_root_rt_policies_fail_early_and_others_still_run() {
    let Some(_machine) = root_or_skip() else {
        return;
    };
    // Drop to nobody in the child before exec, as a user without privileges would run it.
    let out_dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(out_dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let nobody = |args: &[&str]| {
        let mut c = schedlab();
        c.args(["policies", "run", "--out"]).arg(out_dir.path()).args(args).uid(65534).gid(65534);
        run(&mut c)
    };
    let out = nobody(&["--policy", "other,fifo", "--procs", "5", "--workload", "cpu"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "fifo ran without root");
    assert!(err.contains("SCHED_FIFO") && err.contains("root"), "unclear message: {err}");
    assert!(std::fs::read_dir(out_dir.path()).unwrap().next().is_none(), "the refused run wrote results");

    let out =
        nobody(&["--policy", "other,batch,idle", "--procs", "5", "--workload", "cpu", "--timeout", "60s", "--json"]);
    let doc = json_of(&out);
    let cases = doc["results"]["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 3);
    for c in cases {
        assert_eq!(c["completed"], 5, "{c}");
    }
}

#[test]
fn the_empty_case_and_the_placement_are_beside_every_table() {
    let Some(_machine) = root_or_skip() else {
        return;
    };
    let out_dir = tempfile::tempdir().unwrap();
    let out = run(schedlab()
        .args(["policies", "run", "--policy", "other", "--procs", "5", "--workload", "io,empty", "--unpinned"])
        .args(["--io-bytes", "64KiB", "--out"])
        .arg(out_dir.path()));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The human view, its wrapped lines joined again.
    let text = String::from_utf8_lossy(&out.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    let tables = text.matches("(--unpinned: every allowed CPU but the harness's").count();
    assert!(tables >= 3, "the summary and both tables say where the children ran ({tables} times): {text}");
    assert!(text.matches("Start-up cost (the `empty` case").count() >= 3, "{text}");
    assert!(text.contains("5 procs: empty") && text.contains("calibrated to the seed's"), "{text}");
    // 64 KiB is not the calibrated io size: the start-up goal says so instead of judging.
    assert!(text.contains("(goal) Start-up is a small part") && text.contains("× the calibrated bytes"), "{text}");

    let run_dir = std::fs::read_dir(out_dir.path().join("policies")).unwrap().next().unwrap().unwrap().path();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(run_dir.join("results.json")).unwrap()).unwrap();
    let cases = doc["results"]["cases"].as_array().unwrap();
    let empty = cases.iter().find(|c| c["workload"] == "empty").expect("an empty case");
    assert_eq!(empty["completed"], 5, "{empty}");
    assert_eq!(doc["results"]["placement"]["unpinned"], true);
    assert_eq!(doc["parameters"]["program"].as_str().unwrap(), env!("CARGO_BIN_EXE_schedlab-work"));
}

#[test]
fn timeout_kills_and_reaps_every_child() {
    let Some(_machine) = root_or_skip() else {
        return;
    };
    let out_dir = tempfile::tempdir().unwrap();
    let marker = "1999999937"; // an iteration count nobody else uses: it marks our children
    let start = Instant::now();
    let out = run(schedlab()
        .args(["policies", "run", "--policy", "fifo", "--procs", "6", "--workload", "cpu", "--json"])
        .args(["--iterations", marker, "--timeout", "1500ms", "--out"])
        .arg(out_dir.path()));
    let doc = json_of(&out);
    assert!(start.elapsed() < Duration::from_secs(20), "the timeout did not bound the case: {:?}", start.elapsed());
    let c = &doc["results"]["cases"][0];
    assert_eq!(c["timed_out"], true, "{c}");
    assert_eq!(c["killed"], 6, "{c}");
    assert!(processes_with(marker).is_empty(), "children left behind: {:?}", processes_with(marker));
}

#[test]
fn sigterm_kills_and_reaps_every_child() {
    let Some(_machine) = root_or_skip() else {
        return;
    };
    let out_dir = tempfile::tempdir().unwrap();
    let marker = "1999999951";
    let mut child = schedlab()
        .args(["policies", "run", "--policy", "other", "--procs", "8", "--workload", "cpu", "--json"])
        .args(["--iterations", marker, "--timeout", "60s", "--out"])
        .arg(out_dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the children run, then ask the harness to stop.
    let start = Instant::now();
    while processes_with(marker).len() < 8 && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!processes_with(marker).is_empty(), "children never started");
    Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "the harness ignored SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(!status.success());
    assert!(processes_with(marker).is_empty(), "children left behind: {:?}", processes_with(marker));
    let run_dir = std::fs::read_dir(out_dir.path().join("policies")).unwrap().next().unwrap().unwrap().path();
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(run_dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(doc["results"]["interrupted"], true);
    assert_eq!(doc["status"]["state"], "interrupted");
}

#[test]
fn trace_draws_per_cpu_timelines_and_cleans_up() {
    let Some(_machine) = root_or_skip() else {
        return;
    };
    let out_dir = tempfile::tempdir().unwrap();
    let out = run(schedlab()
        // Four times the seed's samples, as --quick: each child spans several ticks, so OTHER's
        // pre-emptions stand clear of FIFO's (with the seed's million, one tick's worth, they
        // came within one of each other).
        .args(["policies", "run", "--policy", "other,fifo", "--procs", "20", "--workload", "cpu", "--iterations"])
        .arg(schedlab_lab::linux_policies::params::QUICK_ITERATIONS.to_string())
        .args(["--trace", "--json"])
        .arg("--out")
        .arg(out_dir.path()));
    let doc = json_of(&out);
    let traces = doc["results"]["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 2);
    for t in traces {
        assert!(t["summary"]["events"].as_u64().unwrap() > 20, "{t}");
    }
    let other = traces.iter().find(|t| t["policy"] == "other").unwrap();
    let fifo = traces.iter().find(|t| t["policy"] == "fifo").unwrap();
    // The trace's count of pre-empted children and rusage's involuntary switches tell the same story.
    let preemptions = |t: &serde_json::Value| {
        t["summary"]["child_preemptions"].as_u64().unwrap_or_else(|| panic!("no child_preemptions in {t}"))
    };
    let (f, o) = (preemptions(fifo), preemptions(other));
    assert!(f <= o, "FIFO children pre-empted {f} times, OTHER children {o}: FIFO should be pre-empted no more");
    let run_dir = std::fs::read_dir(out_dir.path().join("policies")).unwrap().next().unwrap().unwrap().path();
    let svg = std::fs::read_to_string(run_dir.join("trace_fifo_cpu_20.svg")).unwrap();
    assert!(svg.contains("CPU 1") && svg.contains("<rect"));
    // The same case as a Perfetto timeline: valid, with a track for each of its 20 children.
    let perfetto = fifo["perfetto"].as_str().expect("a timeline file named in the results");
    let timeline: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join(perfetto)).unwrap()).unwrap();
    trace_event::check_format(&timeline).unwrap();
    let children = timeline["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "thread_name" && !e["args"]["name"].as_str().unwrap().starts_with("CPU "))
        .count();
    assert_eq!(children, 20, "a track per child");
    let pid_instances: Vec<_> = std::fs::read_dir("/sys/kernel/tracing/instances")
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    assert!(
        // An instance whose process is gone is a leak; a live process's (another run) is in use.
        !pid_instances.iter().any(|n: &String| n
            .strip_prefix("schedlab-policies-")
            .is_some_and(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())),
        "instance left: {pid_instances:?}"
    );
}
