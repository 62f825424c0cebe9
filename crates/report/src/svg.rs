//! Hand-written SVG charts: line charts (linear or log axes), grouped bar charts with
//! optional error bars, and Gantt charts (`svg/gantt.rs`). Output is a standalone `<svg>` element that
//! works inline in HTML and as a file, with no fonts or scripts to ship.

use std::fmt::Write;

mod gantt;
pub use gantt::{distinct_colour, Gantt, GanttBar, GanttMark, GREY_KEY};

const W: f64 = 760.0;
const H: f64 = 440.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 56.0;
const PALETTE: [&str; 10] =
    ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];

/// The colour used for the `i`-th series everywhere (legend and marks agree).
pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Escape text for SVG/HTML.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A named series of (x, y) points.
#[derive(Debug, Clone, Default)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Drawn dashed (use for predictions or published numbers beside measurements).
    pub dashed: bool,
    /// A shaded band around the line: (low, high) at each point's x (e.g. a 95% interval).
    pub band: Option<Vec<(f64, f64)>>,
}

impl Series {
    /// A solid series.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series { name: name.into(), points, dashed: false, band: None }
    }
    /// Shade (low, high) around each point.
    pub fn with_band(mut self, band: Vec<(f64, f64)>) -> Self {
        self.band = Some(band);
        self
    }
    /// The same series, dashed.
    pub fn dashed(mut self) -> Self {
        self.dashed = true;
        self
    }
}

/// A line chart with markers.
#[derive(Debug, Clone, Default)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub log_x: bool,
    pub log_y: bool,
    pub series: Vec<Series>,
}

struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
}

impl Axis {
    fn fit(values: impl Iterator<Item = f64>, log: bool) -> Axis {
        let vals: Vec<f64> = values.filter(|v| v.is_finite() && (!log || *v > 0.0)).collect();
        let (mut lo, mut hi) = vals.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
        if !lo.is_finite() {
            (lo, hi) = if log { (1.0, 10.0) } else { (0.0, 1.0) };
        }
        if log {
            lo = 10f64.powf(lo.log10().floor());
            hi = 10f64.powf(hi.log10().ceil().max(lo.log10() + 1.0));
        } else {
            lo = lo.min(0.0);
            if hi <= lo {
                hi = lo + 1.0;
            }
            let step = nice_step((hi - lo) / 5.0);
            hi = (hi / step).ceil() * step;
        }
        Axis { lo, hi, log }
    }

    fn frac(&self, v: f64) -> f64 {
        if self.log {
            (v.max(self.lo).log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }

    fn ticks(&self) -> Vec<f64> {
        if self.log {
            let (a, b) = (self.lo.log10().round() as i32, self.hi.log10().round() as i32);
            let every = ((b - a) as f64 / 8.0).ceil().max(1.0) as i32;
            (a..=b).step_by(every as usize).map(|e| 10f64.powi(e)).collect()
        } else {
            let step = nice_step((self.hi - self.lo) / 5.0);
            let mut t = (self.lo / step).ceil() * step;
            let mut out = vec![];
            while t <= self.hi + step * 1e-9 {
                out.push(t);
                t += step;
            }
            out
        }
    }
}

fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    mag * if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    }
}

/// Format an axis or table number compactly (1.2k, 3.4M, 0.05).
pub fn short_number(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e9 {
        format!("{}G", trim(v / 1e9))
    } else if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", trim(v / 1e3))
    } else if a >= 1.0 {
        trim(v)
    } else if a >= 1e-3 {
        format!("{}", (v * 1e4).round() / 1e4)
    } else {
        format!("{v:.0e}")
    }
}

fn trim(v: f64) -> String {
    let s = format!("{:.2}", v);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn open(out: &mut String, title: &str, height: f64) {
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {height}" width="100%" role="img" font-family="sans-serif" font-size="12"><title>{t}</title><rect width="{W}" height="{height}" fill="white"/><text x="{cx}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{t}</text>"#,
        t = escape(title),
        cx = W / 2.0
    );
}

