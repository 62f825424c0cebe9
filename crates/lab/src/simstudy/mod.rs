//! Seeds 003/004 in simulation: policy comparisons and the WRR study.

use crate::Experiment;

/// The experiments this module registers with `schedlab reproduce`.
pub fn experiments() -> Vec<Box<dyn Experiment>> {
    Vec::new()
}
