//! Spawning a batch of child processes held at a start barrier.
//!
//! Each child is created with fork(2) and, before exec, joins the batch's process group,
//! pins itself to its CPUs, sets its scheduling policy with sched_setattr(2) (SCHED_DEADLINE
//! can only be entered this way, so posix_spawn's POSIX_SPAWN_SETSCHEDULER is not enough),
//! reports "ready" on a pipe and then blocks reading the *gate* pipe. [`HeldBatch::release`]
//! writes one byte per child into the gate in one write, so every waiting child wakes at the
//! same moment and execs. A child that reads end-of-file instead (the batch was dropped, or
//! the harness was killed before releasing) exits without starting its program, so a
//! SIGKILLed harness never leaves unsupervised real-time children running. Children are reaped one by one with wait4(2), which returns each child's own
//! rusage. Dropping a [`HeldBatch`] kills (SIGKILL) and reaps every child still alive, so an
//! error, a panic or a stop signal never leaves children behind.
//!
//! Between fork and exec the child only makes async-signal-safe system calls on data the
//! parent prepared before forking (no allocation), as POSIX requires of a multi-threaded
//! parent.

use crate::sched::{SchedAttr, SchedParams};
use crate::{OsError, OsResult};
use std::collections::HashSet;
use std::ffi::{CString, OsStr};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// What every child of a batch runs and how it is scheduled.
#[derive(Debug, Clone)]
pub struct ChildSpec {
    /// The program to exec (an absolute path; no PATH search).
    pub program: PathBuf,
    /// Arguments after argv[0].
    pub args: Vec<String>,
    /// Scheduling set in the child before exec; `None` keeps the parent's.
    pub sched: Option<SchedParams>,
    /// CPUs the child is pinned to before exec; `None` keeps the parent's affinity.
    pub cpus: Option<Vec<usize>>,
    /// Send the child's stdout to /dev/null (stderr stays, so failures are visible).
    pub stdout_to_null: bool,
}

/// The step at which a child failed before its program started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    Affinity,
    Sched,
    Gate,
    Exec,
}

impl Step {
    fn code(self) -> i32 {
        match self {
            Step::Affinity => 1,
            Step::Sched => 2,
            Step::Gate => 3,
            Step::Exec => 4,
        }
    }

    fn from_code(c: i32) -> Option<Self> {
        [Step::Affinity, Step::Sched, Step::Gate, Step::Exec].into_iter().find(|s| s.code() == c)
    }
}

/// A child that failed before its program started (it exits with status 127).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChildFailure {
    pub pid: i32,
    pub step: Step,
    pub errno: i32,
}

impl ChildFailure {
    /// The failure as an [`OsError`] a user can act on.
    pub fn to_error(&self, spec: &ChildSpec) -> OsError {
        let err = std::io::Error::from_raw_os_error(self.errno);
        let what = match self.step {
            Step::Affinity => format!("pinning child {} to CPUs {:?}", self.pid, spec.cpus.as_deref().unwrap_or(&[])),
            Step::Sched => match &spec.sched {
                Some(p) => {
                    format!("setting {} (priority {}) on child {}", p.policy.kernel_name(), p.priority, self.pid)
                }
                None => format!("setting the policy of child {}", self.pid),
            },
            Step::Gate => format!("child {} waiting at the start gate", self.pid),
            Step::Exec => format!("executing {} in child {}", spec.program.display(), self.pid),
        };
        if self.step == Step::Sched && self.errno == libc::EBUSY {
            return OsError::unsupported(what, "SCHED_DEADLINE admission control refused the bandwidth (EBUSY)");
        }
        OsError::from_io(what, err)
    }
}

/// A reaped child and when it was reaped (CLOCK_MONOTONIC ns).
#[derive(Debug, Clone, Copy)]
pub struct Exit {
    pub reaped: crate::rusage::Reaped,
    pub at_ns: u64,
}

/// Bytes of one message on the report pipe: pid, step code (0 = ready), errno.
const MSG: usize = 12;

