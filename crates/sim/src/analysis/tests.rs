//! The analysis against published task sets and against the simulator: at the critical instant
//! (every task released at 0, one CPU, no tick, no switch cost) each task's RTA bound equals the
//! worst response the `rm` (or `prio-preempt`) run shows over the hyperperiod, and the demand
//! test says "schedulable" exactly when the `edf` run misses nothing.

use super::rta::RtaOutcome;
use super::*;
use crate::engine::{simulate, SimConfig};
use crate::jobs::job_metrics;
use crate::policies::by_spec;
use crate::workload::TaskSpec;
use proptest::prelude::*;

const MS: u64 = 1_000_000;

/// Tasks `(C, T, D)` in ms, all released at 0, priority = index (so no two `rm` keys are equal),
/// each with the jobs of one hyperperiod.
fn workload(tasks: &[(u64, u64, u64)]) -> Workload {
    let h = tasks.iter().fold(1, |h, &(_, t, _)| h / bounds::gcd(h as u128, t as u128) as u64 * t);
    let tasks = tasks
        .iter()
        .enumerate()
        .map(|(i, &(c, t, d))| {
            let mut spec = TaskSpec {
                jobs: (h / t) as u32,
                priority: i as i32,
                ..TaskSpec::cpu(&format!("t{}", i + 1), 0, c * MS)
            };
            spec.period = Some(t * MS);
            spec.deadline = (d != t).then_some(d * MS);
            spec
        })
        .collect();
    Workload { cpus: Some(1), tasks }
}

fn implicit(tasks: &[(u64, u64)]) -> Workload {
    workload(&tasks.iter().map(|&(c, t)| (c, t, t)).collect::<Vec<_>>())
}

/// Per task: the worst simulated response (ns) and the deadline misses, under `policy`.
fn simulated(w: &Workload, policy: &str) -> Vec<(Option<Dur>, u64)> {
    let mut p = by_spec(policy).unwrap();
    let cfg = SimConfig { cpus: 1, ..SimConfig::default() };
    assert_eq!((cfg.tick, cfg.switch_cost), (None, 0), "exact comparison needs no tick and free switches");
    let r = simulate(w, p.as_mut(), &cfg);
    let m = job_metrics(w, &r).unwrap();
    for (s, e) in m.tasks.iter().zip(&r.tasks) {
        assert_eq!(s.deadline_misses, e.deadline_misses, "jobs.rs and the engine count misses alike");
    }
    m.tasks.iter().map(|s| (s.worst_response, s.deadline_misses)).collect()
}

fn wcrts(bounds: &[rta::RtaBound]) -> Vec<Option<Dur>> {
    bounds.iter().map(|b| b.wcrt).collect()
}

fn outcome(r: &Report, test: &str, policy: &str) -> Outcome {
    r.verdicts.iter().find(|v| v.test == test && v.policy == policy).unwrap().outcome
}

fn ms_list(v: &[u64]) -> Vec<Option<Dur>> {
    v.iter().map(|&x| Some(x * MS)).collect()
}

#[test]
fn silberschatz_rate_monotonic_example() {
    // Silberschatz, Galvin & Gagne, Operating System Concepts (10th ed.), §5.6.3: P1 with
    // period 50 and burst 20, P2 with period 100 and burst 35; under rate monotonic P2
    // completes at 75. U = 20/50 + 35/100 = 0.75 ≤ 2(√2 − 1) = 0.8284 (Liu–Layland);
    // Π(U_i + 1) = 1.4 · 1.35 = 1.89 ≤ 2 (hyperbolic).
    // RTA: R1 = 20. R2: 35 + 20 = 55 → 35 + ⌈55/50⌉·20 = 75 → 35 + ⌈75/50⌉·20 = 75. 75 ≤ 100
    // ends the busy period at job 0.
    let w = implicit(&[(20, 50), (35, 100)]);
    let r = analyze(&w).unwrap();
    assert_eq!(wcrts(&r.tasks.iter().map(|t| t.rm.clone()).collect::<Vec<_>>()), ms_list(&[20, 75]));
    assert_eq!(outcome(&r, "Liu–Layland bound", "rm"), Outcome::Schedulable);
    assert_eq!(outcome(&r, "hyperbolic bound", "rm"), Outcome::Schedulable);
    assert_eq!(outcome(&r, "response-time analysis", "rm"), Outcome::Schedulable);
    assert_eq!(outcome(&r, "processor demand", "edf"), Outcome::Schedulable);
    assert_eq!(r.hyperperiod, Some(100 * MS));
    assert!((r.utilisation - 0.75).abs() < 1e-12);
    // Simulated over the hyperperiod 100: P1 0–20, P2 20–50, P1 50–70, P2 70–75.
    assert_eq!(simulated(&w, "rm"), vec![(Some(20 * MS), 0), (Some(75 * MS), 0)]);
    assert!(simulated(&w, "edf").iter().all(|&(_, m)| m == 0));
}

