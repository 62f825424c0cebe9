//! The section a livelock sweep turns into: the points, Mogul & Ramakrishnan's numbers beside
//! the mogul96 model's, the this-machine model's costs, figures and verdicts.

use super::sweep::{self, SweepConfig, SweepOutcome};
use super::{figures, landmarks, verdicts};
use crate::seed_data;
use anyhow::Result;
use schedlab_netrx::model::{self, ModelConfig};
use schedlab_netrx::strategy::StrategyKind;
use schedlab_os::machine::MachineFacts;
use schedlab_report::section::{Section, Status, Table};

pub(super) fn f0(v: f64) -> String {
    format!("{v:.0}")
}

/// The output of a modelled curve at the input rate nearest `x`.
pub(super) fn curve_at(c: &sweep::Curve, x: f64) -> f64 {
    c.points.iter().min_by(|a, b| (a.0 - x).abs().total_cmp(&(b.0 - x).abs())).map_or(0.0, |p| p.1)
}

/// Build the report section of a sweep.
pub fn section(cfg: &SweepConfig, o: &SweepOutcome, machine: &MachineFacts) -> Result<Section> {
    let mut s = Section::new("livelock", "002", "Receive livelock (Mogul & Ramakrishnan; seed 002)");
    s.summary = format!(
        "{} devices, buffer {}, perc_occup {} %, napi quota {}, {} waits from {:.3e} s to {:.3e} s, {} s per point; \
         kernel busy work irq {} µs, proto {} µs, deliver {} µs; modes {:?}. {}",
        cfg.base.dev,
        cfg.base.kernel.sz,
        cfg.base.kernel.perc_occup,
        cfg.base.kernel.quota,
        cfg.waits.len(),
        cfg.waits.last().copied().unwrap_or(0.0),
        cfg.waits.first().copied().unwrap_or(0.0),
        cfg.seconds_per_point,
        cfg.base.costs.irq_ns / 1000,
        cfg.base.costs.proto_ns / 1000,
        cfg.base.costs.deliver_ns / 1000,
        cfg.modes,
        machine.sentence(),
    );
    if let Some(why) = &o.live_skipped {
        s.status = Status::Unsupported(format!("live half not run: {why}"));
    } else if o.interrupted {
        s.status = Status::Interrupted;
    }
    s.tables.push(points_table(o));
    let marks = landmarks::Landmarks::of(o);
    if o.live_skipped.is_none() {
        s.tables.push(landmarks::table(&marks));
    }
    let (paper, model) = paper_table(o)?;
    s.tables.push(paper);
    s.tables.push(costs_table(o));
    s.figures = figures::all(o);
    s.figures.extend(landmarks::figure(o, &marks));
    s.verdicts = verdicts::live(o);
    if o.live_skipped.is_none() {
        s.verdicts.extend(landmarks::verdicts(&marks));
    }
    s.verdicts.extend(verdicts::model(o, &model));
    Ok(s)
}

fn points_table(o: &SweepOutcome) -> Table {
    let mut pts = Table::new(
        "Seed experiment: delivered vs offered (live and this-machine model)",
        &[
            "mode",
            "strategy",
            "wait (s)",
            "offered pkt/s",
            "delivered pkt/s",
            "lost",
            "buffer drops",
            "socket drops",
            "fills",
            "switches",
            "p50 µs",
            "p99 µs",
            "max µs",
        ],
    );
    for p in &o.points {
        pts.row(vec![
            format!("{:?}", p.mode).to_lowercase(),
            p.strategy.clone(),
            format!("{:.2e}", p.wait_s),
            f0(p.offered_pps),
            f0(p.delivered_pps),
            p.lost.to_string(),
            p.lost_buffer.to_string(),
            p.lost_socket.to_string(),
            p.buffer_fills.to_string(),
            p.switches.to_string(),
            format!("{:.0}", p.latency_us.p50),
            format!("{:.0}", p.latency_us.p99),
            format!("{:.0}", p.latency_us.max),
        ]);
    }
    pts.with_note(
        "Seed (Python, AMD A10 laptop): interrupt and hybrid kept up below ≈250 pkt/s and collapsed near 300 pkt/s; \
         polling lost packets from ≈150 pkt/s and recovered to ≈745 pkt/s. Socket drops come from /proc/net/udp \
         (the same counter SO_RXQ_OVFL reports in-band).",
    )
}

