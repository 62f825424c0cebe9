//! The shadow on a real trace: `fixtures/capture/sleepers-vs-hog.txt` is CPU 1 of the first 1.6 s
//! of a `schedlab validate` recording (2026-11-29, 2-CPU VM, Linux 6.18, HZ=250, no HRTICK) of
//! sleepers-vs-hog: pid 7038 runs 2 ms and sleeps 8 ms, 7039 runs 1 ms and sleeps 4 ms, 7040 is a
//! hog, all at nice 0 and pinned to CPU 1. The model's rules with 6.18's defaults must decide as
//! the kernel did far more often than the same rules with any one feature turned off — a
//! calibration of the feature set on this kernel, not a fitted result: no parameter is chosen
//! from the trace.

use schedlab_sim::policies::eevdf::{features_of_spec, Features};
use schedlab_trace::shadow::{shadow, ShadowOptions, ShadowReport};
use schedlab_trace::{tick_phase, Timeline};

fn fixture() -> Timeline {
    let path = format!("{}/tests/fixtures/capture/sleepers-vs-hog.txt", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Timeline::from_text(&text, None).0
}

fn follow(tl: &Timeline, features: Features) -> ShadowReport {
    follow_with(tl, features, true)
}

fn follow_with(tl: &Timeline, features: Features, clock_skip: bool) -> ShadowReport {
    let tick = tick_phase(tl, 4_000_000).expect("the hog is pre-empted at the tick");
    let opts = ShadowOptions {
        from: tl.start + 500_000_000,
        clock_skip,
        ..ShadowOptions::new(1, vec![7038, 7039, 7040], features, Some(tick))
    };
    shadow(tl, &opts).unwrap()
}

fn wrong(r: &ShadowReport) -> usize {
    r.wrong().count()
}

#[test]
fn the_kernels_defaults_decide_as_the_kernel_did_where_any_one_feature_off_does_not() {
    let tl = fixture();
    let defaults = follow(&tl, Features::linux_6_18(2, 250));
    let judged = defaults.decisions.len();
    assert!(judged > 500, "{judged} decisions judged");
    let base = wrong(&defaults);
    assert!(base * 25 <= judged, "6.18's rules: {base} of {judged} decisions wrong");
    for off in ["delay_zero=0", "run_to_parity=0", "delay_dequeue=0", "place_lag=0", "base_slice=0.7ms"] {
        let r = follow(&tl, features_of_spec(&format!("eevdf:{off}")).unwrap());
        assert!(wrong(&r) >= 3 * base, "{off}: {} wrong against {base} with the defaults", wrong(&r));
    }
}

/// A sleeper's timer wake-up pre-empts the hog some 8 µs before the switch; the kernel charges
/// those µs to the sleeper, not the hog (its run-queue clock stands still from the wake-up to
/// the switch). Charging them by the trace's switch times instead moves every lag by that much
/// at every pre-emption, and the rules then decide otherwise than the kernel more often.
#[test]
fn the_kernel_charges_the_wakeup_delay_to_the_wakee() {
    let tl = fixture();
    let skip = wrong(&follow_with(&tl, Features::linux_6_18(2, 250), true));
    let no_skip = wrong(&follow_with(&tl, Features::linux_6_18(2, 250), false));
    assert!(2 * skip <= no_skip, "{skip} wrong with the clock skip, {no_skip} without");
}
