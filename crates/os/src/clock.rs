//! Clocks: CLOCK_MONOTONIC readings in nanoseconds and absolute-time sleeps
//! (`clock_nanosleep(TIMER_ABSTIME)`), which do not drift the way relative sleeps do.

use crate::{OsError, OsResult};

/// CLOCK_MONOTONIC now, in nanoseconds.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU time consumed by the calling thread, in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: as above.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleep until CLOCK_MONOTONIC reaches `deadline_ns`, resuming after signal interruptions.
pub fn sleep_until_ns(deadline_ns: u64) -> OsResult<()> {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    loop {
        // SAFETY: ts is valid; a null remainder is allowed with TIMER_ABSTIME.
        let rc =
            unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
        match rc {
            0 => return Ok(()),
            libc::EINTR => continue,
            e => return Err(OsError::from_io("clock_nanosleep", std::io::Error::from_raw_os_error(e))),
        }
    }
}

/// Busy-wait until CLOCK_MONOTONIC reaches `deadline_ns` (like the kernel's `mdelay`).
pub fn spin_until_ns(deadline_ns: u64) {
    while monotonic_ns() < deadline_ns {
        std::hint::spin_loop();
    }
}

/// The current clocksource (`/sys/devices/system/clocksource/clocksource0/current_clocksource`).
pub fn clocksource() -> Option<String> {
    std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        .ok()
        .map(|s| s.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_sleep_never_wakes_early() {
        let start = monotonic_ns();
        sleep_until_ns(start + 2_000_000).unwrap();
        assert!(monotonic_ns() >= start + 2_000_000);
        let s2 = monotonic_ns();
        spin_until_ns(s2 + 100_000);
        assert!(monotonic_ns() >= s2 + 100_000);
    }
}
