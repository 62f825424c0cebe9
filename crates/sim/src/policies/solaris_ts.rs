//! Solaris's time-sharing class as a dispatch table (`ts_dptbl`, McDougall & Mauro, *Solaris
//! Internals*): 60 levels, 59 the best. Each level has a quantum (200 ms at the bottom down to
//! 20 ms at the top) and two successor levels: `tqexp` when the quantum expires (lower: the task
//! is CPU-bound, so it drops ten levels but gets a longer slice next time) and `slpret` when it
//! returns from sleeping (higher: 50–59, short slices, quick response). A task waiting longer
//! than `maxwait` (1 s) is lifted to `lwait` (like `slpret`). A higher level pre-empts a lower.
//! The workload's priority sets the start level: `29 − priority` (lower number = higher level).
//! Priority inheritance: an inherited priority lifts the level to at least its mapped level.

use super::common::{KeyQueue, PerTask, WaitWatch};
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};

const MS: Dur = 1_000_000;

/// One row of the dispatch table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DispRow {
    pub quantum: Dur,
    pub tqexp: u8,
    pub slpret: u8,
    pub lwait: u8,
}

/// The default Solaris TS dispatch table (60 rows).
pub fn default_table() -> Vec<DispRow> {
    (0..60u8)
        .map(|l| {
            let quantum = [200, 160, 120, 80, 40, 20][(l / 10) as usize] * MS;
            let slpret = if l == 59 { 59 } else { 50 + l / 10 };
            DispRow { quantum, tqexp: l.saturating_sub(10), slpret, lwait: slpret }
        })
        .collect()
}

fn level_of_priority(p: i32) -> u8 {
    (29 - p).clamp(0, 59) as u8
}

#[derive(Debug, Clone)]
pub struct SolarisTs {
    table: Vec<DispRow>,
    maxwait: Dur,
    /// Key: 59 − level (smaller runs first).
    q: KeyQueue<u8>,
    level: PerTask<u8>,
    base: PerTask<i32>,
    watch: WaitWatch,
}

impl SolarisTs {
    pub fn new() -> Self {
        SolarisTs {
            table: default_table(),
            maxwait: 1000 * MS,
            q: KeyQueue::default(),
            level: PerTask::default(),
            base: PerTask::default(),
            watch: WaitWatch::default(),
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
        let cur = self.level.get(t);
        let mut level = match why {
            EnqueueReason::New => {
                self.base.set(t, task.priority);
                level_of_priority(task.priority)
            }
            EnqueueReason::SliceExpired => self.table[cur as usize].tqexp,
            EnqueueReason::Woken => self.table[cur as usize].slpret,
            _ => cur,
        };
        if task.priority < self.base.get(t) {
            level = level.max(level_of_priority(task.priority));
        }
        self.level.set(t, level);
        self.watch.note(t, now);
        self.q.enqueue(task, 59 - level, why);
    }

    fn dequeue(&mut self, task: TaskId) {
        self.q.remove(task);
        self.watch.forget(task);
    }

    fn pick_next(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
        while let Some(t) = self.watch.starved(now, self.maxwait) {
            let lvl = self.table[self.level.get(t) as usize].lwait.max(self.level.get(t));
            if self.q.rekey(t, 59 - lvl) {
                self.level.set(t, lvl);
            }
        }
        let (task, key) = self.q.pop(cpu)?;
        self.watch.forget(task);
        Some(Pick { task, slice: Some(self.table[(59 - key) as usize].quantum) })
    }

    fn charge(&mut self, _task: TaskId, _ran: Dur, _now: Time) {}

    fn preempts(&self, woken: TaskId, running: TaskId, _now: Time) -> bool {
        self.level.get(woken) > self.level.get(running)
    }

    fn prio_changed(&mut self, task: &TaskView, _now: Time) {
        if task.priority < self.base.get(task.id) {
            let l = self.level.get(task.id).max(level_of_priority(task.priority));
            self.level.set(task.id, l);
        }
    }

    fn queued(&self) -> usize {
        self.q.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_lowers_level_and_lengthens_slice_sleep_raises_it() {
        let mut p = SolarisTs::new();
        p.enqueue(&TaskView::new(0), EnqueueReason::New, 0);
        let a = p.pick_next(0, 0).unwrap();
        assert_eq!(a.slice, Some(120 * MS)); // level 29
        p.enqueue(&TaskView::new(0), EnqueueReason::SliceExpired, 0);
        assert_eq!(p.pick_next(0, 0).unwrap().slice, Some(160 * MS)); // level 19
        p.enqueue(&TaskView::new(0), EnqueueReason::Woken, 0);
        assert_eq!(p.level.get(0), 51);
        assert_eq!(p.pick_next(0, 0).unwrap().slice, Some(20 * MS));
    }

    #[test]
    fn an_inherited_priority_is_a_floor_not_a_wake_up() {
        let mut p = SolarisTs::new();
        p.enqueue(&TaskView { priority: 2, ..TaskView::new(0) }, EnqueueReason::New, 0);
        p.pick_next(0, 0);
        p.enqueue(&TaskView { priority: 2, ..TaskView::new(0) }, EnqueueReason::SliceExpired, 0);
        let expired = p.level.get(0);
        // Boosted to priority 1 while queued: the level rises to that priority's, no further
        // (a wake-up would lift it to slpret, 50+).
        p.requeue(&TaskView { priority: 1, ..TaskView::new(0) }, 0);
        assert_eq!(p.level.get(0), expired.max(level_of_priority(1)));
        assert!(p.level.get(0) < 50);
        assert_eq!(p.queued(), 1);
    }
}
