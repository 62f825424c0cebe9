//! Hand-worked schedules for the catalogue policies that follow a textbook or paper rather than
//! a kernel: `mlq`, `mlfq`, `stride`, `lottery` and `freebsd_4bsd`. Each test works the
//! schedule out in its comments from the cited source and asserts it exactly. One CPU, no tick,
//! no switch cost.

use schedlab_sim::engine::{simulate, SimConfig, SimResult};
use schedlab_sim::policies::by_spec;
use schedlab_sim::workload::{TaskSpec, Workload};

const MS: u64 = 1_000_000;

fn cpu(name: &str, arrival_ms: u64, burst_ms: u64) -> TaskSpec {
    TaskSpec::cpu(name, arrival_ms * MS, burst_ms * MS)
}

fn run(tasks: Vec<TaskSpec>, spec: &str, horizon_ms: Option<u64>) -> SimResult {
    let w = Workload { cpus: Some(1), tasks };
    let mut p = by_spec(spec).unwrap();
    let cfg = SimConfig { cpus: 1, horizon: horizon_ms.map(|h| h * MS), ..SimConfig::default() };
    simulate(&w, p.as_mut(), &cfg)
}

/// The run slices as (start ms, end ms, task).
fn slices(r: &SimResult) -> Vec<(u64, u64, usize)> {
    r.slices.iter().map(|s| (s.start / MS, s.end / MS, s.task)).collect()
}

fn finishes(r: &SimResult) -> Vec<Option<u64>> {
    r.tasks.iter().map(|t| t.finish.map(|f| f / MS)).collect()
}

/// Silberschatz, Galvin & Gagne, *Operating System Concepts* 10th ed., §5.3.5: each queue has
/// absolute priority over lower queues; a batch process runs only when the higher queues are
/// empty, and "if an interactive process entered the ready queue while a batch process was
/// running, the batch process would be preempted". Queue 0 = foreground, RR 4 ms; queue 1 =
/// background, FCFS. The queue is the task's class as a number, else its priority, clamped.
#[test]
fn mlq_foreground_rr_preempts_background_fcfs() {
    let tasks = vec![
        TaskSpec { priority: 1, ..cpu("B1", 0, 10) }, // no class: priority 1 → queue 1
        {
            let mut t = cpu("B2", 0, 5);
            t.class = Some("9".into());
            t
        }, // class 9, clamped → queue 1
        {
            let mut t = TaskSpec { priority: 5, ..cpu("F1", 3, 6) };
            t.class = Some("0".into());
            t
        }, // class wins → 0
        TaskSpec { priority: 0, ..cpu("F2", 4, 3) },  // no class: priority 0 → 0
    ];
    let r = run(tasks, "mlq:queues=rr/quantum=4ms+fcfs", None);
    // 0–3   B1 (queue 1 FCFS, first in line; B2 behind it).
    // 3     F1 arrives in queue 0: pre-empts B1 (7 ms left), which keeps the head of queue 1.
    // 3–7   F1, one 4 ms quantum; F2 arrives at 4 behind it (same queue: RR, no pre-emption).
    // 7–10  F2 (3 ms) done;   10–12 F1's last 2 ms.
    // 12–19 B1's 7 ms;        19–24 B2.
    assert_eq!(slices(&r), vec![(0, 3, 0), (3, 7, 2), (7, 10, 3), (10, 12, 2), (12, 19, 0), (19, 24, 1)]);
    assert_eq!(finishes(&r), vec![Some(19), Some(24), Some(12), Some(10)]);
    // Waiting: B1 3..12 = 9, B2 0..19 = 19, F1 7..10 = 3, F2 4..7 = 3.
    assert_eq!(r.tasks.iter().map(|t| t.waiting / MS).collect::<Vec<_>>(), vec![9, 19, 3, 3]);
    assert_eq!(r.tasks[0].preemptions, 1);
}

