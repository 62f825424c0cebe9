//! Hand-computed EEVDF schedules: every expected number below comes from the kernel formulas
//! written out in the comments (1.4 ms base slice, TICK_NSEC 4 ms), not from running the code.
//!
//! Notation: ms-scale values are in ns; `vd_w(Δ)` is `calc_delta_fair(Δ)` for weight `w`:
//! `Δ` for nice 0 (1024); for nice −5 (3121) `⌊Δ·1409178624 / 2^32⌋` (1024 × wmult 1376151);
//! for nice 5 (335) `⌊Δ·3282124288 / 2^30⌋` (1024 × 12820798, shifted by 2 to fit 32 bits).

use super::rq::{FairRq, Features, State};
use super::Eevdf;
use crate::engine::{simulate, SimConfig, WakeDelay, WakeDelays};
use crate::policy::{EnqueueReason as Why, TaskView, MS};
use crate::workload::{TaskSpec, Workload};

/// A task that wants the CPU for 10 s.
fn hog(name: &str, nice: i32) -> TaskSpec {
    TaskSpec { nice, ..TaskSpec::cpu(name, 0, 10_000 * MS) }
}

fn spans(w: &Workload, f: Features, horizon: u64, n: usize) -> Vec<(usize, u64, u64)> {
    let mut p = Eevdf::new(f);
    let r = simulate(w, &mut p, &SimConfig { horizon: Some(horizon), ..SimConfig::default() });
    r.slices.iter().take(n).map(|s| (s.task, s.start, s.end)).collect()
}

#[test]
fn two_tasks_of_different_weights() {
    // A nice 0 (w 1024), B nice −5 (w 3121), both new at 0 on one CPU.
    // Placement (V = 0, empty queue; lag 0): vA = vB = 0.
    //   dA = 0 + 1.4 ms / 2 = 700_000                 (PLACE_DEADLINE_INITIAL: half a slice)
    //   dB = 0 + vd_3121(1.4 ms) / 2 = 459_339 / 2 = 229_669
    //   (vd_3121(1_400_000) = ⌊1_400_000·1409178624 / 2^32⌋ = 459_339)
    // t=0: both eligible (v = 0 ≤ V = 0); earliest deadline: B. vprot_B = dB (equal slices).
    //   B runs until vB = 229_669: the least Δ with vd_3121(Δ) ≥ 229_669 is
    //   ⌈229_669·2^32 / 1409178624⌉ = 699_998 (699_997 gives 229_668).
    // t=699_998: vB = 229_669 = dB -> dB = 229_669 + 459_339 = 689_008.
    //   V = ⌊(1024·0 + 3121·229_669) / 4145⌋ = ⌊716_796_949 / 4145⌋ = 172_930.
    //   B is not eligible (229_669 > V); A is (0 ≤ V) -> A, until vA = dA = 700_000: 700_000 ns.
    // t=1_399_998: vA = 700_000 -> dA = 2_100_000.
    //   V = ⌊(1024·700_000 + 3121·229_669) / 4145⌋ = ⌊1_433_596_949 / 4145⌋ = 345_861.
    //   B eligible (229_669 ≤ V), dB = 689_008 < dA -> B, one full virtual slice 459_339:
    //   ⌈459_339·2^32 / 1409178624⌉ = 1_399_998 ns.
    // t=2_799_996: vB = 689_008 -> dB = 1_148_347. V = ⌊(716_800_000 + 3121·689_008)/4145⌋
    //   = 691_723: A (700_000) is not eligible, B (689_008) is -> B again: the current task
    //   picked again keeps its (spent) protection, so it runs to its deadline: 1_399_998 ns.
    // t=4_199_994: vB = 1_148_347 -> dB = 1_607_686. V = ⌊(716_800_000 + 3121·1_148_347)/4145⌋
    //   = 1_037_585 ≥ vA -> A eligible with dA = 2_100_000, B is not (1_148_347 > V) -> A,
    //   1_400_000 ns to its deadline.
    // t=5_599_994: vA = 2_100_000 -> dA = 3_500_000; V = 1_383_447: only B is eligible ->
    //   B for three slices (V passes vA = 2_100_000 only after B's third), then A.
    let w = Workload { cpus: Some(1), tasks: vec![hog("A", 0), hog("B", -5)] };
    assert_eq!(
        spans(&w, Features::default(), 12 * MS, 9),
        vec![
            (1, 0, 699_998),
            (0, 699_998, 1_399_998),
            (1, 1_399_998, 2_799_996),
            (1, 2_799_996, 4_199_994),
            (0, 4_199_994, 5_599_994),
            (1, 5_599_994, 6_999_992),
            (1, 6_999_992, 8_399_990),
            (1, 8_399_990, 9_799_988),
            (0, 9_799_988, 11_199_988),
        ]
    );
    // In the long run the CPU splits by weight: B gets 3121/4145 = 75.3%.
    let mut p = Eevdf::default();
    let r = simulate(&w, &mut p, &SimConfig { horizon: Some(1000 * MS), ..SimConfig::default() });
    let share = r.tasks[1].cpu as f64 / (r.tasks[0].cpu + r.tasks[1].cpu) as f64;
    assert!((share - 3121.0 / 4145.0).abs() < 0.005, "B's share {share}");
}

