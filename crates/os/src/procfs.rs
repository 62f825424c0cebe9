//! Reading `/proc/<pid>/stat` (one parser for every caller) and telling whether a process is
//! still the one we knew: a process is identified by host, boot id, pid and its start time in
//! clock ticks since boot (field 22), a triple that survives pid reuse.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;

/// The fields of `/proc/<pid>/stat` schedlab uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    /// R, S, D, T, t, Z, ...
    pub state: char,
    pub ppid: i32,
    /// Process group id.
    pub pgrp: i32,
    /// Start time in clock ticks since boot.
    pub start_ticks: u64,
}

/// `/proc/<pid>/stat` of a process, None if there is no such process (a zombie is still there).
pub fn stat(pid: i32) -> Option<ProcStat> {
    parse_stat(&fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Parse the text of a stat file. The command name (field 2) may hold spaces and parentheses:
/// fields resume after the last ')'.
pub fn parse_stat(text: &str) -> Option<ProcStat> {
    let rest = &text[text.rfind(')')? + 1..];
    let mut f = rest.split_whitespace();
    let state = f.next()?.chars().next()?;
    let ppid = f.next()?.parse().ok()?;
    let pgrp = f.next()?.parse().ok()?;
    // After pgrp (field 5) … starttime (field 22): the 17th after pgrp.
    let start_ticks = f.nth(16)?.parse().ok()?;
    Some(ProcStat { state, ppid, pgrp, start_ticks })
}

/// A task's signal masks from `/proc/<pid>/status` (bit `n − 1` is signal `n`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SignalMasks {
    pub blocked: u64,
    pub ignored: u64,
    pub caught: u64,
}

/// The signal masks of process `pid`, or of the calling thread when `pid` is None.
pub fn signal_masks(pid: Option<i32>) -> Option<SignalMasks> {
    let path = pid.map_or_else(|| "/proc/thread-self/status".to_string(), |p| format!("/proc/{p}/status"));
    let text = fs::read_to_string(path).ok()?;
    let hex = |key: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(key))?;
        u64::from_str_radix(line.split_whitespace().nth(1)?, 16).ok()
    };
    Some(SignalMasks { blocked: hex("SigBlk:")?, ignored: hex("SigIgn:")?, caught: hex("SigCgt:")? })
}

/// The command name of a task (`/proc/<pid>/comm`).
pub fn comm(pid: i32) -> Option<String> {
    fs::read_to_string(format!("/proc/{pid}/comm")).ok().map(|s| s.trim_end().to_string())
}

/// Every thread's CPU time so far as the scheduler counts it (`se.sum_exec_runtime`: the first
/// field of `/proc/<pid>/task/<tid>/schedstat`, ns), by thread id.
pub fn thread_cpu_times() -> BTreeMap<i32, u64> {
    let mut out = BTreeMap::new();
    let Ok(procs) = fs::read_dir("/proc") else { return out };
    for pid in procs.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok()) {
        for tid in threads(pid) {
            let path = format!("/proc/{pid}/task/{tid}/schedstat");
            if let Some(ns) = fs::read_to_string(path).ok().and_then(|s| s.split_whitespace().next()?.parse().ok()) {
                out.insert(tid, ns);
            }
        }
    }
    out
}

/// The threads (task ids) of process `pid`, its main thread first.
pub fn threads(pid: i32) -> Vec<i32> {
    let mut t: Vec<i32> = fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default();
    t.sort_unstable_by_key(|&tid| (tid != pid, tid));
    t
}

/// Process `root` and every process below it (children, their children, …), root first.
pub fn descendants(root: i32) -> Vec<i32> {
    let parents: Vec<(i32, i32)> = fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
                .filter_map(|pid| Some((pid, stat(pid)?.ppid)))
                .collect()
        })
        .unwrap_or_default();
    let mut out = vec![root];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        out.extend(parents.iter().filter(|&&(_, ppid)| ppid == p).map(|&(pid, _)| pid));
        i += 1;
    }
    out
}

