//! What a periodic task does with the releases that come while one of its jobs is late
//! (`SimConfig::on_miss`), and the job numbers its slices carry.

use schedlab_sim::engine::{simulate, OnMiss, SimConfig, SimResult};
use schedlab_sim::policies::by_spec;
use schedlab_sim::workload::{TaskSpec, Workload};

const MS: u64 = 1_000_000;

/// One task, period 10 ms, four jobs of 15 ms each: every job overruns its period.
fn overrunning() -> Workload {
    let t = TaskSpec { period: Some(10 * MS), jobs: 4, ..TaskSpec::cpu("late", 0, 15 * MS) };
    Workload { cpus: Some(1), tasks: vec![t] }
}

fn run(on_miss: OnMiss) -> SimResult {
    let cfg = SimConfig { on_miss, ..SimConfig::default() };
    simulate(&overrunning(), by_spec("fcfs").unwrap().as_mut(), &cfg)
}

fn jobs_and_times(r: &SimResult) -> Vec<(u32, u64, u64)> {
    r.slices.iter().map(|s| (s.job, s.start / MS, s.end / MS)).collect()
}

#[test]
fn continue_runs_every_job_late_in_release_order() {
    // Releases at 0, 10, 20, 30 ms, deadlines at the next release. Job 0 runs 0–15 (deadline 10:
    // missed), job 1 waits for it and runs 15–30 (deadline 20), job 2 30–45 (30), job 3 45–60
    // (40): four jobs, four misses, done at 60 ms.
    let r = run(OnMiss::Continue);
    assert_eq!(jobs_and_times(&r), vec![(0, 0, 15), (1, 15, 30), (2, 30, 45), (3, 45, 60)]);
    let t = &r.tasks[0];
    assert_eq!((t.jobs_done, t.jobs_skipped, t.deadline_misses), (4, 0, 4));
    assert_eq!(t.finish, Some(60 * MS));
}

#[test]
fn skip_drops_the_releases_that_came_while_a_job_was_late() {
    // Job 0 runs 0–15 and misses its deadline at 10; the release at 10 came while it was late:
    // skipped. Job 2 is released at 20 and runs 20–35, missing its deadline at 30; the release at
    // 30 is skipped. Two jobs run (numbers 0 and 2), two skipped, two misses; done at 35 ms.
    let r = run(OnMiss::Skip);
    assert_eq!(jobs_and_times(&r), vec![(0, 0, 15), (2, 20, 35)]);
    let t = &r.tasks[0];
    assert_eq!((t.jobs_done, t.jobs_skipped, t.deadline_misses), (2, 2, 2));
    assert_eq!(t.finish, Some(35 * MS));
}

#[test]
fn skip_keeps_a_release_that_came_before_the_late_jobs_deadline() {
    // Period 10, relative deadline 25 (longer than the period), jobs of 15 ms, three jobs.
    // Job 0 runs 0–15 (deadline 25: met). Job 1, released at 10, runs 15–30 (deadline 35: met).
    // Job 2, released at 20, runs 30–45 (deadline 45: met, not late). Nothing skipped. With jobs
    // of 18 ms: job 0 0–18 (25 met), job 1 18–36 (35: missed by 1), job 2 was released at 20,
    // before job 1's deadline, so it is kept and runs 36–54 (deadline 45: missed).
    let mk = |c: u64| Workload {
        cpus: Some(1),
        tasks: vec![TaskSpec {
            period: Some(10 * MS),
            deadline: Some(25 * MS),
            jobs: 3,
            ..TaskSpec::cpu("d", 0, c * MS)
        }],
    };
    let cfg = SimConfig { on_miss: OnMiss::Skip, ..SimConfig::default() };
    let r = simulate(&mk(15), by_spec("fcfs").unwrap().as_mut(), &cfg);
    assert_eq!(jobs_and_times(&r), vec![(0, 0, 15), (1, 15, 30), (2, 30, 45)]);
    assert_eq!((r.tasks[0].jobs_skipped, r.tasks[0].deadline_misses), (0, 0));
    let r = simulate(&mk(18), by_spec("fcfs").unwrap().as_mut(), &cfg);
    assert_eq!(jobs_and_times(&r), vec![(0, 0, 18), (1, 18, 36), (2, 36, 54)]);
    assert_eq!((r.tasks[0].jobs_skipped, r.tasks[0].deadline_misses), (0, 2));
}
