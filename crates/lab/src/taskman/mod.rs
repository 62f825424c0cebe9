//! Seed 003: the task manager for exclusive computation and its perf-counter benchmark.
//!
//! - [`config`]: the manager's settings and the plan checked against the topology.
//! - [`queue`]: the seed's mutex-guarded FCFS queue and a faster stealing queue.
//! - [`manager`]: pinned SCHED_FIFO workers with signals blocked, IRQs steered to the reserved
//!   core, tasks collected with their results; everything restored on shutdown.
//! - [`payload`]: the seed's test task (cyclic traversal of a 5 MB array).
//! - [`load`]: the background loads of Table 2.
//! - [`bench`]: Table 2 (configurations D and C, 1 … N threads, three loads, perf counters).
//! - [`table2`]: our Table 2 beside the seed's, the headline, the figure and the verdicts.
//! - [`qbench`]: nanoseconds per empty task for our queues and peers.
//! - [`jobs`]: shell commands run as tasks on the workers (`schedlab taskman run`).
//! - [`views`]: the tables `schedlab taskman topology|run|bench-queue` print.

pub mod bench;
pub mod config;
pub mod jobs;
pub mod load;
pub mod manager;
pub mod payload;
pub mod qbench;
pub mod queue;
pub mod table2;
pub mod views;

pub mod experiment;

pub use config::{ManagerConfig, Plan, DEFAULT_PRIORITY};
pub use manager::{Manager, ManagerReport, TaskOutcome, TaskResult, WorkerInfo};
pub use queue::QueueKind;

use crate::Experiment;

/// The experiments this module registers with `schedlab reproduce`.
pub fn experiments() -> Vec<Box<dyn Experiment>> {
    vec![Box::new(experiment::TaskmanExperiment)]
}
