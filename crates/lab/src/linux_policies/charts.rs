//! The seed's figures, redrawn from our cases: average process time and average context
//! switches per policy, one chart per process count.

use super::case::CaseResult;
use super::params::WorkloadKind;
use schedlab_report::section::Figure;
use schedlab_report::svg::{BarChart, BarGroup};

fn policies_at(cases: &[CaseResult], n: usize) -> Vec<schedlab_os::sched::LinuxPolicy> {
    let mut v = Vec::new();
    for c in cases.iter().filter(|c| c.procs == n) {
        if !v.contains(&c.policy) {
            v.push(c.policy);
        }
    }
    v
}

/// Two figures per process count: average time (ms) and average context switches.
pub fn figures(cases: &[CaseResult]) -> Vec<Figure> {
    let mut procs: Vec<usize> = cases.iter().map(|c| c.procs).collect();
    procs.sort_unstable();
    procs.dedup();
    let mut out = Vec::new();
    for n in procs {
        let workloads: Vec<WorkloadKind> =
            WorkloadKind::ALL.into_iter().filter(|w| cases.iter().any(|c| c.procs == n && c.workload == *w)).collect();
        let policies = policies_at(cases, n);
        let get = |p, w| cases.iter().find(|c| c.procs == n && c.policy == p && c.workload == w);
        let time = BarChart {
            title: format!("Average process time ({n} processes)"),
            y_label: "user + system ms per process".into(),
            categories: workloads.iter().map(|w| w.heading().to_string()).collect(),
            groups: policies
                .iter()
                .map(|&p| BarGroup {
                    name: p.kernel_name().into(),
                    values: workloads.iter().map(|&w| get(p, w).map_or(0.0, |c| c.avg_s * 1e3)).collect(),
                    errors: None,
                })
                .collect(),
            log_y: false,
        };
        out.push(Figure {
            title: time.title.clone(),
            file: format!("avg_time_{n}.svg"),
            svg: time.to_svg(),
            caption: "Average CPU time (user + system, from wait4) per process, by workload and policy.".into(),
        });
        let mut cats = Vec::new();
        for w in &workloads {
            cats.push(format!("{} vol", w.heading()));
            cats.push(format!("{} invol", w.heading()));
        }
        let ctx = BarChart {
            title: format!("Average context switches ({n} processes)"),
            y_label: "context switches per process".into(),
            categories: cats,
            groups: policies
                .iter()
                .map(|&p| BarGroup {
                    name: p.kernel_name().into(),
                    values: workloads
                        .iter()
                        .flat_map(|&w| {
                            let c = get(p, w);
                            [c.map_or(0.0, |c| c.avg_voluntary_ctx), c.map_or(0.0, |c| c.avg_involuntary_ctx)]
                        })
                        .collect(),
                    errors: None,
                })
                .collect(),
            log_y: false,
        };
        out.push(Figure {
            title: ctx.title.clone(),
            file: format!("avg_ctx_{n}.svg"),
            svg: ctx.to_svg(),
            caption: "Voluntary (blocked) and involuntary (pre-empted) context switches per process.".into(),
        });
    }
    out
}
