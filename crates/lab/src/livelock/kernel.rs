//! The kernel role (the seed's `kernel.py`), built so the livelock mechanism is really present:
//! two SCHED_FIFO threads pinned to one CPU drive one [`RxStrategy`] object.
//!
//! - the **interrupt thread** (higher priority) sleeps in poll(2) on the device sockets while
//!   the strategy has interrupts enabled; every packet it takes is one "interrupt": busy work
//!   `irq_ns`, then what the strategy says — receive the packet into the bounded buffer, or
//!   only wake the kernel thread and stay masked (NAPI);
//! - the **kernel thread** (lower priority, the softirq/polling thread) runs the strategy's
//!   jobs: deliver from the buffer, or poll a device socket for up to a quota of packets, each
//!   processed to completion (busy work `proto_ns` + `deliver_ns`, then sendto the app).
//!
//! Because the interrupt thread pre-empts the kernel thread, enough arrivals leave the kernel
//! thread no CPU at all: the buffer stays full and deliveries stop — receive livelock.
//!
//! With [`KernelThreads::Equal`] the role is built as the seed's `kernel.py` was: one receiving
//! thread per device beside the delivery thread, all at the same SCHED_OTHER priority, so the
//! OS time-shares them and a flood takes the delivery thread's share only in proportion to the
//! receiving threads' number.

use super::packet;
use super::params::{BusyCosts, KernelThreads, LiveParams};
use super::stopping;
use anyhow::{Context, Result};
use schedlab_netrx::strategy::{self, IrqAction, Job, JobOutcome, RxStrategy, RxView};
use schedlab_os::clock::{monotonic_ns, spin_until_ns, thread_cpu_ns};
use schedlab_os::sched::{LinuxPolicy, SchedGuard, SchedParams};
use schedlab_os::udp as net;
use serde::Serialize;
use std::collections::VecDeque;
use std::net::{SocketAddrV4, UdpSocket};
use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// SO_RCVBUF of each device socket of the kernel role (≈2,500 small packets).
pub const KERNEL_RCVBUF: usize = 2 << 20;

/// The packets such a socket holds: the kernel doubles SO_RCVBUF and charges ≈832 bytes of
/// truesize per small loopback datagram (measured: 5,041 packets of 32 bytes). The
/// `this-machine` model uses it as the device ring.
pub const KERNEL_RING_PKTS: usize = KERNEL_RCVBUF * 2 / 832;

/// The kernel role's sockets, bound before anything starts.
pub struct KernelSockets {
    /// One per device, on `kernel_port + i`.
    pub devs: Vec<UdpSocket>,
    /// The socket deliveries leave from.
    pub out: UdpSocket,
}

impl KernelSockets {
    /// Bind `kernel_port .. kernel_port + dev` (a taken port is named).
    pub fn bind(p: &LiveParams) -> Result<Self> {
        let mut devs = Vec::new();
        for i in 0..p.dev {
            let s = net::bind(p.ports.kernel(i), "kernel")?;
            s.set_nonblocking(true)?;
            net::enable_rxq_ovfl(&s)?;
            if p.threads == KernelThreads::Priorities {
                // A deep "receive ring": a sender paused by an unrelated task must not let the
                // interrupt thread run dry, or delivery gets CPU it would not get under real load.
                net::set_rcvbuf(&s, KERNEL_RCVBUF)?;
            }
            devs.push(s);
        }
        // Deliveries never block: a full app socket (or send buffer) drops, as in a kernel.
        let out = net::bind(0, "kernel")?;
        out.set_nonblocking(true)?;
        net::set_sndbuf(&out, p.app_rcvbuf)?;
        Ok(KernelSockets { devs, out })
    }
}

/// What the kernel role counted.
#[derive(Debug, Clone, Default, Serialize)]
pub struct KernelReport {
    pub cpu: usize,
    pub interrupts: u64,
    /// Packets the interrupt thread put in the buffer, and those it dropped there (buffer full).
    pub enqueued: u64,
    pub buffer_drops: u64,
    pub buffer_fills: u64,
    pub switches: u64,
    pub delivered: u64,
    pub delivered_from_buffer: u64,
    pub polled: u64,
    /// Deliveries that failed because the send would have blocked (dropped).
    pub deliver_failed: u64,
    /// Packets still in the buffer at the end.
    pub left_in_buffer: u64,
    /// Sum over device sockets of the last SO_RXQ_OVFL counter seen.
    pub rxq_ovfl: u64,
    pub end_markers: u64,
    pub irq_cpu_s: f64,
    pub kthread_cpu_s: f64,
}

struct KState {
    strat: Box<dyn RxStrategy>,
    buffer: VecDeque<(usize, Vec<u8>)>,
    cap: usize,
    t0: u64,
    app_queue: usize,
    app_queue_cap: usize,
    kick: bool,
    kt_sleeping: bool,
    r: KernelReport,
}

