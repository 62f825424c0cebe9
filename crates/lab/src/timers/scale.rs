//! `schedlab timers scale`: what each operation costs as the number of pending timers grows
//! from 10^2 to 10^6. Per queue and N: insert N timers (delays uniform over 10,000 ticks,
//! after an idle stretch), cancel a random N/10, tick through the idle stretch (no expiries:
//! the cost of keeping time), then tick through all 10,000 deadlines (cost per expiry,
//! ticks included). A series stops when the next size would exceed the time budget — the
//! control list's per-tick work and the delta list's insert walk grow with N.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schedlab_report::section::{DataFile, Figure, Section, Table};
use schedlab_report::svg::{LineChart, Series};
use schedlab_timerq::{Kind, TimerQueue};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Parameters of a scale run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Params {
    pub max_n: usize,
    /// A (queue, N) cell whose projected wall time exceeds this is not run.
    pub budget_s: f64,
    pub queues: Vec<Kind>,
    pub seed: u64,
}

/// One measured cell.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    pub queue: Kind,
    pub n: usize,
    pub ns_per_insert: f64,
    pub ns_per_cancel: f64,
    pub ns_per_tick: f64,
    pub ns_per_expiry: f64,
    pub total_s: f64,
    /// Timers that expired during the idle stretch (none should) and after it (all the
    /// uncancelled ones should), so a queue that loses or fires timers early shows here.
    #[serde(default)]
    pub expired_early: usize,
    #[serde(default)]
    pub expired: usize,
}

/// A series that stopped early, and why.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Stopped {
    pub queue: Kind,
    pub at_n: usize,
    pub projected_s: f64,
    pub budget_s: f64,
}

/// Everything a scale run measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Outcome {
    pub cells: Vec<Cell>,
    pub stopped: Vec<Stopped>,
}

/// The sizes: powers of ten from 100 up to `max_n` (and `max_n` itself).
pub fn sizes(max_n: usize) -> Vec<usize> {
    let mut v: Vec<usize> =
        std::iter::successors(Some(100usize), |n| n.checked_mul(10)).take_while(|&n| n <= max_n).collect();
    if v.last() != Some(&max_n) {
        v.push(max_n);
    }
    v
}

const SPAN: u64 = 10_000;

fn measure<Q: TimerQueue<u32>>(mut q: Q, kind: Kind, n: usize, seed: u64) -> Cell {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ n as u64);
    // Keep the idle stretch's work near 10^7 entry visits for the O(n)-per-tick list.
    let idle = (10_000_000 / n as u64).clamp(10, 1000);
    let delays: Vec<u64> = (0..n).map(|_| idle + rng.gen_range(1..=SPAN)).collect();
    let mut victims: Vec<usize> = (0..n).collect();
    victims.shuffle(&mut rng);
    victims.truncate((n / 10).max(1));
    let all = Instant::now();

    let t = Instant::now();
    let handles: Vec<_> = delays.iter().enumerate().map(|(i, &d)| q.insert(d, i as u32)).collect();
    let ns_per_insert = t.elapsed().as_nanos() as f64 / n as f64;

    let t = Instant::now();
    for &v in &victims {
        q.cancel(handles[v]);
    }
    let ns_per_cancel = t.elapsed().as_nanos() as f64 / victims.len() as f64;

    let mut out = Vec::new();
    let t = Instant::now();
    for _ in 0..idle {
        q.tick(&mut out);
    }
    let ns_per_tick = t.elapsed().as_nanos() as f64 / idle as f64;
    let expired_early = out.len();
    out.clear();

    let t = Instant::now();
    let mut expired = 0usize;
    while !q.is_empty() {
        q.tick(&mut out);
        expired += out.len();
        out.clear();
    }
    let ns_per_expiry = t.elapsed().as_nanos() as f64 / expired.max(1) as f64;
    Cell {
        queue: kind,
        n,
        ns_per_insert,
        ns_per_cancel,
        ns_per_tick,
        ns_per_expiry,
        total_s: all.elapsed().as_secs_f64(),
        expired_early,
        expired,
    }
}