#[test]
fn three_tasks_of_different_weights() {
    // A nice 0 (1024), B nice −5 (3121), C nice 5 (335), all new at 0: vA = vB = vC = 0,
    //   dA = 700_000, dB = 229_669 (as above), dC = vd_335(1.4 ms)/2 = 4_279_403/2 = 2_139_701
    //   (vd_335(1_400_000) = ⌊1_400_000·3282124288 / 2^30⌋ = 4_279_403).
    // W = 1024 + 3121 + 335 = 4480.
    // t=0: all eligible; B (229_669) first, 699_998 ns as in the two-task case.
    // t=699_998: vB = 229_669, dB = 689_008. V = ⌊3121·229_669 / 4480⌋ = 159_999:
    //   A and C eligible (v = 0); A's deadline 700_000 < C's -> A, 700_000 ns.
    // t=1_399_998: vA = 700_000, dA = 2_100_000. V = ⌊(716_800_000 + 716_796_949)/4480⌋
    //   = 319_999: B (229_669) and C (0) eligible; dB = 689_008 < dC -> B, 1_399_998 ns.
    // t=2_799_996: vB = 689_008, dB = 1_148_347. V = ⌊(716_800_000 + 3121·689_008)/4480⌋
    //   = 639_998: only C (0) is eligible -> C, protected to its deadline 2_139_701:
    //   ⌈2_139_701·2^30 / 3282124288⌉ = 700_000 ns.
    // t=3_499_996: vC = 2_139_701 -> dC = 2_139_701 + 4_279_403 = 6_419_104.
    //   V = ⌊(716_800_000 + 2_150_393_968 + 335·2_139_701)/4480⌋ = 799_998: B (689_008) -> B.
    let w = Workload { cpus: Some(1), tasks: vec![hog("A", 0), hog("B", -5), hog("C", 5)] };
    assert_eq!(
        spans(&w, Features::default(), 10 * MS, 6),
        vec![
            (1, 0, 699_998),
            (0, 699_998, 1_399_998),
            (1, 1_399_998, 2_799_996),
            (2, 2_799_996, 3_499_996),
            (1, 3_499_996, 4_899_994),
            (0, 4_899_994, 6_299_994),
        ]
    );
    let mut p = Eevdf::default();
    let r = simulate(&w, &mut p, &SimConfig { horizon: Some(2000 * MS), ..SimConfig::default() });
    let total: u64 = r.tasks.iter().map(|t| t.cpu).sum();
    for (i, w) in [1024.0, 3121.0, 335.0].into_iter().enumerate() {
        let share = r.tasks[i].cpu as f64 / total as f64;
        assert!((share - w / 4480.0).abs() < 0.005, "task {i}: share {share}");
    }
}

fn v(id: usize) -> TaskView<'static> {
    TaskView::new(id)
}

/// Run `t` (just picked at `from`) until `to` and charge it there.
fn run(rq: &mut FairRq, t: usize, to: u64) {
    assert_eq!(rq.e(t).state, State::Running);
    rq.charge(t, to);
}

fn pick(rq: &mut FairRq, now: u64) -> (usize, u64) {
    let p = rq.pick(0, now).expect("a pick");
    (p.task, p.slice.expect("a slice"))
}

