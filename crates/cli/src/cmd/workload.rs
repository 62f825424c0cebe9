//! `schedlab workload`: the programs experiments exec as child processes, so every child
//! runs known code (seed 001's calc_pi, rw and rwpi; seed 004's password hashing). Seed 001's
//! benchmark execs the same calc_pi, rw and rwpi code from the small `schedlab-work` binary.

use crate::units;
use clap::Subcommand;
use schedlab_lab::workloads::bursts::{self, Pattern};
use schedlab_lab::workloads::{cpu, crypt, gaps, io, mixed, pingpong};
use std::path::PathBuf;

/// Arguments of `schedlab workload`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    kind: Kind,
}

#[derive(Subcommand)]
enum Kind {
    /// CPU-bound: estimate π by Monte Carlo sampling (seed 001's calc_pi.c).
    Cpu {
        /// Samples to draw.
        #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..))]
        iterations: u64,
    },
    /// IO-bound: copy bytes from an input to an output in blocks (seed 001's rw.c).
    Io {
        /// Block size of each read and write (e.g. 1KiB).
        #[arg(long, default_value = "1KiB", value_parser = units::size)]
        block: u64,
        /// Bytes to copy in all (e.g. 100KiB; the default is calibrated to the seed's ≈35–40 ms of
        /// system time per process).
        #[arg(long, default_value = "11MiB", value_parser = units::size)]
        bytes: u64,
        #[arg(long, default_value = "/dev/urandom")]
        input: PathBuf,
        #[arg(long, default_value = "/dev/null")]
        output: PathBuf,
    },
    /// Mixed: the π loop with writes of the output interleaved (seed 001's rwpi.c).
    Mixed {
        #[arg(long, default_value_t = 1_000_000, value_parser = clap::value_parser!(u64).range(1..))]
        iterations: u64,
        #[arg(long, default_value = "1KiB", value_parser = units::size)]
        block: u64,
        #[arg(long, default_value = "11MiB", value_parser = units::size)]
        bytes: u64,
        #[arg(long, default_value = "/dev/null")]
        output: PathBuf,
    },
    /// CPU bursts and sleeps in turn, as a simulator workload's task (`validate`, `trace record`):
    /// each burst is CPU time of this thread, so it takes as long as the scheduler makes it.
    Bursts {
        /// run,sleep,run,… in ms; the last run may be `inf` (until SIGTERM).
        #[arg(long, value_name = "MS,MS,...")]
        ms: Pattern,
        /// Repeat the pattern this many times.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
        repeat: u64,
        /// Sleep between repetitions (e.g. 5ms).
        #[arg(long, default_value = "0s", value_parser = units::duration)]
        gap: std::time::Duration,
        /// Stop (SIGSTOP) once started up and begin at SIGCONT, so a recorder released with
        /// SIGCONT sees only the work.
        #[arg(long)]
        stopped_start: bool,
        /// During an endless run (`inf`), append every stretch off the CPU longer than
        /// --min-gap to this file as it happens (`START END`, monotonic ns, a line each): run as
        /// an RT task, the moments RT throttling stopped it.
        #[arg(long, value_name = "FILE")]
        gaps_out: Option<PathBuf>,
        /// The shortest gap --gaps-out keeps (e.g. 5ms).
        #[arg(long, default_value = "5ms", value_parser = units::positive_duration, requires = "gaps_out")]
        min_gap: std::time::Duration,
    },
    /// Two threads passing a byte back and forth over two pipes, with a little CPU work per
    /// message: every message wakes the other thread.
    Pingpong {
        /// How long to exchange (e.g. 2s).
        #[arg(long = "for", value_parser = units::positive_duration)]
        duration: std::time::Duration,
        /// CPU work per message on each side (e.g. 50us).
        #[arg(long, default_value = "50us", value_parser = units::duration)]
        work: std::time::Duration,
        /// Stop (SIGSTOP) once started up and begin at SIGCONT (before the second thread starts).
        #[arg(long)]
        stopped_start: bool,
        /// Pin ping and pong to two CPUs (e.g. 1,0), so every message crosses CPUs.
        #[arg(long, value_name = "PING,PONG", value_parser = cpu_pair)]
        split: Option<(usize, usize)>,
    },
    /// Hash a password in a loop and print the iteration count on exit or SIGTERM (seed 004).
    Crypt {
        /// Stop after this many hashes (and print how long they took).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..), conflicts_with = "forever")]
        iterations: Option<u64>,
        /// Hash until SIGTERM/SIGINT, then print the count.
        #[arg(long)]
        forever: bool,
        /// What one iteration is: `crypt` (crypt(3) from libcrypt.so.1, traditional DES — what
        /// the seed called) or `sha256` (a stand-in that needs no system library).
        #[arg(long, value_enum, default_value_t = HashArg::Crypt)]
        hash: HashArg,
    },
}

