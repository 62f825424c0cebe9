//! Gantt charts: lanes (CPUs or tasks) against time, one colour per key (task) that no other
//! key in the chart shares, a legend of what each colour is, lane labels that fit (the label
//! column grows with the longest), an optional time window, and bars too thin to see merged
//! into one per pixel run, so a chart of thousands of slices stays small.

use super::{escape, short_number, Axis, PALETTE, TOP};
use std::collections::HashMap;
use std::fmt::Write;

/// A bar with this key is "not a task of interest" (blocked, other processes): drawn grey and
/// listed once in the legend.
pub const GREY_KEY: usize = usize::MAX;
const GREY: &str = "#b8b8b8";
/// Plot width in SVG units.
const PLOT_W: f64 = 640.0;
const LANE_H: f64 = 26.0;
const BOTTOM: f64 = 48.0;
/// Average advance of a 12-unit sans-serif character, rounded up so estimates are not short.
const CHAR_W: f64 = 7.2;
/// Legend entries drawn; the rest are counted.
const MAX_LEGEND: usize = 30;
const LEGEND_CHARS: usize = 28;
/// Bars narrower than this (SVG units) are merged with their neighbours.
const SLIVER: f64 = 1.5;

/// One bar of a Gantt chart.
#[derive(Debug, Clone)]
pub struct GanttBar {
    /// Row index into [`Gantt::lanes`].
    pub lane: usize,
    pub start: f64,
    pub end: f64,
    /// Text inside the bar when it is wide enough, in the tooltip, and in the legend.
    pub label: String,
    /// Bars with the same key share a colour (e.g. the task id); [`GREY_KEY`] is grey.
    pub colour_key: usize,
}

/// A point event drawn as a tick above a lane (arrival, wake-up, I/O completion).
#[derive(Debug, Clone)]
pub struct GanttMark {
    pub lane: usize,
    pub at: f64,
    pub label: String,
}

/// A Gantt chart: lanes (CPUs or tasks) against time; gaps are idle time.
#[derive(Debug, Clone, Default)]
pub struct Gantt {
    pub title: String,
    pub time_label: String,
    pub lanes: Vec<String>,
    pub bars: Vec<GanttBar>,
    pub marks: Vec<GanttMark>,
    /// Draw only `[from, to)` (None: from 0 to the last bar or mark).
    pub window: Option<(f64, f64)>,
}

/// The colour of the `k`-th distinct key of a chart: the palette, then golden-angle hues at
/// three saturations and four lightnesses, so no two keys of one chart share a colour.
pub fn distinct_colour(k: usize) -> String {
    match PALETTE.get(k) {
        Some(c) => (*c).to_string(),
        None => {
            let hue = (k as f64 * 137.507_764) % 360.0;
            format!("hsl({hue:.2},{}%,{}%)", 50 + (k % 3) * 15, 32 + (k % 4) * 10)
        }
    }
}

