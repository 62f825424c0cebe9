//! The table row by row against the illumos source, and hand-worked schedules on one CPU.

use super::*;
use crate::engine::{simulate, SimConfig, SimResult};
use crate::policy::MS;
use crate::workload::{TaskSpec, Workload};

/// `config_ts_dptbl[]` as printed in illumos-gate `usr/src/uts/common/disp/ts_dptbl.c`
/// (commit 7c478bd9), copied by hand: glbpri (`TSGPUP0+i`, `TSGPUP0` = 0), qntm (ticks), tqexp,
/// slprt, mxwt, lwt.
#[rustfmt::skip]
const ILLUMOS: [[u32; 6]; 60] = [
    [0,  20,  0, 50,     0, 50],
    [1,  20,  0, 50,     0, 50],
    [2,  20,  0, 50,     0, 50],
    [3,  20,  0, 50,     0, 50],
    [4,  20,  0, 50,     0, 50],
    [5,  20,  0, 50,     0, 50],
    [6,  20,  0, 50,     0, 50],
    [7,  20,  0, 50,     0, 50],
    [8,  20,  0, 50,     0, 50],
    [9,  20,  0, 50,     0, 50],
    [10, 16,  0, 51,     0, 51],
    [11, 16,  1, 51,     0, 51],
    [12, 16,  2, 51,     0, 51],
    [13, 16,  3, 51,     0, 51],
    [14, 16,  4, 51,     0, 51],
    [15, 16,  5, 51,     0, 51],
    [16, 16,  6, 51,     0, 51],
    [17, 16,  7, 51,     0, 51],
    [18, 16,  8, 51,     0, 51],
    [19, 16,  9, 51,     0, 51],
    [20, 12, 10, 52,     0, 52],
    [21, 12, 11, 52,     0, 52],
    [22, 12, 12, 52,     0, 52],
    [23, 12, 13, 52,     0, 52],
    [24, 12, 14, 52,     0, 52],
    [25, 12, 15, 52,     0, 52],
    [26, 12, 16, 52,     0, 52],
    [27, 12, 17, 52,     0, 52],
    [28, 12, 18, 52,     0, 52],
    [29, 12, 19, 52,     0, 52],
    [30,  8, 20, 53,     0, 53],
    [31,  8, 21, 53,     0, 53],
    [32,  8, 22, 53,     0, 53],
    [33,  8, 23, 53,     0, 53],
    [34,  8, 24, 53,     0, 53],
    [35,  8, 25, 54,     0, 54],
    [36,  8, 26, 54,     0, 54],
    [37,  8, 27, 54,     0, 54],
    [38,  8, 28, 54,     0, 54],
    [39,  8, 29, 54,     0, 54],
    [40,  4, 30, 55,     0, 55],
    [41,  4, 31, 55,     0, 55],
    [42,  4, 32, 55,     0, 55],
    [43,  4, 33, 55,     0, 55],
    [44,  4, 34, 55,     0, 55],
    [45,  4, 35, 56,     0, 56],
    [46,  4, 36, 57,     0, 57],
    [47,  4, 37, 58,     0, 58],
    [48,  4, 38, 58,     0, 58],
    [49,  4, 39, 58,     0, 59],
    [50,  4, 40, 58,     0, 59],
    [51,  4, 41, 58,     0, 59],
    [52,  4, 42, 58,     0, 59],
    [53,  4, 43, 58,     0, 59],
    [54,  4, 44, 58,     0, 59],
    [55,  4, 45, 58,     0, 59],
    [56,  4, 46, 58,     0, 59],
    [57,  4, 47, 58,     0, 59],
    [58,  4, 48, 58,     0, 59],
    [59,  2, 49, 59, 32000, 59],
];

#[test]
fn every_row_matches_config_ts_dptbl() {
    let t = default_table();
    assert_eq!(t.len(), 60);
    for (i, (row, want)) in t.iter().zip(ILLUMOS.iter()).enumerate() {
        let [globpri, ticks, tqexp, slpret, maxwait, lwait] = *want;
        // A tick is 10 ms at hz 100: 20 ticks = 200 ms … 2 ticks = 20 ms.
        let expect = DispRow {
            globpri: globpri as u8,
            quantum: Dur::from(ticks) * 10 * MS,
            tqexp: tqexp as u8,
            slpret: slpret as u8,
            maxwait,
            lwait: lwait as u8,
        };
        assert_eq!(*row, expect, "level {i}");
    }
    // At hz 1000 the same ticks are a tenth as long.
    assert_eq!(table_for_tick(MS)[0].quantum, 20 * MS);
}

