//! Our cases beside seed 001's published ones: the comparison tables and the verdicts on the
//! seed's claims, each with the numbers behind it.

use super::case::CaseResult;
use super::params::WorkloadKind;
use crate::seed_data;
use schedlab_os::sched::LinuxPolicy;
use schedlab_report::judge;
use schedlab_report::section::{ClaimKind, Outcome, Table, Verdict};
use schedlab_report::stats::{self, MeanCi};
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

/// The 95% half-width of a case's mean CPU time per process (0 with fewer than 2 samples).
fn mean_ci_s(c: &CaseResult) -> f64 {
    MeanCi::of(&c.cpu_s).ci95
}

/// The start-up cost beside the work, for every table's note: the `empty` case's CPU per
/// process against the io case's at each process count (pooled over policies).
pub fn startup_note(cases: &[CaseResult]) -> String {
    let pooled = |w: WorkloadKind, n: usize| -> Vec<f64> {
        cases.iter().filter(|c| c.workload == w && c.procs == n).flat_map(|c| c.cpu_s.iter().copied()).collect()
    };
    let parts: Vec<String> = procs_of(cases)
        .into_iter()
        .filter_map(|n| {
            let empty = pooled(WorkloadKind::Empty, n);
            if empty.is_empty() {
                return None;
            }
            let e = stats::mean(&empty);
            let io = pooled(WorkloadKind::Io, n);
            Some(if io.is_empty() {
                format!("{n} procs: empty {} ms", ms(e))
            } else {
                let i = stats::mean(&io);
                format!("{n} procs: empty {} ms vs io {} ms ({:.1}%)", ms(e), ms(i), 100.0 * e / i.max(1e-12))
            })
        })
        .collect();
    if parts.is_empty() {
        "Start-up cost not measured (add the `empty` workload).".into()
    } else {
        format!(
            "Start-up cost (the `empty` case: schedlab-work execs and exits), CPU per process: {}.",
            parts.join("; ")
        )
    }
}

/// Average process time and context switches, ours beside the seed's; `placement` says where
/// the children ran.
pub fn comparison_table(cases: &[CaseResult], placement: &str) -> Table {
    let mut t = Table::new(
        "Per process: ours beside seed 001 (Appendix A)",
        &[
            "procs",
            "policy",
            "workload",
            "avg time ms",
            "± ms",
            "seed ms",
            "avg vol ctx",
            "seed",
            "avg invol ctx",
            "seed",
            "seed procs",
        ],
    )
    .keyed(&["policy", "workload", "procs"]);
    for c in cases {
        let s = seed_case(c.policy, c.workload, c.procs);
        let or_dash = |f: fn(&SeedCase) -> String| s.as_ref().map_or("—".to_string(), f);
        t.row(vec![
            c.procs.to_string(),
            c.policy.to_string(),
            c.workload.to_string(),
            ms(c.avg_s),
            ms(mean_ci_s(c)),
            or_dash(|s| ms(s.avg_s)),
            f3(c.avg_voluntary_ctx),
            or_dash(|s| f3(s.avg_voluntary_ctx)),
            f3(c.avg_involuntary_ctx),
            or_dash(|s| f3(s.avg_involuntary_ctx)),
            or_dash(|s| s.procs.to_string()),
        ]);
    }
    t.with_note(format!(
        "avg time = (user + system) / processes, from wait4's rusage; ± = 95% interval of the mean over the \
         processes. The seed ran on a 4-core/8-thread i7-4710HQ with children free to use every CPU. Setting: \
         {placement}. 'seed procs' = the seed's case used for comparison (nearest process count). {}",
        startup_note(cases)
    ))
}

