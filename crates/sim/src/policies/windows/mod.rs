//! The Windows thread scheduler (Russinovich, Solomon, Ionescu, *Windows Internals* 7th ed.
//! Part 1, ch. 4 "Threads" — not read here), modelled after what can be read: Microsoft's
//! "Scheduling Priorities", "Priority Boosts" and "Context Switches" pages, and the ReactOS
//! kernel (repo reactos/reactos; an NT 5.2-era reimplementation by Alex Ionescu, a co-author of
//! the book): ntoskrnl/ke/thrdschd.c (commit 06b28abb) `KiDeferredReadyThread`,
//! `KiAdjustQuantumThread`; ntoskrnl/ke/dpc.c `KiQuantumEnd`; ntoskrnl/include/internal/ke_x.h
//! `KiComputeNewPriority`; ntoskrnl/ke/balmgr.c (commit 2e91c4a8) `KiScanReadyQueues`,
//! `KeBalanceSetManager`; ntoskrnl/ps/process.c; ntoskrnl/ke/thrdobj.c. The numbers and their
//! sources are in [`table`].
//!
//! What is modelled:
//! - 32 levels, 31 the best, one FIFO ready list each ([`ready`]); the best ready thread runs.
//!   Base priority = priority class × relative thread priority ([`table::base_priority`]);
//!   16–31 are real-time: fixed, never boosted, never decayed ("Priority Boosts": only base
//!   priorities 0–15 are boosted).
//! - Pre-emption ("Scheduling Priorities", "Context Switches"; `KiDeferredReadyThread`): a
//!   ready thread with a higher current priority than a running one displaces it; the
//!   displaced thread goes to the **head** of its level with the rest of its quantum; a thread
//!   whose quantum ran out goes to the **tail**.
//! - The quantum in units, 3 per clock interval (`CLOCK_QUANTUM_DECREMENT`); `QuantumReset`
//!   from the quantum tables: a client's 6 units (2 clock intervals), a server's 36 (12), and
//!   for the foreground process `PspForegroundQuantum[PsPrioritySeparation]` (18 units, 3×, on
//!   a client). At quantum end (`KiQuantumEnd` → `KiComputeNewPriority(thread, 1)`) a variable
//!   thread's priority drops by `PriorityDecrement + 1`, not below its base, and the quantum is
//!   reset; real-time threads only get a new quantum.
//! - Wait completion (`KiDeferredReadyThread`, `AdjustUnwait`): a thread woken by another task
//!   (an event or semaphore: `EVENT_INCREMENT` 1) or by a device (I/O completion: the
//!   device's `IO_*_INCREMENT`, the `io_boost` parameter, default 1 = disk) gets priority
//!   `base + increment` (+ `PsPrioritySeparation` if it is in the foreground process) if that
//!   is higher than its current one, capped at 15 — computed from the **base**, so boosts do not
//!   stack. The foreground part is recorded as `PriorityDecrement`, so the first quantum end
//!   takes it away at once. No boost while `PriorityDecrement` is non-zero (a starvation boost
//!   still in force). The quantum is reset and then charged one unit for the wait
//!   (`WAIT_QUANTUM_DECREMENT`); threads with base 14–15 just get it reset.
//! - The balance-set manager (`KeBalanceSetManager`: a 1 s periodic timer; here a policy
//!   timer at every multiple of `scan`): `KiScanReadyQueues` walks levels 1–14 from where the
//!   previous pass stopped, looks at most at 16 threads and boosts at most 10, each one ready
//!   for at least 300 clock ticks (4.69 s at 64 Hz; "about 4 s"): priority 15,
//!   `PriorityDecrement` = 15 − old priority (so its first quantum end brings it back to its
//!   old priority − 1, at least its base), quantum 4 units (`WAIT_QUANTUM_DECREMENT * 4`), to
//!   the tail of level 15, pre-empting a lower running thread.
//!
//! Simpler than Windows: one global ready queue (no per-processor queues, ideal processors or
//! idle-processor selection; the balance-set manager scans that queue instead of one
//! processor's per pass); the quantum is charged by exact CPU time, 1 unit = clock/3 (as the
//! cycle-based accounting Windows Internals describes for Vista and later — not read here —
//! rather than ReactOS's tick decrements); a wake-up by another task is always an event
//! (+1) and any other wake-up (I/O done, a periodic release) an I/O completion with the one
//! `io_boost` of the run, since a task's blocked intervals name no device; the GUI boosts
//! (input, window messages, `IO_KEYBOARD_INCREMENT` to the window's thread) and priority
//! boosts for lock owners (AutoBoost) are not modelled, except the host's own priority
//! inheritance, which raises a thread's floor as `priority` is lowered.
//!
//! Workload mapping: `class` is the priority class (`idle`, `below_normal`, `normal` or none,
//! `above_normal`, `high`, `realtime`; `foreground` = a normal-class process in the
//! foreground); `priority` is the relative thread priority negated (the project's "lower
//! number = higher priority"): −2 HIGHEST, −1 ABOVE_NORMAL, 0 NORMAL, 1 BELOW_NORMAL, 2
//! LOWEST, −15 TIME_CRITICAL, 15 IDLE. So an unmarked task with `priority` p has base
//! `8 − p` (1..=15), as before.

