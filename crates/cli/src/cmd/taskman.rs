//! `schedlab taskman`: the task manager of seed 003 — topology, running commands on pinned
//! real-time workers, the Table 2 benchmark, the task-queue benchmark, and IRQ repair.

use crate::{output, units};
use anyhow::{bail, Context, Result};
use clap::Subcommand;
use schedlab_lab::experiment::{Progress, RunContext};
use schedlab_lab::taskman::bench::{BenchParams, Config};
use schedlab_lab::taskman::experiment::{queue_params, run_and_write};
use schedlab_lab::taskman::jobs::{self, Job, RunOptions};
use schedlab_lab::taskman::load::{self, Load};
use schedlab_lab::taskman::qbench::{self, QueueBenchParams};
use schedlab_lab::taskman::{ManagerConfig, QueueKind, DEFAULT_PRIORITY};
use schedlab_lab::Scale;
use schedlab_os::affinity::format_cpu_list;
use schedlab_os::sched::LinuxPolicy;
use schedlab_os::topology::Topology;
use schedlab_report::section::Table;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `schedlab taskman`.
#[derive(clap::Args)]
#[command(after_long_help = "\
The task manager of seed 003 reads the topology, leaves the first core to the system (IRQs are
moved there), starts one worker per remaining core pinned to it under SCHED_FIFO with signals
blocked, and lets the workers take tasks FCFS from a queue. Everything it changes (policies,
affinity, IRQ masks) is restored on exit: normal end, error, Ctrl-C, SIGTERM or a panic in a task.
IRQ masks are journalled to /run/schedlab/irq-journal.json first; after a SIGKILL run
`schedlab taskman restore`.

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
    /// Put back IRQ masks left steered by a run that was killed with SIGKILL (reads the journal).
    Restore {
        /// Where the journal lives.
        #[arg(long, default_value = schedlab_os::irq::DEFAULT_STATE_DIR)]
        state_dir: PathBuf,
    },
    /// (internal) One background load process of the benchmark.
    #[command(hide = true)]
    Load {
        #[arg(long)]
        bytes: u64,
        #[arg(long, default_value_t = 600)]
        max_seconds: u64,
    },
}

#[derive(clap::Args)]
struct ManagerArgs {
    /// Number of workers (default: one per core, minus the first core, which is left to the system).
    #[arg(long)]
    workers: Option<usize>,
    /// Real-time priority 1..99 of the workers; a larger number is more urgent. The default 49 sits
    /// above all normal tasks and below the kernel's IRQ threads (50) and migration/watchdog (99).
    #[arg(long, default_value_t = DEFAULT_PRIORITY, allow_negative_numbers = true)]
    priority: i32,
    /// Scheduling policy of the workers: fifo (the seed), rr, or other (no real-time).
    #[arg(long, default_value = "fifo")]
    policy: LinuxPolicy,
    /// Do not pin each worker to its own CPU (they still stay off the reserved core).
    #[arg(long)]
    no_pin: bool,
    /// Leave IRQ affinity alone.
    #[arg(long)]
    no_irq: bool,
    /// Task queue: mutex-fifo (the seed's Figure 2) or stealing (crossbeam deques).
    #[arg(long, default_value = "mutex-fifo")]
    queue: QueueKind,
}

impl ManagerArgs {
    fn config(&self) -> ManagerConfig {
        ManagerConfig {
            workers: self.workers,
            policy: self.policy,
            priority: self.priority,
            pin: !self.no_pin,
            steer_irqs: !self.no_irq,
            queue: self.queue,
            ..Default::default()
        }
    }
}

#[derive(clap::Args)]
struct RunArgs {
    #[command(flatten)]
    manager: ManagerArgs,
    /// A file with one shell command per line (blank lines and # comments are skipped).
    #[arg(long, conflicts_with = "command")]
    jobs: Option<PathBuf>,
    /// Kill a command that runs longer than this (e.g. 30s, 5min).
    #[arg(long, value_parser = units::positive_duration)]
    timeout: Option<Duration>,
    /// Print one JSON document (the commands' own output goes to stderr).
    #[arg(long)]
    json: bool,
    /// (testing) Add a task that panics inside a worker.
    #[arg(long, hide = true)]
    inject_panic: bool,
    /// The command to run as one task: `-- CMD ARGS`.
    #[arg(last = true)]
    command: Vec<String>,
}

#[derive(clap::Args)]
struct BenchArgs {
    /// Small scale (5 repetitions, ~0.1 s per run; about a minute in all).
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// The seed's scale (100 repetitions of ~20 s runs: hours).
    #[arg(long)]
    full: bool,
    /// Repetitions per cell (overrides the scale; the seed used 100).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    reps: Option<u64>,
    /// Passes over the 5 MiB array per run, split over the threads (overrides the scale).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    passes: Option<u64>,
    /// Thread counts to measure, e.g. 1,2 (default 1 … number of CPUs).
    #[arg(long, value_delimiter = ',')]
    threads: Vec<usize>,
    /// Loads to measure: none, load1, load2 (default all three).
    #[arg(long, value_delimiter = ',')]
    loads: Vec<Load>,
    /// Cap on each load-2 process's memory (otherwise 19% of RAM each), e.g. 512MiB.
    #[arg(long, default_value = "512MiB", value_parser = units::size)]
    load2_cap: u64,
    /// SCHED_FIFO priority of configuration C's workers (1..99).
    #[arg(long, default_value_t = DEFAULT_PRIORITY, allow_negative_numbers = true)]
    priority: i32,
    /// Do not steer IRQs in configuration C.
    #[arg(long)]
    no_irq: bool,
    /// Root directory for results (`<out>/taskman/<UTC timestamp>/`).
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// Print one JSON document (the results document) instead of tables.
    #[arg(long)]
    json: bool,
}

