//! The one event type every parser produces: the scheduler tracepoints schedlab reads
//! (sched_switch, the three wake-up events, fork/exec/exit and migrate_task), with times in
//! integer nanoseconds and the line of the source text each came from.

use serde::{Deserialize, Serialize};

/// A Linux task id (what the tracepoints call `pid`: a thread id).
pub type Pid = i32;

/// One parsed trace event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Trace clock time in nanoseconds (the text formats give µs, or ns with `--ns`-like options).
    pub ts: u64,
    /// The CPU that recorded the event.
    pub cpu: usize,
    /// 1-based line number in the source text.
    pub line: usize,
    pub kind: EventKind,
    /// The task running on the CPU when the event was recorded (the line's task column; 0 =
    /// idle), when the format gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Pid>,
    /// Recorded in an interrupt (true) or in task context (false), when the format says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irq: Option<bool>,
}

impl Event {
    /// The task that gave this event from task context (a wake-up by a pipe write, a futex
    /// wake), if the line says so: not the idle task, not an interrupt.
    pub fn task_context(&self) -> Option<Pid> {
        match (self.task, self.irq) {
            (Some(p), Some(false)) if p != 0 => Some(p),
            _ => None,
        }
    }
}

/// A wake-up (sched_wakeup, sched_wakeup_new or sched_waking).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wake {
    pub comm: String,
    pub pid: Pid,
    pub prio: i32,
    /// The CPU the task is to run on (absent in some old formats).
    pub target_cpu: Option<usize>,
}

/// A context switch on one CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Switch {
    pub prev_comm: String,
    pub prev_pid: Pid,
    pub prev_prio: i32,
    /// `R`/`R+` = pre-empted while runnable; `S`, `D`, `I`, `D|K`, … = blocked; `X`/`Z` = exiting.
    pub prev_state: String,
    pub next_comm: String,
    pub next_pid: Pid,
    pub next_prio: i32,
}

impl Switch {
    /// The outgoing task was still runnable: an involuntary switch.
    pub fn preempted(&self) -> bool {
        self.prev_state.starts_with('R')
    }

    /// The outgoing task is exiting (`X` dead or `Z` zombie).
    pub fn exiting(&self) -> bool {
        self.prev_state.contains(['X', 'Z'])
    }
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventKind {
    Switch(Switch),
    Wakeup(Wake),
    WakeupNew(Wake),
    Waking(Wake),
    Fork {
        parent_comm: String,
        parent_pid: Pid,
        child_comm: String,
        child_pid: Pid,
    },
    Exec {
        filename: String,
        pid: Pid,
        old_pid: Pid,
    },
    Exit {
        comm: String,
        pid: Pid,
        prio: i32,
    },
    Migrate {
        comm: String,
        pid: Pid,
        prio: i32,
        orig_cpu: usize,
        dest_cpu: usize,
    },
    /// `sys_enter_clock_gettime` (the syscall tracepoint): the task of the line's task column
    /// reads clock `which_clock`.
    ClockRead {
        which_clock: u64,
    },
}

impl EventKind {
    /// The tracepoint name (`sched_switch`, …).
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::Switch(_) => "sched_switch",
            EventKind::Wakeup(_) => "sched_wakeup",
            EventKind::WakeupNew(_) => "sched_wakeup_new",
            EventKind::Waking(_) => "sched_waking",
            EventKind::Fork { .. } => "sched_process_fork",
            EventKind::Exec { .. } => "sched_process_exec",
            EventKind::Exit { .. } => "sched_process_exit",
            EventKind::Migrate { .. } => "sched_migrate_task",
            EventKind::ClockRead { .. } => "sys_enter_clock_gettime",
        }
    }
}

/// Every tracepoint name the parsers turn into an [`EventKind`].
pub const KNOWN_EVENTS: &[&str] = &[
    "sched_switch",
    "sched_wakeup",
    "sched_wakeup_new",
    "sched_waking",
    "sched_process_fork",
    "sched_process_exec",
    "sched_process_exit",
    "sched_migrate_task",
    "sys_enter_clock_gettime",
];

/// `which_clock` of a task's own CPU clocks (CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID):
/// reading one runs the scheduler's `update_curr()` for the reader.
pub const OWN_CPU_CLOCKS: [u64; 2] = [2, 3];

/// What a tracepoint `prio` field says about the task's scheduling class. The kernel prints
/// `p->prio`: −1 for SCHED_DEADLINE, 0..=98 for real-time (99 − rt_priority), 100..=139 for
/// the fair class (120 + nice; SCHED_NORMAL, SCHED_BATCH and SCHED_IDLE look alike).
/// A priority-inheritance boost shows the boosted value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "class", rename_all = "snake_case")]
pub enum PrioClass {
    Deadline,
    /// SCHED_FIFO or SCHED_RR (the trace does not say which); `rt_priority` 1..=99.
    RealTime {
        rt_priority: u32,
    },
    /// Fair class with this nice value.
    Fair {
        nice: i32,
    },
    Unknown {
        prio: i32,
    },
}

impl PrioClass {
    pub fn from_prio(prio: i32) -> PrioClass {
        match prio {
            -1 => PrioClass::Deadline,
            0..=98 => PrioClass::RealTime { rt_priority: (99 - prio) as u32 },
            100..=139 => PrioClass::Fair { nice: prio - 120 },
            _ => PrioClass::Unknown { prio },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prio_maps_to_class() {
        assert_eq!(PrioClass::from_prio(-1), PrioClass::Deadline);
        assert_eq!(PrioClass::from_prio(0), PrioClass::RealTime { rt_priority: 99 });
        assert_eq!(PrioClass::from_prio(98), PrioClass::RealTime { rt_priority: 1 });
        assert_eq!(PrioClass::from_prio(120), PrioClass::Fair { nice: 0 });
        assert_eq!(PrioClass::from_prio(100), PrioClass::Fair { nice: -20 });
        assert_eq!(PrioClass::from_prio(139), PrioClass::Fair { nice: 19 });
        assert_eq!(PrioClass::from_prio(99), PrioClass::Unknown { prio: 99 });
    }

    #[test]
    fn switch_states() {
        let mut s = Switch {
            prev_comm: "a".into(),
            prev_pid: 1,
            prev_prio: 120,
            prev_state: "R+".into(),
            next_comm: "b".into(),
            next_pid: 2,
            next_prio: 120,
        };
        assert!(s.preempted() && !s.exiting());
        s.prev_state = "Z".into();
        assert!(!s.preempted() && s.exiting());
        s.prev_state = "D|K".into();
        assert!(!s.preempted() && !s.exiting());
    }
}
