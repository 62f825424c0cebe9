//! The single runs of `schedlab livelock`: all three live roles together, each role on its own
//! (like the seed's three terminals), and one run of the discrete-event model — each returned
//! as a section whose results hold the role's full report.

use super::params::{BusyCosts, LiveParams};
use super::{apps, cpus, device, kernel, live};
use anyhow::Result;
use schedlab_netrx::model::{self, mogul96_screend, Costs, ModelConfig, Preset};
use schedlab_netrx::strategy::{StrategyKind, StrategyParams};
use schedlab_os::usage::UsageError;
use schedlab_report::section::{Section, Table};
use serde_json::json;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

/// A two-column table of named measurements.
fn measures(title: String, rows: Vec<(&str, String)>) -> Table {
    let mut t = Table::new(title, &["measure", "value"]);
    for (k, v) in rows {
        t.row(vec![k.to_string(), v]);
    }
    t
}

fn role_section(p: &LiveParams, title: &str) -> Section {
    let mut s = Section::new(&p.experiment, "002", title);
    s.parameters = serde_json::to_value(p).unwrap_or_default();
    s
}

/// Apps, kernel and devices together, in that order, for one run.
pub fn live(p: &LiveParams) -> Result<Section> {
    let r = live::run(p)?;
    let mut s = role_section(p, "Receive livelock: one live run");
    s.summary = format!(
        "strategy {} on kernel CPU {}, {} devices, wait {:e} s, {:.1} s of sending",
        r.strategy, r.kernel.cpu, p.dev, p.arrival.wait, r.send_s
    );
    s.tables.push(measures(
        "One live run".into(),
        vec![
            ("offered pkt/s", format!("{:.0} ({} sent)", r.offered_pps, r.sent)),
            ("delivered pkt/s", format!("{:.0} ({} received in all)", r.delivered_pps, r.received)),
            (
                "lost",
                format!(
                    "{} (buffer full {}, kernel sockets {}, app sockets {}, left queued {})",
                    r.lost,
                    r.lost_buffer,
                    r.lost_socket_kernel,
                    r.lost_socket_apps,
                    r.lost.saturating_sub(r.lost_buffer + r.lost_socket)
                ),
            ),
            ("SO_RXQ_OVFL kernel / apps", format!("{} / {}", r.rxq_ovfl_kernel, r.rxq_ovfl_apps)),
            ("/proc/net/snmp RcvbufErrors", r.snmp_rcvbuf_errors.map_or("?".into(), |v| format!("+{v}"))),
            ("buffer fills / switches / interrupts", format!("{} / {} / {}", r.buffer_fills, r.switches, r.interrupts)),
            (
                "latency µs p50 / p99 / max",
                format!("{:.0} / {:.0} / {:.0}", r.latency_us.p50, r.latency_us.p99, r.latency_us.max),
            ),
            (
                "CPU s: devices / kernel (irq thread, kernel thread) / apps",
                format!(
                    "{:.2} / {:.2} ({:.2}, {:.2}) / {:.2}",
                    r.cpu_s.devices, r.cpu_s.kernel, r.cpu_s.kernel_irq, r.cpu_s.kernel_thread, r.cpu_s.apps
                ),
            ),
        ],
    ));
    s.results = json!({ "result": r });
    Ok(s)
}

/// The CPUs for devices and apps when they run on their own.
fn other_cpus(kernel_cpu: Option<usize>) -> Vec<usize> {
    cpus::choose(kernel_cpu)
        .map(|(_, o)| o)
        .unwrap_or_else(|_| schedlab_os::affinity::allowed_cpus().unwrap_or_default())
}

/// Only the devices (the seed's device.py): send to the kernel's ports.
pub fn device(p: &LiveParams) -> Result<Section> {
    let socks = device::bind_devices(p.dev)?;
    let r = device::run(p, &socks, &other_cpus(p.kernel_cpu), &AtomicBool::new(false))?;
    let offered = r.total_sent() as f64 / r.send_s().max(1e-9);
    let mut s = role_section(p, "Receive livelock: the devices");
    s.summary = format!(
        "devices sent {} packets in {:.2} s: {:.0} pkt/s (per device {:?}); CPU {:.2} s",
        r.total_sent(),
        r.send_s(),
        offered,
        r.sent,
        r.cpu_s
    );
    s.results = json!({ "role": "device", "report": r, "offered_pps": offered });
    Ok(s)
}

/// Only the kernel role (the seed's kernel.py); `ready` hears when it listens.
pub fn kernel(p: &LiveParams, deadline_ns: u64, ready: &dyn Fn(String)) -> Result<Section> {
    cpus::preflight()?;
    let (kcpu, _) = cpus::choose(p.kernel_cpu)?;
    let socks = kernel::KernelSockets::bind(p)?;
    ready(format!(
        "kernel ({}) on CPU {kcpu}, ports {}..{}; start the devices now",
        p.strategy,
        p.ports.kernel(0),
        p.ports.kernel(p.dev - 1)
    ));
    let r = kernel::run(p, &socks, kcpu, deadline_ns, &AtomicBool::new(false))?;
    let mut s = role_section(p, "Receive livelock: the kernel role");
    s.summary = format!(
        "kernel {}: {} interrupts, {} delivered ({} from the buffer, {} polled), buffer drops {}, fills {}, switches {}, \
         SO_RXQ_OVFL {}; CPU {:.2} s interrupt thread, {:.2} s kernel thread",
        p.strategy, r.interrupts, r.delivered, r.delivered_from_buffer, r.polled, r.buffer_drops, r.buffer_fills, r.switches,
        r.rxq_ovfl, r.irq_cpu_s, r.kthread_cpu_s
    );
    s.results = json!({ "role": "kernel", "report": r });
    Ok(s)
}