/// Silberschatz §5.3.6: a process entering the ready queue goes to queue 0 with an 8 ms
/// quantum; if it does not finish it moves to the tail of queue 1 (16 ms), then to queue 2; a
/// process arriving for a higher queue pre-empts one of a lower queue. `mlfq` with
/// levels=3, quantum=8ms gives 8, 16 and 32 ms (queue 2 is RR 32 ms, not the book's FCFS: the
/// same schedule while one task is there, but its run is cut into 32 ms slices). A task keeps
/// what it used of its allotment when pre-empted (OSTEP ch. 8, Rule 4).
#[test]
fn mlfq_silberschatz_queues_demote_and_preempt() {
    let spec = "mlfq:levels=3,quantum=8ms,boost=0ms";
    // A = 30 ms at 0, B = 6 ms at 12.
    // 0–8   A in queue 0 (8 ms quantum) → tail of queue 1.
    // 8–12  A in queue 1 (16 ms quantum); B arrives in queue 0 at 12 and pre-empts (used 4).
    // 12–18 B, done within its 8 ms.
    // 18–30 A, the 16 − 4 = 12 ms left of its queue-1 quantum → queue 2 (A has 30−24 = 6 left).
    // 30–36 A in queue 2, done.
    let r = run(vec![cpu("A", 0, 30), cpu("B", 12, 6)], spec, None);
    assert_eq!(slices(&r), vec![(0, 8, 0), (8, 12, 0), (12, 18, 1), (18, 30, 0), (30, 36, 0)]);
    assert_eq!(finishes(&r), vec![Some(36), Some(18)]);
    assert_eq!(r.tasks[1].waiting, 0);

    // A = 60 ms at 0, B = 6 ms at 40: B pre-empts A in queue 2.
    // 0–8 A (q0), 8–24 A (q1), 24–40 A (q2, 16 of its 32 ms used), 40–46 B (q0),
    // 46–62 A (the 16 ms left of the 32), 62–66 A (a fresh 32 ms slice; 60−56 = 4 ms left).
    let r = run(vec![cpu("A", 0, 60), cpu("B", 40, 6)], spec, None);
    assert_eq!(slices(&r), vec![(0, 8, 0), (8, 24, 0), (24, 40, 0), (40, 46, 1), (46, 62, 0), (62, 66, 0)]);
    assert_eq!(finishes(&r), vec![Some(66), Some(46)]);
}

/// OSTEP ch. 8, Rule 5: "After some time period S, move all the jobs in the system to the
/// topmost queue" — so a long job is not starved by a stream of short ones. A = 40 ms at 0;
/// S0..S19 = 8 ms each, S_k arriving at 24 + 6k: 20 × 8 = 160 ms of top-queue work from 24 to
/// 184 (S_k arrives at 24 + 6k, before S_(k−1) ends at 24 + 8k, so queue 0 never empties).
#[test]
fn mlfq_boost_lifts_a_starved_job_to_the_top() {
    let mut tasks = vec![cpu("A", 0, 40)];
    for k in 0..20 {
        tasks.push(cpu(&format!("S{k}"), 24 + 6 * k, 8));
    }
    // Without a boost: A 0–8 (q0), 8–24 (q1), then it sits in queue 2 behind the stream
    // (S_k runs 24 + 8k .. 32 + 8k) and gets its last 16 ms only at 184–200.
    let r = run(tasks.clone(), "mlfq:levels=3,quantum=8ms,boost=0ms", None);
    let mut want = vec![(0, 8, 0), (8, 24, 0)];
    want.extend((0..20).map(|k| (24 + 8 * k, 32 + 8 * k, k as usize + 1)));
    want.push((184, 200, 0));
    assert_eq!(slices(&r), want);
    assert_eq!(r.tasks[0].finish, Some(200 * MS));

    // Boost every 40 ms. A reaches queue 2 at 24 with nothing used there (S0 arrives as its
    // queue-1 quantum ends). S0 24–32, S1 32–40.
    // 40: boost — A goes to the tail of queue 0, behind S2 (arrived 36): S2 40–48, A 48–56
    //     (a full 8 ms top-queue allotment) → queue 1. S3..S5 (arrived 42, 48, 54) 56–80.
    // 80: boost — A (queue 1) to the tail of queue 0 behind S6..S9 (arrived 60..78):
    //     S6..S9 80–112, A 112–120 (8 ms, its last: 8 + 16 + 8 + 8 = 40). S10..S19 120–200.
    let r = run(tasks, "mlfq:levels=3,quantum=8ms,boost=40ms", None);
    let mut want = vec![(0, 8, 0), (8, 24, 0), (24, 32, 1), (32, 40, 2), (40, 48, 3), (48, 56, 0)];
    want.extend((3..10).map(|k| (56 + 8 * (k - 3), 64 + 8 * (k - 3), k as usize + 1)));
    want.push((112, 120, 0));
    want.extend((10..20).map(|k| (120 + 8 * (k - 10), 128 + 8 * (k - 10), k as usize + 1)));
    assert_eq!(slices(&r), want);
    assert_eq!(r.tasks[0].finish, Some(120 * MS));
    assert_eq!(r.tasks[20].finish, Some(200 * MS), "the stream ends as late as without a boost");
}

