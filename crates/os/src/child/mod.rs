//! Starting child processes: one builder, one fork path.
//!
//! Every child schedlab starts — the policy benchmark's thousands of workload processes, the
//! live WRR host's tasks, the task manager's loads and commands, the timer trials — is described
//! by a [`ChildSpec`] and forked by the same code ([`fork`]), so each one gets the same
//! treatment: default signal dispositions and an empty signal mask, only descriptors 0, 1 and 2
//! across exec, death with its parent (`PR_SET_PDEATHSIG`), its own or its batch's process
//! group, CPU pinning and scheduling policy (DEADLINE included) set before its program starts,
//! and optionally a barrier it waits at until released.
//!
//! - [`Child`]: one child (released alone, waited for with its rusage, killed when dropped).
//! - [`Batch`]: many identical children at one gate, released together (seed 001's harness).
//! - [`ProcessHeadroom`]: whether the machine can hold that many processes at once.

mod batch;
mod fork;
mod headroom;
mod prepared;
mod single;
mod spec;

pub use batch::{Batch, Exit};
pub use headroom::ProcessHeadroom;
pub use prepared::{ChildFailure, Step};
pub use single::Child;
pub use spec::{resolve_program, Barrier, ChildSpec, Input, Output};

use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc;
use std::time::Duration;

/// Read one line from `out` (a child's stdout), at most `timeout`. `Ok(None)` = nothing came in
/// time. The reading thread then stays blocked until the pipe closes, so the caller should kill
/// the child.
pub fn read_line_timeout(out: impl Read + Send + 'static, timeout: Duration) -> std::io::Result<Option<String>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let r = BufReader::new(out).read_line(&mut line).map(|_| line);
        let _ = tx.send(r);
    });
    match rx.recv_timeout(timeout) {
        Ok(r) => r.map(Some),
        Err(_) => Ok(None),
    }
}

