//! Round trip: a workload (several tasks, mixed CPU bursts and blocking, 2 CPUs) simulated →
//! rendered as tracefs text → parsed → timeline → imported gives back the same tasks with the
//! same arrivals, CPU totals and burst/blocked structure.
//!
//! Bound: the kernel's text format has µs resolution and every time is truncated to it, so
//! each instant moves by less than 1 µs. An arrival is off by less than 1 µs; a blocked time
//! (wake-up − switch-out) by less than 1 µs; a CPU burst made of k runs by less than k µs. With
//! nanosecond timestamps (`RenderOptions::ns`) everything comes back exactly.

use schedlab_sim::engine::{simulate, SimConfig, SimResult};
use schedlab_sim::policies::by_spec;
use schedlab_sim::workload::{TaskSpec, Workload};
use schedlab_trace::compare::{compare, CompareOptions};
use schedlab_trace::from_sim::{timeline_from_sim, FromSimOptions, FIRST_SIM_PID};
use schedlab_trace::import::{import, ImportOptions, NoteKind, Select};
use schedlab_trace::render::{render_sim, RenderOptions};
use schedlab_trace::{parse, Format, Timeline};
use std::collections::BTreeMap;

/// Times in ms, deliberately not whole µs.
fn workload() -> Workload {
    let t = |name: &str, arrival: f64, bursts: &[f64]| TaskSpec {
        bursts: bursts.iter().map(|b| (b * 1e6).round() as u64).collect(),
        ..TaskSpec::cpu(name, (arrival * 1e6).round() as u64, 1)
    };
    let mut tasks = vec![
        t("alpha", 0.0, &[3.2000007, 1.5, 2.0000003, 0.7, 1.1]),
        t("beta", 0.5000004, &[5.3]),
        t("gamma", 1.0, &[0.8, 2.25, 0.8, 2.25, 0.8]),
        t("delta", 2.3333333, &[4.0, 0.1, 1.0]),
        t("epsilon with space", 2.5, &[1.7777777, 3.0, 0.9]),
    ];
    tasks[1].nice = 5;
    tasks[3].class = Some("fifo".into());
    tasks[3].priority = 10;
    Workload { cpus: Some(2), tasks }
}

const OFFSET: u64 = 7_000_000_123;

fn run(policy: &str, w: &Workload) -> SimResult {
    simulate(w, &mut *by_spec(policy).unwrap(), &SimConfig { cpus: 2, ..SimConfig::default() })
}

/// Slices per (task, burst index): an upper bound on the runs that make up each CPU burst.
fn slices_per_burst(r: &SimResult) -> BTreeMap<(usize, usize), u64> {
    let mut m = BTreeMap::new();
    for s in &r.slices {
        *m.entry((s.task, s.burst as usize)).or_insert(0) += 1;
    }
    m
}

