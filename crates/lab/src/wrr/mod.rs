//! Seed 004 live: the user-space weighted round robin host and the kernel alternatives.

use crate::Experiment;

/// The experiments this module registers with `schedlab reproduce`.
pub fn experiments() -> Vec<Box<dyn Experiment>> {
    Vec::new()
}
