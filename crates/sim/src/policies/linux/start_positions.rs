//! Where a replay's fair tasks stand against each other when it starts. A replayed trace's
//! tasks were released with the lags the kernel saved when they stopped, and neither the trace
//! nor `/proc/<tid>/sched` shows a lag (it shows `se.vruntime`, not `vlag` or the deadline);
//! the replay starts every task at lag 0. A round of readings of `se.vruntime` taken beside the
//! live run (`schedlab validate` reads every 10 ms on one CPU, every 50 ms on two) gives the
//! places, against each other, of the tasks on one run queue then: the ones that waited (their
//! readings are where they still are) and the one that ran (its reading is as of the kernel's
//! last update of it; what it ran since is added). At the round's time (a timer), the tasks in
//! the same state on that queue in the replay — waiting, or running — have their virtual
//! runtimes moved so that their differences are the kernel's, their weighted mean kept (so `V`
//! stays); once per run queue, at the first round that finds two or more; from there the model
//! runs free.

use super::{Class, Linux};
use crate::policies::eevdf::places::{carried, shifts, Compared};
use crate::policy::{TaskId, Time};

/// One round of readings of the tasks of one run queue: when (workload time), each fair task
/// that waited live then with its `se.vruntime` (ns, in the kernel's frame: only differences
/// count), and the one that ran, if its reading can be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartRound {
    pub at: Time,
    pub tasks: Vec<(TaskId, i64)>,
    pub running: Option<RunningRead>,
}

/// The reading of the task that ran live at a round: its `se.vruntime` as of the kernel's last
/// update of it (`update_curr()`), and when that update was (workload time; after the round's
/// time when the update came between the round's start and the read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunningRead {
    pub task: TaskId,
    pub vruntime: i64,
    pub updated_at: Time,
}

/// The rounds, and how far the timer has gone through them.
#[derive(Debug, Clone, Default)]
pub(super) struct StartPositions {
    /// Oldest first.
    rounds: Vec<StartRound>,
    /// The next round the timer looks at.
    next: usize,
    /// Per run queue: its places are set.
    done: Vec<bool>,
    /// (the round's time, the tasks moved, the sum of the moves, ns) per setting.
    pub(super) set: Vec<(Time, usize, u64)>,
}

impl StartPositions {
    /// When the next round is due, while a run queue's places are not set.
    pub(super) fn next_due(&self) -> Option<Time> {
        let all_set = !self.done.is_empty() && self.done.iter().all(|&d| d);
        (!all_set).then(|| self.rounds.get(self.next).map(|r| r.at)).flatten()
    }
}

impl Linux {
    /// Set the fair tasks' places against each other from the kernel's readings, once per run
    /// queue (see the module documentation).
    pub fn with_start_positions(mut self, mut rounds: Vec<StartRound>) -> Self {
        rounds.sort_by_key(|r| r.at);
        self.start = StartPositions { rounds, ..StartPositions::default() };
        self
    }

    /// The settings made: (the round's time, the tasks moved, the sum of the moves in ns).
    pub fn start_positions_set(&self) -> &[(Time, usize, u64)] {
        &self.start.set
    }

    /// At the timer: every round due by `now`, on the run queues whose places are not set yet.
    pub(super) fn set_start_positions_due(&mut self, now: Time) {
        if self.start.done.len() < self.rqs.len() {
            self.start.done.resize(self.rqs.len(), false);
        }
        while self.start.rounds.get(self.start.next).is_some_and(|r| r.at <= now) {
            let round = self.start.next;
            self.start.next += 1;
            for i in 0..self.rqs.len() {
                if !self.start.done[i] {
                    self.set_from_round(i, round, now);
                }
            }
        }
    }

    /// Set queue `i` from round `round` at `now` if two or more of its tasks are in the state
    /// here that they were in live.
    fn set_from_round(&mut self, i: usize, round: usize, now: Time) {
        let round = &self.start.rounds[round];
        let at = round.at;
        let fair = &self.rqs[i].fair;
        let curr = self.rqs[i].curr.map(|(c, _)| c);
        let ours = |t: TaskId| self.class.get(t) == Class::Fair && self.rq_of(t) == i;
        let mut compared: Vec<(TaskId, Compared)> = round
            .tasks
            .iter()
            .filter(|&&(t, _)| {
                ours(t) && fair.on_queue(t) && !fair.is_delayed(t) && !fair.is_stopped(t) && curr != Some(t)
            })
            .map(|&(t, kernel)| (t, Compared { weight: fair.e(t).load.weight, kernel, model: fair.e(t).vruntime }))
            .collect();
        if let Some(r) = round.running.filter(|r| ours(r.task) && curr == Some(r.task) && fair.has(r.task)) {
            // The kernel's reading moved on to the round's time by what the task ran since.
            let load = fair.e(r.task).load;
            let kernel = carried(r.vruntime, load, r.updated_at, round.at);
            compared.push((r.task, Compared { weight: load.weight, kernel, model: fair.vruntime_at(r.task, now) }));
        }
        if compared.len() < 2 {
            return;
        }
        let moves = shifts(&compared.iter().map(|c| c.1).collect::<Vec<_>>());
        let mut moved = 0u64;
        for (&(t, _), dv) in compared.iter().zip(moves) {
            self.rqs[i].fair.shift_vruntime(t, dv);
            moved += dv.unsigned_abs();
        }
        self.start.done[i] = true;
        self.start.set.push((at, compared.len(), moved));
    }
}
