//! Replies the trace does not show. A task that writes to a partner blocked on a pipe (or a
//! socket, a futex) wakes it; when the woken partner pre-empts the writer at once, before the
//! writer reaches its own read, the partner runs, writes its reply and blocks — and the writer,
//! when it runs again, finds the reply waiting: its read does not block, so the trace records
//! no block and no wake-up for it. Imported as it stands, the writer's CPU burst would run on
//! through every such read, and a replay that does not pre-empt at that write lets it run many
//! messages without its partner.
//!
//! The pattern is recognised from the trace alone: a run of task B that ends with B still
//! runnable, the task A it woke last in that run switched in in its place on the same CPU, and
//! A blocked again before B ran next, in a block that B ended. B's run is then given a blocked
//! interval of length zero at its end that lasts until A wakes it, and A wakes B just before it
//! blocked (its reply): as long before as A's recorded wake-ups of B come before its blocks (the
//! median; the write precedes the read that blocks). In a replay where A pre-empts B, B finds
//! the wake-up pending and runs on without leaving the CPU, as it did live; where A does not, B
//! blocks until A replies.

use crate::event::Pid;
use crate::timeline::{Timeline, Waker};
use std::collections::{BTreeMap, BTreeSet};

/// Per task of `pids`: (trace time, the reply's waker) for each of its runs that ended as above.
pub(crate) fn inferred(tl: &Timeline, pids: &BTreeSet<Pid>) -> BTreeMap<Pid, Vec<(u64, Waker)>> {
    // Every wake-up given by one selected task to another: waker → [(when, woken task, the index
    // of the block it ended)], in time order.
    let mut given: BTreeMap<Pid, Vec<(u64, Pid, usize)>> = BTreeMap::new();
    for &a in pids {
        let Some(t) = tl.tasks.get(&a) else { continue };
        for (k, b) in t.blocked.iter().enumerate() {
            if let Some(w) = b.woken_by.filter(|w| w.pid != a && pids.contains(&w.pid)) {
                given.entry(w.pid).or_default().push((w.at, a, k));
            }
        }
    }
    for v in given.values_mut() {
        v.sort_unstable();
    }
    let lead = reply_leads(tl, &given);
    let mut out: BTreeMap<Pid, Vec<(u64, Waker)>> = BTreeMap::new();
    for (&b, wakes) in &given {
        let tb = &tl.tasks[&b];
        for pair in tb.runs.windows(2) {
            let (run, next) = (&pair[0], &pair[1]);
            if tb.blocks_at(run.end) {
                continue; // the trace shows the block.
            }
            let last = wakes.partition_point(|w| w.0 <= run.end);
            let Some(&(at, a, k)) = last.checked_sub(1).map(|i| &wakes[i]) else { continue };
            if at < run.start {
                continue;
            }
            let ta = &tl.tasks[&a];
            let woken_end = ta.blocked[k].end;
            let switched_in = ta.run_starting_at(run.end).is_some_and(|r| r.cpu == run.cpu && r.start >= woken_end);
            let Some(reply) = ta.blocked.get(k + 1) else { continue };
            let replied = reply.start >= run.end
                && reply.start <= next.start
                && reply.woken_by.is_some_and(|w| w.pid == b && w.at >= next.start);
            if !(switched_in && replied) {
                continue;
            }
            let Some(last) = ta.run_ending_at(reply.start) else { continue };
            let at = reply.start.saturating_sub(lead.get(&(a, b)).copied().unwrap_or(0)).max(last.start);
            out.entry(b).or_default().push((run.end, Waker { pid: a, at }));
        }
    }
    out
}

