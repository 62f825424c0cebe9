//! The options of the live roles of `schedlab livelock` (the seed's Tables I–III and the kernel
//! role's settings) and the kernel's busy work, with their conversion to [`LiveParams`].

use crate::output::OutputArgs;
use crate::units;
use anyhow::Result;
use clap::Args as ClapArgs;
use schedlab_lab::livelock::params::{BusyCosts, KernelThreads, LiveParams, Ports};
use schedlab_netrx::arrival::{ArrivalParams, Fun};
use schedlab_netrx::strategy::{StrategyKind, StrategyParams};
use schedlab_os::clock::monotonic_ns;
use schedlab_os::usage::OrUsage;
use std::time::Duration;

/// The seed's Tables I–III and the kernel role's settings.
/// The live kernel's per-packet busy work, shared by `live`/`kernel` and `sweep`.
#[derive(ClapArgs, Clone)]
pub struct CostArgs {
    /// Busy work per interrupt in the interrupt thread [default: 25us; sweep --config seed:
    /// 2.5ms].
    #[arg(long, value_parser = units::duration)]
    irq_cost: Option<Duration>,
    /// Busy work per packet for protocol processing in the kernel thread [default: 10us;
    /// sweep --config seed: 1ms].
    #[arg(long, value_parser = units::duration)]
    proto_cost: Option<Duration>,
    /// Busy work per packet for delivery in the kernel thread [default: 5us; sweep --config
    /// seed: 500us].
    #[arg(long, value_parser = units::duration)]
    deliver_cost: Option<Duration>,
}

impl CostArgs {
    /// The costs given, the others from `default`.
    pub fn busy_costs(&self, default: BusyCosts) -> BusyCosts {
        let ns = |d: Option<Duration>, or: u64| d.map_or(or, |d| d.as_nanos() as u64);
        BusyCosts {
            irq_ns: ns(self.irq_cost, default.irq_ns),
            proto_ns: ns(self.proto_cost, default.proto_ns),
            deliver_ns: ns(self.deliver_cost, default.deliver_ns),
        }
    }
}

#[derive(ClapArgs, Clone)]
pub struct LiveArgs {
    /// Receive strategy of the kernel (the seed's `calendar`): interrupt, polling, hybrid, napi.
    #[arg(long, alias = "calendar", default_value = "napi")]
    strategy: StrategyKind,
    /// Arrival process of each device: constant, poisson, normal, peaks, ramp.
    #[arg(long, default_value = "constant")]
    fun: Fun,
    /// Time between sends of one device (constant; peaks' on-phase; ramp's shortest gap), e.g.
    /// 1ms or 10us. > 0.
    #[arg(long, default_value = "1ms", value_parser = units::duration, allow_hyphen_values = true)]
    wait: Duration,
    /// Poisson rate of one device, packets per second.
    #[arg(long, default_value_t = 1000.0, allow_negative_numbers = true)]
    lambda: f64,
    /// Mean gap of the normal process, e.g. 1ms.
    #[arg(long, default_value = "1ms", value_parser = units::duration, allow_hyphen_values = true)]
    mu: Duration,
    /// Variance of the normal gap, seconds².
    #[arg(long, default_value_t = 1e-8, allow_negative_numbers = true)]
    var: f64,
    /// Half-cycle of peaks (on, then off) and ramp (up, then down), e.g. 500ms.
    #[arg(long, default_value = "500ms", value_parser = units::duration, allow_hyphen_values = true)]
    inc: Duration,
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
    /// The kernel role's threads: priorities (one interrupt thread at --irq-prio above the
    /// delivery thread at --softirq-prio) or equal (the seed's kernel.py: one receiving thread
    /// per device beside the delivery thread, all SCHED_OTHER nice 0, default socket buffers).
    #[arg(long, default_value = "priorities")]
    threads: KernelThreads,
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
    pub output: OutputArgs,
}

impl LiveArgs {
    pub fn params(&self) -> Result<LiveParams> {
        let p = LiveParams {
            dev: self.dev,
            arrival: ArrivalParams {
                fun: self.fun,
                wait: self.wait.as_secs_f64(),
                lambda: self.lambda,
                mu: self.mu.as_secs_f64(),
                var: self.var,
                inc: self.inc.as_secs_f64(),
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
            costs: self.costs.busy_costs(BusyCosts::default()),
            ports: Ports { kernel_port: self.kernel_port, app_port: self.app_port },
            payload: self.payload,
            kernel_cpu: self.kernel_cpu,
            irq_prio: self.irq_prio,
            softirq_prio: self.softirq_prio,
            threads: self.threads,
            ..LiveParams::default()
        };
        p.validate().or_usage()?;
        Ok(p)
    }

    pub fn deadline(&self) -> u64 {
        monotonic_ns() + (self.maxtime + self.lag + self.grace).as_nanos() as u64
    }
}