#[test]
fn a_sleeper_wakes_with_its_positive_lag() {
    // A and B nice 0, new at 0: v = 0, d = 700_000 each.
    let mut rq = FairRq::new(Features::default());
    rq.enqueue(&v(0), Why::New, 0);
    rq.enqueue(&v(1), Why::New, 0);
    // Equal deadlines: the first queued, A, runs to its deadline.
    assert_eq!(pick(&mut rq, 0), (0, 700_000));
    run(&mut rq, 0, 700_000);
    // vA = 700_000 = dA -> dA = 2_100_000. V = (700_000 + 0)/2 = 350_000: B.
    rq.enqueue(&v(0), Why::SliceExpired, 700_000);
    assert_eq!(pick(&mut rq, 700_000), (1, 700_000));
    // B runs 300_000 and blocks: vB = 300_000; V = (700_000 + 300_000)/2 = 500_000 ≥ vB, so B
    // is eligible and leaves at once with vlag = V − vB = 200_000 (limit vd(1.4 + 4 ms)).
    run(&mut rq, 1, 1_000_000);
    rq.blocked(1, 1_000_000);
    assert_eq!((rq.e(1).state, rq.e(1).vlag), (State::Off, 200_000));
    // A alone: to its deadline 2_100_000 (1_400_000 ns), then again (deadline 3_500_000).
    assert_eq!(pick(&mut rq, 1_000_000), (0, 1_400_000));
    run(&mut rq, 0, 2_400_000);
    rq.enqueue(&v(0), Why::SliceExpired, 2_400_000);
    assert_eq!(pick(&mut rq, 2_400_000), (0, 1_400_000));
    assert_eq!(rq.e(0).deadline, 3_500_000);
    // B wakes at 3_000_000: vA = 2_100_000 + 600_000 = 2_700_000 = V (A alone).
    // PLACE_LAG inflates the lag by (W + w)/W = (1024 + 1024)/1024: 400_000, so
    // vB = 2_700_000 − 400_000 = 2_300_000, dB = vB + 1_400_000 = 3_700_000; afterwards
    // V' = (2_700_000 + 2_300_000)/2 = 2_500_000 and B's lag V' − vB = 200_000, as saved.
    rq.enqueue(&v(1), Why::Woken, 3_000_000);
    assert_eq!((rq.e(1).vruntime, rq.e(1).deadline), (2_300_000, 3_700_000));
    assert_eq!(rq.avg_vruntime() - rq.e(1).vruntime, 200_000);
    // A (2_700_000 > V') is no longer eligible: B pre-empts and runs a full slice.
    assert!(rq.preempts(1, 0, 3_000_000));
    run(&mut rq, 0, 3_000_000);
    rq.enqueue(&v(0), Why::Preempted, 3_000_000);
    assert_eq!(pick(&mut rq, 3_000_000), (1, 1_400_000));
}

/// A and B nice 0 new at 0; A runs [0, 0.7 ms) and [1.4, 2.8 ms), B [0.7, 1.4 ms); at 2.8 ms A
/// blocks with vA = 2_100_000, vB = 700_000: V = 1_400_000, A's lag −700_000, A ineligible.
fn a_blocks_with_negative_lag(f: Features) -> FairRq {
    let mut rq = FairRq::new(f);
    rq.enqueue(&v(0), Why::New, 0);
    rq.enqueue(&v(1), Why::New, 0);
    assert_eq!(pick(&mut rq, 0), (0, 700_000));
    run(&mut rq, 0, 700_000);
    rq.enqueue(&v(0), Why::SliceExpired, 700_000);
    assert_eq!(pick(&mut rq, 700_000), (1, 700_000));
    run(&mut rq, 1, 1_400_000);
    rq.enqueue(&v(1), Why::SliceExpired, 1_400_000);
    // vA = vB = 700_000 = V, both eligible, dA = dB = 2_100_000: the current task (B) wins
    // only with a strictly earlier deadline -> A, a full slice.
    assert_eq!(pick(&mut rq, 1_400_000), (0, 1_400_000));
    run(&mut rq, 0, 2_800_000);
    assert_eq!((rq.e(0).vruntime, rq.e(0).deadline), (2_100_000, 3_500_000));
    rq.blocked(0, 2_800_000);
    rq
}

#[test]
fn a_sleeper_wakes_with_its_negative_lag() {
    // Without DELAY_DEQUEUE, A leaves at once: vlag = 1_400_000 − 2_100_000 = −700_000.
    let mut rq = a_blocks_with_negative_lag(Features { delay_dequeue: false, ..Features::default() });
    assert_eq!((rq.e(0).state, rq.e(0).vlag), (State::Off, -700_000));
    // B alone: 1_400_000 ns to dB = 2_100_000, then again (dB = 3_500_000).
    assert_eq!(pick(&mut rq, 2_800_000), (1, 1_400_000));
    run(&mut rq, 1, 4_200_000);
    rq.enqueue(&v(1), Why::SliceExpired, 4_200_000);
    assert_eq!(pick(&mut rq, 4_200_000), (1, 1_400_000));
    // A wakes at 5_000_000: vB = 2_100_000 + 800_000 = 2_900_000 = V. The lag inflated:
    // −700_000·2048/1024 = −1_400_000, so vA = 2_900_000 + 1_400_000 = 4_300_000 and
    // dA = 5_700_000. V' = (2_900_000 + 4_300_000)/2 = 3_600_000: A's lag −700_000 survives.
    rq.enqueue(&v(0), Why::Woken, 5_000_000);
    assert_eq!((rq.e(0).vruntime, rq.e(0).deadline), (4_300_000, 5_700_000));
    assert_eq!(rq.avg_vruntime() - rq.e(0).vruntime, -700_000);
    // A is not eligible: no pre-emption (B is eligible; its protection ended at 2_100_000).
    assert!(!rq.preempts(0, 1, 5_000_000));
}

