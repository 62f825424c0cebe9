//! A wake-up-heavy pair: two threads (`ping` and `pong`) pass one byte back and forth over two
//! pipes, each doing a little CPU work per message. Every message is a wake-up of the other
//! thread, so the pair measures how fast the scheduler lets a woken task run.
//!
//! Pipes, not a socket pair: a pipe's readers and writers wait on separate queues, so a read
//! wakes nobody but a blocked writer. A Unix stream socket's read frees send-buffer space and
//! wakes the peer's blocked *reader* too (one wait queue for both directions) — a spurious
//! wake-up per message that would make the pair something other than a clean ping-pong.

use super::bursts::spin_cpu;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

/// Exchange messages for `duration` (or until `stop()`), `work_ns` of CPU per message on each
/// side; returns the round trips done. `split`: pin ping (the calling thread) and pong to these
/// two CPUs, so every message crosses CPUs.
pub fn run(
    duration: Duration,
    work_ns: u64,
    split: Option<(usize, usize)>,
    stop: impl Fn() -> bool + Sync,
) -> std::io::Result<u64> {
    let (mut from_ping, mut to_pong) = std::io::pipe()?;
    let (mut from_pong, mut to_ping) = std::io::pipe()?;
    let end = Instant::now() + duration;
    if let Some((ping_cpu, _)) = split {
        schedlab_os::affinity::set_affinity(0, &[ping_cpu]).map_err(std::io::Error::other)?;
    }
    let pong = std::thread::Builder::new().name("pong".into()).spawn(move || -> std::io::Result<()> {
        if let Some((_, pong_cpu)) = split {
            schedlab_os::affinity::set_affinity(0, &[pong_cpu]).map_err(std::io::Error::other)?;
        }
        let mut byte = [0u8; 1];
        loop {
            if from_ping.read(&mut byte)? == 0 || byte[0] == 0 {
                return Ok(());
            }
            spin_cpu(work_ns);
            to_ping.write_all(&byte)?;
        }
    })?;
    let mut rounds = 0;
    let mut byte = [1u8; 1];
    while Instant::now() < end && !stop() {
        spin_cpu(work_ns);
        to_pong.write_all(&[1])?;
        from_pong.read_exact(&mut byte)?;
        rounds += 1;
    }
    to_pong.write_all(&[0])?;
    pong.join().map_err(|_| std::io::Error::other("the pong thread panicked"))??;
    Ok(rounds)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_pair_exchanges_and_stops() {
        let n = super::run(std::time::Duration::from_millis(50), 10_000, None, || false).unwrap();
        assert!(n > 10, "only {n} round trips in 50 ms");
    }
}