#[test]
fn hand_worked_three_tasks_finish_exactly_at_the_deadline() {
    // Hand-worked here (not quoted from a book): C/T = (1, 4), (2, 6), (3, 10).
    // U = 0.25 + 0.3333 + 0.3 = 0.8833 > 3(2^(1/3) − 1) = 0.7798: Liu–Layland cannot tell;
    // Π(U_i + 1) = 1.25 · 1.3333 · 1.3 = 2.1667 > 2: nor can the hyperbolic bound.
    // RTA: R1 = 1. R2: 2 + 1 = 3 → 2 + ⌈3/4⌉·1 = 3. R3: 3 + 1 + 2 = 6 → 3 + ⌈6/4⌉·1 + ⌈6/6⌉·2
    // = 7 → 3 + 2 + 4 = 9 → 3 + 3 + 4 = 10 → 3 + ⌈10/4⌉·1 + ⌈10/6⌉·2 = 10 = D3: schedulable,
    // with no slack. Simulated: t1 0–1, t2 1–3, t3 3–4, t1 4–5, t3 5–6, t2 6–8, t1 8–9, t3 9–10.
    let w = implicit(&[(1, 4), (2, 6), (3, 10)]);
    let r = analyze(&w).unwrap();
    let rm: Vec<_> = r.tasks.iter().map(|t| t.rm.clone()).collect();
    assert_eq!(wcrts(&rm), ms_list(&[1, 3, 10]));
    assert!(rm.iter().all(|b| b.outcome == RtaOutcome::MeetsDeadline));
    assert_eq!(outcome(&r, "Liu–Layland bound", "rm"), Outcome::Inconclusive);
    assert_eq!(outcome(&r, "hyperbolic bound", "rm"), Outcome::Inconclusive);
    assert_eq!(outcome(&r, "response-time analysis", "rm"), Outcome::Schedulable);
    assert_eq!(r.verdicts.iter().find(|v| v.test == "response-time analysis").unwrap().kind, Kind::Exact);
    // Finishing at 10 with D = 10 is not a miss, in the simulator either.
    assert_eq!(simulated(&w, "rm"), vec![(Some(MS), 0), (Some(3 * MS), 0), (Some(10 * MS), 0)]);
    assert_eq!(outcome(&r, "processor demand", "edf"), Outcome::Schedulable);
    assert!(simulated(&w, "edf").iter().all(|&(_, m)| m == 0));
}

