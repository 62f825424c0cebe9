//! Loopback UDP: binding 127.0.0.1 ports with a clear error when one is taken, socket buffer
//! sizes, receiving with the kernel's SO_RXQ_OVFL drop counter, the kernel's own counters
//! (`/proc/net/snmp` UDP RcvbufErrors; per-socket queue and drops from `/proc/net/udp`), and
//! waiting until one of several sockets is readable (poll(2)).

use crate::{OsError, OsResult};
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::socket::{recvmsg, setsockopt, sockopt, ControlMessageOwned, MsgFlags, SockaddrStorage};
use std::io::IoSliceMut;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::os::fd::{AsFd, AsRawFd};
use std::time::Duration;

/// The only address anything binds or sends to.
pub const LOOPBACK: Ipv4Addr = Ipv4Addr::LOCALHOST;

/// Bind `127.0.0.1:port` (0 = any free port); a taken port is named in the error, with
/// `who` (the role that needs it) and the flags that choose other ports.
pub fn bind(port: u16, who: &str) -> OsResult<UdpSocket> {
    match UdpSocket::bind(SocketAddrV4::new(LOOPBACK, port)) {
        Ok(s) => Ok(s),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Err(OsError::unsupported(
            format!("port {port} on 127.0.0.1 (needed by the {who})"),
            "it is in use by another program or a previous run; pick other ports with --kernel-port/--app-port",
        )),
        Err(e) => Err(OsError::from_io(format!("binding 127.0.0.1:{port} for the {who}"), e)),
    }
}

fn sockerr(what: &str) -> impl Fn(nix::Error) -> OsError + '_ {
    move |e| OsError::from_io(what, std::io::Error::from(e))
}

/// Ask the kernel to report the socket's cumulative drop count with every datagram.
pub fn enable_rxq_ovfl(s: &UdpSocket) -> OsResult<()> {
    setsockopt(s, sockopt::RxqOvfl, &1).map_err(sockerr("enabling SO_RXQ_OVFL"))
}

/// Set SO_RCVBUF (the kernel doubles it); as root SO_RCVBUFFORCE passes rmem_max.
pub fn set_rcvbuf(s: &UdpSocket, bytes: usize) -> OsResult<()> {
    if crate::is_root() && setsockopt(s, sockopt::RcvBufForce, &bytes).is_ok() {
        return Ok(());
    }
    setsockopt(s, sockopt::RcvBuf, &bytes).map_err(sockerr("setting SO_RCVBUF"))
}

/// Set SO_SNDBUF (the kernel doubles it and may cap it at wmem_max).
pub fn set_sndbuf(s: &UdpSocket, bytes: usize) -> OsResult<()> {
    setsockopt(s, sockopt::SndBuf, &bytes).map_err(sockerr("setting SO_SNDBUF"))
}

/// Wait until one of `fds` is readable, at most `timeout`; returns which are (a signal or the
/// timeout returns all false).
pub fn wait_readable<F: AsFd>(fds: &[F], timeout: Duration) -> OsResult<Vec<bool>> {
    let mut pfds: Vec<PollFd> = fds.iter().map(|f| PollFd::new(f.as_fd(), PollFlags::POLLIN)).collect();
    let ms = PollTimeout::try_from(timeout.as_millis().min(i32::MAX as u128) as i32).unwrap_or(PollTimeout::MAX);
    match poll(&mut pfds, ms) {
        Ok(_) | Err(nix::errno::Errno::EINTR) => {}
        Err(e) => return Err(sockerr("poll on sockets")(e)),
    }
    Ok(pfds.iter().map(|p| p.revents().is_some_and(|r| r.contains(PollFlags::POLLIN))).collect())
}

/// One received datagram: its length and the socket's drop counter if the kernel sent one.
pub struct Received {
    pub len: usize,
    pub drops: Option<u32>,
}

/// Receive one datagram with its SO_RXQ_OVFL counter. `Ok(None)` when a non-blocking socket
/// is empty or a timeout/interrupt ended the wait.
pub fn recv(s: &UdpSocket, buf: &mut [u8]) -> OsResult<Option<Received>> {
    let mut cmsg = nix::cmsg_space!(u32);
    let mut iov = [IoSliceMut::new(buf)];
    match recvmsg::<SockaddrStorage>(s.as_raw_fd(), &mut iov, Some(&mut cmsg), MsgFlags::empty()) {
        Ok(msg) => {
            let mut drops = None;
            if let Ok(cmsgs) = msg.cmsgs() {
                for c in cmsgs {
                    if let ControlMessageOwned::RxqOvfl(n) = c {
                        drops = Some(n);
                    }
                }
            }
            Ok(Some(Received { len: msg.bytes, drops }))
        }
        Err(nix::errno::Errno::EAGAIN | nix::errno::Errno::EINTR) => Ok(None),
        Err(e) => Err(sockerr("receiving a datagram")(e)),
    }
}

/// UDP RcvbufErrors from `/proc/net/snmp` (system-wide).
pub fn snmp_rcvbuf_errors() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/net/snmp").ok()?;
    let mut lines = text.lines().filter(|l| l.starts_with("Udp:"));
    let names: Vec<&str> = lines.next()?.split_whitespace().collect();
    let values: Vec<&str> = lines.next()?.split_whitespace().collect();
    let i = names.iter().position(|n| *n == "RcvbufErrors")?;
    values.get(i)?.parse().ok()
}

