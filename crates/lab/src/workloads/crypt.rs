//! Seed 004's workload: hash a password over and over and count the iterations. The seed
//! called crypt(3); so does the default here, with a two-character salt, i.e. the traditional
//! DES method: its speed (about 220,000 hashes/s on one core of this VM) matches the seed's
//! counts (2,362,456 hashes in 30 s at about a third of a CPU). `Sha256` is a stand-in that
//! needs no system library: one salted SHA-256 of the password chained with the previous digest.

use schedlab_os::crypt::Crypt;
use sha2::{Digest, Sha256};

/// Which hash each iteration computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hash {
    /// crypt(3) from libcrypt.so.1 with the salt `sl` (traditional DES), as the seed.
    Crypt,
    /// One SHA-256 (no system library).
    Sha256,
}

/// The password every iteration hashes.
const PASSWORD: &std::ffi::CStr = c"correct horse battery staple";
/// Two characters: crypt(3)'s traditional DES method.
const DES_SALT: &std::ffi::CStr = c"sl";

/// Hash until `iterations` are done or `stop()` returns true; returns the count done.
pub fn hash_loop(hash: Hash, iterations: Option<u64>, stop: impl Fn() -> bool) -> Result<u64, String> {
    let mut crypt = match hash {
        Hash::Crypt => Some(Crypt::load()?),
        Hash::Sha256 => None,
    };
    let mut digest = [0u8; 32];
    let mut done = 0u64;
    while iterations.is_none_or(|n| done < n) {
        // Check the flag every 256 hashes: cheap, and still prompt (< 2 ms).
        if done.is_multiple_of(256) && stop() {
            break;
        }
        match crypt.as_mut() {
            Some(c) => {
                let out = c.hash(PASSWORD, DES_SALT)?;
                digest[0] ^= out.to_bytes()[2];
            }
            None => {
                let mut h = Sha256::new();
                h.update(b"$5$schedlab$");
                h.update(PASSWORD.to_bytes());
                h.update(digest);
                digest = h.finalize().into();
            }
        }
        done += 1;
    }
    std::hint::black_box(digest);
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_iterations_and_stops() {
        for hash in [Hash::Crypt, Hash::Sha256] {
            assert_eq!(hash_loop(hash, Some(1000), || false), Ok(1000), "{hash:?}");
            assert_eq!(hash_loop(hash, None, || true), Ok(0), "{hash:?}");
        }
    }
}