#[test]
fn rate_monotonic_fails_where_edf_succeeds() {
    // C/T = (2, 5), (4, 7) (the set Buttazzo uses in Hard Real-Time Computing Systems, ch. 4,
    // to contrast RM and EDF; the numbers are from the brief, not checked against the book).
    // U = 0.4 + 0.5714 = 0.9714 ≤ 1. RTA for t2 over its busy period:
    //   job 0: 4 + 2 = 6 → 4 + ⌈6/5⌉·2 = 8 → 4 + ⌈8/5⌉·2 = 8: R = 8 > D = 7; 8 > 7 = T, go on;
    //   job 1: 8 + 4 = 12 → 8 + ⌈12/5⌉·2 = 14 → 8 + ⌈14/5⌉·2 = 14: R = 14 − 7 = 7; 14 ≤ 14 ends
    //   the busy period. Worst 8: unschedulable under RM.
    // Simulated rm: t1 0–2, t2 2–5, t1 5–7, t2 7–8: job 0 of t2 finishes at 8, late by 1.
    let w = implicit(&[(2, 5), (4, 7)]);
    let r = analyze(&w).unwrap();
    let t2 = &r.tasks[1].rm;
    assert_eq!((t2.outcome, t2.wcrt, t2.jobs_examined), (RtaOutcome::ExceedsDeadline, Some(8 * MS), 2));
    assert_eq!(t2.describe(7 * MS), "unschedulable: exceeds D (R = 8 ms > D = 7 ms)");
    assert_eq!(outcome(&r, "response-time analysis", "rm"), Outcome::Unschedulable);
    let sim = simulated(&w, "rm");
    assert_eq!(sim[0], (Some(2 * MS), 0));
    assert_eq!(sim[1].0, Some(8 * MS));
    assert!(sim[1].1 > 0, "the rm run misses");
    // EDF: implicit deadlines and U ≤ 1; the demand test agrees and the edf run misses nothing.
    assert_eq!(outcome(&r, "processor demand", "edf"), Outcome::Schedulable);
    assert!(simulated(&w, "edf").iter().all(|&(_, m)| m == 0));

    // Silberschatz et al., Operating System Concepts (10th ed.), §5.6.3–5.6.4: P1 (50, 25),
    // P2 (80, 35): under RM P2 misses its deadline at 80; EDF meets both. RTA for P2:
    //   job 0: 35 + 25 = 60 → 35 + ⌈60/50⌉·25 = 85 → 85: R = 85 > 80;
    //   job 1: 85 + 35 = 120 → 70 + ⌈120/50⌉·25 = 145 → 145: R = 145 − 80 = 65; 145 ≤ 160 ends.
    let w = implicit(&[(25, 50), (35, 80)]);
    let r = analyze(&w).unwrap();
    assert_eq!(r.tasks[1].rm.wcrt, Some(85 * MS));
    assert_eq!(simulated(&w, "rm")[1].0, Some(85 * MS));
    assert_eq!(outcome(&r, "processor demand", "edf"), Outcome::Schedulable);
    assert!(simulated(&w, "edf").iter().all(|&(_, m)| m == 0));
}

#[test]
fn a_later_job_of_the_busy_period_can_be_the_worst() {
    // Hand-worked: C/T = (5, 10), (3, 6), U = 0.5 + 0.5 = 1; rm runs (3, 6) first. For (5, 10):
    //   job 0: 5 + 3 = 8 → 5 + ⌈8/6⌉·3 = 11 → 11: R = 11 > T = 10, go on;
    //   job 1: 11 + 5 = 16 → 10 + ⌈16/6⌉·3 = 19 → 10 + ⌈19/6⌉·3 = 22 → 22: R = 22 − 10 = 12;
    //   job 2: 22 + 5 = 27 → 15 + ⌈27/6⌉·3 = 30 → 30: R = 30 − 20 = 10; 30 ≤ 30 ends it.
    // Worst 12, from job 1, not job 0. Simulated: (3,6) 0–3, (5,10) 3–6, 6–9, 9–11 (job 0 at
    // 11), 11–12, 12–15, 15–18, 18–21, 21–22 (job 1 at 22), 22–24, 24–27, 27–30 (job 2 at 30).
    let w = implicit(&[(5, 10), (3, 6)]);
    let r = analyze(&w).unwrap();
    let b = &r.tasks[0].rm;
    assert_eq!((b.wcrt, b.jobs_examined, b.outcome), (Some(12 * MS), 3, RtaOutcome::ExceedsDeadline));
    assert_eq!(simulated(&w, "rm")[0], (Some(12 * MS), 2));
}

#[test]
fn explicit_priorities_follow_prio_preempt() {
    // Silberschatz's first set with the priorities reversed: P2 (priority 0) over P1 (1).
    // P1: job 0: 20 + 35 = 55 → 20 + ⌈55/100⌉·35 = 55: R = 55 > D = 50; job 1: 55 + 20 = 75 →
    // 40 + ⌈75/100⌉·35 = 75: R = 25; 75 ≤ 100 ends. Worst 55. P2: R = 35.
    let mut w = implicit(&[(20, 50), (35, 100)]);
    w.tasks[0].priority = 1;
    w.tasks[1].priority = 0;
    let r = analyze(&w).unwrap();
    assert_eq!(wcrts(&r.tasks.iter().map(|t| t.prio.clone()).collect::<Vec<_>>()), ms_list(&[55, 35]));
    assert_eq!(r.tasks[0].prio.outcome, RtaOutcome::ExceedsDeadline);
    assert_eq!(outcome(&r, "response-time analysis", "prio-preempt"), Outcome::Unschedulable);
    // rm ignores the priorities here (periods differ): still 20 and 75.
    assert_eq!(wcrts(&r.tasks.iter().map(|t| t.rm.clone()).collect::<Vec<_>>()), ms_list(&[20, 75]));
    let sim = simulated(&w, "prio-preempt");
    assert_eq!(sim[0].0, Some(55 * MS));
    assert_eq!(sim[1], (Some(35 * MS), 0));
}

