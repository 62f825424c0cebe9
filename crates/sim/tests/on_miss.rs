//! What a periodic task does with the releases that come while one of its jobs is late
//! (`SimConfig::on_miss`), and the job numbers its slices carry.

mod protocol;

use proptest::prelude::*;
use protocol::Checked;
use schedlab_sim::engine::{simulate, OnMiss, SimConfig, SimResult};
use schedlab_sim::policies::{by_spec, CATALOGUE};
use schedlab_sim::workload::{TaskSpec, Workload};
use std::sync::{Arc, Mutex};

const MS: u64 = 1_000_000;

/// One task, period 10 ms, four jobs of 15 ms each: every job overruns its period.
fn overrunning() -> Workload {
    let t = {
        let mut t = TaskSpec { jobs: 4, ..TaskSpec::cpu("late", 0, 15 * MS) };
        t.period = Some(10 * MS);
        t
    };
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
        tasks: vec![{
            let mut t = TaskSpec { jobs: 3, ..TaskSpec::cpu("d", 0, c * MS) };
            t.period = Some(10 * MS);
            t.deadline = Some(25 * MS);
            t
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

fn task(r: &SimResult) -> (u32, u32, u64, Option<u64>) {
    let t = &r.tasks[0];
    (t.jobs_done, t.jobs_aborted, t.deadline_misses, t.finish.map(|f| f / MS))
}

#[test]
fn abort_drops_a_running_job_at_its_deadline() {
    // Job 0 runs 0–10 and is aborted at its deadline, 10 (5 ms of its 15 never run); the job
    // released at 10 starts at once and is aborted at 20, and so on: four jobs aborted, four
    // misses, none done; the task ends at 40 ms.
    let r = run(OnMiss::Abort);
    assert_eq!(jobs_and_times(&r), vec![(0, 0, 10), (1, 10, 20), (2, 20, 30), (3, 30, 40)]);
    assert_eq!(task(&r), (0, 4, 4, Some(40)));
    assert_eq!(r.tasks[0].cpu, 40 * MS);
}

#[test]
fn abort_spares_a_job_that_ends_on_its_deadline() {
    // 10 ms jobs, period 10: each ends exactly at its deadline, which is not late.
    let w = Workload {
        cpus: Some(1),
        tasks: vec![{
            let mut t = TaskSpec { jobs: 2, ..TaskSpec::cpu("exact", 0, 10 * MS) };
            t.period = Some(10 * MS);
            t
        }],
    };
    let r =
        simulate(&w, by_spec("fcfs").unwrap().as_mut(), &SimConfig { on_miss: OnMiss::Abort, ..SimConfig::default() });
    assert_eq!(task(&r), (2, 0, 0, Some(20)));
}

#[test]
fn abort_drops_a_job_in_io_and_ignores_its_late_io_completion() {
    // Jobs of 2 ms CPU, 20 ms I/O, 2 ms CPU; period 10. Job 0 runs 0–2 and is in I/O (till 22)
    // at its deadline, 10: aborted. Job 1 (released at 10) runs 10–12, is in I/O till 32 and is
    // aborted at 20. Job 0's I/O completion at 22 and job 1's at 32 find no job waiting for them.
    let w = Workload {
        cpus: Some(1),
        tasks: vec![{
            let mut t =
                TaskSpec { bursts: vec![2 * MS, 20 * MS, 2 * MS].into(), jobs: 2, ..TaskSpec::cpu("io", 0, 2 * MS) };
            t.period = Some(10 * MS);
            t
        }],
    };
    let r =
        simulate(&w, by_spec("fcfs").unwrap().as_mut(), &SimConfig { on_miss: OnMiss::Abort, ..SimConfig::default() });
    assert_eq!(jobs_and_times(&r), vec![(0, 0, 2), (1, 10, 12)]);
    assert_eq!(task(&r), (0, 2, 2, Some(20)));
}

#[test]
fn abort_takes_a_waiting_job_off_the_queue() {
    // Under fcfs a 30 ms hog runs first; the periodic task (5 ms jobs, period 10) waits. Job 0
    // is aborted at 10 while queued, job 1 (released at 10) at 20: it never runs, waits 20 ms;
    // the hog ends at 30.
    let w = Workload {
        cpus: Some(1),
        tasks: vec![
            {
                let mut t = TaskSpec { jobs: 2, ..TaskSpec::cpu("starved", 0, 5 * MS) };
                t.period = Some(10 * MS);
                t
            },
            TaskSpec::cpu("hog", 0, 30 * MS),
        ],
    };
    // fcfs takes arrivals in workload order: put the hog first.
    let w = Workload { tasks: vec![w.tasks[1].clone(), w.tasks[0].clone()], ..w };
    let r =
        simulate(&w, by_spec("fcfs").unwrap().as_mut(), &SimConfig { on_miss: OnMiss::Abort, ..SimConfig::default() });
    let s = &r.tasks[1];
    assert_eq!((s.jobs_done, s.jobs_aborted, s.cpu, s.waiting, s.finish), (0, 2, 0, 20 * MS, Some(20 * MS)));
    assert_eq!(r.tasks[0].finish, Some(30 * MS));
}

/// Periodic tasks with I/O inside their jobs, beside a hog, on 1–2 CPUs: overloads on purpose.
fn overloaded() -> impl Strategy<Value = Workload> {
    let task = (1u64..8, prop::option::of(1u64..6), 2u64..12, 1u32..6, prop::option::of(1u64..12)).prop_map(
        |(c, io, t, jobs, d)| {
            let bursts = match io {
                Some(io) => vec![c * MS, io * MS, MS],
                None => vec![c * MS],
            };
            {
                let mut spec = TaskSpec { bursts: bursts.into(), jobs, ..TaskSpec::cpu("p", 0, MS) };
                spec.period = Some(t * MS);
                spec.deadline = d.map(|d| d * MS);
                spec
            }
        },
    );
    (prop::collection::vec(task, 1..5), 1usize..3, 0u64..20).prop_map(|(mut tasks, cpus, hog)| {
        tasks.push(TaskSpec::cpu("hog", 0, hog * MS + 1));
        for (i, t) in tasks.iter_mut().enumerate() {
            t.name = format!("T{i}").into();
        }
        Workload { cpus: Some(cpus), tasks }
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Under skip and abort, every policy keeps the call protocol, every task ends with each of
    /// its jobs done, skipped or aborted, and no task gets more CPU than its jobs ask for.
    #[test]
    fn every_policy_accounts_for_every_job(w in overloaded()) {
        for on_miss in [OnMiss::Skip, OnMiss::Abort] {
            for (spec, _, _) in CATALOGUE {
                let calls = Arc::new(Mutex::new(Vec::new()));
                let mut p = Checked::new(by_spec(spec).unwrap(), calls.clone());
                let cfg = SimConfig { cpus: w.cpus.unwrap(), on_miss, ..SimConfig::default() };
                let r = simulate(&w, &mut p, &cfg);
                prop_assert!(calls.lock().unwrap().is_empty(), "{spec} {on_miss:?}: {:?}", calls.lock().unwrap());
                prop_assert!(p.leftovers().is_empty(), "{spec} {on_miss:?}: left in the queue {:?}", p.leftovers());
                for (t, x) in w.tasks.iter().zip(&r.tasks) {
                    prop_assert!(x.finish.is_some(), "{spec} {on_miss:?}: {} did not finish", t.name);
                    prop_assert_eq!(x.jobs_done + x.jobs_skipped + x.jobs_aborted, t.jobs, "{} {:?} {}", spec, on_miss, t.name);
                    let demand: u64 = t.bursts.iter().step_by(2).sum::<u64>() * t.jobs as u64;
                    prop_assert!(x.cpu <= demand, "{spec} {on_miss:?}: {} ran {} of {demand}", t.name, x.cpu);
                    if on_miss == OnMiss::Skip {
                        prop_assert_eq!(x.jobs_aborted, 0);
                        prop_assert_eq!(x.cpu, t.bursts.iter().step_by(2).sum::<u64>() * x.jobs_done as u64);
                    } else {
                        prop_assert_eq!(x.jobs_skipped, 0);
                    }
                }
            }
        }
    }
}

#[test]
fn a_periodic_task_with_phases_runs_each_job_of_its_own_shape() {
    // rt-app's phases on one timer: period 30 ms, two jobs of 3 ms, then one job of 2 ms of CPU,
    // 5 ms blocked, 20 ms of CPU. Alone under fcfs: job 0 runs 0–3, job 1 30–33, job 2 60–62,
    // blocks 62–67, runs 67–87 (deadline 90: met). Had every job been the first phase's, the
    // last would end at 63.
    let w = Workload::from_json_str(
        r#"{"tasks":[{"name":"p","period":30,"phases":[{"jobs":2,"bursts":[3]},{"jobs":1,"bursts":[2,5,20]}]}]}"#,
    )
    .unwrap();
    let r = simulate(&w, by_spec("fcfs").unwrap().as_mut(), &SimConfig::default());
    assert_eq!(jobs_and_times(&r), vec![(0, 0, 3), (1, 30, 33), (2, 60, 62), (2, 67, 87)]);
    let t = &r.tasks[0];
    assert_eq!((t.jobs_done, t.deadline_misses, t.finish), (3, 0, Some(87 * MS)));
    // Job by job, each job's CPU need is its own phase's: job 2 finishes at 87, not at 62.
    let report = schedlab_sim::jobs::job_metrics(&w, &r).unwrap();
    let finishes: Vec<_> = report.jobs.iter().map(|j| j.finish.map(|f| f / MS)).collect();
    assert_eq!(finishes, vec![Some(3), Some(33), Some(87)]);
}
