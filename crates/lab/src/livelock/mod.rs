//! Seed 002: receive livelock, live on loopback and modelled.

use crate::Experiment;

/// The experiments this module registers with `schedlab reproduce`.
pub fn experiments() -> Vec<Box<dyn Experiment>> {
    Vec::new()
}
