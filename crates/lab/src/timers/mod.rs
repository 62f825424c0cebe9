//! Seed 000: the timer-queue experiments — the live sleep service driving each queue
//! ([`service`], one child process per trial: [`trial`]), the seed's experiment
//! ([`reproduce`]), cost against the number of timers ([`scale`]) and the side-by-side with
//! peers ([`bench`]). [`experiment`] registers it all with `schedlab reproduce`.

pub mod bench;
pub mod experiment;
pub mod reproduce;
pub mod scale;
pub mod service;
pub mod trial;

use crate::Experiment;

/// The experiments this module registers with `schedlab reproduce`.
pub fn experiments() -> Vec<Box<dyn Experiment>> {
    vec![Box::new(experiment::Timers)]
}
