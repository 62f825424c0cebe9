//! `schedlab taskman`: the task manager of seed 003 — topology, running commands on pinned
//! real-time workers, the Table 2 benchmark, the task-queue benchmark, and IRQ repair.

mod args;

use crate::host::Host;
use crate::output;
use crate::progress::CommandProgress;
use anyhow::{Context, Result};
use args::{BenchArgs, RunArgs};
use clap::Subcommand;
use schedlab_lab::taskman::experiment::{self, TaskmanExperiment};
use schedlab_lab::taskman::jobs::{self, Job, RunOptions};
use schedlab_lab::taskman::load;
use schedlab_lab::taskman::qbench::{self, QueueBenchParams};
use schedlab_lab::taskman::views;
use schedlab_lab::{Experiment, Scale};
use schedlab_os::topology::Topology;
use schedlab_report::table::render;

/// Arguments of `schedlab taskman`.
#[derive(clap::Args)]
#[command(after_long_help = "\
The task manager of seed 003 reads the topology, leaves the first core to the system (IRQs are
moved there), starts one worker per remaining core pinned to it under SCHED_FIFO with signals
blocked, and lets the workers take tasks FCFS from a queue. Everything it changes (policies,
affinity, IRQ masks) is restored on exit: normal end, error, Ctrl-C, SIGTERM or a panic in a task.
Every change is journaled first (see `schedlab restore --help`); after a run killed with SIGKILL
the next live command, or `schedlab restore`, undoes it.

Examples:
  schedlab taskman topology
  sudo schedlab taskman run --jobs jobs.txt
  sudo schedlab taskman run --priority 99 -- ./simulate --steps 1e9
  sudo schedlab taskman bench --quick
  schedlab taskman bench-queue")]
pub struct Args {
    #[command(subcommand)]
    cmd: Cmd,
}

impl Args {
    /// Whether the command changes the machine (and so heals what dead runs left first).
    pub fn changes_machine(&self) -> bool {
        matches!(self.cmd, Cmd::Run(_) | Cmd::Bench(_))
    }
}

#[derive(Subcommand)]
enum Cmd {
    /// Show the CPU topology from sysfs: CPUs, packages, cores, SMT siblings, caches, and
    /// which CPUs the task manager would use.
    Topology {
        /// Print one JSON document instead of tables.
        #[arg(long)]
        json: bool,
    },
    /// Run shell commands as tasks on pinned real-time workers (needs root).
    ///
    /// Each command is started by a worker thread, so it inherits that worker's CPU and
    /// scheduling policy. Commands are taken first-come-first-served. A summary with exit codes
    /// and times follows at the end.
    Run(RunArgs),
    /// Seed 003's Table 2: configurations D (plain threads) and C (the manager), 1 … N threads,
    /// no load / load 1 / load 2, perf counters per run, mean ± 95% CI (needs root).
    Bench(BenchArgs),
    /// Nanoseconds per empty task: the seed's mutex FCFS queue, our stealing queue, rayon and a
    /// crossbeam channel pool, measured in the same run.
    BenchQueue {
        /// Empty tasks per repetition.
        #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
        tasks: u64,
        /// Repetitions (mean ± 95% CI over them).
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
        reps: u64,
        #[arg(long)]
        json: bool,
    },
    /// The same as `schedlab restore` (kept for scripts written before it).
    Restore(crate::cmd::restore::Args),
    /// (internal) One background load process of the benchmark.
    #[command(hide = true)]
    Load {
        #[arg(long)]
        bytes: u64,
        #[arg(long, default_value_t = 600)]
        max_seconds: u64,
    },
}

/// Run `schedlab taskman`.
pub fn run(args: Args) -> Result<()> {
    match args.cmd {
        Cmd::Topology { json } => topology(json),
        Cmd::Run(a) => run_cmd(a),
        Cmd::Bench(a) => bench(a),
        Cmd::BenchQueue { tasks, reps, json } => bench_queue(tasks as usize, reps as usize, json),
        Cmd::Restore(a) => crate::cmd::restore::run(a),
        Cmd::Load { bytes, max_seconds } => {
            schedlab_os::signals::default_sigpipe();
            load::load_body(bytes as usize, max_seconds as f64, || {
                println!("ready");
                use std::io::Write;
                let _ = std::io::stdout().flush();
            });
            Ok(())
        }
    }
}

fn topology(json: bool) -> Result<()> {
    let t = Topology::read()?;
    if json {
        return output::print_json(&serde_json::json!({
            "topology": t,
            "packages": t.packages(),
            "cores": t.cores(),
            "caches": t.caches(),
            "reserved_cpus": t.reserved_core(),
            "worker_cpus": t.worker_cpus(),
        }));
    }
    let (tables, line) = views::topology(&t);
    for table in &tables {
        println!("{}", render(table));
    }
    println!("{line}");
    Ok(())
}

fn run_cmd(a: RunArgs) -> Result<()> {
    // Everything is checked before the machine changes: the jobs, then the configuration.
    let job_list: Vec<Job> = match (&a.jobs, a.command.is_empty()) {
        (Some(path), _) => jobs::read_job_file(path)?,
        (None, false) => vec![Job::Argv(a.command.clone())],
        (None, true) => schedlab_os::bail_usage!("nothing to run: give --jobs FILE or `-- CMD ARGS`"),
    };
    // A program that cannot start is refused before IRQs move (a job file's lines are shell
    // commands: the shell finds their programs).
    for job in &job_list {
        if let Job::Argv(argv) = job {
            schedlab_os::child::resolve_program(std::path::Path::new(&argv[0]))?;
        }
    }
    let cfg = a.manager.config();
    let plan = cfg.plan(&Topology::read()?)?;
    if plan.priority == 99 {
        eprintln!("schedlab: note: priority 99 ties with the kernel's migration and watchdog threads");
    }
    let opts = RunOptions { timeout: a.timeout, stdout_to_stderr: a.json, inject_panic: a.inject_panic };
    let report = jobs::run_jobs(&cfg, &job_list, &opts)?;
    if a.json {
        output::print_json(&serde_json::to_value(&report)?)?;
    } else {
        let (table, lines) = views::jobs(&report);
        println!("{}", render(&table));
        for l in lines {
            println!("{l}");
        }
    }
    // Like a shell running the commands: a task that did not succeed makes the run fail (1).
    let not_ok = report.jobs.iter().filter(|j| j.status != "ok").count();
    if not_ok > 0 && !schedlab_os::signals::stop_requested() {
        eprintln!("schedlab: {not_ok} of {} task(s) did not succeed", report.jobs.len());
        std::process::exit(1);
    }
    Ok(())
}

fn bench(a: BenchArgs) -> Result<()> {
    let scale = Scale::from_flags(a.quick, a.full);
    let p = a.params(scale)?;
    let host = Host::collect();
    let section = {
        let progress = CommandProgress::start("taskman", "Table 2 of seed 003", TaskmanExperiment.estimate_s(scale));
        experiment::run(&p, experiment::queue_params(scale), &progress).context("taskman bench")?
    };
    output::emit(section, &a.output, &host)?;
    Ok(())
}

fn bench_queue(tasks: usize, reps: usize, json: bool) -> Result<()> {
    let q = qbench::run(QueueBenchParams { tasks, reps })?;
    if json {
        return output::print_json(&serde_json::to_value(&q)?);
    }
    println!("{}", render(&views::queue_bench(&q, tasks, reps)));
    Ok(())
}
