//! Every experiment `schedlab reproduce` knows, in the order it runs them.

use crate::Experiment;

/// All registered experiments.
pub fn all() -> Vec<Box<dyn Experiment>> {
    let mut v: Vec<Box<dyn Experiment>> = Vec::new();
    v.extend(crate::timers::experiments());
    v.extend(crate::simstudy::experiments());
    v.extend(crate::linux_policies::experiments());
    v.extend(crate::taskman::experiments());
    v.extend(crate::wrr::experiments());
    v.extend(crate::livelock::experiments());
    v.extend(crate::validate::experiments());
    v
}
