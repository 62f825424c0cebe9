//! A batch of identical children held at one start gate, in one process group (seed 001's
//! harness): each child is forked through [`super::fork`], reports "ready" on a shared pipe and
//! blocks on the shared gate pipe. [`Batch::release`] writes one byte per child in one write, so
//! every waiting child wakes at the same moment and execs. A child that reads end-of-file
//! instead (the batch was dropped, or the harness was killed before releasing) exits without
//! starting its program. Children are reaped one by one with wait4(2) on the group, which
//! returns each child's own rusage. Dropping a [`Batch`] kills (SIGKILL) and reaps every child
//! still alive, so an error, a panic or a stop signal never leaves children behind.

use super::fork::{fork_child, ForkPlan};
use super::prepared::{decode, pipe_cloexec, set_nonblocking, ChildFailure, Prepared, Step, MSG};
use super::spec::{Barrier, ChildSpec, Input, Output};
use crate::{OsError, OsResult};
use std::collections::HashSet;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// A reaped child and when it was reaped (CLOCK_MONOTONIC ns).
#[derive(Debug, Clone, Copy)]
pub struct Exit {
    pub reaped: crate::rusage::Reaped,
    pub at_ns: u64,
}

/// A batch of children waiting at a start gate. See the module documentation.
pub struct Batch {
    prepared: Prepared,
    gate_r: OwnedFd,
    gate_w: Option<OwnedFd>,
    report_r: OwnedFd,
    report_w: OwnedFd,
    /// The signal mask before the batch blocked SIGCHLD in the calling thread.
    old_mask: libc::sigset_t,
    pgid: i32,
    pids: Vec<i32>,
    live: HashSet<i32>,
    ready: usize,
    failures: Vec<ChildFailure>,
    partial: Vec<u8>,
    /// The group in the journal, from the first child on; dropped after `Drop::drop` has
    /// killed and reaped the children.
    _journal: Option<crate::journal::GroupEntry>,
}

