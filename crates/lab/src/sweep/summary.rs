//! A sweep's summary: each metric's mean and 95% interval over the seeds, per policy and per
//! value of the x axis, in tables and in figures — the metric against the load, one line per
//! policy with its interval shaded, one figure per combination of the grid's other dimensions
//! (CPU count, switch cost, the other varied keys).

use schedlab_report::section::{Figure, Table};
use schedlab_report::stats::MeanCi;
use schedlab_report::svg::{LineChart, Series};
use schedlab_report::tidy::TidyTable;
use schedlab_sim::policies::spec::parse_time;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The most figures a summary draws (the tables hold every group).
pub const MAX_FIGURES: usize = 24;

/// The generator keys that set the offered load: with one of them on the x axis, the figure
/// plots the load itself.
const LOAD_KEYS: [&str; 3] = ["rate", "mean", "bursts"];

/// What the x axis is.
pub struct Axis {
    /// A varied key, or `workload` (the file's place in the grid) when nothing varies.
    pub key: String,
    /// Plot the `load` column instead of the key's value.
    pub as_load: bool,
}

impl Axis {
    /// `wanted`, or the varied key with the most values, or the workload files' order.
    pub fn choose(vary: &BTreeMap<String, usize>, wanted: Option<&str>) -> Result<Axis, String> {
        let key = match wanted {
            Some(k) if vary.contains_key(k) || (k == "workload" && vary.is_empty()) => k.to_string(),
            Some(k) => {
                let known: Vec<&str> = vary.keys().map(String::as_str).collect();
                return Err(format!(
                    "--x {k}: not a varied key (varied: {})",
                    if known.is_empty() { "none".to_string() } else { known.join(", ") }
                ));
            }
            None => vary
                .iter()
                .max_by_key(|(k, n)| (**n, std::cmp::Reverse(k.as_str())))
                .map_or("workload".to_string(), |(k, _)| k.clone()),
        };
        Ok(Axis { as_load: LOAD_KEYS.contains(&key.as_str()), key })
    }

    fn label(&self) -> String {
        if self.as_load {
            format!("offered load (set by {}; 1 = every CPU busy)", self.key)
        } else if self.key == "workload" {
            "workload file (its place in the grid)".to_string()
        } else {
            self.key.clone()
        }
    }
}

/// A cell as a number for the x axis: plain, or a time in ms (`5ms` → 5).
fn x_value(cell: &str) -> f64 {
    cell.parse::<f64>().ok().or_else(|| parse_time(cell).ok().map(|ns| ns as f64 / 1e6)).unwrap_or(f64::NAN)
}

/// One line of one figure: a policy's mean and interval at each x.
type Line = BTreeMap<String, Vec<(f64, MeanCi)>>;

/// The samples of one metric: facet → policy → x (by its bits) → (x, one value per seed).
type Samples = BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<u64, (f64, Vec<f64>)>>>;

/// A sweep's summary.
pub struct Summary {
    /// One table per metric.
    pub tables: Vec<Table>,
    /// One figure per metric and facet, the first [`MAX_FIGURES`] of them.
    pub figures: Vec<Figure>,
    /// How many figures there would be without the cap.
    pub figures_wanted: usize,
    /// Per metric, the tables' rows as JSON objects, numbers unrounded.
    pub records: serde_json::Map<String, Value>,
}

/// A cell as JSON: a whole number, a number, or text.
fn cell_json(cell: &str) -> Value {
    match (cell.parse::<i64>(), cell.parse::<f64>()) {
        (Ok(i), _) => json!(i),
        (_, Ok(x)) => json!(x),
        _ => json!(cell),
    }
}

/// The summary tables, figures and records of `rows` for `metrics`.
pub fn build(rows: &TidyTable, vary: &[String], axis: &Axis, metrics: &[String]) -> Summary {
    let col = |name: &str| rows.columns.iter().position(|c| c == name);
    let facet_cols: Vec<String> = ["cpus", "switch_cost_ns"]
        .iter()
        .map(|s| s.to_string())
        .chain(vary.iter().filter(|k| **k != axis.key).cloned())
        .collect();
    let facet_idx: Vec<usize> = facet_cols.iter().filter_map(|c| col(c)).collect();
    let (policy, x_col) = (col("policy").unwrap_or(1), col(if axis.as_load { "load" } else { &axis.key }));
    // Each row's x: its column's value, or (workload files) the file's place in the grid.
    let workload_col = col("workload").unwrap_or(2);
    let mut file_order: Vec<&str> = vec![];
    let xs: Vec<f64> = rows
        .rows
        .iter()
        .map(|r| match x_col {
            Some(j) => x_value(&r[j]),
            None => {
                let w = r[workload_col].as_str();
                let pos = file_order.iter().position(|f| *f == w).unwrap_or_else(|| {
                    file_order.push(w);
                    file_order.len() - 1
                });
                (pos + 1) as f64
            }
        })
        .collect();
    let x_name = if axis.as_load { "load".to_string() } else { axis.key.clone() };
    let mut out = Summary { tables: vec![], figures: vec![], figures_wanted: 0, records: serde_json::Map::new() };
    for metric in metrics {
        let Some(m) = col(metric) else { continue };
        let mut samples = Samples::new();
        for (r, &x) in rows.rows.iter().zip(&xs) {
            let facet: Vec<String> = facet_idx.iter().map(|&j| r[j].clone()).collect();
            let v: f64 = r[m].parse().unwrap_or(f64::NAN);
            let e = samples.entry(facet).or_default().entry(r[policy].clone()).or_default();
            e.entry(x.to_bits()).or_insert((x, vec![])).1.push(v);
        }
        let (mean_col, ci_col) = (format!("{metric}_mean"), format!("{metric}_ci95"));
        let mut cols: Vec<&str> = facet_cols.iter().map(String::as_str).collect();
        cols.extend(["policy", x_name.as_str(), "seeds", mean_col.as_str(), ci_col.as_str()]);
        let mut t = Table::new(format!("{metric}: mean and 95% interval over the seeds"), &cols);
        let mut records = vec![];
        for (facet, by_policy) in &samples {
            let mut lines: Line = BTreeMap::new();
            for (pol, by_x) in by_policy {
                let mut pts: Vec<(f64, MeanCi)> = by_x.values().map(|(x, v)| (*x, MeanCi::of(v))).collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                for (x, mc) in &pts {
                    let mut row = facet.clone();
                    row.extend([
                        pol.clone(),
                        super::rows::number(*x),
                        mc.n.to_string(),
                        format!("{:.4}", mc.mean),
                        format!("{:.4}", mc.ci95),
                    ]);
                    t.row(row);
                    let mut rec: serde_json::Map<String, Value> =
                        facet_cols.iter().zip(facet).map(|(c, v)| (c.clone(), cell_json(v))).collect();
                    rec.insert("policy".into(), json!(pol));
                    rec.insert(x_name.clone(), json!(x));
                    rec.insert("seeds".into(), json!(mc.n));
                    rec.insert(mean_col.clone(), json!(mc.mean));
                    rec.insert(ci_col.clone(), json!(mc.ci95));
                    records.push(Value::Object(rec));
                }
                lines.insert(pol.clone(), pts);
            }
            out.figures_wanted += 1;
            if out.figures.len() < MAX_FIGURES {
                let n = out.figures.len();
                out.figures.push(figure(metric, axis, &facet_cols, facet, &lines, n));
            }
        }
        t.note = "ci95: the half-width of the 95% interval of the mean over the seeds (Student's t); 0 with one seed."
            .into();
        out.tables.push(t);
        out.records.insert(metric.clone(), Value::Array(records));
    }
    out
}

