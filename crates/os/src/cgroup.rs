//! CPU-weight cgroups for the live WRR comparison: cgroup v2 `cpu.weight` where the unified
//! hierarchy has the cpu controller, otherwise cgroup v1 `cpu.shares` (e.g. /sys/fs/cgroup/cpu).
//! A [`CpuGroupSet`] creates one parent group with child groups under it and removes them all
//! when dropped (processes still inside are moved back to the root group first).

use crate::{OsError, OsResult};
use std::path::{Path, PathBuf};

/// Which interface the cpu controller offers here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuController {
    /// cgroup v2: `cpu.weight` 1..=10000 (default 100), at this mount point.
    V2 { root: PathBuf },
    /// cgroup v1: `cpu.shares` 2..=262144 (default 1024), at this mount point.
    V1 { root: PathBuf },
}

impl CpuController {
    /// Find the cpu controller: v2 first (if its root enables `cpu` for children), then v1.
    pub fn detect() -> OsResult<Self> {
        let mounts =
            std::fs::read_to_string("/proc/mounts").map_err(|e| OsError::from_io("reading /proc/mounts", e))?;
        let mut v1 = None;
        for line in mounts.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 4 {
                continue;
            }
            let root = PathBuf::from(f[1]);
            if f[2] == "cgroup2" {
                let ctl = std::fs::read_to_string(root.join("cgroup.subtree_control")).unwrap_or_default();
                if ctl.split_whitespace().any(|c| c == "cpu") {
                    return Ok(CpuController::V2 { root });
                }
            } else if f[2] == "cgroup" && f[3].split(',').any(|o| o == "cpu") && v1.is_none() {
                v1 = Some(CpuController::V1 { root });
            }
        }
        v1.ok_or_else(|| {
            OsError::unsupported(
                "a cgroup cpu controller",
                "neither cgroup v2 with `cpu` in cgroup.subtree_control nor a cgroup v1 `cpu` hierarchy is mounted",
            )
        })
    }

    /// The hierarchy's mount point.
    pub fn root(&self) -> &Path {
        match self {
            CpuController::V2 { root } | CpuController::V1 { root } => root,
        }
    }

    /// `cpu.weight` or `cpu.shares`.
    pub fn knob(&self) -> &'static str {
        match self {
            CpuController::V2 { .. } => "cpu.weight",
            CpuController::V1 { .. } => "cpu.shares",
        }
    }

    /// The knob value for a relative weight (1 = the default group weight unit): v2 100×w,
    /// v1 1024×w, clamped to the kernel's range.
    pub fn value_for(&self, weight: u32) -> u64 {
        match self {
            CpuController::V2 { .. } => (weight as u64 * 100).clamp(1, 10_000),
            CpuController::V1 { .. } => (weight as u64 * 1024).clamp(2, 262_144),
        }
    }

    /// The largest knob value (given to the parent so it dominates the root group's tasks).
    pub fn max_value(&self) -> u64 {
        match self {
            CpuController::V2 { .. } => 10_000,
            CpuController::V1 { .. } => 262_144,
        }
    }
}

fn write(path: &Path, value: &str) -> OsResult<()> {
    std::fs::write(path, value).map_err(|e| OsError::from_io(format!("writing {value} to {}", path.display()), e))
}

/// A parent group with weighted child groups; everything is removed on drop.
#[derive(Debug)]
pub struct CpuGroupSet {
    ctl: CpuController,
    parent: PathBuf,
    children: Vec<PathBuf>,
    /// The tree in the journal (recorded before it was created), undone after removal.
    journal: Option<crate::journal::Entry>,
}

