//! Timeline reconstruction on the hand-made fixtures/hand-timeline.txt, against values worked
//! out by hand (times in µs after 1000 s, the trace's first event):
//!
//! ```text
//! CPU 0: idle | A 10–50 (S) | idle | A 95–120 (R) | C 120–170 (S) | B 170–210 (end)
//! CPU 1: C 0–70 (R+, running at start) | B 70–130 (D) | idle | A 160–200 (Z, exit)
//! A: new at 0, woken at 80; B: waking 60, woken 62, woken 150; C: blocked from 170 to the end.
//! ```
//!
//! and the same-task fraction against a second hand-made timeline.

use schedlab_trace::compare::{compare, CompareOptions};
use schedlab_trace::timeline::{BlockedSpan, EndState, Run, Span, TaskTimeline, Timeline, WakeSample};

const T0: u64 = 1_000_000_000_000;

fn us(x: u64) -> u64 {
    T0 + x * 1000
}

fn live() -> Timeline {
    let path = format!("{}/tests/fixtures/hand-timeline.txt", env!("CARGO_MANIFEST_DIR"));
    let (tl, stats) = Timeline::from_text(&std::fs::read_to_string(path).unwrap(), None);
    assert_eq!((stats.events, stats.malformed, stats.headers), (17, 0, 6));
    tl
}

fn run(cpu: usize, a: u64, b: u64) -> Run {
    Run { cpu, start: us(a), end: us(b) }
}

#[test]
fn each_task_is_rebuilt_as_computed_by_hand() {
    let tl = live();
    assert_eq!((tl.start, tl.end, tl.cpus), (us(0), us(210), 2));
    assert!(tl.anomalies.is_empty(), "{:?}", tl.anomalies);
    assert_eq!(tl.tasks.keys().copied().collect::<Vec<_>>(), vec![101, 102, 103]);

    let a = &tl.tasks[&101];
    assert_eq!(a.runs, vec![run(0, 10, 50), run(0, 95, 120), run(1, 160, 200)]);
    assert_eq!(a.cpu_time(), 105_000);
    assert_eq!((a.switch_ins, a.voluntary, a.involuntary, a.migrations), (3, 2, 1, 1));
    assert_eq!(a.blocked, vec![BlockedSpan::new(us(50), us(80), "S")]);
    assert_eq!(
        a.waiting,
        vec![
            Span { start: us(0), end: us(10) },
            Span { start: us(80), end: us(95) },
            Span { start: us(120), end: us(160) }
        ]
    );
    assert_eq!(
        a.wakes,
        vec![
            WakeSample { woken: us(0), waking: None, ran: us(10), cpu: 0, new_task: true },
            WakeSample { woken: us(80), waking: None, ran: us(95), cpu: 0, new_task: false },
        ]
    );
    assert_eq!((a.arrival, a.exit, a.running_at_start), (Some(us(0)), Some(us(200)), false));
    assert_eq!(a.end_state, EndState::Exited { at: us(200) });

    let b = &tl.tasks[&102];
    assert_eq!(b.runs, vec![run(1, 70, 130), run(0, 170, 210)]);
    assert_eq!(b.cpu_time(), 100_000);
    assert_eq!((b.switch_ins, b.voluntary, b.involuntary, b.migrations), (2, 1, 0, 1));
    assert_eq!(b.blocked, vec![BlockedSpan::new(us(130), us(150), "D")]);
    // Latency counts from sched_waking where there is one (60, not the wake-up at 62).
    let lat: Vec<u64> = b.wakes.iter().map(|w| w.latency()).collect();
    assert_eq!(lat, vec![10_000, 20_000]);
    assert_eq!(b.wakes[0].waking, Some(us(60)));
    assert_eq!(b.end_state, EndState::Running { cpu: 0, since: us(170) });

    let c = &tl.tasks[&103];
    assert!(c.running_at_start);
    assert_eq!(c.runs, vec![run(1, 0, 70), run(0, 120, 170)]);
    assert_eq!(c.cpu_time(), 120_000);
    assert_eq!((c.switch_ins, c.voluntary, c.involuntary, c.migrations), (1, 1, 1, 1));
    assert!(c.wakes.is_empty() && c.blocked.is_empty());
    assert_eq!(c.waiting, vec![Span { start: us(70), end: us(120) }]);
    assert_eq!(c.migrate_events.len(), 1);
    assert_eq!((c.migrate_events[0].from, c.migrate_events[0].to), (1, 0));
    assert_eq!(c.end_state, EndState::Blocked { since: us(170), state: "S".into() });
    // The waking at 210 of a blocked task changes nothing.
    assert_eq!(tl.redundant_wakeups, 0);
}