impl Args {
    /// `crypt`, `bursts` and `pingpong` poll the stop flag (they end cleanly on SIGTERM); seed
    /// 001's programs keep the default dispositions, as the seed's C programs did.
    pub fn polls_stop(&self) -> bool {
        matches!(self.kind, Kind::Crypt { .. } | Kind::Bursts { .. } | Kind::Pingpong { .. })
    }
}

/// `A,B`: two CPU numbers.
fn cpu_pair(s: &str) -> Result<(usize, usize), String> {
    let (a, b) = s.split_once(',').ok_or_else(|| format!("'{s}': give two CPUs, e.g. 1,0"))?;
    let cpu = |x: &str| x.trim().parse::<usize>().map_err(|_| format!("'{x}' is not a CPU number"));
    Ok((cpu(a)?, cpu(b)?))
}

/// Run `schedlab workload`.
pub fn run(args: Args) -> anyhow::Result<()> {
    schedlab_os::signals::default_sigpipe();
    match args.kind {
        Kind::Cpu { iterations } => println!("{:.6}", cpu::monte_carlo_pi(iterations, 1)),
        Kind::Io { block, bytes, input, output } => {
            let n = io::read_write(&input, &output, block as usize, bytes)
                .map_err(|e| anyhow::anyhow!("copying {} to {}: {e}", input.display(), output.display()))?;
            println!("{n}");
        }
        Kind::Mixed { iterations, block, bytes, output } => {
            let pi = mixed::pi_and_write(iterations, &output, block as usize, bytes)
                .map_err(|e| anyhow::anyhow!("writing {}: {e}", output.display()))?;
            println!("{pi:.6}");
        }
        Kind::Bursts { ms, repeat, gap, stopped_start, gaps_out, min_gap } => {
            let mut sink = match &gaps_out {
                Some(path) => Some(
                    gaps::Sink::create(path, min_gap.as_nanos() as u64)
                        .map_err(|e| anyhow::anyhow!("creating {}: {e}", path.display()))?,
                ),
                None => None,
            };
            if stopped_start {
                schedlab_os::process::stop_self()?;
            }
            let stop = schedlab_os::signals::stop_requested;
            let done = bursts::run(&ms, repeat, gap.as_nanos() as u64, stop, sink.as_mut());
            println!("{done}");
        }
        Kind::Pingpong { duration, work, stopped_start, split } => {
            if stopped_start {
                schedlab_os::process::stop_self()?;
            }
            let n = pingpong::run(duration, work.as_nanos() as u64, split, schedlab_os::signals::stop_requested)?;
            println!("{n}");
        }
        Kind::Crypt { iterations, forever, hash } => {
            if iterations.is_none() && !forever {
                schedlab_os::bail_usage!("say how long to hash: --iterations N or --forever");
            }
            let start = std::time::Instant::now();
            let hash = match hash {
                HashArg::Crypt => crypt::Hash::Crypt,
                HashArg::Sha256 => crypt::Hash::Sha256,
            };
            let done = crypt::hash_loop(hash, iterations, schedlab_os::signals::stop_requested)
                .map_err(|e| anyhow::anyhow!("workload crypt: {e}"))?;
            let secs = start.elapsed().as_secs_f64();
            println!("{{\"iterations\":{done},\"seconds\":{secs:.6}}}");
        }
    }
    Ok(())
}

/// `workload crypt --hash`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum HashArg {
    Crypt,
    Sha256,
}
