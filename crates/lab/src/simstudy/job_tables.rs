//! `sim run`'s real-time view of periodic tasks: per task the jobs released, done, skipped and
//! missed with the worst and 99th-percentile response and the largest lateness; on request
//! every job's release, start, finish, response and lateness (`schedlab_sim::jobs`).

use schedlab_report::section::Table;
use schedlab_sim::engine::SimResult;
use schedlab_sim::jobs::{job_metrics, JobRecord};
use schedlab_sim::workload::Workload;
use serde_json::{json, Value};

/// Does the workload have a periodic task (one whose jobs are worth a table)?
pub fn has_periodic(w: &Workload) -> bool {
    w.tasks.iter().any(|t| t.period.is_some())
}

fn ms(ns: Option<u64>) -> String {
    ns.map_or("-".into(), |v| format!("{:.3}", v as f64 / 1e6))
}

fn ms_signed(ns: Option<i64>) -> String {
    ns.map_or("-".into(), |v| format!("{:.3}", v as f64 / 1e6))
}

/// "yes", "no", "skipped" or "aborted": a job without a finish although its task went on to
/// finish later was skipped (never ran) or aborted (ran, then dropped at its deadline), in a run
/// that skips or aborts late jobs (`--on-miss`).
fn missed_cell(r: &SimResult, x: &JobRecord) -> &'static str {
    let Some(task) = r.tasks.get(x.task) else { return "no" };
    let dropped = x.finish.is_none() && task.finish.is_some_and(|f| x.release < f);
    match (x.missed, x.first_start) {
        (true, _) => "yes",
        (false, None) if dropped && task.jobs_skipped > 0 => "skipped",
        (false, _) if dropped && task.jobs_aborted > 0 => "aborted",
        _ => "no",
    }
}

/// Per policy a table of its periodic tasks (and, with `every_job`, one of their jobs), and the
/// JSON of every job. Runs without recorded slices have no job view and are left out.
pub fn tables(w: &Workload, results: &[SimResult], every_job: bool) -> (Vec<Table>, Value) {
    let mut tables = vec![];
    let mut doc = vec![];
    for r in results {
        let Ok(report) = job_metrics(w, r) else { continue };
        let periodic = |task: usize| w.tasks[task].period.is_some();
        let mut t = Table::new(
            format!("Periodic tasks under {}", r.policy),
            &[
                "task",
                "released",
                "done",
                "skipped",
                "aborted",
                "missed",
                "worst response ms",
                "p99 response ms",
                "max lateness ms",
            ],
        );
        for s in report.tasks.iter().filter(|s| periodic(s.task)) {
            let skipped = r.tasks.get(s.task).map_or(0, |x| x.jobs_skipped);
            t.row(vec![
                s.name.to_string(),
                s.released.to_string(),
                s.jobs_done.to_string(),
                skipped.to_string(),
                r.tasks.get(s.task).map_or(0, |x| x.jobs_aborted).to_string(),
                // The engine's count: it includes aborted jobs, which never finish.
                r.tasks.get(s.task).map_or(s.deadline_misses, |x| x.deadline_misses).to_string(),
                ms(s.worst_response),
                ms(s.p99_response),
                ms_signed(s.max_lateness),
            ]);
        }
        tables.push(t.with_note("Response = finish − release; lateness = finish − deadline (negative: early)."));
        if every_job {
            let mut j = Table::new(
                format!("Jobs under {}", r.policy),
                &["task", "job", "release ms", "start ms", "finish ms", "response ms", "lateness ms", "missed"],
            );
            for x in report.jobs.iter().filter(|x| periodic(x.task)) {
                j.row(vec![
                    x.name.to_string(),
                    x.job.to_string(),
                    ms(Some(x.release)),
                    ms(x.first_start),
                    ms(x.finish),
                    ms(x.response),
                    ms_signed(x.lateness),
                    missed_cell(r, x).into(),
                ]);
            }
            tables.push(j);
        }
        doc.push(json!({"policy": r.policy, "tasks": report.tasks, "jobs": report.jobs}));
    }
    (tables, Value::Array(doc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_sim::engine::{simulate, SimConfig};
    use schedlab_sim::policies::by_spec;
    use schedlab_sim::workload::TaskSpec;

    const MS: u64 = 1_000_000;

    #[test]
    fn a_late_periodic_task_shows_its_misses_and_responses() {
        // One task, period 10 ms, three jobs of 15 ms under fcfs: job k is released at 10k and
        // finishes at 15(k+1): responses 15, 20, 25 ms; lateness 5, 10, 15 ms; three misses.
        let w = Workload {
            cpus: Some(1),
            tasks: vec![{
                let mut t = TaskSpec { jobs: 3, ..TaskSpec::cpu("late", 0, 15 * MS) };
                t.period = Some(10 * MS);
                t
            }],
        };
        let r = simulate(&w, by_spec("fcfs").unwrap().as_mut(), &SimConfig::default());
        let (t, doc) = tables(&w, &[r], true);
        assert_eq!(t[0].rows, vec![vec!["late", "3", "3", "0", "0", "3", "25.000", "25.000", "15.000"]]);
        let resp: Vec<&str> = t[1].rows.iter().map(|r| r[5].as_str()).collect();
        assert_eq!(resp, ["15.000", "20.000", "25.000"]);
        assert_eq!(doc[0]["jobs"].as_array().unwrap().len(), 3);
        assert!(has_periodic(&w));
        // Skipping: jobs 0 and 2 run (0–15, 20–35), job 1 (released at 10 while job 0 was late)
        // is skipped.
        let cfg = SimConfig { on_miss: schedlab_sim::engine::OnMiss::Skip, ..SimConfig::default() };
        let r = simulate(&w, by_spec("fcfs").unwrap().as_mut(), &cfg);
        let (t, _) = tables(&w, &[r], true);
        let missed: Vec<&str> = t[1].rows.iter().map(|r| r[7].as_str()).collect();
        assert_eq!(missed, ["yes", "skipped", "yes"]);
        // Aborting: each job runs until its deadline (0–10, 10–20, 20–30) and is dropped.
        let cfg = SimConfig { on_miss: schedlab_sim::engine::OnMiss::Abort, ..SimConfig::default() };
        let r = simulate(&w, by_spec("fcfs").unwrap().as_mut(), &cfg);
        let (t, _) = tables(&w, &[r], true);
        assert_eq!((t[0].rows[0][2].as_str(), t[0].rows[0][4].as_str(), t[0].rows[0][5].as_str()), ("0", "3", "3"));
        let missed: Vec<&str> = t[1].rows.iter().map(|r| r[7].as_str()).collect();
        assert_eq!(missed, ["aborted", "aborted", "aborted"]);
    }
}