impl Gantt {
    /// Render the chart; idle time shows as hatched lane background.
    pub fn to_svg(&self) -> String {
        let (from, to) = self.window.unwrap_or_else(|| {
            let end = self.bars.iter().map(|b| b.end).chain(self.marks.iter().map(|m| m.at)).fold(0.0, f64::max);
            (0.0, end)
        });
        let x = Axis::fit([from, to.max(from)].into_iter(), false);
        let bars: Vec<&GanttBar> = self.bars.iter().filter(|b| b.end > from && b.start < to).collect();
        let legend = Legend::of(&bars);
        let label_w = 12.0 + CHAR_W * self.lanes.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64;
        let left = label_w.max(60.0);
        let legend_w = if legend.entries.is_empty() { 0.0 } else { legend.width() };
        let mut width = left + PLOT_W + 24.0 + legend_w;
        width = width.max(20.0 + 8.5 * self.title.chars().count() as f64);
        let lanes_h = LANE_H * self.lanes.len().max(1) as f64;
        let height = TOP + BOTTOM + lanes_h.max(legend.height());
        let px = |t: f64| left + PLOT_W * x.frac(t.clamp(from, to));

        let mut out = String::new();
        let _ = write!(
            out,
            r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0} {height:.0}" width="100%" role="img" font-family="sans-serif" font-size="12"><title>{t}</title><rect width="{width:.0}" height="{height:.0}" fill="white"/><text x="{cx:.1}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{t}</text><defs><pattern id="idle" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#ddd" stroke-width="2"/></pattern></defs>"##,
            t = escape(&self.title),
            cx = width / 2.0
        );
        for (i, lane) in self.lanes.iter().enumerate() {
            let y = TOP + LANE_H * i as f64;
            let _ = write!(
                out,
                r##"<rect x="{left:.1}" y="{y}" width="{PLOT_W}" height="{h}" fill="url(#idle)"/><text class="lane" x="{tx:.1}" y="{ty}" text-anchor="end">{l}</text>"##,
                h = LANE_H - 4.0,
                tx = left - 6.0,
                ty = y + LANE_H / 2.0 + 2.0,
                l = escape(lane)
            );
        }
        self.draw_bars(&mut out, &bars, &legend, &px);
        self.draw_marks(&mut out, from, to, &px);
        let ty = TOP + lanes_h;
        for t in x.ticks().into_iter().filter(|t| (from..=to).contains(t)) {
            let _ = write!(
                out,
                r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
                px(t),
                ty + 14.0,
                short_number(t)
            );
        }
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            left + PLOT_W / 2.0,
            height - 12.0,
            escape(&self.time_label)
        );
        legend.draw(&mut out, left + PLOT_W + 24.0);
        out.push_str("</svg>");
        out
    }

    /// One tick per mark; marks closer than a tick's width in one lane share a tick whose
    /// tooltip counts them.
    fn draw_marks(&self, out: &mut String, from: f64, to: f64, px: &dyn Fn(f64) -> f64) {
        let mut marks: Vec<(usize, f64, &GanttMark)> =
            self.marks.iter().filter(|m| m.at >= from && m.at < to).map(|m| (m.lane, px(m.at), m)).collect();
        marks.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let mut i = 0;
        while i < marks.len() {
            let (lane, x, first) = marks[i];
            let n = marks[i..].iter().take_while(|m| m.0 == lane && m.1 - x < 6.0).count();
            let tip = if n == 1 {
                format!("{} at {}", escape(&first.label), short_number(first.at))
            } else {
                format!("{n} events from {}, the first {}", short_number(first.at), escape(&first.label))
            };
            let _ = write!(
                out,
                r#"<path d="M{x:.1},{y} l-4,-6 h8 z" fill="black"><title>{tip}</title></path>"#,
                y = TOP + LANE_H * lane as f64
            );
            i += n;
        }
    }

    /// Wide bars one by one (with a tooltip, and their label inside when it fits); runs of
    /// bars thinner than [`SLIVER`] in one lane merged into one bar of the colour that holds most
    /// of the run, its tooltip counting the slices.
    fn draw_bars(&self, out: &mut String, bars: &[&GanttBar], legend: &Legend, px: &dyn Fn(f64) -> f64) {
        let mut by_lane: Vec<Vec<&GanttBar>> = vec![Vec::new(); self.lanes.len()];
        for b in bars.iter().filter(|b| b.lane < self.lanes.len()) {
            by_lane[b.lane].push(b);
        }
        for (lane, mut v) in by_lane.into_iter().enumerate() {
            v.sort_by(|a, b| a.start.total_cmp(&b.start));
            let y = TOP + LANE_H * lane as f64;
            let h = LANE_H - 4.0;
            let mut run: Option<Sliver> = None;
            for b in v {
                let (x0, x1) = (px(b.start), px(b.end));
                if x1 - x0 >= SLIVER {
                    if let Some(r) = run.take() {
                        r.draw(out, y, h, legend);
                    }
                    let _ = write!(
                        out,
                        r#"<rect x="{x0:.2}" y="{y}" width="{w:.2}" height="{h}" fill="{c}" stroke="white" stroke-width="0.5"><title>{l}: {s}–{e}</title></rect>"#,
                        w = x1 - x0,
                        c = legend.colour(b.colour_key),
                        l = escape(&b.label),
                        s = short_number(b.start),
                        e = short_number(b.end)
                    );
                    if x1 - x0 > CHAR_W * b.label.chars().count() as f64 + 4.0 {
                        let _ = write!(
                            out,
                            r#"<text x="{cx:.1}" y="{ty}" text-anchor="middle" fill="white" font-size="11">{l}</text>"#,
                            cx = (x0 + x1) / 2.0,
                            ty = y + LANE_H / 2.0 + 2.0,
                            l = escape(&b.label)
                        );
                    }
                    continue;
                }
                match &mut run {
                    Some(r) if x0 <= r.x1 + 0.5 && r.x1 - r.x0 < SLIVER * 4.0 => r.add(x1, b),
                    _ => {
                        if let Some(r) = run.take() {
                            r.draw(out, y, h, legend);
                        }
                        run = Some(Sliver::new(x0, x1, b));
                    }
                }
            }
            if let Some(r) = run {
                r.draw(out, y, h, legend);
            }
        }
    }
}

/// Thin bars merged into one.
struct Sliver {
    x0: f64,
    x1: f64,
    count: usize,
    time_by_key: HashMap<usize, f64>,
}

impl Sliver {
    fn new(x0: f64, x1: f64, b: &GanttBar) -> Self {
        let mut s = Sliver { x0, x1, count: 0, time_by_key: HashMap::new() };
        s.add(x1, b);
        s
    }

    fn add(&mut self, x1: f64, b: &GanttBar) {
        self.x1 = self.x1.max(x1);
        self.count += 1;
        *self.time_by_key.entry(b.colour_key).or_default() += b.end - b.start;
    }

    fn draw(&self, out: &mut String, y: f64, h: f64, legend: &Legend) {
        let key =
            self.time_by_key.iter().max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(a.0))).map_or(GREY_KEY, |(k, _)| *k);
        let _ = write!(
            out,
            r#"<rect x="{:.2}" y="{y}" width="{:.2}" height="{h}" fill="{}"><title>{} slices</title></rect>"#,
            self.x0,
            (self.x1 - self.x0).max(0.6),
            legend.colour(key),
            self.count
        );
    }
}

