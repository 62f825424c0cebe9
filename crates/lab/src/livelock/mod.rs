//! Seed 002: receive livelock, live on loopback and modelled.
//!
//! - [`params`]: the seed's Tables I–III and the kernel role's costs, with their checks;
//! - [`device`], [`kernel`], [`apps`]: the three live roles (threads here; the CLI can also
//!   run each as its own process, like the seed's three terminals);
//! - [`live`]: one live run of all three, in order, with its measurements;
//! - [`sweep`]: the seed's experiment for every strategy, live and modelled, plus the paper's
//!   curves from the `mogul96` model; [`figures`] draws them; [`experiment`] registers it.

pub mod apps;
pub mod cpus;
pub mod device;
pub mod experiment;
pub mod figures;
pub mod kernel;
pub mod live;
pub mod net;
pub mod packet;
pub mod params;
pub mod sweep;

use crate::Experiment;
use std::sync::atomic::{AtomicBool, Ordering};

/// The experiments this module registers with `schedlab reproduce`.
pub fn experiments() -> Vec<Box<dyn Experiment>> {
    vec![Box::new(experiment::Livelock)]
}

/// True when this role should stop: its own flag, or Ctrl-C / SIGTERM.
pub(crate) fn stopping(flag: &AtomicBool) -> bool {
    flag.load(Ordering::Relaxed) || schedlab_os::signals::stop_requested()
}
