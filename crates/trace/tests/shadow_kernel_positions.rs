//! The shadow set right by the kernel's own positions. `fixtures/capture/pingpong-hog-drift.txt.gz`
//! is CPU 1 of 0.5 s of a trace (2026-11-29, this 2-CPU VM, Linux 6.18, HZ=250) of a hog
//! (11786, `workload bursts --ms inf`) and a pipe ping-pong pair (11787 and 11789, 50 µs of work
//! per message) pinned to CPU 1, 0.4 s after they started; `pingpong-hog-positions.txt` holds
//! what a reader on CPU 0 took from `/proc/<tid>/sched` every 20 ms meanwhile, each thread's
//! `se.vruntime` and `se.exec_start` (the reader's clock read before each round). Started at lag 0, the shadow holds
//! the pair's writer eligible where the kernel already pre-empts it for its partner; with the
//! waiting threads moved to the kernel's places at the rounds that read two of them, it decides
//! as the kernel did far more often.

use schedlab_sim::policies::eevdf::Features;
use schedlab_trace::kernel_positions::{self, KernelPosition};
use schedlab_trace::shadow::{shadow, ShadowOptions, ShadowReport};
use schedlab_trace::{tick_phase, Timeline};
use std::io::Read;

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/capture/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn timeline() -> Timeline {
    let path = fixture("pingpong-hog-drift.txt.gz");
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut text = String::new();
    flate2::read::GzDecoder::new(file).read_to_string(&mut text).unwrap();
    Timeline::from_text(&text, None).0
}

fn positions() -> Vec<KernelPosition> {
    let path = fixture("pingpong-hog-positions.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    kernel_positions::parse_text(&text).unwrap()
}

fn follow(tl: &Timeline, kernel_positions: Vec<KernelPosition>) -> ShadowReport {
    let tick = tick_phase(tl, 4_000_000).expect("the hog is pre-empted at the tick");
    let opts = ShadowOptions {
        from: tl.start + 50_000_000,
        kernel_positions,
        ..ShadowOptions::new(1, vec![11786, 11787, 11789], Features::linux_6_18(2, 250), Some(tick))
    };
    shadow(tl, &opts).unwrap()
}

#[test]
fn the_kernels_positions_set_the_shadows_lags_right() {
    let tl = timeline();
    let kernel = positions();
    assert!(kernel.len() >= 60, "{} readings", kernel.len());
    let (alone, set) = (follow(&tl, Vec::new()), follow(&tl, kernel));
    let wrong = |r: &ShadowReport| r.wrong().count();
    let judged = set.decisions.len();
    assert!(judged > 1000, "{judged} decisions");
    assert!(set.resyncs >= 10, "{} rounds compared two tasks or more", set.resyncs);
    assert!(wrong(&set) * 10 <= wrong(&alone), "{} wrong set right, {} alone", wrong(&set), wrong(&alone));
}