/// The second timeline, built by hand: A runs 10–50 and 80–120 on CPU 0; B 70–130 and
/// 150–210 on CPU 1; C 0–70 on CPU 1 and 120–170 on CPU 0.
fn other() -> Timeline {
    let mut tl = Timeline { start: us(0), end: us(210), cpus: 2, ..Timeline::default() };
    for (pid, name, runs) in [
        (101, "A", vec![run(0, 10, 50), run(0, 80, 120)]),
        (102, "B", vec![run(1, 70, 130), run(1, 150, 210)]),
        (103, "C", vec![run(1, 0, 70), run(0, 120, 170)]),
    ] {
        let mut t = TaskTimeline::new(pid, name, us(0));
        t.switch_ins = runs.len() as u64;
        t.runs = runs;
        tl.tasks.insert(pid, t);
    }
    tl
}

#[test]
fn comparison_against_a_second_hand_made_timeline() {
    let (a, b) = (live(), other());
    let c = compare(&a, &b, &CompareOptions { start: us(0), end: us(210), cpus: None, pids: None });
    assert_eq!((c.window_ns, c.cpus), (210_000, 2));
    // CPU 0, same task: A 10–50 (40) + A 95–120 (25) + C 120–170 (50) = 115 µs;
    // busy in either: 10–50 and 80–210 = 170 µs, so both idle 40 µs.
    // CPU 1, same task: C 0–70 (70) + B 70–130 (60) = 130 µs; busy 0–130, 150–210: idle 20 µs.
    assert_eq!((c.per_cpu[0].same_task_ns, c.per_cpu[0].both_idle_ns), (115_000, 40_000));
    assert_eq!((c.per_cpu[1].same_task_ns, c.per_cpu[1].both_idle_ns), (130_000, 20_000));
    assert!((c.per_cpu[0].same_task - 115.0 / 210.0).abs() < 1e-12);
    assert!((c.same_task - 245.0 / 420.0).abs() < 1e-12);
    assert!((c.both_idle - 60.0 / 420.0).abs() < 1e-12);

    let ta = &c.tasks[0];
    assert_eq!((ta.pid, ta.name.as_str()), (101, "A"));
    assert_eq!((ta.a.cpu_ns, ta.b.cpu_ns), (105_000, 80_000));
    assert!((ta.a.share_of_machine - 105.0 / 420.0).abs() < 1e-12);
    assert!((ta.a.share_of_cpu - 105.0 / 210.0).abs() < 1e-12);
    assert_eq!((ta.a.switch_ins, ta.b.switch_ins), (3, 2));
    assert!((ta.a.switches_per_sec - 3.0 / 210e-6).abs() < 1e-6);
    // A's first start (new task) is not a wake-up sample.
    assert_eq!((ta.a.wake_samples, ta.a.wake_p50_ns, ta.a.wake_p99_ns), (1, Some(15_000), Some(15_000)));
    let tb = &c.tasks[1];
    // The trace's times are on a 1 µs grid, so its p50 is the grouped median: the first of two
    // samples (10 µs, 20 µs) ends the lower half, at the top of the 10 µs group [9.5, 10.5).
    assert_eq!((tb.a.wake_samples, tb.a.wake_p50_ns, tb.a.wake_p99_ns), (2, Some(10_500), Some(20_000)));
    assert_eq!((tb.b.wake_samples, tb.b.wake_p50_ns), (0, None));

    // Only A and B: C's CPU time counts as idle.
    let only = compare(
        &a,
        &b,
        &CompareOptions { start: us(0), end: us(210), cpus: None, pids: Some([101, 102].into_iter().collect()) },
    );
    assert_eq!(only.tasks.len(), 2);
    assert_eq!(only.per_cpu[0].same_task_ns, 65_000);
    assert_eq!(only.per_cpu[1].same_task_ns, 60_000);
    // A window that cuts runs: [100, 150) µs.
    let cut = compare(&a, &b, &CompareOptions { start: us(100), end: us(150), cpus: None, pids: None });
    assert_eq!(cut.tasks[0].a.cpu_ns, 20_000);
    assert_eq!(cut.tasks[0].a.switch_ins, 0);
    // C ran from the trace's start on CPU 1 (no switch-in) and was switched in once, at 120.
    assert_eq!((c.tasks[2].pid, c.tasks[2].a.switch_ins, c.tasks[2].b.switch_ins), (103, 1, 2));
    // CPU 0: A 100–120 and C 120–150 agree = 50 µs; CPU 1: B 100–130 = 30 µs.
    assert_eq!((cut.per_cpu[0].same_task_ns, cut.per_cpu[1].same_task_ns), (50_000, 30_000));
}
