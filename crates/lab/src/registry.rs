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

#[cfg(test)]
mod tests {
    use crate::Scale;

    /// `reproduce --full` runs every seed at its own scale, and each section says so (or says
    /// why a seed has no scale to match); the smaller scales say what they run against it.
    #[test]
    fn every_seed_section_at_full_scale_says_it_ran_at_the_seeds_scale() {
        for e in super::all() {
            let full = e.scale_of(Scale::Full);
            let said = full.contains("the seed's scale")
                || full.contains("the seed gives no workload")
                || (e.seed().is_empty() && full.contains("no seed scale"));
            assert!(said, "{} at --full: {full}", e.name());
            assert!(!e.scale_of(Scale::Quick).is_empty(), "{} says nothing at --quick", e.name());
        }
    }
}
