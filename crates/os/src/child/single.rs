//! One child process with its own process group, started through [`super::fork`]: spawned,
//! optionally held at its barrier until [`Child::release`], signalled, waited for (with its own
//! rusage from wait4(2)) and — if still alive when dropped — killed and reaped, so no error path
//! leaves it behind.

use super::fork::{fork_child, ForkPlan};
use super::prepared::{decode, pipe_cloexec, set_nonblocking, ChildFailure, Prepared, Step, MSG};
use super::spec::{Barrier, ChildSpec, Input, Output};
use crate::rusage::{self, Reaped};
use crate::{OsError, OsResult};
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// A started child. See the module documentation.
pub struct Child {
    pid: i32,
    spec: ChildSpec,
    /// Parent's end of the report pipe: failure messages until exec, EOF after it.
    report: File,
    /// Write end of this child's gate ([`Barrier::Gate`]), until released.
    gate: Option<OwnedFd>,
    stdin: Option<File>,
    stdout: Option<File>,
    stderr: Option<File>,
    reaped: Option<Reaped>,
    failure: Option<ChildFailure>,
    /// Its process group in the journal. Fields drop after `Drop::drop` has killed the child, so
    /// this then kills the rest of its group and marks the entry undone.
    _journal: Option<crate::journal::GroupEntry>,
}

impl Child {
    /// Start a child. With a barrier it returns once the child waits there (stopped, or at its
    /// gate); without one, once the program was exec'd. A child that failed before its program
    /// started is reaped and its failure returned as the error.
    pub fn spawn(spec: &ChildSpec) -> OsResult<Child> {
        let prepared = Prepared::new(spec)?;
        let (report_r, report_w) = pipe_cloexec("child report")?;
        let gate = if spec.barrier == Barrier::Gate { Some(pipe_cloexec("start gate")?) } else { None };
        let input = if spec.stdin == Input::Pipe { Some(pipe_cloexec("child stdin")?) } else { None };
        let out = if spec.stdout == Output::Pipe { Some(pipe_cloexec("child stdout")?) } else { None };
        let err = if spec.stderr == Output::Pipe { Some(pipe_cloexec("child stderr")?) } else { None };
        let fd = |p: &Option<(OwnedFd, OwnedFd)>, read_end: bool| {
            p.as_ref().map_or(-1, |(r, w)| if read_end { r.as_raw_fd() } else { w.as_raw_fd() })
        };
        let plan = ForkPlan {
            pgid: 0,
            report_w: report_w.as_raw_fd(),
            gate_r: fd(&gate, true),
            stdin_r: fd(&input, true),
            stdout_w: fd(&out, false),
            stderr_w: fd(&err, false),
        };
        let pid = fork_child(&prepared, &plan)?;
        drop(report_w);
        let journal = match crate::journal::record_group(pid, spec.display()) {
            Ok(g) => Some(g),
            Err(e) => {
                let _ = rusage::wait_pid(pid);
                return Err(e);
            }
        };
        let mut child = Child {
            pid,
            spec: spec.clone(),
            report: File::from(report_r),
            gate: gate.map(|(_, w)| w),
            stdin: input.map(|(_, w)| File::from(w)),
            stdout: out.map(|(r, _)| File::from(r)),
            stderr: err.map(|(r, _)| File::from(r)),
            reaped: None,
            failure: None,
            _journal: journal,
        };
        child.await_start()?;
        Ok(child)
    }

    /// Wait until the child reported ready (barrier) or exec'd (no barrier), or failed.
    fn await_start(&mut self) -> OsResult<()> {
        let mut msg = [0u8; MSG];
        let n = read_full(&mut self.report, &mut msg);
        if n == MSG {
            let (pid, code, errno) = decode(&msg);
            if let Some(step) = Step::from_code(code) {
                return Err(self.failed(ChildFailure { pid, step, errno }));
            }
        } else {
            // EOF before "ready": the child died (killed, or exited 126 because its parent
            // changed before PR_SET_PDEATHSIG took effect).
            let r = self.reap_blocking();
            return Err(OsError::unsupported(
                format!("starting {}", self.spec.display()),
                format!("the child ended before it was set up ({:?})", r.map(|r| r.status)),
            ));
        }
        match self.spec.barrier {
            Barrier::Gate => Ok(()),
            Barrier::Stop => self.await_stopped(),
            Barrier::None => {
                // The report pipe reaches EOF at exec (close-on-exec), or carries the failure.
                let n = read_full(&mut self.report, &mut msg);
                if n == MSG {
                    let (pid, code, errno) = decode(&msg);
                    if let Some(step) = Step::from_code(code) {
                        return Err(self.failed(ChildFailure { pid, step, errno }));
                    }
                }
                Ok(())
            }
        }
    }

