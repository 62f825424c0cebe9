//! Autogroup off for the length of a run. With `kernel.sched_autogroup_enabled` on, every
//! session is a task group of its own: the fair class then balances and places each group's
//! entity by the group's share of CPU, and a task's weight counts only inside its group. A run
//! that compares the kernel with a model without task groups turns it off, so that the tasks it
//! starts afterwards sit in the root group with their own weights (tasks started before keep
//! the group they have). The setting is journaled first and put back on every exit path: by
//! the guard's drop, and after a SIGKILL by the next run's heal (`schedlab restore`).

use crate::journal::{self, Change, Entry};
use crate::{OsError, OsResult};
use std::path::{Path, PathBuf};

/// Where the kernel keeps the setting.
pub const SETTING: &str = "/proc/sys/kernel/sched_autogroup_enabled";

/// Autogroup turned off until drop; a no-op when it was off already (or the kernel has none).
#[must_use = "dropping the guard turns autogroup back on"]
pub struct AutogroupOff {
    /// The setting, its value as found and its journal entry, when this guard changed it.
    changed: Option<(PathBuf, String, Entry)>,
}

impl AutogroupOff {
    /// Turn autogroup off (root only), journaled before the write.
    pub fn apply() -> OsResult<AutogroupOff> {
        Self::apply_at(Path::new(SETTING))
    }

    /// [`AutogroupOff::apply`] on another file standing for the setting (tests).
    pub fn apply_at(path: &Path) -> OsResult<AutogroupOff> {
        let was = match std::fs::read_to_string(path) {
            Ok(v) => v.trim().to_string(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(AutogroupOff { changed: None }),
            Err(e) => return Err(OsError::from_io(format!("reading {}", path.display()), e)),
        };
        if was == "0" {
            return Ok(AutogroupOff { changed: None });
        }
        let entry = journal::record(Change::Setting { path: path.to_path_buf(), value: was.clone() })?;
        if let Err(e) = std::fs::write(path, "0") {
            // Nothing changed: the entry may go.
            drop(entry);
            return Err(OsError::from_io(format!("turning autogroup off ({})", path.display()), e));
        }
        Ok(AutogroupOff { changed: Some((path.to_path_buf(), was, entry)) })
    }

    /// Whether this guard turned it off (false: it was off already, or there is no autogroup).
    pub fn changed(&self) -> bool {
        self.changed.is_some()
    }
}

impl Drop for AutogroupOff {
    fn drop(&mut self) {
        if let Some((path, was, entry)) = self.changed.take() {
            match std::fs::write(&path, &was) {
                Ok(()) => drop(entry),
                // Left in the journal: the next run's heal puts it back.
                Err(_) => entry.keep(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_that_is_on_goes_off_until_drop_and_one_that_is_off_is_left_alone() {
        // A plain file stands for the setting; the entry goes to this process's journal.
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sched_autogroup_enabled");
        std::fs::write(&file, "1\n").unwrap();
        let guard = AutogroupOff::apply_at(&file).unwrap();
        assert!(guard.changed());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "0");
        drop(guard);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "1");
        std::fs::write(&file, "0").unwrap();
        let guard = AutogroupOff::apply_at(&file).unwrap();
        assert!(!guard.changed());
        drop(guard);
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "0");
        // No such setting (a kernel without autogroup): nothing to do.
        assert!(!AutogroupOff::apply_at(&dir.path().join("missing")).unwrap().changed());
    }
}
