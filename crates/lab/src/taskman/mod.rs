//! Seed 003: the task manager for exclusive computation and its perf-counter benchmark.

use crate::Experiment;

/// The experiments this module registers with `schedlab reproduce`.
pub fn experiments() -> Vec<Box<dyn Experiment>> {
    Vec::new()
}
