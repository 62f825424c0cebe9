//! `schedlab sim analyze`: the schedulability tests of a periodic task set
//! (`schedlab_sim::analysis`) printed beside what the simulator does with the same tasks released
//! together (the critical instant): each task's response-time bound beside its simulated worst
//! response under `rm` and `prio-preempt`, and the EDF demand test beside whether `edf` misses.

use schedlab_report::section::{Section, Table, Verdict};
use schedlab_sim::analysis::rta::{RtaBound, RtaOutcome};
use schedlab_sim::analysis::{self, Report};
use schedlab_sim::engine::{simulate, SimConfig, SimResult};
use schedlab_sim::jobs::job_metrics;
use schedlab_sim::policies::by_spec;
use schedlab_sim::workload::{TaskSpec, Workload};
use schedlab_sim::Dur;
use serde_json::json;

/// The most jobs per task the critical-instant runs simulate.
pub const MAX_JOBS: u64 = 100_000;

fn ms(ns: Dur) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

/// The workload released at the critical instant: every task at time 0, one CPU, and enough jobs
/// to cover the hyperperiod (at least the workload's own count, at most [`MAX_JOBS`]).
pub fn critical_instant(w: &Workload, report: &Report) -> Workload {
    let tasks = w
        .tasks
        .iter()
        .map(|t| {
            let period = t.period.unwrap_or(1).max(1);
            let cover = report.hyperperiod.map_or(t.jobs as u64, |h| h.div_ceil(period));
            TaskSpec { arrival: 0, jobs: cover.max(t.jobs as u64).min(MAX_JOBS) as u32, ..t.clone() }
        })
        .collect();
    Workload { cpus: Some(1), tasks }
}

fn run(w: &Workload, spec: &str) -> SimResult {
    let cfg = SimConfig { cpus: 1, ..SimConfig::default() };
    simulate(w, by_spec(spec).expect("known spec").as_mut(), &cfg)
}

/// Worst simulated response per task, ns (None: no job finished).
fn worst(w: &Workload, r: &SimResult) -> Vec<Option<Dur>> {
    let jobs = job_metrics(w, r).expect("slices recorded");
    jobs.tasks.iter().map(|t| t.worst_response).collect()
}

fn bound_cell(b: &RtaBound, d: Dur) -> String {
    match b.wcrt {
        Some(r) if b.schedulable() => ms(r),
        _ => b.describe(d),
    }
}

