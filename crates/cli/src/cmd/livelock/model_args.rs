//! The options of `schedlab livelock model` and `sweep`, with their conversion to the lab's
//! model request and sweep configuration.

use super::live_args::CostArgs;
use crate::output::OutputArgs;
use crate::units;
use anyhow::Result;
use clap::Args as ClapArgs;
use schedlab_lab::livelock::params::Ports;
use schedlab_lab::livelock::roles::ModelRequest;
use schedlab_lab::livelock::sweep::{Config, Mode, SweepConfig};
use schedlab_lab::Scale;
use schedlab_netrx::model::Preset;
use schedlab_netrx::strategy::StrategyKind;
use schedlab_os::usage::OrUsage;
use std::path::PathBuf;
use std::time::Duration;

#[derive(ClapArgs)]
pub struct ModelArgs {
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
    pub output: OutputArgs,
}

impl ModelArgs {
    pub fn request(&self) -> ModelRequest {
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
pub struct SweepArgs {
    /// Few points of ~1.2 s each (about a minute in all).
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// The seed's scale: 111 waits of 12 s per strategy (hours).
    #[arg(long)]
    full: bool,
    /// The kernel role: priorities (interrupts pre-empt delivery; the seed's waits) or seed
    /// (the seed's equal-priority threads, busy work scaled so one CPU handles the seed's 250
    /// pkt/s from interrupt to delivery, rates from 0.3× to 6× that; live only).
    #[arg(long, default_value = "priorities")]
    config: Config,
    /// Which halves to run: live, model or both (comma-separated) [default: live,model;
    /// --config seed: live].
    #[arg(long, value_delimiter = ',')]
    mode: Option<Vec<Mode>>,
    /// Strategies to sweep (comma-separated) [default: interrupt,polling,hybrid,napi;
    /// --config seed: interrupt,polling,hybrid].
    #[arg(long, value_delimiter = ',')]
    strategies: Option<Vec<StrategyKind>>,
    #[command(flatten)]
    costs: CostArgs,
    /// Base ports (device i → kernel-port + i, kernel → app-port + i).
    #[arg(long, default_value_t = 47000)]
    kernel_port: u16,
    /// See --kernel-port.
    #[arg(long, default_value_t = 47100)]
    app_port: u16,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl SweepArgs {
    pub fn config(&self) -> Result<SweepConfig> {
        let scale = Scale::from_flags(self.quick, self.full);
        let mut cfg = match self.config {
            Config::Priorities => SweepConfig::for_scale(scale),
            Config::Seed => SweepConfig::seed_for_scale(scale),
        };
        if let Some(m) = &self.mode {
            cfg.modes = m.clone();
        }
        if let Some(s) = &self.strategies {
            cfg.strategies = s.clone();
        }
        if cfg.modes.is_empty() || cfg.strategies.is_empty() {
            schedlab_os::bail_usage!("nothing to sweep: give at least one --mode and one --strategies value");
        }
        if self.config == Config::Seed && cfg.modes.contains(&Mode::Model) {
            schedlab_os::bail_usage!(
                "--config seed runs live only: the model has no time-shared kernel threads (drop --mode model)"
            );
        }
        cfg.base.costs = self.costs.busy_costs(cfg.base.costs);
        cfg.base.ports = Ports { kernel_port: self.kernel_port, app_port: self.app_port };
        cfg.validate().or_usage()?;
        Ok(cfg)
    }
}
