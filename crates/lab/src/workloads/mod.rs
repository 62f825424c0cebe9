//! The built-in workloads children exec, so every experiment runs a known program:
//! seed 001's calc_pi (cpu), rw (io) and rwpi (mixed), seed 004's password hashing (crypt), and
//! for replaying simulator workloads live, CPU bursts and sleeps (bursts) and a wake-up-heavy
//! pair (pingpong).

pub mod bursts;
pub mod cpu;
pub mod crypt;
pub mod io;
pub mod mixed;
pub mod pingpong;