fn one_cpu(tasks: Vec<TaskSpec>, p: &mut SolarisTs) -> SimResult {
    simulate(&Workload { cpus: Some(1), tasks }, p, &SimConfig { cpus: 1, ..Default::default() })
}

/// (task, start ms, end ms) of every run slice.
fn slices(r: &SimResult) -> Vec<(usize, u64, u64)> {
    r.slices.iter().map(|s| (s.task, s.start / MS, s.end / MS)).collect()
}

#[test]
fn expiry_walks_the_table_down_and_the_update_lifts_a_running_hog() {
    // Driven by hand: priority 0 starts at cpupri 29 = level 29.
    let mut p = SolarisTs::new();
    p.enqueue(&TaskView::new(0), EnqueueReason::New, 0);
    let mut levels = vec![];
    let mut quanta = vec![];
    for _ in 0..5 {
        let pick = p.pick_next(0, 0).unwrap();
        levels.push(p.level(0));
        quanta.push(pick.slice.unwrap() / MS);
        p.charge(0, pick.slice.unwrap(), 0);
        p.enqueue(&TaskView::new(0), EnqueueReason::SliceExpired, 0);
    }
    // tqexp: 29 → 19 → 9 → 0 → 0; quanta 12, 16, 20, 20, 20 ticks.
    assert_eq!(levels, vec![29, 19, 9, 0, 0]);
    assert_eq!(quanta, vec![120, 160, 200, 200, 200]);
}

#[test]
fn a_cpu_bound_task_walks_down_and_is_lifted_once_a_second() {
    // One task, 1500 ms of CPU, alone. Quanta by cpupri (tqexp in brackets):
    //   0–120     level 29, 12 ticks  (→19)
    //   120–280   level 19, 16 ticks  (→9)
    //   280–480   level 9,  20 ticks  (→0)
    //   480–680, 680–880  level 0, 20 ticks (→0)
    //   880–1000  level 0: at 1 s ts_update makes dispwait 1 > maxwait 0 while it runs, so
    //             ts_trapret lifts it to slpret[0] = 50 with a new quantum (stop and re-pick)
    //   1000–1040 level 50, 4 ticks (→40)
    //   1040–1080 level 40, 4 ticks (→30)
    //   1080–1160 level 30, 8 ticks (→20)
    //   1160–1280 level 20, 12 ticks (→10)
    //   1280–1440 level 10, 16 ticks (→0)
    //   1440–1500 level 0, done (CPU used: 120+160+200+200+200+120+40+40+80+120+160+60 = 1500).
    let mut p = SolarisTs::new();
    let r = one_cpu(vec![TaskSpec::cpu("hog", 0, 1500 * MS)], &mut p);
    let ends: Vec<u64> = slices(&r).iter().map(|s| s.2).collect();
    assert_eq!(ends, vec![120, 280, 480, 680, 880, 1000, 1040, 1080, 1160, 1280, 1440, 1500]);
    assert_eq!(r.tasks[0].finish, Some(1500 * MS));
    // Ten quanta ran out; the stop at 1000 is the re-pick for the new quantum.
    assert_eq!(r.tasks[0].quantum_expiries, 10);
    assert_eq!(r.tasks[0].preemptions, 1);
}

/// A hog (3000 ms) and a sleeper (10 ms CPU, 1500 ms asleep, 10 ms CPU), both at 0.
fn hog_and_sleeper() -> Vec<TaskSpec> {
    vec![
        TaskSpec::cpu("hog", 0, 3000 * MS),
        TaskSpec { bursts: vec![10 * MS, 1500 * MS, 10 * MS].into(), ..TaskSpec::cpu("sleeper", 0, 0) },
    ]
}