/// A batch of children waiting at a start gate. See the module documentation.
pub struct HeldBatch {
    spec: ChildSpec,
    path: CString,
    _argv: Vec<CString>,
    argv_ptrs: Vec<*const libc::c_char>,
    _envp: Vec<CString>,
    envp_ptrs: Vec<*const libc::c_char>,
    cpuset: Option<libc::cpu_set_t>,
    attr: Option<SchedAttr>,
    gate_r: OwnedFd,
    gate_w: Option<OwnedFd>,
    report_r: OwnedFd,
    report_w: OwnedFd,
    devnull: Option<OwnedFd>,
    /// The signal mask before the batch blocked SIGCHLD; children exec with it.
    old_mask: libc::sigset_t,
    pgid: i32,
    pids: Vec<i32>,
    live: HashSet<i32>,
    ready: usize,
    failures: Vec<ChildFailure>,
    partial: Vec<u8>,
}

fn pipe_cloexec(what: &str) -> OsResult<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid two-int out-array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(OsError::last(format!("creating the {what} pipe")));
    }
    // SAFETY: pipe2 just returned these two fresh descriptors; we own them.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn cstring(what: &str, s: &OsStr) -> OsResult<CString> {
    CString::new(s.as_bytes()).map_err(|_| OsError::invalid(what, s.to_string_lossy(), "contains a NUL byte"))
}

