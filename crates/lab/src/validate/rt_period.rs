//! Where the host's RT period boundaries fell during a live run. When classic RT throttling
//! stops a CPU's RT tasks, the running one goes to idle still runnable — the trace shows that
//! switch — and the first of them comes back at the next period boundary; on this host the
//! switch back in, out of idle, is not recorded. The hogs note their own time off the CPU
//! (`workload bursts --gaps-out`): at each throttle every hog is off the CPU, and the first gap
//! to end ends at the boundary (the throttled hog, or the other one when the throttle came with
//! the end of its round-robin turn). The period timer's phase is set when it starts, after every
//! stretch without RT work, so it is found per run.

use schedlab_trace::{parse, EventKind, Format, Pid, RtPeriod};
use std::collections::BTreeMap;

/// How far a gap's start may lie from the trace's switch to idle (the hog's last clock read
/// comes just before it).
const MATCH_NS: u64 = 1_000_000;

/// The RT period in `text` (a tracefs trace), from the gaps each RT hog noted (`gaps`, by pid;
/// ns on the trace's clock), or None when no hog was throttled. Also the number of throttles
/// seen.
pub fn infer(text: &str, gaps: &BTreeMap<Pid, Vec<(u64, u64)>>, period_ns: u64) -> Option<(RtPeriod, usize)> {
    if gaps.is_empty() || period_ns == 0 {
        return None;
    }
    let mut returns = Vec::new();
    for e in parse(text, Some(Format::Tracefs)).events {
        let EventKind::Switch(s) = &e.kind else { continue };
        if s.next_pid != 0 || !s.prev_state.starts_with('R') {
            continue;
        }
        let Some(own) = gaps.get(&s.prev_pid) else { continue };
        if !own.iter().any(|(from, _)| from.abs_diff(e.ts) <= MATCH_NS) {
            continue;
        }
        let first_back = gaps
            .values()
            .flatten()
            .filter(|(from, to)| *from <= e.ts + MATCH_NS && *to > e.ts)
            .map(|(_, to)| *to)
            .min();
        returns.extend(first_back);
    }
    let first = *returns.first()?;
    // Offsets from the first return, folded into (−period/2, period/2]: the median of a cluster
    // that may straddle a boundary of the modulus.
    let p = period_ns as i128;
    let mut offsets: Vec<i128> = returns
        .iter()
        .map(|&r| {
            let d = (r as i128 - first as i128).rem_euclid(p);
            if d > p / 2 {
                d - p
            } else {
                d
            }
        })
        .collect();
    offsets.sort_unstable();
    let median = offsets[offsets.len() / 2];
    let phase = (first as i128 + median).rem_euclid(p) as u64;
    Some((RtPeriod { phase_ns: phase, period_ns }, returns.len()))
}

/// `sched_rt_period_us` of the host, in ns.
pub fn host_period_ns() -> Option<u64> {
    let us: u64 = std::fs::read_to_string("/proc/sys/kernel/sched_rt_period_us").ok()?.trim().parse().ok()?;
    Some(us * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sw(ts_us: u64, prev: Pid, state: &str, next: Pid) -> String {
        format!(
            "p{prev}-{prev} [001] d..2. {}.{:06}: sched_switch: prev_comm=p{prev} prev_pid={prev} prev_prio=89 \
             prev_state={state} ==> next_comm=p{next} next_pid={next} next_prio=120",
            ts_us / 1_000_000,
            ts_us % 1_000_000
        )
    }

    #[test]
    fn the_boundary_is_where_a_throttled_hogs_gap_ends() {
        // Hog 5 throttled at 10.528 s and 11.528 s; its gaps end at 10.580 and 11.580 s. A
        // switch to idle while blocked (S) and one of a task without gaps say nothing.
        let text = [
            sw(10_528_016, 5, "R", 0),
            sw(10_700_000, 5, "S", 0),
            sw(11_528_016, 5, "R", 0),
            sw(11_600_000, 6, "R", 0),
        ]
        .join("\n");
        let gaps: BTreeMap<Pid, Vec<(u64, u64)>> = [(
            5,
            vec![(10_100_000_000, 10_190_000_000), (10_528_000_000, 10_580_027_000), (11_527_990_000, 11_580_031_000)],
        )]
        .into();
        let (rt, n) = infer(&text, &gaps, 1_000_000_000).unwrap();
        assert_eq!(n, 2);
        assert_eq!(rt.period_ns, 1_000_000_000);
        assert!((580_027_000..=580_031_000).contains(&rt.phase_ns), "{}", rt.phase_ns);
        assert!(infer(&text, &BTreeMap::new(), 1_000_000_000).is_none());
        // Hog 6 was off the CPU (its turn over) and came back first, at the boundary; hog 5's
        // own gap ends a turn later.
        let text = sw(10_528_016, 5, "R", 0);
        let gaps = [(5, vec![(10_528_000_000, 10_680_000_000)]), (6, vec![(10_500_000_000, 10_580_020_000)])].into();
        assert_eq!(infer(&text, &gaps, 1_000_000_000).unwrap().0.phase_ns, 580_020_000);
        // Returns on both sides of a whole second still give one phase.
        let text = [sw(10_999_000, 5, "R", 0), sw(11_999_000, 5, "R", 0)].join("\n");
        let gaps = [(5, vec![(10_999_000_000, 10_999_999_990), (11_999_000_000, 12_000_000_010)])].into();
        let (rt, _) = infer(&text, &gaps, 1_000_000_000).unwrap();
        assert!(rt.phase_ns < 20 || rt.phase_ns > 999_999_980, "{}", rt.phase_ns);
    }
}