// Both runs below have the same schedule:
//   0–120     hog, level 29 (12 ticks); the sleeper, also 29, waits: equal levels do not pre-empt
//   120–130   sleeper (level 29), then sleeps until 130 + 1500 = 1630 with 110 ms of quantum left
//   130–290   hog level 19 (→9), 290–490 level 9 (→0), 490–690, 690–890 level 0,
//   890–1000  hog: the update at 1 s lifts it to slpret[0] = 50 (4 ticks)
//   1000–1040 level 50 (→40), 1040–1080 level 40 (→30), 1080–1160 level 30 (→20),
//   1160–1280 level 20 (→10), 1280–1440 level 10 (→0), 1440–1630 level 0
//   1630      the sleeper wakes at level 52 > 0 and pre-empts the hog
//   1630–1640 sleeper, done
//   1640–1650 hog, at the front with 200 − 190 = 10 ms of its quantum left; then 200 ms quanta
//             and at 2000 the lift again: 1650–1850, 1850–2000, 2000–2040 (level 50), …
//   The hog ends at 3000 + 20 ms of the sleeper's CPU = 3020 (the CPU never idles).
const HOG_AND_SLEEPER: [(usize, u64, u64); 9] = [
    (0, 0, 120),
    (1, 120, 130),
    (0, 130, 290),
    (0, 290, 490),
    (0, 490, 690),
    (0, 690, 890),
    (0, 890, 1000),
    (0, 1000, 1040),
    (0, 1040, 1080),
];

#[test]
fn a_sleeper_is_lifted_while_asleep_and_preempts_the_hog_on_waking() {
    // ts_sleep_promote = 1 (illumos): at 1 s the sleeper's dispwait 1 > maxwait[29] = 0, so
    // ts_update lifts it asleep to lwait[29] = 52 (dispwait 0); ts_wakeup then has nothing to do.
    let mut p = SolarisTs::new();
    let r = one_cpu(hog_and_sleeper(), &mut p);
    let s = slices(&r);
    assert_eq!(s[..9], HOG_AND_SLEEPER);
    assert!(s.contains(&(0, 1440, 1630)) && s.contains(&(1, 1630, 1640)) && s.contains(&(0, 1640, 1650)), "{s:?}");
    assert_eq!(p.level(1), 52);
    assert_eq!(r.tasks[1].finish, Some(1640 * MS));
    assert_eq!(r.tasks[0].finish, Some(3020 * MS));
}

#[test]
fn without_sleep_promotion_the_wake_up_applies_slpret() {
    // ts_sleep_promote = 0: at 1 s the sleeper's dispwait becomes 1 and stays; at 1630
    // ts_wakeup finds 1 > maxwait[29] = 0 and sets cpupri = slpret[29] = 52: the same level,
    // the same schedule.
    let mut p = SolarisTs::new().with_sleep_promote(false);
    let r = one_cpu(hog_and_sleeper(), &mut p);
    let s = slices(&r);
    assert_eq!(s[..9], HOG_AND_SLEEPER);
    assert!(s.contains(&(1, 1630, 1640)), "{s:?}");
    assert_eq!(p.level(1), 52);
}

#[test]
fn a_starved_task_is_lifted_to_lwait_at_the_first_update() {
    // H: priority −1 (upri +1), level = cpupri + 1, 3000 ms of CPU.
    // L: priority 30 (upri −30), level = max(cpupri − 30, 0), 10 ms of CPU. Both at 0.
    //   0–120     H level 30 (cpupri 29, 12 ticks); L at level 0 waits
    //   120–280   H cpupri 19 → level 20; 280–480 cpupri 9 → 10; 480–680, 680–880 cpupri 0 →
    //             level 1 > 0: L still waits
    //   880–1000  H; at 1 s ts_update (tasks in id order):
    //             H runs, dispwait 1 > maxwait[1] = 0 → slpret[0] = 50, level 51, 4 ticks;
    //             L queued, dispwait 1 > maxwait[0] = 0 → lwait[29] = 52, level 52 − 30 = 22
    //   1000–1040 H level 51 (→ cpupri 40, level 41), 1040–1080 (→ 30, level 31, 8 ticks),
    //   1080–1160 H level 31 → cpupri 20, level 21 < 22
    //   1160–1170 L runs at last (first run 1160 ms after it arrived), done
    //   1170      H goes on at level 21.
    let h = TaskSpec { priority: -1, ..TaskSpec::cpu("H", 0, 3000 * MS) };
    let l = TaskSpec { priority: 30, ..TaskSpec::cpu("L", 0, 10 * MS) };
    let mut p = SolarisTs::new();
    let r = one_cpu(vec![h, l], &mut p);
    let s = slices(&r);
    assert_eq!(
        s[..9],
        [
            (0, 0, 120),
            (0, 120, 280),
            (0, 280, 480),
            (0, 480, 680),
            (0, 680, 880),
            (0, 880, 1000),
            (0, 1000, 1040),
            (0, 1040, 1080),
            (0, 1080, 1160)
        ]
    );
    assert_eq!(s[9], (1, 1160, 1170));
    assert_eq!(r.tasks[1].response, Some(1160 * MS));
    assert_eq!(r.tasks[1].finish, Some(1170 * MS));
}