    fn await_stopped(&mut self) -> OsResult<()> {
        let mut status = 0;
        loop {
            // SAFETY: status is a valid out-pointer; pid is our unreaped child.
            let rc = unsafe { libc::waitpid(self.pid, &mut status, libc::WUNTRACED) };
            if rc == self.pid {
                break;
            }
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EINTR) {
                return Err(OsError::from_io(format!("waiting for child {} to stop at its barrier", self.pid), err));
            }
        }
        if libc::WIFSTOPPED(status) {
            return Ok(());
        }
        // It ended instead (killed before stopping). Not reaped yet by waitpid? It was: a
        // terminated child is reaped by waitpid, so record that and report.
        self.reaped = Some(Reaped {
            pid: self.pid,
            status: crate::rusage::ExitStatus::from_wait_status(status),
            usage: Default::default(),
        });
        Err(OsError::unsupported(format!("starting {}", self.spec.display()), format!("wait status {status:#x}")))
    }

    /// Record a pre-exec failure: reap the child and turn it into an error.
    fn failed(&mut self, f: ChildFailure) -> OsError {
        self.failure = Some(f);
        self.reap_blocking();
        f.to_error(&self.spec)
    }

    fn reap_blocking(&mut self) -> Option<Reaped> {
        if self.reaped.is_none() {
            self.reaped = rusage::wait_pid(self.pid).ok();
        }
        self.reaped
    }

    /// The child's pid.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// What it runs.
    pub fn spec(&self) -> &ChildSpec {
        &self.spec
    }

    /// Let a child held at its barrier start its program (a gate byte, or SIGCONT).
    pub fn release(&mut self) -> OsResult<()> {
        match self.spec.barrier {
            Barrier::None => Ok(()),
            Barrier::Stop => self.signal(libc::SIGCONT),
            Barrier::Gate => {
                if let Some(gate) = self.gate.take() {
                    std::io::Write::write_all(&mut File::from(gate), &[1])
                        .map_err(|e| OsError::from_io(format!("releasing child {}", self.pid), e))?;
                }
                Ok(())
            }
        }
    }

    /// The write end of its stdin pipe ([`Input::Pipe`]), once. Dropping it closes the child's
    /// input (end of file).
    pub fn take_stdin(&mut self) -> Option<File> {
        self.stdin.take()
    }

    /// The read end of its stdout pipe ([`Output::Pipe`]), once.
    pub fn take_stdout(&mut self) -> Option<File> {
        self.stdout.take()
    }

    /// The read end of its stderr pipe ([`Output::Pipe`]), once.
    pub fn take_stderr(&mut self) -> Option<File> {
        self.stderr.take()
    }

    /// Send `sig` to the child (not its group) while it is unreaped (its pid cannot have been
    /// reused until then). A child that already exited is not an error.
    pub fn signal(&self, sig: i32) -> OsResult<()> {
        if self.reaped.is_some() {
            return Ok(());
        }
        crate::process::send_signal(self.pid, sig)
    }

    /// Send `sig` to the child's whole process group (it leads it), while it is unreaped.
    pub fn signal_group(&self, sig: i32) -> OsResult<()> {
        if self.reaped.is_some() {
            return Ok(());
        }
        crate::process::send_signal(-self.pid, sig)
    }

    /// True until the child has been reaped.
    pub fn is_alive(&self) -> bool {
        self.reaped.is_none()
    }

    /// How it ended, once reaped.
    pub fn reaped(&self) -> Option<Reaped> {
        self.reaped
    }

    /// Reap it if it has exited, without blocking.
    pub fn try_wait(&mut self) -> OsResult<Option<Reaped>> {
        if self.reaped.is_none() {
            self.reaped = rusage::try_wait_pid(self.pid)?;
        }
        Ok(self.reaped)
    }

    /// Reap it, blocking.
    pub fn wait(&mut self) -> OsResult<Reaped> {
        if let Some(r) = self.reaped {
            return Ok(r);
        }
        let r = rusage::wait_pid(self.pid)?;
        self.reaped = Some(r);
        Ok(r)
    }

    /// Reap it if it exits within `timeout`; `Ok(None)` = still running (the caller decides,
    /// usually [`Child::kill`]). Also returns early, with `None`, when a stop was requested.
    pub fn wait_timeout(&mut self, timeout: Duration) -> OsResult<Option<Reaped>> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(r) = self.try_wait()? {
                return Ok(Some(r));
            }
            if Instant::now() >= deadline || crate::signals::stop_requested() {
                return Ok(None);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// SIGKILL its process group and the child, and reap it.
    pub fn kill(&mut self) -> OsResult<Reaped> {
        let _ = self.signal_group(libc::SIGKILL);
        let _ = self.signal(libc::SIGKILL);
        self.wait()
    }

    /// After it exited with 127: why its program did not start, if that was the reason.
    pub fn exec_error(&mut self) -> Option<OsError> {
        if self.failure.is_none() {
            let mut msg = [0u8; MSG];
            set_nonblocking(&self.report);
            if read_full(&mut self.report, &mut msg) == MSG {
                let (pid, code, errno) = decode(&msg);
                if let Some(step) = Step::from_code(code) {
                    self.failure = Some(ChildFailure { pid, step, errno });
                }
            }
        }
        self.failure.map(|f| f.to_error(&self.spec))
    }
}

