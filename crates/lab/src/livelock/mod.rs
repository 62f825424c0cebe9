//! Seed 002: receive livelock, live on loopback and modelled.
//!
//! - [`params`]: the seed's Tables I–III and the kernel role's costs, with their checks;
//! - [`device`], [`kernel`], [`apps`]: the three live roles (threads here; the CLI can also
//!   run each as its own process, like the seed's three terminals);
//! - [`live`]: one live run of all three, in order, with its measurements;
//! - [`sweep`]: the seed's experiment for every strategy, live and modelled, plus the paper's
//!   curves from the `mogul96` model; [`section`] turns it into tables, [`figures`] draws it,
//!   [`verdicts`] judges it, [`experiment`] registers it;
//! - [`roles`]: the sections of `schedlab livelock live|device|kernel|apps|model`.

pub mod apps;
pub mod cpus;
pub mod device;
pub mod experiment;
pub mod figures;
pub mod kernel;
pub mod landmarks;
pub mod live;
pub mod packet;
pub mod params;
pub mod roles;
pub mod section;
pub mod sweep;
pub mod verdicts;

use crate::Experiment;
use std::sync::atomic::{AtomicBool, Ordering};

/// The experiments this module registers with `schedlab reproduce`.
pub fn experiments() -> Vec<Box<dyn Experiment>> {
    vec![Box::new(experiment::Livelock)]
}

/// Raise the calling thread to nice -10 when root, so devices and apps keep their pace on a
/// CPU shared with unrelated work; the guard restores the old value. `None` when not root.
pub(crate) fn favour_thread() -> Option<schedlab_os::sched::SchedGuard> {
    if !schedlab_os::is_root() {
        return None;
    }
    schedlab_os::sched::SchedGuard::apply(0, &schedlab_os::sched::SchedParams::other_nice(-10)).ok()
}

/// True when this role should stop: its own flag, or Ctrl-C / SIGTERM.
pub(crate) fn stopping(flag: &AtomicBool) -> bool {
    flag.load(Ordering::Relaxed) || schedlab_os::signals::stop_requested()
}
