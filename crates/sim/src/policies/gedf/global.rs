//! The core shared by the global-queue real-time policies (`gedf`, `llf`): one run queue for
//! every CPU, a table of the jobs running now with their urgency, the choice of which running job
//! a more urgent one displaces, and a re-check timer for what the engine's per-wake-up
//! pre-emption cannot see.
//!
//! Urgency is a number, lower = more urgent: the absolute deadline (`gedf`) or the laxity
//! (`llf`). A queued job is kept under a key `k` with urgency `k` (`gedf`) or `k − now` (`llf`,
//! `drift`: a waiting job's laxity falls 1 ns per ns, while a running job's stays put). Ties go
//! by task id, lower first.
//!
//! Why a timer: the engine asks [`Policy::preempts`] only for a task just released or woken, and
//! not at all if a CPU is idle at that instant. Two jobs released at one instant onto a full
//! machine: the first displaces a running job, which leaves that CPU idle until the instant ends,
//! so the second is never asked about and would wait behind a later-deadline running job. After
//! every call the core checks whether a queued job is more urgent than some running one; if so,
//! it asks for a timer at `now`, which the engine fires once the instant's picks are done, and
//! [`Global::timer`] then marks which running jobs to displace ([`Policy::preempt_current`]).
//! For `llf` the same timer serves laxity crossings (see `llf`).
//!
//! [`Policy::preempts`]: crate::policy::Policy::preempts
//! [`Policy::preempt_current`]: crate::policy::Policy::preempt_current

use crate::policies::common::{KeyQueue, PerTask};
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};

/// Urgency of a job without a deadline: after every job with one, and it never drifts.
pub const NO_DEADLINE: i64 = i64::MAX;

/// A job running on a CPU and its urgency, fixed while it runs.
#[derive(Debug, Clone, Copy)]
struct Running {
    cpu: CpuId,
    task: TaskId,
    urgency: i64,
}

/// The shared run queue, what runs where, and the re-check timer.
#[derive(Debug, Clone, Default)]
pub struct Global {
    q: KeyQueue<(i64, TaskId)>,
    running: Vec<Running>,
    /// Whether queued urgencies fall with time (laxity) or stay (deadline).
    drift: bool,
    /// `llf` only: a waiting job displaces a running one at the instant its laxity is this much
    /// below the running one's (0: never between scheduling events).
    margin: Dur,
    timer_at: Option<Time>,
    /// Running jobs the last timer chose to displace.
    victims: Vec<TaskId>,
    now: Time,
    /// Which tasks are in `running` (so a charge of a task that never ran costs no scan).
    on_cpu: PerTask<bool>,
}

/// A time as a signed number (simulated times stay far below 2^63 ns, about 292 years).
fn signed(t: u64) -> i64 {
    i64::try_from(t).unwrap_or(i64::MAX)
}

impl Global {
    /// `drift` false: urgency = key (deadlines). True: urgency = key − now (laxities), and with
    /// `margin` > 0 a timer at each laxity crossing.
    pub fn new(drift: bool, margin: Dur) -> Self {
        Global { drift, margin, ..Global::default() }
    }

    /// The urgency at `now` of a job queued under `key`.
    fn urgency(&self, key: i64, now: Time) -> i64 {
        if key == NO_DEADLINE || !self.drift {
            key
        } else {
            key.saturating_sub(signed(now))
        }
    }

    /// Does a job of urgency `w` displace a running job of urgency `r`? Strictly more urgent, so
    /// equal deadlines or laxities never pre-empt.
    fn beats(w: i64, r: i64) -> bool {
        w < r
    }

    pub fn enqueue(&mut self, task: &TaskView, key: i64, why: EnqueueReason, now: Time) {
        self.q.enqueue(task, (key, task.id), why);
        self.rearm(now, false);
    }

    pub fn dequeue(&mut self, task: TaskId) {
        self.q.remove(task);
        self.rearm(self.now, false);
    }

    pub fn pick_next(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
        let (task, (key, _)) = self.q.pop(cpu)?;
        let urgency = self.urgency(key, now);
        self.running.push(Running { cpu, task, urgency });
        self.on_cpu.set(task, true);
        self.rearm(now, false);
        Some(Pick { task, slice: None })
    }

    /// The task stopped running (charged): it leaves the running table.
    pub fn stopped(&mut self, task: TaskId, now: Time) {
        if std::mem::take(self.on_cpu.get_mut(task)) {
            self.running.retain(|r| r.task != task);
        }
        self.victims.retain(|&v| v != task);
        self.rearm(now, false);
    }

    /// The running job that a queued `woken` would displace: the least urgent one (highest task
    /// id on ties) on a CPU `woken` may use, leaving out `skip`.
    fn victim_for(&self, woken: TaskId, skip: &[TaskId]) -> Option<Running> {
        self.running
            .iter()
            .filter(|r| self.q.affinity.allowed(woken, r.cpu) && !skip.contains(&r.task))
            .max_by_key(|r| (r.urgency, r.task))
            .copied()
    }