/// Rule 5 acts at the boost's time, and a boosted job starts the top queue's allotment afresh.
#[test]
fn mlfq_boost_comes_on_time_with_a_fresh_allotment() {
    // Two 100 ms hogs, boost every 50 ms; quanta 8, 16, 32 ms.
    // 0–8 A, 8–16 B (queue 0), 16–32 A, 32–48 B (queue 1), 48– A in queue 2 (a 32 ms slice).
    // 50: boost — A, running in queue 2, stops and goes to the head of queue 0 with a fresh
    //     8 ms; B (queue 2) to the top too. 50–58 A, 58–66 B, 66–82 A, 82–98 B (queue 1),
    //     98– A in queue 2 again; 100: boost — A stops, 100–108 A.
    let r = run(vec![cpu("A", 0, 100), cpu("B", 0, 100)], "mlfq:levels=3,quantum=8ms,boost=50ms", Some(108));
    assert_eq!(
        slices(&r),
        vec![
            (0, 8, 0),
            (8, 16, 1),
            (16, 32, 0),
            (32, 48, 1),
            (48, 50, 0),
            (50, 58, 0),
            (58, 66, 1),
            (66, 82, 0),
            (82, 98, 1),
            (98, 100, 0),
            (100, 108, 0)
        ]
    );
    // A = 40 ms at 0; S_k = 8 ms at 26 + 6k; boost every 40 ms. 0–8 A (q0), 8–24 A (q1),
    // 24–26 A (q2, 2 ms used), S0 pre-empts: 26–34 S0, 34–42 S1 (in queue 0 the boost at 40
    // does not stop it). A was moved to queue 0 behind S2 (arrived 38): 42–50 S2, then A with
    // the whole 8 ms of the top queue, not the 6 left after its 2 ms in queue 2: 50–58.
    let mut tasks = vec![cpu("A", 0, 40)];
    for k in 0..5 {
        tasks.push(cpu(&format!("S{k}"), 26 + 6 * k, 8));
    }
    let r = run(tasks, "mlfq:levels=3,quantum=8ms,boost=40ms", Some(58));
    assert_eq!(
        slices(&r),
        vec![(0, 8, 0), (8, 24, 0), (24, 26, 0), (26, 34, 1), (34, 42, 2), (42, 50, 3), (50, 58, 0)]
    );
}

/// Waldspurger & Weihl, "Stride Scheduling" (MIT/LCS/TM-528, 1995), the basic algorithm: each
/// client has stride = stride1 / tickets and a pass; the client with the smallest pass runs a
/// quantum and its pass advances by its stride. Tickets 3:2:1 get 3, 2 and 1 quanta of every 6.
/// Here stride1 = 2^20 = 1048576 with integer strides: A (3) 349525 (1048576/3 = 349525.33,
/// truncated), B (2) 524288, C (1) 1048576; all passes start at 0; equal passes go in the order
/// the clients were queued (the paper breaks ties arbitrarily).
#[test]
fn stride_3_2_1_order_of_quanta() {
    let w = |n: &str, tickets: u32| TaskSpec { weight: tickets, ..cpu(n, 0, 1000) };
    let r = run(vec![w("A", 3), w("B", 2), w("C", 1)], "stride:quantum=10ms", Some(240));
    //  q  passes before (A, B, C)        runs  A's / B's / C's pass after
    //  1  0, 0, 0                         A     349525
    //  2  349525, 0, 0                    B     524288
    //  3  349525, 524288, 0               C     1048576
    //  4  349525, 524288, 1048576         A     699050
    //  5  699050, 524288, 1048576         B     1048576
    //  6  699050, 1048576, 1048576        A     1048575
    //  7  1048575, 1048576, 1048576       A     1398100 (3 × 349525 is one short of 2^20)
    //  8  1398100, 1048576, 1048576       C     2097152 (C was queued at q3, before B at q5)
    //  9  1398100, 1048576, 2097152       B     1572864
    // 10  1398100, 1572864, 2097152       A     1747625
    // 11  1747625, 1572864, 2097152       B     2097152
    // 12  1747625, 2097152, 2097152       A     2097150
    // Passes after q12 are the ones after q6 plus 1048575 / 1048576 / 1048576: q13..q24 repeat
    // q7..q12 (A A C B A B A ... with the same tie order).
    let order: Vec<usize> = r.slices.iter().map(|s| s.task).collect();
    let (a, b, c) = (0, 1, 2);
    let first12 = [a, b, c, a, b, a, a, c, b, a, b, a];
    let next12 = [a, c, b, a, b, a, a, c, b, a, b, a];
    assert_eq!(order[..12], first12);
    assert_eq!(order[12..], next12);
    assert!(r.slices.iter().enumerate().all(|(i, s)| s.start == 10 * MS * i as u64 && s.end == s.start + 10 * MS));
    // 24 quanta: A 12, B 8, C 4 — exactly 3:2:1.
    assert_eq!(r.tasks.iter().map(|t| t.cpu / MS).collect::<Vec<_>>(), vec![120, 80, 40]);
}

