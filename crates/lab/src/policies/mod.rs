//! Seed 001: the live Linux policy benchmark.

use crate::Experiment;

/// The experiments this module registers with `schedlab reproduce`.
pub fn experiments() -> Vec<Box<dyn Experiment>> {
    Vec::new()
}