impl HeldBatch {
    /// Prepare a batch: validate the spec, build argv/envp, the CPU set, the sched_attr and
    /// the pipes, and block SIGCHLD in the calling thread (restored on drop) so
    /// [`HeldBatch::wait_exit`] can sleep until a child exits.
    pub fn new(spec: ChildSpec) -> OsResult<Self> {
        if !spec.program.is_absolute() {
            return Err(OsError::invalid("program", spec.program.display(), "must be an absolute path"));
        }
        if let Some(p) = &spec.sched {
            p.policy.check_priority(p.priority)?;
        }
        let path = cstring("program", spec.program.as_os_str())?;
        let mut argv = vec![path.clone()];
        for a in &spec.args {
            argv.push(cstring("argument", OsStr::new(a))?);
        }
        let mut argv_ptrs: Vec<_> = argv.iter().map(|c| c.as_ptr()).collect();
        argv_ptrs.push(std::ptr::null());
        let envp: Vec<CString> = std::env::vars_os()
            .filter_map(|(k, v)| {
                let mut kv = k.as_bytes().to_vec();
                kv.push(b'=');
                kv.extend_from_slice(v.as_bytes());
                CString::new(kv).ok()
            })
            .collect();
        let mut envp_ptrs: Vec<_> = envp.iter().map(|c| c.as_ptr()).collect();
        envp_ptrs.push(std::ptr::null());
        let cpuset = match &spec.cpus {
            None => None,
            Some(cpus) if cpus.is_empty() => {
                return Err(OsError::invalid("CPU list", "(empty)", "name at least one CPU"))
            }
            Some(cpus) => {
                // SAFETY: an all-zero cpu_set_t is the empty set.
                let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
                for &c in cpus {
                    if c >= libc::CPU_SETSIZE as usize {
                        return Err(OsError::invalid("CPU", c, "beyond the kernel's CPU set size"));
                    }
                    // SAFETY: c is below CPU_SETSIZE (checked above).
                    unsafe { libc::CPU_SET(c, &mut set) };
                }
                Some(set)
            }
        };
        let attr = spec.sched.as_ref().map(SchedAttr::from_params);
        let (gate_r, gate_w) = pipe_cloexec("start gate")?;
        let (report_r, report_w) = pipe_cloexec("child report")?;
        // SAFETY: fcntl on a descriptor we own.
        unsafe {
            let fl = libc::fcntl(report_r.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(report_r.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK);
        }
        let devnull = if spec.stdout_to_null {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/null")
                .map_err(|e| OsError::from_io("opening /dev/null", e))?;
            Some(OwnedFd::from(f))
        } else {
            None
        };
        // SAFETY: sigset operations on local, initialised sets.
        let old_mask = unsafe {
            let mut block: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut block);
            libc::sigaddset(&mut block, libc::SIGCHLD);
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, &block, &mut old);
            old
        };
        Ok(HeldBatch {
            spec,
            path,
            _argv: argv,
            argv_ptrs,
            _envp: envp,
            envp_ptrs,
            cpuset,
            attr,
            gate_r,
            gate_w: Some(gate_w),
            report_r,
            report_w,
            devnull,
            old_mask,
            pgid: 0,
            pids: Vec::new(),
            live: HashSet::new(),
            ready: 0,
            failures: Vec::new(),
            partial: Vec::new(),
        })
    }

    /// The spec every child follows.
    pub fn spec(&self) -> &ChildSpec {
        &self.spec
    }

    /// Fork one more child; it runs up to the gate and waits there. Returns its pid.
    pub fn spawn_one(&mut self) -> OsResult<i32> {
        if self.gate_w.is_none() {
            return Err(OsError::invalid("spawn", "after release", "the batch was already released"));
        }
        // SAFETY: the child branch only calls async-signal-safe functions (see `child`).
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: we are the freshly forked child.
            unsafe { self.child() }
        }
        if pid < 0 {
            let err = std::io::Error::last_os_error();
            let why = if err.raw_os_error() == Some(libc::EAGAIN) {
                format!(
                    "{err}; the process limit was reached after {} children (check `ulimit -u`, \
                     /proc/sys/kernel/pid_max and the cgroup's pids.max)",
                    self.pids.len()
                )
            } else {
                err.to_string()
            };
            return Err(OsError::unsupported("forking a child", why));
        }
        if self.pgid == 0 {
            self.pgid = pid;
        }
        // Also set it from the parent so it holds before the child runs (the shell's trick);
        // EACCES after the child's own setpgid is harmless.
        // SAFETY: plain syscall.
        unsafe { libc::setpgid(pid, self.pgid) };
        self.pids.push(pid);
        self.live.insert(pid);
        self.drain_reports();
        Ok(pid)
    }

    /// The child side, from fork to exec. Never returns.
    unsafe fn child(&self) -> ! {
        let fail = |step: Step| -> ! {
            let errno = *libc::__errno_location();
            let msg = encode(libc::getpid(), step.code(), errno);
            libc::write(self.report_w.as_raw_fd(), msg.as_ptr().cast(), MSG);
            libc::_exit(127)
        };
        // Keep only what the child needs: a copy of any *other* gate's write end (another
        // batch forked by another thread) would keep that gate from ever reaching EOF.
        let mut keep =
            [self.gate_r.as_raw_fd(), self.report_w.as_raw_fd(), self.devnull.as_ref().map_or(-1, |f| f.as_raw_fd())];
        keep.sort_unstable();
        let mut from: u32 = 3;
        for fd in keep {
            if fd >= from as i32 {
                if fd > from as i32 {
                    libc::syscall(libc::SYS_close_range, from, fd as u32 - 1, 0u32);
                }
                from = fd as u32 + 1;
            }
        }
        libc::syscall(libc::SYS_close_range, from, u32::MAX, 0u32);
        libc::setpgid(0, self.pgid);
        if let Some(set) = &self.cpuset {
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0 {
                fail(Step::Affinity);
            }
        }
        if let Some(attr) = &self.attr {
            if libc::syscall(libc::SYS_sched_setattr, 0, attr as *const SchedAttr, 0u32) != 0 {
                fail(Step::Sched);
            }
        }
        if let Some(null) = &self.devnull {
            libc::dup2(null.as_raw_fd(), 1);
        }
        let msg = encode(libc::getpid(), 0, 0);
        libc::write(self.report_w.as_raw_fd(), msg.as_ptr().cast(), MSG);
        let mut byte = 0u8;
        loop {
            match libc::read(self.gate_r.as_raw_fd(), (&mut byte as *mut u8).cast(), 1) {
                1 => break,
                // Never released: the batch was dropped or the harness died.
                0 => libc::_exit(126),
                _ if *libc::__errno_location() == libc::EINTR => {}
                _ => fail(Step::Gate),
            }
        }
        // Start the program with default dispositions for the signals the harness handles
        // or ignores (Rust ignores SIGPIPE), and the harness's original signal mask.
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE] {
            libc::signal(sig, libc::SIG_DFL);
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, &self.old_mask, std::ptr::null_mut());
        libc::execve(self.path.as_ptr(), self.argv_ptrs.as_ptr(), self.envp_ptrs.as_ptr());
        fail(Step::Exec)
    }

    /// Read whatever the children have reported so far (non-blocking).
    fn drain_reports(&mut self) {
        let mut buf = [0u8; MSG * 256];
        loop {
            // SAFETY: buf is writable for its length.
            let n = unsafe { libc::read(self.report_r.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                break;
            }
            self.partial.extend_from_slice(&buf[..n as usize]);
        }
        let whole = self.partial.len() / MSG * MSG;
        for m in self.partial[..whole].chunks_exact(MSG) {
            let (pid, code, errno) = decode(m);
            match Step::from_code(code) {
                None => self.ready += 1,
                Some(step) => self.failures.push(ChildFailure { pid, step, errno }),
            }
        }
        self.partial.drain(..whole);
    }

    /// Wait until every spawned child is at the gate (or failed before it), up to `limit`.
    /// Returns the first failure as an error.
    pub fn wait_ready(&mut self, limit: Duration) -> OsResult<()> {
        let start = Instant::now();
        loop {
            self.drain_reports();
            if let Some(f) = self.failures.first() {
                return Err(f.to_error(&self.spec));
            }
            if self.ready >= self.pids.len() {
                return Ok(());
            }
            if start.elapsed() > limit {
                return Err(OsError::unsupported(
                    "the start gate",
                    format!("only {} of {} children reached it within {limit:?}", self.ready, self.pids.len()),
                ));
            }
            if crate::signals::stop_requested() {
                return Err(OsError::unsupported("the start gate", "stopped by a signal"));
            }
            let mut pfd = libc::pollfd { fd: self.report_r.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut pfd, 1, 10) };
        }
    }

    /// Children spawned.
    pub fn len(&self) -> usize {
        self.pids.len()
    }

    /// True when no child was spawned.
    pub fn is_empty(&self) -> bool {
        self.pids.is_empty()
    }

    /// Children not reaped yet.
    pub fn live(&self) -> usize {
        self.live.len()
    }

    /// Every pid spawned, in spawn order.
    pub fn pids(&self) -> &[i32] {
        &self.pids
    }

    /// Children that failed before their program started (known so far).
    pub fn failures(&mut self) -> Vec<ChildFailure> {
        self.drain_reports();
        self.failures.clone()
    }

    /// Open the gate: every waiting child execs now. Returns the CLOCK_MONOTONIC time (ns).
    pub fn release(&mut self) -> u64 {
        // Read the clock first: opening the gate wakes every child, and children that outrank
        // the caller (SCHED_DEADLINE beats any RT priority) may run before it gets the CPU back.
        let t = crate::clock::monotonic_ns();
        if let Some(gate) = self.gate_w.take() {
            // One byte per child, in one write (a pipe holds 64 KiB; beyond that the write
            // completes as children take theirs). A failed write leaves the rest to EOF: they exit.
            let go = vec![1u8; self.pids.len()];
            let _ = std::io::Write::write_all(&mut std::fs::File::from(gate), &go);
        }
        t
    }

    /// Sleep until a child may have exited (SIGCHLD), a handled signal arrives, or `max`
    /// passes. SIGCHLD is blocked in this thread, so it waits in sigtimedwait(2); if another
    /// thread takes the SIGCHLD, `max` bounds the delay.
    pub fn wait_exit(&self, max: Duration) {
        // SAFETY: local sigset and timespec; sigtimedwait only reads them.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGCHLD);
            let ts = libc::timespec { tv_sec: max.as_secs() as libc::time_t, tv_nsec: max.subsec_nanos() as _ };
            libc::sigtimedwait(&set, std::ptr::null_mut(), &ts);
        }
    }

    /// Reap every child that has exited, without blocking.
    pub fn reap_ready(&mut self) -> OsResult<Vec<Exit>> {
        let mut out = Vec::new();
        while !self.live.is_empty() {
            match crate::rusage::try_wait_pid(-self.pgid) {
                Ok(Some(r)) => {
                    self.live.remove(&r.pid);
                    out.push(Exit { reaped: r, at_ns: crate::clock::monotonic_ns() });
                }
                Ok(None) => break,
                Err(OsError::Io { source, .. }) if source.raw_os_error() == Some(libc::ECHILD) => {
                    // The group is gone; anything still listed was reaped elsewhere.
                    self.live.clear();
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// Send `sig` to every child not yet reaped.
    pub fn signal_all(&self, sig: i32) {
        if self.pgid > 0 && !self.live.is_empty() {
            // SAFETY: plain syscalls; the group and pids are our unreaped children.
            unsafe { libc::kill(-self.pgid, sig) };
        }
        for &pid in &self.live {
            // SAFETY: as above (an unreaped child's pid cannot be reused).
            unsafe { libc::kill(pid, sig) };
        }
    }

    /// SIGKILL every child still alive and reap them all (blocking). Returns those reaped.
    pub fn kill_and_reap(&mut self) -> Vec<Exit> {
        self.gate_w = None;
        self.signal_all(libc::SIGKILL);
        let mut out = Vec::new();
        while !self.live.is_empty() {
            let r = if self.pgid > 0 { crate::rusage::wait_pid(-self.pgid) } else { break };
            match r {
                Ok(r) => {
                    self.live.remove(&r.pid);
                    out.push(Exit { reaped: r, at_ns: crate::clock::monotonic_ns() });
                }
                Err(_) => {
                    // No group member left (ECHILD): reap stragglers by pid.
                    let rest: Vec<i32> = self.live.drain().collect();
                    for pid in rest {
                        if let Ok(r) = crate::rusage::wait_pid(pid) {
                            out.push(Exit { reaped: r, at_ns: crate::clock::monotonic_ns() });
                        }
                    }
                }
            }
        }
        out
    }
}

impl Drop for HeldBatch {
    fn drop(&mut self) {
        if !self.live.is_empty() {
            let n = self.kill_and_reap().len();
            if n > 0 && std::thread::panicking() {
                eprintln!("schedlab: killed and reaped {n} children after a panic");
            }
        }
        // SAFETY: restoring the mask saved in `new` for this thread.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old_mask, std::ptr::null_mut()) };
    }
}

fn encode(pid: i32, code: i32, errno: i32) -> [u8; MSG] {
    let mut m = [0u8; MSG];
    m[..4].copy_from_slice(&pid.to_ne_bytes());
    m[4..8].copy_from_slice(&code.to_ne_bytes());
    m[8..].copy_from_slice(&errno.to_ne_bytes());
    m
}

fn decode(m: &[u8]) -> (i32, i32, i32) {
    let word = |i: usize| i32::from_ne_bytes([m[i], m[i + 1], m[i + 2], m[i + 3]]);
    (word(0), word(4), word(8))
}

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

    /// Open the gate and reap every child (bounded: a hung child fails the test, not CI).
    pub(super) fn release_and_reap(b: &mut HeldBatch) -> Vec<Exit> {
        b.release();
        let mut exits = Vec::new();
        let start = Instant::now();
        while b.live() > 0 && start.elapsed() < Duration::from_secs(10) {
            b.wait_exit(Duration::from_millis(20));
            exits.extend(b.reap_ready().unwrap());
        }
        assert_eq!(b.live(), 0, "children still alive after 10 s");
        exits
    }

    fn true_spec() -> ChildSpec {
        ChildSpec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), "exit 0".into()],
            sched: None,
            cpus: None,
            stdout_to_null: true,
        }
    }

    #[test]
    fn messages_round_trip() {
        assert_eq!(decode(&encode(1234, 2, 13)), (1234, 2, 13));
    }

    #[test]
    fn children_wait_at_the_gate_until_released() {
        let mut b = HeldBatch::new(true_spec()).unwrap();
        for _ in 0..5 {
            b.spawn_one().unwrap();
        }
        b.wait_ready(Duration::from_secs(10)).unwrap();
        std::thread::sleep(Duration::from_millis(30));
        assert!(b.reap_ready().unwrap().is_empty(), "a child passed the closed gate");
        let exits = release_and_reap(&mut b);
        assert_eq!(exits.len(), 5);
        assert!(exits.iter().all(|e| e.reaped.status.success()));
    }

    #[test]
    fn exec_failure_is_reported() {
        let spec = ChildSpec { program: "/nonexistent/schedlab-test".into(), ..true_spec() };
        let mut b = HeldBatch::new(spec).unwrap();
        b.spawn_one().unwrap();
        b.wait_ready(Duration::from_secs(10)).unwrap();
        let exits = release_and_reap(&mut b);
        assert_eq!(exits[0].reaped.status, crate::rusage::ExitStatus::Exited(127));
        let f = b.failures();
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].step, Step::Exec);
        assert_eq!(f[0].errno, libc::ENOENT);
    }

    #[test]
    fn drop_kills_and_reaps_held_children() {
        let pids: Vec<i32> = {
            let mut b = HeldBatch::new(true_spec()).unwrap();
            for _ in 0..3 {
                b.spawn_one().unwrap();
            }
            b.wait_ready(Duration::from_secs(10)).unwrap();
            b.pids().to_vec()
        };
        for pid in pids {
            // SAFETY: kill(pid, 0) only checks existence; a reaped child no longer exists.
            let alive = unsafe { libc::kill(pid, 0) } == 0;
            assert!(!alive, "child {pid} survived the batch");
        }
    }

    #[test]
    fn children_of_a_killed_harness_never_start() {
        const HELPER: &str = "SCHEDLAB_TEST_ORPHAN_DIR";
        if let Ok(dir) = std::env::var(HELPER) {
            // The helper process: hold three children that would each leave a file, then die
            // without releasing or dropping the batch, as under SIGKILL.
            let spec = ChildSpec { args: vec!["-c".into(), format!("touch {dir}/started.$$")], ..true_spec() };
            let mut b = HeldBatch::new(spec).unwrap();
            for _ in 0..3 {
                b.spawn_one().unwrap();
            }
            b.wait_ready(Duration::from_secs(10)).unwrap();
            // SAFETY: ends this helper process at once, running no destructor.
            unsafe { libc::_exit(0) };
        }
        let dir = std::env::temp_dir().join(format!("schedlab-orphan-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "spawn::tests::children_of_a_killed_harness_never_start", "--test-threads=1"])
            .env(HELPER, &dir)
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "helper failed: {status}");
        // A child that started would have created its file within milliseconds.
        std::thread::sleep(Duration::from_millis(500));
        let started = std::fs::read_dir(&dir).unwrap().count();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(started, 0, "children of a dead harness started their program");
    }

    #[test]
    fn affinity_is_set_before_exec() {
        let cpu = crate::affinity::allowed_cpus().unwrap()[0];
        let spec = ChildSpec {
            args: vec!["-c".into(), format!("grep -q '^Cpus_allowed_list:[[:space:]]*{cpu}$' /proc/self/status")],
            cpus: Some(vec![cpu]),
            ..true_spec()
        };
        let mut b = HeldBatch::new(spec).unwrap();
        b.spawn_one().unwrap();
        b.wait_ready(Duration::from_secs(10)).unwrap();
        let exits = release_and_reap(&mut b);
        assert!(exits[0].reaped.status.success(), "{:?}", exits[0].reaped.status);
    }

    #[test]
    fn headroom_rejects_absurd_counts() {
        let h = ProcessHeadroom::read();
        assert!(h.pid_max > 0);
        let err = h.check(h.pid_max + 1).unwrap_err().to_string();
        assert!(err.contains(&(h.pid_max + 1).to_string()), "{err}");
    }
}

#[cfg(test)]
mod deadline_tests {
    use super::*;

    #[test]
    fn deadline_children_wait_at_the_gate() {
        if !crate::root_for_test("SCHED_DEADLINE") {
            return;
        }
        let sched = crate::sched::SchedParams::deadline(2_000_000, 100_000_000, 100_000_000).unwrap();
        let spec = ChildSpec {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), "exit 0".into()],
            sched: Some(sched),
            cpus: Some((0..crate::affinity::online_cpus()).collect()),
            stdout_to_null: true,
        };
        let mut b = HeldBatch::new(spec).unwrap();
        for _ in 0..3 {
            b.spawn_one().unwrap();
        }
        b.wait_ready(Duration::from_secs(10)).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let early = b.reap_ready().unwrap();
        assert!(
            early.is_empty(),
            "deadline children passed the closed gate: {:?}",
            early.iter().map(|e| e.reaped.status).collect::<Vec<_>>()
        );
        super::tests::release_and_reap(&mut b);
    }
}
