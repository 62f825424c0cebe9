//! Wake-ups between imported tasks. A blocked interval that another imported task ended from
//! task context (its sched_waking was recorded in that task's context: a pipe write, a futex
//! wake) becomes a wait for that task's wake-up, given at the point of its CPU bursts where the
//! trace shows it — so a replay keeps the cause, not just the length, of the block: if the
//! waker runs later in the simulation, so does the woken task. Wake-ups from interrupts (timers,
//! devices), from the idle task and from tasks that are not imported keep the interval's length.

use super::bursts::Bursts;
use super::{note, Note, NoteKind};
use crate::event::Pid;
use schedlab_sim::workload::WakeUp;
use std::collections::BTreeMap;

/// Per task (in workload order): the wake-ups it gives, its blocked intervals that wait for
/// one, and the imported parent that forks it (it arrives at that wake-up).
pub(crate) struct Edges {
    pub wakes: Vec<Vec<WakeUp>>,
    pub until_woken: Vec<Vec<usize>>,
    pub forked_by: Vec<Option<usize>>,
}

/// A task of the import that the trace shows being forked: by `parent` at `at`.
pub(crate) struct Fork {
    pub parent: Pid,
    pub at: u64,
}

/// The wake-ups among `tasks` (pid and bursts, in workload order).
pub(crate) fn edges(tasks: &[(Pid, &Bursts)], notes: &mut Vec<Note>) -> Edges {
    let index: BTreeMap<Pid, usize> = tasks.iter().enumerate().map(|(i, (pid, _))| (*pid, i)).collect();
    let n = tasks.len();
    let mut out = Edges { wakes: vec![Vec::new(); n], until_woken: vec![Vec::new(); n], forked_by: vec![None; n] };
    for (a, (pid, bursts)) in tasks.iter().enumerate() {
        let mut by: BTreeMap<Pid, usize> = BTreeMap::new();
        for (k, w) in bursts.wakers.iter().enumerate() {
            let Some(w) = w else { continue };
            let Some(&b) = index.get(&w.pid).filter(|&&b| b != a) else { continue };
            match tasks[b].1.position(w.at) {
                Some((burst, at)) => {
                    out.wakes[b].push(WakeUp { burst, at, task: a });
                    out.until_woken[a].push(k);
                    *by.entry(w.pid).or_default() += 1;
                }
                None => note(
                    notes,
                    *pid,
                    NoteKind::WokenByTask,
                    format!(
                        "blocked interval {k} was ended by task {} at {}, outside its imported runs: its length is kept",
                        w.pid, w.at
                    ),
                ),
            }
        }
        for (waker, n) in by {
            note(
                notes,
                *pid,
                NoteKind::WokenByTask,
                format!("{n} of its {} blocked intervals end when task {waker} wakes it", bursts.wakers.len()),
            );
        }
    }
    for w in &mut out.wakes {
        w.sort_by_key(|w| (w.burst, w.at));
    }
    out
}