/// Read everything from `out` in a thread (so a chatty child never blocks on a full pipe) and
/// hand back the last `keep` bytes when it closes.
pub fn collect_output(mut out: impl Read + Send + 'static, keep: usize) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out.read_to_end(&mut buf);
        let start = buf.len().saturating_sub(keep);
        let _ = tx.send(String::from_utf8_lossy(&buf[start..]).into_owned());
    });
    rx
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// Descriptors and signal state of a live process, read from /proc.
    fn fds_and_signals(pid: i32) -> (Vec<i32>, u64, u64) {
        let mut fds: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().parse().unwrap())
            .collect();
        fds.sort_unstable();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let hex = |key: &str| {
            let line = status.lines().find(|l| l.starts_with(key)).unwrap();
            u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap()
        };
        (fds, hex("SigIgn:"), hex("SigBlk:"))
    }

    /// [`fds_and_signals`] of `pid` once it runs `sleep` (its comm changes at exec; up to
    /// 10 s). `sleep` may hold a file of its own for a moment after exec (its locale), so the
    /// descriptors get up to 2 s from then to come down to 0, 1 and 2.
    fn after_exec(pid: i32) -> (Vec<i32>, u64, u64) {
        let t0 = std::time::Instant::now();
        while std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap().trim() != "sleep" {
            assert!(t0.elapsed() < Duration::from_secs(10), "child {pid} never exec'd");
            std::thread::sleep(Duration::from_millis(2));
        }
        let exec = std::time::Instant::now();
        let mut seen = fds_and_signals(pid);
        while seen.0 != [0, 1, 2] && exec.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(5));
            seen = fds_and_signals(pid);
        }
        seen
    }

    #[test]
    fn children_hold_only_the_standard_descriptors_and_no_ignored_or_blocked_signal() {
        // The parent holds an extra descriptor without close-on-exec, ignores SIGHUP and blocks
        // SIGUSR1 (the test harness itself ignores SIGPIPE, as every Rust program does).
        let extra = std::fs::File::open("/etc/hostname").unwrap();
        // SAFETY: clearing FD_CLOEXEC and changing this thread's signal state for the test.
        unsafe {
            libc::fcntl(extra.as_raw_fd(), libc::F_SETFD, 0);
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGUSR1);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        }
        let me = fds_and_signals(std::process::id() as i32);
        assert!(me.0.contains(&extra.as_raw_fd()) && me.1 & (1 << (libc::SIGHUP - 1)) != 0, "control: {me:?}");
        for barrier in [Barrier::None, Barrier::Gate, Barrier::Stop] {
            let mut c = Child::spawn(&ChildSpec::new("sleep").arg("30").barrier(barrier)).unwrap();
            c.release().unwrap();
            let (fds, ign, blk) = after_exec(c.pid());
            assert_eq!(fds, vec![0, 1, 2], "{barrier:?}: the child kept other descriptors");
            assert_eq!(ign, 0, "{barrier:?}: the child ignores signals {ign:#x}");
            assert_eq!(blk, 0, "{barrier:?}: the child blocks signals {blk:#x}");
            c.kill().unwrap();
        }
        let mut b = Batch::new(ChildSpec::new("sleep").arg("30")).unwrap();
        let pid = b.spawn_one().unwrap();
        b.wait_ready(Duration::from_secs(10)).unwrap();
        b.release();
        assert_eq!(after_exec(pid), (vec![0, 1, 2], 0, 0), "a batch child");
        // SAFETY: undoing the test's signal changes.
        unsafe {
            libc::signal(libc::SIGHUP, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGUSR1);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }

    #[test]
    fn a_child_dies_with_the_thread_that_forked_it() {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let c = Child::spawn(&ChildSpec::new("sleep").arg("30")).unwrap();
            // The thread ends without dropping the child, as if the harness were killed.
            tx.send(c.forget_keeping_journal()).unwrap();
        })
        .join()
        .unwrap();
        let (pid, journal) = rx.recv().unwrap();
        let t0 = std::time::Instant::now();
        // PDEATHSIG kills it; it stays a zombie (our child) until reaped.
        loop {
            match crate::procfs::stat(pid).map(|s| s.state) {
                Some('Z') | None => break,
                _ if t0.elapsed() > Duration::from_secs(10) => panic!("child {pid} outlived its parent thread"),
                _ => std::thread::sleep(Duration::from_millis(5)),
            }
        }
        crate::rusage::wait_pid(pid).unwrap();
        // Its group is gone: the entry is marked undone, nothing left for the next run to heal.
        drop(journal);
    }

    #[test]
    fn a_line_is_read_and_silence_times_out() {
        let mut says = Child::spawn(&ChildSpec::new("echo").arg("ready").stdout(Output::Pipe)).unwrap();
        let line = read_line_timeout(says.take_stdout().unwrap(), Duration::from_secs(10)).unwrap();
        assert_eq!(line.as_deref(), Some("ready\n"));
        let mut silent = Child::spawn(&ChildSpec::new("sleep").arg("30").stdout(Output::Pipe)).unwrap();
        let line = read_line_timeout(silent.take_stdout().unwrap(), Duration::from_millis(100)).unwrap();
        assert_eq!(line, None);
        silent.kill().unwrap();
        says.wait().unwrap();
    }

    #[test]
    fn a_piped_input_reaches_the_child_and_its_close_ends_it() {
        use std::io::Write;
        let spec = ChildSpec::new("cat").stdin(Input::Pipe).stdout(Output::Pipe);
        let mut c = Child::spawn(&spec).unwrap();
        let mut to_child = c.take_stdin().expect("piped stdin");
        let mut from_child = BufReader::new(c.take_stdout().unwrap());
        for request in ["run\n", "run again\n"] {
            to_child.write_all(request.as_bytes()).unwrap();
            let mut line = String::new();
            from_child.read_line(&mut line).unwrap();
            assert_eq!(line, request, "answered one request at a time");
        }
        drop(to_child);
        assert!(c.wait().unwrap().status.success(), "end of input ends cat");
        assert!(Batch::new(ChildSpec::new("cat").stdin(Input::Pipe)).is_err(), "nobody writes to a batch's inputs");
    }

    #[test]
    fn output_is_collected_and_its_tail_kept() {
        let mut c = Child::spawn(&ChildSpec::shell("echo first; echo last").stdout(Output::Pipe)).unwrap();
        let rx = collect_output(c.take_stdout().unwrap(), 5);
        assert!(c.wait().unwrap().status.success());
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), "last\n");
    }
}
