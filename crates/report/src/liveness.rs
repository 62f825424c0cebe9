//! Is the process that started a run still alive? A run row records the host, the boot id,
//! the pid and the pid's start time (in clock ticks since boot, `/proc/<pid>/stat` field 22);
//! the triple survives pid reuse, so a row whose process is gone can be marked interrupted.

use std::fs;

/// Who is running: what a run row stores to recognise its process later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessId {
    pub host: String,
    pub boot_id: String,
    pub pid: u32,
    /// Start time of the process in clock ticks since boot (0 if unknown).
    pub start_ticks: u64,
}

impl ProcessId {
    /// The current process.
    pub fn current() -> Self {
        let pid = std::process::id();
        ProcessId { host: hostname(), boot_id: boot_id(), pid, start_ticks: start_ticks(pid).unwrap_or(0) }
    }

    /// Whether this process is certainly gone. Only answerable on the same host: a process on
    /// another machine is never declared dead from here.
    pub fn is_gone(&self) -> bool {
        let me = ProcessId::current();
        if self.host != me.host {
            return false;
        }
        if !self.boot_id.is_empty() && !me.boot_id.is_empty() && self.boot_id != me.boot_id {
            return true; // the machine rebooted since
        }
        match start_ticks(self.pid) {
            None => true,
            Some(t) => self.start_ticks != 0 && t != self.start_ticks, // pid reused by another process
        }
    }
}

/// The host name (`/proc/sys/kernel/hostname`).
pub fn hostname() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).unwrap_or_default()
}

fn boot_id() -> String {
    fs::read_to_string("/proc/sys/kernel/random/boot_id").map(|s| s.trim().to_string()).unwrap_or_default()
}

/// Start time of `pid` in clock ticks since boot, or `None` if there is no such process
/// (a zombie still counts as present until it is reaped).
pub fn start_ticks(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    // After ')' come field 3 (state) onwards; starttime is field 22, i.e. the 20th of these.
    rest.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_process_is_alive_and_a_reaped_child_is_gone() {
        let me = ProcessId::current();
        assert!(me.start_ticks > 0);
        assert!(!me.is_gone());
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let gone = ProcessId { pid, start_ticks: 1, ..me.clone() };
        assert!(gone.is_gone());
        // Same pid, wrong start time: pid reuse is detected.
        assert!(ProcessId { start_ticks: me.start_ticks + 1, ..me.clone() }.is_gone());
        // Another host: never declared dead from here.
        assert!(!ProcessId { host: "elsewhere".into(), pid, ..me }.is_gone());
    }
}
