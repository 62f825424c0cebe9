//! The built-in workloads children exec, so every experiment runs a known program:
//! seed 001's calc_pi (cpu), rw (io) and rwpi (mixed), and seed 004's password hashing (crypt).

pub mod cpu;
pub mod crypt;
pub mod io;
pub mod mixed;
