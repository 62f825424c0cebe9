//! Resource usage: getrusage(2) for the process, its threads and its reaped children, and
//! wait4(2) that returns a child's own rusage when it is reaped.

use crate::{OsError, OsResult};
use serde::{Deserialize, Serialize};

/// The fields of `struct rusage` schedlab reports, with times in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub user_s: f64,
    pub sys_s: f64,
    /// Peak resident set size in kB (ru_maxrss).
    pub max_rss_kb: i64,
    pub minor_faults: i64,
    pub major_faults: i64,
    pub voluntary_ctx: i64,
    pub involuntary_ctx: i64,
}

impl Usage {
    fn from_raw(r: &libc::rusage) -> Self {
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        Usage {
            user_s: secs(r.ru_utime),
            sys_s: secs(r.ru_stime),
            max_rss_kb: r.ru_maxrss,
            minor_faults: r.ru_minflt,
            major_faults: r.ru_majflt,
            voluntary_ctx: r.ru_nvcsw,
            involuntary_ctx: r.ru_nivcsw,
        }
    }

    /// `self - earlier` for the cumulative fields; peak RSS is kept from `self`.
    pub fn since(&self, earlier: &Usage) -> Usage {
        Usage {
            user_s: self.user_s - earlier.user_s,
            sys_s: self.sys_s - earlier.sys_s,
            max_rss_kb: self.max_rss_kb,
            minor_faults: self.minor_faults - earlier.minor_faults,
            major_faults: self.major_faults - earlier.major_faults,
            voluntary_ctx: self.voluntary_ctx - earlier.voluntary_ctx,
            involuntary_ctx: self.involuntary_ctx - earlier.involuntary_ctx,
        }
    }

    /// Add another usage's cumulative fields (summing children, as seed 001 does); peak RSS is the max.
    pub fn add(&mut self, other: &Usage) {
        self.user_s += other.user_s;
        self.sys_s += other.sys_s;
        self.max_rss_kb = self.max_rss_kb.max(other.max_rss_kb);
        self.minor_faults += other.minor_faults;
        self.major_faults += other.major_faults;
        self.voluntary_ctx += other.voluntary_ctx;
        self.involuntary_ctx += other.involuntary_ctx;
    }
}

/// Whose usage to read.
#[derive(Debug, Clone, Copy)]
pub enum Who {
    /// The whole calling process.
    Process,
    /// The calling thread only.
    Thread,
    /// All reaped descendants.
    Children,
}

/// getrusage(2).
pub fn usage(who: Who) -> Usage {
    let raw_who = match who {
        Who::Process => libc::RUSAGE_SELF,
        Who::Thread => libc::RUSAGE_THREAD,
        Who::Children => libc::RUSAGE_CHILDREN,
    };
    // SAFETY: zeroed rusage is a valid out-buffer; getrusage cannot fail with valid arguments.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(raw_who, &mut r) };
    Usage::from_raw(&r)
}

/// How a reaped child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExitStatus {
    Exited(i32),
    Signaled(i32),
}

impl ExitStatus {
    /// The status of a `wait` status word (terminated by a signal, or exited).
    pub fn from_wait_status(status: i32) -> Self {
        if libc::WIFSIGNALED(status) {
            ExitStatus::Signaled(libc::WTERMSIG(status))
        } else {
            ExitStatus::Exited(libc::WEXITSTATUS(status))
        }
    }

    /// True for `exit(0)`.
    pub fn success(&self) -> bool {
        matches!(self, ExitStatus::Exited(0))
    }
}

/// A child reaped by [`wait_any`] or [`wait_pid`].
#[derive(Debug, Clone, Copy)]
pub struct Reaped {
    pub pid: i32,
    pub status: ExitStatus,
    pub usage: Usage,
}

/// wait4(pid, ..., flags): `Ok(None)` when WNOHANG found nothing to reap.
fn wait4(pid: i32, flags: i32) -> OsResult<Option<Reaped>> {
    let mut status = 0;
    // SAFETY: as in `usage`.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: status and r are valid out-pointers.
        let rc = unsafe { libc::wait4(pid, &mut status, flags, &mut r) };
        if rc > 0 {
            let st = ExitStatus::from_wait_status(status);
            return Ok(Some(Reaped { pid: rc, status: st, usage: Usage::from_raw(&r) }));
        }
        if rc == 0 {
            return Ok(None);
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return Err(OsError::from_io("wait4", err));
    }
}

/// Reap any child, blocking; `Ok(None)` if the process has no children left.
pub fn wait_any() -> OsResult<Option<Reaped>> {
    match wait4(-1, 0) {
        Err(OsError::Io { source, .. }) if source.raw_os_error() == Some(libc::ECHILD) => Ok(None),
        other => other,
    }
}

