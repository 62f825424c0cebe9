//! Events per second of the engine on the `schedlab sim bench` workload, without the CLI: 100,000
//! tasks, Poisson arrivals at 180/s, exponential 5 ms bursts (load 0.9), one CPU — generated as
//! `crates/lab/src/simstudy/bench.rs` does. Timed the same way: one untimed warm-up run, then the
//! best of `--repeat` runs, from the call to the returned result, for both output modes.
//!
//! `cargo run --release -p schedlab-sim --example bench -- [--repeat N] [--tasks N] [--tick MS] SPEC...`
//! (default specs: `rr:quantum=2ms cfs eevdf`).

use schedlab_sim::engine::{simulate, SimConfig};
use schedlab_sim::generate;
use schedlab_sim::policies::by_spec;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut repeat, mut tasks, mut tick, mut specs): (usize, usize, Option<u64>, Vec<String>) =
        (9, 100_000, None, Vec::new());
    while let Some(a) = args.next() {
        match a.as_str() {
            "--repeat" => repeat = args.next().and_then(|v| v.parse().ok()).expect("--repeat N"),
            "--tasks" => tasks = args.next().and_then(|v| v.parse().ok()).expect("--tasks N"),
            "--tick" => {
                let ms: f64 = args.next().and_then(|v| v.parse().ok()).expect("--tick MS");
                tick = Some((ms * 1e6) as u64);
            }
            _ => specs.push(a),
        }
    }
    if specs.is_empty() {
        specs = vec!["rr:quantum=2ms".into(), "cfs".into()];
    }
    let w = generate::poisson(tasks, 180.0, 5.0e6, 1, 0.0, 1, 1, 1);
    for spec in &specs {
        for task_results in [false, true] {
            let cfg = SimConfig { record_slices: false, task_results, tick, ..SimConfig::default() };
            simulate(&w, by_spec(spec).expect("spec").as_mut(), &cfg);
            let mut best = f64::INFINITY;
            let mut last = None;
            for _ in 0..repeat.max(1) {
                let mut p = by_spec(spec).expect("spec");
                let t0 = Instant::now();
                let r = simulate(&w, p.as_mut(), &cfg);
                best = best.min(t0.elapsed().as_secs_f64());
                last = Some(r);
            }
            let r = last.expect("ran");
            println!(
                "{:<28} {:<8} events {:>8}  best {:>7.2} ms  {:>6.2} M events/s  avg turnaround {:.3} ms",
                r.policy,
                if task_results { "per-task" } else { "overall" },
                r.events,
                best * 1e3,
                r.events as f64 / best / 1e6,
                r.overall.avg_turnaround / 1e6
            );
        }
    }
}
