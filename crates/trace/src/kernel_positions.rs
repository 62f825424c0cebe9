//! The kernel's own placing of fair tasks, read beside a trace, for the shadow
//! ([`crate::shadow`]) to set its state right by.
//!
//! The shadow carries each task's lag from run to run as the rules say, from the trace's switch
//! and wake-up times. Those are printed to the µs, and the lags are that sensitive: on a pipe
//! ping-pong pair beside a hog (a switch every 50 µs) a bias of a tenth of a µs per switch moves
//! the pair's lags against the hog's by a quarter of a millisecond a second, and a start at lag 0
//! is tens of µs to milliseconds off the kernel's. `/proc/<tid>/sched` gives what the kernel has:
//! `se.vruntime` as of the task's last update, which for a task waiting on the queue (neither
//! running nor placed since it was read) is where it still is, and for the running task is where
//! it was at `se.exec_start` — a time on the run queue's task clock, which a waiting task's last
//! switch-out lines up with the trace's. The tasks read in one round then say where the kernel
//! has them against each other, and [`shifts`] says how far to move each in the shadow so that
//! its places agree, with the queue's average left where it is.

use crate::event::Pid;

/// One reading of one task: when (trace ns, taken before the read), its `se.vruntime` and the
/// time of the update that set it, `se.exec_start` (ns on the run queue's task clock, which runs
/// behind the trace's clock by the interrupt time so far: [`clock_offset`] lines them up).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelPosition {
    pub at: u64,
    pub pid: Pid,
    pub vruntime: i64,
    pub exec_start: i64,
}

/// The task clock's offset from the trace's (task clock − trace ns) in a round, from a task the
/// trace shows switched out last at `left_at` and not run since: the kernel's last update of it
/// was that switch (its charge ends a µs or so before the traced switch, within the µs the trace
/// prints).
pub fn clock_offset(reading: &KernelPosition, left_at: u64) -> i64 {
    reading.exec_start - left_at as i64
}

/// The first line of a positions file ([`to_text`], [`parse_text`]).
pub const HEADER: &str = "# schedlab kernel positions: trace_ns tid se.vruntime_ns se.exec_start_ns";

/// Readings as text, one per line after [`HEADER`]: what `validate` saves beside each trace
/// and `trace shadow --positions` reads.
pub fn to_text(readings: &[KernelPosition]) -> String {
    let mut out = String::from(HEADER);
    out.push('\n');
    for r in readings {
        out.push_str(&format!("{} {} {} {}\n", r.at, r.pid, r.vruntime, r.exec_start));
    }
    out
}

/// Readings from [`to_text`]'s lines (`#` lines and blank ones skipped); the first line that is
/// not four integers is an error naming it.
pub fn parse_text(text: &str) -> Result<Vec<KernelPosition>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let bad = || format!("line {}: expected `trace_ns tid vruntime_ns exec_start_ns`, got `{line}`", n + 1);
        if f.len() != 4 {
            return Err(bad());
        }
        out.push(KernelPosition {
            at: f[0].parse().map_err(|_| bad())?,
            pid: f[1].parse().map_err(|_| bad())?,
            vruntime: f[2].parse().map_err(|_| bad())?,
            exec_start: f[3].parse().map_err(|_| bad())?,
        });
    }
    Ok(out)
}

/// How far after a round's time (taken before its reads) a running task's last update may be
/// and still be believed: a round's reads take tens of µs.
pub const ROUND_SLACK_NS: u64 = 100_000;

/// Readings taken within this of each other are one round (a reader goes through the tasks one
/// file after the other; a round takes tens of µs).
pub const ROUND_GAP_NS: u64 = 1_000_000;

/// The readings in rounds, each in time order: a new round where the next reading comes more
/// than [`ROUND_GAP_NS`] after the last.
pub fn rounds(readings: &[KernelPosition]) -> Vec<Vec<KernelPosition>> {
    let mut sorted = readings.to_vec();
    sorted.sort_by_key(|r| (r.at, r.pid));
    let mut out: Vec<Vec<KernelPosition>> = Vec::new();
    for r in sorted {
        match out.last_mut() {
            Some(round) if r.at <= round.last().map_or(0, |l| l.at) + ROUND_GAP_NS => round.push(r),
            _ => out.push(vec![r]),
        }
    }
    out
}

/// How far to move each task so that the model's places match the kernel's: the arithmetic
/// lives beside the run queue it moves ([`schedlab_sim::policies::eevdf::places`]), which the
/// `linux` replay's start uses too.
pub use schedlab_sim::policies::eevdf::places::{carried, shifts, Compared};

#[cfg(test)]
mod tests {
    use super::*;

    fn at(at: u64, pid: Pid) -> KernelPosition {
        KernelPosition { at, pid, vruntime: 0, exec_start: 0 }
    }

    #[test]
    fn positions_survive_their_text_and_a_bad_line_is_named() {
        let r = vec![KernelPosition { at: 5, pid: 42, vruntime: -7, exec_start: 9 }, at(6, 43)];
        assert_eq!(parse_text(&to_text(&r)), Ok(r));
        let e = parse_text("# x\n1 2 3 4\n1 2 three 4\n").unwrap_err();
        assert!(e.starts_with("line 3:"), "{e}");
    }

    #[test]
    fn readings_within_a_millisecond_of_the_last_are_one_round() {
        let r = rounds(&[at(50_000_000, 2), at(50_000_040, 3), at(100_000_000, 2), at(50_000_020, 1)]);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].iter().map(|r| r.pid).collect::<Vec<_>>(), vec![2, 1, 3]);
        assert_eq!(r[1].len(), 1);
    }

    #[test]
    fn the_moves_make_every_offset_the_weighted_mean_and_sum_to_zero_by_weight() {
        // A hog (nice 0) 1000 ahead in the kernel's frame and two threads 700 and 1300 ahead: the
        // mean is 1000.
        let c = |kernel, shadow| Compared { weight: 1024, kernel, model: shadow };
        assert_eq!(shifts(&[c(5_000, 4_000), c(2_700, 2_000), c(9_300, 8_000)]), vec![0, -300, 300]);
        // Weights 3121 and 1024: offsets 0 and 4145 → mean 1024, moves −1024 and 3121.
        let s = shifts(&[
            Compared { weight: 3121, kernel: 10, model: 10 },
            Compared { weight: 1024, kernel: 4_155, model: 10 },
        ]);
        assert_eq!(s, vec![-1024, 3121]);
        assert_eq!(3121 * s[0] + 1024 * s[1], 0);
        // One task alone: nothing to compare it with.
        assert_eq!(shifts(&[c(5, 1)]), vec![0]);
    }
}