/// Per (waker, woken): the median time from a recorded wake-up to the waker's block at the end
/// of the same run.
fn reply_leads(tl: &Timeline, given: &BTreeMap<Pid, Vec<(u64, Pid, usize)>>) -> BTreeMap<(Pid, Pid), u64> {
    let mut leads: BTreeMap<(Pid, Pid), Vec<u64>> = BTreeMap::new();
    for (&a, wakes) in given {
        let ta = &tl.tasks[&a];
        for &(at, b, _) in wakes {
            let Some(run) = ta.run_at(at) else { continue };
            if ta.blocks_at(run.end) {
                leads.entry((a, b)).or_default().push(run.end - at);
            }
        }
    }
    leads
        .into_iter()
        .map(|(k, mut v)| {
            v.sort_unstable();
            (k, v[(v.len() - 1) / 2])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::{BlockedSpan, Run, TaskTimeline};

    fn task(pid: Pid, runs: &[(u64, u64)], blocked: &[(u64, u64, Option<Waker>)]) -> TaskTimeline {
        let mut t = TaskTimeline::new(pid, "t", 0);
        t.runs = runs.iter().map(|&(start, end)| Run { cpu: 0, start, end }).collect();
        t.blocked =
            blocked.iter().map(|&(s, e, w)| BlockedSpan { woken_by: w, ..BlockedSpan::new(s, e, "S") }).collect();
        t
    }

    #[test]
    fn a_writer_pre_empted_by_the_partner_it_woke_waits_for_its_reply() {
        // B (2) runs 0–50, wakes A (1) at 49 and is pre-empted by it at 50; A runs 50–100 and
        // blocks (its reply written); B runs 100–150, its read finds the reply, and at 149 it
        // wakes A again.
        let b = task(2, &[(0, 50), (100, 150)], &[]);
        let a = task(
            1,
            &[(50, 100), (150, 200)],
            &[(0, 50, Some(Waker { pid: 2, at: 49 })), (100, 150, Some(Waker { pid: 2, at: 149 }))],
        );
        let tl = Timeline::from_iter([a, b]);
        let got = inferred(&tl, &[1, 2].into());
        assert_eq!(got.get(&2), Some(&vec![(50, Waker { pid: 1, at: 100 })]));
        assert!(!got.contains_key(&1), "A blocks where it waits: nothing to infer");
    }

    #[test]
    fn the_reply_comes_as_long_before_the_block_as_the_recorded_wake_ups_do() {
        // As above, then B blocks at 150 and A, running 150–200, wakes it at 197 and blocks at
        // 200: A writes 3 before it blocks, so the inferred reply of 100 is placed at 97.
        let b = task(2, &[(0, 50), (100, 150), (200, 250)], &[(150, 200, Some(Waker { pid: 1, at: 197 }))]);
        let a = task(
            1,
            &[(50, 100), (150, 200)],
            &[(0, 50, Some(Waker { pid: 2, at: 49 })), (100, 150, Some(Waker { pid: 2, at: 149 })), (200, 260, None)],
        );
        let got = inferred(&Timeline::from_iter([a, b]), &[1, 2].into());
        assert_eq!(got.get(&2), Some(&vec![(50, Waker { pid: 1, at: 97 })]));
    }

    #[test]
    fn no_reply_is_inferred_without_each_step_of_the_pattern() {
        let woke = |at| Some(Waker { pid: 2, at });
        // B blocks at 50 (the trace shows it).
        let b = task(2, &[(0, 50), (100, 150)], &[(50, 100, Some(Waker { pid: 1, at: 99 }))]);
        let a = task(1, &[(50, 100)], &[(0, 50, woke(49)), (100, 150, woke(149))]);
        assert!(inferred(&Timeline::from_iter([a, b]), &[1, 2].into()).is_empty(), "B blocked");
        // A is not what replaced B (it starts later).
        let b = task(2, &[(0, 50), (100, 150)], &[]);
        let a = task(1, &[(60, 100)], &[(0, 50, woke(49)), (100, 150, woke(149))]);
        assert!(inferred(&Timeline::from_iter([a, b]), &[1, 2].into()).is_empty(), "not switched in");
        // A's next block is not ended by B (a timer ends it).
        let b = task(2, &[(0, 50), (100, 150)], &[]);
        let a = task(1, &[(50, 100)], &[(0, 50, woke(49)), (100, 150, None)]);
        assert!(inferred(&Timeline::from_iter([a, b]), &[1, 2].into()).is_empty(), "no reply dependency");
        // B ran again before A blocked.
        let b = task(2, &[(0, 50), (80, 90), (100, 150)], &[]);
        let a = task(1, &[(50, 80), (90, 100)], &[(0, 50, woke(49)), (100, 150, woke(149))]);
        assert!(inferred(&Timeline::from_iter([a, b]), &[1, 2].into()).is_empty(), "B resumed first");
        // A is not selected.
        let b = task(2, &[(0, 50), (100, 150)], &[]);
        let a = task(1, &[(50, 100)], &[(0, 50, woke(49)), (100, 150, woke(149))]);
        assert!(inferred(&Timeline::from_iter([a, b]), &[2].into()).is_empty(), "A not imported");
    }
}
