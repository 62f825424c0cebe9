//! schedlab-lab: the experiments.
//!
//! One module per seed experiment; each turns parameters into runs and runs into a report
//! [`schedlab_report::section::Section`] with its parameters, raw results and data files —
//! the caller writes it with [`schedlab_report::results::RunDir::write`]. Every system call
//! goes through `schedlab_os`. [`registry`] lists the experiments that `schedlab reproduce`
//! runs. [`workloads`] holds the programs children exec (`schedlab workload cpu|io|mixed|crypt`).

#![forbid(unsafe_code)]

pub mod experiment;
pub mod linux_policies;
pub mod livelock;
pub mod registry;
pub mod seed_data;
pub mod simstudy;
pub mod sweep;
pub mod taskman;
pub mod timers;
pub mod trace;
pub mod validate;
pub mod workloads;
pub mod wrr;

pub use experiment::{Experiment, Progress, RunContext, Scale};
