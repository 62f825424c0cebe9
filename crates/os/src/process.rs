//! Other processes: signals, their CPU time (the process CPU clock, and a task-clock perf
//! counter that is exact while the process runs on another CPU).

use crate::{OsError, OsResult};

/// Signal names and numbers (nix's `Signal`), so callers need no libc constants.
pub use nix::sys::signal::Signal;

/// Send `sig` to process `pid` (a negative pid is a process group); a process that is already
/// gone is not an error.
pub fn send_signal(pid: i32, sig: i32) -> OsResult<()> {
    // SAFETY: kill has no memory preconditions.
    if unsafe { libc::kill(pid, sig) } != 0 {
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::ESRCH) {
            return Err(OsError::from_io(format!("sending signal {sig} to {pid}"), err));
        }
    }
    Ok(())
}

/// [`send_signal`] with a named signal.
pub fn signal(pid: i32, sig: Signal) -> OsResult<()> {
    send_signal(pid, sig as i32)
}

/// Stop this process (SIGSTOP to itself) until someone sends SIGCONT: how a workload program
/// that has finished starting up waits for its release, so a recorder sees only its work.
pub fn stop_self() -> OsResult<()> {
    nix::sys::signal::raise(Signal::SIGSTOP).map_err(|e| OsError::from_io("stopping this process", e.into()))
}

/// Wait until process `pid` is stopped (state `T`), at most `timeout`; false if it ended or the
/// time ran out.
pub fn wait_stopped(pid: i32, timeout: std::time::Duration) -> bool {
    let end = std::time::Instant::now() + timeout;
    loop {
        match crate::procfs::stat(pid).map(|s| s.state) {
            Some('T') => return true,
            None | Some('Z') | Some('X') => return false,
            _ if std::time::Instant::now() >= end => return false,
            _ => std::thread::sleep(std::time::Duration::from_micros(500)),
        }
    }
}

/// CPU time used so far by all threads of process `pid` (its CPUCLOCK_SCHED process clock),
/// in nanoseconds. Updated at scheduler ticks for a running task (see [`TaskClock`]).
pub fn process_cpu_ns(pid: i32) -> OsResult<u64> {
    // The kernel's encoding (include/linux/posix-timers.h): ((~pid) << 3) | CPUCLOCK_SCHED (2).
    let clock = ((!pid) << 3) | 2;
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out-pointer.
    if unsafe { libc::clock_gettime(clock as libc::clockid_t, &mut ts) } != 0 {
        return Err(OsError::last(format!("reading the CPU clock of process {pid}")));
    }
    Ok(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// A task-clock perf counter on another process's main thread: CPU time in nanoseconds,
/// exact even while the task runs on another CPU (a read of a running task's counter asks
/// that CPU for the current value). The process CPU clock ([`process_cpu_ns`]) is only
/// updated at scheduler ticks for a running task, which at HZ=250 makes it up to 4 ms stale —
/// too coarse to end 10 ms slices.
pub struct TaskClock(perf_event::Counter);

impl TaskClock {
    /// Open and enable the counter on `pid` (its main thread; threads created later are not counted).
    pub fn open(pid: i32) -> OsResult<Self> {
        let mut c = perf_event::Builder::new(perf_event::events::Software::TASK_CLOCK)
            .observe_pid(pid)
            .any_cpu()
            .exclude_kernel(false)
            .exclude_hv(false)
            .build()
            .map_err(|e| OsError::from_io(format!("opening a task-clock perf counter on process {pid}"), e))?;
        c.enable().map_err(|e| OsError::from_io("enabling a task-clock perf counter", e))?;
        Ok(TaskClock(c))
    }

    /// CPU time counted so far, in nanoseconds.
    pub fn read_ns(&mut self) -> OsResult<u64> {
        self.0.read().map_err(|e| OsError::from_io("reading a task-clock perf counter", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::child::{Child, ChildSpec};

    #[test]
    fn cpu_clock_reads_a_busy_child() {
        let mut c = Child::spawn(&ChildSpec::shell("while :; do :; done")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let used = process_cpu_ns(c.pid()).unwrap();
        let mut tc = TaskClock::open(c.pid()).unwrap();
        // The child competes with the other tests for two CPUs: wait up to 2 s for 5 ms of it.
        let a = tc.read_ns().unwrap();
        let t0 = std::time::Instant::now();
        let mut b = a;
        while b - a <= 5_000_000 && t0.elapsed() < std::time::Duration::from_secs(2) {
            std::thread::sleep(std::time::Duration::from_millis(20));
            b = tc.read_ns().unwrap();
        }
        assert!(b - a > 5_000_000, "task clock advanced only {} ns in {:?}", b - a, t0.elapsed());
        c.kill().unwrap();
        assert!(used > 1_000_000, "child used only {used} ns");
        assert!(send_signal(c.pid(), 0).is_ok(), "a reaped child is not an error");
    }
}