impl KState {
    fn view(&self, devices: usize) -> RxView {
        RxView {
            now_ns: monotonic_ns().saturating_sub(self.t0),
            buffer_len: self.buffer.len(),
            buffer_cap: self.cap,
            app_queue: self.app_queue,
            app_queue_cap: self.app_queue_cap,
            devices,
        }
    }
}

struct Bell {
    tx: UnixDatagram,
    rx: UnixDatagram,
}

impl Bell {
    fn new() -> Result<Self> {
        let (tx, rx) = UnixDatagram::pair().context("creating a wake-up socket pair")?;
        tx.set_nonblocking(true)?;
        rx.set_nonblocking(true)?;
        Ok(Bell { tx, rx })
    }
    fn ring(&self) {
        let _ = self.tx.send(&[1]);
    }
    /// Sleep until rung or `timeout` passes, then drain.
    fn wait(&self, timeout: Duration) {
        let _ = net::wait_readable(&[&self.rx], timeout);
        self.drain();
    }
    fn drain(&self) {
        let mut b = [0u8; 16];
        while self.rx.recv(&mut b).is_ok() {}
    }
}

struct Shared<'a> {
    p: &'a LiveParams,
    socks: &'a KernelSockets,
    apps: Vec<SocketAddrV4>,
    st: Mutex<KState>,
    /// One per interrupt thread.
    irq_bells: Vec<Bell>,
    kt_bell: Bell,
    ovfl: Vec<AtomicU32>,
    deadline_ns: u64,
    stop: &'a AtomicBool,
    done: AtomicBool,
    /// Devices whose end marker arrived (bit i = device i), and when the last one did.
    ended: AtomicU64,
    all_ended_at: AtomicU64,
}

impl Shared<'_> {
    fn lock(&self) -> MutexGuard<'_, KState> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn over(&self) -> bool {
        let now = monotonic_ns();
        let ended_at = self.all_ended_at.load(Ordering::Relaxed);
        self.done.load(Ordering::Relaxed)
            || stopping(self.stop)
            || now >= self.deadline_ns
            || (ended_at > 0 && now >= ended_at + self.p.lag.as_nanos() as u64)
    }
    /// An end marker from device `dev` (carried in the sequence field).
    fn note_end(&self, st: &mut KState, dev: u64) {
        st.r.end_markers += 1;
        if dev < 64 {
            let all = if self.p.dev >= 64 { u64::MAX } else { (1u64 << self.p.dev) - 1 };
            let now = self.ended.fetch_or(1 << dev, Ordering::Relaxed) | (1 << dev);
            if now & all == all {
                let _ = self.all_ended_at.compare_exchange(0, monotonic_ns(), Ordering::Relaxed, Ordering::Relaxed);
            }
        }
    }
    fn costs(&self) -> BusyCosts {
        self.p.costs
    }
    fn note_drops(&self, dev: usize, drops: Option<u32>) {
        if let Some(n) = drops {
            self.ovfl[dev].fetch_max(n, Ordering::Relaxed);
        }
    }
    /// Send a processed packet to its application; false when the send would have blocked.
    fn deliver(&self, dev: usize, bytes: &[u8]) -> bool {
        self.socks.out.send_to(bytes, self.apps[dev]).is_ok()
    }
    /// Wake every interrupt thread.
    fn ring_irqs(&self) {
        self.irq_bells.iter().for_each(Bell::ring);
    }
    /// Wake the kernel thread (called with the state locked by the interrupt thread).
    fn kick(&self, st: &mut KState) {
        st.kick = true;
        if st.kt_sleeping {
            self.kt_bell.ring();
        }
    }
}

fn busy(ns: u64) {
    if ns > 0 {
        spin_until_ns(monotonic_ns() + ns);
    }
}

