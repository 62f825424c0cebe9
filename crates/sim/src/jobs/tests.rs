//! Hand-worked per-job schedules.

use super::*;
use crate::engine::{simulate, SimConfig};
use crate::policies::by_spec;

const MS: u64 = 1_000_000;

fn run(w: &Workload, spec: &str, horizon: Option<Time>) -> SimResult {
    let mut p = by_spec(spec).unwrap();
    simulate(w, p.as_mut(), &SimConfig { cpus: 1, horizon, ..SimConfig::default() })
}

/// A: CPU 2, blocked 3, CPU 2 per job; period 10, 2 jobs, deadline 7, priority 1.
/// B: one CPU burst of 4 arriving at 3, priority 0 (higher), no deadline.
fn two_bursts() -> Workload {
    let a = {
        let mut t =
            TaskSpec { bursts: vec![2 * MS, 3 * MS, 2 * MS].into(), jobs: 2, priority: 1, ..TaskSpec::cpu("A", 0, 0) };
        t.period = Some(10 * MS);
        t.deadline = Some(7 * MS);
        t
    };
    let b = TaskSpec { priority: 0, ..TaskSpec::cpu("B", 3 * MS, 4 * MS) };
    Workload { cpus: Some(1), tasks: vec![a, b] }
}

#[test]
fn a_job_finishes_at_the_end_of_its_last_burst() {
    // prio-preempt: A runs 0–2, blocks 2–5; B arrives at 3 and runs 3–7 (A's I/O ends at 5 but
    // B is better); A's second burst runs 7–9. Job 0: release 0, finish 9, response 9,
    // deadline 0 + 7 = 7, lateness +2: missed.
    // Job 1 (release 10): 10–12, blocked 12–15, 15–17: response 7, deadline 17, lateness 0: met
    // (finishing exactly at the deadline is not a miss).
    let w = two_bursts();
    let r = run(&w, "prio-preempt", None);
    let m = job_metrics(&w, &r).unwrap();
    let a: Vec<_> = m.jobs.iter().filter(|j| j.task == 0).collect();
    assert_eq!(a.len(), 2);
    assert_eq!((a[0].release, a[0].first_start, a[0].finish), (0, Some(0), Some(9 * MS)));
    assert_eq!(
        (a[0].response, a[0].deadline, a[0].lateness, a[0].missed),
        (Some(9 * MS), Some(7 * MS), Some(2 * MS as i64), true)
    );
    assert_eq!((a[1].release, a[1].first_start, a[1].finish), (10 * MS, Some(10 * MS), Some(17 * MS)));
    assert_eq!((a[1].response, a[1].lateness, a[1].missed), (Some(7 * MS), Some(0), false));
    let b = &m.jobs[2];
    assert_eq!(
        (b.task, b.release, b.first_start, b.finish, b.response),
        (1, 3 * MS, Some(3 * MS), Some(7 * MS), Some(4 * MS))
    );
    assert_eq!((b.deadline, b.lateness, b.missed), (None, None, false));
    // Task A: responses {7, 9}: worst 9; p99 is the ⌈0.99·2⌉ = 2nd smallest, 9.
    let s = &m.tasks[0];
    assert_eq!((s.released, s.jobs_done, s.worst_response, s.p99_response), (2, 2, Some(9 * MS), Some(9 * MS)));
    assert_eq!((s.deadline_misses, s.max_lateness), (1, Some(2 * MS as i64)));
    // The engine counts the same misses.
    assert_eq!(r.tasks[0].deadline_misses, 1);
    assert_eq!(m.tasks[1].max_lateness, None);
}

#[test]
fn a_job_cut_short_by_the_horizon_is_unfinished_not_missed() {
    // Horizon 14: A's job 1 ran 10–12 and is blocked until 15: it has not finished.
    let w = two_bursts();
    let r = run(&w, "prio-preempt", Some(14 * MS));
    let m = job_metrics(&w, &r).unwrap();
    let j1 = m.jobs.iter().find(|j| j.task == 0 && j.job == 1).unwrap();
    assert_eq!((j1.first_start, j1.finish, j1.response, j1.missed), (Some(10 * MS), None, None, false));
    assert_eq!((m.tasks[0].released, m.tasks[0].jobs_done, m.tasks[0].deadline_misses), (2, 1, 1));
    assert_eq!(r.tasks[0].deadline_misses, 1);
}

#[test]
fn a_late_job_delays_the_next_release_s_start_but_not_its_release() {
    // rm, C/T = (2, 5) and (4, 7), all released at 0, over the hyperperiod 35 (Buttazzo's U =
    // 0.97 example). τ2's job 0: τ1 0–2, τ2 2–5, τ1 5–7, τ2 7–8: finish 8 > deadline 7.
    // Job 1 of τ2, released at 7, starts only at 8, after job 0: its response counts from 7.
    let t = |n: &str, c: u64, p: u64| {
        let mut t = TaskSpec { jobs: (35 / p) as u32, ..TaskSpec::cpu(n, 0, c * MS) };
        t.period = Some(p * MS);
        t
    };
    let w = Workload { cpus: Some(1), tasks: vec![t("t1", 2, 5), t("t2", 4, 7)] };
    let r = run(&w, "rm", None);
    let m = job_metrics(&w, &r).unwrap();
    let j = |k: u32| m.jobs.iter().find(|j| j.task == 1 && j.job == k).unwrap();
    assert_eq!((j(0).finish, j(0).lateness, j(0).missed), (Some(8 * MS), Some(MS as i64), true));
    assert_eq!((j(1).release, j(1).first_start), (7 * MS, Some(8 * MS)));
    for (stats, engine) in m.tasks.iter().zip(&r.tasks) {
        assert_eq!(stats.deadline_misses, engine.deadline_misses, "{}", stats.name);
        assert_eq!(stats.jobs_done, engine.jobs_done, "{}", stats.name);
    }
    assert!(m.tasks[1].deadline_misses > 0);
}

#[test]
fn nearest_rank_takes_the_ceiling() {
    let v: Vec<Dur> = (1..=100).collect();
    assert_eq!(nearest_rank(&v, 99), Some(99)); // ⌈99·100/100⌉ = 99
    let v: Vec<Dur> = (1..=201).collect();
    assert_eq!(nearest_rank(&v, 99), Some(199)); // ⌈99·201/100⌉ = ⌈198.99⌉ = 199
    assert_eq!(nearest_rank(&[7], 99), Some(7));
    assert_eq!(nearest_rank(&[], 99), None);
}

#[test]
fn a_run_without_slices_is_refused() {
    let w = two_bursts();
    let mut p = by_spec("fcfs").unwrap();
    let r = simulate(&w, p.as_mut(), &SimConfig { record_slices: false, ..SimConfig::default() });
    assert!(job_metrics(&w, &r).unwrap_err().to_string().contains("record_slices"));
}

#[test]
fn the_report_serialises_for_the_cli() {
    let w = two_bursts();
    let m = job_metrics(&w, &run(&w, "prio-preempt", None)).unwrap();
    let v = serde_json::to_value(&m).unwrap();
    assert_eq!(v["jobs"][0]["lateness"], 2 * MS as i64);
    assert_eq!(v["jobs"][0]["missed"], true);
    assert_eq!(v["jobs"][2]["deadline"], serde_json::Value::Null);
    assert_eq!(v["tasks"][0]["p99_response"], 9 * MS);
}
