//! Where a replay's tasks are when the compared window opens. On two CPUs the first
//! milliseconds of a run decide which tasks share a CPU (wake-ups onto an idle CPU, the first
//! balances, races of tens of µs between the CPUs' ticks and wake-ups), and the host's own tasks,
//! which the replay holds on the CPUs they ran on live, then meet whichever case task the kernel
//! put there. The replay leaves those first milliseconds out of the comparison; at the window's
//! start (a timer) it puts each task given here on the CPU the kernel had it on then, once,
//! and from there the model's placement and balancing run free: whether the model keeps that
//! layout is its own doing.
//!
//! The fair and real-time tasks given are moved. A fair task running elsewhere is stopped and
//! moved as an active balance moves one (a real-time one moves when it next wakes); a waiting one
//! moves queue as a balance moves it, and so does a delayed one (blocked, still queued: it stays
//! delayed there); a blocked one is handed to the CPU's queue, where it will wake (its previous
//! CPU). A task between jobs (stopped) is left where it is.

use super::{Class, Linux};
use crate::policy::{CpuId, TaskId, Time};

/// The kernel's layout at `at` (workload time): each task's CPU then.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StartLayout {
    pub at: Time,
    pub cpus: Vec<(TaskId, CpuId)>,
}

/// The layout to set, and what setting it did.
#[derive(Debug, Clone, Default)]
pub(super) struct LayoutSync {
    layout: Option<StartLayout>,
    /// (task, from, to) for each task moved, or to be moved when it next stops (running: by
    /// the active-balance path) or wakes (running real-time).
    moved: Vec<(TaskId, CpuId, CpuId)>,
    /// Real-time tasks that were running: moved when they next wake.
    at_wake: Vec<(TaskId, CpuId)>,
}

impl LayoutSync {
    /// When the layout is to be set, until it is.
    pub(super) fn next_due(&self) -> Option<Time> {
        self.layout.as_ref().map(|l| l.at)
    }
}

impl Linux {
    /// Put the fair and real-time tasks of `layout` on the CPUs it gives at its time (see the
    /// module documentation). Only with more than one CPU.
    pub fn with_start_layout(mut self, layout: StartLayout) -> Self {
        self.layout = LayoutSync { layout: Some(layout), ..LayoutSync::default() };
        self
    }

    /// The tasks the start layout moved: (task, from, to).
    pub fn start_layout_moves(&self) -> &[(TaskId, CpuId, CpuId)] {
        &self.layout.moved
    }

    /// The CPU a task waking now on `prev` is placed from: the layout's, for a real-time task
    /// that was running when the layout was set (it moves there first).
    pub(crate) fn layout_move_at_wake(&mut self, t: TaskId, prev: CpuId) -> CpuId {
        let Some(k) = self.layout.at_wake.iter().position(|&(x, _)| x == t) else { return prev };
        let (_, to) = self.layout.at_wake.swap_remove(k);
        if to != prev && self.class.get(t) == Class::RealTime {
            self.move_off(t, prev, to);
            return to;
        }
        prev
    }

    /// At the timer: set the layout if it is due.
    pub(super) fn set_start_layout_due(&mut self, now: Time) {
        if self.layout.layout.as_ref().is_none_or(|l| l.at > now) {
            return;
        }
        let layout = self.layout.layout.take().expect("due");
        if self.smp.is_none() {
            return;
        }
        for (t, to) in layout.cpus {
            let class = self.class.get(t);
            if to >= self.rqs.len() || !self.allowed(t, to) {
                continue;
            }
            let arrived = self.smp.as_ref().and_then(|s| s.tasks.get_ref(t)).is_some_and(|s| s.attached.is_some());
            let from = self.task_cpu.get(t);
            if (class == Class::Fair && !arrived) || from == to {
                continue;
            }
            let running = self.rqs[from].curr.is_some_and(|(c, _)| c == t);
            let fair = &self.rqs[from].fair;
            match class {
                Class::Fair if running => {
                    let smp = self.smp.as_mut().expect("smp");
                    if smp.cpus[from].active.is_some() {
                        continue;
                    }
                    // Stopped by the engine's question after this timer (`preempt_current`), then
                    // moved on its re-queue, as an active balance's task is.
                    smp.cpus[from].active = Some((t, to));
                }
                Class::Fair if fair.is_waiting(t) => self.migrate_queued(t, from, to, now),
                Class::Fair if fair.is_delayed(t) => self.migrate_delayed(t, from, to, now),
                Class::Fair if !fair.on_queue(t) => self.move_off(t, from, to),
                Class::Fair => continue,
                // A running real-time task moves when it next wakes ([`Linux::layout_move_at_wake`]).
                Class::RealTime if running => self.layout.at_wake.push((t, to)),
                Class::RealTime if self.rqs[from].rt.has(t) => self.migrate_queued(t, from, to, now),
                Class::RealTime => self.move_off(t, from, to),
                Class::Deadline => continue,
            }
            self.layout.moved.push((t, from, to));
        }
    }
}
