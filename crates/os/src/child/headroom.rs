//! How many more processes this machine lets us create, and what limits that: checked before a
//! batch of thousands of children is forked, so the error names the limit instead of a fork
//! failing half-way.

use crate::{OsError, OsResult};

/// How many more processes this machine lets us create, and what limits that.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ProcessHeadroom {
    pub pid_max: u64,
    pub threads_max: u64,
    /// Tasks (threads) that exist now (/proc/loadavg).
    pub tasks_now: u64,
    /// RLIMIT_NPROC soft limit (None = unlimited); root is exempt.
    pub nproc_limit: Option<u64>,
    /// pids.max of our cgroup, if one applies.
    pub cgroup_pids_max: Option<u64>,
    pub cgroup_pids_current: Option<u64>,
    pub mem_available_kb: u64,
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

impl ProcessHeadroom {
    /// Read the limits.
    pub fn read() -> Self {
        let tasks_now = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|s| s.split_whitespace().nth(3).and_then(|f| f.split('/').nth(1)).and_then(|n| n.parse().ok()))
            .unwrap_or(0);
        // SAFETY: rlimit out-struct.
        let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut rl) };
        let nproc_limit = (rl.rlim_cur != libc::RLIM_INFINITY).then_some(rl.rlim_cur);
        let (mut cg_max, mut cg_cur) = (None, None);
        if let Ok(text) = std::fs::read_to_string("/proc/self/cgroup") {
            for line in text.lines() {
                let mut parts = line.splitn(3, ':');
                let (_, ctrl, path) = (parts.next(), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
                let dirs: Vec<String> = if ctrl.split(',').any(|c| c == "pids") {
                    vec![format!("/sys/fs/cgroup/pids{path}")]
                } else if ctrl.is_empty() {
                    vec![format!("/sys/fs/cgroup/unified{path}"), format!("/sys/fs/cgroup{path}")]
                } else {
                    continue;
                };
                for d in dirs {
                    if let Some(m) = read_u64(&format!("{d}/pids.max")) {
                        if cg_max.is_none_or(|old| m < old) {
                            cg_max = Some(m);
                            cg_cur = read_u64(&format!("{d}/pids.current"));
                        }
                    }
                }
            }
        }
        ProcessHeadroom {
            pid_max: read_u64("/proc/sys/kernel/pid_max").unwrap_or(32768),
            threads_max: read_u64("/proc/sys/kernel/threads-max").unwrap_or(u64::MAX),
            tasks_now,
            nproc_limit,
            cgroup_pids_max: cg_max,
            cgroup_pids_current: cg_cur,
            mem_available_kb: crate::machine::meminfo_kb("MemAvailable").unwrap_or(u64::MAX),
        }
    }

    /// Fail with a message that names the limit when `n` more processes (held at once) will
    /// not fit. A margin is kept for the rest of the machine.
    pub fn check(&self, n: u64) -> OsResult<()> {
        let margin = 256 + n / 20;
        let need = n + margin;
        let short = |what: &str, value: String, fix: &str| {
            Err(OsError::unsupported(format!("running {n} processes at once"), format!("{what} ({value}); {fix}")))
        };
        let free_pids = self.pid_max.saturating_sub(self.tasks_now);
        if free_pids < need {
            return short(
                "too few free process ids",
                format!("pid_max {} with {} tasks running, {need} needed", self.pid_max, self.tasks_now),
                "raise it with `sysctl kernel.pid_max=4194304`",
            );
        }
        let free_threads = self.threads_max.saturating_sub(self.tasks_now);
        if free_threads < need {
            return short(
                "threads-max is too low",
                format!("{} with {} tasks running, {need} needed", self.threads_max, self.tasks_now),
                "raise it with `sysctl kernel.threads-max=...`",
            );
        }
        if let Some(lim) = self.nproc_limit {
            if !crate::is_root() && lim < need {
                return short(
                    "the per-user process limit is too low",
                    format!("ulimit -u = {lim}, {need} needed"),
                    "raise it with `ulimit -u` (or run fewer --procs)",
                );
            }
        }
        if let Some(max) = self.cgroup_pids_max {
            let free = max.saturating_sub(self.cgroup_pids_current.unwrap_or(0));
            if free < need {
                return short(
                    "the cgroup's pids.max is too low",
                    format!("pids.max {max}, {} in use, {need} needed", self.cgroup_pids_current.unwrap_or(0)),
                    "raise pids.max for this cgroup (or run fewer --procs)",
                );
            }
        }
        // A forked child waiting at the gate costs roughly 100 KiB (kernel stack, page tables).
        let mem_need = n * 128;
        if self.mem_available_kb < mem_need {
            return short(
                "too little free memory",
                format!("{} MiB available, about {} MiB needed", self.mem_available_kb / 1024, mem_need / 1024),
                "run fewer --procs",
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headroom_rejects_absurd_counts() {
        let h = ProcessHeadroom::read();
        assert!(h.pid_max > 0);
        let err = h.check(h.pid_max + 1).unwrap_err().to_string();
        assert!(err.contains(&(h.pid_max + 1).to_string()), "{err}");
    }
}
