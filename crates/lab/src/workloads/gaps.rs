//! A CPU hog that notes when it was off its CPU: it spins on the vDSO's monotonic clock and
//! appends every gap between two reads longer than a threshold to a file, one `START END` line
//! (ns) each, as it happens — a hog ends by SIGKILL and keeps what it wrote. Run as an RT task,
//! its gaps are the moments RT throttling took the CPU away, on the clock schedlab's traces use
//! (`trace_clock` mono); `validate` reads them where the trace loses the switch back in.

use schedlab_os::clock::monotonic_ns;
use std::io::Write;
use std::path::Path;

/// Where gaps go: a file opened for appending.
pub struct Sink {
    file: std::fs::File,
    pub min_gap_ns: u64,
}

impl Sink {
    pub fn create(path: &Path, min_gap_ns: u64) -> std::io::Result<Sink> {
        let file = std::fs::OpenOptions::new().create(true).truncate(true).write(true).open(path)?;
        Ok(Sink { file, min_gap_ns })
    }

    fn note(&mut self, from: u64, to: u64) {
        // One write per gap, right after it: rare, and a failed write only loses the record.
        let _ = self.file.write_all(format!("{from} {to}\n").as_bytes());
    }
}

/// Spin until `stop()`, noting every gap longer than the sink's threshold.
pub fn spin(sink: &mut Sink, stop: impl Fn() -> bool) {
    let mut last = monotonic_ns();
    let mut reads = 0u32;
    loop {
        std::hint::spin_loop();
        let now = monotonic_ns();
        if now - last > sink.min_gap_ns {
            sink.note(last, now);
        }
        last = now;
        reads = reads.wrapping_add(1);
        if reads.is_multiple_of(4096) && stop() {
            return;
        }
    }
}

/// Read a file of gaps.
pub fn read(path: &Path) -> std::io::Result<Vec<(u64, u64)>> {
    let text = std::fs::read_to_string(path)?;
    text.lines()
        .map(|l| {
            let mut it = l.split_whitespace().map(str::parse::<u64>);
            match (it.next(), it.next()) {
                (Some(Ok(a)), Some(Ok(b))) => Ok((a, b)),
                _ => Err(std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not a gap line: {l:?}"))),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn gaps_are_appended_as_they_come_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gaps.txt");
        let mut sink = Sink::create(&path, 1_000_000_000).unwrap();
        // A spin without a gap of a second writes nothing.
        let polls = AtomicU32::new(0);
        spin(&mut sink, || polls.fetch_add(1, Ordering::Relaxed) > 100);
        assert!(read(&path).unwrap().is_empty());
        sink.note(5, 9);
        sink.note(100, 250);
        assert_eq!(read(&path).unwrap(), vec![(5, 9), (100, 250)]);
        std::fs::write(&path, "1 2\nx\n").unwrap();
        assert!(read(&path).is_err());
    }
}
