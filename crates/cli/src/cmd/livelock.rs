//! `schedlab livelock`: receive livelock (seed 002) — the live devices → kernel → apps system
//! on 127.0.0.1, each role on its own, the discrete-event model, and the seed's sweep.

use crate::host::Host;
use crate::output::{self, OutputArgs};
use crate::units;
use anyhow::{bail, Result};
use clap::{Args as ClapArgs, Subcommand};
use schedlab_lab::livelock::experiment;
use schedlab_lab::livelock::params::{BusyCosts, LiveParams, Ports};
use schedlab_lab::livelock::roles::{self, ModelRequest};
use schedlab_lab::livelock::sweep::{Mode, SweepConfig};
use schedlab_lab::Scale;
use schedlab_netrx::arrival::{ArrivalParams, Fun};
use schedlab_netrx::model::Preset;
use schedlab_netrx::strategy::{StrategyKind, StrategyParams};
use schedlab_os::clock::monotonic_ns;
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `schedlab livelock` (the long help is [`HELP`]).
#[derive(ClapArgs)]
#[command(after_help = HELP)]
pub struct Args {
    #[command(subcommand)]
    command: Cmd,
}

const HELP: &str = "\
Devices send UDP packets to a \"kernel\" that hands them to \"apps\", all on 127.0.0.1. The kernel
role runs two SCHED_FIFO threads on one CPU (never CPU 0 when another exists): an interrupt
thread (priority 60) above a delivery/poll thread (priority 50; a higher number is more urgent),
so a flood of interrupts really starves delivery - receive livelock - unless the strategy polls
(napi). Live commands need root and RT throttling on; every run ends after --maxtime + --lag.