/// Waldspurger & Weihl, "Lottery Scheduling" (OSDI 1994): a client's expected share of quanta is
/// its fraction of the tickets, and the number of wins over n lotteries is binomial (§2.1).
#[test]
fn lottery_follows_tickets() {
    let w = |n: &str, tickets: u32, ms: u64| TaskSpec { weight: tickets, ..cpu(n, 0, ms) };

    // (a) The only runnable client holds all the tickets and wins every quantum: 100 ms in
    // ten back-to-back 10 ms quanta.
    let r = run(vec![w("A", 5, 100)], "lottery:quantum=10ms,seed=1", None);
    assert_eq!(slices(&r), (0..10).map(|i| (10 * i, 10 * i + 10, 0)).collect::<Vec<_>>());

    // (b) A holds 3 tickets, B 1, both always runnable; N = 10,000 quanta of 10 ms (100 s).
    // A's wins ~ Binomial(N, p = 3/4): mean N·p = 7500, σ = sqrt(N·p·(1−p)) = sqrt(1875)
    // = 43.30, so 4σ = 173.2 and A's wins must lie in 7500 ± 173, i.e. 7327..=7673.
    let n = 10_000u64;
    let hogs = || vec![w("A", 3, 200_000), w("B", 1, 200_000)];
    let r1 = run(hogs(), "lottery:quantum=10ms,seed=1", Some(n * 10));
    assert_eq!(r1.slices.len() as u64, n, "one slice per quantum");
    let a_wins = r1.slices.iter().filter(|s| s.task == 0).count() as u64;
    let sigma = ((n as f64) * 0.75 * 0.25).sqrt();
    assert!((a_wins as f64 - 7500.0).abs() <= 4.0 * sigma, "A won {a_wins} of {n}");
    assert_eq!(r1.tasks[0].cpu, a_wins * 10 * MS);
    assert_eq!(r1.tasks[1].cpu, (n - a_wins) * 10 * MS);

    // (c) The draw is seeded: the same seed repeats the schedule, another seed changes it.
    let again = run(hogs(), "lottery:quantum=10ms,seed=1", Some(n * 10));
    assert_eq!(again.slices, r1.slices);
    let other = run(hogs(), "lottery:quantum=10ms,seed=2", Some(n * 10));
    assert_ne!(
        other.slices.iter().map(|s| s.task).collect::<Vec<_>>(),
        slices(&r1).iter().map(|s| s.2).collect::<Vec<_>>()
    );
}

