//! `schedlab livelock`: receive livelock (seed 002) — the live devices → kernel → apps system
//! on 127.0.0.1, each role on its own, the discrete-event model, and the seed's sweep.

use crate::{output, units};
use anyhow::{bail, Result};
use clap::{Args as ClapArgs, Subcommand};
use schedlab_lab::livelock::params::{BusyCosts, LiveParams, Ports};
use schedlab_lab::livelock::sweep::{Mode, SweepConfig};
use schedlab_lab::livelock::{apps, cpus, device, experiment, kernel, live};
use schedlab_lab::Scale;
use schedlab_netrx::arrival::{ArrivalParams, Fun};
use schedlab_netrx::model::{self, mogul96_screend, Costs, ModelConfig, Preset};
use schedlab_netrx::strategy::{StrategyKind, StrategyParams};
use schedlab_os::clock::monotonic_ns;
use schedlab_report::results::{envelope, RunDir};
use serde_json::json;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
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
    /// Print one JSON document instead of a table.
    #[arg(long)]
    json: bool,
    /// Root directory for results.
    #[arg(long, default_value = "results")]
    out: PathBuf,
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
    /// Root directory for results.
    #[arg(long, default_value = "results")]
    out: PathBuf,
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
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
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
    /// Print one JSON document (with a `points` array) instead of tables.
    #[arg(long)]
    json: bool,
    /// Root directory for results.
    #[arg(long, default_value = "results")]
    out: PathBuf,
}

/// Run `schedlab livelock`.
pub fn run(args: Args) -> Result<()> {
    schedlab_os::signals::install_stop_handler();
    let r = match args.command {
        Cmd::Live(a) => run_live(&a),
        Cmd::Device(a) => run_device(&a),
        Cmd::Kernel(a) => run_kernel(&a),
        Cmd::Apps(a) => run_apps(&a),
        Cmd::Model(a) => run_model(&a),
        Cmd::Sweep(a) => run_sweep(&a),
    };
    if schedlab_os::signals::stop_requested() {
        eprintln!("schedlab: stopped by signal; every role has ended");
        schedlab_os::signals::exit_like_signal();
    }
    r
}

fn write_run(a: &LiveArgs, p: &LiveParams, data: serde_json::Value) -> Result<serde_json::Value> {
    let doc = envelope(&p.experiment, p, data);
    let dir = RunDir::create(&a.out, &p.experiment)?;
    dir.write_json(&doc)?;
    eprintln!("schedlab: results in {}", dir.path().display());
    Ok(doc)
}

fn run_live(a: &LiveArgs) -> Result<()> {
    let p = a.params()?;
    let r = live::run(&p)?;
    let doc = write_run(a, &p, json!({ "result": r }))?;
    if a.json {
        return output::print_json(&doc);
    }
    println!(
        "strategy {} on kernel CPU {}, {} devices, wait {:e} s, {:.1} s of sending",
        r.strategy, r.kernel.cpu, p.dev, p.arrival.wait, r.send_s
    );
    println!("offered    {:>10.0} pkt/s ({} sent)", r.offered_pps, r.sent);
    println!("delivered  {:>10.0} pkt/s ({} received in all)", r.delivered_pps, r.received);
    println!(
        "lost       {:>10}  (buffer full {}, kernel sockets {}, app sockets {}, left queued {})",
        r.lost,
        r.lost_buffer,
        r.lost_socket_kernel,
        r.lost_socket_apps,
        r.lost.saturating_sub(r.lost_buffer + r.lost_socket)
    );
    println!(
        "SO_RXQ_OVFL kernel {} apps {}; /proc/net/snmp RcvbufErrors +{}",
        r.rxq_ovfl_kernel,
        r.rxq_ovfl_apps,
        r.snmp_rcvbuf_errors.map_or("?".into(), |v| v.to_string())
    );
    println!("buffer fills {}, strategy switches {}, interrupts {}", r.buffer_fills, r.switches, r.interrupts);
    println!("latency µs: p50 {:.0}, p99 {:.0}, max {:.0}", r.latency_us.p50, r.latency_us.p99, r.latency_us.max);
    println!(
        "CPU s: devices {:.2}, kernel {:.2} (interrupt thread {:.2}, kernel thread {:.2}), apps {:.2}",
        r.cpu_s.devices, r.cpu_s.kernel, r.cpu_s.kernel_irq, r.cpu_s.kernel_thread, r.cpu_s.apps
    );
    Ok(())
}

