//! Hand-worked partitions (first-fit decreasing) and partitioned EDF schedules on 2 CPUs.

use super::{Pedf, Placement};
use crate::engine::{simulate, SimConfig, SimResult};
use crate::policy::MS;
use crate::workload::{TaskSpec, Workload};

/// A task released at `a` ms needing `c` ms with deadline `d` ms; `jobs` > 1: periodic, T = d.
fn task(name: &str, a: u64, c: u64, d: u64, jobs: u32) -> TaskSpec {
    let periodic = jobs > 1;
    {
        let mut t = TaskSpec { jobs, ..TaskSpec::cpu(name, a * MS, c * MS) };
        t.deadline = Some(d * MS);
        t.period = periodic.then_some(d * MS);
        t
    }
}

fn run(tasks: Vec<TaskSpec>) -> (Pedf, SimResult) {
    let w = Workload { cpus: Some(2), tasks };
    let mut p = Pedf::new();
    let r = simulate(&w, &mut p, &SimConfig { cpus: 2, check_invariants: true, ..SimConfig::default() });
    (p, r)
}

fn cpu_of(p: &Pedf, n: usize) -> Vec<usize> {
    (0..n).map(|t| p.placement(t).unwrap().cpu).collect()
}

/// Every slice of task `t` ran on `cpu`.
fn stays_on(r: &SimResult, t: usize, cpu: usize) -> bool {
    r.slices.iter().filter(|s| s.task == t).all(|s| s.cpu == cpu)
}

#[test]
fn first_fit_decreasing_partition_and_its_schedule() {
    // C/T: T0 2/10 = .2, T1 6/10 = .6, T2 5/10 = .5, T3 3/10 = .3, T4 4/10 = .4; 3 jobs each.
    // Decreasing: T1 .6, T2 .5, T4 .4, T3 .3, T0 .2.
    //   T1 → CPU0 (.6); T2: .6 + .5 > 1 → CPU1 (.5); T4: .6 + .4 = 1 → CPU0 (1.0);
    //   T3: CPU0 full → CPU1 (.8); T0: CPU0 full → CPU1 (1.0).
    let (p, r) = run(vec![
        task("T0", 0, 2, 10, 3),
        task("T1", 0, 6, 10, 3),
        task("T2", 0, 5, 10, 3),
        task("T3", 0, 3, 10, 3),
        task("T4", 0, 4, 10, 3),
    ]);
    assert_eq!(cpu_of(&p, 5), vec![1, 0, 1, 1, 0]);
    assert!((0..5).all(|t| p.placement(t).unwrap().fits));
    // Each period, equal deadlines go by task id: CPU0 T1 0..6, T4 6..10; CPU1 T0 0..2, T2 2..7,
    // T3 7..10. Third jobs (released at 20): T1 ends 26, T4 30, T0 22, T2 27, T3 30 — every job
    // by its deadline (10, 20, 30), none later.
    let fin: Vec<u64> = r.tasks.iter().map(|t| t.finish.unwrap() / MS).collect();
    assert_eq!(fin, vec![22, 26, 27, 30, 30]);
    assert_eq!(r.overall.deadline_misses, 0);
    assert_eq!(r.overall.migrations, 0);
    assert!((0..5).all(|t| stays_on(&r, t, [1, 0, 1, 1, 0][t])));
}

#[test]
fn a_task_that_fits_nowhere_goes_to_the_least_loaded_cpu_flagged() {
    // Three tasks of density 6/10 = .6 on 2 CPUs: T0 → CPU0, T1 → CPU1; T2 fits on neither
    // (.6 + .6 > 1) → least loaded, a tie at .6 → CPU0, flagged. CPU0: equal deadlines (10) by id,
    // T0 0..6, T2 6..12 > 10: a miss (global EDF would fit it nowhere better: 1.8 of 2 CPUs, but
    // every job needs 6 of the same 10 ms).
    let (p, r) = run(vec![task("T0", 0, 6, 10, 1), task("T1", 0, 6, 10, 1), task("T2", 0, 6, 10, 1)]);
    assert_eq!(p.placement(2), Some(Placement { cpu: 0, density: Some(0.6), fits: false }));
    assert_eq!(cpu_of(&p, 3), vec![0, 1, 0]);
    assert_eq!(r.tasks[2].finish, Some(12 * MS));
    assert_eq!(r.tasks[2].deadline_misses, 1);
    assert_eq!(r.overall.deadline_misses, 1);
}

#[test]
fn a_later_arrival_is_placed_on_the_loads_so_far_and_preempts_there() {
    // At 0: A (C=4, D=10, .4) and B (C=8, D=40, .2): both fit on CPU0 (.6). CPU1 stays idle: a
    // partitioned CPU does not take another's work.
    // t=2: E (C=1, D=5, abs 7, .2) → CPU0 (.8). A (deadline 10) runs there and E's 7 is earlier:
    //      the policy's same-instant timer displaces A. E 2..3, A (2 left) 3..5, B 5..13.
    let (p, r) = run(vec![task("A", 0, 4, 10, 1), task("B", 0, 8, 40, 1), task("E", 2, 1, 5, 1)]);
    assert_eq!(cpu_of(&p, 3), vec![0, 0, 0]);
    let fin: Vec<u64> = r.tasks.iter().map(|t| t.finish.unwrap() / MS).collect();
    assert_eq!(fin, vec![5, 13, 3]);
    assert_eq!(r.tasks[0].preemptions, 1);
    assert!(r.slices.iter().all(|s| s.cpu == 0));
    assert_eq!(r.overall.migrations, 0);
}
