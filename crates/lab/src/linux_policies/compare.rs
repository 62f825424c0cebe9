//! Our cases beside seed 001's published ones: the comparison tables and the verdicts on the
//! seed's claims, each with the numbers behind it.

use super::case::CaseResult;
use super::params::WorkloadKind;
use crate::seed_data;
use schedlab_os::sched::LinuxPolicy;
use schedlab_report::section::{ClaimKind, Table, Verdict};
use serde_json::Value;

const SEED_KEY: &str = "001_linux_scheduler";

/// One published case of seed 001 (Appendix A).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeedCase {
    pub procs: usize,
    pub avg_s: f64,
    pub avg_voluntary_ctx: f64,
    pub avg_involuntary_ctx: f64,
}

/// The published case for (policy, workload) at the seed's process count nearest to `procs`
/// (on a log scale); `None` for policies the seed did not run.
pub fn seed_case(policy: LinuxPolicy, workload: WorkloadKind, procs: usize) -> Option<SeedCase> {
    let cases = seed_data::seed(SEED_KEY)["cases"].as_array()?;
    let mine: Vec<&Value> = cases
        .iter()
        .filter(|c| c["policy"] == policy.kernel_name() && c["workload"] == workload.to_string().as_str())
        .collect();
    let dist = |c: &&Value| ((c["procs"].as_f64().unwrap_or(1.0)).ln() - (procs.max(1) as f64).ln()).abs();
    let best = mine.into_iter().min_by(|a, b| dist(a).total_cmp(&dist(b)))?;
    Some(SeedCase {
        procs: best["procs"].as_u64()? as usize,
        avg_s: best["average_s"].as_f64()?,
        avg_voluntary_ctx: best["avg_voluntary_ctx"].as_f64()?,
        avg_involuntary_ctx: best["avg_involuntary_ctx"].as_f64()?,
    })
}

fn f3(x: f64) -> String {
    format!("{x:.3}")
}

fn ms(x: f64) -> String {
    format!("{:.2}", x * 1e3)
}

/// Average process time and context switches, ours beside the seed's.
pub fn comparison_table(cases: &[CaseResult]) -> Table {
    let mut t = Table::new(
        "Per process: ours beside seed 001 (Appendix A)",
        &[
            "procs",
            "policy",
            "workload",
            "avg time ms",
            "seed ms",
            "avg vol ctx",
            "seed",
            "avg invol ctx",
            "seed",
            "seed procs",
        ],
    );
    for c in cases {
        let s = seed_case(c.policy, c.workload, c.procs);
        let or_dash = |f: fn(&SeedCase) -> String| s.as_ref().map_or("—".to_string(), f);
        t.row(vec![
            c.procs.to_string(),
            c.policy.to_string(),
            c.workload.to_string(),
            ms(c.avg_s),
            or_dash(|s| ms(s.avg_s)),
            f3(c.avg_voluntary_ctx),
            or_dash(|s| f3(s.avg_voluntary_ctx)),
            f3(c.avg_involuntary_ctx),
            or_dash(|s| f3(s.avg_involuntary_ctx)),
            or_dash(|s| s.procs.to_string()),
        ]);
    }
    t.with_note(
        "avg time = (user + system) / processes, from wait4's rusage. The seed ran on a 4-core/8-thread \
         i7-4710HQ with children free to use every CPU; here children share the CPUs in --cpus. \
         'seed procs' = the seed's case used for comparison (nearest process count).",
    )
}

/// Wall time, turnaround and throughput (the seed did not measure these).
pub fn timing_table(cases: &[CaseResult]) -> Table {
    let mut t = Table::new(
        "Wall time, turnaround (release → reap) and throughput",
        &["procs", "policy", "workload", "wall s", "p50 ms", "p95 ms", "max ms", "procs/s", "done", "killed"],
    );
    for c in cases {
        t.row(vec![
            c.procs.to_string(),
            c.policy.to_string(),
            c.workload.to_string(),
            f3(c.wall_s),
            ms(c.turnaround_p50_s),
            ms(c.turnaround_p95_s),
            ms(c.turnaround_max_s),
            format!("{:.1}", c.throughput_per_s),
            c.completed.to_string(),
            c.killed.to_string(),
        ]);
    }
    t
}

fn find(cases: &[CaseResult], p: LinuxPolicy, w: WorkloadKind, n: usize) -> Option<&CaseResult> {
    cases.iter().find(|c| c.policy == p && c.workload == w && c.procs == n && !c.timed_out && !c.interrupted)
}