#[test]
fn an_ia_task_is_ten_levels_up_and_pre_empts_an_equal_ts_task() {
    // TS hog and IA task (class "ia", 50 ms CPU, 5 ms asleep, 50 ms CPU), same priority 0, both
    // at 0. IA: level = cpupri 29 + IA_BOOST 10 = 39 > 29, so it runs first:
    //   0–50   IA (its quantum follows cpupri 29, not its level: 12 ticks = 120 ms), then
    //          sleeps to 55 with 120 − 50 = 70 ms left
    //   50–55  hog level 29
    //   55     IA wakes at 39 > 29: pre-empts; 55–105 IA, done
    //   105–   hog, front of level 29 with 120 − 5 = 115 ms left.
    let hog = TaskSpec::cpu("hog", 0, 300 * MS);
    let ia = {
        let mut t = TaskSpec { bursts: vec![50 * MS, 5 * MS, 50 * MS].into(), ..TaskSpec::cpu("ia", 0, 0) };
        t.class = Some("ia".into());
        t
    };
    let mut p = SolarisTs::new();
    let r = one_cpu(vec![hog, ia], &mut p);
    assert_eq!(slices(&r)[..4], [(1, 0, 50), (0, 50, 55), (1, 55, 105), (0, 105, 220)]);
}

#[test]
fn an_inherited_priority_is_a_floor_not_a_wake_up() {
    let mut p = SolarisTs::new();
    p.enqueue(&TaskView { priority: 2, ..TaskView::new(0) }, EnqueueReason::New, 0);
    p.pick_next(0, 0);
    p.charge(0, 120 * MS, 0);
    p.enqueue(&TaskView { priority: 2, ..TaskView::new(0) }, EnqueueReason::SliceExpired, 0);
    // Level 29 − 2 = 27 (cpupri 29), expired: cpupri 19, level 17.
    assert_eq!(p.level(0), 17);
    // Boosted to priority 1 while queued: the floor is 29 − 1 = 28, nothing more (a wake-up
    // with a long wait would give slpret[19] = 51 − 2 = 49).
    p.requeue(&TaskView { priority: 1, ..TaskView::new(0) }, 0);
    assert_eq!(p.level(0), 28);
    // Restored: back to its own level.
    p.requeue(&TaskView { priority: 2, ..TaskView::new(0) }, 0);
    assert_eq!(p.level(0), 17);
    assert_eq!(p.queued(), 1);
}

#[test]
fn a_long_mixed_run_on_two_cpus_keeps_the_engine_invariants() {
    // Several seconds (so the update runs several times) of hogs, sleepers and an IA task on two
    // CPUs: every task gets exactly its CPU time, no CPU idles while a task waits, and the
    // per-CPU form runs it too.
    let mut tasks: Vec<TaskSpec> = (0..3).map(|i| TaskSpec::cpu(&format!("hog{i}"), i * 7 * MS, 2500 * MS)).collect();
    for i in 0..3u64 {
        let bursts = (0..41).map(|k| if k % 2 == 0 { (3 + i) * MS } else { (90 + 10 * i) * MS }).collect();
        tasks.push(TaskSpec { bursts, priority: i as i32 - 1, ..TaskSpec::cpu(&format!("io{i}"), i * MS, 0) });
    }
    tasks.push({
        let mut t = TaskSpec::cpu("ia", 400 * MS, 1200 * MS);
        t.class = Some("ia".into());
        t
    });
    let w = Workload { cpus: Some(2), tasks };
    let cfg = SimConfig { cpus: 2, check_invariants: true, ..Default::default() };
    let r = simulate(&w, &mut SolarisTs::new(), &cfg);
    assert_eq!(r.idle_violations, 0);
    for (t, spec) in r.tasks.iter().zip(&w.tasks) {
        let cpu: Dur = spec.bursts.iter().step_by(2).sum();
        assert_eq!(t.cpu, cpu, "{}", t.name);
        assert!(t.finish.is_some(), "{}", t.name);
    }
    assert!(r.overall.makespan > 3_000 * MS);
    let mut per: Vec<Box<dyn Policy>> = vec![Box::new(SolarisTs::new()), Box::new(SolarisTs::new())];
    let r = crate::engine::simulate_per_cpu(&w, &mut per, &cfg);
    assert!(r.tasks.iter().all(|t| t.finish.is_some()));
}