fn other_cpus(kernel_cpu: Option<usize>) -> Vec<usize> {
    cpus::choose(kernel_cpu)
        .map(|(_, o)| o)
        .unwrap_or_else(|_| schedlab_os::affinity::allowed_cpus().unwrap_or_default())
}

fn run_device(a: &LiveArgs) -> Result<()> {
    let p = a.params()?;
    let socks = device::bind_devices(p.dev)?;
    let stop = AtomicBool::new(false);
    let r = device::run(&p, &socks, &other_cpus(p.kernel_cpu), &stop)?;
    let offered = r.total_sent() as f64 / r.send_s().max(1e-9);
    let doc = write_run(a, &p, json!({ "role": "device", "report": r, "offered_pps": offered }))?;
    if a.json {
        return output::print_json(&doc);
    }
    println!(
        "devices sent {} packets in {:.2} s: {:.0} pkt/s (per device {:?}); CPU {:.2} s",
        r.total_sent(),
        r.send_s(),
        offered,
        r.sent,
        r.cpu_s
    );
    Ok(())
}

fn run_kernel(a: &LiveArgs) -> Result<()> {
    let p = a.params()?;
    cpus::preflight()?;
    let (kcpu, _) = cpus::choose(p.kernel_cpu)?;
    let socks = kernel::KernelSockets::bind(&p)?;
    eprintln!(
        "schedlab: kernel ({}) on CPU {kcpu}, ports {}..{}; start the devices now",
        p.strategy,
        p.ports.kernel(0),
        p.ports.kernel(p.dev - 1)
    );
    let stop = AtomicBool::new(false);
    let r = kernel::run(&p, &socks, kcpu, a.deadline(), &stop)?;
    let doc = write_run(a, &p, json!({ "role": "kernel", "report": r }))?;
    if a.json {
        return output::print_json(&doc);
    }
    println!(
        "kernel {}: {} interrupts, {} delivered ({} from the buffer, {} polled), buffer drops {}, fills {}, switches {}, \
         SO_RXQ_OVFL {}; CPU {:.2} s interrupt thread, {:.2} s kernel thread",
        p.strategy, r.interrupts, r.delivered, r.delivered_from_buffer, r.polled, r.buffer_drops, r.buffer_fills, r.switches,
        r.rxq_ovfl, r.irq_cpu_s, r.kthread_cpu_s
    );
    Ok(())
}

fn run_apps(a: &LiveArgs) -> Result<()> {
    let p = a.params()?;
    let socks = apps::bind_apps(&p)?;
    eprintln!(
        "schedlab: apps on ports {}..{}; start the kernel, then the devices",
        p.ports.app(0),
        p.ports.app(p.dev - 1)
    );
    let stop = AtomicBool::new(false);
    let r = apps::run(&p, &socks, &other_cpus(p.kernel_cpu), a.deadline(), &stop)?;
    let (p50, p99, max) = r.latency_us();
    let doc =
        write_run(a, &p, json!({ "role": "apps", "report": r, "latency_us": {"p50": p50, "p99": p99, "max": max} }))?;
    if a.json {
        return output::print_json(&doc);
    }
    println!(
        "apps received {} packets {:?}; latency µs p50 {p50:.0} p99 {p99:.0} max {max:.0}; SO_RXQ_OVFL {}; CPU {:.2} s",
        r.total(),
        r.received,
        r.rxq_ovfl,
        r.cpu_s
    );
    Ok(())
}

