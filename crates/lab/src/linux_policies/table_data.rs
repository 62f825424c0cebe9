//! The seed's `table_data` text layout (Appendix A of seed 001), so a reader can hold our
//! numbers against the published ones line by line: one block per (process count, policy),
//! the three workloads side by side.

use super::case::CaseResult;
use super::params::WorkloadKind;
use std::fmt::Write;

/// Render every case in the seed's layout. `source` fills the "Output Filename" line.
pub fn render(cases: &[CaseResult], source: &str) -> String {
    let mut procs: Vec<usize> = cases.iter().map(|c| c.procs).collect();
    procs.sort_unstable();
    procs.dedup();
    let mut out = String::new();
    for n in procs {
        let _ = writeln!(out, "{n} processes:");
        let mut policies: Vec<_> = cases.iter().filter(|c| c.procs == n).map(|c| c.policy).collect();
        policies.dedup();
        let mut seen = Vec::new();
        for p in policies {
            if seen.contains(&p) {
                continue;
            }
            seen.push(p);
            let cols: Vec<(WorkloadKind, Option<&CaseResult>)> = WorkloadKind::ALL
                .iter()
                .map(|&w| (w, cases.iter().find(|c| c.procs == n && c.policy == p && c.workload == w)))
                .filter(|(_, c)| c.is_some())
                .collect();
            let _ = writeln!(out, "#####");
            let _ = writeln!(out, "{:<22}{source}", "Output Filename:");
            let _ = writeln!(out, "{:<22}{}", "Scheduling Policy:", p.kernel_name());
            let _ = writeln!(out, "{:<22}{n}", "Number of Processes:");
            let mut head = format!("{:<21}", "Field");
            for (w, _) in &cols {
                let _ = write!(head, "{:<18}", w.heading());
            }
            let _ = writeln!(out, "{}", head.trim_end());
            let _ = writeln!(out, "-----");
            let float_row = |label: &str, f: &dyn Fn(&CaseResult) -> f64| {
                let mut s = format!("{label:<21}");
                for (_, c) in &cols {
                    let _ = write!(s, "{:<18}", format!("{:.6}", f(c.unwrap())));
                }
                s.trim_end().to_string()
            };
            let int_row = |label: &str, f: &dyn Fn(&CaseResult) -> i64| {
                let mut s = format!("{label:<21}");
                for (_, c) in &cols {
                    let _ = write!(s, "{:<18}", f(c.unwrap()));
                }
                s.trim_end().to_string()
            };
            let _ = writeln!(out, "{}", float_row("System Time:", &|c| c.sys_s));
            let _ = writeln!(out, "{}", float_row("User Time:", &|c| c.user_s));
            let _ = writeln!(out, "{}", float_row("Total Time:", &|c| c.total_s));
            let _ = writeln!(out, "{}", float_row("Average Time:", &|c| c.avg_s));
            let _ = writeln!(out, "Voluntary");
            let _ = writeln!(out, "{}", int_row("Context Switches:", &|c| c.voluntary_ctx));
            let _ = writeln!(out, "Average Voluntary");
            let _ = writeln!(out, "{}", float_row("Context Switches:", &|c| c.avg_voluntary_ctx));
            let _ = writeln!(out, "Involuntary");
            let _ = writeln!(out, "{}", int_row("Context Switches:", &|c| c.involuntary_ctx));
            let _ = writeln!(out, "Average Involuntary");
            let _ = writeln!(out, "{}", float_row("Context Switches:", &|c| c.avg_involuntary_ctx));
            let _ = writeln!(out, "#####");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linux_policies::case::{CaseFrame, ChildOutcome};
    use schedlab_os::rusage::Usage;
    use schedlab_os::sched::LinuxPolicy;

    #[test]
    fn layout_matches_the_seed() {
        let kid = ChildOutcome {
            usage: Usage {
                user_s: 0.0896,
                sys_s: 0.00016,
                voluntary_ctx: 6,
                involuntary_ctx: 29,
                ..Default::default()
            },
            success: true,
            killed: false,
            turnaround_s: 0.1,
        };
        let cases: Vec<CaseResult> = WorkloadKind::SEED
            .iter()
            .map(|&w| {
                let frame = CaseFrame {
                    policy: LinuxPolicy::Other,
                    workload: w,
                    procs: 100,
                    cpus: vec![1],
                    priority: 0,
                    deadline_runtime_ns: None,
                    spawn_s: 0.0,
                    wall_s: 1.0,
                    timed_out: false,
                    interrupted: false,
                };
                CaseResult::from_children(frame, &vec![kid; 100])
            })
            .collect();
        let text = render(&cases, "results/x");
        assert!(text.starts_with("100 processes:\n#####\n"));
        assert!(text.contains("Scheduling Policy:    SCHED_OTHER\n"));
        assert!(text.contains("Field                IO                CPU               Mixed\n"));
        assert!(text.contains("User Time:           8.960000          8.960000          8.960000\n"));
        assert!(text.contains("Involuntary\nContext Switches:    2900              2900              2900\n"));
        assert!(text.contains("Average Involuntary\nContext Switches:    29.000000"));
        // Our `empty` case, when run, is a fourth column after the seed's three.
        let mut with_empty = cases.clone();
        let mut e = cases[0].clone();
        e.workload = WorkloadKind::Empty;
        with_empty.push(e);
        let text = render(&with_empty, "results/x");
        assert!(text.contains("Field                IO                CPU               Mixed             Empty\n"));
    }
}
