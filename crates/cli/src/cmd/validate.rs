//! `schedlab validate`: run the validation suite — small mixes live under a scheduler trace,
//! each trace replayed in the simulator under `linux`, `cfs` and `rr` — and judge how well the
//! Linux model predicted the kernel.

use crate::host::Host;
use crate::output::{self, OutputArgs};
use crate::progress::CommandProgress;
use crate::units;
use anyhow::Result;
use schedlab_lab::validate::{self, cases, Params, ReplayParams, Validate};
use schedlab_lab::{Experiment, Scale};
use schedlab_report::section::Table;
use std::time::Duration;

/// Arguments of `schedlab validate`.
#[derive(clap::Args)]
#[command(after_help = "\
Each case runs live (one-CPU cases on the last CPU, two-CPU cases on the first two), recorded
with sched_switch/sched_wakeup in a private tracefs instance; the trace is imported as a
workload (arrivals, CPU bursts, blocked times, who woke whom, policies, affinity; CPU hogs left
open-ended; what else ran on the case's CPUs replayed beside it) and simulated under the
host's Linux model (EEVDF + RT + DEADLINE, a run queue per CPU with the kernel's placement and
load balancing, the host's tick and wake-up delays: the tick probed first, the wake-up path
before the cases and before every run, all those probes pooled), CFS and round robin.
Per task: CPU share, switches/s, wake-up latency p50/p99, live against each model. The goal
for `linux`: shares within 2 percentage points, switches within 15%, wake-up p50 within 25%,
in every repeat; a case that misses says what the model leaves out. Each model replays each
run several times (--draws), each time drawing the wake-up delays anew from the pooled
spread, and the most typical replay (the medoid) is judged; a verdict says how many draws
met the goal in each repeat, and whether the kernel's own repeats agreed within the goal.
Needs root. See docs/validate.md.

Every live run is kept in the run directory (recordings/: the trace, the kernel's readings
beside it, the probes' wake-up delays), and while the suite runs each one is also written to
<out>/validate/unfinished-<stamp>-<pid>/ as soon as it is over, so a run that dies (SIGKILL, a
crash) keeps what it recorded; a run that ends removes that directory. --replay DIR judges
those runs again under this schedlab's models, without root and without running anything
live: a changed model is then compared on the very runs the old one was judged on.

Examples:
  sudo schedlab validate --quick
  sudo schedlab validate --cases nice-hogs,rr-pair --repeats 5 --for 10s
  sudo schedlab validate --json > validate.json
  schedlab validate --list
  schedlab validate --replay results/validate/20261129T201303Z --cases nice-hogs-2cpu")]
pub struct Args {
    /// Short runs: 2 repeats of 2 s per case (about a minute).
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// Long runs: 5 repeats of 10 s per case.
    #[arg(long)]
    full: bool,
    /// Replay the recorded runs of an earlier validate run (its run directory) instead of
    /// running live: no root needed. --cases picks cases, --draws sets the draws.
    #[arg(long, value_name = "RUN_DIR", conflicts_with_all = ["quick", "full", "repeats", "duration", "keep_autogroup"])]
    replay: Option<std::path::PathBuf>,
    /// Only these cases (comma-separated; see --list).
    #[arg(long, value_delimiter = ',', value_name = "NAME,...")]
    cases: Vec<String>,
    /// Live runs per case (overrides the scale's).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=50))]
    repeats: Option<u64>,
    /// How long each live run lasts (overrides the scale's; at least 500ms).
    #[arg(long = "for", value_parser = units::positive_duration)]
    duration: Option<Duration>,
    /// Replays of each live run under each model, each with its own draw of the wake-up delays
    /// from the probes' pooled spread; the medoid (the replay nearest the median of every metric) is
    /// judged. Default: 3 with --quick, 5, 7 with --full. 1 judges a single draw.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=25))]
    draws: Option<u64>,
    /// Leave autogroup as it is. By default validate turns `kernel.sched_autogroup_enabled` off
    /// for its run (journaled, put back on every exit path, healed by the next run after a
    /// SIGKILL): the models have no task groups, and with autogroup on the case's tasks share
    /// their session's group while host daemons weigh their own weights.
    #[arg(long)]
    keep_autogroup: bool,
    /// List the cases and exit.
    #[arg(long)]
    list: bool,
    #[command(flatten)]
    output: OutputArgs,
}

impl Args {
    /// Whether the command changes the machine (and so heals what dead runs left first).
    pub fn changes_machine(&self) -> bool {
        !self.list && self.replay.is_none()
    }
}

fn case_list() -> Table {
    let mut t = Table::new("Validation cases", &["case", "CPUs", "what"]);
    for c in cases::suite(true) {
        t.row(vec![c.name.into(), c.cpus.to_string(), c.what.into()]);
    }
    t
}

/// Run `schedlab validate`.
pub fn run(a: Args) -> Result<()> {
    if a.list {
        println!("{}", schedlab_report::table::render(&case_list()));
        return Ok(());
    }
    if let Some(dir) = &a.replay {
        let params = ReplayParams { cases: a.cases.clone(), draws: a.draws.map(|d| d as usize) };
        let host = Host::collect();
        let progress = CommandProgress::start(Validate.name(), Validate.title(), 60.0);
        let section = validate::replay_saved(dir, &params, &host.context(Scale::Default, &progress, None))?;
        drop(progress);
        output::emit(section, &a.output, &host)?;
        return Ok(());
    }
    let mut params = Params::for_scale(Scale::from_flags(a.quick, a.full));
    params.cases = a.cases;
    params.autogroup_off = !a.keep_autogroup;
    if let Some(r) = a.repeats {
        params.repeats = r as usize;
    }
    if let Some(d) = a.draws {
        params.draws = d as usize;
    }
    if let Some(d) = a.duration {
        if d < Duration::from_millis(500) {
            schedlab_os::bail_usage!("--for {d:?} is too short: at least 500ms");
        }
        params.duration_ns = d.as_nanos() as u64;
    }
    params.selected(true)?;
    // Each recording is also written here as soon as it is made, so a run that dies keeps them;
    // a run that ends removes it once its run directory is written.
    let unfinished = (!a.output.no_save).then(|| crate::unfinished::dir(&a.output.out, Validate.name()));
    if let Some(dir) = &unfinished {
        eprintln!(
            "schedlab: recordings are also kept in {} as they are made (if this run dies: schedlab validate \
             --replay {0})",
            dir.display()
        );
    }
    let host = Host::collect();
    let progress = CommandProgress::start(Validate.name(), Validate.title(), params.estimate_s(host.facts.cpus_online));
    let section = validate::run(&params, &host.context(Scale::Default, &progress, unfinished.clone()))?;
    drop(progress);
    output::emit(section, &a.output, &host)?;
    if let Some(dir) = unfinished {
        crate::unfinished::remove(&dir)?;
    }
    Ok(())
}
