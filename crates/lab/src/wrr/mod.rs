//! Seed 004 live: the user-space weighted round robin host and the kernel alternatives.
//!
//! - [`spec`]: `WEIGHT:CMD` tasks ([`spec::WrrTask`]) and input checks.
//! - [`tasks`]: the managed task processes (start barrier, capture, clean end).
//! - [`host`]: the live host for any [`schedlab_sim::Policy`] (WRR is the first user); its
//!   dispatch loop is in `dispatch`.
//! - [`summary`]: shares, slice errors, dispatcher cost, Gantt chart, slice rows.
//! - [`run_section`]: `schedlab wrr run` as a section.
//! - [`alternatives`]: cgroup CPU weights, nice levels and SCHED_DEADLINE with the same tasks.
//! - [`study`]: the seed's two tests beside the seed, the simulator and the alternatives.
//! - [`experiment`]: the `wrr` entry of `schedlab reproduce`.

pub mod alternatives;
mod dispatch;
pub mod experiment;
pub mod host;
pub mod run_section;
pub mod spec;
pub mod study;
pub mod summary;
pub mod tasks;

use crate::Experiment;

/// The experiments this module registers with `schedlab reproduce`.
pub fn experiments() -> Vec<Box<dyn Experiment>> {
    vec![Box::new(experiment::WrrExperiment)]
}