impl CpuGroupSet {
    /// Create `<root>/<name>` with the maximum weight, and one child per entry of `weights`.
    pub fn create(ctl: &CpuController, name: &str, weights: &[u32]) -> OsResult<Self> {
        if weights.contains(&0) {
            return Err(OsError::invalid("cgroup weight", 0, "weights start at 1"));
        }
        let parent = ctl.root().join(name);
        let journal = crate::journal::record(crate::journal::Change::Cgroup {
            path: parent.clone(),
            root: ctl.root().to_path_buf(),
        })?;
        std::fs::create_dir(&parent).map_err(|e| OsError::from_io(format!("creating {}", parent.display()), e))?;
        let mut set =
            CpuGroupSet { ctl: ctl.clone(), parent: parent.clone(), children: Vec::new(), journal: Some(journal) };
        write(&parent.join(ctl.knob()), &ctl.max_value().to_string())?;
        if let CpuController::V2 { .. } = ctl {
            write(&parent.join("cgroup.subtree_control"), "+cpu")?;
        }
        for (i, &w) in weights.iter().enumerate() {
            let child = parent.join(format!("t{i}"));
            std::fs::create_dir(&child).map_err(|e| OsError::from_io(format!("creating {}", child.display()), e))?;
            set.children.push(child.clone());
            write(&child.join(ctl.knob()), &ctl.value_for(w).to_string())?;
        }
        Ok(set)
    }

    /// Move process `pid` (all its threads) into child group `index`.
    pub fn add(&self, index: usize, pid: i32) -> OsResult<()> {
        let child = self.children.get(index).ok_or_else(|| OsError::invalid("cgroup index", index, "no such group"))?;
        write(&child.join("cgroup.procs"), &pid.to_string())
    }

    /// The knob value written to child `index`.
    pub fn child_value(&self, index: usize) -> OsResult<u64> {
        let child = self.children.get(index).ok_or_else(|| OsError::invalid("cgroup index", index, "no such group"))?;
        let p = child.join(self.ctl.knob());
        let t = std::fs::read_to_string(&p).map_err(|e| OsError::from_io(format!("reading {}", p.display()), e))?;
        t.trim().parse().map_err(|_| OsError::not_an_integer(p.display().to_string(), t.trim()))
    }

    /// The parent group's directory.
    pub fn path(&self) -> &Path {
        &self.parent
    }

    /// Remove one group; false if it would not go.
    fn remove(&self, dir: &Path) -> bool {
        match remove_group(self.ctl.root(), dir) {
            Ok(()) => true,
            Err(why) => {
                eprintln!("schedlab: could not remove cgroup: {why}; `schedlab restore` retries");
                false
            }
        }
    }
}

/// Remove the (childless) group `dir`, moving any process still in it to the hierarchy's
/// `root` first. Retries for about a second: exiting tasks leave a group a moment after they are
/// reaped. A group that is already gone counts as removed.
pub(crate) fn remove_group(root: &Path, dir: &Path) -> Result<(), String> {
    const ATTEMPTS: usize = 100;
    for attempt in 1..=ATTEMPTS {
        let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.split_whitespace() {
            let _ = std::fs::write(root.join("cgroup.procs"), pid);
        }
        match std::fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) if attempt == ATTEMPTS => return Err(format!("removing {}: {e}", dir.display())),
            Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
        }
    }
    unreachable!("the last attempt returns")
}

impl Drop for CpuGroupSet {
    fn drop(&mut self) {
        let mut removed = true;
        for c in self.children.iter().rev() {
            removed &= self.remove(c);
        }
        removed &= self.remove(&self.parent);
        if let (false, Some(j)) = (removed, self.journal.take()) {
            j.keep();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_map_into_range() {
        let v1 = CpuController::V1 { root: "/x".into() };
        let v2 = CpuController::V2 { root: "/x".into() };
        assert_eq!(v1.value_for(1), 1024);
        assert_eq!(v1.value_for(1000), 262_144);
        assert_eq!(v2.value_for(20), 2000);
        assert_eq!(v2.value_for(500), 10_000);
        assert_eq!(v1.knob(), "cpu.shares");
    }

    #[test]
    fn groups_are_created_and_removed() {
        if !crate::root_for_test("creating cgroups") {
            return;
        }
        let Some(ctl) = crate::test_gate::available("creating cgroups", CpuController::detect()) else {
            return;
        };
        let name = format!("schedlab-test-{}", std::process::id());
        let path;
        {
            let set = CpuGroupSet::create(&ctl, &name, &[1, 4]).unwrap();
            path = set.path().to_path_buf();
            assert!(path.join("t1").is_dir());
            assert_eq!(set.child_value(1).unwrap(), ctl.value_for(4));
            let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
            set.add(0, child.id() as i32).unwrap();
            child.kill().unwrap();
            child.wait().unwrap();
        }
        assert!(!path.exists(), "{} left behind", path.display());
    }
}
