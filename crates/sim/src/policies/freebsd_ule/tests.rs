//! Hand-worked checks of the ULE model. Unless a test says otherwise: stathz = 100 (a stathz
//! tick every 10 ms, so `tickincr` = (1000 << 10) / 100 = 10240 = 10 hz ticks << 10 exactly),
//! `sched_slice` = 100 / 10 = 10 ticks (100 ms), `sched_slice_min` = 10 / 6 = 1 tick,
//! `sched_interact` = 30. Times in ms; history in hz ticks << 10 (1 ms = 1024).

use super::score::{user_priority, History, PctCpu, SCHED_SLP_RUN_MAX};
use super::tdq::{How, Tdq};
use super::FreeBsdUle;
use crate::engine::{simulate, SimConfig, SimResult};
use crate::policy::{Policy, MS};
use crate::workload::{TaskSpec, Workload};

fn h(slp_ms: u32, run_ms: u32) -> History {
    History { slptime: slp_ms << 10, runtime: run_ms << 10 }
}

/// Run `tasks` on `cpus` CPUs with stathz 100; return the result.
fn run(tasks: Vec<TaskSpec>, cpus: usize) -> SimResult {
    let mut p = FreeBsdUle::new(100, None, 30);
    let w = Workload { cpus: Some(cpus), tasks };
    simulate(&w, &mut p, &SimConfig { cpus, check_invariants: true, ..SimConfig::default() })
}

/// Each task's runs as (cpu, start ms, end ms), back-to-back runs on one CPU merged.
fn runs(r: &SimResult, task: usize) -> Vec<(usize, u64, u64)> {
    let mut v: Vec<(usize, u64, u64)> = vec![];
    for s in r.slices.iter().filter(|s| s.task == task) {
        match v.last_mut() {
            Some(l) if l.0 == s.cpu && l.2 == s.start => l.2 = s.end,
            _ => v.push((s.cpu, s.start, s.end)),
        }
    }
    v.into_iter().map(|(c, a, b)| (c, a / MS, b / MS)).collect()
}

#[test]
fn interactivity_scores_by_hand() {
    // Sleeps 1000 ms, ran 100 ms: slp 1,024,000 > run 102,400, div = 1,024,000 / 50 = 20,480,
    // score = 102,400 / 20,480 = 5.
    assert_eq!(h(1000, 100).score(30), 5);
    // 300 / 200: div = 307,200 / 50 = 6,144; 204,800 / 6,144 = 33.3 → 33.
    assert_eq!(h(300, 200).score(30), 33);
    // Runs more than it sleeps: with the threshold ≤ 50 the kernel answers 50 at once...
    assert_eq!(h(100, 300).score(30), 50);
    // ...with a threshold of 60 it computes 50 + (50 − slp / div): div = 307,200 / 50 = 6,144,
    // 102,400 / 6,144 = 16.7 → 16, so 50 + 34 = 84.
    assert_eq!(h(100, 300).score(60), 84);
    // Equal, and no history at all: 50 (the shortcut again: runtime ≥ slptime); with the
    // threshold above 50, no history scores 0.
    assert_eq!(h(200, 200).score(60), 50);
    assert_eq!(h(0, 0).score(30), 50);
    assert_eq!(h(0, 0).score(60), 0);
}

#[test]
fn priority_from_score_percent_cpu_and_nice() {
    let idle = PctCpu::at(0);
    // Score 5 < 30: PRI_MIN_INTERACT + (32 / 30 = 1) × 5 = 125.
    assert_eq!(user_priority(&h(1000, 100), &idle, 0, 30), 125);
    // Score 33 + nice −5 = 28 < 30: 120 + 28 = 148; nice 0 leaves it batch: 172 + 0 = 172.
    assert_eq!(user_priority(&h(300, 200), &idle, -5, 30), 148);
    assert_eq!(user_priority(&h(300, 200), &idle, 0, 30), 172);
    // Batch at 50 % of the first second: 500 ticks in a window of max(1000, hz) = 1000,
    // roundup(1000, 32) / 32 = 32 per step, 500 / 32 = 15: 172 + 15 = 187, + nice 10 = 197.
    let half = PctCpu { ticks: 500 << 10, ftick: 0, ltick: 1000 };
    assert_eq!(user_priority(&h(0, 500), &half, 0, 30), 187);
    assert_eq!(user_priority(&h(0, 500), &half, 10, 30), 197);
    // A hog over the full 10 s: roundup(10000, 32) / 32 = 313, 10000 / 313 = 31 (the cap
    // SCHED_PRI_RANGE − 1): 203, and with nice 20 the last batch priority, 223.
    let hog = PctCpu { ticks: 10_000 << 10, ftick: 0, ltick: 10_000 };
    assert_eq!(user_priority(&h(0, 5000), &hog, 0, 30), 203);
    assert_eq!(user_priority(&h(0, 5000), &hog, 20, 30), 223);
}

