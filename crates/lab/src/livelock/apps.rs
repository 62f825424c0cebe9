//! The apps role (the seed's `apps.py`): one receiver thread per device on `app_port + i`,
//! counting packets, timing each from its send stamp (HDR histogram) and noting socket drops.

use super::packet;
use super::params::LiveParams;
use super::{favour_thread, stopping};
use anyhow::Result;
use hdrhistogram::Histogram;
use schedlab_os::clock::{monotonic_ns, thread_cpu_ns};
use schedlab_os::udp as net;
use serde::Serialize;
use std::net::UdpSocket;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Bind `app_port .. app_port + dev` (a taken port is named).
pub fn bind_apps(p: &LiveParams) -> Result<Vec<UdpSocket>> {
    let mut v = Vec::new();
    for i in 0..p.dev {
        let s = net::bind(p.ports.app(i), "apps")?;
        net::set_rcvbuf(&s, p.app_rcvbuf)?;
        net::enable_rxq_ovfl(&s)?;
        s.set_read_timeout(Some(Duration::from_millis(20)))?;
        v.push(s);
    }
    Ok(v)
}

/// What the apps received.
#[derive(Debug, Clone, Serialize)]
pub struct AppsReport {
    pub received: Vec<u64>,
    /// Receive times, as packets per millisecond since `t0_ns`, to count deliveries inside
    /// the sending window.
    #[serde(skip)]
    pub per_ms: Vec<u64>,
    pub t0_ns: u64,
    #[serde(skip)]
    pub latency_ns: Histogram<u64>,
    pub rxq_ovfl: u64,
    pub end_markers: u64,
    pub cpu_s: f64,
}

impl AppsReport {
    pub fn total(&self) -> u64 {
        self.received.iter().sum()
    }

    /// Packets received before CLOCK_MONOTONIC `t_ns`.
    pub fn received_before(&self, t_ns: u64) -> u64 {
        let ms = (t_ns.saturating_sub(self.t0_ns) / 1_000_000) as usize;
        self.per_ms.iter().take(ms).sum()
    }

    /// p50, p99 and max latency in µs (zeros when nothing arrived).
    pub fn latency_us(&self) -> (f64, f64, f64) {
        if self.latency_ns.is_empty() {
            return (0.0, 0.0, 0.0);
        }
        let h = &self.latency_ns;
        (h.value_at_quantile(0.5) as f64 / 1e3, h.value_at_quantile(0.99) as f64 / 1e3, h.max() as f64 / 1e3)
    }
}

/// One app thread's counts.
struct Tally {
    n: u64,
    per_ms: Vec<u64>,
    hist: Histogram<u64>,
    drops: u32,
    ends: u64,
    cpu_ns: u64,
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 600_000_000_000, 3).expect("valid histogram bounds")
}

/// Receive on every app socket until `deadline_ns`, `stop`, or an end marker on each.
pub fn run(
    p: &LiveParams,
    socks: &[UdpSocket],
    cpus: &[usize],
    deadline_ns: u64,
    stop: &AtomicBool,
) -> Result<AppsReport> {
    let t0_ns = monotonic_ns();
    let slots = ((deadline_ns.saturating_sub(t0_ns)) / 1_000_000 + 2) as usize;
    let results: Vec<Result<Tally>> = std::thread::scope(|s| {
        let hs: Vec<_> = socks
            .iter()
            .enumerate()
            .map(|(i, sock)| {
                s.spawn(move || -> Result<_> {
                    schedlab_os::affinity::set_affinity(0, cpus)?;
                    let _nice = favour_thread();
                    let c0 = thread_cpu_ns();
                    let mut buf = vec![0u8; 2048];
                    let mut per_ms = vec![0u64; slots];
                    let mut hist = histogram();
                    let (mut n, mut drops, mut ends) = (0u64, 0u32, 0u64);
                    while monotonic_ns() < deadline_ns && !stopping(stop) {
                        let Some(g) = net::recv(sock, &mut buf)? else { continue };
                        let now = monotonic_ns();
                        if let Some(d) = g.drops {
                            drops = drops.max(d);
                        }
                        let Some(h) = packet::decode(&buf[..g.len]) else { continue };
                        if h.dev == packet::END {
                            ends += 1;
                            break;
                        }
                        n += 1;
                        let slot = ((now - t0_ns) / 1_000_000) as usize;
                        if let Some(c) = per_ms.get_mut(slot) {
                            *c += 1;
                        }
                        if p.eval_lat {
                            let _ = hist.record(now.saturating_sub(h.sent_ns).max(1));
                        }
                        if p.print {
                            eprintln!(
                                "app {i}: got #{} from device {} after {} us",
                                h.seq,
                                h.dev,
                                (now - h.sent_ns) / 1000
                            );
                        }
                    }
                    Ok(Tally { n, per_ms, hist, drops, ends, cpu_ns: thread_cpu_ns() - c0 })
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap_or_else(|_| anyhow::bail!("an app thread panicked"))).collect()
    });
    let mut rep = AppsReport {
        received: vec![],
        per_ms: vec![0; slots],
        t0_ns,
        latency_ns: histogram(),
        rxq_ovfl: 0,
        end_markers: 0,
        cpu_s: 0.0,
    };
    for r in results {
        let Tally { n, per_ms, hist, drops, ends, cpu_ns: cpu } = r?;
        rep.received.push(n);
        for (a, b) in rep.per_ms.iter_mut().zip(per_ms) {
            *a += b;
        }
        let _ = rep.latency_ns.add(&hist);
        rep.rxq_ovfl += drops as u64;
        rep.end_markers += ends;
        rep.cpu_s += cpu as f64 / 1e9;
    }
    Ok(rep)
}
