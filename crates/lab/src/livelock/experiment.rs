//! The registered experiment `livelock` (seed 002): a sweep (live and modelled) turned into its
//! section, with every point as raw CSV rows, and a second, live sweep of the seed's
//! equal-priority configuration added to it.

use super::section;
use super::sweep::{self, Mode, Point, SweepConfig};
use crate::{Experiment, RunContext, Scale};
use anyhow::Result;
use schedlab_os::machine::MachineFacts;
use schedlab_report::section::{DataFile, Section, Status};

/// Seed 002 for `schedlab reproduce`.
pub struct Livelock;

impl Experiment for Livelock {
    fn name(&self) -> &'static str {
        "livelock"
    }
    fn seed(&self) -> &'static str {
        "002"
    }
    fn title(&self) -> &'static str {
        "Receive livelock: interrupt, polling, hybrid and NAPI, live on loopback and modelled"
    }
    fn scale_of(&self, scale: Scale) -> String {
        let c = SweepConfig::for_scale(scale);
        let seed = SweepConfig::seed_for_scale(scale);
        let also = format!(
            "; the seed's configuration at {} offered rates × {} s each",
            seed.waits.len(),
            seed.seconds_per_point
        );
        if scale == Scale::Full {
            return format!(
                "the seed's {} send intervals × {} s each: the seed's scale{also}",
                c.waits.len(),
                c.seconds_per_point
            );
        }
        format!(
            "{} of the seed's 111 send intervals × {} s each (seed: 111 × 12 s){also}",
            c.waits.len(),
            c.seconds_per_point
        )
    }
    fn estimate_s(&self, scale: Scale) -> f64 {
        SweepConfig::for_scale(scale).estimate_s() + SweepConfig::seed_for_scale(scale).estimate_s()
    }
    fn run(&self, ctx: &RunContext) -> Result<Section> {
        let cfgs = [SweepConfig::for_scale(ctx.scale), SweepConfig::seed_for_scale(ctx.scale)];
        run_with_seed_config(&cfgs, ctx.machine, &|f, what| ctx.progress.update(f, what))
    }
}

/// Run the sweep and the seed configuration's sweep after it, and return one section: the
/// first sweep's, with the second's part added (`seed_config` in its results, its points in
/// `points_seed_config.csv`). An interrupted first sweep skips the second.
pub fn run_with_seed_config(
    [cfg, seed]: &[SweepConfig; 2],
    machine: &MachineFacts,
    note: &dyn Fn(f64, &str),
) -> Result<Section> {
    let share = cfg.estimate_s() / (cfg.estimate_s() + seed.estimate_s());
    let mut s = run(cfg, machine, &|f, what| note(f * share, what))?;
    if s.status != Status::Completed {
        return Ok(s);
    }
    let o = sweep::run(seed, &|f, what| note(share + f * (1.0 - share), &format!("seed configuration: {what}")))?;
    s.summary = format!("{} {}", s.summary, section::seed_config_summary(seed));
    section::add_seed_config(&mut s, seed, &o);
    if o.interrupted {
        s.status = Status::Interrupted;
    }
    s.results["seed_config"] = sweep::data(&o);
    s.parameters["seed_config"] = serde_json::to_value(seed)?;
    s.files.push(points_csv(&o.points, "points_seed_config.csv"));
    Ok(s)
}

/// Run a sweep and return its section: tables, figures, verdicts, the sweep's data as results
/// and every point as `points.csv`.
pub fn run(cfg: &SweepConfig, machine: &MachineFacts, note: &dyn Fn(f64, &str)) -> Result<Section> {
    let o = sweep::run(cfg, note)?;
    let mut s = section::section(cfg, &o, machine)?;
    s.parameters = serde_json::to_value(cfg)?;
    s.results = sweep::data(&o);
    s.files.push(points_csv(&o.points, "points.csv"));
    Ok(s)
}

/// Every point as a raw CSV row.
fn points_csv(points: &[Point], name: &str) -> DataFile {
    let header = [
        "mode",
        "strategy",
        "wait_s",
        "offered_pps",
        "delivered_pps",
        "lost",
        "lost_buffer",
        "lost_socket",
        "buffer_fills",
        "switches",
        "interrupts",
        "p50_us",
        "p99_us",
        "max_us",
    ];
    let rows: Vec<Vec<String>> = points
        .iter()
        .map(|p| {
            vec![
                format!("{:?}", p.mode).to_lowercase(),
                p.strategy.clone(),
                format!("{:e}", p.wait_s),
                format!("{:.1}", p.offered_pps),
                format!("{:.1}", p.delivered_pps),
                p.lost.to_string(),
                p.lost_buffer.to_string(),
                p.lost_socket.to_string(),
                p.buffer_fills.to_string(),
                p.switches.to_string(),
                p.interrupts.to_string(),
                format!("{:.1}", p.latency_us.p50),
                format!("{:.1}", p.latency_us.p99),
                format!("{:.1}", p.latency_us.max),
            ]
        })
        .collect();
    DataFile::csv(name, &header, rows)
}

/// Peak delivered rate, delivered rate at the highest offered load, and their ratio.
pub fn peak_and_tail(points: &[Point], mode: Mode, strategy: &str) -> Option<(f64, f64, f64)> {
    let pts: Vec<&Point> = points.iter().filter(|p| p.mode == mode && p.strategy == strategy).collect();
    let peak = pts.iter().map(|p| p.delivered_pps).fold(0.0, f64::max);
    let top = pts.iter().max_by(|a, b| a.offered_pps.total_cmp(&b.offered_pps))?;
    Some((peak, top.delivered_pps, if peak > 0.0 { top.delivered_pps / peak } else { 0.0 }))
}