Strategies: interrupt (the unmodified kernel), polling (the seed's round robin), hybrid (the
seed's: interrupts until the buffer is full, then polling down to --perc-occup %), napi (the
paper's fix: interrupt only schedules polling, quota per poll, queue feedback).

Examples:
  sudo schedlab livelock live --strategy interrupt --wait 1e-5 --maxtime 3s
  sudo schedlab livelock sweep --quick
  schedlab livelock sweep --quick --mode model --json
  schedlab livelock model --preset mogul96 --strategy napi --quota 5 --input-pps 10000
  (three terminals, in this order) schedlab livelock apps; sudo schedlab livelock kernel;
  schedlab livelock device --wait 0.0005";

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

/// The seed's Tables I–III and the kernel role's settings.
/// The live kernel's per-packet busy work, shared by `live`/`kernel` and `sweep`.
#[derive(ClapArgs, Clone)]
struct CostArgs {
    /// Busy work per interrupt in the interrupt thread (e.g. 25us).
    #[arg(long, default_value = "25us", value_parser = units::duration)]
    irq_cost: Duration,
    /// Busy work per packet for protocol processing in the kernel thread.
    #[arg(long, default_value = "10us", value_parser = units::duration)]
    proto_cost: Duration,
    /// Busy work per packet for delivery in the kernel thread.
    #[arg(long, default_value = "5us", value_parser = units::duration)]
    deliver_cost: Duration,
}

impl CostArgs {
    fn busy_costs(&self) -> BusyCosts {
        BusyCosts {
            irq_ns: self.irq_cost.as_nanos() as u64,
            proto_ns: self.proto_cost.as_nanos() as u64,
            deliver_ns: self.deliver_cost.as_nanos() as u64,
        }
    }
}

#[derive(ClapArgs, Clone)]
struct LiveArgs {
    /// Receive strategy of the kernel (the seed's `calendar`): interrupt, polling, hybrid, napi.
    #[arg(long, alias = "calendar", default_value = "napi")]
    strategy: StrategyKind,
    /// Arrival process of each device: constant, poisson, normal, peaks, ramp.
    #[arg(long, default_value = "constant")]
    fun: Fun,
    /// Seconds between sends of one device (constant; peaks' on-phase; ramp's shortest gap). > 0.
    #[arg(long, default_value_t = 0.001, allow_negative_numbers = true)]
    wait: f64,
    /// Poisson rate of one device, packets per second.
    #[arg(long, default_value_t = 1000.0, allow_negative_numbers = true)]
    lambda: f64,
    /// Mean gap of the normal process, seconds.
    #[arg(long, default_value_t = 0.001, allow_negative_numbers = true)]
    mu: f64,
    /// Variance of the normal gap, seconds².
    #[arg(long, default_value_t = 1e-8, allow_negative_numbers = true)]
    var: f64,
    /// Half-cycle of peaks (on, then off) and ramp (up, then down), seconds.
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    inc: f64,
    /// Number of devices (and apps).
    #[arg(long, default_value_t = 3)]
    dev: usize,
    /// How long the devices send (e.g. 10s, 1min).
    #[arg(long, default_value = "5s", value_parser = units::positive_duration)]
    maxtime: Duration,
    /// Extra time at the end for the kernel and apps to drain (e.g. 500ms).
    #[arg(long, default_value = "500ms", value_parser = units::duration)]
    lag: Duration,
    /// Measure latency of delivered packets (true/false).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    eval_lat: bool,
    /// Print every send and receive on stderr (slow at high rates).
    #[arg(long)]
    print: bool,
    /// Name of the results directory (`<out>/<experiment>/<UTC timestamp>/`).
    #[arg(long, default_value = "livelock")]
    experiment: String,
    /// Buffer size of the kernel in packets (`sz`).
    #[arg(long, default_value_t = 100)]
    sz: usize,
    /// Hybrid returns to interrupts when the buffer is at most this % full (0–100).
    #[arg(long, default_value_t = 80.0, allow_negative_numbers = true)]
    perc_occup: f64,
    /// NAPI packets per poll callback.
    #[arg(long, default_value_t = 5)]
    quota: usize,
    #[command(flatten)]
    costs: CostArgs,
    /// Device i sends to 127.0.0.1:(kernel-port + i).
    #[arg(long, alias = "port1", default_value_t = 47000)]
    kernel_port: u16,
    /// The kernel delivers device i's packets to 127.0.0.1:(app-port + i).
    #[arg(long, alias = "port2", default_value_t = 47100)]
    app_port: u16,
    /// CPU of the kernel role (default: the last CPU, never CPU 0 when another exists).
    #[arg(long)]
    kernel_cpu: Option<usize>,
    /// SCHED_FIFO priority of the interrupt thread (1–98; higher number = more urgent).
    #[arg(long, default_value_t = 60)]
    irq_prio: i32,
    /// SCHED_FIFO priority of the kernel (delivery/poll) thread; must be below --irq-prio.
    #[arg(long, default_value_t = 50)]
    softirq_prio: i32,
    /// UDP payload bytes (20–1400).
    #[arg(long, default_value_t = 32)]
    payload: usize,
    /// Seed of the random arrival processes.
    #[arg(long, default_value_t = 2)]
    seed: u64,
    /// Separate roles: extra seconds to wait for the other roles before giving up.
    #[arg(long, default_value = "20s", value_parser = units::duration)]
    grace: Duration,
    #[command(flatten)]
    output: OutputArgs,
}

impl LiveArgs {
    fn params(&self) -> Result<LiveParams> {
        let p = LiveParams {
            dev: self.dev,
            arrival: ArrivalParams {
                fun: self.fun,
                wait: self.wait,
                lambda: self.lambda,
                mu: self.mu,
                var: self.var,
                inc: self.inc,
            },
            seed: self.seed,
            maxtime: self.maxtime,
            lag: self.lag,
            eval_lat: self.eval_lat,
            print: self.print,
            experiment: self.experiment.clone(),
            strategy: self.strategy,
            kernel: StrategyParams {
                sz: self.sz,
                perc_occup: self.perc_occup,
                quota: self.quota,
                ..Default::default()
            },
            costs: self.costs.busy_costs(),
            ports: Ports { kernel_port: self.kernel_port, app_port: self.app_port },
            payload: self.payload,
            kernel_cpu: self.kernel_cpu,
            irq_prio: self.irq_prio,
            softirq_prio: self.softirq_prio,
            ..LiveParams::default()
        };
        p.validate()?;
        Ok(p)
    }

    fn deadline(&self) -> u64 {
        monotonic_ns() + (self.maxtime + self.lag + self.grace).as_nanos() as u64
    }
}

#[derive(ClapArgs)]
struct ModelArgs {
    /// Cost preset: mogul96 (Mogul & Ramakrishnan's router) or this-machine (the live busy work
    /// plus typical syscall costs).
    #[arg(long, default_value = "mogul96")]
    preset: Preset,
    /// interrupt, polling, hybrid or napi.
    #[arg(long, default_value = "napi")]
    strategy: StrategyKind,
    /// Total input rate, packets per second (split evenly over the devices).
    #[arg(long, default_value_t = 10_000.0, allow_negative_numbers = true)]
    input_pps: f64,
    /// NAPI packets per poll callback (0 = no quota).
    #[arg(long, default_value_t = 5)]
    quota: usize,
    /// Simulated time (e.g. 2s).
    #[arg(long, default_value = "2s", value_parser = units::positive_duration)]
    duration: Duration,
    /// Add the paper's screend user process (32-packet queue) that every packet must pass.
    #[arg(long)]
    screend: bool,
    /// Turn NAPI's queue feedback off.
    #[arg(long)]
    no_feedback: bool,
    /// Add a compute-bound user process and report its CPU share.
    #[arg(long)]
    hog: bool,
    /// this-machine: take the costs a live sweep measured, from its results.json
    /// (`this_machine_costs`); without it the live busy-work settings plus typical syscall
    /// costs are used.
    #[arg(long)]
    costs_from: Option<PathBuf>,
    /// Buffer size (this-machine; mogul96 uses ipintrq = 50).
    #[arg(long, default_value_t = 100)]
    sz: usize,
    /// Hybrid threshold, % of the buffer.
    #[arg(long, default_value_t = 80.0, allow_negative_numbers = true)]
    perc_occup: f64,
    #[command(flatten)]
    output: OutputArgs,
}

impl ModelArgs {
    fn request(&self) -> ModelRequest {
        ModelRequest {
            preset: self.preset,
            strategy: self.strategy,
            input_pps: self.input_pps,
            quota: self.quota,
            duration_s: self.duration.as_secs_f64(),
            screend: self.screend,
            feedback: !self.no_feedback,
            hog: self.hog,
            costs_from: self.costs_from.clone(),
            sz: self.sz,
            perc_occup: self.perc_occup,
        }
    }
}

#[derive(ClapArgs)]
struct SweepArgs {
    /// Few points of ~1.2 s each (about a minute in all).
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// The seed's scale: 111 waits of 12 s per strategy (hours).
    #[arg(long)]
    full: bool,
    /// Which halves to run: live, model or both (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "live,model")]
    mode: Vec<Mode>,
    /// Strategies to sweep (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "interrupt,polling,hybrid,napi")]
    strategies: Vec<StrategyKind>,
    #[command(flatten)]
    costs: CostArgs,
    /// Base ports (device i → kernel-port + i, kernel → app-port + i).
    #[arg(long, default_value_t = 47000)]
    kernel_port: u16,
    /// See --kernel-port.
    #[arg(long, default_value_t = 47100)]
    app_port: u16,
    #[command(flatten)]
    output: OutputArgs,
}

impl SweepArgs {
    fn config(&self) -> Result<SweepConfig> {
        if self.mode.is_empty() || self.strategies.is_empty() {
            bail!("nothing to sweep: give at least one --mode and one --strategies value");
        }
        let mut cfg = SweepConfig::for_scale(Scale::from_flags(self.quick, self.full));
        cfg.modes = self.mode.clone();
        cfg.strategies = self.strategies.clone();
        cfg.base.costs = self.costs.busy_costs();
        cfg.base.ports = Ports { kernel_port: self.kernel_port, app_port: self.app_port };
        cfg.validate()?;
        Ok(cfg)
    }
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
