//! The devices role (the seed's `device.py`): one sender thread per device, each with its own
//! socket, sending to `kernel_port + i` on 127.0.0.1 at the times its arrival process gives,
//! for `maxtime`, then an end marker.

use super::packet::{self, Header};
use super::params::LiveParams;
use super::{favour_thread, stopping};
use anyhow::Result;
use schedlab_os::clock::{monotonic_ns, sleep_until_ns, thread_cpu_ns};
use schedlab_os::udp as net;
use serde::Serialize;
use std::net::{SocketAddrV4, UdpSocket};
use std::sync::atomic::AtomicBool;

/// A sender this late sends its missed packets back to back; later than this it skips them.
const MAX_CATCH_UP_NS: u64 = 10_000_000;

/// What the devices did.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceReport {
    pub sent: Vec<u64>,
    pub send_errors: u64,
    /// CLOCK_MONOTONIC when sending started and ended, ns.
    pub start_ns: u64,
    pub end_ns: u64,
    pub cpu_s: f64,
}

impl DeviceReport {
    pub fn total_sent(&self) -> u64 {
        self.sent.iter().sum()
    }
    pub fn send_s(&self) -> f64 {
        (self.end_ns - self.start_ns) as f64 / 1e9
    }
}

/// Bind one ephemeral 127.0.0.1 socket per device.
pub fn bind_devices(dev: usize) -> Result<Vec<UdpSocket>> {
    Ok((0..dev).map(|_| net::bind(0, "devices")).collect::<Result<_, _>>()?)
}

/// Send from every device for `p.maxtime`, on `cpus`, then send end markers.
pub fn run(p: &LiveParams, socks: &[UdpSocket], cpus: &[usize], stop: &AtomicBool) -> Result<DeviceReport> {
    let start_ns = monotonic_ns() + 2_000_000;
    let end_ns = start_ns + p.maxtime.as_nanos() as u64;
    let results: Vec<Result<(u64, u64, u64)>> = std::thread::scope(|s| {
        let handles: Vec<_> = socks
            .iter()
            .enumerate()
            .map(|(i, sock)| s.spawn(move || send_loop(p, i, sock, cpus, start_ns, end_ns, stop)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| anyhow::bail!("a device thread panicked"))).collect()
    });
    let mut rep = DeviceReport { sent: vec![], send_errors: 0, start_ns, end_ns, cpu_s: 0.0 };
    for r in results {
        let (sent, errors, cpu) = r?;
        rep.sent.push(sent);
        rep.send_errors += errors;
        rep.cpu_s += cpu as f64 / 1e9;
    }
    rep.end_ns = rep.end_ns.min(monotonic_ns());
    Ok(rep)
}

fn send_loop(
    p: &LiveParams,
    i: usize,
    sock: &UdpSocket,
    cpus: &[usize],
    start_ns: u64,
    end_ns: u64,
    stop: &AtomicBool,
) -> Result<(u64, u64, u64)> {
    schedlab_os::affinity::set_affinity(0, cpus)?;
    let _nice = favour_thread();
    let cpu0 = thread_cpu_ns();
    let mut arrival = p.arrival.build(p.seed, i)?;
    let to = SocketAddrV4::new(net::LOOPBACK, p.ports.kernel(i));
    let mut buf = vec![0u8; p.payload];
    let (mut seq, mut errors) = (0u64, 0u64);
    sleep_until_ns(start_ns)?;
    // A sender that fell far behind (pre-empted) shifts its schedule instead of bursting to
    // catch up, like the seed's sleep-after-send; the offered rate is what was really sent.
    let mut shift = 0u64;
    loop {
        let at = start_ns + shift + (arrival.next_send_s() * 1e9) as u64;
        let late = monotonic_ns().saturating_sub(at);
        if late > MAX_CATCH_UP_NS {
            shift += late;
        }
        let at = at + if late > MAX_CATCH_UP_NS { late } else { 0 };
        if at >= end_ns {
            sleep_until_ns(end_ns)?;
            break;
        }
        // Sleep only for gaps worth a timer; a send due within 30 µs goes now. The schedule is
        // absolute, so the mean rate is kept without spinning on a shared CPU.
        if at > monotonic_ns() + 30_000 {
            sleep_until_ns(at)?;
        }
        if seq % 64 == 0 && stopping(stop) {
            break;
        }
        let sent_ns = monotonic_ns();
        if sent_ns >= end_ns {
            break;
        }
        packet::encode(&mut buf, Header { dev: i as u32, seq, sent_ns });
        match sock.send_to(&buf, to) {
            Ok(_) => seq += 1,
            Err(_) => errors += 1,
        }
        if p.print {
            eprintln!("device {i}: sent #{seq} at {:.6} s", (sent_ns - start_ns) as f64 / 1e9);
        }
    }
    // End markers (best effort: an overloaded kernel may drop them; every role also has a deadline).
    packet::encode(&mut buf, Header { dev: packet::END, seq: i as u64, sent_ns: monotonic_ns() });
    for _ in 0..3 {
        let _ = sock.send_to(&buf, to);
    }
    Ok((seq, errors, thread_cpu_ns() - cpu0))
}