fn measure_once(kind: Kind, n: usize, seed: u64) -> Cell {
    use schedlab_timerq::{control::ControlList, delta::DeltaList, heap::Heap, wheel::Wheel};
    match kind {
        Kind::Control => measure(ControlList::new(), kind, n, seed),
        Kind::Delta => measure(DeltaList::new(), kind, n, seed),
        Kind::Heap => measure(Heap::new(), kind, n, seed),
        Kind::Wheel => measure(Wheel::new(), kind, n, seed),
    }
}

/// Small sizes are repeated (up to 25 times, fresh queue each time, until ~0.2 s) and each
/// cost is the median, so one cold cache or page fault does not set the figure.
fn measure_kind(kind: Kind, n: usize, seed: u64) -> Cell {
    let first = measure_once(kind, n, seed);
    let reps = ((0.2 / first.total_s.max(1e-6)) as usize).clamp(1, 25);
    if reps == 1 {
        return first;
    }
    let cells: Vec<Cell> = (0..reps).map(|r| measure_once(kind, n, seed + r as u64)).collect();
    let med = |f: fn(&Cell) -> f64| schedlab_report::stats::percentile(&cells.iter().map(f).collect::<Vec<_>>(), 50.0);
    Cell {
        queue: kind,
        n,
        ns_per_insert: med(|c| c.ns_per_insert),
        ns_per_cancel: med(|c| c.ns_per_cancel),
        ns_per_tick: med(|c| c.ns_per_tick),
        ns_per_expiry: med(|c| c.ns_per_expiry),
        total_s: med(|c| c.total_s),
        expired_early: cells.iter().map(|c| c.expired_early).max().unwrap_or(0),
        expired: cells.iter().map(|c| c.expired).min().unwrap_or(0),
    }
}

/// Run the scale study.
pub fn run(p: &Params, progress: &dyn Fn(&str)) -> anyhow::Result<Outcome> {
    if p.max_n == 0 {
        schedlab_os::bail_usage!("max N must be at least 1, got 0");
    }
    if p.max_n < 100 {
        schedlab_os::bail_usage!("max N must be at least 100 (the smallest size), got {}", p.max_n);
    }
    if p.budget_s.is_nan() || p.budget_s <= 0.0 {
        schedlab_os::bail_usage!("time budget must be positive, got {} s", p.budget_s);
    }
    let mut out = Outcome { cells: vec![], stopped: vec![] };
    for &kind in &p.queues {
        let mut prev: Option<&Cell> = None;
        let mut mine: Vec<Cell> = vec![];
        for n in sizes(p.max_n) {
            if let Some(last) = prev {
                // Project from the last cell, growing per timer as fast as it did last time
                // (at least linearly in N).
                let grow_n = n as f64 / last.n as f64;
                let per_timer_growth = mine
                    .iter()
                    .rev()
                    .nth(1)
                    .map(|before| (last.total_s / last.n as f64) / (before.total_s / before.n as f64))
                    .unwrap_or(1.0)
                    .max(1.0);
                let projected = last.total_s * grow_n * per_timer_growth;
                if projected > p.budget_s || schedlab_os::signals::stop_requested() {
                    out.stopped.push(Stopped { queue: kind, at_n: n, projected_s: projected, budget_s: p.budget_s });
                    break;
                }
            }
            progress(&format!("{kind} N={n}"));
            mine.push(measure_kind(kind, n, p.seed));
            prev = mine.last();
        }
        out.cells.extend(mine);
    }
    Ok(out)
}

impl Outcome {
    /// `schedlab timers scale` as a section: ns per operation per N, log-log figures, verdicts.
    pub fn section(&self, p: &Params) -> Section {
        let mut s = Section::new("timers-scale", "000", "Timer queue cost vs number of pending timers");
        s.summary = format!("N = 100 … {}; time budget {:.1} s per measurement.", p.max_n, p.budget_s);
        let (h, rows) = self.csv();
        let mut t = Table::new("ns per operation", &h);
        for r in &rows {
            t.row(r.clone());
        }
        let notes = self.stop_notes();
        s.tables.push(if notes.is_empty() { t } else { t.with_note(notes.join("\n")) });
        s.files.push(DataFile::csv("scale.csv", &h, rows));
        s.figures = self.figures();
        s.verdicts = super::experiment::scale_verdicts(self);
        s.parameters = serde_json::to_value(p).unwrap_or_default();
        s.results = serde_json::json!({ "cells": self.cells, "stopped": self.stopped });
        s
    }

