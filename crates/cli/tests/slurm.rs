//! The cluster recipe of docs/cluster.md on a real Slurm: a private single-node cluster
//! (scripts/slurm-local.sh: munged, slurmctld and slurmd from the distribution's packages, which
//! scripts/setup.sh installs) runs scripts/cluster/shard.sbatch as a job array of 4 — shards of
//! a sweep and of `reproduce --quick --only sim-catalogue` — and the merged shards equal the
//! unsharded runs row for row. The cluster is torn down when the test ends, and the next run
//! stops whatever a killed one left (the cluster's directory is fixed). Needs root and the
//! packages: under CI their absence fails the test; elsewhere it is skipped and says so.

use schedlab_os::test_gate;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn schedlab(dir: &Path, args: &[&str]) -> Output {
    run(Command::new(env!("CARGO_BIN_EXE_schedlab")).current_dir(dir).args(args))
}

/// Stops the cluster when the test ends, passing or not.
struct Cluster(PathBuf);

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash").arg(repo().join("scripts/slurm-local.sh")).arg("down").arg(&self.0).status();
    }
}

/// Every CSV file `results export` writes for the run of `experiment` in `db`, by name.
fn exported(work: &Path, db: &str, experiment: &str, into: &str) -> Vec<(String, String)> {
    let list = schedlab(work, &["results", "list", "--db", db, "--json"]);
    let runs: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let runs = runs["runs"].as_array().cloned().unwrap_or_default();
    let ids: Vec<String> = runs
        .iter()
        .filter(|r| r["experiment"] == experiment)
        .map(|r| r["id"].as_u64().map(|i| i.to_string()).unwrap_or_default())
        .collect();
    assert_eq!(ids.len(), 1, "one {experiment} run in {db}: {runs:?}");
    schedlab(work, &["results", "export", &ids[0], "--db", db, "-o", &format!("{into}/")]);
    let mut files: Vec<(String, String)> = std::fs::read_dir(work.join(into))
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{into}: no tables");
    files
}

#[test]
fn a_job_array_of_shards_on_slurm_equals_the_unsharded_runs() {
    let tools = ["munged", "slurmctld", "slurmd", "sbatch", "sinfo"];
    let have = tools.iter().all(|t| {
        Command::new("sh").args(["-c", &format!("command -v {t}")]).output().is_ok_and(|o| o.status.success())
    });
    if !test_gate::require(
        "Slurm job array",
        have,
        "slurmctld, slurmd, sbatch or munged missing (scripts/setup.sh installs slurm-wlm and munge)",
    ) || !test_gate::require("Slurm job array", schedlab_os::is_root(), "needs root to start slurmd")
    {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    // A fixed place, so the next run stops the daemons of a test killed before its Drop ran.
    let cluster = Cluster(std::env::temp_dir().join("schedlab-slurm-test"));
    run(Command::new("bash").arg(repo().join("scripts/slurm-local.sh")).arg("up").arg(&cluster.0));
    std::fs::write(
        work.join("grid.yaml"),
        "policies: [fcfs, srtf, 'rr:quantum=4ms', eevdf]\ngenerate: 'poisson:n=300,mean=5ms'\n\
         vary: {rate: [40, 120, 180]}\ncpus: [1, 2]\nseeds: 3\n",
    )
    .unwrap();
    let conf = cluster.0.join("slurm.conf");
    let export = format!("ALL,GRID=grid.yaml,N=4,SCHEDLAB={}", env!("CARGO_BIN_EXE_schedlab"));
    run(Command::new("sbatch")
        .env("SLURM_CONF", &conf)
        .current_dir(&work)
        .args(["--wait", "--array=1-4", "--time=10", &format!("--export={export}")])
        .arg(repo().join("scripts/cluster/shard.sbatch")));
    for k in 1..=4 {
        assert!(work.join(format!("sweep-part-{k}/rows.parquet")).exists(), "shard {k} finished its sweep");
    }

    // The sweep: shards merged against the whole grid run at once.
    let parts: Vec<String> = (1..=4).flat_map(|k| ["--merge".to_string(), format!("sweep-part-{k}")]).collect();
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    schedlab(&work, &[&["sim", "sweep"][..], &parts, &["--dir", "merged", "--no-save"]].concat());
    schedlab(&work, &["sim", "sweep", "grid.yaml", "--dir", "whole", "--no-save"]);
    let read = |p: &str| std::fs::read_to_string(work.join(p)).unwrap();
    assert_eq!(read("merged/rows.csv").lines().count(), 1 + 4 * 3 * 2 * 3);
    assert!(read("merged/rows.csv") == read("whole/rows.csv"), "merged shards equal the unsharded sweep");

    // reproduce: the shards' databases merged against one unsharded run.
    let dbs: Vec<String> = (1..=4).map(|k| format!("reproduce-{k}/schedlab.db")).collect();
    let dbs: Vec<&str> = dbs.iter().map(String::as_str).collect();
    schedlab(&work, &[&["results", "merge", "--db", "merged.db"][..], &dbs].concat());
    schedlab(
        &work,
        &["reproduce", "--quick", "--only", "sim-catalogue", "--out", "unsharded", "--report", "unsharded/index.html"],
    );
    let merged = exported(&work, "merged.db", "sim-catalogue", "merged-tables");
    let unsharded = exported(&work, "unsharded/schedlab.db", "sim-catalogue", "unsharded-tables");
    assert_eq!(merged, unsharded, "the merged shards' tables equal the unsharded run's");
}