#[cfg(test)]
impl Child {
    /// Forget the handle as a killed harness would leave it, but keep its journal entry: a test
    /// that the child dies with the thread that started it marks the entry undone afterwards
    /// (dropping it), where a forgotten entry would wait in the machine's journal for the next
    /// run to heal.
    pub(crate) fn forget_keeping_journal(mut self) -> (i32, Option<crate::journal::GroupEntry>) {
        let entry = self._journal.take();
        let pid = self.pid;
        std::mem::forget(self);
        (pid, entry)
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.reaped.is_none() {
            let _ = self.kill();
        }
    }
}

/// Read until `buf` is full or EOF (or an error other than EINTR); returns the bytes read.
fn read_full(f: &mut File, buf: &mut [u8]) -> usize {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rusage::ExitStatus;

    #[test]
    fn a_plain_child_runs_and_is_reaped_with_its_status() {
        let mut c = Child::spawn(&ChildSpec::shell("exit 3")).unwrap();
        assert_eq!(c.wait().unwrap().status, ExitStatus::Exited(3));
    }

    #[test]
    fn a_missing_program_is_an_error_naming_it() {
        let err = Child::spawn(&ChildSpec::new("/nonexistent/schedlab-test")).err().unwrap().to_string();
        assert!(err.contains("/nonexistent/schedlab-test"), "{err}");
    }

    #[test]
    fn a_stopped_child_waits_then_runs_and_its_output_is_piped() {
        let spec = ChildSpec::shell("echo hi").stdout(Output::Pipe).barrier(Barrier::Stop);
        let mut c = Child::spawn(&spec).unwrap();
        assert_eq!(crate::procfs::stat(c.pid()).map(|s| s.state), Some('T'));
        c.release().unwrap();
        let mut out = String::new();
        c.take_stdout().unwrap().read_to_string(&mut out).unwrap();
        assert_eq!(out, "hi\n");
        assert!(c.wait().unwrap().status.success());
        assert!(c.exec_error().is_none());
    }

    #[test]
    fn a_gated_child_does_not_start_before_release() {
        let dir = tempfile::tempdir().unwrap();
        let mark = dir.path().join("started");
        let spec = ChildSpec::shell(&format!("touch {}", mark.display())).barrier(Barrier::Gate);
        let mut c = Child::spawn(&spec).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(!mark.exists(), "the child passed its closed gate");
        assert!(c.try_wait().unwrap().is_none());
        c.release().unwrap();
        assert!(c.wait().unwrap().status.success());
        assert!(mark.exists());
    }

    #[test]
    fn wait_timeout_gives_up_and_kill_reaps() {
        let mut c = Child::spawn(&ChildSpec::new("sleep").arg("30")).unwrap();
        let t0 = Instant::now();
        assert!(c.wait_timeout(Duration::from_millis(50)).unwrap().is_none());
        assert!(t0.elapsed() < Duration::from_secs(5));
        assert_eq!(c.kill().unwrap().status, ExitStatus::Signaled(libc::SIGKILL));
    }

    #[test]
    fn dropping_a_child_kills_it() {
        let pid = Child::spawn(&ChildSpec::new("sleep").arg("30")).unwrap().pid();
        assert!(crate::procfs::stat(pid).is_none(), "child {pid} survived its handle");
    }
}