    /// Lines saying where series stopped, for people.
    pub fn stop_notes(&self) -> Vec<String> {
        self.stopped
            .iter()
            .map(|s| {
                format!(
                    "{} stopped before N={}: projected {:.1} s > budget {:.1} s",
                    s.queue, s.at_n, s.projected_s, s.budget_s
                )
            })
            .collect()
    }

    /// CSV header and rows.
    pub fn csv(&self) -> (Vec<&'static str>, Vec<Vec<String>>) {
        let header = vec!["queue", "n", "ns_per_insert", "ns_per_cancel", "ns_per_tick", "ns_per_expiry", "total_s"];
        let rows = self
            .cells
            .iter()
            .map(|c| {
                vec![
                    c.queue.name().to_string(),
                    c.n.to_string(),
                    format!("{:.1}", c.ns_per_insert),
                    format!("{:.1}", c.ns_per_cancel),
                    format!("{:.1}", c.ns_per_tick),
                    format!("{:.1}", c.ns_per_expiry),
                    format!("{:.3}", c.total_s),
                ]
            })
            .collect();
        (header, rows)
    }

    /// One log-log figure per operation.
    pub fn figures(&self) -> Vec<Figure> {
        type Metric = (&'static str, &'static str, fn(&Cell) -> f64);
        let metrics: [Metric; 4] = [
            ("insert", "ns per insert", |c| c.ns_per_insert),
            ("cancel", "ns per cancel", |c| c.ns_per_cancel),
            ("tick", "ns per tick (no expiries)", |c| c.ns_per_tick),
            ("expiry", "ns per expiry (ticks included)", |c| c.ns_per_expiry),
        ];
        let kinds: Vec<Kind> = {
            let mut k: Vec<Kind> = self.cells.iter().map(|c| c.queue).collect();
            k.dedup();
            k
        };
        metrics
            .iter()
            .map(|(key, label, get)| {
                let series = kinds
                    .iter()
                    .map(|&k| {
                        let pts = self.cells.iter().filter(|c| c.queue == k).map(|c| (c.n as f64, get(c))).collect();
                        Series::new(k.name(), pts)
                    })
                    .collect();
                let chart = LineChart {
                    title: format!("Timer queues: {label} vs pending timers"),
                    x_label: "pending timers N".into(),
                    y_label: label.to_string(),
                    log_x: true,
                    log_y: true,
                    series,
                };
                Figure {
                    title: format!("{label} vs N"),
                    file: format!("scale_{key}.svg"),
                    svg: chart.to_svg(),
                    caption: if self.stopped.is_empty() { String::new() } else { self.stop_notes().join("; ") },
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_powers_of_ten_up_to_max() {
        assert_eq!(sizes(10_000), vec![100, 1000, 10_000]);
        assert_eq!(sizes(5000), vec![100, 1000, 5000]);
    }

    #[test]
    fn small_run_measures_every_queue_and_stops_on_budget() {
        let p = Params { max_n: 1000, budget_s: 30.0, queues: Kind::ALL.to_vec(), seed: 1 };
        let o = run(&p, &|_| {}).unwrap();
        assert_eq!(o.cells.len(), 8);
        for c in &o.cells {
            // N timers, N/10 cancelled, none due in the idle stretch: N − N/10 expire after it.
            assert_eq!((c.expired_early, c.expired), (0, c.n - c.n / 10), "{:?} at N = {}", c.queue, c.n);
        }
        let ns: Vec<usize> = o.cells.iter().filter(|c| c.queue == Kind::Delta).map(|c| c.n).collect();
        assert_eq!(ns, vec![100, 1000], "every size of every queue");
        let tiny = Params { budget_s: 1e-9, ..p };
        let o = run(&tiny, &|_| {}).unwrap();
        assert_eq!(o.stopped.len(), 4, "every series stops after its first size");
        assert_eq!(o.figures().len(), 4);
    }
}
