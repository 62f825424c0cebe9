//! Hand-worked schedules for the Windows model (default client parameters: clock 15.625 ms,
//! quantum 6 units = 2 clock intervals = 31.25 ms, foreground 18 units = 93.75 ms).

use super::*;
use crate::engine::{simulate, SimConfig};
use crate::workload::{TaskSpec, Workload};

const MS: u64 = 1_000_000;

fn run(w: Vec<TaskSpec>, params: WindowsParams) -> Vec<(TaskId, Time, Time)> {
    let w = Workload { cpus: Some(1), tasks: w };
    let mut p = Windows::with_params(params);
    let r = simulate(&w, &mut p, &SimConfig::default());
    r.slices.iter().map(|s| (s.task, s.start, s.end)).collect()
}

fn task(name: &str, bursts: Vec<u64>, class: Option<&str>, priority: i32) -> TaskSpec {
    {
        let mut t = TaskSpec { bursts: bursts.into(), priority, ..TaskSpec::cpu(name, 0, 0) };
        t.class = class.map(str::to_string);
        t
    }
}

#[test]
fn base_priority_is_the_documented_class_by_thread_priority_table() {
    // "Scheduling Priorities": columns IDLE, LOWEST, BELOW_NORMAL, NORMAL, ABOVE_NORMAL,
    // HIGHEST, TIME_CRITICAL; the workload writes them as priority 15, 2, 1, 0, −1, −2, −15.
    let relative = [15, 2, 1, 0, -1, -2, -15];
    let table: [(&str, [u8; 7]); 6] = [
        ("idle", [1, 2, 3, 4, 5, 6, 15]),
        ("below_normal", [1, 4, 5, 6, 7, 8, 15]),
        ("normal", [1, 6, 7, 8, 9, 10, 15]),
        ("above_normal", [1, 8, 9, 10, 11, 12, 15]),
        ("high", [1, 11, 12, 13, 14, 15, 15]),
        ("realtime", [16, 22, 23, 24, 25, 26, 31]),
    ];
    for (class, row) in table {
        for (k, &prio) in relative.iter().enumerate() {
            let mut p = Windows::with_params(WindowsParams::default());
            p.enqueue(&TaskView { class: Some(class), priority: prio, ..TaskView::new(0) }, EnqueueReason::New, 0);
            assert_eq!(p.base_of(0), row[k], "{class} × priority {prio}");
            assert_eq!(p.priority_of(0), row[k]);
        }
    }
    // No class = normal, so the old convention (base 8 − priority) still holds; foreground too.
    let mut p = Windows::with_params(WindowsParams::default());
    p.enqueue(&TaskView { priority: 3, ..TaskView::new(0) }, EnqueueReason::New, 0);
    p.enqueue(&TaskView { class: Some("foreground"), priority: -1, ..TaskView::new(1) }, EnqueueReason::New, 0);
    assert_eq!((p.base_of(0), p.base_of(1)), (5, 9));
}

#[test]
fn io_bound_thread_is_boosted_on_io_completion_and_decays_a_level_per_quantum() {
    // io_boost=2 (network). A: CPU hog, 200 ms. B: 1 ms CPU, 10 ms I/O, 100 ms CPU. Both
    // normal (base 8), arriving at 0; A is first in line.
    let params = WindowsParams { io_boost: 2, ..WindowsParams::default() };
    let a = task("A", vec![200 * MS], None, 0);
    let b = task("B", vec![MS, 10 * MS, 100 * MS], None, 0);
    let q = 31_250_000; // 6 units × 15.625 ms / 3
    let five_units = 26_041_667; // ⌈5 × 15.625 ms / 3⌉
    let slices = run(vec![a, b], params);
    let expect = vec![
        (0, 0, q),                   // A, priority 8, a full quantum
        (1, q, q + MS),              // B runs 1 ms and blocks (8)
        (0, 32_250_000, 42_250_000), // A until B's I/O completes at 42.25 ms
        // B wakes: base 8 + 2 = 10 > A's 8, pre-empts; quantum reset to 6 units − 1 for the wait.
        (1, 42_250_000, 42_250_000 + five_units), // = 68_291_667: quantum end, 10 → 9
        (1, 68_291_667, 68_291_667 + q),          // 9 > 8: B again; quantum end at 99_541_667, 9 → 8
        // A was pre-empted with 31.25 − 10 = 21.25 ms of quantum, at the head of level 8.
        (0, 99_541_667, 99_541_667 + 21_250_000), // 120_791_667; quantum end, A to the tail
        (1, 120_791_667, 120_791_667 + q),        // 152_041_667; B has run 88_541_667 ns
        (0, 152_041_667, 152_041_667 + q),        // 183_291_667
        (1, 183_291_667, 194_750_000),            // B's last 11_458_333 ns
        // A alone: 200 − (31.25 + 10 + 21.25 + 31.25) = 106.25 ms left, in quanta.
        (0, 194_750_000, 226_000_000),
        (0, 226_000_000, 257_250_000),
        (0, 257_250_000, 288_500_000),
        (0, 288_500_000, 301_000_000),
    ];
    assert_eq!(slices, expect);
}