#[test]
fn an_ineligible_sleeper_stays_queued_until_picked_and_its_lag_is_zeroed() {
    // DELAY_DEQUEUE (default): A is ineligible at 2.8 ms, so it stays on the queue, blocked.
    let mut rq = a_blocks_with_negative_lag(Features::default());
    assert!(rq.e(0).delayed);
    assert_eq!((rq.nr_queued(), rq.queued()), (2, 1), "A still counts in V, but cannot run");
    // B (vB = 700_000 ≤ V = 1_400_000, dB = 2_100_000) runs to its deadline: 1_400_000 ns.
    assert_eq!(pick(&mut rq, 2_800_000), (1, 1_400_000));
    run(&mut rq, 1, 4_200_000);
    rq.enqueue(&v(1), Why::SliceExpired, 4_200_000);
    // vB = 2_100_000 = vA = V; dA = dB = 3_500_000: A, in the timeline, is picked — and being
    // delayed it leaves now, with V − vA = 0 (DELAY_ZERO would also drop a positive lag). B
    // runs on.
    assert_eq!(pick(&mut rq, 4_200_000), (1, 1_400_000));
    assert_eq!((rq.e(0).state, rq.e(0).vlag, rq.nr_queued()), (State::Off, 0, 1));
    // A wakes at 5_000_000 with lag 0: vA = V = vB = 2_900_000, dA = 4_300_000 (a full slice,
    // not a new task). B keeps the CPU: its deadline 3_500_000 is earlier.
    rq.enqueue(&v(0), Why::Woken, 5_000_000);
    assert_eq!((rq.e(0).vruntime, rq.e(0).deadline), (2_900_000, 4_300_000));
    assert!(!rq.preempts(0, 1, 5_000_000));
}

#[test]
fn a_delayed_sleeper_woken_early_keeps_its_negative_lag() {
    let mut rq = a_blocks_with_negative_lag(Features::default());
    assert_eq!(pick(&mut rq, 2_800_000), (1, 1_400_000));
    // Woken at 3_000_000 while still delayed: vB = 700_000 + 200_000 = 900_000,
    // V = (2_100_000 + 900_000)/2 = 1_500_000, lag = 1_500_000 − 2_100_000 = −600_000 < 0:
    // requeue_delayed_entity() leaves it where it is (only a positive lag is dropped).
    rq.enqueue(&v(0), Why::Woken, 3_000_000);
    assert_eq!((rq.e(0).vruntime, rq.e(0).deadline, rq.e(0).delayed), (2_100_000, 3_500_000, false));
    assert_eq!(rq.queued(), 1);
    assert!(!rq.preempts(0, 1, 3_000_000), "A is not eligible");
}

/// `ttwu_runnable()` requeues a delayed task without `update_curr()`: DELAY_ZERO's lag test
/// sees the running task's vruntime as of the last tick, not of the wake-up.
#[test]
fn a_delayed_sleeper_reads_its_lag_against_the_current_task_as_of_the_last_tick() {
    for (tick, woken) in [(Some(4_000_000), (2_100_000, 3_500_000)), (None, (2_900_000, 4_300_000))] {
        let mut rq = a_blocks_with_negative_lag(Features::default());
        rq.set_tick(tick);
        // B runs from 2.8 ms (vB = 700_000, dB = 2_100_000); A, delayed, is woken at 5 ms.
        assert_eq!(pick(&mut rq, 2_800_000), (1, 1_400_000));
        rq.enqueue(&v(0), Why::Woken, 5_000_000);
        // With a 4 ms tick, B was last updated at 4 ms: vB = 700_000 + 1_200_000 = 1_900_000,
        // V = (2_100_000 + 1_900_000)/2 = 2_000_000, A's lag 2_000_000 − 2_100_000 < 0: A keeps
        // vA = 2_100_000 and dA = 3_500_000. Without a tick B is updated at the wake-up:
        // vB = 2_900_000, V = 2_500_000, lag +400_000 > 0, dropped: A is placed again at
        // V = vB = 2_900_000 (A left the average), dA = 4_300_000.
        assert_eq!((rq.e(0).vruntime, rq.e(0).deadline), woken, "tick {tick:?}");
        // Either way B is updated now (vB = 2_900_000 ≥ dB: renewed to 4_300_000) and A,
        // eligible (vA ≤ V) with a deadline no later than B's, pre-empts.
        assert_eq!((rq.e(1).vruntime, rq.e(1).deadline), (2_900_000, 4_300_000));
        assert!(rq.preempts(0, 1, 5_000_000));
    }
}

