//! The one place schedlab forks a child: fork(2), then in the child, in this order and with
//! async-signal-safe calls only:
//! 1. every signal disposition back to its default and the signal mask emptied, so a child
//!    never inherits the harness's handlers, ignored signals (Rust ignores SIGPIPE) or blocked
//!    signals (the batch harness blocks SIGCHLD);
//! 2. `PR_SET_PDEATHSIG(SIGKILL)` when asked, then a check that the parent is still the one
//!    that forked (it may have died before the prctl took effect);
//! 3. its process group (a new one, or the batch's);
//! 4. standard input, output and error;
//! 5. every other descriptor closed but the report and gate pipes (which are close-on-exec),
//!    so the program starts with 0, 1 and 2 only — never the harness's results database,
//!    pipes or sockets — and a gate's write end held by a sibling cannot keep that gate from
//!    reaching end-of-file when the harness dies;
//! 6. CPU affinity and scheduling policy (sched_setattr(2): SCHED_DEADLINE can only be
//!    entered this way);
//! 7. "ready" on the report pipe, then the barrier (a gate pipe, or SIGSTOP);
//! 8. execve(2). A failing step writes (pid, step, errno) on the report pipe and exits 127.

use super::prepared::{encode, Prepared, Step, MSG};
use super::spec::{Barrier, Input, Output};
use crate::{OsError, OsResult};
use std::os::fd::AsRawFd;

/// The per-child descriptors and group, decided by the caller (a single child or a batch).
pub(super) struct ForkPlan {
    /// Process group to join; 0 = lead a new group.
    pub pgid: i32,
    /// Write end of the report pipe (close-on-exec).
    pub report_w: i32,
    /// Read end of the gate pipe, for [`Barrier::Gate`].
    pub gate_r: i32,
    /// Read end of the stdin pipe, for [`Input::Pipe`].
    pub stdin_r: i32,
    /// Write ends of the stdout / stderr pipes, for [`Output::Pipe`].
    pub stdout_w: i32,
    pub stderr_w: i32,
}

/// Highest signal number to reset (SIGRTMAX on Linux is 64).
const NSIG: i32 = 65;

/// Fork one child following `p` and `plan`; returns its pid in the parent.
pub(super) fn fork_child(p: &Prepared, plan: &ForkPlan) -> OsResult<i32> {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the child branch only calls async-signal-safe functions on memory prepared before
    // the fork (see `child_side`), and never returns.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: we are the freshly forked child.
        unsafe { child_side(p, plan, parent) }
    }
    if pid < 0 {
        let err = std::io::Error::last_os_error();
        let why = if err.raw_os_error() == Some(libc::EAGAIN) {
            format!(
                "{err}; the process limit was reached (check `ulimit -u`, /proc/sys/kernel/pid_max and the \
                 cgroup's pids.max)"
            )
        } else {
            err.to_string()
        };
        return Err(OsError::unsupported("forking a child", why));
    }
    // Also set the group from the parent so it holds before the child runs (the shell's trick);
    // EACCES after the child's own setpgid or exec is harmless.
    // SAFETY: plain syscall on our own child.
    unsafe { libc::setpgid(pid, if plan.pgid == 0 { pid } else { plan.pgid }) };
    Ok(pid)
}

