//! The built-in workloads children exec, so every experiment runs a known program:
//! seed 001's calc_pi (cpu), rw (io) and rwpi (mixed) — kept in the std-only crate
//! `schedlab-work` (the `schedlab-work` binary) and re-exported here — seed 004's password
//! hashing (crypt), and for replaying simulator workloads live, CPU bursts and sleeps (bursts)
//! a wake-up-heavy pair (pingpong), and a hog that notes when it was off its CPU (gaps).

pub mod bursts;
pub mod crypt;
pub mod gaps;
pub mod pingpong;
pub use schedlab_work::{cpu, io, mixed};
