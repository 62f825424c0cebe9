//! Solaris/illumos time-sharing (TS) class: the dispatch table `config_ts_dptbl[]`
//! ([`table`], from `usr/src/uts/common/disp/ts_dptbl.c`) driven as `ts.c` drives it
//! (illumos-gate `usr/src/uts/common/disp/ts.c`, commit 2570281c; names below are its functions).
//!
//! Each thread has `ts_cpupri` (the level the table walks), `ts_upri` (user priority) and
//! `ts_boost` (IA); its level is `ts_umdpri = clamp(cpupri + upri + boost, 0, 59)`
//! (`TS_NEWUMDPRI`); a higher level runs first and pre-empts a lower one. Table lookups for
//! tqexp, slpret, lwait and the quantum use `ts_cpupri`; `ts_maxwait` uses `ts_umdpri`.
//! - Start (`ts_enterclass`): cpupri 29 (`tsmedumdpri`), `ts_dispwait` 0, a full quantum.
//! - Quantum used up (`ts_tick`): cpupri ← tqexp, dispwait 0, new quantum, back of the queue.
//! - Pre-empted (`ts_preempt` without `TSBACKQ`): front of its queue, keeping the rest of its
//!   quantum and its dispwait.
//! - Once a second (`ts_update` → `ts_update_list`): every TS thread's dispwait += 1, whatever
//!   its state. One past its level's maxwait, a queued thread, or a sleeping one while
//!   `ts_sleep_promote` is on (as it is by default), gets cpupri ← lwait and dispwait 0 and is
//!   re-queued at the back if its level moved; a running one is flagged (`t_trapret`) and on its
//!   next return to user mode `ts_trapret` sets cpupri ← slpret, dispwait 0, a new quantum.
//! - Sleep and wake-up (`ts_sleep`, `ts_wakeup`): slpret is applied only if dispwait exceeds
//!   maxwait (then a new quantum and dispwait 0); otherwise the thread keeps its level and what
//!   is left of its quantum. Because maxwait is 0 for levels 0–58, every thread below 59 is
//!   lifted at each once-a-second update, so a sleeper gets its boost (lwait = slpret for rows
//!   0–48) while asleep, and a CPU hog is lifted too (to slpret, then walks down again).
//!
//! The workload's priority `p` is the user priority `ts_upri = −p` (clamped to ±60), so a task
//! starts at level `29 − p`. A task of class `"ia"` is in the interactive class with its mode
//! on (`TSIA | TSIASET`): `ts_boost = IA_BOOST` = 10 (`sys/iapriocntl.h`), and it goes to the
//! front of its queue on wake-up (`ts_wakeup`'s `setfrontdq`). Priority inheritance (a lock
//! holder's effective priority raised below its own number) puts a floor under its level: the
//! level of the inherited priority (`29 − p`), like a turnstile's `t_epri`, gone when restored.
//!
//! Simpler than the source: the quantum is used up by exact CPU time, not one tick per clock
//! interrupt (set `SimConfig::tick` to 10 ms to end slices on tick boundaries); the update runs
//! at 1 s, 2 s, … of simulated time (illumos starts it one second after the first TS thread at
//! boot) and visits tasks in id order (illumos walks 16 hashed lists from a rotating marker); a
//! running task is lifted at the update itself (illumos: at its next return to user mode, within
//! a tick) and, to get its new quantum, is stopped and re-picked, which the engine counts as a
//! pre-emption; a queued task lifted above a running one pre-empts it at the update, the first
//! such running tasks in CPU order; `TSBACKQ`, schedctl, CPU caps, swapping, `ts_fork`/
//! `ts_forkret`, per-CPU dispatch queues and kernel priorities are not modelled; a task that
//! moves between per-CPU instances starts afresh there. IA's process-group switching
//! (`ia_set_process_group`) is fixed at the workload's class.

pub mod table;
#[cfg(test)]
mod tests;

pub use table::{default_table, table_for_tick, DispRow};

use super::common::{KeyQueue, PerTask};
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};

/// `ts_update` runs once a second (`timeout(ts_update, arg, hz)`).
pub const UPDATE_PERIOD: Dur = 1_000_000_000;
/// `tsmedumdpri`: the middle level, where a thread enters the class.
const MEDUMDPRI: u8 = 29;
/// `IA_BOOST` (`usr/src/uts/common/sys/iapriocntl.h`).
const IA_BOOST: i32 = 10;
/// `ts_maxupri`: user priorities lie in −60..=60.
const MAXUPRI: i32 = 60;

fn level_of_priority(p: i32) -> u8 {
    (i32::from(MEDUMDPRI) - p).clamp(0, 59) as u8
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    /// Never seen, exited or moved away.
    #[default]
    Gone,
    Queued,
    Running,
    /// Charged, about to be queued again or to block (between two host calls).
    Stopped,
    Sleeping,
}