fn round_trip(policy: &str, ns: bool) {
    let w = workload();
    let r = run(policy, &w);
    assert!(r.tasks.iter().all(|t| t.finish.is_some()));
    assert!(r.slices.iter().any(|s| s.cpu == 1), "both CPUs used");
    assert!(r.tasks.iter().map(|t| t.migrations).sum::<u64>() > 0, "{policy}: no migration to carry over");
    assert!(r.tasks.iter().map(|t| t.context_switches).sum::<u64>() > 2 * w.tasks.len() as u64);
    let text = render_sim(&r, &w, &FromSimOptions { offset: OFFSET, pids: None }, &RenderOptions { ns, header: true });
    let p = parse(&text, None);
    assert_eq!(p.format, Format::Tracefs);
    assert_eq!((p.stats.malformed, p.stats.lines), (0, p.stats.events + p.stats.headers), "{:?}", p.stats);
    let tl = Timeline::from_events(&p.events, p.stats.cpus);
    assert!(tl.anomalies.is_empty(), "{policy}: {:?}", tl.anomalies);
    let imp = import(&tl, &ImportOptions { t0: Some(OFFSET), ..ImportOptions::new(Select::All) });
    let back = &imp.workload;
    assert_eq!(back.cpus, Some(2));
    assert_eq!(back.tasks.len(), w.tasks.len(), "{policy}: {:?}", imp.report);
    // Nothing to report but the policy guesses (no metadata was given).
    for n in &imp.report.notes {
        assert!(matches!(n.kind, NoteKind::PolicyGuessed | NoteKind::BeforeT0), "{policy}: unexpected {n:?}");
    }
    let runs = slices_per_burst(&r);
    let mut inexact = 0;
    for (k, got) in back.tasks.iter().zip(&imp.report.tasks) {
        let i = (got.pid - FIRST_SIM_PID) as usize;
        let want = &w.tasks[i];
        assert_eq!(&*k.name, &*want.name);
        assert_eq!(k.bursts.len(), want.bursts.len(), "{policy} {}: structure", want.name);
        assert_eq!((k.nice, k.class.as_deref(), k.priority), (want.nice, want.class.as_deref(), want.priority));
        if ns {
            assert_eq!((k.arrival, &k.bursts), (want.arrival, &want.bursts), "{policy} {}", want.name);
            continue;
        }
        inexact +=
            usize::from(k.arrival != want.arrival) + k.bursts.iter().zip(&want.bursts).filter(|(a, b)| a != b).count();
        let us = 1000i64;
        let diff = |a: u64, b: u64| a as i64 - b as i64;
        assert!(
            diff(k.arrival, want.arrival).abs() < us,
            "{policy} {}: arrival {} vs {}",
            want.name,
            k.arrival,
            want.arrival
        );
        let mut total_bound = 0;
        for (j, (&a, &b)) in k.bursts.iter().zip(&want.bursts).enumerate() {
            let bound = if j % 2 == 0 { runs[&(i, j)] as i64 * us } else { us };
            if j % 2 == 0 {
                total_bound += bound;
            }
            assert!(diff(a, b).abs() < bound, "{policy} {} burst {j}: {a} vs {b} (bound {bound} ns)", want.name);
        }
        let cpu = |b: &[u64]| b.iter().step_by(2).sum::<u64>();
        assert!(diff(cpu(&k.bursts), cpu(&want.bursts)).abs() < total_bound);
    }
    // The times are not whole µs: the text's truncation shows, within the bound.
    assert!(ns || inexact > 0, "{policy}: µs text came back exact; the bound was not exercised");
    // Imported workloads are valid workload files.
    let json = back.to_json_string();
    let reread = Workload::from_json_str(&json).unwrap();
    assert_eq!(reread.tasks.len(), back.tasks.len());

    // The live-side timeline and the simulated one agree when compared (exactly with ns).
    let sim_tl = timeline_from_sim(&r, &w, &FromSimOptions { offset: OFFSET, pids: None });
    let c = compare(&tl, &sim_tl, &CompareOptions::spanning(&tl, &sim_tl));
    let busy: u64 = sim_tl.tasks.values().map(|t| t.cpu_time()).sum();
    let same: u64 = c.per_cpu.iter().map(|c| c.same_task_ns).sum();
    let switches: u64 = sim_tl.tasks.values().map(|t| t.switch_ins).sum();
    if ns {
        assert_eq!(same, busy, "{policy}");
        for t in &c.tasks {
            assert_eq!(t.a.cpu_ns, t.b.cpu_ns);
            assert_eq!(t.a.switch_ins, t.b.switch_ins);
            assert_eq!((t.a.wake_p50_ns, t.a.wake_p99_ns), (t.b.wake_p50_ns, t.b.wake_p99_ns));
        }
    } else {
        // Each run's two ends move by < 1 µs.
        assert!(busy - same < 2 * 1000 * switches, "{policy}: {same} of {busy}");
    }
}

#[test]
fn round_robin_round_trip_within_the_us_bound() {
    round_trip("rr:quantum=1ms", false);
}

#[test]
fn cfs_round_trip_within_the_us_bound() {
    round_trip("cfs", false);
}

#[test]
fn linux_classes_round_trip_within_the_us_bound() {
    round_trip("linux", false);
}

#[test]
fn nanosecond_text_round_trips_exactly() {
    for policy in ["rr:quantum=1ms", "cfs", "linux"] {
        round_trip(policy, true);
    }
}