/// Only the apps (the seed's apps.py); `ready` hears when they listen.
pub fn apps(p: &LiveParams, deadline_ns: u64, ready: &dyn Fn(String)) -> Result<Section> {
    let socks = apps::bind_apps(p)?;
    ready(format!("apps on ports {}..{}; start the kernel, then the devices", p.ports.app(0), p.ports.app(p.dev - 1)));
    let r = apps::run(p, &socks, &other_cpus(p.kernel_cpu), deadline_ns, &AtomicBool::new(false))?;
    let (p50, p99, max) = r.latency_us();
    let mut s = role_section(p, "Receive livelock: the apps");
    s.summary = format!(
        "apps received {} packets {:?}; latency µs p50 {p50:.0} p99 {p99:.0} max {max:.0}; SO_RXQ_OVFL {}; CPU {:.2} s",
        r.total(),
        r.received,
        r.rxq_ovfl,
        r.cpu_s
    );
    s.results = json!({ "role": "apps", "report": r, "latency_us": {"p50": p50, "p99": p99, "max": max} });
    Ok(s)
}

/// One run of the discrete-event model.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    pub preset: Preset,
    pub strategy: StrategyKind,
    /// Total input rate, packets per second.
    pub input_pps: f64,
    /// Packets per poll callback (0 = no quota).
    pub quota: usize,
    pub duration_s: f64,
    /// Add the paper's screend process.
    pub screend: bool,
    pub feedback: bool,
    /// Add a compute-bound user process.
    pub hog: bool,
    /// this-machine: a sweep's results.json with measured costs.
    pub costs_from: Option<PathBuf>,
    pub sz: usize,
    pub perc_occup: f64,
}

impl ModelRequest {
    /// The model configuration it asks for.
    pub fn config(&self) -> Result<ModelConfig> {
        if !(self.input_pps.is_finite() && self.input_pps > 0.0) {
            schedlab_os::bail_usage!(
                "invalid input rate: {} (must be greater than zero packets per second)",
                self.input_pps
            );
        }
        let quota = if self.quota == 0 { usize::MAX } else { self.quota };
        let mut c = match self.preset {
            Preset::Mogul96 => ModelConfig::mogul96(self.strategy, quota, self.input_pps, self.duration_s),
            Preset::ThisMachine => {
                let b = BusyCosts::default();
                let params = StrategyParams { sz: self.sz, perc_occup: self.perc_occup, quota, ..Default::default() };
                let costs = match &self.costs_from {
                    Some(path) => measured_costs(path)?,
                    None => Costs::from_busy_work(b.irq_ns, b.proto_ns, b.deliver_ns),
                };
                let mut c = ModelConfig::this_machine(self.strategy, params, costs, kernel::KERNEL_RING_PKTS);
                c.arrival.wait = c.devices as f64 / self.input_pps;
                c.duration_s = self.duration_s;
                c
            }
        };
        if self.screend {
            c.screen = Some(mogul96_screend());
        }
        if !self.feedback {
            c.params.fb_high = 1.0;
            c.params.fb_low = 1.0;
        }
        c.hog = self.hog;
        Ok(c)
    }
}

/// Run the model once.
pub fn model(req: &ModelRequest) -> Result<Section> {
    let c = req.config()?;
    let r = model::run(&c)?;
    let secs = req.duration_s;
    let share = |x: f64| format!("{:.0} %", 100.0 * x / secs);
    let mut s = Section::new("livelock-model", "002", "Receive livelock: one run of the model");
    s.summary = format!("model {} / {} at {:.0} pkt/s input for {secs} s", req.preset, req.strategy, r.offered_pps);
    s.tables.push(measures(
        "One model run".into(),
        vec![
            ("delivered pkt/s", format!("{:.0}", r.delivered_pps)),
            (
                "lost (device ring, buffer, late)",
                format!("{} ({}, {}, {})", r.lost(), r.lost_device, r.lost_buffer, r.lost_late),
            ),
            ("fills / switches / interrupts", format!("{} / {} / {}", r.buffer_fills, r.switches, r.interrupts)),
            (
                "latency µs p50 / p99 / max",
                format!("{:.0} / {:.0} / {:.0}", r.latency_us.p50, r.latency_us.p99, r.latency_us.max),
            ),
            ("CPU share: interrupt", share(r.cpu.interrupt_s)),
            ("CPU share: kernel thread", share(r.cpu.kernel_thread_s)),
            ("CPU share: screend", share(r.cpu.screen_s)),
            ("CPU share: user hog", share(r.cpu.hog_s)),
            ("CPU share: idle", share(r.cpu.idle_s)),
        ],
    ));
    s.parameters = serde_json::to_value(&c)?;
    s.results = json!({ "preset": req.preset.to_string(), "result": r });
    Ok(s)
}

/// The `this-machine` costs recorded in a sweep's results.json.
fn measured_costs(path: &std::path::Path) -> Result<Costs> {
    let text = std::fs::read_to_string(path).map_err(|e| UsageError(format!("reading {}: {e}", path.display())))?;
    let doc: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| UsageError(format!("{} is not a results.json ({e})", path.display())))?;
    // results.json keeps an experiment's data under `results` (older runs kept it at the top).
    let data = if doc["results"].is_object() { &doc["results"] } else { &doc };
    let found = &data["this_machine_costs"]["costs"];
    Ok(serde_json::from_value(found.clone()).map_err(|_| {
        UsageError(format!(
            "{} has no this_machine_costs: give the results.json of `schedlab livelock sweep`",
            path.display()
        ))
    })?)
}