/// `tsproc_t`, the fields the model needs.
#[derive(Debug, Clone, Copy, Default)]
struct Ts {
    cpupri: u8,
    upri: i32,
    boost: i32,
    umdpri: u8,
    dispwait: u32,
    timeleft: Dur,
    /// `TSIA | TSIASET`.
    ia: bool,
    base_prio: i32,
    /// The effective priority the host last gave (below `base_prio` while inheriting).
    eff_prio: i32,
    /// The update gave this running task a new quantum: stop it so it can be re-picked.
    restart: bool,
    state: State,
}

impl Ts {
    /// `TS_NEWUMDPRI`.
    fn new_umdpri(&mut self) {
        self.umdpri = (i32::from(self.cpupri) + self.upri + self.boost).clamp(0, 59) as u8;
    }

    /// The level it is queued and dispatched at: its own, or an inherited one if higher.
    fn level(&self) -> u8 {
        if self.eff_prio < self.base_prio {
            self.umdpri.max(level_of_priority(self.eff_prio))
        } else {
            self.umdpri
        }
    }
}

#[derive(Debug, Clone)]
pub struct SolarisTs {
    table: Vec<DispRow>,
    /// `ts_sleep_promote`: sleeping threads are lifted by the update too (illumos: 1).
    sleep_promote: bool,
    /// Key: 59 − level (smaller runs first).
    q: KeyQueue<u8>,
    ts: PerTask<Ts>,
    /// Tasks not `Gone`, in id order (the order `ts_update` walks them in, which sets the order
    /// of tasks it re-queues at one level), and some that went `Gone` since the last update.
    listed: Vec<TaskId>,
    /// Tasks not `Gone`.
    live: usize,
    next_update: Time,
    /// Levels of queued tasks the last update lifted above some running task, not yet claimed
    /// by a pre-emption (highest last).
    lifted: Vec<u8>,
}

impl SolarisTs {
    pub fn new() -> Self {
        Self::with_table(default_table())
    }

    /// The TS class with another dispatch table (e.g. [`table_for_tick`] for hz 1000).
    pub fn with_table(table: Vec<DispRow>) -> Self {
        assert_eq!(table.len(), 60, "a TS dispatch table has 60 levels");
        SolarisTs {
            table,
            sleep_promote: true,
            q: KeyQueue::default(),
            ts: PerTask::default(),
            listed: Vec::new(),
            live: 0,
            next_update: UPDATE_PERIOD,
            lifted: Vec::new(),
        }
    }

    /// Set `ts_sleep_promote` (illumos default: on). Off, a sleeper waits for `ts_wakeup` to
    /// apply slpret.
    pub fn with_sleep_promote(mut self, on: bool) -> Self {
        self.sleep_promote = on;
        self
    }

    /// A task's current level (`ts_umdpri`, or its inherited floor).
    pub fn level(&self, t: TaskId) -> u8 {
        self.ts.get(t).level()
    }

    fn set_state(&mut self, t: TaskId, s: State) {
        let ts = self.ts.get_mut(t);
        let (was, is) = (ts.state != State::Gone, s != State::Gone);
        self.live = self.live + usize::from(is) - usize::from(was);
        ts.state = s;
        if is && !was {
            if let Err(i) = self.listed.binary_search(&t) {
                self.listed.insert(i, t);
            }
        }
    }

    /// `ts_enterclass`.
    fn enter(&mut self, task: &TaskView) {
        let ia = task.class == Some("ia");
        let mut ts = Ts {
            cpupri: MEDUMDPRI,
            upri: (-task.priority).clamp(-MAXUPRI, MAXUPRI),
            boost: if ia { IA_BOOST } else { 0 },
            ia,
            base_prio: task.priority,
            eff_prio: task.priority,
            timeleft: self.table[MEDUMDPRI as usize].quantum,
            state: self.ts.get(task.id).state,
            ..Ts::default()
        };
        ts.new_umdpri();
        self.ts.set(task.id, ts);
    }

    /// The quantum ran out (`ts_tick`): down to tqexp with a new quantum.
    fn expire(&mut self, t: TaskId) {
        let table = &self.table;
        let ts = self.ts.get_mut(t);
        ts.cpupri = table[ts.cpupri as usize].tqexp;
        ts.new_umdpri();
        ts.dispwait = 0;
        ts.timeleft = table[ts.cpupri as usize].quantum;
    }

    /// Waited past maxwait at a sleep, wake-up or return to user mode: up to slpret with a new
    /// quantum (`ts_sleep`, `ts_wakeup`, `ts_trapret`). Whether it applied.
    fn slpret_if_waited(&mut self, t: TaskId) -> bool {
        let table = &self.table;
        let ts = self.ts.get_mut(t);
        if ts.dispwait <= table[ts.umdpri as usize].maxwait {
            return false;
        }
        ts.cpupri = table[ts.cpupri as usize].slpret;
        ts.new_umdpri();
        ts.timeleft = table[ts.cpupri as usize].quantum;
        ts.dispwait = 0;
        true
    }

