//! `schedlab trace`: record what the Linux scheduler does with a program, turn a recorded
//! trace into a simulator workload, and follow a trace's fair tasks with the model's rules.

use crate::host::Host;
use crate::output::{self, OutputArgs};
use crate::units;
use anyhow::Result;
use clap::Subcommand;
use schedlab_lab::trace::import::{self, ImportRequest};
use schedlab_lab::trace::perfetto;
use schedlab_lab::trace::record::{self, RecordRequest, WorkloadRecordRequest};
use schedlab_lab::trace::shadow::{self, ShadowRequest};
use schedlab_report::section::Section;
use schedlab_trace::{Format, Select};
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `schedlab trace`.
#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  sudo schedlab trace record --cpus 1 -- schedlab workload bursts --ms 3,7 --repeat 100
  schedlab sim run --generate poisson:n=4,rate=20,mean=50ms,bursts=3,io=10ms --policy linux --save-workload w.json
  sudo schedlab trace record --workload w.json --cpus 1
  schedlab trace import results/trace-record/<run>/trace.txt --meta results/trace-record/<run>/meta.json \\
      --tree <pid> --workload-out w.json
  schedlab sim run --workload w.json --policy linux --policy cfs

A recording uses a private tracefs instance (instances/schedlab-trace-<pid>) with the monotonic
clock, removed on every exit path; one left by a run killed with SIGKILL is removed by the next.")]
pub struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

impl Args {
    /// Whether the command changes the machine (and so heals what dead runs left first).
    pub fn changes_machine(&self) -> bool {
        matches!(self.cmd, Cmd::Record(_))
    }
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a program — or a simulator workload, each task a child with its policy, affinity and
    /// arrival — under a recording of the scheduler tracepoints (sched_switch, the wake-ups,
    /// fork/exec/exit, migrate_task) and keep the raw trace and each task's policy and affinity.
    /// Needs root (tracefs).
    Record(RecordArgs),
    /// Turn a trace (tracefs text, `perf script`, `trace-cmd report`) into a simulator workload:
    /// per task its arrival, CPU bursts and blocked intervals, policy, nice/RT priority and
    /// affinity. Lines it cannot use are counted, never dropped in silence.
    Import(ImportArgs),
    /// Follow chosen fair tasks of one CPU through a trace with the eevdf model's run queue kept
    /// beside the kernel's: the model never chooses, it follows every switch the kernel made,
    /// and each decision the kernel took (a wake-up that pre-empted or not, a tick that ended a
    /// slice or not, each pick) is judged against the model's rules in the state they would
    /// have had. The wrong ones are listed with the lags and protection they were made with.
    Shadow(ShadowArgs),
}

#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  schedlab trace shadow results/validate/<run>/trace_sleepers-vs-hog.txt --tasks sleep-1/4,sleep-2/8,hog
  schedlab trace shadow trace.txt --tasks 4242,4243 --policy eevdf:delay_zero=0 --from-ms 500 --show 40

The tasks must be fair tasks that ran on one CPU only (pin them). Other tasks on that CPU are
taken as time the CPU was away: the followed task they displaced goes back to the queue. Every
task starts at lag 0, since a trace does not say the kernel's, and a fast pair's lags drift from
the kernel's (about 0.1 µs a wake-up: where its enqueue falls between sched_waking and
sched_wakeup; see docs/validate.md#shadow); `--positions` takes the kernel's own places, read
from /proc/<tid>/sched beside the trace (`validate` saves them as positions_<case>.txt), and sets
the shadow's to them at each round of readings:
  schedlab trace shadow <run>/trace_pingpong-hog.txt --tasks pingpong,pong,hog --positions <run>/positions_pingpong-hog.txt")]
