//! Seed 000: the timer-queue experiments (the live sleep service, scale and peer benchmarks).

use crate::Experiment;

/// The experiments this module registers with `schedlab reproduce`.
pub fn experiments() -> Vec<Box<dyn Experiment>> {
    Vec::new()
}