/// The load balancer moves a delayed task for load (Linux 6.14+): it leaves one queue without
/// DEQUEUE_SLEEP and joins the other still delayed, its lag and relative deadline carried.
#[test]
fn a_delayed_task_moved_to_another_queue_stays_delayed_with_its_lag() {
    let mut from = a_blocks_with_negative_lag(Features::default());
    assert!(from.is_delayed(0));
    // Detached at 2.8 ms: V = (2_100_000 + 700_000)/2 = 1_400_000, vlag = V − vA = −700_000;
    // the deadline kept relative: dA − vA = 3_500_000 − 2_100_000 = 1_400_000.
    from.detach_delayed(0, 2_800_000);
    assert_eq!((from.nr_queued(), from.queued()), (1, 1), "only B is left");
    let e = from.take(0);
    assert_eq!((e.vlag, e.deadline, e.rel_deadline), (-700_000, 1_400_000, true));
    // The other queue holds C (nice 0, new at 0): vC = 0 = V, dC = 700_000.
    let mut to = FairRq::new(Features::default());
    to.enqueue(&v(2), Why::New, 0);
    to.adopt(0, e);
    // Placed with its lag inflated by its own weight joining: −700_000·(1024+1024)/1024 =
    // −1_400_000, so vA = 0 + 1_400_000 and dA = 1_400_000 + 1_400_000 = 2_800_000;
    // V' = (0 + 1_400_000)/2 = 700_000 and A's lag −700_000 survives.
    to.attach_delayed(0, 2_800_000);
    assert_eq!((to.e(0).vruntime, to.e(0).deadline), (1_400_000, 2_800_000));
    assert_eq!(to.avg_vruntime() - to.e(0).vruntime, -700_000);
    assert!(to.is_delayed(0) && !to.is_waiting(0));
    assert_eq!((to.nr_queued(), to.queued()), (2, 1), "A counts in V but cannot run");
    // Woken there while still delayed: requeued in place (its lag is negative, kept).
    to.enqueue(&v(0), Why::Woken, 2_800_000);
    assert_eq!((to.e(0).vruntime, to.queued()), (1_400_000, 2));
    // C (vC = 0 ≤ V, dC = 700_000) runs first: A is not eligible.
    assert_eq!(pick(&mut to, 2_800_000), (2, 700_000));
}

#[test]
fn a_new_task_gets_half_a_slice() {
    for initial in [true, false] {
        let mut rq = FairRq::new(Features { place_deadline_initial: initial, ..Features::default() });
        // A joins as a woken task (not a new one): v = 0, a full slice: d = 1_400_000.
        rq.enqueue(&v(0), Why::Woken, 0);
        assert_eq!(pick(&mut rq, 0), (0, 1_400_000));
        run(&mut rq, 0, 1_400_000);
        rq.enqueue(&v(0), Why::SliceExpired, 1_400_000);
        // Alone, A goes on with dA = 2_800_000; its protection ended at 1_400_000.
        assert_eq!(pick(&mut rq, 1_400_000), (0, 1_400_000));
        // C is created at 1_800_000: vA = 1_800_000 = V, so vC = 1_800_000 and
        // dC = 1_800_000 + 1_400_000/2 = 2_500_000 with PLACE_DEADLINE_INITIAL, else 3_200_000.
        rq.enqueue(&v(1), Why::New, 1_800_000);
        let d_c = if initial { 2_500_000 } else { 3_200_000 };
        assert_eq!((rq.e(1).vruntime, rq.e(1).deadline), (1_800_000, d_c));
        assert_eq!(rq.e(0).deadline, 2_800_000);
        // Both eligible (v = V): the earlier deadline wins. With the half slice C's 2_500_000
        // beats A's 2_800_000 and C pre-empts; with a full slice (3_200_000) A keeps the CPU.
        assert_eq!(rq.preempts(1, 0, 1_800_000), initial);
    }
}

fn two_hogs() -> Workload {
    Workload { cpus: Some(1), tasks: vec![hog("A", 0), hog("B", 0)] }
}

