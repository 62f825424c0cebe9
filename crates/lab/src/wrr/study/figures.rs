//! The study's figures: the fold of work over weight 1 for every mechanism beside the seed's
//! and the ideal, and the live host's slices of the first run.

use super::plan::WEIGHTS;
use super::tables::{alt_labels, seed_col, Test1Stats};
use super::StudyData;
use schedlab_report::section::Figure;
use schedlab_report::stats;
use schedlab_report::svg::{LineChart, Series};

/// Every figure the runs allow.
pub fn all(d: &StudyData, s: &Test1Stats) -> Vec<Figure> {
    let w = |i: usize| WEIGHTS[i] as f64;
    let mut chart = LineChart {
        title: "Test 1: fold of iterations over weight 1".into(),
        x_label: "weight".into(),
        y_label: "fold over weight 1".into(),
        ..Default::default()
    };
    chart.series.push(Series::new("ideal", (0..6).map(|i| (w(i), w(i))).collect()).dashed());
    let seed_fold = seed_col("test1_iterations_30s", "fold_over_w1");
    chart.series.push(Series::new("seed (kernel module)", (0..6).zip(&seed_fold).map(|(i, &f)| (w(i), f)).collect()));
    if !d.t1.runs.is_empty() {
        chart.series.push(Series::new("live WRR", (0..6).map(|i| (w(i), s.fold(i))).collect()));
    }
    for ((_, r, _), label) in d.alts.iter().zip(alt_labels(d)) {
        if let Ok(runs) = r {
            if runs.is_empty() {
                continue;
            }
            let fold = |i: usize| {
                stats::mean(&runs.iter().map(|r| r.iterations[i] / r.iterations[0].max(1.0)).collect::<Vec<_>>())
            };
            chart.series.push(Series::new(label, (0..6).map(|i| (w(i), fold(i))).collect()));
        }
    }
    let mut figs = vec![Figure {
        title: "Fold of work over weight 1".into(),
        file: "fold.svg".into(),
        svg: chart.to_svg(),
        caption: "Iterations of each task over the weight-1 task's, per mechanism.".into(),
    }];
    if let Some(svg) = &d.t1.gantt_svg {
        figs.push(Figure {
            title: "Who ran when (first 2 s of test 1, run 1)".into(),
            file: "gantt.svg".into(),
            svg: svg.clone(),
            caption: "Slices recorded by the live host, like the seed's chart: bar width is the slice.".into(),
        });
    }
    figs
}