pub mod ready;
pub mod table;
#[cfg(test)]
mod tests;

use super::common::PerTask;
use super::spec::ms;
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};
use ready::ReadyQueues;
pub use table::WindowsParams;
use table::{LOW_REALTIME, STARVED_BOOST, STARVED_QUANTUM, UNITS_PER_CLOCK, WAIT_DECREMENT};

/// A thread's scheduling state (the `KTHREAD` fields of the same names).
#[derive(Debug, Clone, Copy, Default)]
struct Thread {
    /// The process's base priority (`PspPriorityTable`).
    class_base: i32,
    /// The workload priority the thread arrived with (inheritance lowers the view's).
    own_priority: i32,
    base: u8,
    /// Floor from priority inheritance (0 = none).
    inherited: u8,
    priority: u8,
    decrement: u8,
    /// Quantum left, in units × clock interval (ns × 3): CPU time `d` costs `3d`.
    quantum: u64,
    /// `QuantumReset`, in the same scale.
    reset: u64,
    foreground: bool,
    /// `WaitTime`: the clock tick at which it last became ready.
    ready_tick: u64,
    /// The level it is queued at, if queued.
    queued: Option<u8>,
}

impl Thread {
    fn realtime(&self) -> bool {
        self.base >= LOW_REALTIME
    }

    fn floor(&self) -> u8 {
        self.base.max(self.inherited)
    }

    /// `KiComputeNewPriority`: take the decrement and `adjustment` off, not below the base.
    fn compute_new_priority(&mut self, adjustment: u8) -> u8 {
        if self.priority >= LOW_REALTIME {
            return self.priority;
        }
        let p = self.priority.saturating_sub(self.decrement + adjustment).max(self.floor());
        self.decrement = 0;
        p
    }
}

#[derive(Debug, Clone)]
pub struct Windows {
    params: WindowsParams,
    ready: ReadyQueues,
    threads: PerTask<Thread>,
    /// Where the next balance-set scan starts (`KPRCB.QueueIndex`).
    queue_index: u8,
    next_scan: Time,
    /// Threads the last scan boosted that may still displace a running thread.
    pending_boosts: usize,
    cpus: usize,
    running: usize,
}

impl Windows {
    pub fn with_params(params: WindowsParams) -> Self {
        let params = WindowsParams { clock: params.clock.max(1), scan: params.scan.max(1), ..params };
        Windows {
            next_scan: params.scan,
            params,
            ready: ReadyQueues::default(),
            threads: PerTask::default(),
            queue_index: 1,
            pending_boosts: 0,
            cpus: 1,
            running: 0,
        }
    }

    fn units(&self, units: u64) -> u64 {
        units * self.params.clock
    }