/// The host name (`/proc/sys/kernel/hostname`).
pub fn hostname() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname").map(|s| s.trim().to_string()).unwrap_or_default()
}

/// This boot's id (`/proc/sys/kernel/random/boot_id`).
pub fn boot_id() -> String {
    fs::read_to_string("/proc/sys/kernel/random/boot_id").map(|s| s.trim().to_string()).unwrap_or_default()
}

/// Who a process is, in a form that can be stored and checked later.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessIdentity {
    pub host: String,
    pub boot_id: String,
    pub pid: u32,
    /// Start time of the process in clock ticks since boot (0 if unknown).
    pub start_ticks: u64,
}

impl ProcessIdentity {
    /// The current process.
    pub fn current() -> Self {
        let pid = std::process::id();
        ProcessIdentity {
            host: hostname(),
            boot_id: boot_id(),
            pid,
            start_ticks: stat(pid as i32).map_or(0, |s| s.start_ticks),
        }
    }

    /// Whether this process is certainly gone. Only answerable on the same host: a process on
    /// another machine is never declared dead from here.
    pub fn is_gone(&self) -> bool {
        if self.host != hostname() {
            return false;
        }
        let boot = boot_id();
        if !self.boot_id.is_empty() && !boot.is_empty() && self.boot_id != boot {
            return true; // the machine rebooted since
        }
        match stat(self.pid as i32) {
            None => true,
            Some(s) => self.start_ticks != 0 && s.start_ticks != self.start_ticks, // pid reused
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn thread_cpu_times_count_this_threads_work() {
        use nix::time::{clock_gettime, ClockId};
        let cpu = || {
            let t = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).unwrap();
            t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
        };
        let tid = nix::unistd::gettid().as_raw();
        let before = thread_cpu_times()[&tid];
        // Spin until this thread's own CPU clock says 10 ms, however long that takes.
        let start = cpu();
        while cpu() < start + 10_000_000 {
            std::hint::black_box(0u64);
        }
        let after = thread_cpu_times()[&tid];
        assert!(after >= before + 9_000_000, "{before} → {after}");
    }

    use super::*;

    #[test]
    fn stat_lines_with_odd_names_parse() {
        let line = "4242 (a (b) c) S 1 42 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 \
                    18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
        assert_eq!(parse_stat(line), Some(ProcStat { state: 'S', ppid: 1, pgrp: 42, start_ticks: 987654 }));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn threads_and_descendants_are_found() {
        let me = std::process::id() as i32;
        let t = std::thread::spawn(|| std::thread::sleep(std::time::Duration::from_millis(200)));
        let tids = threads(me);
        assert_eq!(tids[0], me, "the main thread first");
        assert!(tids.len() >= 2, "{tids:?}");
        let mut child = crate::child::Child::spawn(&crate::child::ChildSpec::new("sleep").arg("5")).unwrap();
        let d = descendants(me);
        assert_eq!(d[0], me);
        assert!(d.contains(&child.pid()), "{d:?} lacks {}", child.pid());
        assert_eq!(comm(child.pid()).as_deref(), Some("sleep"));
        child.kill().unwrap();
        t.join().unwrap();
    }

    #[test]
    fn the_current_process_is_alive_and_a_reaped_child_is_gone() {
        let me = ProcessIdentity::current();
        assert!(me.start_ticks > 0);
        assert_eq!(stat(me.pid as i32).unwrap().ppid as u32, std::os::unix::process::parent_id());
        assert!(!me.is_gone());
        let mut child = crate::child::Child::spawn(&crate::child::ChildSpec::new("true")).unwrap();
        let pid = child.pid() as u32;
        child.wait().unwrap();
        let gone = ProcessIdentity { pid, start_ticks: 1, ..me.clone() };
        assert!(gone.is_gone());
        // Same pid, wrong start time: pid reuse is detected.
        assert!(ProcessIdentity { start_ticks: me.start_ticks + 1, ..me.clone() }.is_gone());
        // Another host: never declared dead from here.
        assert!(!ProcessIdentity { host: "elsewhere".into(), pid, ..me }.is_gone());
    }
}
