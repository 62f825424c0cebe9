//! The model with the `mogul96` preset against Mogul & Ramakrishnan's published curves
//! (REFERENCE: peak ≈4,700 pkt/s unmodified, ≈1,400 at 10,700 input; quota 5 flat at ≈5,150;
//! plateaus 5 > 10 > 20 > 100).

use schedlab_netrx::model::{run, ModelConfig};
use schedlab_netrx::strategy::StrategyKind;

fn out(kind: StrategyKind, quota: usize, input: f64) -> f64 {
    run(&ModelConfig::mogul96(kind, quota, input, 1.0)).unwrap().delivered_pps
}

const INPUTS: [f64; 12] =
    [1000.0, 2000.0, 3000.0, 4000.0, 4500.0, 5000.0, 6000.0, 7000.0, 8000.0, 9000.0, 10000.0, 11000.0];

#[test]
fn unmodified_kernel_peaks_near_4700_and_collapses() {
    let curve: Vec<f64> = INPUTS.iter().map(|&i| out(StrategyKind::Interrupt, 5, i)).collect();
    let peak = curve.iter().cloned().fold(0.0, f64::max);
    assert!((peak / 4700.0 - 1.0).abs() < 0.10, "peak {peak}");
    let after6000: Vec<f64> = INPUTS.iter().zip(&curve).filter(|(i, _)| **i >= 6000.0).map(|(_, o)| *o).collect();
    for w in after6000.windows(2) {
        assert!(w[1] < w[0], "output keeps falling past 6,000 input: {curve:?}");
    }
    let at_10700 = out(StrategyKind::Interrupt, 5, 10_700.0);
    assert!((at_10700 / 1400.0 - 1.0).abs() < 0.15, "output at 10,700 input {at_10700}");
}

#[test]
fn quota_5_holds_5150_out_to_12000() {
    for input in [6000.0, 8000.0, 10_000.0, 12_000.0] {
        let o = out(StrategyKind::Napi, 5, input);
        assert!((o / 5150.0 - 1.0).abs() < 0.10, "quota 5 at {input}: {o}");
    }
}

#[test]
fn quota_plateaus_are_ordered_as_in_the_paper() {
    let p: Vec<f64> = [5, 10, 20, 100].iter().map(|&q| out(StrategyKind::Napi, q, 10_000.0)).collect();
    assert!(p[0] > p[1] && p[1] > p[2] && p[2] > p[3], "{p:?}");
    assert!(out(StrategyKind::Napi, usize::MAX, 10_000.0) < p[3] + 1.0);
}