fn switches_per_second(w: &Workload, tick: Option<u64>) -> u64 {
    let mut p = Eevdf::default();
    let cfg = SimConfig { horizon: Some(1000 * MS), tick, ..SimConfig::default() };
    simulate(w, &mut p, &cfg).overall.context_switches
}

#[test]
fn two_hogs_switch_at_every_tick_with_hz_250() {
    // The 1.4 ms slice is shorter than a 4 ms tick: at every tick task_tick_fair() ->
    // update_curr() finds the runner past its deadline (renewed: d = v + 1.4 ms) and the other
    // eligible with an earlier or equal deadline (equal: the waiting one wins) -> one switch per
    // tick: 250 in a second.
    assert_eq!(switches_per_second(&two_hogs(), Some(4 * MS)), 250);
    // Without a tick the switch comes at every slice end: after the first two half slices
    // (0.7 ms each, PLACE_DEADLINE_INITIAL), one per 1.4 ms: 2 + ⌊(1000 − 1.4)/1.4⌋ = 715.
    assert_eq!(switches_per_second(&two_hogs(), None), 715);
}

#[test]
fn a_custom_slice_is_clamped_and_shortens_the_deadline() {
    // runtime 0.05 ms -> 0.1 ms (the clamp of __setparam_fair), 500 ms -> 100 ms.
    let mut rq = FairRq::new(Features::default());
    for (id, runtime, slice) in [(0, 50_000, 100_000), (1, 500 * MS, 100 * MS), (2, 3 * MS, 3 * MS)] {
        rq.enqueue(&TaskView { runtime: Some(runtime), ..v(id) }, Why::Woken, 0);
        assert_eq!((rq.e(id).slice, rq.e(id).custom_slice), (slice, true));
        assert_eq!(rq.e(id).deadline, rq.e(id).vruntime + slice as i64);
    }
    // The 0.1 ms task has the earliest deadline and runs first, for its slice.
    assert_eq!(pick(&mut rq, 0), (0, 100_000));
}

#[test]
fn a_shorter_slice_wakee_preempts_a_protected_task() {
    // PREEMPT_SHORT. A (default 1.4 ms slice) runs from 0 alone; B with a 0.2 ms custom slice
    // wakes at 0.1 ms: vA = 100_000 = V, vB = 100_000, dB = 300_000 < dA = 1_400_000 (A woke,
    // not new). A is protected until 1_400_000, but B's slice is shorter, so the pick ignores
    // the protection and B pre-empts. With PREEMPT_SHORT off, A keeps the CPU.
    for short in [true, false] {
        let mut rq = FairRq::new(Features { preempt_short: short, ..Features::default() });
        rq.enqueue(&v(0), Why::Woken, 0);
        assert_eq!(pick(&mut rq, 0), (0, 1_400_000));
        rq.enqueue(&TaskView { runtime: Some(200_000), ..v(1) }, Why::Woken, 100_000);
        assert_eq!((rq.e(1).vruntime, rq.e(1).deadline), (100_000, 300_000));
        assert_eq!(rq.preempts(1, 0, 100_000), short);
    }
}

/// PREEMPT_SHORT compares the current task's slice with the last wakee's; a wakee another CPU
/// took in the meantime is no longer on this queue and cancels nothing.
#[test]
fn a_wakee_taken_by_another_cpu_does_not_cancel_the_current_protection() {
    let mut rq = FairRq::new(Features::default());
    rq.enqueue(&v(0), Why::Woken, 0);
    assert_eq!(pick(&mut rq, 0), (0, 1_400_000));
    assert_eq!(rq.e(0).vprot, 1_400_000, "A is protected to its deadline");
    // B wakes here at 0.1 ms, then another CPU takes it before it runs.
    rq.enqueue(&v(1), Why::Woken, 100_000);
    rq.dequeue(1);
    let _ = rq.take(1);
    // A is stopped at 0.2 ms by another class and stays queued: its protection stands.
    rq.charge(0, 200_000);
    rq.enqueue(&v(0), Why::Preempted, 200_000);
    assert_eq!(rq.e(0).vprot, 1_400_000);
}

