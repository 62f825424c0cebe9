//! Hand-worked global EDF schedules on 2 CPUs, and Dhall's effect.

use crate::engine::{simulate, SimConfig, SimResult};
use crate::policies::by_spec;
use crate::policy::MS;
use crate::workload::{TaskSpec, Workload};

/// A one-job task: arrives at `a` ms, needs `c` ms, relative deadline `d` ms.
fn job(name: &str, a: u64, c: u64, d: u64) -> TaskSpec {
    {
        let mut t = TaskSpec::cpu(name, a * MS, c * MS);
        t.deadline = Some(d * MS);
        t
    }
}

/// A periodic task: `c` ms every `t` ms (deadline = period), `jobs` jobs from time 0.
fn periodic(name: &str, c: u64, t: u64, jobs: u32) -> TaskSpec {
    {
        let mut spec = TaskSpec { jobs, ..TaskSpec::cpu(name, 0, c * MS) };
        spec.period = Some(t * MS);
        spec
    }
}

fn run(tasks: Vec<TaskSpec>, spec: &str, cpus: usize) -> SimResult {
    let w = Workload { cpus: Some(cpus), tasks };
    simulate(&w, by_spec(spec).unwrap().as_mut(), &SimConfig { cpus, check_invariants: true, ..SimConfig::default() })
}

/// (task, cpu, start ms, end ms) of every slice, in time order.
fn slices(r: &SimResult) -> Vec<(usize, usize, u64, u64)> {
    let mut v: Vec<_> = r.slices.iter().map(|s| (s.task, s.cpu, s.start / MS, s.end / MS)).collect();
    v.sort_by_key(|&(t, c, s, _)| (s, c, t));
    v
}

fn finishes(r: &SimResult) -> Vec<u64> {
    r.tasks.iter().map(|t| t.finish.unwrap() / MS).collect()
}

#[test]
fn a_release_preempts_the_latest_deadline_job_not_the_first_cpu() {
    // T0: C=4, D=10 (abs 10); T1: C=3, D=8 (abs 8), both at 0; T2: C=3 at 2, D=5 (abs 7).
    // t=0: CPU0 takes the earliest deadline, T1 (8); CPU1 takes T0 (10).
    // t=2: T2 (7) beats both; the engine asks CPU0 (T1, 8) first, but the victim must be the
    //      latest deadline, T0 (10) on CPU1: T0 stops with 4 − 2 = 2 left; T2 runs 2..5 on CPU1.
    // t=3: T1 ends on CPU0 (0 + 3); T0 resumes there, 3..5 — a migration from CPU1 to CPU0.
    // t=5: T0 and T2 end. No deadline missed (5 ≤ 10, 3 ≤ 8, 5 ≤ 7).
    let r = run(vec![job("T0", 0, 4, 10), job("T1", 0, 3, 8), job("T2", 2, 3, 5)], "gedf", 2);
    assert_eq!(slices(&r), vec![(1, 0, 0, 3), (0, 1, 0, 2), (2, 1, 2, 5), (0, 0, 3, 5)]);
    assert_eq!(finishes(&r), vec![5, 3, 5]);
    assert_eq!(r.tasks.iter().map(|t| t.migrations).collect::<Vec<_>>(), vec![1, 0, 0]);
    assert_eq!(r.overall.migrations, 1);
    assert_eq!(r.tasks[0].preemptions, 1);
    assert_eq!(r.tasks[1].preemptions, 0, "T1 (deadline 8) must not be the one displaced");
    assert_eq!(r.overall.deadline_misses, 0);
}

#[test]
fn two_releases_at_one_instant_both_displace_running_jobs() {
    // A: C=10, D=20; B: C=10, D=30, at 0: A on CPU0, B on CPU1.
    // t=2: C (C=3, abs 2 + 5 = 7) and D (C=3, abs 2 + 8 = 10) are released together. C displaces
    //      the latest deadline, B (30); CPU1 is then idle for the rest of the instant, so the
    //      engine does not ask about D — the policy's same-instant timer displaces A (20) for D.
    //      C runs 2..5 on CPU1 and D 2..5 on CPU0 (without the timer D would wait for 5..8).
    // t=5: A (8 left) resumes on CPU0 and B (8 left) on CPU1, 5..13: no migration.
    let r = run(vec![job("A", 0, 10, 20), job("B", 0, 10, 30), job("C", 2, 3, 5), job("D", 2, 3, 8)], "gedf", 2);
    assert_eq!(slices(&r), vec![(0, 0, 0, 2), (1, 1, 0, 2), (3, 0, 2, 5), (2, 1, 2, 5), (0, 0, 5, 13), (1, 1, 5, 13)]);
    assert_eq!(finishes(&r), vec![13, 13, 5, 5]);
    assert_eq!(r.tasks[3].response, Some(0));
    assert_eq!((r.tasks[0].preemptions, r.tasks[1].preemptions), (1, 1));
    assert_eq!(r.overall.migrations, 0);
}

/// Dhall's effect (S. K. Dhall and C. L. Liu, Operations Research 26(1), 1978): on m = 2 CPUs,
/// m light tasks (C = 2, T = 100) and one heavy task (C = 100, T = 101); total utilisation
/// 2 × 0.02 + 100/101 ≈ 1.03 of the 2 CPUs' 2.0.
fn dhall() -> Vec<TaskSpec> {
    vec![periodic("L0", 2, 100, 2), periodic("L1", 2, 100, 2), periodic("H", 100, 101, 1)]
}

#[test]
fn dhall_effect_global_edf_misses_at_low_utilisation() {
    // t=0: deadlines L0 100, L1 100, H 101: the two light jobs take both CPUs, 0..2.
    // t=2: H starts on CPU0 and needs 100: it ends at 102 > 101, a miss, while CPU1 idles.
    // t=100: the lights' second jobs (deadline 200) do not displace H (101); L0 runs 100..102 on
    //        CPU1 and L1 102..104 (on either CPU).
    let r = run(dhall(), "gedf", 2);
    assert_eq!(r.tasks[2].finish, Some(102 * MS));
    assert_eq!(r.tasks[2].deadline_misses, 1);
    assert_eq!((r.tasks[0].deadline_misses, r.tasks[1].deadline_misses), (0, 0));
    assert_eq!(r.overall.deadline_misses, 1);
}

#[test]
fn dhall_set_is_met_by_partitioned_edf_and_by_llf() {
    // pedf: densities H 100/101 ≈ 0.990, L0 = L1 = 0.02. FFD: H → CPU0; L0 does not fit there
    // (0.990 + 0.02 > 1) → CPU1; L1 → CPU1 (0.04). H runs 0..100 alone: 100 ≤ 101.
    let p = run(dhall(), "pedf", 2);
    assert_eq!(p.overall.deadline_misses, 0);
    assert_eq!(p.tasks[2].finish, Some(100 * MS));
    // llf: laxities at 0 are L: 100 − 2 = 98, H: 101 − 100 = 1, so H runs at once, 0..100.
    let l = run(dhall(), "llf", 2);
    assert_eq!(l.overall.deadline_misses, 0);
    assert_eq!(l.tasks[2].finish, Some(100 * MS));
}
