//! `schedlab livelock`: receive livelock (seed 002) — the live devices → kernel → apps system
//! on 127.0.0.1, each role on its own, the discrete-event model, and the seed's sweep.

mod live_args;
mod model_args;

use crate::host::Host;
use crate::output;
use anyhow::Result;
use clap::{Args as ClapArgs, Subcommand};
use live_args::LiveArgs;
use model_args::{ModelArgs, SweepArgs};
use schedlab_lab::livelock::experiment;
use schedlab_lab::livelock::roles;

/// Arguments of `schedlab livelock` (the long help is [`HELP`]).
#[derive(ClapArgs)]
#[command(after_help = HELP)]
pub struct Args {
    #[command(subcommand)]
    command: Cmd,
}

impl Args {
    /// Whether the command changes the machine (and so heals what dead runs left first).
    pub fn changes_machine(&self) -> bool {
        matches!(self.command, Cmd::Live(_) | Cmd::Kernel(_) | Cmd::Sweep(_))
    }
}

const HELP: &str = "\
Devices send UDP packets to a \"kernel\" that hands them to \"apps\", all on 127.0.0.1. The kernel
role runs two SCHED_FIFO threads on one CPU (never CPU 0 when another exists): an interrupt
thread (priority 60) above a delivery/poll thread (priority 50; a higher number is more urgent),
so a flood of interrupts really starves delivery - receive livelock - unless the strategy polls
(napi). Live commands need root and RT throttling on; every run ends after --maxtime + --lag.
The seed's own configuration is there too: --threads equal (one receiving thread per device
beside the delivery thread, all SCHED_OTHER nice 0, as the seed's Python threads were), and
sweep --config seed (that, with busy work scaled so the knee sits at the seed's 250 pkt/s).

Strategies: interrupt (the unmodified kernel), polling (the seed's round robin), hybrid (the
seed's: interrupts until the buffer is full, then polling down to --perc-occup %), napi (the
paper's fix: interrupt only schedules polling, quota per poll, queue feedback).

Examples:
  sudo schedlab livelock live --strategy interrupt --wait 10us --maxtime 3s
  sudo schedlab livelock sweep --quick
  sudo schedlab livelock sweep --config seed --quick
  schedlab livelock sweep --quick --mode model --json
  schedlab livelock model --preset mogul96 --strategy napi --quota 5 --input-pps 10000
  (three terminals, in this order) schedlab livelock apps; sudo schedlab livelock kernel;
  schedlab livelock device --wait 500us";

#[derive(Subcommand)]
enum Cmd {
    /// Run apps, kernel and devices together (in that order) and report one run.
    Live(Box<LiveArgs>),
    /// Run only the devices (the seed's device.py): send to the kernel's ports.
    Device(Box<LiveArgs>),
    /// Run only the kernel role (the seed's kernel.py): start it before the devices.
    Kernel(Box<LiveArgs>),
    /// Run only the apps (the seed's apps.py): start them first.
    Apps(Box<LiveArgs>),
    /// Run the discrete-event model once.
    Model(Box<ModelArgs>),
    /// The seed's experiment for every strategy, live and modelled, with figures.
    Sweep(Box<SweepArgs>),
}

/// Run `schedlab livelock`.
pub fn run(args: Args) -> Result<()> {
    let host = Host::collect();
    let ready = |line: String| eprintln!("schedlab: {line}");
    let (section, output) = match args.command {
        Cmd::Live(a) => (roles::live(&a.params()?)?, a.output.clone()),
        Cmd::Device(a) => (roles::device(&a.params()?)?, a.output.clone()),
        Cmd::Kernel(a) => (roles::kernel(&a.params()?, a.deadline(), &ready)?, a.output.clone()),
        Cmd::Apps(a) => (roles::apps(&a.params()?, a.deadline(), &ready)?, a.output.clone()),
        Cmd::Model(a) => (roles::model(&a.request())?, a.output),
        Cmd::Sweep(a) => {
            let cfg = a.config()?;
            eprintln!("schedlab: livelock sweep, about {:.0} s", cfg.estimate_s());
            (experiment::run(&cfg, &host.facts, &|_, line| eprintln!("  {line}"))?, a.output)
        }
    };
    output::emit(section, &output, &host)?;
    Ok(())
}
