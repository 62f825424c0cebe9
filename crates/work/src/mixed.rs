//! Seed 001's rwpi.c: the Monte Carlo π loop, writing a buffer to the output every
//! `iterations / (total / block)` samples so CPU and IO interleave (mixed).

use crate::cpu::SplitMix64;
use std::io::Write;
use std::path::Path;

/// Run `iterations` samples and write `total` bytes in `block`-byte writes spread evenly over them.
pub fn pi_and_write(iterations: u64, output: &Path, block: usize, total: u64) -> std::io::Result<f64> {
    let mut dst = std::fs::OpenOptions::new().write(true).open(output)?;
    let writes = (total / block.max(1) as u64).max(1);
    let every = (iterations / writes).max(1);
    let buf = vec![b'p'; block.max(1)];
    let mut rng = SplitMix64::new(1);
    let mut inside = 0u64;
    for i in 0..iterations {
        let x = rng.next_f64();
        let y = rng.next_f64();
        if x * x + y * y <= 1.0 {
            inside += 1;
        }
        if i.is_multiple_of(every) {
            dst.write_all(&buf)?;
        }
    }
    Ok(4.0 * inside as f64 / iterations.max(1) as f64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn computes_and_writes() {
        let pi = super::pi_and_write(100_000, "/dev/null".as_ref(), 1024, 10 * 1024).unwrap();
        assert!((pi - std::f64::consts::PI).abs() < 0.05);
    }
}