fn legend(out: &mut String, names: &[(String, bool)]) {
    for (i, (name, dashed)) in names.iter().enumerate() {
        let y = TOP + 10.0 + i as f64 * 18.0;
        let x = W - RIGHT + 14.0;
        let dash = if *dashed { r#" stroke-dasharray="5,3""# } else { "" };
        let _ = write!(
            out,
            r#"<line x1="{x}" y1="{y}" x2="{x2}" y2="{y}" stroke="{c}" stroke-width="3"{dash}/><text x="{tx}" y="{ty}">{n}</text>"#,
            x2 = x + 22.0,
            c = colour(i),
            tx = x + 28.0,
            ty = y + 4.0,
            n = escape(name)
        );
    }
}

fn axes(out: &mut String, x: Option<&Axis>, y: &Axis, x_label: &str, y_label: &str, height: f64) {
    let (pw, ph) = (W - LEFT - RIGHT, height - TOP - BOTTOM);
    for t in y.ticks() {
        let py = TOP + ph * (1.0 - y.frac(t));
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" y1="{py}" x2="{x2}" y2="{py}" stroke="#ddd"/><text x="{tx}" y="{ty}" text-anchor="end">{l}</text>"##,
            x2 = LEFT + pw,
            tx = LEFT - 6.0,
            ty = py + 4.0,
            l = short_number(t)
        );
    }
    for (t, x) in x.into_iter().flat_map(|x| x.ticks().into_iter().map(move |t| (t, x))) {
        let px = LEFT + pw * x.frac(t);
        let _ = write!(
            out,
            r##"<line x1="{px}" y1="{TOP}" x2="{px}" y2="{y2}" stroke="#eee"/><text x="{px}" y="{ty}" text-anchor="middle">{l}</text>"##,
            y2 = TOP + ph,
            ty = TOP + ph + 16.0,
            l = short_number(t)
        );
    }
    let _ = write!(
        out,
        r##"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333"/><text x="{cx}" y="{by}" text-anchor="middle">{xl}</text><text transform="translate(16,{cy}) rotate(-90)" text-anchor="middle">{yl}</text>"##,
        cx = LEFT + pw / 2.0,
        by = height - 14.0,
        cy = TOP + ph / 2.0,
        xl = escape(x_label),
        yl = escape(y_label)
    );
}