#[test]
fn percent_cpu_window_slides_and_forgets() {
    // A hog with 10 s in its window, 1 s later: t − ftick = 11,000 ≥ SCHED_TICK_MAX, so
    // ticks = (10,240,000 / 10,000) × (10,000 − (11,000 − 10,000)) = 1024 × 9000 = 9,216,000
    // and ftick = 1000; the second it ran adds 1000 << 10: 10,240,000 again (still 100 %).
    let mut p = PctCpu { ticks: 10_000 << 10, ftick: 0, ltick: 10_000 };
    p.update(11_000, true);
    assert_eq!(p, PctCpu { ticks: 10_240_000, ftick: 1000, ltick: 11_000 });
    // Then 14 s without running (≥ SCHED_TICK_TARG): forgotten, the window starts 10 s back.
    p.update(25_000, false);
    assert_eq!(p, PctCpu { ticks: 0, ftick: 15_000, ltick: 25_000 });
}

#[test]
fn history_is_scaled_back_past_its_limit() {
    // SCHED_SLP_RUN_MAX = 5000 << 10 = 5,120,000.
    assert_eq!(SCHED_SLP_RUN_MAX, 5_120_000);
    // Sum exactly at the limit: both to 4/5 (in fifths, rounding down).
    let mut x = History { slptime: 4_096_000, runtime: 1_024_000 };
    x.update();
    assert_eq!(x, History { slptime: 3_276_800, runtime: 819_200 });
    // Past 6/5 of it (6,144,000) but not twice: halved.
    let mut x = History { slptime: 2_500_000, runtime: 4_000_000 };
    x.update();
    assert_eq!(x, History { slptime: 1_250_000, runtime: 2_000_000 });
    // Past twice: the larger part to the limit, the other to 1.
    let mut x = History { slptime: 2_000_000, runtime: 9_000_000 };
    x.update();
    assert_eq!(x, History { slptime: 1, runtime: 5_120_000 });
    // Below: untouched.
    let mut x = History { slptime: 100, runtime: 200 };
    x.update();
    assert_eq!(x, History { slptime: 100, runtime: 200 });
}

#[test]
fn a_child_inherits_at_most_half_a_second_of_history() {
    // SCHED_SLP_RUN_FORK = 500 << 10 = 512,000. Sum 1,200,000: ratio 1,200,000 / 512,000 = 2.
    let parent = History { slptime: 300_000, runtime: 900_000 };
    assert_eq!(parent.fork(), History { slptime: 150_000, runtime: 450_000 });
    let small = History { slptime: 100_000, runtime: 300_000 };
    assert_eq!(small.fork(), small);
}

#[test]
fn decay_makes_an_old_sleeper_lose_interactivity_sooner() {
    // Slept 4 s (4,096,000), then runs: each stathz tick adds 10,240 and scales back.
    // Tick 100: run 1,024,000, sum 5,120,000 → 4/5: (819,200, 3,276,800), score
    //   819,200 / (3,276,800 / 50 = 65,536) = 12.
    // Tick 200: run 819,200 + 1,024,000 = 1,843,200, sum 5,120,000 again → (1,474,560,
    //   2,621,440); div = 2,621,440 / 50 = 52,428.
    // Tick 209: 1,566,720 / 52,428 = 29; tick 210: 1,576,960 / 52,428 = 30 — no longer < 30.
    // Without the decay it would take run ≥ 30 × 81,920 = 2,457,600: tick 240.
    let mut x = History { slptime: 4_096_000, runtime: 0 };
    let mut first_batch = None;
    for tick in 1..=300 {
        x.runtime += 10_240;
        x.update();
        if tick == 100 {
            assert_eq!(x, History { slptime: 3_276_800, runtime: 819_200 });
            assert_eq!(x.score(30), 12);
        }
        if tick == 200 {
            assert_eq!(x, History { slptime: 2_621_440, runtime: 1_474_560 });
        }
        if tick == 209 {
            assert_eq!(x.score(30), 29);
        }
        if x.score(30) >= 30 && first_batch.is_none() {
            first_batch = Some(tick);
        }
    }
    assert_eq!(first_batch, Some(210));
}

