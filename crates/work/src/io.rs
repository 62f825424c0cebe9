//! Seed 001's rw.c: read `total` bytes from an input (default /dev/urandom) in blocks of
//! `block` bytes and write them to an output (default /dev/null) (IO-bound).

use std::io::{Read, Write};
use std::path::Path;

/// rw.c's 1 KiB block.
pub const DEFAULT_BLOCK: usize = 1024;
/// 11 MiB: calibrated on the host (a 2-core VM, Linux 6.18, HZ=250) so that one process spends
/// about 37 ms in the kernel — the seed's 34–41 ms of system time per io process. Measured with
/// rusage over 40–60 runs of `schedlab-work io --bytes N`: 3.2–3.7 ms of system time per MiB
/// read from /dev/urandom and written to /dev/null in 1 KiB blocks (8 MiB: 26 ms, 10 MiB:
/// 32 ms, 11 MiB: 39 ms, 12 MiB: 38–44 ms, on a loaded machine). rw.c's own 100 KiB takes
/// ≈0.2 ms here: today's /dev/urandom (ChaCha20) is far faster than the seed's kernel's.
pub const DEFAULT_TOTAL: u64 = 11 * 1024 * 1024;

/// Copy `total` bytes from `input` to `output` in `block`-byte reads; returns bytes copied.
pub fn read_write(input: &Path, output: &Path, block: usize, total: u64) -> std::io::Result<u64> {
    let mut src = std::fs::File::open(input)?;
    let mut dst = std::fs::OpenOptions::new().write(true).open(output)?;
    let mut buf = vec![0u8; block.max(1)];
    let mut done = 0u64;
    while done < total {
        let want = buf.len().min((total - done) as usize);
        let n = src.read(&mut buf[..want])?;
        if n == 0 {
            break;
        }
        dst.write_all(&buf[..n])?;
        done += n as u64;
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    #[test]
    fn copies_requested_bytes() {
        let n = super::read_write("/dev/urandom".as_ref(), "/dev/null".as_ref(), 100, 1000).unwrap();
        assert_eq!(n, 1000);
    }
}