/// The chart's keys in order of first appearance, each with its colour and first label.
struct Legend {
    entries: Vec<(usize, String, String)>,
    index: HashMap<usize, usize>,
}

impl Legend {
    fn of(bars: &[&GanttBar]) -> Legend {
        let mut l = Legend { entries: Vec::new(), index: HashMap::new() };
        let mut next = 0;
        for b in bars {
            if let Some(&i) = l.index.get(&b.colour_key) {
                // Grey stands for many things (other processes, waits): named once, plainly.
                if b.colour_key == GREY_KEY && l.entries[i].2 != b.label {
                    l.entries[i].2 = "other".into();
                }
                continue;
            }
            let colour = if b.colour_key == GREY_KEY {
                GREY.to_string()
            } else {
                next += 1;
                distinct_colour(next - 1)
            };
            l.index.insert(b.colour_key, l.entries.len());
            l.entries.push((b.colour_key, colour, b.label.clone()));
        }
        l
    }

    fn colour(&self, key: usize) -> &str {
        self.index.get(&key).map_or(GREY, |&i| self.entries[i].1.as_str())
    }

    fn shown(&self) -> usize {
        self.entries.len().min(MAX_LEGEND)
    }

    fn width(&self) -> f64 {
        let chars =
            self.entries.iter().take(MAX_LEGEND).map(|e| e.2.chars().count().min(LEGEND_CHARS)).max().unwrap_or(0);
        24.0 + CHAR_W * chars.max(12) as f64 + 8.0
    }

    fn height(&self) -> f64 {
        16.0 * (self.shown() + 1) as f64
    }

    fn draw(&self, out: &mut String, x: f64) {
        for (i, (_, colour, label)) in self.entries.iter().take(MAX_LEGEND).enumerate() {
            let y = TOP + 16.0 * i as f64;
            let text: String = if label.chars().count() > LEGEND_CHARS {
                label.chars().take(LEGEND_CHARS - 1).chain(['…']).collect()
            } else {
                label.clone()
            };
            let _ = write!(
                out,
                r#"<g class="legend"><rect x="{x:.1}" y="{y}" width="14" height="11" fill="{colour}"/><text x="{tx:.1}" y="{ty}">{t}</text></g>"#,
                tx = x + 20.0,
                ty = y + 10.0,
                t = escape(&text)
            );
        }
        if self.entries.len() > MAX_LEGEND {
            let _ = write!(
                out,
                r#"<text class="legend" x="{x:.1}" y="{}">… and {} more</text>"#,
                TOP + 16.0 * MAX_LEGEND as f64 + 10.0,
                self.entries.len() - MAX_LEGEND
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(lane: usize, start: f64, end: f64, key: usize) -> GanttBar {
        GanttBar { lane, start, end, label: format!("task {key}"), colour_key: key }
    }

    #[test]
    fn draws_bars_marks_a_legend_and_labels_that_fit() {
        let g = Gantt {
            title: "g".into(),
            time_label: "ms".into(),
            lanes: vec!["a rather long lane label, policy cpu0".into()],
            bars: vec![GanttBar { lane: 0, start: 0.0, end: 5.0, label: "P1".into(), colour_key: 0 }],
            marks: vec![GanttMark { lane: 0, at: 0.0, label: "P1 arrives".into() }],
            window: None,
        };
        let s = g.to_svg();
        assert!(s.contains("P1 arrives") && s.contains("<title>P1: 0–5</title>"));
        assert!(s.contains(r#"class="legend""#) && s.contains(">P1</text></g>"));
        // The label column is as wide as the label: its right end (x) leaves room for it.
        let x: f64 = s.split(r#"class="lane" x=""#).nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        assert!(x >= CHAR_W * 37.0, "the 37-character label ends at {x}, too close to the edge");
    }

    #[test]
    fn a_thousand_keys_get_a_thousand_colours() {
        let colours: std::collections::HashSet<String> = (0..1000).map(distinct_colour).collect();
        assert_eq!(colours.len(), 1000);
        assert!(!colours.contains(GREY));
    }

    #[test]
    fn slivers_merge_and_the_window_clips() {
        // 10,000 slices of 0.01 ms over 100 ms: far thinner than a pixel.
        let bars: Vec<GanttBar> = (0..10_000).map(|i| bar(0, i as f64 * 0.01, i as f64 * 0.01 + 0.01, i % 7)).collect();
        let g = Gantt { title: "t".into(), lanes: vec!["cpu0".into()], bars, ..Gantt::default() };
        let s = g.to_svg();
        let rects = s.matches("<rect").count();
        assert!(rects < 500, "{rects} rects for 10,000 slivers");
        assert!(s.len() < 60_000, "{} bytes", s.len());
        let windowed = Gantt { window: Some((10.0, 20.0)), ..g }.to_svg();
        // A tenth of the run, now wide enough to draw every slice (0.01 ms ≈ 0.64 units: still merged in pairs).
        assert!(windowed.matches("slices</title>").count() > rects / 2, "the window shows more detail");
    }
}