/// The analysis section for `w`, or the analysis's refusal (a task it cannot analyse, named).
pub fn section(w: &Workload) -> Result<Section, analysis::AnalysisError> {
    let report = analysis::analyze(w)?;
    let sync = critical_instant(w, &report);
    let (rm, prio, edf) = (run(&sync, "rm"), run(&sync, "prio-preempt"), run(&sync, "edf"));
    let (rm_worst, prio_worst) = (worst(&sync, &rm), worst(&sync, &prio));
    let mut s = Section::new("sim-analyze", "003", "Schedulability analysis beside simulation");
    let mut t = Table::new(
        "Per task: response-time analysis at the critical instant beside the simulated worst response",
        &["task", "C ms", "T ms", "D ms", "U", "rm bound ms", "rm simulated ms", "prio bound ms", "prio simulated ms"],
    );
    let mut disagree = vec![];
    let show = |x: Option<Dur>| x.map_or("-".to_string(), ms);
    for (i, a) in report.tasks.iter().enumerate() {
        for (name, b, sim) in [("rm", &a.rm, rm_worst[i]), ("prio-preempt", &a.prio, prio_worst[i])] {
            // An exact bound (no ties) is the simulated worst response, whether or not it meets
            // the deadline: the analysis follows late jobs through the busy period as the
            // simulator runs them (one after the other).
            let exact = matches!(b.outcome, RtaOutcome::MeetsDeadline | RtaOutcome::ExceedsDeadline);
            if exact && b.ties.is_empty() && b.wcrt.is_some() && b.wcrt != sim {
                disagree.push(format!("{} under {name}: bound {} vs simulated {}", a.name, show(b.wcrt), show(sim)));
            }
        }
        t.row(vec![
            a.name.to_string(),
            ms(a.c),
            ms(a.t),
            ms(a.d),
            format!("{:.4}", a.u),
            bound_cell(&a.rm, a.d),
            show(rm_worst[i]),
            bound_cell(&a.prio, a.d),
            show(prio_worst[i]),
        ]);
    }
    s.tables.push(t.with_note(
        "Simulated: every task released at 0 on one CPU, over the hyperperiod (at most 100,000 jobs per task). \
         A bound is exact when the task shares its priority with no other task.",
    ));
    let mut v = Table::new("Schedulability tests", &["test", "policy", "kind", "outcome", "detail"]);
    for x in &report.verdicts {
        v.row(vec![
            x.test.to_string(),
            x.policy.to_string(),
            json!(x.kind).as_str().unwrap_or_default().to_string(),
            json!(x.outcome).as_str().unwrap_or_default().to_string(),
            x.detail.clone(),
        ]);
    }
    s.tables.push(v);
    s.verdicts.push(Verdict::goal(
        "Each exact response-time bound equals the simulated worst response at the critical instant",
        disagree.is_empty(),
        if disagree.is_empty() {
            format!("{} tasks, rm and prio-preempt", report.tasks.len())
        } else {
            disagree.join("; ")
        },
    ));
    if let Some(says) = report.edf.schedulable {
        let misses = edf.overall.deadline_misses;
        s.verdicts.push(Verdict::goal(
            "The EDF processor-demand test agrees with whether the edf simulation misses a deadline",
            says == (misses == 0),
            format!("test: {}; simulation: {misses} misses", if says { "schedulable" } else { "unschedulable" }),
        ));
    }
    s.summary = format!(
        "{} periodic tasks, U = {:.4}; rm misses {}, prio-preempt {}, edf {} in the critical-instant runs.",
        report.tasks.len(),
        report.utilisation,
        rm.overall.deadline_misses,
        prio.overall.deadline_misses,
        edf.overall.deadline_misses
    );
    s.results = json!({
        "analysis": report,
        "simulated_worst_response_ns": {"rm": rm_worst, "prio-preempt": prio_worst},
        "simulated_deadline_misses": {"rm": rm.overall.deadline_misses, "prio-preempt": prio.overall.deadline_misses, "edf": edf.overall.deadline_misses},
    });
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_report::section::{ClaimKind, Outcome};

    const MS: u64 = 1_000_000;

    fn periodic(tasks: &[(&str, u64, u64)]) -> Workload {
        Workload {
            cpus: Some(1),
            tasks: tasks
                .iter()
                .map(|&(n, c, p)| {
                    let mut t = TaskSpec { jobs: 3, ..TaskSpec::cpu(n, 0, c * MS) };
                    t.period = Some(p * MS);
                    t
                })
                .collect(),
        }
    }

    #[test]
    fn rm_fails_where_edf_succeeds_and_both_tables_say_so() {
        // (C, T) = (2, 5), (4, 7): U = 0.4 + 0.571 = 0.971. Under rm, b's first job waits for
        // a's jobs at 0 and 5: R = 4 + ⌈R/5⌉·2 → 6, 8 (8 > 7): it misses. EDF schedules U ≤ 1.
        let s = section(&periodic(&[("a", 2, 5), ("b", 4, 7)])).unwrap();
        let rows = &s.tables[0].rows;
        assert_eq!(rows[0][5], "2.000");
        assert_eq!(rows[0][6], "2.000");
        assert!(rows[1][5].contains("exceeds D") && rows[1][5].contains("8 ms"), "{:?}", rows[1]);
        assert_eq!(rows[1][6], "8.000");
        for v in &s.verdicts {
            assert_eq!((v.kind, v.outcome), (ClaimKind::Goal, Outcome::Met), "{}: {}", v.claim, v.detail);
        }
        assert_eq!(s.results["simulated_deadline_misses"]["edf"], 0);
        assert!(s.results["simulated_deadline_misses"]["rm"].as_u64().unwrap() > 0);
        // The critical-instant run covers the hyperperiod, 35 ms: 7 jobs of a, 5 of b.
        let sync = critical_instant(
            &periodic(&[("a", 2, 5), ("b", 4, 7)]),
            &analysis::analyze(&periodic(&[("a", 2, 5), ("b", 4, 7)])).unwrap(),
        );
        assert_eq!(sync.tasks.iter().map(|t| t.jobs).collect::<Vec<_>>(), vec![7, 5]);
    }

    #[test]
    fn a_task_without_a_period_is_refused_by_name() {
        let w = Workload { cpus: Some(1), tasks: vec![TaskSpec::cpu("aperiodic", 0, MS)] };
        let Err(e) = section(&w) else { panic!("analysed a task without a period") };
        assert!(e.to_string().contains("aperiodic"), "{e}");
    }
}
