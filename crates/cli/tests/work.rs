//! The `schedlab-work` binary seed 001's children exec: built beside `schedlab` (where
//! `policies run` looks for it), each workload runs, bad command lines are refused, it keeps
//! SIGPIPE's default action, and it links none of schedlab's heavy dependencies.

use std::path::Path;
use std::process::Command;

const WORK: &str = env!("CARGO_BIN_EXE_schedlab-work");

fn work(args: &[&str]) -> std::process::Output {
    Command::new(WORK).args(args).output().expect("run schedlab-work")
}

#[test]
fn it_is_built_beside_schedlab() {
    assert_eq!(Path::new(WORK).parent(), Path::new(env!("CARGO_BIN_EXE_schedlab")).parent());
}

#[test]
fn every_workload_runs_and_prints_its_result() {
    let out = work(&["cpu", "--iterations", "100000"]);
    assert!(out.status.success(), "{out:?}");
    let pi: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    assert!((pi - std::f64::consts::PI).abs() < 0.05, "{pi}");
    let out = work(&["io", "--bytes", "5000", "--block", "1000"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "5000", "{out:?}");
    let out = work(&["mixed", "--iterations", "10000", "--bytes", "4096"]);
    assert!(out.status.success(), "{out:?}");
    let out = work(&["empty"]);
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
}

#[test]
fn bad_command_lines_exit_2_naming_the_problem() {
    for (args, named) in [(&["gpu"][..], "'gpu'"), (&["cpu", "--iterations", "0"], "'0'"), (&[], "name a workload")] {
        let out = work(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(err.contains(named) && err.contains("usage:"), "{args:?}: {err}");
    }
    let out = work(&["io", "--input", "/nonexistent/in"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/in"));
}

#[test]
fn it_keeps_sigpipes_default_action() {
    // A write to a closed pipe kills it (status 141 in a shell), as it killed the seed's C
    // programs, instead of an ignored SIGPIPE and an EPIPE error. `yes`-like output: io to
    // stdout, whose reader has gone.
    let mut child = Command::new(WORK)
        .args(["io", "--input", "/dev/zero", "--output", "/dev/stdout", "--bytes", "100000000"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(13), "{status:?}");
}

#[test]
fn it_links_none_of_schedlabs_heavy_dependencies() {
    // Symbol names survive the release profile's strip of debug info, so a linked crate
    // would leave its name in the binary. (schedlab_os is linked for its SIGPIPE reset, and
    // the object-file names of its dependencies stay in the symbol table, so serde_json's
    // name is there without its code: this checks the crates schedlab-os does not use.)
    let bytes = std::fs::read(WORK).unwrap();
    for heavy in ["clap_builder", "tokio", "rusqlite", "schedlab_lab", "schedlab_sim"] {
        assert!(!bytes.windows(heavy.len()).any(|w| w == heavy.as_bytes()), "schedlab-work links {heavy}");
    }
    let schedlab = std::fs::metadata(env!("CARGO_BIN_EXE_schedlab")).unwrap().len();
    assert!((bytes.len() as u64) * 10 < schedlab, "{} bytes against schedlab's {schedlab}", bytes.len());
}
