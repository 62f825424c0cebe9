//! `schedlab sim analyze`: schedulability tests of a periodic workload beside the simulator's
//! critical-instant runs.

use super::run::sha256_hex;
use crate::host::Host;
use crate::output::{self, OutputArgs};
use anyhow::{Context, Result};
use schedlab_lab::simstudy::analyze;
use schedlab_os::usage::OrUsage;
use serde_json::json;
use std::path::PathBuf;

/// Schedulability analysis of periodic tasks, beside simulation.
///
/// Reads a workload of periodic tasks (each with `period`; `deadline` defaults to the period;
/// one job's CPU bursts are its C) and prints: utilisation; the Liu–Layland and hyperbolic
/// bounds for rate monotonic; exact response-time analysis (Joseph–Pandya, over the level-i
/// busy period) under `rm` and under `prio-preempt`'s priorities; the EDF processor-demand test.
/// Beside each task's bound stands its worst response when every task is released at 0 and the
/// simulator runs `rm`, `prio-preempt` and `edf` on one CPU over the hyperperiod: an exact bound
/// must equal it. Tasks that block inside a job or use locks are refused.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  schedlab sim analyze --workload tasks.json\n\n\
A workload file (times in ms): {\"tasks\": [{\"name\": \"a\", \"bursts\": [2], \"period\": 5, \"jobs\": 10}, \
{\"name\": \"b\", \"bursts\": [4], \"period\": 7, \"jobs\": 10}]}")]
pub struct AnalyzeArgs {
    /// The workload (JSON, YAML or rt-app JSON; `-` = stdin).
    #[arg(long)]
    workload: PathBuf,
    #[command(flatten)]
    output: OutputArgs,
}

/// Run `schedlab sim analyze`.
pub fn run(a: AnalyzeArgs) -> Result<()> {
    let w = crate::workload_file::read(&a.workload)?;
    let host = Host::collect();
    let mut s = analyze::section(&w).context("the workload cannot be analysed").or_usage()?;
    let text = w.to_json_string();
    s.parameters =
        json!({"workload": a.workload, "workload_sha256": sha256_hex(&text), "max_jobs_per_task": analyze::MAX_JOBS});
    output::emit(s, &a.output, &host)?;
    Ok(())
}
