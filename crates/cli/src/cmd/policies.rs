//! `schedlab policies`: the live policy benchmark (seed 001).

use crate::host::Host;
use crate::output::{self, OutputArgs};
use crate::progress::CommandProgress;
use crate::units;
use clap::Subcommand;
use schedlab_lab::linux_policies::params::{self, Params, WorkloadKind};
use schedlab_lab::linux_policies::run;
use schedlab_lab::Scale;
use schedlab_os::sched::LinuxPolicy;
use schedlab_os::usage::OrUsage;
use std::time::Duration;

/// Arguments of `schedlab policies`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    verb: Verb,
}

impl Args {
    /// Whether the command changes the machine (and so heals what dead runs left first).
    pub fn changes_machine(&self) -> bool {
        matches!(self.verb, Verb::Run(_))
    }
}

#[derive(Subcommand)]
enum Verb {
    /// Run N processes of a workload under each policy and compare their rusage (seed 001).
    ///
    /// For every case (process count × policy × workload) the harness forks N children of
    /// `schedlab-work <kind>` (a tiny std-only program beside `schedlab`; `cargo build --release`
    /// builds both), sets each child's policy and CPU affinity before exec, holds
    /// them all at a start gate, releases them together and reaps each one with wait4, summing
    /// user/system time and voluntary/involuntary context switches as the seed did. It also
    /// measures wall time, turnaround (release → reap: p50, p95, max) and throughput.
    ///
    /// The `empty` workload execs and exits: its CPU time per process is the start-up cost left
    /// in every other case, printed beside every table.
    ///
    /// Safety: children run on --cpus (default: every CPU but 0) and the harness on the others;
    /// from release to the last reap the harness runs SCHED_FIFO one priority level above the
    /// children. RT throttling must be on. --timeout bounds every case; on expiry, Ctrl-C or
    /// SIGTERM every child is killed and reaped and the harness's own policy is restored.
    ///
    /// FIFO, RR and DEADLINE need root (or CAP_SYS_NICE); other, batch and idle do not.
    ///
    /// Examples:
    ///   schedlab policies run --quick
    ///   schedlab policies run --procs 10000 --workload cpu --policy other,fifo --timeout 10m
    ///   schedlab policies run --policy other,batch,idle --procs 200 --json
    ///   schedlab policies run --quick --workload cpu --trace
    #[command(verbatim_doc_comment)]
    Run(RunArgs),
}

#[derive(clap::Args)]
struct RunArgs {
    /// Policies to compare: other, batch, idle, fifo, rr, deadline (comma-separated).
    /// DEADLINE children share 50% of one CPU (runtime = 50 ms / N every 100 ms) and, as the
    /// kernel requires, may run on every CPU.
    #[arg(long, value_delimiter = ',', default_value = "other,fifo,rr", value_parser = parse_policy)]
    policy: Vec<LinuxPolicy>,
    /// Processes per case (comma-separated). Default: the seed's 100,1000,10000 (50,200 with --quick).
    #[arg(long, value_delimiter = ',')]
    procs: Option<Vec<usize>>,
    /// Workloads: io (read /dev/urandom, write /dev/null), cpu (Monte Carlo π), mixed (both),
    /// empty (exec and exit: the start-up cost).
    #[arg(long, value_delimiter = ',', default_value = "io,cpu,mixed,empty", value_parser = parse_workload)]
    workload: Vec<WorkloadKind>,
    /// Real-time priority of FIFO/RR children, 1..=98 (a higher number wins; the harness runs
    /// at priority + 1 so it can always reap and stop them).
    #[arg(long, default_value_t = params::DEFAULT_PRIORITY, allow_negative_numbers = true)]
    priority: i32,
    /// CPUs the children may use, e.g. 1 or 1-3 (default: every CPU but 0 when there are two or more).
    #[arg(long, value_parser = parse_cpus, conflicts_with = "unpinned")]
    cpus: Option<CpuList>,
    /// Children over every allowed CPU but the harness's (the lowest), as the seed's children
    /// were free to use every CPU. On a 2-CPU machine that is still one CPU (the same set as
    /// the default); each table says which setting it used.
    #[arg(long)]
    unpinned: bool,
    /// Bound on each case, spawning included, e.g. 90s or 10m (default 10m; 60s with --quick).
    #[arg(long, value_parser = units::positive_duration)]
    timeout: Option<Duration>,
    /// Monte Carlo samples per cpu/mixed process. Default the seed's 1,000,000 (about 3.5 ms
    /// on a current core); 4,000,000 with --quick, so each child spans several 4 ms ticks and
    /// SCHED_OTHER's pre-emptions stand clear of FIFO's in one run.
    #[arg(long)]
    iterations: Option<u64>,
    /// Bytes each io/mixed process copies. Default 11MiB, calibrated to the seed's ≈35–40 ms of
    /// system time per io process (rw.c's own 100KiB takes ≈0.2 ms of system time on a current kernel); a tenth
    /// with --quick.
    #[arg(long, value_parser = units::size)]
    io_bytes: Option<u64>,
    /// Block size of each read/write (the seed's rw.c: 1KiB).
    #[arg(long, default_value = "1KiB", value_parser = units::size)]
    io_block: u64,
    /// Small sweep for CI: 50 and 200 processes, 60 s timeout (well under 90 s in all).
    #[arg(long)]
    quick: bool,
    /// Capture sched:sched_switch with tracefs during each case and draw per-CPU timelines (root).
    #[arg(long)]
    trace: bool,
    #[command(flatten)]
    output: OutputArgs,
}

