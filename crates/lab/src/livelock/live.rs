//! `schedlab livelock live`: the three roles in one process, started in the seed's order —
//! apps, then kernel, then devices — and the measurements of one run.

use super::apps::{self, AppsReport};
use super::device::{self, DeviceReport};
use super::kernel::{self, KernelReport, KernelSockets};
use super::params::LiveParams;
use super::{cpus, stopping};
use anyhow::Result;
use schedlab_os::clock::{monotonic_ns, sleep_until_ns};
use schedlab_os::udp as net;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Latency percentiles, µs.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct LatencyUs {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

/// CPU seconds of each role.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct RoleCpu {
    pub devices: f64,
    pub kernel: f64,
    pub kernel_irq: f64,
    pub kernel_thread: f64,
    pub apps: f64,
}

/// One live run, summarised.
#[derive(Debug, Clone, Serialize)]
pub struct LiveResult {
    pub strategy: String,
    pub wait_s: f64,
    pub send_s: f64,
    pub sent: u64,
    pub received: u64,
    pub offered_pps: f64,
    /// Deliveries while the devices were sending, per second of sending.
    pub delivered_pps: f64,
    pub lost: u64,
    /// Dropped at the kernel's full buffer.
    pub lost_buffer: u64,
    /// Dropped by the sockets (kernel device sockets and app sockets, from /proc/net/udp, plus
    /// deliveries refused because the kernel's send buffer was full).
    pub lost_socket: u64,
    pub lost_socket_kernel: u64,
    pub lost_socket_apps: u64,
    /// The SO_RXQ_OVFL counters seen in-band (kernel sockets, app sockets).
    pub rxq_ovfl_kernel: u64,
    pub rxq_ovfl_apps: u64,
    /// UDP RcvbufErrors growth in /proc/net/snmp during the run (whole machine).
    pub snmp_rcvbuf_errors: Option<u64>,
    pub buffer_fills: u64,
    pub switches: u64,
    pub interrupts: u64,
    pub latency_us: LatencyUs,
    pub cpu_s: RoleCpu,
    pub kernel: KernelReport,
}

/// Run devices → kernel → apps once with `p`.
pub fn run(p: &LiveParams) -> Result<LiveResult> {
    p.validate()?;
    cpus::preflight()?;
    let (kcpu, others) = cpus::choose(p.kernel_cpu)?;
    let _cpus = schedlab_os::cpulock::CpuLock::acquire(&[kcpu], "the livelock kernel role")?;
    // The controller (this thread) stays off the kernel role's CPU; restored on return.
    let _pin = schedlab_os::affinity::AffinityGuard::pin(0, &others)?;
    // Bind everything first, so a taken port stops the run before anything starts.
    let app_socks = apps::bind_apps(p)?;
    let ksocks = KernelSockets::bind(p)?;
    let dev_socks = device::bind_devices(p.dev)?;
    let kernel_ports: Vec<u16> = (0..p.dev).map(|i| p.ports.kernel(i)).collect();
    let app_ports: Vec<u16> = (0..p.dev).map(|i| p.ports.app(i)).collect();
    let snmp0 = net::snmp_rcvbuf_errors();
    let (stop_kernel, stop_apps, stop_devices) =
        (AtomicBool::new(false), AtomicBool::new(false), AtomicBool::new(false));
    let slack = Duration::from_secs(2);
    let deadline = monotonic_ns() + (p.maxtime + p.lag + slack).as_nanos() as u64;
    let (apps_r, kernel_r, dev_r) = std::thread::scope(|s| {
        let a = s.spawn(|| apps::run(p, &app_socks, &others, deadline + 1_000_000_000, &stop_apps));
        let k = s.spawn(|| kernel::run(p, &ksocks, kcpu, deadline, &stop_kernel));
        // Give the receivers a moment to be waiting before the first packet.
        std::thread::sleep(Duration::from_millis(30));
        let d = device::run(p, &dev_socks, &others, &stop_devices);
        let lag_end = monotonic_ns() + p.lag.as_nanos() as u64;
        while monotonic_ns() < lag_end && !stopping(&stop_kernel) {
            let _ = sleep_until_ns((monotonic_ns() + 10_000_000).min(lag_end));
        }
        stop_kernel.store(true, Ordering::SeqCst);
        let k = k.join();
        std::thread::sleep(Duration::from_millis(20));
        stop_apps.store(true, Ordering::SeqCst);
        (a.join(), k, d)
    });
    let kernel_r = kernel_r.map_err(|_| anyhow::anyhow!("the kernel role panicked"))??;
    let apps_r: AppsReport = apps_r.map_err(|_| anyhow::anyhow!("the apps role panicked"))??;
    let dev_r: DeviceReport = dev_r?;
    let snmp1 = net::snmp_rcvbuf_errors();
    let kstats = net::udp_sock_stats(&kernel_ports);
    let astats = net::udp_sock_stats(&app_ports);
    drop((app_socks, ksocks, dev_socks));
    Ok(summarise(p, &dev_r, kernel_r, &apps_r, kstats, astats, snmp0.zip(snmp1).map(|(a, b)| b.saturating_sub(a))))
}

fn summarise(
    p: &LiveParams,
    d: &DeviceReport,
    k: KernelReport,
    a: &AppsReport,
    kstats: Vec<net::UdpSockStat>,
    astats: Vec<net::UdpSockStat>,
    snmp: Option<u64>,
) -> LiveResult {
    let send_s = d.send_s().max(1e-9);
    let sent = d.total_sent();
    let received = a.total();
    let lost_socket_kernel: u64 = kstats.iter().map(|s| s.drops).sum();
    let lost_socket_apps: u64 = astats.iter().map(|s| s.drops).sum::<u64>() + k.deliver_failed;
    let (p50, p99, max) = a.latency_us();
    LiveResult {
        strategy: p.strategy.to_string(),
        wait_s: p.arrival.wait,
        send_s,
        sent,
        received,
        offered_pps: sent as f64 / send_s,
        delivered_pps: a.received_before(d.end_ns) as f64 / send_s,
        lost: sent.saturating_sub(received),
        lost_buffer: k.buffer_drops,
        lost_socket: lost_socket_kernel + lost_socket_apps,
        lost_socket_kernel,
        lost_socket_apps,
        rxq_ovfl_kernel: k.rxq_ovfl,
        rxq_ovfl_apps: a.rxq_ovfl,
        snmp_rcvbuf_errors: snmp,
        buffer_fills: k.buffer_fills,
        switches: k.switches,
        interrupts: k.interrupts,
        latency_us: LatencyUs { p50, p99, max },
        cpu_s: RoleCpu {
            devices: d.cpu_s,
            kernel: k.irq_cpu_s + k.kthread_cpu_s,
            kernel_irq: k.irq_cpu_s,
            kernel_thread: k.kthread_cpu_s,
            apps: a.cpu_s,
        },
        kernel: k,
    }
}
