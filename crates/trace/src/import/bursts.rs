//! A task's timeline as CPU bursts and blocked intervals: a blocked span (switch-out in S/D/…
//! until the wake-up) ends a CPU burst; the time spent runnable but waiting is not part of any
//! burst (the simulator adds its own). Each CPU burst keeps the runs it was made of, so a point
//! of the trace can be found in it (where another task was woken), and each blocked interval
//! keeps the task that woke it from task context, if one did. Reads of the task's own CPU clock
//! (when the trace has them) become points of its bursts.

use super::{note, Note, NoteKind};
use crate::timeline::{TaskTimeline, Waker};

/// The burst structure of one task from its import start on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Bursts {
    /// CPU, blocked, CPU, … in ns (odd count, CPU first and last).
    pub lengths: Vec<u64>,
    /// Per CPU burst, the runs (trace time) it was made of, in order.
    pub runs: Vec<Vec<(u64, u64)>>,
    /// Per CPU burst, the CPU its first run was on.
    pub cpus: Vec<usize>,
    /// Per blocked interval, the task-context wake-up that ended it (for merged blocks, the
    /// last one's).
    pub wakers: Vec<Option<Waker>>,
    /// Per blocked interval, when it ended on the trace's clock (the wake-up).
    pub ends: Vec<u64>,
    /// Where it read its own CPU clock: (CPU burst, CPU time into it), in order.
    pub reads: Vec<(usize, u64)>,
}

impl Bursts {
    /// Where trace time `ts` falls in the task's CPU bursts: (CPU burst index, CPU time into it).
    /// None if the task was not running then.
    pub fn position(&self, ts: u64) -> Option<(usize, u64)> {
        for (k, runs) in self.runs.iter().enumerate() {
            let mut done = 0;
            for &(a, b) in runs {
                if a <= ts && ts <= b {
                    return Some((k, done + (ts - a)));
                }
                done += b - a;
            }
        }
        None
    }
}

/// CPU bursts and blocked times from `start` on, with a zero-length block that waits for
/// `waker` at each `(at, waker)` of `replies` (see [`super::replies`]). None when it has no
/// CPU time there. May move `start` (a block before the first run).
pub(crate) fn bursts_of(
    t: &TaskTimeline,
    replies: &[(u64, Waker)],
    start: &mut u64,
    notes: &mut Vec<Note>,
) -> Option<Bursts> {
    enum Item {
        Run(u64, u64, usize),
        Block(u64, u64, Option<Waker>),
    }
    let mut items: Vec<(u64, Item)> = Vec::new();
    for r in t.runs.iter().filter(|r| r.end > *start || (r.end == *start && r.start == *start)) {
        let s = r.start.max(*start);
        items.push((s, Item::Run(s, r.end, r.cpu)));
    }
    // A block going on at the start counts from the start (it then moves the start to its end).
    for b in t.blocked.iter().filter(|b| b.end > *start || b.start >= *start) {
        let s = b.start.max(*start);
        items.push((s, Item::Block(s, b.end, b.woken_by)));
    }
    for &(at, waker) in replies.iter().filter(|(at, _)| *at > *start) {
        items.push((at, Item::Block(at, at, Some(waker))));
    }
    // A block starting where a run ends comes after that run.
    items.sort_by_key(|(ts, it)| (*ts, matches!(it, Item::Run(..))));
    let mut out = Bursts::default();
    let (mut cpu, mut runs) = (0u64, Vec::new());
    for (_, it) in items {
        match it {
            Item::Run(a, b, on) => {
                if runs.is_empty() {
                    out.cpus.push(on);
                }
                cpu += b - a;
                runs.push((a, b));
            }
            Item::Block(s, e, _) if runs.is_empty() && out.lengths.is_empty() => {
                note(
                    notes,
                    t.pid,
                    NoteKind::BlockedAtStart,
                    format!("blocked from {s} before it ran: start moved to its wake-up at {e}"),
                );
                *start = e;
            }
            Item::Block(s, e, waker) if runs.is_empty() => {
                note(
                    notes,
                    t.pid,
                    NoteKind::MergedBlocks,
                    format!("blocked again at {s} without running: merged with the block before"),
                );
                *out.lengths.last_mut().expect("a block") += e - s;
                *out.wakers.last_mut().expect("a block") = waker;
                *out.ends.last_mut().expect("a block") = e;
            }
            Item::Block(s, e, waker) => {
                if cpu == 0 {
                    note(
                        notes,
                        t.pid,
                        NoteKind::ZeroBurst,
                        format!("CPU burst ending at {s} is 0 ns at the trace's resolution: 1 ns used"),
                    );
                    cpu = 1;
                }
                out.lengths.push(cpu);
                out.runs.push(std::mem::take(&mut runs));
                out.lengths.push(e - s);
                out.wakers.push(waker);
                out.ends.push(e);
                cpu = 0;
            }
        }
    }
    if !runs.is_empty() {
        if cpu == 0 {
            note(notes, t.pid, NoteKind::ZeroBurst, "last CPU burst is 0 ns at the trace's resolution: 1 ns used");
            cpu = 1;
        }
        out.lengths.push(cpu);
        out.runs.push(runs);
    } else if !out.lengths.is_empty() {
        let blocked = out.lengths.pop().expect("a block");
        out.wakers.pop();
        out.ends.pop();
        note(
            notes,
            t.pid,
            NoteKind::NoRunAfterLastBlock,
            format!(
                "woken after its last block ({blocked} ns) but not run again before the end: that block is dropped"
            ),
        );
    }
    out.reads = t.cpu_clock_reads.iter().filter(|&&ts| ts >= *start).filter_map(|&ts| out.position(ts)).collect();
    (!out.lengths.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::{BlockedSpan, Run};

    #[test]
    fn runs_are_kept_per_burst_and_points_are_found_in_them() {
        let mut t = TaskTimeline::new(5, "t", 0);
        // Burst 0: runs 0–10 and 20–30 (pre-empted between); blocked 30–50 (woken by 7 at 49);
        // burst 1: run 50–55.
        t.runs = vec![
            Run { cpu: 0, start: 0, end: 10 },
            Run { cpu: 0, start: 20, end: 30 },
            Run { cpu: 0, start: 50, end: 55 },
        ];
        let waker = Waker { pid: 7, at: 49 };
        t.blocked = vec![BlockedSpan { woken_by: Some(waker), ..BlockedSpan::new(30, 50, "S") }];
        t.cpu_clock_reads = vec![8, 15, 29, 53];
        let (mut start, mut notes) = (0, Vec::new());
        let b = bursts_of(&t, &[], &mut start, &mut notes).unwrap();
        assert_eq!(b.lengths, vec![20, 20, 5]);
        assert_eq!(b.wakers, vec![Some(waker)]);
        assert_eq!(b.position(5), Some((0, 5)));
        assert_eq!(b.position(25), Some((0, 15)), "10 of the first run, then 5 into the second");
        assert_eq!(b.position(52), Some((1, 2)));
        assert_eq!(b.position(15), None, "pre-empted then");
        assert_eq!(b.position(40), None, "blocked then");
        assert_eq!(b.reads, vec![(0, 8), (0, 19), (1, 3)], "a read while pre-empted cannot be: dropped");
        assert!(notes.is_empty());
    }
}
