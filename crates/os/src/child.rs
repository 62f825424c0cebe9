//! Bounded waits on `std::process` children, so that no harness step waits forever on a child
//! that hangs: wait for its exit, or for one line of its output, at most a given time.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, ExitStatus};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Wait for `child` to exit, at most `timeout`. `Ok(None)` = still running; the caller decides
/// (usually: kill it and say so).
pub fn wait_timeout(child: &mut Child, timeout: Duration) -> std::io::Result<Option<ExitStatus>> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    #[test]
    fn a_quick_child_is_waited_for_and_a_hanging_one_is_not() {
        let mut quick = Command::new("true").spawn().unwrap();
        assert!(wait_timeout(&mut quick, Duration::from_secs(10)).unwrap().unwrap().success());
        let mut slow = Command::new("sleep").arg("30").spawn().unwrap();
        let t0 = Instant::now();
        assert!(wait_timeout(&mut slow, Duration::from_millis(100)).unwrap().is_none());
        assert!(t0.elapsed() < Duration::from_secs(5));
        slow.kill().unwrap();
        slow.wait().unwrap();
    }

    #[test]
    fn a_line_is_read_and_silence_times_out() {
        let mut says = Command::new("echo").arg("ready").stdout(Stdio::piped()).spawn().unwrap();
        let line = read_line_timeout(says.stdout.take().unwrap(), Duration::from_secs(10)).unwrap();
        assert_eq!(line.as_deref(), Some("ready\n"));
        says.wait().unwrap();
        let mut silent = Command::new("sleep").arg("30").stdout(Stdio::piped()).spawn().unwrap();
        let line = read_line_timeout(silent.stdout.take().unwrap(), Duration::from_millis(100)).unwrap();
        assert_eq!(line, None);
        silent.kill().unwrap();
        silent.wait().unwrap();
    }
}
