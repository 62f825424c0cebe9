//! The shape every experiment has, so `schedlab reproduce` can run them all alike: given a
//! [`RunContext`], an experiment returns a [`Section`] — tables, figures, verdicts, its
//! parameters and raw results — and the caller writes it with the one run writer
//! ([`schedlab_report::results::RunDir::write`]). Experiments never write run directories.

use schedlab_os::machine::MachineFacts;
use schedlab_report::section::Section;
use serde::{Deserialize, Serialize};

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
    /// The machine it runs on, collected once by the caller (for sentences such as "measured on
    /// a 2-CPU machine"; the same facts go into results.json).
    pub machine: &'a MachineFacts,
    pub progress: &'a dyn Progress,
    /// Where the experiment may keep what it makes as soon as it is made, so a run that dies
    /// before its results are written leaves it (validate's recordings); `None` when the run saves
    /// nothing. The caller removes it once the run's results are written.
    pub keep_dir: Option<std::path::PathBuf>,
}

/// A registered experiment.
pub trait Experiment: Send + Sync {
    /// Registry name (`timers`, `sim-wrr`, `policies`, `taskman`, `wrr`, `livelock`, ...).
    fn name(&self) -> &'static str;
    /// The seed document it reproduces (`000` ... `004`).
    fn seed(&self) -> &'static str;
    /// One line for progress and the report.
    fn title(&self) -> &'static str;
    /// What a run at `scale` does, against the seed's own scale, in a phrase (`reproduce
    /// --list` prints it for every scale, so no run hides how far it is from the seed's).
    fn scale_of(&self, scale: Scale) -> String;
    /// Rough wall time in seconds at `scale` on 2 cores (for the time-left estimate).
    fn estimate_s(&self, scale: Scale) -> f64;
    /// Run it and return its section with `parameters` and `results` filled. Unsupported
    /// conditions (not root, no tracefs) come back as a section with
    /// [`schedlab_report::section::Status::Unsupported`], not as an error.
    fn run(&self, ctx: &RunContext) -> anyhow::Result<Section>;
}
