//! The Windows scheduler's numbers: base priority from priority class × relative thread
//! priority, the quantum tables, the wait-completion increments, and the spec parameters that
//! choose among them. Sources (cited per item below):
//! - Microsoft, "Scheduling Priorities" (learn.microsoft.com/windows/win32/procthread/
//!   scheduling-priorities): the base-priority table; "SetThreadPriority": IDLE gives 1 (16 for
//!   REALTIME_PRIORITY_CLASS), TIME_CRITICAL 15 (31).
//! - ReactOS ntoskrnl/ps/process.c (`PspPriorityTable`, `PspVariableQuantums`,
//!   `PspFixedQuantums`, `PspComputeQuantumAndPriority`, `PsChangeQuantumTable`).
//! - ReactOS ntoskrnl/ke/thrdobj.c `KeSetBasePriorityThread` (saturation and clamping).
//! - ReactOS sdk wdm.h / ntddk.h `IO_*_INCREMENT`, `EVENT_INCREMENT`, `SEMAPHORE_INCREMENT`.
//! - ReactOS ntoskrnl/include/internal/ke.h (i386 ke.h in the NT sources it follows):
//!   `CLOCK_QUANTUM_DECREMENT` 3, `WAIT_QUANTUM_DECREMENT` 1.

use super::super::spec::{Params, SpecError};
use crate::policy::{Dur, MS};

/// `LOW_REALTIME_PRIORITY`: 16–31 are the real-time levels, 1–15 the variable ones.
pub const LOW_REALTIME: u8 = 16;
/// `THREAD_BOOST_PRIORITY` (ReactOS ke/balmgr.c: `LOW_REALTIME_PRIORITY - 1`).
pub const STARVED_BOOST: u8 = LOW_REALTIME - 1;
/// Quantum units taken off by one clock interrupt (`CLOCK_QUANTUM_DECREMENT`): three units make
/// one clock interval.
pub const UNITS_PER_CLOCK: u64 = 3;
/// Quantum units taken off on a wait completion (`WAIT_QUANTUM_DECREMENT`).
pub const WAIT_DECREMENT: u64 = 1;
/// The balance-set manager's quantum for a starved thread: `WAIT_QUANTUM_DECREMENT * 4` units
/// (ReactOS ke/balmgr.c `KiScanReadyQueues`).
pub const STARVED_QUANTUM: u64 = 4 * WAIT_DECREMENT;
/// `EVENT_INCREMENT` = `SEMAPHORE_INCREMENT` = 1: the boost for a wait on an event or semaphore
/// set by another thread.
pub const EVENT_INCREMENT: u8 = 1;

/// The `IO_*_INCREMENT` values of wdm.h, by device, for the `io_boost` parameter.
pub const IO_INCREMENTS: [(&str, u8); 12] = [
    ("none", 0),
    ("cdrom", 1),
    ("disk", 1),
    ("parallel", 1),
    ("video", 1),
    ("mailslot", 2),
    ("named_pipe", 2),
    ("network", 2),
    ("serial", 2),
    ("keyboard", 6),
    ("mouse", 6),
    ("sound", 8),
];

/// A priority class's base priority (`PspPriorityTable`: idle 4, normal 8, high 13, realtime 24,
/// below normal 6, above normal 10), and whether the workload marks the process as the
/// foreground one. `class` strings: `idle`, `below_normal`, `normal` (or none), `above_normal`,
/// `high`, `realtime`, and `foreground` = a NORMAL_PRIORITY_CLASS process in the foreground.
/// Any other string (another policy's class) is a normal background process.
pub fn class_base(class: Option<&str>) -> (i32, bool) {
    match class {
        Some("idle") => (4, false),
        Some("below_normal") => (6, false),
        Some("above_normal") => (10, false),
        Some("high") => (13, false),
        Some("realtime") => (24, false),
        Some("foreground") => (8, true),
        _ => (8, false),
    }
}