/// Run `schedlab taskman`.
pub fn run(args: Args) -> Result<()> {
    match args.cmd {
        Cmd::Topology { json } => topology(json),
        Cmd::Run(a) => run_cmd(a),
        Cmd::Bench(a) => bench(a),
        Cmd::BenchQueue { tasks, reps, json } => bench_queue(tasks as usize, reps as usize, json),
        Cmd::Restore { state_dir } => restore(&state_dir),
        Cmd::Load { bytes, max_seconds } => {
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
    let mut cpus = Table::new("CPUs", &["cpu", "package", "core", "SMT siblings", "role"]);
    for c in &t.cpus {
        let role = if t.reserved_core().contains(&c.id) {
            "reserved for the system (IRQs)"
        } else if t.worker_cpus().contains(&c.id) {
            "worker"
        } else {
            "SMT sibling of a worker (left idle)"
        };
        cpus.row(vec![
            c.id.to_string(),
            c.package.to_string(),
            c.core.to_string(),
            format_cpu_list(&c.siblings),
            role.into(),
        ]);
    }
    println!("{}", schedlab_report::table::render(&cpus));
    let mut caches = Table::new("Caches", &["level", "type", "size", "shared by CPUs"]);
    for c in t.caches() {
        caches.row(vec![c.level.to_string(), c.kind, human_bytes(c.size_bytes), format_cpu_list(&c.shared_cpus)]);
    }
    println!("{}", schedlab_report::table::render(&caches));
    println!(
        "{} online CPU(s), {} package(s), {} core(s); default: {} worker(s) on CPU(s) {}",
        t.cpus.len(),
        t.packages().len(),
        t.cores().len(),
        t.worker_cpus().len(),
        if t.worker_cpus().is_empty() { "(none)".into() } else { format_cpu_list(&t.worker_cpus()) }
    );
    Ok(())
}

fn human_bytes(n: u64) -> String {
    if n >= 1 << 20 && n & ((1 << 20) - 1) == 0 {
        format!("{} MiB", n >> 20)
    } else if n >= 1024 {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} B")
    }
}

fn run_cmd(a: RunArgs) -> Result<()> {
    // Everything is checked before the machine changes: the jobs, then the configuration.
    let job_list: Vec<Job> = match (&a.jobs, a.command.is_empty()) {
        (Some(path), _) => jobs::read_job_file(path)?,
        (None, false) => vec![Job::Argv(a.command.clone())],
        (None, true) => bail!("nothing to run: give --jobs FILE or `-- CMD ARGS`"),
    };
    let cfg = a.manager.config();
    let topo = Topology::read()?;
    let plan = cfg.plan(&topo)?;
    if plan.priority == 99 {
        eprintln!("schedlab: note: priority 99 ties with the kernel's migration and watchdog threads");
    }
    schedlab_os::signals::install_stop_handler();
    let opts = RunOptions { timeout: a.timeout, stdout_to_stderr: a.json, inject_panic: a.inject_panic };
    let report = jobs::run_jobs(&cfg, &job_list, &opts)?;
    if a.json {
        output::print_json(&serde_json::to_value(&report)?)?;
    } else {
        let mut t =
            Table::new("Tasks (FCFS)", &["#", "command", "worker", "cpu", "status", "exit", "wait (s)", "run (s)"]);
        for j in &report.jobs {
            t.row(vec![
                j.id.to_string(),
                j.command.clone(),
                j.worker.to_string(),
                j.cpu.to_string(),
                j.status.clone() + &j.error.as_ref().map(|e| format!(": {e}")).unwrap_or_default(),
                match (j.exit_code, j.signal) {
                    (Some(c), _) => c.to_string(),
                    (None, Some(s)) => format!("signal {s}"),
                    _ => "—".into(),
                },
                format!("{:.3}", j.wait_s),
                format!("{:.3}", j.wall_s),
            ]);
        }
        println!("{}", schedlab_report::table::render(&t));
        let m = &report.manager;
        println!(
            "{} task(s): {} ok, {} failed, {} killed, {} panicked, {} cancelled, {} error; {:.3} s in all",
            report.jobs.len(),
            report.count("ok"),
            report.count("failed"),
            report.count("killed"),
            report.count("panicked"),
            report.count("cancelled"),
            report.count("error"),
            report.wall_s
        );
        println!(
            "workers: {} under {} priority {} on CPU(s) {}; IRQs moved to CPU(s) {}: {}, refused: {}",
            m.workers.len(),
            m.plan.policy.kernel_name(),
            m.plan.priority,
            m.workers.iter().map(|w| format_cpu_list(&w.cpus)).collect::<Vec<_>>().join(" "),
            format_cpu_list(&m.plan.reserved),
            m.irq_moved.len(),
            if m.irq_refused.is_empty() {
                "none".to_string()
            } else {
                m.irq_refused.iter().map(|r| format!("{} ({})", r.irq, r.error)).collect::<Vec<_>>().join(", ")
            }
        );
        println!(
            "restored: worker policies/affinity {}, IRQ masks {}",
            if m.workers.iter().all(|w| w.restored) { "yes" } else { "NO" },
            if m.irq_restore.failed.is_empty() {
                "yes".to_string()
            } else {
                format!("NO ({:?})", m.irq_restore.failed)
            }
        );
    }
    if report.interrupted {
        schedlab_os::signals::exit_like_signal();
    }
    Ok(())
}

struct StderrProgress;

impl Progress for StderrProgress {
    fn update(&self, fraction: f64, what: &str) {
        eprint!("\r\x1b[2K[{:>3.0}%] {what}", fraction * 100.0);
        if fraction >= 1.0 {
            eprintln!();
        }
    }
}

fn bench(a: BenchArgs) -> Result<()> {
    let scale = Scale::from_flags(a.quick, a.full);
    let topo = Topology::read()?;
    let cpus = topo.cpus.len();
    let mut p = BenchParams::for_scale(scale, cpus);
    if let Some(r) = a.reps {
        p.reps = r as usize;
    }
    if let Some(passes) = a.passes {
        p.steps = passes * (p.array_bytes / 4) as u64;
    }
    if !a.threads.is_empty() {
        if let Some(&bad) = a.threads.iter().find(|&&t| t == 0 || t > cpus) {
            bail!("invalid --threads {bad}: choose 1..={cpus} (this machine has {cpus} online CPUs)");
        }
        p.threads = a.threads.clone();
    }
    if !a.loads.is_empty() {
        p.loads = a.loads.clone();
        if !p.loads.contains(&Load::None) {
            p.loads.insert(0, Load::None); // ratios need the no-load baseline
        }
    }
    LinuxPolicy::Fifo.check_priority(a.priority).map_err(|_| {
        anyhow::anyhow!("invalid --priority {}: SCHED_FIFO accepts 1..=99 (a larger number is more urgent)", a.priority)
    })?;
    p.priority = a.priority;
    p.load2_cap_bytes = a.load2_cap;
    p.steer_irqs = !a.no_irq;
    p.configs = vec![Config::D, Config::C];
    schedlab_os::signals::install_stop_handler();
    let quiet = NoisyOrQuiet(std::io::stderr().is_terminal());
    let ctx = RunContext { scale, out_root: a.out.clone(), progress: &quiet };
    let section = run_and_write(&p, queue_params(scale), &ctx).context("taskman bench")?;
    output::emit(&section, a.json)?;
    if schedlab_os::signals::stop_requested() {
        schedlab_os::signals::exit_like_signal();
    }
    Ok(())
}

/// Progress on stderr only when it is a terminal.
struct NoisyOrQuiet(bool);

impl Progress for NoisyOrQuiet {
    fn update(&self, fraction: f64, what: &str) {
        if self.0 {
            StderrProgress.update(fraction, what);
        }
    }
}

fn bench_queue(tasks: usize, reps: usize, json: bool) -> Result<()> {
    schedlab_os::signals::install_stop_handler();
    let q = qbench::run(QueueBenchParams { tasks, reps })?;
    if json {
        return output::print_json(&serde_json::to_value(&q)?);
    }
    let mut t = Table::new(
        format!("ns per empty task ({tasks} tasks × {reps} reps; worker CPU(s) {})", format_cpu_list(&q.worker_cpus)),
        &["queue", "ns/task (mean ± 95% CI)", "speed-up vs mutex FCFS"],
    );
    for r in &q.rows {
        t.row(vec![
            r.queue.clone(),
            format!("{:.1} ± {:.1}", r.ns_per_task.mean, r.ns_per_task.ci95),
            format!("{:.2}×", r.speedup_vs_mutex),
        ]);
    }
    println!("{}", schedlab_report::table::render(&t));
    println!("All pools SCHED_OTHER on the same worker CPUs; tasks submitted from the reserved CPU. Compare ratios, not absolute ns, on a busy machine.");
    Ok(())
}

fn restore(dir: &std::path::Path) -> Result<()> {
    match schedlab_os::irq::restore_journal(dir)? {
        None => println!("nothing to restore: no IRQ journal in {}", dir.display()),
        Some(r) => {
            println!("restored {} IRQ mask(s) from {}", r.restored.len(), dir.display());
            if !r.failed.is_empty() {
                bail!(
                    "{} IRQ mask(s) could not be restored: {}",
                    r.failed.len(),
                    r.failed.iter().map(|f| format!("{} ({})", f.irq, f.error)).collect::<Vec<_>>().join(", ")
                );
            }
        }
    }
    Ok(())
}