#[test]
fn wake_boosts_come_from_the_base_and_decay_by_one_per_quantum_end() {
    let mut p = Windows::with_params(WindowsParams { io_boost: 2, ..WindowsParams::default() });
    let v = TaskView::new(0);
    p.enqueue(&v, EnqueueReason::New, 0);
    p.pick_next(0, 0);
    p.charge(0, MS, MS);
    p.enqueue(&v, EnqueueReason::Woken, 20 * MS); // I/O: 8 + 2
    assert_eq!((p.priority_of(0), p.quantum_units_of(0)), (10, 5));
    p.pick_next(0, 20 * MS);
    p.charge(0, MS, 21 * MS);
    p.enqueue(&v, EnqueueReason::Woken, 30 * MS); // again 8 + 2, not 10 + 2
    assert_eq!(p.priority_of(0), 10);
    p.pick_next(0, 30 * MS);
    p.charge(0, 26_041_667, 0);
    p.enqueue(&v, EnqueueReason::SliceExpired, 0);
    assert_eq!((p.priority_of(0), p.quantum_units_of(0)), (9, 6));
    p.pick_next(0, 0);
    p.enqueue(&v, EnqueueReason::SliceExpired, 0);
    p.pick_next(0, 0);
    p.enqueue(&v, EnqueueReason::SliceExpired, 0);
    assert_eq!(p.priority_of(0), 8, "never below the base");
    // Woken by another task (an event): + 1. Sound I/O (+ 8) from base 8 is capped at 15.
    p.pick_next(0, 0);
    p.enqueue(&TaskView { waker_cpu: Some(0), ..v }, EnqueueReason::Woken, 0);
    assert_eq!(p.priority_of(0), 9);
    let mut p = Windows::with_params(WindowsParams { io_boost: 8, ..WindowsParams::default() });
    p.enqueue(&v, EnqueueReason::New, 0);
    p.pick_next(0, 0);
    p.enqueue(&v, EnqueueReason::Woken, 0);
    assert_eq!(p.priority_of(0), 15);
}

#[test]
fn foreground_wake_adds_the_separation_which_the_first_quantum_end_removes() {
    // Foreground, io_boost 1: 8 + 1 + PsPrioritySeparation 2 = 11 with PriorityDecrement 2;
    // quantum end: 11 − (2 + 1) = 8.
    let mut p = Windows::with_params(WindowsParams::default());
    let v = TaskView { class: Some("foreground"), ..TaskView::new(0) };
    p.enqueue(&v, EnqueueReason::New, 0);
    p.pick_next(0, 0);
    p.enqueue(&v, EnqueueReason::Woken, 0);
    assert_eq!(p.priority_of(0), 11);
    p.pick_next(0, 0);
    p.enqueue(&v, EnqueueReason::SliceExpired, 0);
    assert_eq!(p.priority_of(0), 8);
}

#[test]
fn starved_thread_is_rescued_by_the_balance_set_manager_each_time_it_waits_300_ticks() {
    // H: normal hog (base 8), 20 s. L: idle class (base 4), 50 ms. L is ready from 0 (tick 0);
    // it is starved once 300 ticks have passed: 300 × 15.625 ms = 4.6875 s, so the scan at 5 s
    // boosts it to 15 with 4 units (⌈4 × 15.625 / 3⌉ = 20_833_334 ns) and it pre-empts H.
    // Quantum end: 15 − (11 + 1) = 3 → its base 4. It is ready again at 5_020_833_334 ns =
    // tick 321, starved at tick 621 = 9.703125 s: rescued at 10 s; the last 50 − 2 × 20.833334
    // = 8.333332 ms at 15 s.
    let h = task("H", vec![20_000 * MS], None, 0);
    let l = task("L", vec![50 * MS], Some("idle"), 0);
    let slices = run(vec![h, l], WindowsParams::default());
    let l_runs: Vec<_> = slices.iter().filter(|s| s.0 == 1).map(|s| (s.1, s.2)).collect();
    assert_eq!(
        l_runs,
        vec![(5_000_000_000, 5_020_833_334), (10_000_000_000, 10_020_833_334), (15_000_000_000, 15_008_333_332),]
    );
    // H resumes the quantum it was pre-empted in: 5 s is 160 quanta of 31.25 ms exactly, so it
    // had just started one and runs a full 31.25 ms after L.
    assert!(slices.contains(&(0, 5_020_833_334, 5_052_083_334)));
}

