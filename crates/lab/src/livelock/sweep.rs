//! The seed's experiment — 3 devices, buffer 100, `perc_occup` 80 %, constant waits from
//! 8.85e-11 s to 0.005 s (×1.176 per step), 12 s per point — for every strategy, live and
//! modelled, plus the paper's curves from the `mogul96` model (figures 6-1, 6-3 and 6-5).
//!
//! Two configurations of the kernel role: `priorities` (interrupts pre-empt delivery, as in a
//! kernel) and `seed` (the seed's equal-priority threads, with busy work scaled so that the
//! knee sits at the seed's rate — a calibration, swept over rates around that knee).

use super::live::{self, LatencyUs, LiveResult, RoleCpu};
use super::params::{BusyCosts, KernelThreads, LiveParams};
use crate::Scale;
use anyhow::Result;
use schedlab_netrx::arrival::ArrivalParams;
use schedlab_netrx::grid;
use schedlab_netrx::model::{self, mogul96_screend, Costs, ModelConfig, ModelResult};
use schedlab_netrx::strategy::{StrategyKind, StrategyParams};
use schedlab_netrx::ParamError;
use serde::Serialize;
use serde_json::{json, Value};
use std::str::FromStr;
use std::time::Duration;

/// Live or modelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Live,
    Model,
}

impl FromStr for Mode {
    type Err = ParamError;
    fn from_str(s: &str) -> Result<Self, ParamError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "live" => Ok(Mode::Live),
            "model" => Ok(Mode::Model),
            _ => Err(ParamError::new("mode", s, "expected live or model")),
        }
    }
}

/// Which kernel role a sweep runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Config {
    /// Interrupts pre-empt delivery (SCHED_FIFO priorities), the default busy work, the seed's
    /// waits.
    Priorities,
    /// The seed's equal-priority threads, busy work scaled to the seed's knee, rates from 0.3× to
    /// 6× that knee; live only (the model has no time-shared threads).
    Seed,
}

impl FromStr for Config {
    type Err = ParamError;
    fn from_str(s: &str) -> Result<Self, ParamError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "priorities" => Ok(Config::Priorities),
            "seed" => Ok(Config::Seed),
            _ => Err(ParamError::new("config", s, "expected priorities or seed")),
        }
    }
}

impl Config {
    /// How the report names it.
    pub fn words(self) -> &'static str {
        match self {
            Config::Priorities => "interrupts above delivery",
            Config::Seed => "the seed's equal-priority threads",
        }
    }

    /// What its files' names end with.
    pub fn file_suffix(self) -> &'static str {
        match self {
            Config::Priorities => "",
            Config::Seed => "_seed_config",
        }
    }
}

/// The rate the seed's interrupt and hybrid strategies kept up to (pkt/s, its text).
pub fn seed_knee_pps() -> f64 {
    crate::seed_data::seed("002_receive_livelock")["landmarks_pps"]["interrupt_keeps_up_to"].as_f64().unwrap_or(250.0)
}

/// The seed configuration's offered rates span this many times its knee, below and above.
const SEED_RATES_OVER_KNEE: (f64, f64) = (0.3, 6.0);

/// A sweep's shape.
#[derive(Debug, Clone, Serialize)]
pub struct SweepConfig {
    pub config: Config,
    pub modes: Vec<Mode>,
    pub strategies: Vec<StrategyKind>,
    /// Inter-send waits per device, slowest first.
    pub waits: Vec<f64>,
    pub seconds_per_point: f64,
    /// The live template: devices, kernel parameters, costs, ports.
    pub base: LiveParams,
    /// Simulated seconds per point of the paper's curves.
    pub paper_seconds: f64,
}

impl SweepConfig {
    /// The sweep at `scale`: quick = 7 waits of ~1.2 s, default = 12 of 2.5 s, full = the
    /// seed's 111 waits of 12 s.
    pub fn for_scale(scale: Scale) -> Self {
        let (waits, secs, lag) = match scale {
            Scale::Quick => (grid::subset(7, 1.5e-5), 1.2, 0.3),
            Scale::Default => (grid::subset(12, 1.2e-5), 2.5, 0.5),
            Scale::Full => (grid::seed_waits().into_iter().rev().collect(), 12.0, 1.0),
        };
        let base = LiveParams {
            dev: 3,
            kernel: StrategyParams { sz: 100, perc_occup: 80.0, quota: 5, ..StrategyParams::default() },
            lag: Duration::from_secs_f64(lag),
            maxtime: Duration::from_secs_f64(secs),
            ..LiveParams::default()
        };
        SweepConfig {
            config: Config::Priorities,
            modes: vec![Mode::Live, Mode::Model],
            strategies: StrategyKind::ALL.to_vec(),
            waits,
            seconds_per_point: secs,
            base,
            paper_seconds: if scale == Scale::Quick { 1.0 } else { 2.0 },
        }
    }