/// The 4.4BSD time-sharing priority (McKusick et al., *The Design and Implementation of the
/// 4.4BSD Operating System*, §4.4; 4.4BSD-Lite kern_synch.c resetpriority()): priority =
/// PUSER + estcpu/4 + 2·nice, estcpu +1 per 10 ms tick run, run queues of 4 priorities, a
/// 100 ms round-robin slice. Two CPU hogs, A nice 0 and B nice 10 (TaskSpec::nice), both at 0.
/// The once-a-second decay (schedcpu(), §4.4: estcpu · 2·load/(2·load + 1) + nice) at 1000 ms.
#[test]
fn freebsd_4bsd_nice_hogs_first_two_seconds() {
    let r = run(vec![cpu("A", 0, 5000), TaskSpec { nice: 10, ..cpu("B", 0, 5000) }], "freebsd_4bsd", Some(2100));
    // Start: A 160 + 0 + 0 = 160 (queue 160/4 = 40), B 160 + 0 + 20 = 180 (queue 45): A runs.
    // After each 100 ms A has 10 more estcpu; priority (queue) at the end of each slice:
    //   100: 10 → 162 (40)   200: 20 → 165 (41)   300: 30 → 167 (41)   400: 40 → 170 (42)
    //   500: 50 → 172 (43)   600: 60 → 175 (43)   700: 70 → 177 (44)   800: 80 → 180 (45)
    // At 800 A joins queue 45 behind B (queued there since 0): B 800–900 → estcpu 10,
    // 160 + 2 + 20 = 182 (45), behind A; A 900–1000 → 90, 182 (45).
    // At 1000 schedcpu() with load 2 (both runnable): factor 2·2/(2·2+1) = 4/5, + nice.
    //   A 90·4/5 = 72 → 160 + 18 = 178 (44);  B 10·4/5 + 10 = 18 → 160 + 4 + 20 = 184 (46).
    // A: 1100: 82 → 180 (45)   1200: 92 → 183 (45)   1300: 102 → 185 (46), behind B.
    // B 1300–1400: 28 → 187 (46), behind A.   A 1400–1500: 112 → 188 (47).
    // B 1500–1600: 38 → 189 (47), behind A.   A 1600–1700: 122 → 190 (47).
    // B 1700–1800: 48 → 192 (48).             A 1800–1900: 132 → 193 (48), behind B.
    // B 1900–2000: 58 → 194 (48).
    // At 2000: A 132·4/5 = 105 → 186 (46), B 58·4/5 + 10 = 56 → 194 (48): A runs 2000–2100.
    // With a load of 1 (factor 2/3) A would reach 1000 at 175 and keep the CPU until 1400.
    let mut want: Vec<_> = (0..8).map(|i| (100 * i, 100 * i + 100, 0)).collect();
    want.extend([(800, 900, 1), (900, 1000, 0), (1000, 1100, 0), (1100, 1200, 0), (1200, 1300, 0)]);
    want.extend((13..20).map(|i| (100 * i, 100 * i + 100, usize::from(i % 2 == 1))));
    want.push((2000, 2100, 0));
    assert_eq!(slices(&r), want);
    assert_eq!(r.tasks.iter().map(|t| t.cpu / MS).collect::<Vec<_>>(), vec![1600, 500]);
}

/// schedcpu() recomputes the priority of a queued task and moves it to its new queue
/// (`resetpriority_thread()`), so the decay can reorder tasks that are waiting.
#[test]
fn freebsd_4bsd_decay_requeues_waiting_tasks() {
    let tasks = vec![cpu("A", 0, 5000), TaskSpec { nice: 19, ..cpu("B", 1995, 5000) }, {
        let mut t = cpu("R", 1990, 100);
        t.class = Some("realtime".into());
        t
    }];
    let r = run(tasks, "freebsd_4bsd", Some(2190));
    // A runs alone. At 1000 (load 1, factor 2/3) its 100 estcpu become 66; by 1990 it has
    // 66 + 99 = 165 → 160 + 41 = 201 (queue 50) when R (real time) pre-empts it. B arrives at
    // 1995 with estcpu 0: 160 + 0 + 2·19 = 198 (queue 49), ahead of A.
    // At 2000, load 3 (A, B queued, R running): factor 2·3/(2·3+1) = 6/7.
    //   A 165·6/7 = 141 → 160 + 35 = 195 (queue 48);  B 0 + 19 → 160 + 4 + 38 = 202 (queue 50).
    // Both move to their new queues: when R finishes at 2090, A runs, not B.
    let s = slices(&r);
    assert_eq!(s[s.len() - 3..], [(1900, 1990, 0), (1990, 2090, 2), (2090, 2190, 0)]);
    assert_eq!(r.tasks[1].cpu, 0);
}