/// Reap any child without blocking; `Ok(None)` if none has exited (or none exists).
pub fn try_wait_any() -> OsResult<Option<Reaped>> {
    match wait4(-1, libc::WNOHANG) {
        Err(OsError::Io { source, .. }) if source.raw_os_error() == Some(libc::ECHILD) => Ok(None),
        other => other,
    }
}

/// Reap child `pid`, blocking.
pub fn wait_pid(pid: i32) -> OsResult<Reaped> {
    wait4(pid, 0)?.ok_or_else(|| OsError::unsupported("wait4", format!("child {pid} vanished")))
}

/// Reap child `pid` without blocking.
pub fn try_wait_pid(pid: i32) -> OsResult<Option<Reaped>> {
    wait4(pid, libc::WNOHANG)
}

/// Hand the heap's free memory back to the kernel (glibc's `malloc_trim(0)`); true if any was.
///
/// A study that built gigabytes and freed them leaves the memory with the allocator, still
/// resident and still mapped. Every child forked afterwards copies those page tables, and tears
/// them down again at its exec — in its own CPU time: after a 3.7 GiB simulation study, an
/// empty child measured 53 ms of CPU instead of 1 ms. Every child spec or batch trims before it forks
/// ([`crate::child`]).
pub fn return_free_heap() -> bool {
    // SAFETY: malloc_trim only walks the allocator's own arenas under their locks.
    unsafe { libc::malloc_trim(0) == 1 }
}

/// Serve every allocation of 128 KiB or more with fresh pages of its own (`mmap`), from now on.
///
/// glibc raises its mmap threshold each time such a block is freed, after which big blocks come
/// from the heap and may reuse pages another allocation already touched. A benchmark that counts
/// the page faults of faulting in a new array then counts fewer, by chance (606 of 1,280 pages
/// seen in one test run); fixing the threshold keeps every big array fresh.
pub fn fresh_pages_for_large_allocations() {
    // SAFETY: mallopt only sets a parameter of the allocator, under its lock.
    unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024) };
}

/// This process's resident set size now and its peak since start or the last
/// [`reset_peak_rss`] (VmRSS and VmHWM of /proc/self/status), in kB.
pub fn rss_now_and_peak_kb() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |key: &str| -> Option<u64> {
        text.lines().find(|l| l.starts_with(key)).and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// Reset this process's peak RSS to its present RSS (`5` into /proc/self/clear_refs, Linux ≥
/// 4.0), so the next [`rss_now_and_peak_kb`] peak is measured from now. False where refused.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_usage_is_returned_by_wait4() {
        // Reaped with wait4 below rather than Child::wait, which is what is under test.
        #[allow(clippy::zombie_processes)]
        let child = std::process::Command::new("sh").arg("-c").arg("exit 3").spawn().unwrap();
        let r = wait_pid(child.id() as i32).unwrap();
        assert_eq!(r.status, ExitStatus::Exited(3));
        assert!(r.usage.max_rss_kb > 0);
    }

    #[test]
    fn the_peak_rss_follows_memory_touched_and_resets() {
        assert!(reset_peak_rss(), "clear_refs is writable for this process");
        let (now, peak) = rss_now_and_peak_kb().unwrap();
        assert!(peak >= now && peak < now + 4096, "just reset: peak {peak} kB, now {now} kB");
        let block = vec![1u8; 64 << 20];
        let (_, grown) = rss_now_and_peak_kb().unwrap();
        assert!(grown >= now + (60 << 10), "64 MiB touched: peak {grown} kB from {now} kB");
        drop(std::hint::black_box(block));
        // The kernel's RSS counters are per-CPU and approximate by a few hundred kB.
        let kept = rss_now_and_peak_kb().unwrap().1;
        assert!(kept >= now + (60 << 10), "the peak stays after the memory is freed: {kept} kB");
    }

    #[test]
    fn this_threads_cpu_time_grows_while_it_computes() {
        let cpu = |u: Usage| u.user_s + u.sys_s;
        let before = cpu(usage(Who::Thread));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut x = 0u64;
        while cpu(usage(Who::Thread)) < before + 0.02 && std::time::Instant::now() < deadline {
            for i in 0..100_000u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
        }
        let grown = cpu(usage(Who::Thread)) - before;
        assert!(grown >= 0.02, "5 s of computing added {grown} s of CPU time (x = {x})");
        assert!(cpu(usage(Who::Process)) >= cpu(usage(Who::Thread)), "the process has at least this thread's time");
    }
}
