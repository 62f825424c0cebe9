//! Seed 004's workload: hash a password over and over and count the iterations.
//! Each iteration is one salted SHA-256 of the password chained with the previous digest,
//! a stand-in for crypt(3) that needs no system library.

use sha2::{Digest, Sha256};

/// Hash until `iterations` are done or `stop()` returns true; returns the count done.
pub fn hash_loop(iterations: Option<u64>, stop: impl Fn() -> bool) -> u64 {
    let mut digest = [0u8; 32];
    let mut done = 0u64;
    while iterations.is_none_or(|n| done < n) {
        // Check the flag every 256 hashes: cheap, and still prompt (< 1 ms).
        if done.is_multiple_of(256) && stop() {
            break;
        }
        let mut h = Sha256::new();
        h.update(b"$5$schedlab$");
        h.update(b"correct horse battery staple");
        h.update(digest);
        digest = h.finalize().into();
        done += 1;
    }
    std::hint::black_box(digest);
    done
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_iterations_and_stops() {
        assert_eq!(super::hash_loop(Some(1000), || false), 1000);
        assert_eq!(super::hash_loop(None, || true), 0);
    }
}