/// Run the kernel role on `cpu` until `deadline_ns`, `stop`, or every device's end marker.
pub fn run(
    p: &LiveParams,
    socks: &KernelSockets,
    cpu: usize,
    deadline_ns: u64,
    stop: &AtomicBool,
) -> Result<KernelReport> {
    let strat = strategy::build(p.strategy, &p.kernel, p.dev)?;
    // The devices each interrupt thread receives from, and the threads' SCHED_FIFO priorities.
    let (irq_devices, irq_prio, kt_prio): (Vec<Vec<usize>>, _, _) = match p.threads {
        KernelThreads::Priorities => (vec![(0..p.dev).collect()], Some(p.irq_prio), Some(p.softirq_prio)),
        KernelThreads::Equal => ((0..p.dev).map(|d| vec![d]).collect(), None, None),
    };
    let sh = Shared {
        p,
        socks,
        apps: (0..p.dev).map(|i| SocketAddrV4::new(net::LOOPBACK, p.ports.app(i))).collect(),
        st: Mutex::new(KState {
            strat,
            buffer: VecDeque::with_capacity(p.kernel.sz),
            cap: p.kernel.sz,
            t0: monotonic_ns(),
            app_queue: 0,
            app_queue_cap: 0,
            kick: false,
            kt_sleeping: false,
            r: KernelReport { cpu, ..Default::default() },
        }),
        irq_bells: irq_devices.iter().map(|_| Bell::new()).collect::<Result<_>>()?,
        kt_bell: Bell::new()?,
        ovfl: (0..p.dev).map(|_| AtomicU32::new(0)).collect(),
        deadline_ns,
        stop,
        done: AtomicBool::new(false),
        ended: AtomicU64::new(0),
        all_ended_at: AtomicU64::new(0),
    };
    let (irqs, kt) = std::thread::scope(|s| {
        let sh = &sh;
        let irqs: Vec<_> = irq_devices
            .iter()
            .zip(&sh.irq_bells)
            .map(|(devices, bell)| {
                s.spawn(move || {
                    let r = kernel_thread(cpu, irq_prio, || irq_loop(sh, devices, bell));
                    sh.done.store(true, Ordering::Relaxed);
                    sh.ring_irqs();
                    r
                })
            })
            .collect();
        let kt = s.spawn(move || {
            let r = kernel_thread(cpu, kt_prio, || kthread_loop(sh));
            sh.done.store(true, Ordering::Relaxed);
            sh.ring_irqs();
            r
        });
        (irqs.into_iter().map(|h| h.join()).collect::<Vec<_>>(), kt.join())
    });
    let mut irq_ns = 0;
    for irq in irqs {
        irq_ns += irq.map_err(|_| anyhow::anyhow!("an interrupt thread panicked"))??;
    }
    let kt_ns = kt.map_err(|_| anyhow::anyhow!("the kernel thread panicked"))??;
    // Tell the apps the kernel is done (best effort; they have their own deadline).
    let mut end = vec![0u8; p.payload];
    packet::encode(&mut end, packet::Header { dev: packet::END, seq: 0, sent_ns: monotonic_ns() });
    for a in &sh.apps {
        let _ = socks.out.send_to(&end, a);
    }
    let st = sh.st.into_inner().unwrap_or_else(|e| e.into_inner());
    let mut r = st.r;
    r.switches = st.strat.switches();
    r.left_in_buffer = st.buffer.len() as u64;
    r.rxq_ovfl = sh.ovfl.iter().map(|a| a.load(Ordering::Relaxed) as u64).sum();
    r.irq_cpu_s = irq_ns as f64 / 1e9;
    r.kthread_cpu_s = kt_ns as f64 / 1e9;
    Ok(r)
}

/// Pin the calling thread to `cpu`, make it SCHED_FIFO at `fifo_prio` or else SCHED_OTHER at
/// nice 0 (restored on return), run `body` and return the thread's CPU time in ns.
fn kernel_thread(cpu: usize, fifo_prio: Option<i32>, body: impl FnOnce() -> Result<()>) -> Result<u64> {
    schedlab_os::affinity::set_affinity(0, &[cpu])?;
    let params = match fifo_prio {
        Some(prio) => SchedParams { reset_on_fork: true, ..SchedParams::new(LinuxPolicy::Fifo, prio) },
        None => SchedParams::other_nice(0),
    };
    let _guard = SchedGuard::apply(0, &params)?;
    let c0 = thread_cpu_ns();
    body()?;
    Ok(thread_cpu_ns() - c0)
}