#[test]
fn constrained_deadlines_fail_the_demand_test_and_the_edf_run() {
    // Two tasks C = 2, T = 5, D = 3, released together: dbf(3) = 2 + 2 = 4 > 3, though U = 0.8.
    // EDF runs one 0–2 and the other 2–4: late by 1. The bounds do not apply (D < T).
    let w = workload(&[(2, 5, 3), (2, 5, 3)]);
    let r = analyze(&w).unwrap();
    assert_eq!(r.edf.first_overload, Some(demand::Overload { t: 3 * MS, demand: 4 * MS }));
    assert_eq!(outcome(&r, "processor demand", "edf"), Outcome::Unschedulable);
    assert_eq!(outcome(&r, "Liu–Layland bound", "rm"), Outcome::NotApplicable);
    assert_eq!(outcome(&r, "utilisation U ≤ 1", "any"), Outcome::Inconclusive);
    assert_eq!(simulated(&w, "edf").iter().map(|s| s.1).sum::<u64>(), 1);
}

#[test]
fn overload_and_ties() {
    // U = 3/4 + 2/4 > 1: every test says so; the lower task's response is unbounded.
    let r = analyze(&implicit(&[(3, 4), (2, 4)])).unwrap();
    assert_eq!(outcome(&r, "utilisation U ≤ 1", "any"), Outcome::Unschedulable);
    assert_eq!(outcome(&r, "processor demand", "edf"), Outcome::Unschedulable);
    assert!(r.edf.overutilised);
    // Keys (4, 0) and (4, 1): distinct, t1 first. t1 alone: 3. t2: U = 1.25 > 1.
    assert_eq!(r.tasks[0].rm.wcrt, Some(3 * MS));
    assert_eq!((r.tasks[1].rm.outcome, r.tasks[1].rm.wcrt), (RtaOutcome::Unbounded, None));
    // Same period and priority: each counts the other (1 + 2 = 3 for both); flagged, and the
    // verdict is only sufficient. The run gives t1 1 and t2 3 (t1 is queued first).
    let mut w = implicit(&[(1, 4), (2, 4)]);
    w.tasks[1].priority = 0;
    let r = analyze(&w).unwrap();
    assert_eq!(wcrts(&r.tasks.iter().map(|t| t.rm.clone()).collect::<Vec<_>>()), ms_list(&[3, 3]));
    assert_eq!(&*r.tasks[0].rm.ties[0], "t2");
    let v = r.verdicts.iter().find(|v| v.policy == "rm" && v.test == "response-time analysis").unwrap();
    assert_eq!((v.kind, v.outcome), (Kind::Sufficient, Outcome::Schedulable));
    assert_eq!(simulated(&w, "rm"), vec![(Some(MS), 0), (Some(3 * MS), 0)]);
}

#[test]
fn workloads_outside_the_model_are_refused_by_task() {
    let mut w = implicit(&[(1, 4), (2, 6)]);
    w.tasks[1].bursts = vec![MS, MS, MS].into();
    let e = analyze(&w).unwrap_err();
    assert_eq!(e.task.as_deref(), Some("t2"));
    assert!(e.to_string().contains("blocked intervals"), "{e}");
    w.tasks[1].bursts = vec![MS].into();
    w.tasks[1].period = None;
    assert!(analyze(&w).unwrap_err().to_string().starts_with("task t2: has no period"));
    assert!(analyze(&Workload::default()).is_err());
}

#[test]
fn exact_fractions_decide_the_edges() {
    // U = 1/2 + 1/3 + 1/6 = 1 exactly: not over. Π = 3/2 · 4/3 = 2 exactly: within the bound.
    let t = |c, p| PeriodicTask { name: "x".into(), c, t: p, d: p, priority: 0, arrival: 0 };
    assert_eq!(bounds::utilisation_cmp_one(&[t(1, 2), t(1, 3), t(1, 6)]), std::cmp::Ordering::Equal);
    assert_eq!(bounds::hyperbolic_cmp_two(&[t(1, 2), t(1, 3)]), std::cmp::Ordering::Equal);
    assert!((bounds::liu_layland_bound(2) - 0.828_427).abs() < 1e-6);
    assert_eq!(bounds::liu_layland_bound(1), 1.0);
}

