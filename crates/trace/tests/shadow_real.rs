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

/// `fixtures/capture/pingpong-hog.txt`: CPU 1 of 0.12 s, three seconds into a `schedlab validate`
/// recording of pingpong-hog (2026-11-29, the same host): threads 8245 and 8247 pass a byte
/// through pipes with 50 µs of work per message, 8246 is a hog, all at nice 0 on CPU 1.
fn pingpong_fixture() -> Timeline {
    let path = format!("{}/tests/fixtures/capture/pingpong-hog.txt", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Timeline::from_text(&text, None).0
}

/// In stretches the kernel pre-empts the pair's writer for the partner it wakes, at every
/// message, where at other times it lets the writer run on to its blocking read. Mainline 6.18's
/// rules do the same — the writer, not placed again since it was last pre-empted, has run past
/// its lag and is no longer eligible — provided the shadow's lags are the kernel's. In this
/// excerpt, started (as the shadow starts) with every lag at 0, they happen to be: the rules
/// decide as the kernel did at all but a few decisions, through hundreds of such pre-emptions.
/// Elsewhere a start a few tens of µs of lag off the kernel's puts a whole stretch wrong, which
/// is why the shadow's counts on long pingpong traces measure its state more than the rules.
#[test]
fn mainlines_rules_pre_empt_a_waker_past_its_lag_as_this_kernel_did() {
    let tl = pingpong_fixture();
    let path = format!("{}/tests/fixtures/capture/pingpong-hog.txt", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let preempted_for_partner = text
        .lines()
        .filter(|l| {
            (l.contains("prev_pid=8245 ") && l.contains("prev_state=R ==> next_comm=pong next_pid=8247"))
                || (l.contains("prev_pid=8247 ") && l.contains("prev_state=R ==> next_comm=schedlab next_pid=8245"))
        })
        .count();
    assert!(preempted_for_partner > 300, "{preempted_for_partner} pre-emptions of a writer by its partner");
    let tick = tick_phase(&tl, 4_000_000).expect("the hog is pre-empted at the tick");
    let opts = ShadowOptions {
        from: tl.start + 20_000_000,
        ..ShadowOptions::new(1, vec![8245, 8246, 8247], Features::linux_6_18(2, 250), Some(tick))
    };
    let r = shadow(&tl, &opts).unwrap();
    let judged = r.decisions.len();
    assert!(judged > 300, "{judged} decisions judged");
    assert!(wrong(&r) * 100 <= judged, "{} of {judged} wrong", wrong(&r));
}
