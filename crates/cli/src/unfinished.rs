//! Where a run keeps what it makes before its results are written: `<out>/<experiment>/
//! unfinished-<stamp>-<pid>/`, handed to the experiment as [`RunContext::keep_dir`]. A run that
//! dies (SIGKILL, a crash) leaves it for the user (`schedlab validate --replay` judges validate's);
//! a run whose results are written removes it.
//!
//! [`RunContext::keep_dir`]: schedlab_lab::RunContext

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// The directory `experiment`'s run started now keeps its work in.
pub fn dir(out: &Path, experiment: &str) -> PathBuf {
    let stamp = schedlab_report::results::dir_stamp();
    out.join(experiment).join(format!("unfinished-{stamp}-{}", std::process::id()))
}

/// Remove `dir` once the run's results are written (the experiment may never have made it).
pub fn remove(dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_is_under_the_experiment_and_removing_a_missing_one_is_fine() {
        let out = tempfile::tempdir().unwrap();
        let d = dir(out.path(), "validate");
        assert_eq!(d.parent().unwrap(), out.path().join("validate"));
        let name = d.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("unfinished-") && name.ends_with(&format!("-{}", std::process::id())), "{name}");
        remove(&d).unwrap();
        std::fs::create_dir_all(d.join("recordings")).unwrap();
        std::fs::write(d.join("recordings").join("x"), b"x").unwrap();
        remove(&d).unwrap();
        assert!(!d.exists());
    }
}