fn parse_policy(s: &str) -> Result<LinuxPolicy, String> {
    s.parse::<LinuxPolicy>().map_err(|e| e.to_string())
}

fn parse_workload(s: &str) -> Result<WorkloadKind, String> {
    s.parse()
}

/// A parsed `--cpus` list (a newtype: clap would read a bare Vec as repeated values).
#[derive(Clone)]
struct CpuList(Vec<usize>);

fn parse_cpus(s: &str) -> Result<CpuList, String> {
    schedlab_os::affinity::parse_cpu_list(s).map(CpuList).map_err(|e| e.to_string())
}

/// Run `schedlab policies`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.verb {
        Verb::Run(a) => run_benchmark(a),
    }
}

fn run_benchmark(a: RunArgs) -> anyhow::Result<()> {
    let scale = if a.quick { Scale::Quick } else { Scale::Full };
    let mut p = Params::for_scale(scale, params::work_program()?);
    p.policies = units::unique(a.policy);
    p.workloads = units::unique(a.workload);
    if let Some(procs) = a.procs {
        p.procs = procs;
    }
    if a.priority != params::DEFAULT_PRIORITY
        && !p.policies.iter().any(|x| matches!(x, LinuxPolicy::Fifo | LinuxPolicy::Rr))
    {
        schedlab_os::bail_usage!("--priority {} applies to fifo and rr only, and neither is in --policy", a.priority);
    }
    p.priority = a.priority;
    if let Some(CpuList(c)) = a.cpus {
        p.cpus = c;
    }
    if a.unpinned {
        p.unpinned = true;
        p.cpus = params::unpinned_child_cpus();
    }
    if let Some(t) = a.timeout {
        p.timeout = t;
    }
    if let Some(i) = a.iterations {
        p.iterations = i;
    }
    if let Some(b) = a.io_bytes {
        p.io_bytes = b;
    }
    p.io_block = a.io_block;
    p.trace = a.trace;
    p.validate().or_usage()?;
    let host = Host::collect();
    let out = {
        let progress = CommandProgress::start("policies", run::TITLE, p.estimate_s());
        run::run(&p, &progress)?
    };
    let mut s = out.section;
    output::store(&mut s, &a.output, &host)?;
    output::print_as(&s, a.output.format(), |s| {
        print!("{}", out.table_data);
        println!();
        output::print_section(s);
        for f in &s.figures {
            println!("figure: {}", f.file);
        }
    })
}
