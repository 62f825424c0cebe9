//! The figures: the seed's 2–5 (delivered, lost, buffer fills and latency against offered
//! load; live solid, model dashed) and the paper's 6-1, 6-3 and 6-5 from the `mogul96` model
//! with the published points dashed.

use super::sweep::{Curve, Mode, Point, SweepOutcome};
use schedlab_report::section::Figure;
use schedlab_report::svg::{LineChart, Series};

/// `strategy`'s points of `mode` as (offered rate, `y`), by offered rate.
pub(super) fn series_of(points: &[Point], mode: Mode, strategy: &str, y: impl Fn(&Point) -> f64) -> Vec<(f64, f64)> {
    let mut v: Vec<(f64, f64)> =
        points.iter().filter(|p| p.mode == mode && p.strategy == strategy).map(|p| (p.offered_pps, y(p))).collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    v
}

fn strategies(points: &[Point]) -> Vec<String> {
    let mut s: Vec<String> = Vec::new();
    for p in points {
        if !s.contains(&p.strategy) {
            s.push(p.strategy.clone());
        }
    }
    s
}

fn seed_chart(o: &SweepOutcome, title: &str, y_label: &str, log_y: bool, y: &dyn Fn(&Point) -> f64) -> LineChart {
    let mut series = Vec::new();
    for s in strategies(&o.points) {
        for (mode, tag) in [(Mode::Live, "live"), (Mode::Model, "model")] {
            let pts = series_of(&o.points, mode, &s, y);
            if pts.is_empty() {
                continue;
            }
            let ser = Series::new(format!("{s} ({tag})"), pts);
            series.push(if mode == Mode::Model { ser.dashed() } else { ser });
        }
    }
    LineChart {
        title: title.into(),
        x_label: "offered load (pkt/s, log)".into(),
        y_label: y_label.into(),
        log_x: true,
        log_y,
        series,
    }
}

fn fig(title: &str, file: &str, chart: LineChart, caption: &str) -> Figure {
    Figure { title: title.into(), file: file.into(), svg: chart.to_svg(), caption: caption.into() }
}

fn paper_chart(title: &str, curves: &[Curve], published: Vec<Series>) -> LineChart {
    let mut series: Vec<Series> = curves.iter().map(|c| Series::new(c.name.clone(), c.points.clone())).collect();
    series.extend(published);
    LineChart {
        title: title.into(),
        x_label: "input rate (pkt/s)".into(),
        y_label: "output rate (pkt/s)".into(),
        log_x: false,
        log_y: false,
        series,
    }
}

/// Every figure of a sweep.
pub fn all(o: &SweepOutcome) -> Vec<Figure> {
    let mut v = Vec::new();
    if !o.points.is_empty() {
        v.push(fig(
            "Fig. 2 — delivered vs offered",
            "fig2_delivered.svg",
            seed_chart(o, "Delivered vs offered (seed Fig. 2)", "delivered (pkt/s)", false, &|p| p.delivered_pps),
            "Packets delivered to the apps per second while the devices sent; live solid, model (this-machine) dashed.",
        ));
        v.push(fig(
            "Fig. 3 — packets lost",
            "fig3_lost.svg",
            seed_chart(o, "Packets lost (seed Fig. 3)", "packets lost (log)", true, &|p| p.lost as f64),
            "Sent minus received: buffer-full drops, socket drops and packets left queued at the end.",
        ));
        v.push(fig(
            "Fig. 4 — buffer fills",
            "fig4_fills.svg",
            seed_chart(o, "Buffer fills (seed Fig. 4)", "times the buffer filled", false, &|p| p.buffer_fills as f64),
            "Times the 100-packet buffer became full (polling and napi have no buffer).",
        ));
        v.push(fig(
            "Fig. 5 — latency (p99)",
            "fig5_latency.svg",
            seed_chart(o, "Latency of delivered packets, p99 (seed Fig. 5)", "p99 latency (µs, log)", true, &|p| {
                p.latency_us.p99
            }),
            "99th percentile of send-to-app latency of delivered packets (p50 and max are in the table).",
        ));
    }
    let published_61 = vec![
        Series::new("paper unmodified (≈)", vec![(4700.0, 4700.0), (10700.0, 1400.0)]).dashed(),
        Series::new("paper quota 5 (≈)", vec![(6000.0, 5150.0), (10800.0, 5150.0)]).dashed(),
    ];
    v.push(fig(
        "Paper Fig. 6-1 — mogul96 model",
        "fig6_1_mogul96.svg",
        paper_chart("Mogul & Ramakrishnan Fig. 6-1, modelled (mogul96)", &o.paper.fig6_1, published_61),
        "Output vs input of the mogul96 model: the unmodified kernel livelocks, polling with quota 5 holds its plateau.",
    ));
    let published_63 = [(5.0, 5150.0), (10.0, 4350.0), (20.0, 2300.0), (100.0, 600.0)]
        .iter()
        .map(|&(q, y)| Series::new(format!("paper quota {q} (≈)"), vec![(7000.0, y), (11000.0, y)]).dashed())
        .collect();
    v.push(fig(
        "Paper Fig. 6-3 — quotas",
        "fig6_3_quota.svg",
        paper_chart("Effect of the poll quota (paper Fig. 6-3), modelled", &o.paper.fig6_3, published_63),
        "Larger quotas starve the transmitter: plateaus 5 > 10 > 20 > 100 > none.",
    ));
    let published_65 =
        vec![Series::new("paper feedback (≈2,700–2,900)", vec![(4000.0, 2800.0), (10000.0, 2800.0)]).dashed()];
    v.push(fig(
        "Paper Fig. 6-5 — screend and feedback",
        "fig6_5_feedback.svg",
        paper_chart("A user-level screend, with and without queue feedback, modelled", &o.paper.fig6_5, published_65),
        "With feedback (inhibit input at 75 % of screend's 32-packet queue) the output holds; without it screend starves.",
    ));
    v
}