/// Small implicit-deadline sets: 1–4 tasks, periods from a set with a small hyperperiod (≤ 120),
/// C ≥ 1, U ≤ 1.
fn task_sets() -> impl Strategy<Value = Vec<(u64, u64)>> {
    let task = prop::sample::select(vec![2u64, 3, 4, 5, 6, 8, 10, 12]).prop_flat_map(|t| (1..=t, Just(t)));
    prop::collection::vec(task, 1..=4).prop_filter("U ≤ 1", |ts| {
        let p: Vec<PeriodicTask> =
            ts.iter().map(|&(c, t)| PeriodicTask { name: "x".into(), c, t, d: t, priority: 0, arrival: 0 }).collect();
        bounds::utilisation_cmp_one(&p) != std::cmp::Ordering::Greater
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn rta_is_the_simulated_worst_response(ts in task_sets()) {
        let w = implicit(&ts);
        let r = analyze(&w).unwrap();
        let rm = simulated(&w, "rm");
        for (a, (worst, misses)) in r.tasks.iter().zip(&rm) {
            // Distinct keys and U ≤ 1: the bound is finite and exactly what the run shows.
            prop_assert_eq!(a.rm.wcrt, *worst, "{}", a.name);
            prop_assert_eq!(a.rm.schedulable(), *misses == 0, "{}", a.name);
        }
        let rm_ok = outcome(&r, "response-time analysis", "rm") == Outcome::Schedulable;
        prop_assert_eq!(rm_ok, rm.iter().all(|s| s.1 == 0));
        let edf_ok = outcome(&r, "processor demand", "edf") == Outcome::Schedulable;
        prop_assert_eq!(edf_ok, simulated(&w, "edf").iter().all(|s| s.1 == 0));
        prop_assert!(edf_ok, "U ≤ 1 with implicit deadlines is EDF-schedulable");
    }

    #[test]
    fn with_any_deadline_rta_and_demand_match_the_runs(ts in task_sets(), ds in prop::collection::vec(0u64..1000, 4)) {
        // Deadlines anywhere in [C, 2T]: shorter than the period, equal, or past it (then a job
        // may still run when the next is released, and later jobs of the busy period count).
        let tasks: Vec<(u64, u64, u64)> =
            ts.iter().zip(&ds).map(|(&(c, t), &x)| (c, t, c + x % (2 * t - c + 1))).collect();
        let w = workload(&tasks);
        let r = analyze(&w).unwrap();
        let rm = simulated(&w, "rm");
        for (a, (worst, misses)) in r.tasks.iter().zip(&rm) {
            prop_assert_eq!(a.rm.wcrt, *worst, "{}", a.name);
            prop_assert_eq!(a.rm.schedulable(), *misses == 0, "{}", a.name);
        }
        let edf_ok = outcome(&r, "processor demand", "edf") == Outcome::Schedulable;
        prop_assert_eq!(edf_ok, simulated(&w, "edf").iter().all(|s| s.1 == 0));
    }

    #[test]
    fn equal_priorities_bound_the_simulated_response(ts in task_sets()) {
        // Every task priority 0: under prio-preempt they are all ties, run first come first
        // served; the bound counts all the others and must still hold.
        let mut w = implicit(&ts);
        for t in &mut w.tasks {
            t.priority = 0;
        }
        let r = analyze(&w).unwrap();
        for (a, (worst, _)) in r.tasks.iter().zip(simulated(&w, "prio-preempt")) {
            prop_assert!(worst <= a.prio.wcrt, "{}: {:?} > {:?}", a.name, worst, a.prio.wcrt);
        }
    }
}

#[test]
fn the_report_serialises_for_the_cli() {
    let r = analyze(&implicit(&[(2, 5), (4, 7)])).unwrap();
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["tasks"][1]["rm"]["outcome"], "exceeds_deadline");
    assert_eq!(v["tasks"][1]["rm"]["wcrt"], 8 * MS);
    assert_eq!(v["tasks"][1]["d"], 7 * MS);
    assert_eq!(v["edf"]["schedulable"], true);
    assert_eq!(v["hyperperiod"], 35 * MS);
    let edf = v["verdicts"].as_array().unwrap().iter().find(|x| x["policy"] == "edf").unwrap();
    assert_eq!((&edf["kind"], &edf["outcome"]), (&"exact".into(), &"schedulable".into()));
}