/// The child side, from fork to exec. Never returns.
unsafe fn child_side(p: &Prepared, plan: &ForkPlan, parent: libc::pid_t) -> ! {
    let report = plan.report_w;
    let fail = |step: Step| -> ! {
        let errno = *libc::__errno_location();
        let msg = encode(libc::getpid(), step.code(), errno);
        libc::write(report, msg.as_ptr().cast(), MSG);
        libc::_exit(127)
    };
    // 1. Default dispositions and an empty mask. The raw rt_sigaction reaches the two
    // real-time signals glibc keeps for itself (32, 33), which its sigaction refuses; an
    // all-zero kernel sigaction is SIG_DFL with no flags and an empty mask on every ABI.
    let dfl = [0u64; 4];
    for sig in 1..NSIG {
        if sig != libc::SIGKILL && sig != libc::SIGSTOP {
            libc::syscall(libc::SYS_rt_sigaction, sig, dfl.as_ptr(), std::ptr::null_mut::<u64>(), 8usize);
        }
    }
    let mut empty: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut empty);
    libc::pthread_sigmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    // 2. Die with the parent.
    if p.spec.die_with_parent {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
            fail(Step::Setup);
        }
        if libc::getppid() != parent {
            libc::_exit(126);
        }
    }
    // 3. Process group.
    libc::setpgid(0, plan.pgid);
    // 4. Standard streams.
    let null = p.devnull.as_ref().map_or(-1, |f| f.as_raw_fd());
    let input = match p.spec.stdin {
        Input::Null => null,
        Input::Pipe => plan.stdin_r,
        Input::Inherit => -1,
    };
    if input >= 0 && libc::dup2(input, 0) < 0 {
        fail(Step::Setup);
    }
    let out = match p.spec.stdout {
        Output::Inherit => -1,
        Output::Null => null,
        Output::Pipe => plan.stdout_w,
        Output::Stderr => 2,
    };
    if out >= 0 && libc::dup2(out, 1) < 0 {
        fail(Step::Setup);
    }
    let err = match p.spec.stderr {
        Output::Null => null,
        Output::Pipe => plan.stderr_w,
        Output::Inherit | Output::Stderr => -1,
    };
    if err >= 0 && libc::dup2(err, 2) < 0 {
        fail(Step::Setup);
    }
    // 5. Only 0, 1 and 2 survive exec; the report and gate pipes are close-on-exec and still
    // needed until then.
    close_all_but(plan.report_w, plan.gate_r);
    // 6. Affinity and policy.
    if let Some(set) = &p.cpuset {
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
            fail(Step::Affinity);
        }
    }
    if let Some(attr) = &p.attr {
        if libc::syscall(libc::SYS_sched_setattr, 0, attr as *const crate::sched::SchedAttr, 0u32) != 0 {
            fail(Step::Sched);
        }
    }
    // 7. Ready, then the barrier.
    let msg = encode(libc::getpid(), 0, 0);
    libc::write(report, msg.as_ptr().cast(), MSG);
    match p.spec.barrier {
        Barrier::None => {}
        Barrier::Stop => {
            libc::raise(libc::SIGSTOP);
        }
        Barrier::Gate => {
            let mut byte = 0u8;
            loop {
                match libc::read(plan.gate_r, (&mut byte as *mut u8).cast(), 1) {
                    1 => break,
                    // Never released: the parent dropped the gate or died.
                    0 => libc::_exit(126),
                    _ if *libc::__errno_location() == libc::EINTR => {}
                    _ => fail(Step::Gate),
                }
            }
        }
    }
    // 8. The program.
    libc::execve(p.path.as_ptr(), p.argv_ptrs.as_ptr(), p.envp_ptrs.as_ptr());
    fail(Step::Exec)
}

/// Close every descriptor from 3 up except `keep_a` and `keep_b` (-1 = none), with
/// close_range(2) over the gaps between them; on kernels without it (before 5.9), one by one up
/// to the descriptor limit (close is async-signal-safe).
unsafe fn close_all_but(keep_a: i32, keep_b: i32) {
    let mut keep = [keep_a, keep_b];
    keep.sort_unstable();
    let mut from: u32 = 3;
    for fd in keep {
        if fd >= from as i32 {
            if fd > from as i32 && libc::syscall(libc::SYS_close_range, from, fd as u32 - 1, 0u32) != 0 {
                close_slowly(from as i32, fd, keep);
            }
            from = fd as u32 + 1;
        }
    }
    if libc::syscall(libc::SYS_close_range, from, u32::MAX, 0u32) != 0 {
        let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        let top =
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) == 0 { rl.rlim_cur.min(1 << 20) as i32 } else { 1024 };
        close_slowly(from as i32, top, keep);
    }
}

unsafe fn close_slowly(from: i32, to: i32, keep: [i32; 2]) {
    for fd in from..to {
        if !keep.contains(&fd) {
            libc::close(fd);
        }
    }
}