    /// `ts_update_list` for one task.
    fn update_one(&mut self, t: TaskId) {
        let table = &self.table;
        let ts = self.ts.get_mut(t);
        if ts.state == State::Gone {
            return;
        }
        ts.dispwait += 1;
        if ts.dispwait <= table[ts.umdpri as usize].maxwait {
            return;
        }
        match ts.state {
            State::Running => {
                // t_trapret → ts_trapret on its way back to user mode.
                if self.slpret_if_waited(t) {
                    self.ts.get_mut(t).restart = true;
                }
            }
            State::Sleeping if !self.sleep_promote => {}
            _ => {
                let before = ts.level();
                ts.cpupri = table[ts.cpupri as usize].lwait;
                ts.new_umdpri();
                ts.dispwait = 0;
                let after = ts.level();
                // Only a move re-queues it (at the back) and gives it a new quantum
                // (ts_change_priority → thread_change_pri on a run queue).
                if after != before && ts.state == State::Queued {
                    ts.timeleft = table[ts.cpupri as usize].quantum;
                    self.q.rekey(t, 59 - after);
                    self.lifted.push(after);
                }
            }
        }
    }
}

impl Default for SolarisTs {
    fn default() -> Self {
        Self::new()
    }
}

impl Policy for SolarisTs {
    fn name(&self) -> String {
        "solaris_ts".into()
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, now: Time) {
        let t = task.id;
        if why == EnqueueReason::New || self.ts.get(t).state == State::Gone {
            self.enter(task);
            if self.live == 0 {
                // The first live task: the once-a-second updates go on from here, in phase
                // with time 0.
                self.next_update = (now / UPDATE_PERIOD + 1) * UPDATE_PERIOD;
            }
        }
        self.ts.get_mut(t).eff_prio = task.priority;
        let mut front = false;
        match why {
            EnqueueReason::SliceExpired => self.expire(t),
            EnqueueReason::Preempted | EnqueueReason::Yielded if self.ts.get(t).timeleft == 0 => self.expire(t),
            EnqueueReason::Preempted => front = true,
            EnqueueReason::Woken => {
                self.slpret_if_waited(t);
                front = self.ts.get(t).ia;
            }
            _ => {}
        }
        self.set_state(t, State::Queued);
        let key = 59 - self.ts.get(t).level();
        if front {
            self.q.push_front(task, key);
        } else {
            self.q.push(task, key);
        }
    }

    fn dequeue(&mut self, task: TaskId) {
        if self.q.remove(task).is_some() {
            self.set_state(task, State::Gone);
        }
    }

    fn pick_next(&mut self, cpu: CpuId, _now: Time) -> Option<Pick> {
        let (task, _) = self.q.pop(cpu)?;
        self.set_state(task, State::Running);
        let ts = self.ts.get_mut(task);
        ts.restart = false;
        if ts.timeleft == 0 {
            ts.timeleft = self.table[ts.cpupri as usize].quantum;
        }
        Some(Pick { task, slice: Some(ts.timeleft) })
    }

    fn charge(&mut self, task: TaskId, ran: Dur, _now: Time) {
        let ts = self.ts.get_mut(task);
        if ts.restart {
            // Stopped for the new quantum the update gave it: what it ran came before that.
            ts.restart = false;
        } else {
            ts.timeleft = ts.timeleft.saturating_sub(ran);
        }
        self.set_state(task, State::Stopped);
    }

    fn blocked(&mut self, task: TaskId, _now: Time) {
        if self.ts.get(task).timeleft == 0 {
            // The tick that used up the quantum would have lowered it (ts_tick).
            self.expire(task);
        }
        self.slpret_if_waited(task);
        self.set_state(task, State::Sleeping);
    }

    fn task_exit(&mut self, task: TaskId) {
        self.q.remove(task);
        self.set_state(task, State::Gone);
    }

    fn preempts(&self, woken: TaskId, running: TaskId, _now: Time) -> bool {
        self.level(woken) > self.level(running)
    }

    fn next_timer(&self) -> Option<Time> {
        (self.live > 0).then_some(self.next_update)
    }

    fn timer(&mut self, now: Time) {
        self.lifted.clear();
        // Only live tasks are walked (ts_update walks the class's thread list, which exited
        // threads leave), so a long run does not revisit every task it ever had.
        let mut listed = std::mem::take(&mut self.listed);
        listed.retain(|&t| self.ts.get(t).state != State::Gone);
        for &t in &listed {
            self.update_one(t);
        }
        self.listed = listed;
        self.lifted.sort_unstable();
        while self.next_update <= now {
            self.next_update += UPDATE_PERIOD;
        }
    }

    fn preempt_current(&mut self, running: TaskId, _now: Time) -> bool {
        if self.ts.get(running).restart {
            return true;
        }
        match self.lifted.last() {
            Some(&l) if l > self.level(running) => {
                self.lifted.pop();
                true
            }
            _ => false,
        }
    }

    fn queued(&self) -> usize {
        self.q.len()
    }

    fn prio_changed(&mut self, task: &TaskView, _now: Time) {
        self.ts.get_mut(task.id).eff_prio = task.priority;
    }

    fn requeue(&mut self, task: &TaskView, _now: Time) {
        let ts = self.ts.get_mut(task.id);
        let before = ts.level();
        ts.eff_prio = task.priority;
        let after = ts.level();
        if after != before {
            self.q.rekey(task.id, 59 - after);
        }
    }
}
