//! Managed child processes for live dispatchers: fork/exec with `PR_SET_PDEATHSIG(SIGKILL)`,
//! an own process group, a CPU affinity set before exec, and a start barrier (the child stops
//! itself with SIGSTOP just before exec, so no task does any work before the dispatcher
//! releases it with SIGCONT). Also the readings a dispatcher needs about its children: the
//! process CPU clock (exact, even while the child runs on another CPU) and the `/proc` state.
//!
//! `PR_SET_PDEATHSIG` fires when the *thread* that forked the child exits, not the process:
//! fork from a thread that lives as long as the children are meant to.

use crate::{OsError, OsResult};
use std::ffi::CString;
use std::fs::File;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A child forked by [`spawn_stopped`]: stopped before exec until [`ManagedChild::release`].
#[derive(Debug)]
pub struct ManagedChild {
    pub pid: i32,
    /// The read end of the child's stdout, when it was captured.
    pub stdout: Option<File>,
    /// Read end of a close-on-exec pipe: EOF after a successful exec, 4 bytes of errno otherwise.
    exec_status: Option<File>,
}

impl ManagedChild {
    /// Let the child continue into exec (SIGCONT).
    pub fn release(&self) -> OsResult<()> {
        send_signal(self.pid, libc::SIGCONT)
    }

    /// After the child has exited: why exec failed, if it did (None when exec succeeded).
    pub fn exec_error(&mut self) -> Option<std::io::Error> {
        let mut f = self.exec_status.take()?;
        let mut buf = [0u8; 4];
        match f.read(&mut buf) {
            Ok(4) => Some(std::io::Error::from_raw_os_error(i32::from_ne_bytes(buf))),
            _ => None,
        }
    }
}

/// Find `program` the way execvp would (a name with a `/` is taken as a path) and check that it
/// is an executable file; the error names the program.
pub fn resolve_program(program: &str) -> OsResult<PathBuf> {
    let executable = |p: &Path| -> bool {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false)
    };
    if program.is_empty() {
        return Err(OsError::invalid("command", "(empty)", "name a program to run"));
    }
    if program.contains('/') {
        let p = PathBuf::from(program);
        return if executable(&p) {
            Ok(p)
        } else {
            Err(OsError::invalid("command", program, "no such executable file"))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
        .ok_or_else(|| OsError::invalid("command", program, "not found in PATH"))
}

fn cstring(s: &[u8], what: &str) -> OsResult<CString> {
    CString::new(s).map_err(|_| OsError::invalid(what, String::from_utf8_lossy(s), "contains a NUL byte"))
}

fn pipe_cloexec() -> OsResult<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid 2-element out-array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(OsError::last("creating a pipe"));
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Fork `argv` (argv[0] resolved with [`resolve_program`]) pinned to `cpus`, in its own process
/// group, killed by SIGKILL when the calling thread exits, and stopped just before exec.
/// Returns once the child is stopped. With `capture_stdout` the child's stdout is a pipe.
pub fn spawn_stopped(argv: &[String], cpus: &[usize], capture_stdout: bool) -> OsResult<ManagedChild> {
    let first = argv.first().ok_or_else(|| OsError::invalid("command", "(empty)", "name a program to run"))?;
    let program = resolve_program(first)?;
    // Everything the child touches is prepared before fork: after fork only async-signal-safe
    // calls are allowed (the parent may have other threads holding the allocator lock).
    let prog_c = cstring(program.as_os_str().as_bytes(), "command")?;
    let args_c: Vec<CString> = argv.iter().map(|a| cstring(a.as_bytes(), "argument")).collect::<OsResult<_>>()?;
    let mut arg_ptrs: Vec<*const libc::c_char> = args_c.iter().map(|a| a.as_ptr()).collect();
    arg_ptrs.push(std::ptr::null());
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c >= libc::CPU_SETSIZE as usize {
            return Err(OsError::invalid("CPU", c, "beyond the kernel's CPU set size"));
        }
        // SAFETY: c is within the set's size.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    let (status_r, status_w) = pipe_cloexec()?;
    let out = if capture_stdout { Some(pipe_cloexec()?) } else { None };
    let out_w_fd = out.as_ref().map(|(_, w)| std::os::fd::AsRawFd::as_raw_fd(w)).unwrap_or(-1);
    let status_w_fd = std::os::fd::AsRawFd::as_raw_fd(&status_w);
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };

    // SAFETY: fork is followed in the child only by async-signal-safe syscalls and _exit/execv.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(OsError::last("fork"));
    }
    if pid == 0 {
        // Child. Report a failing step's errno through the status pipe and exit.
        unsafe {
            let fail = |fd: i32| -> ! {
                let e = *libc::__errno_location();
                let b = e.to_ne_bytes();
                libc::write(fd, b.as_ptr().cast(), 4);
                libc::_exit(127)
            };
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                fail(status_w_fd);
            }
            // The parent may have died before prctl took effect.
            if libc::getppid() != parent {
                libc::_exit(126);
            }
            libc::setpgid(0, 0);
            if !cpus.is_empty() && libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                fail(status_w_fd);
            }
            if out_w_fd >= 0 && libc::dup2(out_w_fd, 1) < 0 {
                fail(status_w_fd);
            }
            // Handlers installed by the parent (e.g. the stop flag) must not survive in a child
            // that is signalled before it reaches exec: default dispositions, like posix_spawn's
            // POSIX_SPAWN_SETSIGDEF.
            for sig in 1..32 {
                if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                    libc::signal(sig, libc::SIG_DFL);
                }
            }
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            libc::raise(libc::SIGSTOP);
            libc::execv(prog_c.as_ptr(), arg_ptrs.as_ptr());
            fail(status_w_fd);
        }
    }
    drop(status_w);
    let stdout = out.map(|(r, w)| {
        drop(w);
        File::from(r)
    });
    let mut child = ManagedChild { pid, stdout, exec_status: Some(File::from(status_r)) };
    // Wait until it has stopped at the barrier (or died on the way).
    let mut status = 0;
    loop {
        // SAFETY: status is a valid out-pointer; pid is our child.
        let rc = unsafe { libc::waitpid(pid, &mut status, libc::WUNTRACED) };
        if rc == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINTR) {
            return Err(OsError::from_io(format!("waiting for child {pid} to reach its start barrier"), err));
        }
    }
    if libc::WIFSTOPPED(status) {
        return Ok(child);
    }
    let why = child.exec_error().map(|e| e.to_string()).unwrap_or_else(|| format!("wait status {status:#x}"));
    Err(OsError::unsupported(format!("starting {first}"), why))
}