fn figure(metric: &str, axis: &Axis, facet_cols: &[String], facet: &[String], lines: &Line, n: usize) -> Figure {
    let facet_text: Vec<String> = facet_cols.iter().zip(facet).map(|(k, v)| format!("{k}={v}")).collect();
    let chart = LineChart {
        title: format!("{metric} — {}", facet_text.join(", ")),
        x_label: axis.label(),
        y_label: metric.to_string(),
        series: lines
            .iter()
            .map(|(pol, pts)| {
                Series::new(pol.clone(), pts.iter().map(|(x, m)| (*x, m.mean)).collect())
                    .with_band(pts.iter().map(|(_, m)| (m.mean - m.ci95, m.mean + m.ci95)).collect())
            })
            .collect(),
        ..Default::default()
    };
    Figure {
        title: chart.title.clone(),
        file: format!("sweep-{n:02}.svg"),
        svg: chart.to_svg(),
        caption: format!(
            "{metric} against {}, one line per policy; the band is the 95% interval over the seeds.",
            axis.label()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> TidyTable {
        let columns =
            ["index", "policy", "workload", "rate", "cpus", "switch_cost_ns", "seed", "load", "avg_turnaround_ms"];
        let mut t = TidyTable { columns: columns.map(String::from).to_vec(), rows: vec![] };
        let mut i = 0;
        for (rate, load) in [("50", "0.25"), ("100", "0.5")] {
            for seed in ["1", "2", "3"] {
                for (pol, base) in [("fcfs", 10.0), ("srtf", 4.0)] {
                    let v = base * load.parse::<f64>().unwrap() + seed.parse::<f64>().unwrap();
                    let cells = [&i.to_string(), pol, "g", rate, "1", "0", seed, load, &v.to_string()];
                    t.rows.push(cells.map(String::from).to_vec());
                    i += 1;
                }
            }
        }
        t
    }

    #[test]
    fn means_and_intervals_over_seeds_per_policy_and_load() {
        let vary = BTreeMap::from([("rate".to_string(), 2)]);
        let axis = Axis::choose(&vary, None).unwrap();
        assert!(axis.as_load);
        let sum = build(&rows(), &["rate".into()], &axis, &["avg_turnaround_ms".into()]);
        assert_eq!((sum.tables.len(), sum.figures.len(), sum.figures_wanted), (1, 1, 1));
        let (t, figures) = (&sum.tables[0], &sum.figures);
        assert_eq!(t.rows.len(), 4, "2 policies × 2 loads");
        // fcfs at load 0.5: 5 + seed over seeds 1, 2, 3 → mean 7, sd 1, t(2) = 4.303 → ci 4.303/√3.
        let row = t.rows.iter().find(|r| r[2] == "fcfs" && r[3] == "0.5").unwrap();
        assert_eq!((row[4].as_str(), row[5].as_str()), ("3", "7.0000"));
        assert!((row[6].parse::<f64>().unwrap() - 4.303 / 3f64.sqrt()).abs() < 1e-4);
        assert!(figures[0].svg.contains("<polygon"), "the interval is shaded");
        // The records hold the same numbers unrounded, whole numbers as integers.
        let rec = sum.records["avg_turnaround_ms"].as_array().unwrap();
        let fcfs = rec.iter().find(|r| r["policy"] == "fcfs" && r["load"] == 0.5).unwrap();
        assert_eq!((fcfs["cpus"].as_i64(), fcfs["seeds"].as_u64()), (Some(1), Some(3)));
        assert!((fcfs["avg_turnaround_ms_mean"].as_f64().unwrap() - 7.0).abs() < 1e-12);
        assert!(Axis::choose(&vary, Some("nosuch")).is_err());
    }
}