    /// The seed configuration at `scale`: 7, 11 or 21 offered rates spread evenly (on a log
    /// scale) from 0.3× to 6× the seed's knee, the scale's seconds per point.
    pub fn seed_for_scale(scale: Scale) -> Self {
        let mut c = Self::for_scale(scale);
        let n = match scale {
            Scale::Quick => 7,
            Scale::Default => 11,
            Scale::Full => 21,
        };
        let knee = seed_knee_pps();
        let (lo, hi) = SEED_RATES_OVER_KNEE;
        let dev = c.base.dev as f64;
        c.waits = (0..n)
            .map(|i| {
                let rate = knee * lo * (hi / lo).powf(i as f64 / (n - 1) as f64);
                dev / rate
            })
            .collect();
        c.config = Config::Seed;
        c.modes = vec![Mode::Live];
        c.strategies = vec![StrategyKind::Interrupt, StrategyKind::Polling, StrategyKind::Hybrid];
        c.base.threads = KernelThreads::Equal;
        c.base.costs = BusyCosts::default().scaled_to_knee(knee);
        c
    }

    /// Check the template and the waits.
    pub fn validate(&self) -> Result<(), ParamError> {
        for &w in &self.waits {
            ArrivalParams { wait: w, ..self.base.arrival }.validate()?;
        }
        if !(self.seconds_per_point > 0.0 && self.seconds_per_point <= 3600.0) {
            return Err(ParamError::new("seconds per point", self.seconds_per_point, "between 0 and 3600 s"));
        }
        self.base.validate()
    }

    /// Rough wall time in seconds.
    pub fn estimate_s(&self) -> f64 {
        let live = if self.modes.contains(&Mode::Live) {
            (self.strategies.len() * self.waits.len()) as f64
                * (self.seconds_per_point + self.base.lag.as_secs_f64() + 0.1)
        } else {
            0.0
        };
        live + 5.0
    }
}

/// One point of the sweep, as `--json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub mode: Mode,
    /// Model preset (`this-machine`); absent for live points.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    pub strategy: String,
    pub wait_s: f64,
    pub offered_pps: f64,
    pub delivered_pps: f64,
    pub lost: u64,
    pub lost_buffer: u64,
    pub lost_socket: u64,
    pub buffer_fills: u64,
    pub switches: u64,
    pub interrupts: u64,
    pub latency_us: LatencyUs,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<RoleCpu>,
    /// Everything else the run measured.
    pub detail: Value,
}

impl Point {
    fn live(r: &LiveResult) -> Self {
        Point {
            mode: Mode::Live,
            preset: None,
            strategy: r.strategy.clone(),
            wait_s: r.wait_s,
            offered_pps: r.offered_pps,
            delivered_pps: r.delivered_pps,
            lost: r.lost,
            lost_buffer: r.lost_buffer,
            lost_socket: r.lost_socket,
            buffer_fills: r.buffer_fills,
            switches: r.switches,
            interrupts: r.interrupts,
            latency_us: r.latency_us,
            cpu_s: Some(r.cpu_s),
            detail: serde_json::to_value(r).unwrap_or(Value::Null),
        }
    }

    fn model(kind: StrategyKind, wait_s: f64, r: &ModelResult) -> Self {
        Point {
            mode: Mode::Model,
            preset: Some("this-machine".into()),
            strategy: kind.to_string(),
            wait_s,
            offered_pps: r.offered_pps,
            delivered_pps: r.delivered_pps,
            lost: r.lost(),
            lost_buffer: r.lost_buffer,
            lost_socket: r.lost_device,
            buffer_fills: r.buffer_fills,
            switches: r.switches,
            interrupts: r.interrupts,
            latency_us: LatencyUs { p50: r.latency_us.p50, p99: r.latency_us.p99, max: r.latency_us.max },
            cpu_s: None,
            detail: serde_json::to_value(r).unwrap_or(Value::Null),
        }
    }
}

/// The model's costs for this machine, and where they came from.
#[derive(Debug, Clone, Serialize)]
pub struct MachineCosts {
    pub costs: Costs,
    /// `measured` (from this sweep's live runs) or `busy-work guess`.
    pub source: String,
    /// Per-packet CPU measured live, ns: interrupt thread per interrupt, kernel thread per
    /// delivery from the buffer, kernel thread per polled packet.
    pub per_interrupt_ns: Option<f64>,
    pub per_buffer_delivery_ns: Option<f64>,
    pub per_polled_packet_ns: Option<f64>,
}