#[test]
fn batch_wakees_do_not_preempt_and_idle_tasks_yield_to_others() {
    let class = |id, c: &'static str| TaskView { class: Some(c), ..v(id) };
    // A normal task runs (protection over: it was picked at 0 and ran to its deadline and on);
    // a woken BATCH task with an earlier deadline still does not pre-empt (it is not
    // SCHED_NORMAL); a normal one does.
    for (c, expect) in [("batch", false), ("other", true)] {
        let mut rq = FairRq::new(Features::default());
        rq.enqueue(&v(0), Why::Woken, 0);
        assert_eq!(pick(&mut rq, 0), (0, 1_400_000));
        run(&mut rq, 0, 1_400_000);
        rq.enqueue(&v(0), Why::SliceExpired, 1_400_000);
        assert_eq!(pick(&mut rq, 1_400_000), (0, 1_400_000));
        rq.enqueue(&TaskView { nice: -10, ..class(1, c) }, Why::New, 1_500_000);
        assert_eq!(rq.preempts(1, 0, 1_500_000), expect, "class {c}");
    }
    // A SCHED_IDLE task (weight 3) runs alone; a woken normal task pre-empts it at once even
    // though the idle task is protected; a woken idle task does not pre-empt a normal one.
    let mut rq = FairRq::new(Features::default());
    rq.enqueue(&class(0, "idle"), Why::Woken, 0);
    assert_eq!(rq.e(0).load.weight, 3);
    let p = rq.pick(0, 0).expect("a pick");
    assert_eq!(p.task, 0);
    rq.enqueue(&v(1), Why::Woken, 10_000);
    assert!(rq.preempts(1, 0, 10_000));
    let mut rq = FairRq::new(Features::default());
    rq.enqueue(&v(0), Why::Woken, 0);
    assert_eq!(pick(&mut rq, 0), (0, 1_400_000));
    rq.enqueue(&class(1, "idle"), Why::Woken, 10_000);
    assert!(!rq.preempts(1, 0, 10_000));
    // Two SCHED_IDLE hogs beside a normal one get 3/(1024 + 6) of the CPU each.
    let w = Workload {
        cpus: Some(1),
        tasks: vec![
            hog("n", 0),
            {
                let mut t = hog("i1", 0);
                t.class = Some("idle".into());
                t
            },
            {
                {
                    let mut t = hog("i2", 0);
                    t.class = Some("idle".into());
                    t
                }
            },
        ],
    };
    let mut p = Eevdf::default();
    let r = simulate(&w, &mut p, &SimConfig { horizon: Some(2000 * MS), ..SimConfig::default() });
    let share = r.tasks[1].cpu as f64 / (2000 * MS) as f64;
    assert!((share - 3.0 / 1030.0).abs() < 0.002, "idle share {share}");
}

#[test]
fn the_spec_names_only_what_differs_from_6_18() {
    use crate::policies::by_spec;
    assert_eq!(by_spec("eevdf").unwrap().name(), "eevdf");
    assert_eq!(by_spec("eevdf:base_slice=1.4ms,run_to_parity=1").unwrap().name(), "eevdf");
    assert_eq!(by_spec("eevdf:run_to_parity=0,base_slice=3ms").unwrap().name(), "eevdf:base_slice=3ms,run_to_parity=0");
    assert_eq!(by_spec("eevdf:cpus=8").unwrap().name(), "eevdf:base_slice=2.8ms");
    assert_eq!(by_spec("eevdf:delay_dequeue=2").err().unwrap().field, "delay_dequeue");
    assert!(by_spec("eevdf").unwrap().tick_driven());
}

#[test]
fn a_wakee_that_preempts_after_a_delay_is_charged_from_the_wakeup() {
    // A and B nice 0 new at 0; A runs first, [0, 100 µs); a wake-up at 100 µs pre-empts A, and the switch comes 8 µs later (the
    // wake-up path). The kernel charged A up to the wake-up and no further
    // (`rq_clock_skip_update()`): vA = 100_000, not 108_000; B is charged from 100 µs on.
    let mut rq = FairRq::new(Features::default());
    rq.enqueue(&v(0), Why::New, 0);
    rq.enqueue(&v(1), Why::New, 0);
    assert_eq!(pick(&mut rq, 0).0, 0);
    rq.freeze_clock(0, 100_000);
    run(&mut rq, 0, 108_000);
    assert_eq!(rq.e(0).vruntime, 100_000);
    rq.enqueue(&v(0), Why::Preempted, 108_000);
    assert_eq!(pick(&mut rq, 108_000).0, 1);
    // B ran [100 µs, 250 µs) as the fair class counts it: 150 µs, not 142.
    run(&mut rq, 1, 250_000);
    assert_eq!(rq.e(1).vruntime, 150_000);
    // V = 125_000: B is no longer eligible, A is. The freeze ended with the switch to B: A,
    // picked again, is charged from its pick on.
    rq.enqueue(&v(1), Why::Preempted, 250_000);
    assert_eq!(pick(&mut rq, 250_000).0, 0);
    run(&mut rq, 0, 270_000);
    assert_eq!(rq.e(0).vruntime, 120_000);
}

