//! Textbook examples (Silberschatz, *Operating System Concepts*, ch. 5) come out exactly.

use schedlab_sim::engine::{simulate, SimConfig, SimResult};
use schedlab_sim::policies::by_spec;
use schedlab_sim::workload::{TaskSpec, Workload};

const MS: u64 = 1_000_000;

fn wl(tasks: &[(&str, u64, u64, i32)]) -> Workload {
    Workload {
        cpus: Some(1),
        tasks: tasks.iter().map(|&(n, a, b, p)| TaskSpec { priority: p, ..TaskSpec::cpu(n, a * MS, b * MS) }).collect(),
    }
}

fn run(w: &Workload, spec: &str) -> SimResult {
    let mut p = by_spec(spec).unwrap();
    simulate(w, p.as_mut(), &SimConfig::default())
}

fn waits(r: &SimResult) -> Vec<f64> {
    r.tasks.iter().map(|t| t.waiting as f64 / MS as f64).collect()
}

fn avg_wait_ms(r: &SimResult) -> f64 {
    r.overall.avg_waiting / MS as f64
}

/// P1 = 24, P2 = 3, P3 = 3, all at time 0.
fn classic() -> Workload {
    wl(&[("P1", 0, 24, 0), ("P2", 0, 3, 0), ("P3", 0, 3, 0)])
}

#[test]
fn fcfs_classic_average_waiting_is_17() {
    let r = run(&classic(), "fcfs");
    assert_eq!(waits(&r), vec![0.0, 24.0, 27.0]);
    assert_eq!(avg_wait_ms(&r), 17.0);
    assert_eq!(r.tasks[0].finish, Some(24 * MS));
}

#[test]
fn rr_quantum_4_classic_average_waiting_is_5_66() {
    let r = run(&classic(), "rr:quantum=4ms");
    assert_eq!(waits(&r), vec![6.0, 4.0, 7.0]);
    assert!((avg_wait_ms(&r) - 17.0 / 3.0).abs() < 1e-9);
    assert_eq!(r.tasks.iter().map(|t| t.finish.unwrap() / MS).collect::<Vec<_>>(), vec![30, 7, 10]);
}

#[test]
fn sjf_average_waiting_is_7() {
    // P1 = 6, P2 = 8, P3 = 7, P4 = 3 at time 0: order P4, P1, P3, P2.
    let w = wl(&[("P1", 0, 6, 0), ("P2", 0, 8, 0), ("P3", 0, 7, 0), ("P4", 0, 3, 0)]);
    let r = run(&w, "sjf");
    assert_eq!(waits(&r), vec![3.0, 16.0, 9.0, 0.0]);
    assert_eq!(avg_wait_ms(&r), 7.0);
}

#[test]
fn srtf_average_waiting_is_6_5() {
    // P1 (0, 8), P2 (1, 4), P3 (2, 9), P4 (3, 5).
    let w = wl(&[("P1", 0, 8, 0), ("P2", 1, 4, 0), ("P3", 2, 9, 0), ("P4", 3, 5, 0)]);
    let r = run(&w, "srtf");
    assert_eq!(waits(&r), vec![9.0, 0.0, 15.0, 2.0]);
    assert_eq!(avg_wait_ms(&r), 6.5);
    assert_eq!(r.tasks[0].preemptions, 1);
    // Non-pre-emptive SJF on the same arrivals: P1 runs to 8, then P2, P4, P3 → 7.75.
    assert_eq!(avg_wait_ms(&run(&w, "sjf")), 7.75);
}

#[test]
fn priority_average_waiting_is_8_2() {
    // (burst, priority): P1 (10, 3), P2 (1, 1), P3 (2, 4), P4 (1, 5), P5 (5, 2); lower = higher.
    let w = wl(&[("P1", 0, 10, 3), ("P2", 0, 1, 1), ("P3", 0, 2, 4), ("P4", 0, 1, 5), ("P5", 0, 5, 2)]);
    let r = run(&w, "prio");
    assert_eq!(waits(&r), vec![6.0, 0.0, 16.0, 18.0, 1.0]);
    assert!((avg_wait_ms(&r) - 8.2).abs() < 1e-9);
}

#[test]
fn preemptive_priority_preempts_and_non_preemptive_does_not() {
    let w = wl(&[("low", 0, 10, 3), ("high", 2, 4, 1)]);
    let r = run(&w, "prio-preempt");
    assert_eq!(waits(&r), vec![4.0, 0.0]);
    assert_eq!(r.tasks[0].preemptions, 1);
    let r = run(&w, "prio");
    assert_eq!(waits(&r), vec![0.0, 8.0]);
}

fn periodic(name: &str, c: u64, period: u64, jobs: u32) -> TaskSpec {
    {
        let mut t = TaskSpec { jobs, ..TaskSpec::cpu(name, 0, c * MS) };
        t.period = Some(period * MS);
        t
    }
}