/// Derive the `this-machine` model costs from live results (or the busy-work settings).
pub fn machine_costs(base: &LiveParams, live: &[LiveResult]) -> MachineCosts {
    let b = base.costs;
    let guess = Costs::from_busy_work(b.irq_ns, b.proto_ns, b.deliver_ns);
    let ratio = |num: f64, den: u64| if den > 1000 { Some(num * 1e9 / den as f64) } else { None };
    fn of<'a>(live: &'a [LiveResult], s: &'static str) -> impl Iterator<Item = &'a LiveResult> {
        live.iter().filter(move |r| r.strategy == s)
    }
    let per_irq = ratio(
        of(live, "interrupt").map(|r| r.kernel.irq_cpu_s).sum(),
        of(live, "interrupt").map(|r| r.interrupts).sum(),
    );
    let per_del = ratio(
        of(live, "interrupt").map(|r| r.kernel.kthread_cpu_s).sum(),
        of(live, "interrupt").map(|r| r.kernel.delivered_from_buffer).sum(),
    );
    let per_poll =
        ratio(of(live, "napi").map(|r| r.kernel.kthread_cpu_s).sum(), of(live, "napi").map(|r| r.kernel.polled).sum());
    let costs = match (per_irq, per_del, per_poll) {
        (Some(i), Some(d), Some(pp)) => {
            let deliver = (d as u64).saturating_sub(b.proto_ns).max(guess.deliver_ns / 2);
            let rx = ((pp - d).max(500.0) as u64).min(i as u64 / 2);
            Costs {
                irq_ns: (i as u64).saturating_sub(rx).max(b.irq_ns),
                rx_ns: rx,
                proto_ns: b.proto_ns,
                deliver_ns: deliver,
                poll_ns: 1_000,
            }
        }
        _ => guess,
    };
    MachineCosts {
        costs,
        source: if per_irq.is_some() && per_del.is_some() && per_poll.is_some() {
            "measured"
        } else {
            "busy-work guess"
        }
        .into(),
        per_interrupt_ns: per_irq,
        per_buffer_delivery_ns: per_del,
        per_polled_packet_ns: per_poll,
    }
}

