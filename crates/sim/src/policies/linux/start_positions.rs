//! Where a replay's fair tasks stand against each other when it starts. A replayed trace's
//! tasks were released with the lags the kernel saved when they stopped, and neither the trace
//! nor `/proc/<tid>/sched` shows a lag (it shows `se.vruntime`, not `vlag` or the deadline);
//! the replay starts every task at lag 0. A reading of `se.vruntime` taken beside the live run
//! (`schedlab validate` reads every 10 ms on one CPU) gives the places of the tasks that waited
//! then, against each other. At the first pick on a CPU after such a reading, if two or more of
//! those tasks wait on that CPU in the replay too, their virtual runtimes are moved so that
//! their differences are the kernel's — their weighted mean kept, so `V` stays — once per CPU;
//! from there the model runs free. A task that ran live at the reading is left out (its reading
//! is as of its last update), and so is one that does not wait in the replay.

use super::{Class, Linux};
use crate::policies::eevdf::places::{shifts, Compared};
use crate::policy::{TaskId, Time};

/// One round of readings: when (workload time) and, for each fair task that waited live then,
/// its `se.vruntime` (ns, in the kernel's frame: only differences count).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartRound {
    pub at: Time,
    pub tasks: Vec<(TaskId, i64)>,
}

/// The rounds, and per CPU how far its picks have read them.
#[derive(Debug, Clone, Default)]
pub(super) struct StartPositions {
    /// Oldest first.
    rounds: Vec<StartRound>,
    /// Per CPU: the next round its picks look at (`usize::MAX`: set already).
    next: Vec<usize>,
    /// (the round's time, the tasks moved, the sum of the moves, ns) per setting.
    pub(super) set: Vec<(Time, usize, u64)>,
}

impl Linux {
    /// Set the fair tasks' places against each other from the kernel's readings, once per CPU
    /// (see the module documentation).
    pub fn with_start_positions(mut self, mut rounds: Vec<StartRound>) -> Self {
        rounds.sort_by_key(|r| r.at);
        self.start = StartPositions { rounds, ..StartPositions::default() };
        self
    }

    /// The settings made: (the round's time, the tasks moved, the sum of the moves in ns).
    pub fn start_positions_set(&self) -> &[(Time, usize, u64)] {
        &self.start.set
    }

    /// Before the pick on queue `i` at `now`: the first round since the last pick on it, if this
    /// queue's places are not set yet.
    #[inline]
    pub(super) fn maybe_set_start_positions(&mut self, i: usize, now: Time) {
        let Some(first) = self.start.rounds.first() else { return };
        if first.at > now {
            return;
        }
        if self.start.next.len() < self.rqs.len() {
            self.start.next.resize(self.rqs.len(), 0);
        }
        while self.start.next[i] < self.start.rounds.len() && self.start.rounds[self.start.next[i]].at <= now {
            let round = self.start.next[i];
            self.start.next[i] += 1;
            let fair = &self.rqs[i].fair;
            let waiting: Vec<(TaskId, Compared)> = self.start.rounds[round]
                .tasks
                .iter()
                .filter(|&&(t, _)| {
                    self.class.get(t) == Class::Fair
                        && self.rq_of(t) == i
                        && fair.on_queue(t)
                        && !fair.is_delayed(t)
                        && !fair.is_stopped(t)
                        && self.rqs[i].curr.is_none_or(|(c, _)| c != t)
                })
                .map(|&(t, kernel)| (t, Compared { weight: fair.e(t).load.weight, kernel, model: fair.e(t).vruntime }))
                .collect();
            if waiting.len() < 2 {
                continue;
            }
            let compared: Vec<Compared> = waiting.iter().map(|w| w.1).collect();
            let mut moved = 0u64;
            for (&(t, _), dv) in waiting.iter().zip(shifts(&compared)) {
                self.rqs[i].fair.shift_vruntime(t, dv);
                moved += dv.unsigned_abs();
            }
            self.start.next[i] = usize::MAX;
            let at = self.start.rounds[round].at;
            self.start.set.push((at, waiting.len(), moved));
        }
    }
}