/// Forks whose parent is imported and was running then become the parent's wake-ups of the
/// child, which arrives when woken: the child then starts where it did in the parent's work, not
/// at a fixed time. `forks[i]` is task `i`'s fork, if the trace shows it.
pub(crate) fn add_forks(edges: &mut Edges, tasks: &[(Pid, &Bursts)], forks: &[Option<Fork>], notes: &mut Vec<Note>) {
    let index: BTreeMap<Pid, usize> = tasks.iter().enumerate().map(|(i, (pid, _))| (*pid, i)).collect();
    for (a, fork) in forks.iter().enumerate() {
        let Some(f) = fork else { continue };
        let Some(&b) = index.get(&f.parent).filter(|&&b| b != a) else { continue };
        let Some((burst, at)) = tasks[b].1.position(f.at) else {
            note(
                notes,
                tasks[a].0,
                NoteKind::Forked,
                format!("forked by task {} at {}, outside its imported runs: it arrives at that time", f.parent, f.at),
            );
            continue;
        };
        // Before any other wake-up of the child at the same point: the fork comes first.
        let w = &mut edges.wakes[b];
        let k = w.partition_point(|w| (w.burst, w.at) < (burst, at));
        w.insert(k, WakeUp { burst, at, task: a });
        edges.forked_by[a] = Some(b);
        note(
            notes,
            tasks[a].0,
            NoteKind::Forked,
            format!(
                "forked by task {} {:.3} ms into its CPU burst {burst}: it arrives when its parent gets there",
                f.parent,
                at as f64 / 1e6
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::Waker;

    #[test]
    fn a_task_context_wake_up_becomes_an_edge_and_others_keep_their_length() {
        // 1 runs 0–10 and wakes 2 at 8; 2 blocked 5–9 (woken by 1), then 20–30 (a timer).
        let one = Bursts { lengths: vec![10], runs: vec![vec![(0, 10)]], ..Bursts::default() };
        let two = Bursts {
            lengths: vec![5, 4, 11, 10, 1],
            runs: vec![vec![(0, 5)], vec![(9, 20)], vec![(30, 31)]],
            wakers: vec![Some(Waker { pid: 1, at: 8 }), None],
            ..Bursts::default()
        };
        let mut notes = Vec::new();
        let e = edges(&[(1, &one), (2, &two)], &mut notes);
        assert_eq!(e.wakes[0], vec![WakeUp { burst: 0, at: 8, task: 1 }]);
        assert_eq!(e.until_woken, vec![vec![], vec![0]]);
        assert!(e.wakes[1].is_empty());
        assert!(notes.iter().any(|n| n.pid == Some(2) && n.detail.contains("1 of its 2")));
        // A waker that is not imported, or a point where the waker did not run: no edge.
        let mut notes = Vec::new();
        let e = edges(&[(2, &two)], &mut notes);
        assert!(e.until_woken[0].is_empty());
        let late = Bursts { wakers: vec![Some(Waker { pid: 1, at: 15 }), None], ..two.clone() };
        let e = edges(&[(1, &one), (2, &late)], &mut notes);
        assert!(e.until_woken[1].is_empty() && e.wakes[0].is_empty());
        assert!(notes.iter().any(|n| n.detail.contains("outside its imported runs")));
    }

    #[test]
    fn a_fork_becomes_the_parents_first_wake_up_of_the_child_at_its_point() {
        // The parent (pid 1) runs 0–10 and wakes its child (pid 2) at 8 from task context; the
        // trace shows it forking the child at 8 too. The fork goes before that wake-up.
        let parent = Bursts { lengths: vec![10], runs: vec![vec![(0, 10)]], ..Bursts::default() };
        let child = Bursts {
            lengths: vec![1, 4, 1],
            runs: vec![vec![(9, 10)], vec![(14, 15)]],
            wakers: vec![Some(Waker { pid: 1, at: 8 })],
            ..Bursts::default()
        };
        let tasks = [(1, &parent), (2, &child)];
        let mut notes = Vec::new();
        let mut e = edges(&tasks, &mut notes);
        add_forks(&mut e, &tasks, &[None, Some(Fork { parent: 1, at: 8 })], &mut notes);
        assert_eq!(e.forked_by, vec![None, Some(0)]);
        assert_eq!(e.wakes[0], vec![WakeUp { burst: 0, at: 8, task: 1 }, WakeUp { burst: 0, at: 8, task: 1 }]);
        assert!(notes.iter().any(|n| n.pid == Some(2) && n.kind == NoteKind::Forked && n.detail.contains("0.000 ms")));
        // A fork while the parent was not running (at 12): no wake-up, the child keeps its time,
        // and a note says so.
        let mut notes = Vec::new();
        let mut e = edges(&tasks, &mut notes);
        add_forks(&mut e, &tasks, &[None, Some(Fork { parent: 1, at: 12 })], &mut notes);
        assert_eq!(e.forked_by, vec![None, None]);
        assert_eq!(e.wakes[0].len(), 1);
        assert!(notes.iter().any(|n| n.kind == NoteKind::Forked && n.detail.contains("outside its imported runs")));
    }
}