fn run_model(a: &ModelArgs) -> Result<()> {
    if !(a.input_pps.is_finite() && a.input_pps > 0.0) {
        bail!("invalid input rate: {} (must be greater than zero packets per second)", a.input_pps);
    }
    let quota = if a.quota == 0 { usize::MAX } else { a.quota };
    let secs = a.duration.as_secs_f64();
    let mut c = match a.preset {
        Preset::Mogul96 => ModelConfig::mogul96(a.strategy, quota, a.input_pps, secs),
        Preset::ThisMachine => {
            let b = BusyCosts::default();
            let params = StrategyParams { sz: a.sz, perc_occup: a.perc_occup, quota, ..Default::default() };
            let costs = match &a.costs_from {
                Some(path) => measured_costs(path)?,
                None => Costs::from_busy_work(b.irq_ns, b.proto_ns, b.deliver_ns),
            };
            let mut c = ModelConfig::this_machine(a.strategy, params, costs, kernel::KERNEL_RING_PKTS);
            c.arrival.wait = c.devices as f64 / a.input_pps;
            c.duration_s = secs;
            c
        }
    };
    if a.screend {
        c.screen = Some(mogul96_screend());
    }
    if a.no_feedback {
        c.params.fb_high = 1.0;
        c.params.fb_low = 1.0;
    }
    c.hog = a.hog;
    let r = model::run(&c)?;
    let doc = envelope("livelock-model", &c, json!({ "preset": a.preset.to_string(), "result": r }));
    let dir = RunDir::create(&a.out, "livelock-model")?;
    dir.write_json(&doc)?;
    if a.json {
        return output::print_json(&doc);
    }
    eprintln!("schedlab: results in {}", dir.path().display());
    println!("model {} / {} at {:.0} pkt/s input for {secs} s", a.preset, a.strategy, r.offered_pps);
    println!(
        "delivered {:.0} pkt/s; lost {} (device ring {}, buffer {}, late {}); fills {}, switches {}, interrupts {}",
        r.delivered_pps,
        r.lost(),
        r.lost_device,
        r.lost_buffer,
        r.lost_late,
        r.buffer_fills,
        r.switches,
        r.interrupts
    );
    println!("latency µs: p50 {:.0}, p99 {:.0}, max {:.0}", r.latency_us.p50, r.latency_us.p99, r.latency_us.max);
    println!(
        "CPU share: interrupt {:.0} %, kernel thread {:.0} %, screend {:.0} %, user hog {:.0} %, idle {:.0} %",
        100.0 * r.cpu.interrupt_s / secs,
        100.0 * r.cpu.kernel_thread_s / secs,
        100.0 * r.cpu.screen_s / secs,
        100.0 * r.cpu.hog_s / secs,
        100.0 * r.cpu.idle_s / secs
    );
    Ok(())
}

/// The `this-machine` costs recorded in a sweep's results.json.
fn measured_costs(path: &std::path::Path) -> Result<Costs> {
    let text = std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
    let doc: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{} is not a results.json ({e})", path.display()))?;
    serde_json::from_value(doc["this_machine_costs"]["costs"].clone()).map_err(|_| {
        anyhow::anyhow!(
            "{} has no this_machine_costs: give the results.json of `schedlab livelock sweep`",
            path.display()
        )
    })
}

fn run_sweep(a: &SweepArgs) -> Result<()> {
    let scale = Scale::from_flags(a.quick, a.full);
    if a.mode.is_empty() || a.strategies.is_empty() {
        bail!("nothing to sweep: give at least one --mode and one --strategies value");
    }
    let mut cfg = SweepConfig::for_scale(scale);
    cfg.modes = a.mode.clone();
    cfg.strategies = a.strategies.clone();
    cfg.base.costs = a.costs.busy_costs();
    cfg.base.ports = Ports { kernel_port: a.kernel_port, app_port: a.app_port };
    cfg.validate()?;
    eprintln!("schedlab: livelock sweep, about {:.0} s", cfg.estimate_s());
    let s = experiment::run_and_write(&cfg, &a.out, "livelock", &|_, line| eprintln!("  {line}"))?;
    output::emit(&s, a.json)
}