#[test]
fn foreground_process_threads_get_three_times_the_quantum() {
    // F (foreground) and N (background), both base 8, 100 ms each. F: 18 units = 93.75 ms.
    let f = task("F", vec![100 * MS], Some("foreground"), 0);
    let n = task("N", vec![100 * MS], None, 0);
    let slices = run(vec![f.clone(), n.clone()], WindowsParams::default());
    assert_eq!(
        slices,
        vec![
            (0, 0, 93_750_000),
            (1, 93_750_000, 125_000_000),
            (0, 125_000_000, 131_250_000), // F's last 6.25 ms
            (1, 131_250_000, 162_500_000),
            (1, 162_500_000, 193_750_000),
            (1, 193_750_000, 200_000_000),
        ]
    );
    // PsPrioritySeparation 0: no stretch, both 31.25 ms.
    let slices = run(vec![f, n], WindowsParams { separation: 0, ..WindowsParams::default() });
    assert_eq!(&slices[..2], &[(0, 0, 31_250_000), (1, 31_250_000, 62_500_000)]);
    // A server (long fixed quantums): 36 units = 187.5 ms for everybody.
    let p = WindowsParams { long: true, fixed: true, ..WindowsParams::default() };
    assert_eq!(p.quantum_units(8, true), 36);
    assert_eq!(p.quantum_units(8, false), 36);
}

#[test]
fn real_time_threads_are_never_boosted_nor_decayed() {
    let mut p = Windows::with_params(WindowsParams { io_boost: 8, ..WindowsParams::default() });
    let v = TaskView { class: Some("realtime"), ..TaskView::new(0) };
    p.enqueue(&v, EnqueueReason::New, 0);
    assert_eq!(p.priority_of(0), 24);
    p.pick_next(0, 0);
    p.charge(0, MS, MS);
    p.enqueue(&v, EnqueueReason::Woken, 10 * MS);
    assert_eq!((p.priority_of(0), p.quantum_units_of(0)), (24, 6), "no boost, quantum reset");
    p.pick_next(0, 10 * MS);
    p.enqueue(&v, EnqueueReason::SliceExpired, 50 * MS);
    assert_eq!(p.priority_of(0), 24, "no decay");
    // A real-time thread left waiting is not starvation-boosted either (levels 1–14 only).
    let mut p = Windows::with_params(WindowsParams::default());
    p.enqueue(&v, EnqueueReason::New, 0);
    p.timer(10_000 * MS);
    assert_eq!(p.priority_of(0), 24);
}

#[test]
fn a_priority_change_while_queued_is_not_a_wake_up() {
    let mut p = Windows::with_params(WindowsParams::default());
    p.enqueue(&TaskView::new(0), EnqueueReason::New, 0);
    p.requeue(&TaskView::new(0), 0);
    assert_eq!(p.priority_of(0), 8, "no wake-up boost");
    assert_eq!(p.queued(), 1);
    // Inheritance from a waiter of priority −2 (base 10) raises it to 10.
    p.requeue(&TaskView { priority: -2, ..TaskView::new(0) }, 0);
    assert_eq!(p.priority_of(0), 10);
}

#[test]
fn spec_parameters_parse() {
    let mut sp = crate::policies::spec::Params::parse(
        "windows:clock=10ms,quantum=long,fixed=1,separation=1,io_boost=keyboard,starvation=200,scan=500ms",
    )
    .unwrap();
    let w = WindowsParams::parse(&mut sp).unwrap();
    sp.finish().unwrap();
    assert_eq!(
        w,
        WindowsParams {
            clock: 10 * MS,
            long: true,
            fixed: true,
            separation: 1,
            io_boost: 6,
            starvation_ticks: 200,
            scan: 500 * MS
        }
    );
    let d = Windows::with_params(WindowsParams::default()).name();
    assert_eq!(d, "windows:clock=15.625ms,quantum=short,fixed=0,separation=2,io_boost=1,starvation=300,scan=1000ms");
    let mut sp = crate::policies::spec::Params::parse(&d).unwrap();
    assert_eq!(WindowsParams::parse(&mut sp).unwrap(), WindowsParams::default());
}