fn procs_of(cases: &[CaseResult]) -> Vec<usize> {
    let mut v: Vec<usize> = cases.iter().map(|c| c.procs).collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn not_measured(claim: &str, why: &str) -> Verdict {
    Verdict::not_measured(ClaimKind::SeedClaim, claim, why)
}

/// FIFO's average involuntary switches are "far below" OTHER's when at most this fraction.
pub const FAR_BELOW: f64 = 0.2;

/// The verdicts on seed 001's claims.
pub fn verdicts(cases: &[CaseResult]) -> Vec<Verdict> {
    use LinuxPolicy::{Fifo, Other, Rr};
    let ns = procs_of(cases);
    let mut out = Vec::new();

    // 1. FIFO's involuntary context switches are far below OTHER's (cpu workload).
    let claim = "SCHED_FIFO processes are pre-empted far less than SCHED_OTHER ones (CPU-bound: average \
                 involuntary context switches per process)";
    let pairs: Vec<_> = ns
        .iter()
        .filter_map(|&n| Some((n, find(cases, Fifo, WorkloadKind::Cpu, n)?, find(cases, Other, WorkloadKind::Cpu, n)?)))
        .collect();
    if pairs.is_empty() {
        out.push(not_measured(claim, "needs the cpu workload under both other and fifo"));
    } else {
        let held = pairs.iter().all(|(_, f, o)| f.avg_involuntary_ctx <= FAR_BELOW * o.avg_involuntary_ctx);
        let detail = pairs
            .iter()
            .map(|(n, f, o)| {
                let (sf, so) = (seed_case(Fifo, WorkloadKind::Cpu, *n), seed_case(Other, WorkloadKind::Cpu, *n));
                let seed = match (sf, so) {
                    (Some(sf), Some(so)) => format!(
                        " (seed, {} procs: FIFO {:.3} vs OTHER {:.3})",
                        sf.procs, sf.avg_involuntary_ctx, so.avg_involuntary_ctx
                    ),
                    _ => String::new(),
                };
                format!(
                    "{n} procs: FIFO {:.3} vs OTHER {:.3} per process{seed}",
                    f.avg_involuntary_ctx, o.avg_involuntary_ctx
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        out.push(Verdict::seed_claim(claim, held, format!("{detail}; 'far below' = at most {FAR_BELOW} × OTHER")));
    }

    // 2. SCHED_OTHER always takes the most time (average process CPU time).
    let claim = "SCHED_OTHER always takes the most time (average CPU time per process)";
    let mut rows = Vec::new();
    let mut held = true;
    for &n in &ns {
        for w in WorkloadKind::ALL {
            let (Some(o), Some(f), Some(r)) =
                (find(cases, Other, w, n), find(cases, Fifo, w, n), find(cases, Rr, w, n))
            else {
                continue;
            };
            let ok = o.avg_s >= f.avg_s.max(r.avg_s);
            held &= ok;
            rows.push(format!(
                "{n} {w}: OTHER {} / FIFO {} / RR {} ms{}",
                ms(o.avg_s),
                ms(f.avg_s),
                ms(r.avg_s),
                if ok { "" } else { " ✗" }
            ));
        }
    }
    out.push(if rows.is_empty() {
        not_measured(claim, "needs other, fifo and rr on the same workload")
    } else {
        Verdict::seed_claim(claim, held, rows.join("; "))
    });

    // 3. FIFO and RR have very similar durations.
    let claim = "SCHED_FIFO and SCHED_RR give very similar durations (within 15%)";
    let mut rows = Vec::new();
    let mut held = true;
    for &n in &ns {
        for w in WorkloadKind::ALL {
            let (Some(f), Some(r)) = (find(cases, Fifo, w, n), find(cases, Rr, w, n)) else { continue };
            let gap = (f.avg_s - r.avg_s).abs() / f.avg_s.max(r.avg_s).max(1e-12);
            held &= gap <= 0.15;
            rows.push(format!("{n} {w}: {:.0}%", gap * 100.0));
        }
    }
    out.push(if rows.is_empty() {
        not_measured(claim, "needs fifo and rr")
    } else {
        Verdict::seed_claim(claim, held, format!("gap |FIFO−RR|/max: {}", rows.join(", ")))
    });

    // 4. The seed's conclusion: FIFO/RR give high turnaround and low throughput, OTHER the reverse.
    let claim = "SCHED_OTHER gives lower turnaround and higher throughput than SCHED_FIFO (the seed's \
                 conclusion, which it did not measure)";
    let mut rows = Vec::new();
    let mut held = true;
    for &n in &ns {
        let (Some(o), Some(f)) = (find(cases, Other, WorkloadKind::Cpu, n), find(cases, Fifo, WorkloadKind::Cpu, n))
        else {
            continue;
        };
        held &= o.turnaround_mean_s < f.turnaround_mean_s && o.throughput_per_s > f.throughput_per_s;
        rows.push(format!(
            "{n} cpu: mean turnaround OTHER {} vs FIFO {} ms, throughput {:.0} vs {:.0} procs/s",
            ms(o.turnaround_mean_s),
            ms(f.turnaround_mean_s),
            o.throughput_per_s,
            f.throughput_per_s
        ));
    }
    out.push(if rows.is_empty() {
        not_measured(claim, "needs the cpu workload under both other and fifo")
    } else {
        let why = if held {
            ""
        } else {
            " — with equal jobs released together, running each to completion (FIFO) finishes most of them \
             early, while fair sharing keeps every job in progress until near the end"
        };
        Verdict::seed_claim(claim, held, format!("{}{why}", rows.join("; ")))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_cases_are_found_by_nearest_count() {
        let s = seed_case(LinuxPolicy::Fifo, WorkloadKind::Cpu, 50).unwrap();
        assert_eq!(s.procs, 100);
        assert!((s.avg_involuntary_ctx - 0.04).abs() < 1e-9);
        let s = seed_case(LinuxPolicy::Other, WorkloadKind::Io, 8000).unwrap();
        assert_eq!(s.procs, 10_000);
        assert!(seed_case(LinuxPolicy::Batch, WorkloadKind::Io, 100).is_none());
    }
}
