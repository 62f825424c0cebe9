//! A validate run kept whole, so that it can be replayed later without root or a live run
//! (`schedlab validate --replay DIR`): each live run as it was recorded — the trace, the tasks'
//! scheduling and CPU times, the kernel's readings beside it, the RT period found live — in
//! `recordings/<case>-<repeat>.json.gz`, and what every replay of the run used — the plan, and
//! the models with the wake-up delays the probes gave and the DELAY_ZERO setting chosen — in
//! `recordings/setup.json`. A model changed since is then judged on the very runs the old one
//! was: a new validate run differs from the last by the kernel's own run-to-run spread, a replay
//! of the same recordings by the model alone.

use super::measure::{RtPeriodSeen, RunPlan};
use super::replay::Model;
use crate::trace::live::LiveRun;
use anyhow::{bail, Context, Result};
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use schedlab_sim::engine::WakeDelays;
use schedlab_sim::Dur;
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The subdirectory of a validate run that holds its recordings.
pub const DIR: &str = "recordings";
/// The setup file in it.
pub const SETUP: &str = "setup.json";
/// The format of both files; a reader refuses another.
const VERSION: u32 = 1;

/// One live run of a case, as recorded.
#[derive(Debug, Serialize, Deserialize)]
pub struct Recording {
    pub version: u32,
    pub case: String,
    /// 0-based.
    pub repeat: usize,
    /// The host CPUs it ran on.
    pub host_cpus: Vec<usize>,
    /// The RT period's boundaries, found from the gaps its RT hogs noted (gone after the run).
    pub rt_period: Option<RtPeriodSeen>,
    pub run: LiveRun,
}

impl Recording {
    pub fn new(
        case: &str,
        repeat: usize,
        host_cpus: Vec<usize>,
        rt_period: Option<RtPeriodSeen>,
        run: LiveRun,
    ) -> Self {
        Recording { version: VERSION, case: case.to_string(), repeat, host_cpus, rt_period, run }
    }

    /// Its file in the run directory (repeats numbered from 1, as the tables number them).
    pub fn file_name(&self) -> String {
        format!("{DIR}/{}-{}.json.gz", self.case, self.repeat + 1)
    }

    /// The file's bytes: the recording as JSON, gzipped (a ping-pong trace is tens of MB of text).
    pub fn to_gz(&self) -> Result<Vec<u8>> {
        let mut gz = GzEncoder::new(Vec::new(), flate2::Compression::fast());
        serde_json::to_writer(&mut gz, self).context("writing a recording")?;
        Ok(gz.finish()?)
    }

    /// Read a recording file.
    pub fn read(path: &Path) -> Result<Self> {
        let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let mut text = String::new();
        GzDecoder::new(file).read_to_string(&mut text).with_context(|| format!("reading {}", path.display()))?;
        let r: Recording = serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        if r.version != VERSION {
            bail!("{}: a recording of format {}; this schedlab reads format {VERSION}", path.display(), r.version);
        }
        Ok(r)
    }
}

/// A model as the setup file keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SavedModel {
    pub label: String,
    pub spec: String,
    pub tick: Option<Dur>,
    pub wake: WakeDelays,
}

/// What every replay of a validate run used.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Setup {
    pub version: u32,
    pub plan: RunPlan,
    /// The tick the traces were aligned to (the `linux` model's).
    pub tick_ns: Option<u64>,
    /// The models as replayed: the probes' pooled wake-up delays in, the DELAY_ZERO setting in
    /// the `linux` spec.
    pub models: Vec<SavedModel>,
    /// The live run's account of its machine and probes, for the replay's summary.
    pub recorded: String,
}

impl Setup {
    pub fn new(plan: &RunPlan, tick_ns: Option<u64>, models: &[Model], recorded: String) -> Self {
        let models = models
            .iter()
            .map(|m| SavedModel { label: m.label.to_string(), spec: m.spec.clone(), tick: m.tick, wake: m.wake })
            .collect();
        Setup { version: VERSION, plan: plan.clone(), tick_ns, models, recorded }
    }

    /// The file's text.
    pub fn to_json(&self) -> Result<String> {
        Ok(serde_json::to_string_pretty(self)?)
    }

    /// The models to replay with.
    pub fn models(&self) -> Result<Vec<Model>> {
        self.models
            .iter()
            .map(|m| {
                let label = super::replay::label(&m.label)
                    .with_context(|| format!("{SETUP}: no model called '{}' (known: linux, cfs, rr)", m.label))?;
                Ok(Model { label, spec: m.spec.clone(), tick: m.tick, wake: m.wake })
            })
            .collect()
    }
}

/// The recordings directory of `dir`: `dir` itself when it holds the setup file, else its
/// `recordings/`.
fn recordings_dir(dir: &Path) -> Result<PathBuf> {
    for d in [dir.to_path_buf(), dir.join(DIR)] {
        if d.join(SETUP).is_file() {
            return Ok(d);
        }
    }
    schedlab_os::bail_usage!(
        "{} holds no validate recordings ({DIR}/{SETUP}): give a run directory of `schedlab validate` \
         (results/validate/<stamp>); runs made before validate kept its recordings cannot be replayed",
        dir.display()
    )
}

/// The setup and every recording of the validate run in `dir`, in the order they were recorded.
pub fn load(dir: &Path) -> Result<(Setup, Vec<Recording>)> {
    let dir = recordings_dir(dir)?;
    let setup_path = dir.join(SETUP);
    let text = std::fs::read_to_string(&setup_path).with_context(|| format!("reading {}", setup_path.display()))?;
    let setup: Setup = serde_json::from_str(&text).with_context(|| format!("parsing {}", setup_path.display()))?;
    if setup.version != VERSION {
        bail!("{}: format {}; this schedlab reads format {VERSION}", setup_path.display(), setup.version);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("listing {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    files.sort();
    let recordings = files.iter().map(|p| Recording::read(p)).collect::<Result<Vec<_>>>()?;
    if recordings.is_empty() {
        bail!("{} holds the setup of a validate run but none of its recordings", dir.display());
    }
    Ok((setup, recordings))
}