impl Batch {
    /// Prepare a batch of `spec` (its barrier is made a gate; piped output is refused: nobody
    /// would read it): check the spec, build the pipes, and block SIGCHLD in the calling thread
    /// (restored on drop) so [`Batch::wait_exit`] can sleep until a child exits.
    pub fn new(spec: ChildSpec) -> OsResult<Self> {
        if spec.stdout == Output::Pipe || spec.stderr == Output::Pipe {
            return Err(OsError::invalid("batch output", "Pipe", "a batch's children cannot have piped output"));
        }
        if spec.stdin == Input::Pipe {
            return Err(OsError::invalid("batch input", "Pipe", "a batch's children cannot have piped input"));
        }
        let prepared = Prepared::new(&spec.barrier(Barrier::Gate))?;
        let (gate_r, gate_w) = pipe_cloexec("start gate")?;
        let (report_r, report_w) = pipe_cloexec("child report")?;
        set_nonblocking(&report_r);
        // SAFETY: sigset operations on local, initialised sets.
        let old_mask = unsafe {
            let mut block: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut block);
            libc::sigaddset(&mut block, libc::SIGCHLD);
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, &block, &mut old);
            old
        };
        Ok(Batch {
            prepared,
            gate_r,
            gate_w: Some(gate_w),
            report_r,
            report_w,
            old_mask,
            pgid: 0,
            pids: Vec::new(),
            live: HashSet::new(),
            ready: 0,
            failures: Vec::new(),
            partial: Vec::new(),
            _journal: None,
        })
    }

    /// The spec every child follows.
    pub fn spec(&self) -> &ChildSpec {
        &self.prepared.spec
    }

    /// Fork one more child; it runs up to the gate and waits there. Returns its pid.
    pub fn spawn_one(&mut self) -> OsResult<i32> {
        if self.gate_w.is_none() {
            return Err(OsError::invalid("spawn", "after release", "the batch was already released"));
        }
        let plan = ForkPlan {
            pgid: self.pgid,
            report_w: self.report_w.as_raw_fd(),
            gate_r: self.gate_r.as_raw_fd(),
            stdin_r: -1,
            stdout_w: -1,
            stderr_w: -1,
        };
        let pid = fork_child(&self.prepared, &plan).map_err(|e| match e {
            OsError::Unsupported { what, why } => {
                OsError::Unsupported { what, why: format!("{why} (after {} children)", self.pids.len()) }
            }
            other => other,
        })?;
        self.pids.push(pid);
        self.live.insert(pid);
        if self.pgid == 0 {
            self.pgid = pid;
            self._journal = Some(crate::journal::record_group(pid, format!("{} ×N", self.spec().display()))?);
        }
        self.drain_reports();
        Ok(pid)
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
                return Err(f.to_error(self.spec()));
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
            let _ = crate::process::send_signal(-self.pgid, sig);
        }
        for &pid in &self.live {
            // An unreaped child's pid cannot have been reused.
            let _ = crate::process::send_signal(pid, sig);
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

impl Drop for Batch {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Open the gate and reap every child (bounded: a hung child fails the test, not CI).
    pub(crate) fn release_and_reap(b: &mut Batch) -> Vec<Exit> {
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
        ChildSpec::shell("exit 0").stdout(Output::Null)
    }

    #[test]
    fn children_wait_at_the_gate_until_released() {
        let mut b = Batch::new(true_spec()).unwrap();
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
        // The program exists when the batch is prepared and is gone when the children exec.
        let dir = tempfile::tempdir().unwrap();
        let prog = dir.path().join("vanishing");
        std::fs::copy("/bin/true", &prog).unwrap();
        let mut b = Batch::new(ChildSpec::new(&prog)).unwrap();
        b.spawn_one().unwrap();
        b.wait_ready(Duration::from_secs(10)).unwrap();
        std::fs::remove_file(&prog).unwrap();
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
            let mut b = Batch::new(true_spec()).unwrap();
            for _ in 0..3 {
                b.spawn_one().unwrap();
            }
            b.wait_ready(Duration::from_secs(10)).unwrap();
            b.pids().to_vec()
        };
        for pid in pids {
            assert!(crate::procfs::stat(pid).is_none(), "child {pid} survived the batch");
        }
    }

    #[test]
    fn children_of_a_killed_harness_never_start() {
        const HELPER: &str = "SCHEDLAB_TEST_ORPHAN_DIR";
        if let Ok(dir) = std::env::var(HELPER) {
            // The helper process: hold three children that would each leave a file, then die
            // without releasing or dropping the batch, as under SIGKILL.
            let spec = ChildSpec::shell(&format!("touch {dir}/started.$$")).die_with_parent(false);
            let mut b = Batch::new(spec).unwrap();
            for _ in 0..3 {
                b.spawn_one().unwrap();
            }
            b.wait_ready(Duration::from_secs(10)).unwrap();
            // SAFETY: ends this helper process at once, running no destructor.
            unsafe { libc::_exit(0) };
        }
        let dir = std::env::temp_dir().join(format!("schedlab-orphan-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // The helper journals its process groups in a state directory of its own, which this
        // test heals afterwards as the next run would, leaving the machine's journal alone.
        let state = dir.with_extension("state");
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "child::batch::tests::children_of_a_killed_harness_never_start", "--test-threads=1"])
            .env(HELPER, &dir)
            .env(crate::journal::STATE_DIR_ENV, &state)
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "helper failed: {status}");
        // A child that started would have created its file within milliseconds.
        std::thread::sleep(Duration::from_millis(500));
        let started = std::fs::read_dir(&dir).unwrap().count();
        std::fs::remove_dir_all(&dir).unwrap();
        let healed = crate::journal::heal_in(&state).unwrap();
        std::fs::remove_dir_all(&state).unwrap();
        assert_eq!(started, 0, "children of a dead harness started their program");
        assert_eq!(healed.undone.len(), 1, "the dead helper's process group was not healed: {healed:?}");
        assert!(healed.failed.is_empty(), "{healed:?}");
    }

    #[test]
    fn affinity_is_set_before_exec() {
        let cpu = crate::affinity::allowed_cpus().unwrap()[0];
        let spec = ChildSpec::shell(&format!("grep -q '^Cpus_allowed_list:[[:space:]]*{cpu}$' /proc/self/status"))
            .cpus(&[cpu]);
        let mut b = Batch::new(spec).unwrap();
        b.spawn_one().unwrap();
        b.wait_ready(Duration::from_secs(10)).unwrap();
        let exits = release_and_reap(&mut b);
        assert!(exits[0].reaped.status.success(), "{:?}", exits[0].reaped.status);
    }

    #[test]
    fn deadline_children_wait_at_the_gate() {
        if !crate::root_for_test("SCHED_DEADLINE") {
            return;
        }
        let sched = crate::sched::SchedParams::deadline(2_000_000, 100_000_000, 100_000_000).unwrap();
        let spec = true_spec().sched(sched).cpus(&(0..crate::affinity::online_cpus()).collect::<Vec<_>>());
        let mut b = Batch::new(spec).unwrap();
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
        release_and_reap(&mut b);
    }
}
