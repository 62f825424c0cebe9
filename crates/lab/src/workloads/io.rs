//! Seed 001's rw.c: read `total` bytes from an input (default /dev/urandom) in blocks of
//! `block` bytes and write them to an output (default /dev/null) (IO-bound).

use std::io::{Read, Write};
use std::path::Path;

/// rw.c's defaults: a 1 KiB block and 100 KiB transferred.
pub const DEFAULT_BLOCK: usize = 1024;
pub const DEFAULT_TOTAL: u64 = 1024 * 100;

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