    fn tick(&self, now: Time) -> u64 {
        now / self.params.clock
    }

    /// The current priority of `t` (tests and reports).
    pub fn priority_of(&self, t: TaskId) -> u8 {
        self.threads.get(t).priority
    }

    /// The base priority of `t`.
    pub fn base_of(&self, t: TaskId) -> u8 {
        self.threads.get(t).base
    }

    /// The quantum left to `t`, in units (rounded up).
    pub fn quantum_units_of(&self, t: TaskId) -> u64 {
        self.threads.get(t).quantum.div_ceil(self.params.clock)
    }

    fn arrive(&mut self, task: &TaskView) -> Thread {
        let (class_base, foreground) = table::class_base(task.class);
        let base = table::base_priority(class_base, task.priority);
        let reset = self.units(self.params.quantum_units(class_base, foreground));
        Thread {
            class_base,
            own_priority: task.priority,
            base,
            inherited: 0,
            priority: base,
            decrement: 0,
            quantum: reset,
            reset,
            foreground,
            ready_tick: 0,
            queued: None,
        }
    }

    /// `KiDeferredReadyThread` with `AdjustUnwait`: the wait-completion boost and quantum.
    fn unwait(&self, th: &mut Thread, increment: u8) {
        if th.priority >= LOW_REALTIME {
            th.quantum = th.reset;
            return;
        }
        if th.base >= LOW_REALTIME - 2 {
            th.quantum = th.reset;
        } else {
            if th.decrement == 0 && increment != 0 {
                th.quantum = th.reset;
            }
            th.quantum = th.quantum.saturating_sub(self.units(WAIT_DECREMENT));
            if th.quantum == 0 {
                th.quantum = th.reset;
                th.priority = th.compute_new_priority(1);
            }
        }
        if th.decrement == 0 {
            let boosted = th.base + increment;
            let mut p = boosted + if th.foreground { self.params.separation } else { 0 };
            if p > th.priority {
                p = p.min(LOW_REALTIME - 1);
                if p > boosted {
                    th.decrement = p - boosted;
                }
                th.priority = p;
            }
        }
    }

    /// `KiScanReadyQueues`: boost threads ready for `starvation_ticks` or more to 15.
    fn scan(&mut self, now: Time) {
        let now_tick = self.tick(now);
        let (mut count, mut number) = (10u32, 16u32);
        let mut index = self.queue_index;
        let mut summary = self.ready.summary() & ((1 << STARVED_BOOST) - 2);
        let mut boosted = Vec::new();
        while summary != 0 {
            if index > STARVED_BOOST - 1 {
                index = 1;
            }
            if summary & (1 << index) != 0 {
                summary ^= 1 << index;
                let members: Vec<TaskId> = self.ready.level(index).iter().copied().collect();
                for t in members {
                    let th = self.threads.get(t);
                    if now_tick >= th.ready_tick + self.params.starvation_ticks {
                        self.ready.remove(t, index);
                        let th = self.threads.get_mut(t);
                        th.decrement += STARVED_BOOST - th.priority;
                        th.priority = STARVED_BOOST;
                        th.quantum = self.params.clock * STARVED_QUANTUM;
                        th.queued = None;
                        boosted.push(t);
                        count -= 1;
                    }
                    number -= 1;
                    if number == 0 || count == 0 {
                        break;
                    }
                }
            }
            index += 1;
            if number == 0 || count == 0 {
                break;
            }
        }
        self.queue_index = if count != 0 && number != 0 { 1 } else { index };
        let idle = self.cpus.saturating_sub(self.running);
        self.pending_boosts = boosted.len().saturating_sub(idle);
        for t in boosted {
            let th = self.threads.get_mut(t);
            th.ready_tick = now_tick;
            th.queued = Some(STARVED_BOOST);
            self.ready.reinsert(t, STARVED_BOOST, false);
        }
    }