/// A thread's base priority from its process's base and its workload `priority`. The workload
/// number keeps the project's convention (a lower number is a higher priority, so priority
/// inheritance can lower it), so the relative thread priority is its negation: `priority` −2 =
/// THREAD_PRIORITY_HIGHEST, −1 ABOVE_NORMAL, 0 NORMAL, 1 BELOW_NORMAL, 2 LOWEST, −15
/// TIME_CRITICAL, 15 IDLE. As `KeSetBasePriorityThread`: a relative priority of magnitude ≥ 15
/// saturates (SetThreadPriority passes ±15 as ±16, `(HIGH_PRIORITY + 1) / 2`); a real-time
/// class is clamped to 16..=31, any other to 1..=15.
pub fn base_priority(process_base: i32, priority: i32) -> u8 {
    let relative = -priority.clamp(-16, 16);
    let relative = if relative.abs() >= 15 { 16 * relative.signum() } else { relative };
    let base = process_base + relative;
    if process_base >= LOW_REALTIME as i32 {
        base.clamp(LOW_REALTIME as i32, 31) as u8
    } else {
        base.clamp(1, LOW_REALTIME as i32 - 1) as u8
    }
}

/// The spec's parameters (defaults: a Windows client).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowsParams {
    /// The clock interval (default 15.625 ms, 64 Hz).
    pub clock: Dur,
    /// Long quantums (a server's default) instead of short (a client's).
    pub long: bool,
    /// Fixed quantums (a server's default): foreground threads get no longer quantum.
    pub fixed: bool,
    /// `PsPrioritySeparation` (0..=2, default 2 on a client): index into the quantum table for a
    /// foreground process, and its extra wake-up boost.
    pub separation: u8,
    /// Increment for an I/O completion (a wake-up no other task gave): the device's
    /// `IO_*_INCREMENT`; default 1 (disk).
    pub io_boost: u8,
    /// Clock ticks a ready thread must have waited to be starved (balmgr.c: 300).
    pub starvation_ticks: u64,
    /// The balance-set manager's period (balmgr.c: a 1000 ms periodic timer).
    pub scan: Dur,
}

impl Default for WindowsParams {
    fn default() -> Self {
        WindowsParams {
            clock: 15_625_000,
            long: false,
            fixed: false,
            separation: 2,
            io_boost: 1,
            starvation_ticks: 300,
            scan: 1000 * MS,
        }
    }
}

impl WindowsParams {
    /// `windows:clock=15.625ms,quantum=short,fixed=0,separation=2,io_boost=disk,starvation=300,scan=1000ms`
    /// (`quantum=long,fixed=1` = a server; `io_boost` a number 0..=15 or a device name of
    /// [`IO_INCREMENTS`]; `starvation` in clock ticks).
    pub fn parse(p: &mut Params) -> Result<Self, SpecError> {
        let d = WindowsParams::default();
        let long = match p.string("quantum").as_deref() {
            None | Some("short") => false,
            Some("long") => true,
            Some(v) => return Err(p.error("quantum", format!("`{v}`: expected short or long"))),
        };
        let io_boost = match p.string("io_boost") {
            None => d.io_boost,
            Some(v) => match IO_INCREMENTS.iter().find(|(n, _)| *n == v) {
                Some(&(_, b)) => b,
                None => v
                    .parse::<u8>()
                    .ok()
                    .filter(|&b| b <= 15)
                    .ok_or_else(|| p.error("io_boost", format!("`{v}`: expected 0..=15 or a device name")))?,
            },
        };
        Ok(WindowsParams {
            clock: p.time("clock", d.clock as f64 / 1e6)?,
            long,
            fixed: p.uint("fixed", 0, 0, 1)? == 1,
            separation: p.uint("separation", 2, 0, 2)? as u8,
            io_boost,
            starvation_ticks: p.uint("starvation", d.starvation_ticks, 1, 1 << 32)?,
            scan: p.time("scan", d.scan as f64 / 1e6)?,
        })
    }

    /// `QuantumReset` in units for a process (`PspComputeQuantumAndPriority`): an idle-class
    /// process gets 6; others `PspForegroundQuantum[i]`, `i` = `PsPrioritySeparation` for the
    /// foreground process and 0 otherwise, from the table `PsChangeQuantumTable` picked:
    /// variable short 6/12/18, variable long 12/24/36, fixed short 18, fixed long 36.
    pub fn quantum_units(&self, process_base: i32, foreground: bool) -> u64 {
        if process_base == 4 {
            return 6;
        }
        let table: [u64; 3] = match (self.fixed, self.long) {
            (false, false) => [6, 12, 18],
            (false, true) => [12, 24, 36],
            (true, false) => [18, 18, 18],
            (true, true) => [36, 36, 36],
        };
        table[if foreground { self.separation as usize } else { 0 }]
    }
}