#[test]
fn the_calendar_reaches_a_batch_thread_behind_a_stream_of_better_ones() {
    // Thread 100 at priority 158: slot 64 × (158 − 152) / 72 = 5.33 → 5 from idx 0. Each stathz
    // tick k a new thread at 152 (offset 0) arrives in slot idx and the CPU picks. Ticks 0-4:
    // the newcomer's slot k comes first from ridx = k. Tick 5: idx = ridx = 4 → idx 5, slot 4
    // empty → ridx 5; the newcomer queues behind 100 in slot 5, so 100 runs. By strict
    // priority 152 < 158 would win every time.
    let mut q = Tdq::default();
    q.add(100, 158, How::Normal);
    let mut picked = vec![];
    for k in 0..6u64 {
        q.clock_to(k);
        q.add(k as usize, 152, How::Normal);
        let (t, rq, slot) = q.choose().unwrap();
        q.remove(t, (rq, slot));
        picked.push((t, slot));
    }
    assert_eq!(picked, vec![(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (100, 5)]);
    // Slot 5 still holds thread 5; removing a thread there would move the drain index on.
    assert_eq!((q.idx, q.ridx), (5, 5));
}

#[test]
fn the_insert_index_waits_for_the_drain_index() {
    // idx = ridx = 0 with a thread in slot 0: tick 1 moves idx to 1 but ridx stays on the full
    // slot; a thread whose slot would be ridx (offset 63: priority 152 + 72·63/64 → 223 gives
    // 64 × 71 / 72 = 63, and (63 + 1) % 64 = 0 = ridx) goes one slot back, to 63.
    let mut q = Tdq::default();
    q.add(1, 152, How::Normal);
    q.clock_to(1);
    assert_eq!((q.idx, q.ridx), (1, 0));
    assert_eq!(q.add(2, 223, How::Normal).1, 63);
    // Further ticks change nothing until slot 0 drains; then ridx = 1 and ticks move on.
    q.clock_to(5);
    assert_eq!((q.idx, q.ridx), (1, 0));
    let c = q.choose().unwrap();
    assert_eq!(c.0, 1);
    q.remove(c.0, (c.1, c.2));
    assert_eq!((q.idx, q.ridx), (1, 1));
    q.clock_to(6);
    assert_eq!((q.idx, q.ridx), (2, 2));
}

#[test]
fn a_sleeper_becomes_interactive_and_preempts_a_hog() {
    // H (0): 400 ms of CPU. S (1): 30 ms CPU, 50 ms sleep, 1 ms, 50 ms, 1 ms. Both start with no
    // history: score 50, batch priority 172, calendar slot 64 × 20 / 72 = 17; first slice
    // sched_slice − sched_slice_min = 9 of 10 used, so 1 tick each.
    // 0-10 H. At 10 H (1 tick charged: run 10,240, %CPU 10 / 32 = 0) → 172 again, slot
    //   idx 1 + 17 = 18; S (slot 17) runs 10-20, then goes to slot 2 + 17 = 19.
    // 20-120 H, a full slice (10 ticks; one other thread). At 120: %CPU 110 / 32 = 3 → 175,
    //   slot 12 + 20 = 32. S (19) runs 120-140 and sleeps: run = 3 ticks = 30,720.
    // 140-240 H (alone: full slice). S wakes at 190: slp = 50 << 10 = 51,200, score
    //   30,720 / (51,200 / 50 = 1024) = 30 — not < 30, batch: it is queued at static_boost 152
    //   (slot idx 19), which does not pre-empt H (175; 152 is not interactive). It waits.
    // At 240 H's slice ends; S (slot 19) runs 240-241 and sleeps; H 241-.
    // S wakes at 291: slp 102,400, score 30,720 / 2048 = 15 → interactive, 120 + 15 = 135,
    //   which pre-empts H (178, batch) at once: S 291-292. H resumes at the head, ran 5 ticks of
    //   its slice (250-290), so 5 more: 292-340, then alone to the end: 400 − 10 − 100 − 100 − 50
    //   − 48 = 92 ms more, 340-432.
    let hog = TaskSpec::cpu("H", 0, 400 * MS);
    let sleeper = TaskSpec { bursts: vec![30 * MS, 50 * MS, MS, 50 * MS, MS].into(), ..TaskSpec::cpu("S", 0, 0) };
    let r = run(vec![hog, sleeper], 1);
    assert_eq!(r.idle_violations, 0);
    assert_eq!(runs(&r, 1), vec![(0, 10, 20), (0, 120, 140), (0, 240, 241), (0, 291, 292)]);
    assert_eq!(runs(&r, 0), vec![(0, 0, 10), (0, 20, 120), (0, 140, 240), (0, 241, 291), (0, 292, 432)]);
}

#[test]
fn two_hogs_of_different_nice_alternate_full_slices() {
    // A nice 0, B nice 5 (Linux-style nice in the workload, the same −20..19 as FreeBSD's).
    // At 0: A 172 → slot 17, B 172 + 5 = 177 → slot 64 × 25 / 72 = 22. Both have 1 tick left of
    // their first slice. A runs 0-10; back at 172, slot idx 1 + 17 = 18 < 22: A again, a full
    // slice 10-110. At 110: A's %CPU 110 / 32 = 3 → 175, slot 11 + 20 = 31; B (22) runs its
    // 1 tick 110-120 → 177, slot 12 + 22 = 34. A (31) 120-220 → 178, slot 22 + 23 = 45; B (34)
    // 220-320 → 180, slot 32 + 24 = 56; A (45) 320-420 → 181, slot (42 + 25) % 64 = 3; B (56,
    // first from ridx 42) 420-520 → 183, slot (52 + 27) % 64 = 15; A (3: the scan from 52
    // wraps) 520-620 → 184, slot (62 + 28) % 64 = 26; B (15) 620-720 ... Each re-queued hog
    // lands only a few slots beyond the other (nice 5 is 4-5 slots), while the insert index
    // moves 10 slots a slice: so they alternate 100 ms slices, 1 : 1 — with two threads ULE's
    // nice shows only in the priority, not in the share.
    let a = TaskSpec::cpu("A", 0, 2000 * MS);
    let b = TaskSpec { nice: 5, ..TaskSpec::cpu("B", 0, 2000 * MS) };
    let r = run(vec![a, b], 1);
    let upto = |v: Vec<(usize, u64, u64)>| v.into_iter().filter(|x| x.1 < 1020).collect::<Vec<_>>();
    assert_eq!(
        upto(runs(&r, 0)),
        vec![(0, 0, 110), (0, 120, 220), (0, 320, 420), (0, 520, 620), (0, 720, 820), (0, 920, 1020)]
    );
    assert_eq!(upto(runs(&r, 1)), vec![(0, 110, 120), (0, 220, 320), (0, 420, 520), (0, 620, 720), (0, 820, 920)]);
}

#[test]
fn an_idle_cpu_steals_from_the_busiest() {
    // Two CPUs. A and C (hogs) and B (5 ms) at 0. A goes to CPU 0 (its last CPU, idle); B to
    // CPU 1 (CPU 0's best is now 172, not worse than B's); C to the less loaded — both have
    // load 1, the tie goes to its last CPU, 0. CPU 0 runs A, CPU 1 runs B. At 5 B ends: CPU 1
    // is empty and CPU 0 has load 2 (A running, C queued) ≥ steal_thresh, so CPU 1 takes C and
    // runs it from 5 (its first slice's one tick ends at 10, and it is alone there after) to
    // 205; A, alone on CPU 0, runs 0-200. Without the steal C would wait for A's slice.
    let tasks = vec![TaskSpec::cpu("A", 0, 200 * MS), TaskSpec::cpu("B", 0, 5 * MS), TaskSpec::cpu("C", 0, 200 * MS)];
    let r = run(tasks, 2);
    assert_eq!(r.idle_violations, 0);
    assert_eq!(runs(&r, 1), vec![(1, 0, 5)]);
    assert_eq!(runs(&r, 2), vec![(1, 5, 205)]);
    assert_eq!(runs(&r, 0), vec![(0, 0, 200)]);
}

#[test]
fn a_batch_hog_is_not_starved_by_better_hogs() {
    // A1, A2 nice −20 (score 50 − 20 = 30: batch, 172 − 20 = 152, slot offset 0) and B nice 0
    // (172, offset 17) on one CPU, all at 0: B sits in slot 17. By strict priority B would wait
    // as long as the A's run. Two others on the CPU: tdq_slice = 10 / 2 = 5 ticks.
    // 0-10 A1, 10-20 A2 (first slices: 1 tick). From then each A slice (50 ms) ends with the
    // insert index one slot past the drain index; the expiring A goes to idx + offset, and the
    // other A (one slot back) is drained, moving ridx on:
    //   20-70 A1 (from slot 1); at 70 A1 has 60 ticks of CPU, 60 / 32 = 1 → 153, offset
    //     64 × 1 / 72 = 0 → slot idx 3.   70-120 A2 (slot 2) → 153 → slot 4.
    //   120-170 A1 (3) → 110 / 32 = 3 → 155, offset 2 → slot 5 + 2 = 7.
    //   170-220 A2 (4); slots 5, 6 are empty, so ridx and idx run on to 7 and 8 → A2 to 8 + 2.
    //   220-270 A1 (7) → 160 / 32 = 5 → 157, offset 4, idx 11 → slot 15.
    //   270-320 A2 (10) → 157, idx 16 → slot 20.   320-370 A1 (15): idx and ridx run to 18 / 17.
    // At 370 ridx = 17 is B's slot: B (first slice: 1 tick left) runs 370-380, although both A's
    // are queued at better priorities (158 and 157).
    let a = |n| TaskSpec { nice: -20, ..TaskSpec::cpu(n, 0, 1000 * MS) };
    let b = TaskSpec::cpu("B", 0, 1000 * MS);
    let r = run(vec![a("A1"), a("A2"), b], 1);
    let before = |v: Vec<(usize, u64, u64)>| v.into_iter().filter(|x| x.1 < 380).collect::<Vec<_>>();
    assert_eq!(before(runs(&r, 0)), vec![(0, 0, 10), (0, 20, 70), (0, 120, 170), (0, 220, 270), (0, 320, 370)]);
    assert_eq!(before(runs(&r, 1)), vec![(0, 10, 20), (0, 70, 120), (0, 170, 220), (0, 270, 320)]);
    assert_eq!(runs(&r, 2)[0], (0, 370, 380));
}

#[test]
fn preemption_follows_sched_shouldpreempt() {
    // Interactive (≤ 151) over batch: yes; static_boost's 152 over batch 175: no (not
    // interactive); interactive over interactive: no; realtime 60 ≤ preempt_thresh 80: yes;
    // anything better over an idle-class thread (≥ 224): yes; equal: never.
    assert!(FreeBsdUle::should_preempt(135, 178));
    assert!(!FreeBsdUle::should_preempt(152, 175));
    assert!(!FreeBsdUle::should_preempt(120, 125));
    assert!(FreeBsdUle::should_preempt(60, 125));
    assert!(FreeBsdUle::should_preempt(200, 230));
    assert!(!FreeBsdUle::should_preempt(175, 175));
}

#[test]
fn slices_shrink_with_load_and_name_round_trips() {
    let p = FreeBsdUle::new(127, None, 30);
    // realstathz 127: sched_slice = 12 ticks, sched_slice_min = 2; tdq_slice: 12 with ≤ 1 other
    // thread, 12 / 3 = 4 with 3, 2 from 6 on.
    assert_eq!((p.slice, p.slice_min, p.tickincr), (12, 2, 8062));
    assert_eq!((p.tdq_slice(1), p.tdq_slice(3), p.tdq_slice(5), p.tdq_slice(6)), (12, 4, 2, 2));
    // 12 ticks of 1/127 s = 94.488188 ms; read back as kern.sched.quantum: 94,488 µs over a
    // 7874 µs period rounds to 12.
    assert_eq!(p.name(), "freebsd_ule:stathz=127,slice=94.488188ms,interact=30");
    let mut params = super::super::spec::Params::parse(&p.name()).unwrap();
    assert_eq!(FreeBsdUle::from_params(&mut params).unwrap().slice, 12);
}