/// Send `sig` to process `pid`; a process that is already gone is not an error.
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

/// CPU time used so far by all threads of process `pid` (its CPUCLOCK_SCHED process clock),
/// in nanoseconds. Exact even while the process runs on another CPU.
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
/// that CPU for the current value). The process CPU clock (`clock_gettime` on
/// [`process_cpu_ns`]) is only updated at scheduler ticks for a running task, which at
/// HZ=250 makes it up to 4 ms stale — too coarse to end 10 ms slices.
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

/// The one-letter state of `pid` from `/proc/<pid>/stat` (R, S, D, T, Z, ...), None if gone.
pub fn proc_state(pid: i32) -> Option<char> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    text.rsplit_once(')')?.1.trim_start().chars().next()
}

/// The parent pid of `pid` from `/proc/<pid>/stat`, None if gone.
pub fn proc_ppid(pid: i32) -> Option<i32> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    text.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_programs_and_names_missing_ones() {
        assert!(resolve_program("sh").unwrap().is_absolute());
        let err = resolve_program("no-such-program-schedlab").unwrap_err().to_string();
        assert!(err.contains("no-such-program-schedlab"), "{err}");
        assert!(resolve_program("/etc/passwd").is_err());
    }

    #[test]
    fn child_stops_at_barrier_then_runs() {
        let mut c = spawn_stopped(&["sh".into(), "-c".into(), "echo hi".into()], &[0], true).unwrap();
        assert_eq!(proc_state(c.pid), Some('T'));
        c.release().unwrap();
        let mut out = String::new();
        c.stdout.take().unwrap().read_to_string(&mut out).unwrap();
        assert_eq!(out, "hi\n");
        let r = crate::rusage::wait_pid(c.pid).unwrap();
        assert!(r.status.success());
        assert!(c.exec_error().is_none());
    }

    #[test]
    fn cpu_clock_reads_a_busy_child() {
        let c = spawn_stopped(&["sh".into(), "-c".into(), "while :; do :; done".into()], &[], false).unwrap();
        c.release().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let used = process_cpu_ns(c.pid).unwrap();
        let mut tc = TaskClock::open(c.pid).unwrap();
        let a = tc.read_ns().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let b = tc.read_ns().unwrap();
        assert!(b - a > 5_000_000, "task clock advanced only {} ns in 20 ms", b - a);
        send_signal(c.pid, libc::SIGKILL).unwrap();
        crate::rusage::wait_pid(c.pid).unwrap();
        assert!(used > 1_000_000, "child used only {used} ns");
    }
}