/// The mogul96 model's numbers the verdicts judge.
pub struct ModelPoints {
    pub unmod_peak: f64,
    pub unmod_10700: f64,
    /// Output at 10,000 input for quotas 5, 10, 20, 100 and none.
    pub plateaus: Vec<f64>,
    /// With screend and feedback at 10,000 input: quota 5 and quota 20.
    pub feedback: (f64, f64),
}

/// Mogul & Ramakrishnan's numbers beside the mogul96 model's.
fn paper_table(o: &SweepOutcome) -> Result<(Table, ModelPoints)> {
    let mr = seed_data::seed("mogul_ramakrishnan_1996");
    let num = |k: &str| mr[k].as_f64().unwrap_or(f64::NAN);
    let c61 = &o.paper.fig6_1;
    let c63 = &o.paper.fig6_3;
    let unmod_peak = c61[0].points.iter().map(|p| p.1).fold(0.0, f64::max);
    let unmod_10700 = model::run(&ModelConfig::mogul96(StrategyKind::Interrupt, 5, 10_700.0, 1.0))?.delivered_pps;
    let plateaus: Vec<f64> = c63.iter().map(|c| curve_at(c, 10_000.0)).collect();
    let fb_at = |name: &str| o.paper.fig6_5.iter().find(|c| c.name == name).map_or(0.0, |c| curve_at(c, 10_000.0));
    let fb_q5 = fb_at("quota 5, feedback");
    let fb_q20 = fb_at("quota 20, feedback");
    let mut paper = Table::new("Mogul & Ramakrishnan vs the mogul96 model", &["quantity", "paper (≈)", "model"]);
    paper.row(vec!["unmodified kernel, peak output".into(), f0(num("unmodified_peak_output")), f0(unmod_peak)]);
    paper.row(vec![
        "unmodified, output at 10,700 input".into(),
        f0(num("unmodified_output_at_10700_input")),
        f0(unmod_10700),
    ]);
    for (i, q) in ["5", "10", "20", "100"].iter().enumerate() {
        paper.row(vec![
            format!("polling quota {q}, plateau at 10,000 input"),
            f0(mr["quota_plateaus"][q].as_f64().unwrap_or(f64::NAN)),
            f0(plateaus[i]),
        ]);
    }
    paper.row(vec!["no quota, output above 6,200 input".into(), "200–600".into(), f0(plateaus[4])]);
    paper.row(vec!["screend + feedback, quota 5, at 10,000 input".into(), "2,700–2,900".into(), f0(fb_q5)]);
    paper.row(vec!["screend + feedback, quota 20, at 10,000 input".into(), "2,700–2,900".into(), f0(fb_q20)]);
    let paper = paper.with_note(
        "Model costs (µs): irq 20, rx 55.5, proto 94.5, deliver 42.8, poll 5; ipintrq 50, receive ring 32, \
         transmit ring 8, wire 67.2 µs/frame; screend 163 µs/packet (+ deliver), queue 32. Chosen from two published points \
         (peak and output at 10,700); every curve is then simulated.",
    );
    Ok((paper, ModelPoints { unmod_peak, unmod_10700, plateaus, feedback: (fb_q5, fb_q20) }))
}

fn costs_table(o: &SweepOutcome) -> Table {
    let mc = &o.this_machine;
    let mut costs = Table::new("this-machine model costs (ns)", &["irq", "rx", "proto", "deliver", "poll", "source"]);
    costs.row(vec![
        mc.costs.irq_ns.to_string(),
        mc.costs.rx_ns.to_string(),
        mc.costs.proto_ns.to_string(),
        mc.costs.deliver_ns.to_string(),
        mc.costs.poll_ns.to_string(),
        mc.source.clone(),
    ]);
    costs.with_note(format!(
        "Measured live: {:.0} ns of interrupt-thread CPU per interrupt, {:.0} ns of kernel-thread CPU per buffered \
         delivery, {:.0} ns per polled packet (napi).",
        mc.per_interrupt_ns.unwrap_or(f64::NAN),
        mc.per_buffer_delivery_ns.unwrap_or(f64::NAN),
        mc.per_polled_packet_ns.unwrap_or(f64::NAN)
    ))
}