#[test]
fn rate_monotonic_misses_where_edf_does_not() {
    // Silberschatz: P1 (period 50, burst 25), P2 (period 80, burst 35); U = 0.94 > RM bound 0.83.
    let w = Workload { cpus: Some(1), tasks: vec![periodic("P1", 25, 50, 8), periodic("P2", 35, 80, 5)] };
    let rm = run(&w, "rm");
    assert_eq!(rm.tasks[0].deadline_misses, 0);
    assert!(rm.tasks[1].deadline_misses >= 1, "RM: P2's first job finishes at 85 > 80");
    assert_eq!(
        rm.slices.iter().find(|s| s.task == 1 && s.job == 0 && s.end == 85 * MS).map(|s| s.start),
        Some(75 * MS)
    );
    let edf = run(&w, "edf");
    assert_eq!(edf.overall.deadline_misses, 0);
    assert_eq!(edf.tasks.iter().map(|t| t.jobs_done).collect::<Vec<_>>(), vec![8, 5]);
}

#[test]
fn priority_inheritance_bounds_the_inversion() {
    use schedlab_sim::workload::LockUse;
    let lock = |b| vec![LockUse { name: "L".into(), burst: b }];
    let w = Workload {
        cpus: Some(1),
        tasks: vec![
            {
                let mut t = TaskSpec { priority: 3, ..TaskSpec::cpu("low", 0, 4 * MS) };
                t.locks = lock(0);
                t
            },
            {
                let mut t = TaskSpec { priority: 1, ..TaskSpec::cpu("high", MS, 3 * MS) };
                t.locks = lock(0);
                t
            },
            TaskSpec { priority: 2, ..TaskSpec::cpu("medium", 2 * MS, 10 * MS) },
        ],
    };
    let mut p = by_spec("prio-preempt").unwrap();
    let with = simulate(&w, p.as_mut(), &SimConfig::default());
    assert_eq!(with.tasks[1].finish, Some(7 * MS), "low inherits high's priority; medium cannot cut in");
    let mut p = by_spec("prio-preempt").unwrap();
    let without = simulate(&w, p.as_mut(), &SimConfig { priority_inheritance: false, ..SimConfig::default() });
    assert_eq!(without.tasks[1].finish, Some(17 * MS), "unbounded inversion: high waits for medium");
}

#[test]
fn an_inherited_priority_preempts_on_the_holders_cpu() {
    use schedlab_sim::engine::simulate_per_cpu;
    use schedlab_sim::workload::LockUse;
    let lock = vec![LockUse { name: "L".into(), burst: 0 }];
    let on = |cpu: usize, t: TaskSpec| {
        let mut t = t;
        t.affinity = Some(vec![cpu]);
        t
    };
    let w = Workload {
        cpus: Some(2),
        tasks: vec![
            // low takes the lock on CPU 0; medium pre-empts it there; high, on CPU 1, blocks on
            // the lock and lends low its priority, which must displace medium on CPU 0 at once.
            on(0, {
                let mut t = TaskSpec { priority: 3, ..TaskSpec::cpu("low", 0, 10 * MS) };
                t.locks = lock.clone();
                t
            }),
            on(0, TaskSpec { priority: 2, ..TaskSpec::cpu("medium", MS, 20 * MS) }),
            on(1, {
                let mut t = TaskSpec { priority: 1, ..TaskSpec::cpu("high", 2 * MS, 3 * MS) };
                t.locks = lock;
                t
            }),
        ],
    };
    let cfg = SimConfig { cpus: 2, ..SimConfig::default() };
    let mut per: Vec<_> = (0..2).map(|_| by_spec("prio-preempt").unwrap()).collect();
    let r = simulate_per_cpu(&w, &mut per, &cfg);
    assert_eq!(r.tasks[0].finish, Some(11 * MS), "low resumes at 2 ms, when high blocks");
    assert_eq!(r.tasks[2].finish, Some(14 * MS), "high gets the lock at 11 ms");
    assert_eq!(r.tasks[1].finish, Some(30 * MS), "medium waits 2..11 ms");
}

#[test]
fn context_switch_cost_is_paid_between_different_tasks() {
    let mut p = by_spec("fcfs").unwrap();
    let r = simulate(&classic(), p.as_mut(), &SimConfig { switch_cost: MS, ..SimConfig::default() });
    // Two switches of 1 ms: P2 starts at 25, P3 at 29.
    assert_eq!(r.tasks.iter().map(|t| t.finish.unwrap() / MS).collect::<Vec<_>>(), vec![24, 28, 32]);
    assert_eq!(r.overall.context_switches, 2);
}

#[test]
fn wrr_slices_follow_weights() {
    let w = Workload {
        cpus: Some(1),
        tasks: vec![
            TaskSpec { weight: 1, ..TaskSpec::cpu("w1", 0, 1000 * MS) },
            TaskSpec { weight: 4, ..TaskSpec::cpu("w4", 0, 1000 * MS) },
        ],
    };
    let mut p = by_spec("wrr:quantum=10ms").unwrap();
    let r = simulate(&w, p.as_mut(), &SimConfig { horizon: Some(500 * MS), ..SimConfig::default() });
    assert_eq!(r.tasks[0].cpu, 100 * MS);
    assert_eq!(r.tasks[1].cpu, 400 * MS);
}
