//! schedlab-lab: the experiments.
//!
//! One module per seed experiment; each turns parameters into runs, runs into a results
//! document (written with [`schedlab_report::results::RunDir`]) and a report
//! [`schedlab_report::section::Section`]. [`registry`] lists the experiments that
//! `schedlab reproduce` runs. [`workloads`] holds the programs children exec
//! (`schedlab workload cpu|io|mixed|crypt`).

pub mod experiment;
pub mod livelock;
pub mod policies;
pub mod registry;
pub mod seed_data;
pub mod simstudy;
pub mod taskman;
pub mod timers;
pub mod workloads;
pub mod wrr;

pub use experiment::{Experiment, Progress, RunContext, Scale};
