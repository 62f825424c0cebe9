//! CPU affinity: pin a thread or process to a set of CPUs, parse CPU lists ("0-3,6"), and a
//! guard that restores the old mask.

use crate::{OsError, OsResult};
use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::Pid;

/// The CPUs the calling process may run on right now.
pub fn allowed_cpus() -> OsResult<Vec<usize>> {
    get_affinity(0)
}

/// Number of online CPUs (`sysconf(_SC_NPROCESSORS_ONLN)`), whatever this process's affinity.
pub fn online_cpus() -> usize {
    // SAFETY: sysconf has no memory preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n > 0 {
        n as usize
    } else {
        1
    }
}

/// The affinity of `pid` (0 = calling thread) as a sorted list of CPU numbers.
pub fn get_affinity(pid: i32) -> OsResult<Vec<usize>> {
    let set = sched_getaffinity(Pid::from_raw(pid))
        .map_err(|e| OsError::from_io(format!("reading the CPU affinity of {pid}"), e.into()))?;
    Ok((0..CpuSet::count()).filter(|&c| set.is_set(c).unwrap_or(false)).collect())
}

/// Pin `pid` (0 = calling thread) to `cpus`.
pub fn set_affinity(pid: i32, cpus: &[usize]) -> OsResult<()> {
    if cpus.is_empty() {
        return Err(OsError::invalid("CPU list", "(empty)", "name at least one CPU"));
    }
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c).map_err(|_| OsError::invalid("CPU", c, "beyond the kernel's CPU set size"))?;
    }
    sched_setaffinity(Pid::from_raw(pid), &set)
        .map_err(|e| OsError::from_io(format!("pinning {pid} to CPUs {}", format_cpu_list(cpus)), e.into()))
}

/// Parse a kernel-style CPU list such as `0-3,6` into sorted, de-duplicated CPU numbers.
pub fn parse_cpu_list(text: &str) -> OsResult<Vec<usize>> {
    let mut cpus = Vec::new();
    let bad = |why: &str| OsError::invalid("CPU list", text, why.to_string());
    for part in text.trim().split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let a: usize = a.trim().parse().map_err(|_| bad("expected numbers like 0-3,6"))?;
                let b: usize = b.trim().parse().map_err(|_| bad("expected numbers like 0-3,6"))?;
                if a > b {
                    return Err(bad("a range must go upwards"));
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.parse().map_err(|_| bad("expected numbers like 0-3,6"))?),
        }
    }
    if cpus.is_empty() {
        return Err(bad("name at least one CPU"));
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Format CPU numbers compactly as a kernel-style list (`0-3,6`).
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        out.push(if start == end { start.to_string() } else { format!("{start}-{end}") });
        i += 1;
    }
    out.join(",")
}

/// Restores a thread's CPU affinity when dropped.
#[must_use = "the old affinity is restored when the guard is dropped"]
pub struct AffinityGuard {
    pid: i32,
    saved: Vec<usize>,
}

impl AffinityGuard {
    /// Remember `pid`'s affinity, then pin it to `cpus`.
    pub fn pin(pid: i32, cpus: &[usize]) -> OsResult<Self> {
        let saved = get_affinity(pid)?;
        set_affinity(pid, cpus)?;
        Ok(AffinityGuard { pid, saved })
    }
}

impl Drop for AffinityGuard {
    fn drop(&mut self) {
        if let Err(e) = set_affinity(self.pid, &self.saved) {
            eprintln!("schedlab: could not restore CPU affinity: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_and_format() {
        assert_eq!(parse_cpu_list("0-3,6").unwrap(), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_list(" 2, 1,1 ").unwrap(), vec![1, 2]);
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 6]), "0-3,6");
        assert!(parse_cpu_list("3-1").unwrap_err().to_string().contains("3-1"));
        assert!(parse_cpu_list("x").is_err());
        assert!(parse_cpu_list("").is_err());
    }

    #[test]
    fn pin_and_restore() {
        let before = get_affinity(0).unwrap();
        {
            let _g = AffinityGuard::pin(0, &before[..1]).unwrap();
            assert_eq!(get_affinity(0).unwrap(), before[..1].to_vec());
        }
        assert_eq!(get_affinity(0).unwrap(), before);
    }
}
