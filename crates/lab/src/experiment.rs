//! The shape every experiment has, so `schedlab reproduce` can run them all alike.

use schedlab_report::section::Section;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// How big a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    /// Minutes at most on 2 cores; what CI runs.
    Quick,
    /// The default of `schedlab reproduce`: about 15 minutes for everything on 2 cores.
    Default,
    /// The seed documents' own scale.
    Full,
}

impl Scale {
    /// The scale a command's `--quick` / `--full` flags ask for (neither: the default).
    pub fn from_flags(quick: bool, full: bool) -> Scale {
        if quick {
            Scale::Quick
        } else if full {
            Scale::Full
        } else {
            Scale::Default
        }
    }
}

/// Receives progress from a running experiment (a progress bar, or nothing).
pub trait Progress: Sync {
    /// `fraction` in 0..=1 of this experiment done; `what` says what runs now.
    fn update(&self, fraction: f64, what: &str);
}

/// Progress that goes nowhere (tests, `--json` without a terminal).
pub struct NoProgress;

impl Progress for NoProgress {
    fn update(&self, _fraction: f64, _what: &str) {}
}

/// What an experiment is given.
pub struct RunContext<'a> {
    pub scale: Scale,
    /// Root of the results tree: runs go to `<out_root>/<experiment>/<UTC timestamp>/`.
    pub out_root: PathBuf,
    pub progress: &'a dyn Progress,
}

/// A registered experiment.
pub trait Experiment: Send + Sync {
    /// Registry name (`timers`, `sim-wrr`, `policies`, `taskman`, `wrr`, `livelock`, ...).
    fn name(&self) -> &'static str;
    /// The seed document it reproduces (`000` ... `004`).
    fn seed(&self) -> &'static str;
    /// One line for progress and the report.
    fn title(&self) -> &'static str;
    /// Rough wall time in seconds at `scale` on 2 cores (for the time-left estimate).
    fn estimate_s(&self, scale: Scale) -> f64;
    /// Run it. Unsupported conditions (not root, no tracefs) should come back as a section
    /// with [`schedlab_report::section::Status::Unsupported`], not as an error.
    fn run(&self, ctx: &RunContext) -> anyhow::Result<Section>;
}
