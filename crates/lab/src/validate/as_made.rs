//! Recordings written as they are made. A validate run keeps its recordings in its run
//! directory, which is written when the run ends; one that dies before (SIGKILL, a crash, the
//! machine going down) would lose minutes of live runs. With a directory to keep them in, each
//! recording is written there as soon as its run is over, beside a setup from what was known
//! before the cases (the first wake-up probe's delays; DELAY_ZERO as the model's default, since
//! its probe is judged at the end), so `schedlab validate --replay <dir>` judges what was
//! recorded. Each file is written under a temporary name and renamed, so a run killed while
//! writing leaves no half file.

use super::recording::{Recording, Setup, DIR, SETUP};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Where the recordings of a running validate go as they are made.
#[derive(Debug)]
pub struct AsMade {
    dir: PathBuf,
}

impl AsMade {
    /// Create `dir/recordings/` and write the setup there.
    pub fn start(dir: &Path, setup: &Setup) -> Result<Self> {
        let dir = dir.join(DIR);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let kept = AsMade { dir };
        kept.write(SETUP, setup.to_json()?.as_bytes())?;
        Ok(kept)
    }

    /// Write `rec`, already gzipped (`gz`, [`Recording::to_gz`]), beside the setup.
    pub fn add(&self, rec: &Recording, gz: &[u8]) -> Result<()> {
        let name = rec.file_name();
        let file = Path::new(&name).file_name().context("a recording's file name")?;
        self.write(&file.to_string_lossy(), gz)
    }

    fn write(&self, name: &str, bytes: &[u8]) -> Result<()> {
        let tmp = self.dir.join(format!(".{name}.partial"));
        std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
        let path = self.dir.join(name);
        std::fs::rename(&tmp, &path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setup_is_written_at_the_start_and_no_partial_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let plan = super::super::measure::RunPlan {
            duration_ns: 1_000_000_000,
            warmup_ns: 100_000_000,
            one_cpu: vec![1],
            two_cpus: vec![0, 1],
            draws: 1,
        };
        let setup = Setup::new(&plan, Some(4_000_000), &[], "unfinished".into());
        AsMade::start(dir.path(), &setup).unwrap();
        let names: Vec<String> = std::fs::read_dir(dir.path().join(DIR))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec![SETUP.to_string()]);
        let back: Setup =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(DIR).join(SETUP)).unwrap()).unwrap();
        assert_eq!(back.recorded, "unfinished");
    }
}