struct ShadowArgs {
    /// The trace file.
    trace: PathBuf,
    /// The trace's format: tracefs, perf or trace-cmd (default: detected).
    #[arg(long, value_name = "FORMAT")]
    trace_format: Option<Format>,
    /// The metadata sidecar `trace record` wrote (its CPU times shorten runs whose switch-out
    /// the trace lost).
    #[arg(long)]
    meta: Option<PathBuf>,
    /// The tasks to follow: task ids or command names, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    tasks: Vec<String>,
    /// The CPU whose queue to keep (default: the one the tasks ran on).
    #[arg(long)]
    cpu: Option<usize>,
    /// The rules: eevdf with its parameters, as `sim run --policy` takes them (e.g.
    /// `eevdf:delay_zero=0`; `cpus=` sets the base slice's scaling, default 2).
    #[arg(long, default_value = "eevdf")]
    policy: String,
    /// The kernel's tick period (4ms at HZ=250), placed at the phase the trace's tick
    /// pre-emptions show; `off` for none.
    #[arg(long, default_value = "4ms", value_parser = tick_arg)]
    tick: TickArg,
    /// Judge decisions from this far into the trace (the state is kept from its start).
    #[arg(long, default_value_t = 0.0)]
    from_ms: f64,
    /// Judge decisions up to this far into the trace.
    #[arg(long)]
    to_ms: Option<f64>,
    /// A decision took effect when the switch it asks for came within this many µs.
    #[arg(long, default_value_t = 100)]
    window_us: u64,
    /// List this many wrong decisions.
    #[arg(long, default_value_t = 20)]
    show: usize,
    /// Log every event between these times, ms into the trace (e.g. `750,755`), with the queue
    /// after each: how the rules' state got where a wrong decision found it.
    #[arg(long, value_name = "FROM,TO", value_parser = ms_span)]
    log_ms: Option<(f64, f64)>,
    /// Charge a task pre-empted by a wake-up up to its switch-out in the trace. By default it is
    /// charged up to the wake-up and the task switched in from there, as the kernel does (its
    /// run-queue clock stands still from a pre-empting wake-up to the switch).
    #[arg(long)]
    no_clock_skip: bool,
    /// The kernel's places for the tasks, read beside the trace: a positions file (`# schedlab
    /// kernel positions` and a line `trace_ns tid se.vruntime_ns se.exec_start_ns` per reading)
    /// such as `validate` saves. At the end of each round of readings the shadow sets the tasks'
    /// places against each other to the kernel's.
    #[arg(long, value_name = "FILE")]
    positions: Option<PathBuf>,
    #[command(flatten)]
    output: OutputArgs,
}

fn ms_span(s: &str) -> Result<(f64, f64), String> {
    let (a, b) = s.split_once(',').ok_or("expected FROM,TO in ms, e.g. 750,755")?;
    let (a, b): (f64, f64) =
        (a.trim().parse().map_err(|e| format!("{a}: {e}"))?, b.trim().parse().map_err(|e| format!("{b}: {e}"))?);
    if !(a >= 0.0 && b > a) {
        return Err(format!("{s}: FROM must be ≥ 0 and below TO"));
    }
    Ok((a, b))
}

/// `--tick`: a period, or `off`.
#[derive(Clone, Copy)]
struct TickArg(Option<u64>);

fn tick_arg(s: &str) -> Result<TickArg, String> {
    if s.eq_ignore_ascii_case("off") {
        return Ok(TickArg(None));
    }
    units::positive_duration(s).map(|d| TickArg(Some(d.as_nanos() as u64)))
}

#[derive(clap::Args)]
struct RecordArgs {
    /// Pin the program to these CPUs (e.g. `1` or `0-1`). With --workload, the CPUs its CPU 0,
    /// 1, … run on (default: the last ones, so CPU 0 stays free for the controller when it can).
    #[arg(long, value_name = "LIST")]
    cpus: Option<String>,
    /// Run this simulator workload (JSON, as `sim run --save-workload` writes it) instead of a
    /// program.
    #[arg(long, value_name = "FILE", conflicts_with = "command")]
    workload: Option<PathBuf>,
    /// Stop the program (and the recording) after this long.
    #[arg(long = "for", default_value = "60s", value_parser = units::positive_duration)]
    limit: Duration,
    /// Also write the timeline as Chrome Trace Event JSON to FILE (open it in ui.perfetto.dev
    /// or chrome://tracing); the run directory keeps it as timeline.trace.json either way.
    #[arg(long, value_name = "FILE", value_parser = crate::paths::writable_file)]
    trace_out: Option<PathBuf>,
    #[command(flatten)]
    output: OutputArgs,
    /// The program and its arguments: `-- PROGRAM ARGS…`.
    #[arg(last = true, required_unless_present = "workload")]
    command: Vec<String>,
}