/// Wall time, turnaround and throughput (the seed did not measure these).
pub fn timing_table(cases: &[CaseResult], placement: &str) -> Table {
    let mut t = Table::new(
        "Wall time, turnaround (release → reap) and throughput",
        &["procs", "policy", "workload", "wall s", "p50 ms", "p95 ms", "max ms", "procs/s", "done", "killed"],
    )
    .keyed(&["policy", "workload", "procs"]);
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
    t.with_note(format!("Setting: {placement}. {}", startup_note(cases)))
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

/// FIFO's average involuntary switches are "far below" OTHER's when below this fraction of
/// them, beyond the spread.
pub const FAR_BELOW: f64 = 0.2;
/// FIFO's and RR's durations are "very similar" within this fraction of the larger.
pub const SIMILAR: f64 = 0.15;

/// The verdicts on seed 001's claims, and the start-up goal; `io_scale` is the io bytes of the
/// run over the calibrated default (below 1 the goal is not judged: it is for the calibrated size).
pub fn verdicts(cases: &[CaseResult], io_scale: f64) -> Vec<Verdict> {
    use LinuxPolicy::{Fifo, Other, Rr};
    let ns = procs_of(cases);
    let mut out = Vec::new();

    // 1. FIFO's involuntary context switches are far below OTHER's (cpu workload): per process
    // count, FIFO's per-process mean below FAR_BELOW × OTHER's beyond the spread.
    let claim = "SCHED_FIFO processes are pre-empted far less than SCHED_OTHER ones (CPU-bound: average \
                 involuntary context switches per process)";
    let mut parts = Vec::new();
    for n in &ns {
        let (Some(f), Some(o)) = (find(cases, Fifo, WorkloadKind::Cpu, *n), find(cases, Other, WorkloadKind::Cpu, *n))
        else {
            continue;
        };
        let scaled: Vec<f64> = o.involuntary.iter().map(|x| FAR_BELOW * x).collect();
        let v = judge::less(
            ClaimKind::SeedClaim,
            claim,
            ("FIFO", &f.involuntary),
            (&format!("{FAR_BELOW} × OTHER"), &scaled),
            " switches",
        );
        let seed = match (seed_case(Fifo, WorkloadKind::Cpu, *n), seed_case(Other, WorkloadKind::Cpu, *n)) {
            (Some(sf), Some(so)) => format!(
                "; seed, {} procs: FIFO {:.3} vs OTHER {:.3}",
                sf.procs, sf.avg_involuntary_ctx, so.avg_involuntary_ctx
            ),
            _ => String::new(),
        };
        parts.push((format!("{n} procs (OTHER {:.3}{seed})", o.avg_involuntary_ctx), v));
    }
    out.push(if parts.is_empty() {
        not_measured(claim, "needs the cpu workload under both other and fifo")
    } else {
        all_of(ClaimKind::SeedClaim, claim, parts)
    });

    // 2. SCHED_OTHER always takes the most time (CPU time per process), beyond the spread.
    let claim = "SCHED_OTHER always takes the most time (average CPU time per process)";
    let mut parts = Vec::new();
    for &n in &ns {
        for w in WorkloadKind::SEED {
            let Some(o) = find(cases, Other, w, n) else { continue };
            for rival in [Fifo, Rr] {
                let Some(r) = find(cases, rival, w, n) else { continue };
                let v = judge::less(
                    ClaimKind::SeedClaim,
                    claim,
                    (&rival.to_string(), &samples_ms(r)),
                    ("other", &samples_ms(o)),
                    " ms",
                );
                parts.push((format!("{n} {w}, {rival} vs other"), v));
            }
        }
    }
    out.push(if parts.is_empty() {
        not_measured(claim, "needs other with fifo or rr on the same workload")
    } else {
        all_of(ClaimKind::SeedClaim, claim, parts)
    });

    // 3. FIFO and RR have very similar durations: within 15% of the larger mean, beyond the spread.
    let claim = "SCHED_FIFO and SCHED_RR give very similar durations (within 15%)";
    let mut parts = Vec::new();
    for &n in &ns {
        for w in WorkloadKind::SEED {
            let (Some(f), Some(r)) = (find(cases, Fifo, w, n), find(cases, Rr, w, n)) else { continue };
            let tolerance = SIMILAR * 1e3 * f.avg_s.max(r.avg_s);
            let v = judge::agree(
                ClaimKind::SeedClaim,
                claim,
                ("fifo", &samples_ms(f)),
                ("rr", &samples_ms(r)),
                (tolerance * 1e3).round() / 1e3,
                " ms",
            );
            parts.push((format!("{n} {w}"), v));
        }
    }
    out.push(if parts.is_empty() {
        not_measured(claim, "needs fifo and rr")
    } else {
        all_of(ClaimKind::SeedClaim, claim, parts)
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

    out.extend(per_workload_verdicts(cases));
    out.push(startup_verdict(cases, io_scale));
    out
}

/// Several judged comparisons as one verdict: any that goes against the claim decides it,
/// then any that is inconclusive; the claim holds only when every one holds.
pub fn all_of(kind: ClaimKind, claim: &str, parts: Vec<(String, Verdict)>) -> Verdict {
    if parts.is_empty() {
        return Verdict::not_measured(kind, claim, "no case to compare");
    }
    let against = parts.iter().find(|(_, v)| matches!(v.outcome, Outcome::Differs | Outcome::NotMet));
    let unsure = parts.iter().find(|(_, v)| v.outcome == Outcome::Inconclusive);
    let outcome = match (against, unsure) {
        (Some((_, v)), _) => v.outcome,
        (None, Some(_)) => Outcome::Inconclusive,
        (None, None) => parts[0].1.outcome,
    };
    let detail: Vec<String> =
        parts.iter().map(|(what, v)| format!("{what}: {} — {}", v.outcome.word(), v.detail)).collect();
    Verdict::new(kind, claim, outcome, detail.join("; "))
}

/// Per-process CPU time in ms (the samples of a case).
fn samples_ms(c: &CaseResult) -> Vec<f64> {
    c.cpu_s.iter().map(|x| x * 1e3).collect()
}

/// "`w` runs fastest under `best`": its mean CPU per process is below each of `others`' beyond
/// the spread, at every process count.
fn fastest_under(
    cases: &[CaseResult],
    claim: &str,
    w: WorkloadKind,
    best: LinuxPolicy,
    others: &[LinuxPolicy],
) -> Verdict {
    let mut parts = Vec::new();
    for n in procs_of(cases) {
        let Some(b) = find(cases, best, w, n) else { continue };
        for &o in others {
            let Some(oc) = find(cases, o, w, n) else { continue };
            let (bs, os) = (samples_ms(b), samples_ms(oc));
            let v = judge::less(ClaimKind::SeedClaim, claim, (best.kernel_name(), &bs), (o.kernel_name(), &os), " ms");
            parts.push((format!("{n} procs, {best} vs {o}"), v));
        }
    }
    all_of(ClaimKind::SeedClaim, claim, parts)
}

/// Two policies "give very similar durations" for the mixed workload when their mean CPU per
/// process agrees within this fraction of the larger mean: the seed's own winning margins for
/// IO (FIFO over RR) and CPU (RR over FIFO) were 1–7%.
pub const NO_WINNER_TOLERANCE: f64 = 0.05;

/// The seed's three per-workload claims (section 5, Analysis), judged on per-process samples.
pub fn per_workload_verdicts(cases: &[CaseResult]) -> Vec<Verdict> {
    use LinuxPolicy::{Fifo, Other, Rr};
    let mut out = vec![
        fastest_under(
            cases,
            "\"IO bound processes typically finish fastest with SCHED_FIFO\" (§5): io CPU time per process \
             under FIFO below OTHER's and RR's",
            WorkloadKind::Io,
            Fifo,
            &[Other, Rr],
        ),
        fastest_under(
            cases,
            "\"CPU bound processes typically have shortest duration when run with SCHED_RR\" (§5): cpu CPU time \
             per process under RR below OTHER's and FIFO's",
            WorkloadKind::Cpu,
            Rr,
            &[Other, Fifo],
        ),
    ];
    let claim = format!(
        "\"There is no clear winner for best scheduling policy for mixed processes\" (§5): mixed CPU time per \
         process under FIFO and RR agrees within {:.0}% (the seed's own winning margins were 1–7%)",
        NO_WINNER_TOLERANCE * 100.0
    );
    let mut parts = Vec::new();
    for n in procs_of(cases) {
        let (Some(f), Some(r)) = (find(cases, Fifo, WorkloadKind::Mixed, n), find(cases, Rr, WorkloadKind::Mixed, n))
        else {
            continue;
        };
        let (fs, rs) = (samples_ms(f), samples_ms(r));
        // Rounded to µs so the detail prints it plainly.
        let tol = (NO_WINNER_TOLERANCE * stats::mean(&fs).max(stats::mean(&rs)) * 1e3).round() / 1e3;
        let v = judge::agree(ClaimKind::SeedClaim, claim.as_str(), ("SCHED_FIFO", &fs), ("SCHED_RR", &rs), tol, " ms");
        parts.push((format!("{n} procs"), v));
    }
    out.push(all_of(ClaimKind::SeedClaim, &claim, parts));
    out
}

/// The `empty` case's CPU per process is under this fraction of the io case's.
pub const STARTUP_LIMIT: f64 = 0.10;

/// schedlab's goal for the children: start-up (the `empty` case) under 10% of the io case's CPU
/// per process, under every policy and process count — judged as 10 × empty < io, when the io
/// case copies at least the calibrated bytes (`io_scale` ≥ 1).
pub fn startup_verdict(cases: &[CaseResult], io_scale: f64) -> Verdict {
    let claim = "Start-up is a small part of a child's CPU time: the empty case's CPU per process is under 10% \
                 of the io case's (at the calibrated io size)";
    if io_scale < 1.0 {
        return Verdict::not_measured(
            ClaimKind::Goal,
            claim,
            format!(
                "the io case copied {io_scale:.2} × the calibrated bytes (--quick or --io-bytes); {}",
                startup_note(cases)
            ),
        );
    }
    let mut parts = Vec::new();
    for n in procs_of(cases) {
        for c in cases.iter().filter(|c| c.procs == n && c.workload == WorkloadKind::Empty) {
            let Some(io) = find(cases, c.policy, WorkloadKind::Io, n) else { continue };
            if c.timed_out || c.interrupted {
                continue;
            }
            let scaled: Vec<f64> = samples_ms(c).iter().map(|x| x / STARTUP_LIMIT).collect();
            let ios = samples_ms(io);
            let v = judge::less(ClaimKind::Goal, claim, ("10 × empty", &scaled), ("io", &ios), " ms");
            parts.push((format!("{n} procs, {}", c.policy), v));
        }
    }
    all_of(ClaimKind::Goal, claim, parts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linux_policies::case::{CaseFrame, ChildOutcome};
    use schedlab_os::rusage::Usage;
    use LinuxPolicy::{Fifo, Other, Rr};

    /// A case whose children used `ms` of CPU each (all system time for io, user time otherwise).
    fn case(policy: LinuxPolicy, workload: WorkloadKind, procs: usize, ms: &[f64]) -> CaseResult {
        let kids: Vec<ChildOutcome> = ms
            .iter()
            .map(|&m| ChildOutcome {
                usage: Usage { user_s: m / 1e3, ..Default::default() },
                success: true,
                killed: false,
                turnaround_s: 0.1,
            })
            .collect();
        let frame = CaseFrame {
            policy,
            workload,
            procs,
            cpus: vec![1],
            priority: 0,
            deadline_runtime_ns: None,
            spawn_s: 0.0,
            wall_s: 1.0,
            timed_out: false,
            interrupted: false,
        };
        CaseResult::from_children(frame, &kids)
    }

    /// Five samples around `m` (± 2%).
    fn around(m: f64) -> Vec<f64> {
        [0.98, 0.99, 1.0, 1.01, 1.02].iter().map(|f| f * m).collect()
    }

    /// `c` with each child's involuntary switches set.
    fn preempted(mut c: CaseResult, per_child: &[f64]) -> CaseResult {
        c.involuntary = per_child.to_vec();
        c.avg_involuntary_ctx = stats::mean(per_child);
        c
    }

    #[test]
    fn fifo_far_below_other_is_judged_against_the_spread() {
        let cpu = |p, ms: f64, inv: f64| preempted(case(p, WorkloadKind::Cpu, 5, &around(ms)), &around(inv));
        let judge_with = |fifo: f64, other: f64| {
            let cases = vec![cpu(Other, 14.0, other), cpu(Fifo, 14.0, fifo)];
            verdict(&verdicts(&cases, 1.0), "pre-empted far less").clone()
        };
        // 0.1 against 0.2 × 2.5 = 0.5, each ± 2%: far below.
        assert_eq!(judge_with(0.1, 2.5).outcome, Outcome::Reproduced);
        // 0.5 against 0.5: within the spread, whatever the threshold says.
        let v = judge_with(0.5, 2.5);
        assert_eq!(v.outcome, Outcome::Inconclusive, "{v:?}");
        assert!(v.detail.contains("5 procs (OTHER 2.500"), "{}", v.detail);
        // 1.0 against 0.5: not far below.
        assert_eq!(judge_with(1.0, 2.5).outcome, Outcome::Differs);
    }

    #[test]
    fn other_slowest_and_fifo_like_rr_are_judged_against_the_spread() {
        let three = |o: f64, f: f64, r: f64| {
            vec![
                case(Other, WorkloadKind::Cpu, 5, &around(o)),
                case(Fifo, WorkloadKind::Cpu, 5, &around(f)),
                case(Rr, WorkloadKind::Cpu, 5, &around(r)),
            ]
        };
        let slowest = |c: &[CaseResult]| verdict(&verdicts(c, 1.0), "always takes the most").outcome;
        let similar = |c: &[CaseResult]| verdict(&verdicts(c, 1.0), "very similar").outcome;
        // OTHER 5 ms against 4 and 4.5 (± 2%): slowest beyond the spread; 4 and 4.5 within 15%.
        assert_eq!(slowest(&three(5.0, 4.0, 4.5)), Outcome::Reproduced);
        assert_eq!(similar(&three(5.0, 4.0, 4.5)), Outcome::Reproduced);
        // OTHER 4.0 against FIFO 4.01: within the spread.
        assert_eq!(slowest(&three(4.0, 4.01, 3.0)), Outcome::Inconclusive);
        // RR above OTHER beyond the spread: differs; FIFO 4 against RR 6 is 2 ms past 0.9 ms.
        assert_eq!(slowest(&three(5.0, 4.0, 6.0)), Outcome::Differs);
        assert_eq!(similar(&three(5.0, 4.0, 6.0)), Outcome::Differs);
    }

    fn verdict<'a>(vs: &'a [Verdict], starts: &str) -> &'a Verdict {
        vs.iter().find(|v| v.claim.contains(starts)).unwrap_or_else(|| panic!("no verdict on {starts}"))
    }

    #[test]
    fn io_fastest_under_fifo_is_judged_against_both_other_policies() {
        // FIFO 36 ms against OTHER 45 and RR 40 (each ± 2%): both differences are beyond the spread.
        let cases = vec![
            case(Other, WorkloadKind::Io, 5, &around(45.0)),
            case(Fifo, WorkloadKind::Io, 5, &around(36.0)),
            case(Rr, WorkloadKind::Io, 5, &around(40.0)),
        ];
        let vs = per_workload_verdicts(&cases);
        let v = verdict(&vs, "IO bound");
        assert_eq!((v.kind, v.outcome), (ClaimKind::SeedClaim, Outcome::Reproduced), "{v:?}");
        assert!(v.detail.contains("5 procs, fifo vs other") && v.detail.contains("5 procs, fifo vs rr"), "{v:?}");
        // RR faster than FIFO: the claim differs, whatever OTHER does.
        let cases = vec![
            case(Other, WorkloadKind::Io, 5, &around(45.0)),
            case(Fifo, WorkloadKind::Io, 5, &around(40.0)),
            case(Rr, WorkloadKind::Io, 5, &around(36.0)),
        ];
        assert_eq!(verdict(&per_workload_verdicts(&cases), "IO bound").outcome, Outcome::Differs);
    }

    #[test]
    fn cpu_fastest_under_rr_within_the_spread_is_inconclusive() {
        // RR 4.00 vs FIFO 4.01 ms, each ± 2%: the means differ by less than their spread.
        let cases = vec![
            case(Other, WorkloadKind::Cpu, 5, &around(5.0)),
            case(Fifo, WorkloadKind::Cpu, 5, &around(4.01)),
            case(Rr, WorkloadKind::Cpu, 5, &around(4.0)),
        ];
        let v = per_workload_verdicts(&cases).into_iter().find(|v| v.claim.contains("CPU bound")).unwrap();
        assert_eq!(v.outcome, Outcome::Inconclusive, "{v:?}");
        assert!(v.detail.contains("rr vs other: reproduced"), "{}", v.detail);
    }

    #[test]
    fn mixed_has_no_winner_when_fifo_and_rr_agree_within_the_tolerance() {
        let mixed = |f: f64, r: f64| {
            vec![case(Fifo, WorkloadKind::Mixed, 5, &around(f)), case(Rr, WorkloadKind::Mixed, 5, &around(r))]
        };
        // 7.00 vs 7.01 ms: |difference| + interval ≈ 0.2 ms, inside 5% of 7.01 = 0.35 ms.
        assert_eq!(verdict(&per_workload_verdicts(&mixed(7.0, 7.01)), "mixed").outcome, Outcome::Reproduced);
        // 7 vs 9 ms: a clear winner.
        assert_eq!(verdict(&per_workload_verdicts(&mixed(7.0, 9.0)), "mixed").outcome, Outcome::Differs);
        // No mixed case at all: not measured, said so.
        let v = verdict(&per_workload_verdicts(&[]), "mixed").clone();
        assert_eq!(v.outcome, Outcome::Inconclusive);
        assert!(v.detail.contains("not measured"), "{v:?}");
    }

    #[test]
    fn startup_is_a_goal_judged_as_ten_times_empty_against_io() {
        let mut cases =
            vec![case(Other, WorkloadKind::Io, 5, &around(37.0)), case(Other, WorkloadKind::Empty, 5, &around(0.8))];
        let v = startup_verdict(&cases, 1.0);
        assert_eq!((v.kind, v.outcome), (ClaimKind::Goal, Outcome::Met), "{v:?}");
        // A run with a tenth of the io bytes is not judged against a goal for the full size.
        let v = startup_verdict(&cases, 0.1);
        assert_eq!(v.outcome, Outcome::Inconclusive, "{v:?}");
        assert!(v.detail.contains("0.10 × the calibrated bytes") && v.detail.contains("empty 0.80 ms"), "{v:?}");
        let note = startup_note(&cases);
        assert!(note.contains("empty 0.80 ms vs io 37.00 ms (2.2%)"), "{note}");
        // 5 ms of start-up against 37 ms of io is 13.5%: not met.
        cases[1] = case(Other, WorkloadKind::Empty, 5, &around(5.0));
        assert_eq!(startup_verdict(&cases, 1.0).outcome, Outcome::NotMet);
        assert!(startup_note(&cases[..1]).contains("not measured"));
    }

    #[test]
    fn all_of_lets_a_contrary_part_decide_then_an_unsure_one() {
        let v = |o| Verdict::new(ClaimKind::SeedClaim, "c", o, "d");
        let parts =
            |os: &[Outcome]| os.iter().enumerate().map(|(i, &o)| (format!("part {i}"), v(o))).collect::<Vec<_>>();
        use Outcome::{Differs, Inconclusive, Reproduced};
        assert_eq!(all_of(ClaimKind::SeedClaim, "c", parts(&[Reproduced, Reproduced])).outcome, Reproduced);
        assert_eq!(all_of(ClaimKind::SeedClaim, "c", parts(&[Reproduced, Inconclusive])).outcome, Inconclusive);
        assert_eq!(all_of(ClaimKind::SeedClaim, "c", parts(&[Inconclusive, Differs])).outcome, Differs);
        assert_eq!(all_of(ClaimKind::SeedClaim, "c", vec![]).outcome, Inconclusive);
    }

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