#[test]
fn next_buddy_picks_the_wakee_ahead_of_an_earlier_deadline() {
    let picked_at_200us = |next_buddy: bool| {
        // A and B nice 0 new at 0: v = 0, d = 700_000 (half of the 1.4 ms slice); A runs.
        let mut rq = FairRq::new(Features { next_buddy, ..Features::default() });
        rq.enqueue(&v(0), Why::New, 0);
        rq.enqueue(&v(1), Why::New, 0);
        assert_eq!(pick(&mut rq, 0).0, 0);
        // C wakes at 100 µs with no lag: vA = 100_000, V = 50_000, so vC = 50_000 and
        // dC = 50_000 + 1_400_000. It pre-empts nobody: A is protected, and the earliest
        // eligible deadline is B's anyway. With NEXT_BUDDY it becomes the next buddy.
        rq.enqueue(&v(2), Why::Woken, 100_000);
        assert_eq!((rq.e(2).vruntime, rq.e(2).deadline), (50_000, 1_450_000));
        assert!(!rq.preempts(2, 0, 100_000));
        // A stops at 200 µs: vA = 200_000, V = (200_000 + 0 + 50_000)/3 = 83_333. B (d 700_000)
        // and C (d 1_450_000) are eligible: EEVDF takes B, PICK_BUDDY takes the buddy C.
        run(&mut rq, 0, 200_000);
        rq.enqueue(&v(0), Why::Preempted, 200_000);
        pick(&mut rq, 200_000).0
    };
    assert_eq!(picked_at_200us(false), 1);
    assert_eq!(picked_at_200us(true), 2);
}

#[test]
fn the_engine_charges_a_deferred_preemptions_delay_to_the_wakee() {
    // A hog and B (1 ms of work, 9 ms asleep, 5 ms of work), nice 0, new at 0 on one CPU:
    // A [0, 0.7 ms) and B [0.7, 1.4 ms) (half slices), A [1.4, 2.8 ms), B [2.8, 3.1 ms) and
    // blocks; A alone from 3.1 ms. B wakes at 12.1 ms with lag to claim and pre-empts A, which
    // has run 0.7 + 1.4 + 9 = 11.1 ms. With a wake-up delay of 0.5 ms A runs on to 12.6 ms
    // (within its slice, which ends at 12.9 ms), but the fair class charges it only up to the
    // wake-up, as with no delay (seen at 13.3 ms, while B runs).
    let a_after_b_woke = |delay: u64| {
        let mut b = TaskSpec::cpu("b", 0, MS);
        b.bursts = vec![MS, 9 * MS, 5 * MS].into();
        let w = Workload { cpus: Some(1), tasks: vec![TaskSpec::cpu("a", 0, 100 * MS), b] };
        let mut p = Eevdf::new(Features::linux_6_18(2, 250));
        let wake = WakeDelays { preempt: WakeDelay::from(delay), ..WakeDelays::default() };
        let r = simulate(&w, &mut p, &SimConfig { horizon: Some(13_300_000), wake, ..SimConfig::default() });
        (r.tasks[0].cpu, p.rq.e(0).vruntime)
    };
    assert_eq!(a_after_b_woke(0), (11_100_000, 11_100_000));
    assert_eq!(a_after_b_woke(MS / 2), (11_600_000, 11_100_000), "A ran the delay and was not charged for it");
}

#[test]
fn shifting_two_waiting_tasks_by_opposite_amounts_keeps_v_and_reorders_the_pick() {
    // A, B, C nice 0, new at 0: v = 0, d = 700_000 each. A runs to 300 µs: vA = 300_000,
    // V = (300_000 + 0 + 0) / 3 = 100_000.
    let mut rq = FairRq::new(Features::default());
    for i in 0..3 {
        rq.enqueue(&v(i), Why::New, 0);
    }
    assert_eq!(pick(&mut rq, 0).0, 0);
    run(&mut rq, 0, 300_000);
    assert_eq!(rq.avg_vruntime(), 100_000);
    // B 50 µs later, C 50 µs earlier (the shadow setting them to the kernel's places): V stays,
    // each deadline moves with its vruntime, and C's (650_000) is now the earliest eligible.
    rq.shift_vruntime(1, 50_000);
    rq.shift_vruntime(2, -50_000);
    assert_eq!(rq.avg_vruntime(), 100_000);
    assert_eq!((rq.e(1).vruntime, rq.e(1).deadline), (50_000, 750_000));
    assert_eq!((rq.e(2).vruntime, rq.e(2).deadline), (-50_000, 650_000));
    rq.enqueue(&v(0), Why::Preempted, 300_000);
    assert_eq!(pick(&mut rq, 300_000).0, 2);
}