impl LineChart {
    /// Render the chart as an SVG document.
    pub fn to_svg(&self) -> String {
        let all = || self.series.iter().flat_map(|s| s.points.iter());
        let band_ends = || self.series.iter().flat_map(|s| s.band.iter().flatten().flat_map(|&(lo, hi)| [lo, hi]));
        let x = Axis::fit(all().map(|p| p.0), self.log_x);
        let y = Axis::fit(all().map(|p| p.1).chain(band_ends()), self.log_y);
        let mut out = String::new();
        open(&mut out, &self.title, H);
        axes(&mut out, Some(&x), &y, &self.x_label, &self.y_label, H);
        let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
        let to_px = |px: f64, py: f64| (LEFT + pw * x.frac(px), TOP + ph * (1.0 - y.frac(py)));
        for (i, s) in self.series.iter().enumerate() {
            let Some(band) = &s.band else { continue };
            let upper = s.points.iter().zip(band).map(|(p, b)| to_px(p.0, b.1));
            let lower = s.points.iter().zip(band).rev().map(|(p, b)| to_px(p.0, b.0));
            let outline: Vec<String> = upper
                .chain(lower)
                .filter(|(a, b)| a.is_finite() && b.is_finite())
                .map(|(a, b)| format!("{a:.1},{b:.1}"))
                .collect();
            let _ = write!(
                out,
                r#"<polygon points="{}" fill="{}" fill-opacity="0.18" stroke="none"/>"#,
                outline.join(" "),
                colour(i)
            );
        }
        for (i, s) in self.series.iter().enumerate() {
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter(|p| {
                    p.0.is_finite() && p.1.is_finite() && (!self.log_x || p.0 > 0.0) && (!self.log_y || p.1 > 0.0)
                })
                .map(|&(px, py)| to_px(px, py))
                .collect();
            let path: Vec<String> = pts.iter().map(|(a, b)| format!("{a:.1},{b:.1}")).collect();
            let dash = if s.dashed { r#" stroke-dasharray="6,4""# } else { "" };
            let _ = write!(
                out,
                r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="2"{dash}/>"#,
                path.join(" "),
                c = colour(i)
            );
            for (a, b) in pts {
                let _ = write!(out, r#"<circle cx="{a:.1}" cy="{b:.1}" r="3" fill="{}"/>"#, colour(i));
            }
        }
        legend(&mut out, &self.series.iter().map(|s| (s.name.clone(), s.dashed)).collect::<Vec<_>>());
        out.push_str("</svg>");
        out
    }
}

/// One group of bars (one colour) across all categories.
#[derive(Debug, Clone, Default)]
pub struct BarGroup {
    pub name: String,
    pub values: Vec<f64>,
    /// Optional error-bar half-widths, one per value.
    pub errors: Option<Vec<f64>>,
}

/// A grouped bar chart: categories on the x axis, one bar per group in each.
#[derive(Debug, Clone, Default)]
pub struct BarChart {
    pub title: String,
    pub y_label: String,
    pub categories: Vec<String>,
    pub groups: Vec<BarGroup>,
    pub log_y: bool,
}

impl BarChart {
    /// Render the chart as an SVG document.
    pub fn to_svg(&self) -> String {
        let tops = self.groups.iter().flat_map(|g| {
            g.values.iter().enumerate().map(move |(i, v)| v + g.errors.as_ref().and_then(|e| e.get(i)).unwrap_or(&0.0))
        });
        let y = Axis::fit(tops.chain(std::iter::once(if self.log_y { 1.0 } else { 0.0 })), self.log_y);
        let mut out = String::new();
        open(&mut out, &self.title, H);
        let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
        // Y grid and frame; category labels instead of numeric x ticks.
        axes(&mut out, None, &y, "", &self.y_label, H);
        let n = self.categories.len().max(1) as f64;
        let slot = pw / n;
        let gw = slot * 0.8 / self.groups.len().max(1) as f64;
        for (ci, cat) in self.categories.iter().enumerate() {
            let cx = LEFT + slot * (ci as f64 + 0.5);
            let _ =
                write!(out, r#"<text x="{cx}" y="{}" text-anchor="middle">{}</text>"#, TOP + ph + 16.0, escape(cat));
            for (gi, g) in self.groups.iter().enumerate() {
                let Some(&v) = g.values.get(ci) else { continue };
                let bx = LEFT + slot * ci as f64 + slot * 0.1 + gw * gi as f64;
                let top = TOP + ph * (1.0 - y.frac(v));
                let base = TOP + ph * (1.0 - y.frac(if self.log_y { y.lo } else { 0.0 }));
                let _ = write!(
                    out,
                    r#"<rect x="{bx:.1}" y="{top:.1}" width="{w:.1}" height="{h:.1}" fill="{c}"><title>{n}: {v}</title></rect>"#,
                    w = gw * 0.92,
                    h = (base - top).max(0.0),
                    c = colour(gi),
                    n = escape(&g.name),
                );
                if let Some(e) = g.errors.as_ref().and_then(|e| e.get(ci)) {
                    let (y1, y2) = (TOP + ph * (1.0 - y.frac(v + e)), TOP + ph * (1.0 - y.frac((v - e).max(y.lo))));
                    let mx = bx + gw * 0.46;
                    let _ =
                        write!(out, r##"<line x1="{mx:.1}" y1="{y1:.1}" x2="{mx:.1}" y2="{y2:.1}" stroke="#000"/>"##);
                }
            }
        }
        legend(&mut out, &self.groups.iter().map(|g| (g.name.clone(), false)).collect::<Vec<_>>());
        out.push_str("</svg>");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_chart_has_every_series() {
        let c = LineChart {
            title: "ns per insert".into(),
            x_label: "N".into(),
            y_label: "ns".into(),
            log_x: true,
            log_y: true,
            series: vec![
                Series::new("wheel", vec![(100.0, 20.0), (1e6, 30.0)]),
                Series::new("delta <list>", vec![(100.0, 50.0)]).dashed(),
            ],
        };
        let s = c.to_svg();
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert!(s.contains("wheel") && s.contains("delta &lt;list&gt;"));
        assert_eq!(s.matches("<polyline").count(), 2);
    }

    #[test]
    fn bar_chart_draws_each_value() {
        let c = BarChart {
            title: "t".into(),
            y_label: "s".into(),
            categories: vec!["a".into(), "b".into()],
            groups: vec![BarGroup { name: "D".into(), values: vec![1.0, 2.0], errors: Some(vec![0.1, 0.2]) }],
            log_y: false,
        };
        assert_eq!(c.to_svg().matches("<rect x=").count(), 2 + 1);
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(short_number(1500.0), "1500");
        assert_eq!(short_number(25_000.0), "25k");
        assert_eq!(short_number(3_000_000.0), "3M");
        assert_eq!(short_number(0.5), "0.5");
    }
}
