//! Hand-worked LLF schedules on one CPU where LLF and EDF differ, and equal laxities taking
//! turns of the quantum.

use crate::engine::{simulate, SimConfig, SimResult};
use crate::policies::by_spec;
use crate::policy::MS;
use crate::workload::{TaskSpec, Workload};

/// A one-job task at time 0: needs `c` ms, relative deadline `d` ms.
fn job(name: &str, c: u64, d: u64) -> TaskSpec {
    {
        let mut t = TaskSpec::cpu(name, 0, c * MS);
        t.deadline = Some(d * MS);
        t
    }
}

fn run(tasks: Vec<TaskSpec>, spec: &str) -> SimResult {
    let w = Workload { cpus: Some(1), tasks };
    simulate(&w, by_spec(spec).unwrap().as_mut(), &SimConfig { check_invariants: true, ..SimConfig::default() })
}

/// (task, start ms, end ms) of every slice, in time order.
fn slices(r: &SimResult) -> Vec<(usize, u64, u64)> {
    r.slices.iter().map(|s| (s.task, s.start / MS, s.end / MS)).collect()
}

/// A: C=2, D=10; B: C=7, D=11; both at 0.
fn differ() -> Vec<TaskSpec> {
    vec![job("A", 2, 10), job("B", 7, 11)]
}

#[test]
fn edf_and_nonstrict_llf_differ() {
    // EDF: A's deadline (10) is earlier: A 0..2, B 2..9.
    let edf = run(differ(), "edf");
    assert_eq!(slices(&edf), vec![(0, 0, 2), (1, 2, 9)]);
    // LLF, deciding only at events (quantum=0): laxities at 0 are A 10 − 0 − 2 = 8 and
    // B 11 − 0 − 7 = 4, so B runs first, 0..7; A then has laxity 10 − 7 − 2 = 1 and runs 7..9.
    let llf = run(differ(), "llf:quantum=0ms");
    assert_eq!(slices(&llf), vec![(1, 0, 7), (0, 7, 9)]);
    assert_eq!(llf.overall.deadline_misses, 0);
}

#[test]
fn strict_llf_preempts_at_a_laxity_crossing() {
    // quantum 2 ms: a crossing pre-empts when the waiting laxity is 1 ms below the running one.
    // t=0: B runs with laxity 4 (constant while it runs); A's laxity is 8 − t.
    // t=5: A's laxity 3 = 4 − 1: A pre-empts B (B has 7 − 5 = 2 left, laxity 11 − 5 − 2 = 4).
    //      A runs with laxity 10 − 5 − 2 = 3; B's would cross at 4 − (t − 5) = 3 − 1, t = 7,
    //      but A ends at 7 first. B runs 7..9.
    let r = run(differ(), "llf:quantum=2ms");
    assert_eq!(slices(&r), vec![(1, 0, 5), (0, 5, 7), (1, 7, 9)]);
    assert_eq!((r.tasks[0].preemptions, r.tasks[1].preemptions), (0, 1));
    assert_eq!(r.overall.deadline_misses, 0);
}

#[test]
fn equal_laxities_take_turns_of_the_quantum_instead_of_thrashing() {
    // A and B: C=4, D=10, at 0; both laxity 6; the tie goes to the lower id, A.
    // quantum 2 ms (margin 1 ms). A runs at laxity 6; B's 6 − t reaches 5 at t=1: B runs (laxity
    // 5), A (3 left) has 10 − 1 − 3 = 6, reaching 4 at t=3: A runs (laxity 4), B (2 left) has
    // 10 − 3 − 2 = 5, reaching 3 at t=5: B runs (laxity 3) to its end at 7; A (1 left) 7..8.
    let r = run(vec![job("A", 4, 10), job("B", 4, 10)], "llf:quantum=2ms");
    assert_eq!(slices(&r), vec![(0, 0, 1), (1, 1, 3), (0, 3, 5), (1, 5, 7), (0, 7, 8)]);
    assert_eq!((r.tasks[0].preemptions, r.tasks[1].preemptions), (2, 1));
    // Deciding only at events, a tie never pre-empts: A 0..4, B 4..8.
    let r = run(vec![job("A", 4, 10), job("B", 4, 10)], "llf:quantum=0ms");
    assert_eq!(slices(&r), vec![(0, 0, 4), (1, 4, 8)]);
}

#[test]
fn the_spec_names_its_quantum() {
    assert_eq!(by_spec("llf").unwrap().name(), "llf:quantum=1ms");
    assert_eq!(by_spec("llf:quantum=0ms").unwrap().name(), "llf:quantum=0ms");
    assert_eq!(by_spec("llf:quantum=x").err().unwrap().field, "quantum");
}