/// One curve of the paper's model: (input pkt/s, output pkt/s) pairs.
#[derive(Debug, Clone, Serialize)]
pub struct Curve {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// The `mogul96` model's curves: 6-1 (unmodified vs polling), 6-3 (quotas), 6-5 (screend with
/// and without queue feedback).
#[derive(Debug, Clone, Serialize)]
pub struct PaperCurves {
    pub inputs: Vec<f64>,
    pub fig6_1: Vec<Curve>,
    pub fig6_3: Vec<Curve>,
    pub fig6_5: Vec<Curve>,
}

/// Quotas of the paper's figure 6-3 (`usize::MAX` = no quota).
pub const QUOTAS: [usize; 5] = [5, 10, 20, 100, usize::MAX];

fn quota_name(q: usize) -> String {
    if q == usize::MAX {
        "no quota".into()
    } else {
        format!("quota {q}")
    }
}

/// Run the `mogul96` model across the paper's input range.
pub fn paper_curves(seconds: f64) -> Result<PaperCurves> {
    // Every 500 pkt/s, plus the paper's two landmarks (the peak and 10,700 input).
    let mut inputs: Vec<f64> = (1..=24).map(|k| k as f64 * 500.0).collect();
    inputs.extend([4700.0, 10_700.0]);
    inputs.sort_by(f64::total_cmp);
    let curve = |name: String, f: &dyn Fn(f64) -> ModelConfig| -> Result<Curve> {
        let mut pts = Vec::new();
        for &i in &inputs {
            pts.push((i, model::run(&f(i))?.delivered_pps));
        }
        Ok(Curve { name, points: pts })
    };
    let plain = |k: StrategyKind, q: usize| move |i: f64| ModelConfig::mogul96(k, q, i, seconds);
    let fig6_1 = vec![
        curve("unmodified (interrupt)".into(), &plain(StrategyKind::Interrupt, 5))?,
        curve("polling, quota 5 (napi)".into(), &plain(StrategyKind::Napi, 5))?,
        curve("seed hybrid".into(), &plain(StrategyKind::Hybrid, 5))?,
        curve("seed polling".into(), &plain(StrategyKind::Polling, 5))?,
    ];
    let mut fig6_3 = Vec::new();
    for q in QUOTAS {
        fig6_3.push(curve(quota_name(q), &plain(StrategyKind::Napi, q))?);
    }
    let screened = |k: StrategyKind, q: usize, feedback: bool| {
        move |i: f64| {
            let mut c = ModelConfig::mogul96(k, q, i, seconds);
            c.screen = Some(mogul96_screend());
            if !feedback {
                c.params.fb_high = 1.0;
                c.params.fb_low = 1.0;
            }
            c
        }
    };
    let mut fig6_5 = vec![curve("unmodified + screend".into(), &screened(StrategyKind::Interrupt, 5, false))?];
    for q in [5, 20, usize::MAX] {
        fig6_5.push(curve(format!("{}, no feedback", quota_name(q)), &screened(StrategyKind::Napi, q, false))?);
        fig6_5.push(curve(format!("{}, feedback", quota_name(q)), &screened(StrategyKind::Napi, q, true))?);
    }
    Ok(PaperCurves { inputs, fig6_1, fig6_3, fig6_5 })
}

/// Everything a sweep produced.
#[derive(Debug, Clone, Serialize)]
pub struct SweepOutcome {
    pub points: Vec<Point>,
    pub this_machine: MachineCosts,
    pub paper: PaperCurves,
    /// Why the live half did not run, if it did not.
    pub live_skipped: Option<String>,
    pub interrupted: bool,
}

/// Run the sweep. `note` receives one progress line per point (stderr in the CLI).
pub fn run(cfg: &SweepConfig, note: &dyn Fn(f64, &str)) -> Result<SweepOutcome> {
    cfg.validate()?;
    let mut points = Vec::new();
    let mut lives: Vec<LiveResult> = Vec::new();
    let mut live_skipped = None;
    let mut interrupted = false;
    let total = (cfg.strategies.len() * cfg.waits.len()).max(1) as f64;
    if cfg.modes.contains(&Mode::Live) {
        if let Err(e) = super::cpus::preflight().and_then(|_| super::cpus::choose(cfg.base.kernel_cpu).map(|_| ())) {
            live_skipped = Some(e.to_string());
        } else {
            'outer: for (si, &k) in cfg.strategies.iter().enumerate() {
                for (wi, &w) in cfg.waits.iter().enumerate() {
                    if schedlab_os::signals::stop_requested() {
                        interrupted = true;
                        break 'outer;
                    }
                    let p = LiveParams {
                        strategy: k,
                        arrival: ArrivalParams { wait: w, ..cfg.base.arrival },
                        maxtime: Duration::from_secs_f64(cfg.seconds_per_point),
                        ..cfg.base.clone()
                    };
                    let r = live::run(&p)?;
                    note(
                        (si * cfg.waits.len() + wi + 1) as f64 / total,
                        &format!(
                            "live {k:<9} wait {w:.3e} s: offered {:>8.0} pkt/s, delivered {:>8.0} pkt/s, lost {}, fills {}",
                            r.offered_pps, r.delivered_pps, r.lost, r.buffer_fills
                        ),
                    );
                    points.push(Point::live(&r));
                    lives.push(r);
                }
            }
        }
    }
    let this_machine = machine_costs(&cfg.base, &lives);
    if cfg.modes.contains(&Mode::Model) {
        for &k in &cfg.strategies {
            for &w in &cfg.waits {
                // The model sends at the rate the live devices achieved (a wait of 8.85e-11 s
                // means "as fast as a sender can"), or at most one packet per 5 µs per device.
                let achieved = lives
                    .iter()
                    .find(|r| r.strategy == k.to_string() && r.wait_s == w)
                    .map(|r| cfg.base.dev as f64 / r.offered_pps.max(1.0));
                let wait = w.max(achieved.unwrap_or(5e-6));
                let mut c =
                    ModelConfig::this_machine(k, cfg.base.kernel, this_machine.costs, super::kernel::KERNEL_RING_PKTS);
                c.devices = cfg.base.dev;
                c.arrival = ArrivalParams { wait, ..cfg.base.arrival };
                c.duration_s = cfg.seconds_per_point;
                points.push(Point::model(k, w, &model::run(&c)?));
            }
        }
    }
    let paper = paper_curves(cfg.paper_seconds)?;
    Ok(SweepOutcome { points, this_machine, paper, live_skipped, interrupted })
}

/// The results document's data part (the envelope adds experiment, machine, parameters).
pub fn data(o: &SweepOutcome) -> Value {
    json!({
        "points": o.points,
        "this_machine_costs": o.this_machine,
        "paper_model": o.paper,
        "live_skipped": o.live_skipped,
        "interrupted": o.interrupted,
    })
}