/// An interrupt thread: takes the packets of `devices`, woken through `bell`.
fn irq_loop(sh: &Shared, devices: &[usize], bell: &Bell) -> Result<()> {
    let n = sh.p.dev;
    let mut buf = vec![0u8; 2048];
    while !sh.over() {
        if !sh.lock().strat.interrupts_enabled() {
            bell.wait(Duration::from_millis(10));
            continue;
        }
        // Wait for an "interrupt": a device socket with a packet.
        let mut fds: Vec<std::os::fd::BorrowedFd> =
            devices.iter().map(|&d| std::os::fd::AsFd::as_fd(&sh.socks.devs[d])).collect();
        fds.push(std::os::fd::AsFd::as_fd(&bell.rx));
        let readable = net::wait_readable(&fds, Duration::from_millis(10)).context("poll on the device sockets")?;
        let ready: Vec<usize> = devices.iter().zip(&readable).filter(|(_, &r)| r).map(|(&d, _)| d).collect();
        bell.drain();
        'devices: for d in ready {
            let mut first = true;
            loop {
                if sh.over() {
                    return Ok(());
                }
                // poll(2) said the first packet is there; later ones are found by receiving.
                let got = if first {
                    None
                } else {
                    match net::recv(&sh.socks.devs[d], &mut buf)? {
                        Some(g) => Some(g),
                        None => break,
                    }
                };
                let action = {
                    let mut st = sh.lock();
                    if !st.strat.interrupts_enabled() && got.is_none() {
                        break 'devices;
                    }
                    st.r.interrupts += 1;
                    let v = st.view(n);
                    st.strat.on_interrupt(d, &v)
                };
                busy(sh.costs().irq_ns);
                let got = match (action, got) {
                    (IrqAction::SchedulePoll, None) => {
                        let mut st = sh.lock();
                        sh.kick(&mut st);
                        break 'devices;
                    }
                    (_, Some(g)) => Some(g),
                    (IrqAction::Enqueue, None) => net::recv(&sh.socks.devs[d], &mut buf)?,
                };
                first = false;
                let Some(g) = got else { break };
                sh.note_drops(d, g.drops);
                let mut st = sh.lock();
                if let Some(h) = packet::decode(&buf[..g.len]).filter(|h| h.dev == packet::END) {
                    sh.note_end(&mut st, h.seq);
                    continue;
                }
                if st.buffer.len() < st.cap {
                    st.buffer.push_back((d, buf[..g.len].to_vec()));
                    st.r.enqueued += 1;
                    if st.buffer.len() == st.cap {
                        st.r.buffer_fills += 1;
                    }
                } else {
                    st.r.buffer_drops += 1;
                }
                let v = st.view(n);
                st.strat.after_enqueue(&v);
                sh.kick(&mut st);
                if !st.strat.interrupts_enabled() {
                    break 'devices;
                }
            }
        }
    }
    Ok(())
}

fn kthread_loop(sh: &Shared) -> Result<()> {
    let n = sh.p.dev;
    let c = sh.costs();
    let mut buf = vec![0u8; 2048];
    let feedback = sh.p.strategy == strategy::StrategyKind::Napi;
    let app_ports: Vec<u16> = (0..n).map(|i| sh.p.ports.app(i)).collect();
    let mut last_fb = 0u64;
    while !sh.over() {
        if feedback && monotonic_ns() > last_fb + 2_000_000 {
            // The application queues, for NAPI's feedback: the fullest app socket.
            last_fb = monotonic_ns();
            let q = net::udp_sock_stats(&app_ports).iter().map(|s| s.rx_queue).max().unwrap_or(0);
            let mut st = sh.lock();
            st.app_queue = q as usize;
            st.app_queue_cap = 2 * sh.p.app_rcvbuf;
        }
        let job = {
            let mut st = sh.lock();
            st.kick = false;
            let v = st.view(n);
            st.strat.next_job(&v)
        };
        let outcome = match job {
            Job::Deliver => {
                let pkt = sh.lock().buffer.pop_front();
                match pkt {
                    Some((d, bytes)) => {
                        busy(c.proto_ns + c.deliver_ns);
                        let ok = sh.deliver(d, &bytes);
                        let mut st = sh.lock();
                        st.r.delivered_from_buffer += 1;
                        st.r.deliver_failed += u64::from(!ok);
                        JobOutcome { found: 1, pending: false }
                    }
                    None => JobOutcome::default(),
                }
            }
            Job::Poll { dev, quota } => {
                let mut found = 0;
                while found < quota && !sh.over() {
                    let Some(g) = net::recv(&sh.socks.devs[dev], &mut buf)? else { break };
                    sh.note_drops(dev, g.drops);
                    if let Some(h) = packet::decode(&buf[..g.len]).filter(|h| h.dev == packet::END) {
                        sh.note_end(&mut sh.lock(), h.seq);
                        continue;
                    }
                    busy(c.proto_ns + c.deliver_ns);
                    if !sh.deliver(dev, &buf[..g.len]) {
                        sh.lock().r.deliver_failed += 1;
                    }
                    found += 1;
                }
                sh.lock().r.polled += found as u64;
                JobOutcome { found, pending: found == quota }
            }
            Job::Transmit { .. } => JobOutcome::default(),
            Job::Idle { timer_ns } => {
                {
                    let mut st = sh.lock();
                    if st.kick {
                        continue;
                    }
                    st.kt_sleeping = true;
                }
                let t = timer_ns.map_or(Duration::from_millis(10), Duration::from_nanos).min(Duration::from_millis(10));
                sh.kt_bell.wait(t);
                sh.lock().kt_sleeping = false;
                continue;
            }
        };
        let mut st = sh.lock();
        st.r.delivered += outcome.found as u64;
        let before = st.strat.interrupts_enabled();
        let v = st.view(n);
        st.strat.job_done(job, outcome, &v);
        if !before && st.strat.interrupts_enabled() {
            sh.ring_irqs();
        }
    }
    Ok(())
}
