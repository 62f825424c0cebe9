//! `schedlab trace`: record what the Linux scheduler does with a program, and turn a recorded
//! trace into a simulator workload.

use crate::host::Host;
use crate::output::{self, OutputArgs};
use crate::units;
use anyhow::{bail, Result};
use clap::Subcommand;
use schedlab_lab::trace::import::{self, ImportRequest};
use schedlab_lab::trace::record::{self, RecordRequest};
use schedlab_trace::{Format, Select};
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `schedlab trace`.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  sudo schedlab trace record --cpus 1 -- schedlab workload bursts --ms 3,7 --repeat 100
  schedlab trace import results/trace-record/<run>/trace.txt --meta results/trace-record/<run>/meta.json \\
      --tree <pid> --workload-out w.json
  schedlab sim run --workload w.json --policy linux --policy cfs

A recording uses a private tracefs instance (instances/schedlab-trace-<pid>) with the monotonic
clock, removed on every exit path; one left by a run killed with SIGKILL is removed by the next.")]
pub struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a program under a recording of the scheduler tracepoints (sched_switch, the wake-ups,
    /// fork/exec/exit, migrate_task) and keep the raw trace and each task's policy and affinity.
    /// Needs root (tracefs).
    Record(RecordArgs),
    /// Turn a trace (tracefs text, `perf script`, `trace-cmd report`) into a simulator workload:
    /// per task its arrival, CPU bursts and blocked intervals, policy, nice/RT priority and
    /// affinity. Lines it cannot use are counted, never dropped in silence.
    Import(ImportArgs),
}

#[derive(clap::Args)]
struct RecordArgs {
    /// Pin the program to these CPUs (e.g. `1` or `0-1`).
    #[arg(long, value_name = "LIST")]
    cpus: Option<String>,
    /// Stop the program (and the recording) after this long.
    #[arg(long = "for", default_value = "60s", value_parser = units::positive_duration)]
    limit: Duration,
    #[command(flatten)]
    output: OutputArgs,
    /// The program and its arguments: `-- PROGRAM ARGS…`.
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

#[derive(clap::Args)]
struct ImportArgs {
    /// The trace file.
    trace: PathBuf,
    /// Its format: tracefs, perf or trace-cmd (default: detected).
    #[arg(long)]
    format: Option<Format>,
    /// The metadata sidecar `trace record` wrote (policies, affinity, DEADLINE parameters).
    #[arg(long)]
    meta: Option<PathBuf>,
    /// Import only these task ids (comma-separated).
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["tree", "comm"])]
    pid: Vec<i32>,
    /// Import this task and every task it started (by the trace's fork events).
    #[arg(long, conflicts_with = "comm")]
    tree: Option<i32>,
    /// Import the tasks that had this command name.
    #[arg(long)]
    comm: Option<String>,
    /// Start each task at its exec (drop what its launcher did before).
    #[arg(long)]
    start_at_exec: bool,
    /// Also write the workload (JSON, ms) to this file.
    #[arg(long, value_name = "FILE")]
    workload_out: Option<PathBuf>,
    #[command(flatten)]
    output: OutputArgs,
}

/// Run `schedlab trace`.
pub fn run(args: Args) -> Result<()> {
    let host = Host::collect();
    match args.cmd {
        Cmd::Record(a) => {
            let cpus = a.cpus.as_deref().map(schedlab_os::affinity::parse_cpu_list).transpose()?;
            let req = RecordRequest { argv: a.command, cpus, limit: a.limit };
            output::emit(record::record(&req)?, &a.output, &host)?;
        }
        Cmd::Import(a) => {
            let select = match (&a.pid[..], a.tree, &a.comm) {
                ([], None, None) => Select::All,
                ([], Some(t), _) => Select::Tree(t),
                ([], None, Some(c)) => Select::Comm(c.clone()),
                (pids, _, _) => Select::Pids(pids.iter().copied().collect()),
            };
            if a.workload_out.as_ref().is_some_and(|p| p.is_dir()) {
                bail!("--workload-out {} is a directory: name a file", a.workload_out.unwrap().display());
            }
            let req = ImportRequest {
                trace: a.trace,
                format: a.format,
                meta: a.meta,
                select,
                start_at_exec: a.start_at_exec,
            };
            let s = output::emit(import::import_file(&req)?, &a.output, &host)?;
            if let Some(path) = &a.workload_out {
                let w = &s.data["results"]["workload"];
                std::fs::write(path, serde_json::to_string_pretty(w)?)
                    .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
                if !a.output.json {
                    println!("workload: {}", path.display());
                }
            }
        }
    }
    Ok(())
}