    fn insert(&mut self, task: &TaskView, now: Time, head: bool) {
        let tick = self.tick(now);
        let th = self.threads.get_mut(task.id);
        th.ready_tick = tick;
        th.queued = Some(th.priority);
        let level = th.priority;
        self.ready.insert(task, level, head);
        if self.next_scan < now {
            self.next_scan = (now / self.params.scan + 1) * self.params.scan;
        }
    }
}

impl Policy for Windows {
    fn name(&self) -> String {
        let p = &self.params;
        format!(
            "windows:clock={},quantum={},fixed={},separation={},io_boost={},starvation={},scan={}",
            ms(p.clock),
            if p.long { "long" } else { "short" },
            u8::from(p.fixed),
            p.separation,
            p.io_boost,
            p.starvation_ticks,
            ms(p.scan)
        )
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, now: Time) {
        // A task this instance has not seen (new, or moved here from another CPU's queue by the
        // host) starts from its class and priority: a zero `reset` marks a thread never set up.
        let known = self.threads.get(task.id).reset > 0;
        let mut th = if why == EnqueueReason::New || !known { self.arrive(task) } else { self.threads.get(task.id) };
        match why {
            EnqueueReason::Woken => {
                let increment = if task.waker_cpu.is_some() { table::EVENT_INCREMENT } else { self.params.io_boost };
                self.unwait(&mut th, increment);
            }
            EnqueueReason::SliceExpired => {
                th.quantum = th.reset;
                th.priority = th.compute_new_priority(1);
            }
            _ => {}
        }
        th.inherited =
            if task.priority < th.own_priority { table::base_priority(th.class_base, task.priority) } else { 0 };
        th.priority = th.priority.max(th.inherited);
        if th.realtime() {
            th.priority = th.floor();
        }
        self.threads.set(task.id, th);
        self.insert(task, now, why == EnqueueReason::Preempted);
    }

    fn dequeue(&mut self, task: TaskId) {
        if let Some(level) = self.threads.get(task).queued {
            self.ready.remove(task, level);
            self.threads.get_mut(task).queued = None;
        }
    }

    fn pick_next(&mut self, cpu: CpuId, _now: Time) -> Option<Pick> {
        let (task, _) = self.ready.pop(cpu)?;
        let th = self.threads.get_mut(task);
        th.queued = None;
        if th.quantum == 0 {
            th.quantum = th.reset;
        }
        self.running += 1;
        Some(Pick { task, slice: Some(th.quantum.div_ceil(UNITS_PER_CLOCK)) })
    }

    fn charge(&mut self, task: TaskId, ran: Dur, _now: Time) {
        self.running = self.running.saturating_sub(1);
        let th = self.threads.get_mut(task);
        th.quantum = th.quantum.saturating_sub(ran.saturating_mul(UNITS_PER_CLOCK));
    }

    fn preempts(&self, woken: TaskId, running: TaskId, _now: Time) -> bool {
        self.threads.get(woken).priority > self.threads.get(running).priority
    }

    fn task_exit(&mut self, task: TaskId) {
        self.dequeue(task);
    }

    fn next_timer(&self) -> Option<Time> {
        (!self.ready.is_empty()).then_some(self.next_scan)
    }

    fn timer(&mut self, now: Time) {
        if now >= self.next_scan {
            self.scan(now);
            self.next_scan = (now / self.params.scan + 1) * self.params.scan;
        }
    }

    fn preempt_current(&mut self, running: TaskId, _now: Time) -> bool {
        if self.pending_boosts > 0 && self.threads.get(running).priority < STARVED_BOOST {
            self.pending_boosts -= 1;
            return true;
        }
        false
    }

    fn queued(&self) -> usize {
        self.ready.len()
    }

    fn prio_changed(&mut self, task: &TaskView, _now: Time) {
        let th = self.threads.get_mut(task.id);
        th.inherited =
            if task.priority < th.own_priority { table::base_priority(th.class_base, task.priority) } else { 0 };
        th.priority = th.priority.max(th.inherited);
    }

    fn set_cpus(&mut self, cpus: usize) {
        self.cpus = cpus.max(1);
    }
}
