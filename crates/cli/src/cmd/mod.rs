//! One file per command area; each exposes `Args` (clap) and `run`.

pub mod livelock;
pub mod policies;
pub mod reproduce;
pub mod restore;
pub mod results;
pub mod shell;
pub mod sim;
pub mod taskman;
pub mod timers;
pub mod trace;
pub mod validate;
pub mod workload;
pub mod wrr;