#[derive(clap::Args)]
struct ImportArgs {
    /// The trace file.
    trace: PathBuf,
    /// The trace's format: tracefs, perf or trace-cmd (default: detected). (`--format` is how
    /// the results are printed, as for every command.)
    #[arg(long, value_name = "FORMAT")]
    trace_format: Option<Format>,
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
    /// Put workload time 0 on the kernel's tick of this period (4ms at HZ=250), found from the
    /// trace's tick pre-emptions, so `sim run --tick` replays with its ticks where the kernel's
    /// were. When the trace shows no tick, time 0 stays at the first task's start (said).
    #[arg(long, value_name = "PERIOD", value_parser = crate::units::positive_duration)]
    align_tick: Option<std::time::Duration>,
    /// Also write the workload (JSON, ms) to this file.
    #[arg(long, value_name = "FILE", value_parser = crate::paths::writable_file)]
    workload_out: Option<PathBuf>,
    /// Also write the timeline as Chrome Trace Event JSON to FILE (open it in ui.perfetto.dev
    /// or chrome://tracing); the run directory keeps it as timeline.trace.json either way.
    #[arg(long, value_name = "FILE", value_parser = crate::paths::writable_file)]
    trace_out: Option<PathBuf>,
    #[command(flatten)]
    output: OutputArgs,
}

/// Run `schedlab trace`.
pub fn run(args: Args) -> Result<()> {
    let host = Host::collect();
    match args.cmd {
        Cmd::Record(a) => {
            let cpus = a.cpus.as_deref().map(schedlab_os::affinity::parse_cpu_list).transpose()?;
            let section = match &a.workload {
                Some(path) => record::record_workload(&workload_request(path, cpus, a.limit)?)?,
                None => record::record(&RecordRequest { argv: a.command, cpus, limit: a.limit })?,
            };
            let s = output::emit(section, &a.output, &host)?;
            write_trace_out(&s, a.trace_out.as_deref(), !a.output.for_people())?;
        }
        Cmd::Import(a) => {
            let select = match (&a.pid[..], a.tree, &a.comm) {
                ([], None, None) => Select::All,
                ([], Some(t), _) => Select::Tree(t),
                ([], None, Some(c)) => Select::Comm(c.clone()),
                (pids, _, _) => Select::Pids(pids.iter().copied().collect()),
            };
            if a.workload_out.as_ref().is_some_and(|p| p.is_dir()) {
                schedlab_os::bail_usage!(
                    "--workload-out {} is a directory: name a file",
                    a.workload_out.unwrap().display()
                );
            }
            let req = ImportRequest {
                trace: a.trace,
                format: a.trace_format,
                meta: a.meta,
                select,
                start_at_exec: a.start_at_exec,
                align_tick_ns: a.align_tick.map(|d| d.as_nanos() as u64),
            };
            let s = output::emit(import::import_file(&req)?, &a.output, &host)?;
            write_trace_out(&s, a.trace_out.as_deref(), !a.output.for_people())?;
            if let Some(path) = &a.workload_out {
                let w = &s.data["results"]["workload"];
                std::fs::write(path, serde_json::to_string_pretty(w)?)
                    .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
                if a.output.for_people() {
                    println!("workload: {}", path.display());
                }
            }
        }
        Cmd::Shadow(a) => {
            let req = ShadowRequest {
                trace: a.trace,
                format: a.trace_format,
                meta: a.meta,
                tasks: a.tasks,
                cpu: a.cpu,
                policy: a.policy,
                tick_ns: a.tick.0,
                from_ms: a.from_ms,
                to_ms: a.to_ms,
                window_us: a.window_us,
                show: a.show,
                log_ms: a.log_ms,
                clock_skip: !a.no_clock_skip,
                positions: a.positions,
            };
            output::emit(shadow::shadow_file(&req)?, &a.output, &host)?;
        }
    }
    Ok(())
}

/// The workload at `path` on `cpus` (or the last CPUs this process may use).
fn workload_request(
    path: &std::path::Path,
    cpus: Option<Vec<usize>>,
    limit: Duration,
) -> Result<WorkloadRecordRequest> {
    let workload = crate::workload_file::read(path)?;
    let need = workload.cpus.unwrap_or(1);
    let host_cpus = match cpus {
        Some(c) => c,
        None => {
            let allowed = schedlab_os::affinity::allowed_cpus()?;
            allowed[allowed.len().saturating_sub(need)..].to_vec()
        }
    };
    if host_cpus.len() < need {
        schedlab_os::bail_usage!("the workload is written for {need} CPU(s); --cpus gives {}", host_cpus.len());
    }
    Ok(WorkloadRecordRequest { workload, host_cpus, limit })
}

/// `--trace-out`: a copy of the run's timeline file where the user asked for it.
fn write_trace_out(s: &Section, dest: Option<&std::path::Path>, json: bool) -> Result<()> {
    if let Some(dest) = dest {
        perfetto::copy_out(s, dest)?;
        if !json {
            println!("trace: {} (open in ui.perfetto.dev)", dest.display());
        }
    }
    Ok(())
}