    /// `check_preempt_curr`: the engine asks CPU by CPU and stops at the first yes, so say yes
    /// only for the one running job `woken` should displace.
    pub fn preempts(&self, woken: TaskId, running: TaskId, now: Time) -> bool {
        let Some((key, _)) = self.q.key_of(woken) else { return false };
        let w = self.urgency(key, now);
        self.victim_for(woken, &[]).is_some_and(|v| v.task == running && Self::beats(w, v.urgency))
    }

    pub fn next_timer(&self) -> Option<Time> {
        self.timer_at
    }

    /// The re-check: for each queued job, most urgent first, displace the least urgent running
    /// job it strictly beats, each running job at most once. (At a crossing timer the gap is
    /// `margin` by construction; at a same-instant check, any gap.)
    pub fn timer(&mut self, now: Time) {
        self.now = now;
        self.victims.clear();
        let worst = self.running.iter().map(|r| r.urgency).max();
        if let Some(worst) = worst {
            let mut chosen = Vec::new();
            for t in self.q.members() {
                if chosen.len() == self.running.len() {
                    break;
                }
                let key = self.q.key_of(t).map_or(NO_DEADLINE, |k| k.0);
                let w = self.urgency(key, now);
                if !Self::beats(w, worst) {
                    break;
                }
                if let Some(v) = self.victim_for(t, &chosen) {
                    if Self::beats(w, v.urgency) {
                        chosen.push(v.task);
                    }
                }
            }
            self.victims = chosen;
        }
        self.rearm(now, true);
    }

    /// Is `running` one the last timer chose to displace?
    pub fn preempt_current(&mut self, running: TaskId) -> bool {
        let before = self.victims.len();
        self.victims.retain(|&v| v != running);
        self.victims.len() != before
    }

    pub fn queued(&self) -> usize {
        self.q.len()
    }

    /// Set the timer after a change: at `now` if the most urgent queued job beats the least
    /// urgent running one already (not from inside the timer, which has just chosen its
    /// victims), else (`llf` with a margin) at the instant the queued job's laxity will have
    /// fallen `margin` below the running one's.
    fn rearm(&mut self, now: Time, in_timer: bool) {
        self.now = now;
        self.timer_at = None;
        let Some(worst) = self.running.iter().map(|r| r.urgency).max() else { return };
        let Some((key, _)) = self.q.min_key() else { return };
        let w = self.urgency(key, now);
        if Self::beats(w, worst) {
            if !in_timer {
                self.timer_at = Some(now);
            }
            return;
        }
        if self.drift && self.margin > 0 && key != NO_DEADLINE && worst != NO_DEADLINE {
            // key − t ≤ worst − margin  ⇔  t ≥ key − worst + margin; w ≥ worst, so t ≥ now + margin.
            let at = key.saturating_sub(worst).saturating_add(signed(self.margin));
            self.timer_at = u64::try_from(at).ok().filter(|&t| t > now);
        }
    }
}

/// A global-queue policy: the shared core ordered by one urgency key (`gedf`: the deadline,
/// `llf`: the latest start time), under its spec name.
#[derive(Debug, Clone)]
pub struct GlobalPolicy {
    core: Global,
    name: String,
    key: fn(&TaskView) -> i64,
}

impl GlobalPolicy {
    /// `key` gives a queued job's key (see [`Global`] for `drift` and `margin`).
    pub fn new(name: String, key: fn(&TaskView) -> i64, drift: bool, margin: Dur) -> Self {
        GlobalPolicy { core: Global::new(drift, margin), name, key }
    }
}

impl Policy for GlobalPolicy {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, now: Time) {
        self.core.enqueue(task, (self.key)(task), why, now);
    }

    fn dequeue(&mut self, task: TaskId) {
        self.core.dequeue(task);
    }

    /// The order does not depend on priority: a priority change leaves the task in place.
    fn requeue(&mut self, _task: &TaskView, _now: Time) {}

    fn pick_next(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
        self.core.pick_next(cpu, now)
    }

    fn charge(&mut self, task: TaskId, _ran: Dur, now: Time) {
        self.core.stopped(task, now);
    }

    fn preempts(&self, woken: TaskId, running: TaskId, now: Time) -> bool {
        self.core.preempts(woken, running, now)
    }

    fn next_timer(&self) -> Option<Time> {
        self.core.next_timer()
    }

    fn timer(&mut self, now: Time) {
        self.core.timer(now);
    }

    fn preempt_current(&mut self, running: TaskId, _now: Time) -> bool {
        self.core.preempt_current(running)
    }

    fn queued(&self) -> usize {
        self.core.queued()
    }
}