/// A UDP socket's line of `/proc/net/udp`: receive queue bytes and drops.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UdpSockStat {
    pub rx_queue: u64,
    pub drops: u64,
}

/// `/proc/net/udp` entries for 127.0.0.1 sockets bound to `ports`, in that order (zeros for a
/// port without a socket).
pub fn udp_sock_stats(ports: &[u16]) -> Vec<UdpSockStat> {
    let text = std::fs::read_to_string("/proc/net/udp").unwrap_or_default();
    parse_udp_table(&text, ports)
}

fn parse_udp_table(text: &str, ports: &[u16]) -> Vec<UdpSockStat> {
    let mut out = vec![UdpSockStat::default(); ports.len()];
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 13 {
            continue;
        }
        let Some((addr, port)) = f[1].split_once(':') else { continue };
        // 127.0.0.1 in the kernel's little-endian hex.
        if addr != "0100007F" {
            continue;
        }
        let Ok(port) = u16::from_str_radix(port, 16) else { continue };
        if let Some(i) = ports.iter().position(|&p| p == port) {
            let rx = f[4].split_once(':').map(|(_, r)| u64::from_str_radix(r, 16).unwrap_or(0)).unwrap_or(0);
            out[i] = UdpSockStat { rx_queue: rx, drops: f[f.len() - 1].parse().unwrap_or(0) };
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_port_is_named() {
        let a = bind(0, "test").unwrap();
        let port = a.local_addr().unwrap().port();
        let e = bind(port, "kernel").unwrap_err().to_string();
        assert!(e.contains(&port.to_string()) && e.contains("in use") && e.contains("kernel"), "{e}");
    }

    /// Poll `/proc/net/udp` until `ok` holds and the line has stopped changing: loopback
    /// delivery runs in a softirq that a busy machine may defer to ksoftirqd, so a datagram
    /// sent is not always queued (or dropped) by the time `send_to` returns.
    fn settled_stats(port: u16, ok: impl Fn(UdpSockStat) -> bool) -> UdpSockStat {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut last = udp_sock_stats(&[port])[0];
        loop {
            std::thread::sleep(std::time::Duration::from_millis(20));
            let st = udp_sock_stats(&[port])[0];
            if (ok(st) && st == last) || std::time::Instant::now() > deadline {
                return st;
            }
            last = st;
        }
    }

    #[test]
    fn drop_counter_and_tables_are_read() {
        let r = bind(0, "test").unwrap();
        enable_rxq_ovfl(&r).unwrap();
        r.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
        let port = r.local_addr().unwrap().port();
        let s = bind(0, "test").unwrap();
        s.send_to(b"01234567890123456789", (LOOPBACK, port)).unwrap();
        let st = settled_stats(port, |st| st.rx_queue > 0);
        assert!(st.rx_queue > 0, "{st:?}");
        let mut buf = [0u8; 64];
        let got = recv(&r, &mut buf).unwrap().unwrap();
        assert_eq!(got.len, 20);
        // The kernel attaches the counter only once the socket has dropped something.
        assert_eq!(got.drops, None);
        setsockopt(&r, sockopt::RcvBuf, &1024).unwrap();
        for _ in 0..500 {
            s.send_to(b"01234567890123456789", (LOOPBACK, port)).unwrap();
        }
        // Let all 500 be queued or dropped before draining, so no late one is dropped after
        // the counter is compared.
        let st = settled_stats(port, |st| st.drops > 0 && st.rx_queue > 0);
        assert!(st.drops > 0, "a 1 KiB buffer took 500 datagrams: {st:?}");
        r.set_nonblocking(true).unwrap();
        while recv(&r, &mut buf).unwrap().is_some() {}
        r.set_nonblocking(false).unwrap();
        s.send_to(b"01234567890123456789", (LOOPBACK, port)).unwrap();
        let got = recv(&r, &mut buf).unwrap().unwrap();
        let dropped = udp_sock_stats(&[port])[0].drops;
        assert!(dropped > 0 && got.drops == Some(dropped as u32), "{:?} vs {dropped}", got.drops);
        assert!(snmp_rcvbuf_errors().is_some());
    }

    #[test]
    fn readiness_is_reported_per_socket() {
        let (a, b) = (bind(0, "test").unwrap(), bind(0, "test").unwrap());
        let s = bind(0, "test").unwrap();
        s.send_to(b"x", a.local_addr().unwrap()).unwrap();
        let t0 = std::time::Instant::now();
        let mut ready = vec![false, false];
        while !ready[0] && t0.elapsed() < Duration::from_secs(10) {
            ready = wait_readable(&[&a, &b], Duration::from_millis(100)).unwrap();
        }
        assert_eq!(ready, vec![true, false]);
        assert_eq!(wait_readable(&[&b], Duration::from_millis(10)).unwrap(), vec![false], "a timeout");
    }

    #[test]
    fn parses_proc_net_udp() {
        let t = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n\
                 1: 0100007F:B798 00000000:0000 07 00000000:00000300 00:00000000 00000000     0        0 1 2 0000 17\n";
        let s = parse_udp_table(t, &[0xB798, 1]);
        assert_eq!(s[0], UdpSockStat { rx_queue: 0x300, drops: 17 });
        assert_eq!(s[1], UdpSockStat::default());
    }
}
