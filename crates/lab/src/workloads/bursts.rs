//! A task that does what a simulator workload says: CPU bursts and sleeps in turn, each burst
//! measured as time on the CPU (so a burst takes as long as the scheduler makes it) with about
//! one system call per burst, each sleep a clock_nanosleep. This is how `validate` and `trace record` run a workload for
//! real, so the live run and the simulation start from the same description.

use schedlab_os::clock::{monotonic_ns, sleep_until_ns, thread_cpu_ns};
use std::str::FromStr;

/// One phase of the pattern.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Phase {
    /// Use this much CPU time (ns); `None` = forever (a hog, ended by a signal).
    Run(Option<u64>),
    /// Sleep this long (ns).
    Sleep(u64),
}

/// A pattern: run, sleep, run, … starting with a run, in ms on the command line (`3,7,3`,
/// `3,7` to repeat as a periodic task, or `inf`), repeated as asked.
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern(pub Vec<Phase>);

impl FromStr for Pattern {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut phases = Vec::new();
        for (i, part) in s.split(',').map(str::trim).enumerate() {
            let run = i % 2 == 0;
            if run && matches!(part, "inf" | "forever") {
                phases.push(Phase::Run(None));
                continue;
            }
            let ms: f64 = part
                .parse()
                .map_err(|_| format!("'{part}' in '{s}' is not a number of ms (or `inf` for an endless run)"))?;
            if !ms.is_finite() || !(0.0..=86_400_000.0).contains(&ms) {
                return Err(format!("'{part}' in '{s}': a phase is 0..86400000 ms"));
            }
            let ns = (ms * 1e6).round() as u64;
            phases.push(if run { Phase::Run(Some(ns)) } else { Phase::Sleep(ns) });
        }
        if phases[..phases.len() - 1].contains(&Phase::Run(None)) {
            return Err(format!("'{s}': only the last run can be endless (`inf`)"));
        }
        Ok(Pattern(phases))
    }
}

/// The longest gap between two clock reads that still counts as running. Gaps of 20–100 µs
/// without a context switch are common in a VM (its timer and device interrupts), and the
/// kernel charges them to the running thread; pre-emptions by another CPU-bound task last a
/// tick or more. Short pre-emptions counted as running are made up by the check at the end.
const OFF_CPU_GAP_NS: u64 = 300_000;

/// Spin until the calling thread has had `ns` more of CPU time as the kernel counts it
/// (`CLOCK_THREAD_CPUTIME_ID`), entering the kernel a few times per burst: each stretch is timed
/// by [`spin_wall_stretch`], then the thread's CPU clock is read and what is left spun again.
/// Reading the CPU clock all along would be a system call per read, and each one runs the
/// scheduler's `update_curr()`, so the kernel would end an expired slice at the next read instead
/// of at the next tick — unlike a CPU-bound program, which never enters the kernel while it
/// computes.
pub fn spin_cpu(ns: u64) {
    let start = thread_cpu_ns();
    let mut left = ns;
    while left > 0 {
        spin_wall_stretch(stretch(left));
        left = ns.saturating_sub(thread_cpu_ns() - start);
    }
}

/// How much of `left` to spin before reading the CPU clock again: the kernel charges a thread
/// for the interrupt and the switch around each pre-emption (tens of µs in a VM), which the
/// wall clock cannot see, so a long stretch stops an eighth short and the last ones are short.
fn stretch(left: u64) -> u64 {
    const LAST_NS: u64 = 2_000_000;
    if left > LAST_NS {
        left - left / 8
    } else {
        left
    }
}

/// Spin until about `ns` of running has passed by the vDSO's monotonic clock (no system call),
/// not counting gaps longer than [`OFF_CPU_GAP_NS`] (the thread was off its CPU).
pub fn spin_wall(ns: u64) {
    let mut used = 0;
    while used < ns {
        used += spin_wall_stretch(ns - used);
    }
}

/// Spin for up to `ns` of running by the vDSO's monotonic clock and return the running counted,
/// stopping early after a gap longer than [`OFF_CPU_GAP_NS`]. Such a gap is a pre-emption (not
/// CPU time) or a stall of the virtual CPU by its host (CPU time: the guest kernel charges it to
/// the running thread); only the thread's CPU clock tells which, so [`spin_cpu`] reads it then.
fn spin_wall_stretch(ns: u64) -> u64 {
    let (mut used, mut last) = (0, monotonic_ns());
    while used < ns {
        std::hint::spin_loop();
        let now = monotonic_ns();
        let gap = now - last;
        if gap > OFF_CPU_GAP_NS {
            break;
        }
        used += gap;
        last = now;
    }
    used
}

/// Run `pattern` `repeat` times (a sleep of `gap` ms between repetitions, when the pattern is
/// repeated), or until `stop()`; returns the repetitions done. An endless run notes its time off
/// the CPU in `gaps` when given.
pub fn run(
    pattern: &Pattern,
    repeat: u64,
    gap_ns: u64,
    stop: impl Fn() -> bool,
    mut gaps: Option<&mut super::gaps::Sink>,
) -> u64 {
    let mut done = 0;
    while done < repeat && !stop() {
        if done > 0 && gap_ns > 0 {
            let _ = sleep_until_ns(monotonic_ns() + gap_ns);
        }
        for p in &pattern.0 {
            match *p {
                Phase::Run(Some(ns)) => spin_cpu(ns),
                Phase::Run(None) => {
                    match gaps.as_deref_mut() {
                        Some(sink) => super::gaps::spin(sink, &stop),
                        None => {
                            while !stop() {
                                spin_wall(1_000_000);
                            }
                        }
                    }
                    return done;
                }
                Phase::Sleep(ns) => {
                    let _ = sleep_until_ns(monotonic_ns() + ns);
                }
            }
        }
        done += 1;
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_os::clock::thread_cpu_ns;

    #[test]
    fn patterns_parse_and_bad_ones_are_named() {
        let p: Pattern = "3,7,1.5".parse().unwrap();
        assert_eq!(p.0, vec![Phase::Run(Some(3_000_000)), Phase::Sleep(7_000_000), Phase::Run(Some(1_500_000))]);
        assert_eq!("inf".parse::<Pattern>().unwrap().0, vec![Phase::Run(None)]);
        assert_eq!("3,7".parse::<Pattern>().unwrap().0, vec![Phase::Run(Some(3_000_000)), Phase::Sleep(7_000_000)]);
        assert!("inf,3,1".parse::<Pattern>().unwrap_err().contains("only the last"));
        assert!("3,x,1".parse::<Pattern>().unwrap_err().contains("'x'"));
        assert!("-1".parse::<Pattern>().is_err());
    }

    #[test]
    fn a_burst_uses_the_cpu_time_asked_for() {
        let t0 = thread_cpu_ns();
        let p: Pattern = "5,1,5".parse().unwrap();
        assert_eq!(run(&p, 2, 0, || false, None), 2);
        let used = thread_cpu_ns() - t0;
        // 4 bursts of 5 ms of CPU: never under (each burst ends on the CPU clock), and over by
        // little — a pre-emption's charge per burst, or a stall of the virtual CPU (charged to
        // the running thread as CPU time) near a burst's end: 1.5 ms a burst at most. A burst
        // too many would be 5 ms over.
        assert!((20_000_000..26_000_000).contains(&used), "{used} ns");
    }
}
