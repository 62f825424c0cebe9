//! tracefs: find or mount it, record scheduler tracepoints in a private trace instance
//! (`/sys/kernel/tracing/instances/<name>`, so global tracing is left alone), hand back the
//! raw text (the `schedlab-trace` crate parses it), and remove the instance — and unmount
//! tracefs if we mounted it — when dropped. Instances named `<prefix><pid>` whose process is
//! gone (a run killed with SIGKILL) are removed by the next run.
//!
//! The instance uses the `mono` trace clock, so event times are CLOCK_MONOTONIC and line up
//! with [`crate::clock::monotonic_ns`], and `overwrite` off, so a full buffer keeps the
//! beginning of a run and drops the rest (counted as lost events) instead of the other way round.

use crate::{OsError, OsResult};
use std::path::{Path, PathBuf};

/// Where tracefs is usually mounted.
pub const TRACEFS: &str = "/sys/kernel/tracing";
const DEBUGFS_TRACING: &str = "/sys/kernel/debug/tracing";

/// A tracefs mount; unmounts on drop when this process mounted it.
#[derive(Debug)]
pub struct TraceFs {
    root: PathBuf,
    mounted_by_us: bool,
}

impl TraceFs {
    /// Use the mounted tracefs, mounting it at [`TRACEFS`] when it is not (needs root).
    pub fn open() -> OsResult<Self> {
        for root in [TRACEFS, DEBUGFS_TRACING] {
            if Path::new(root).join("instances").is_dir() {
                return Ok(TraceFs { root: root.into(), mounted_by_us: false });
            }
        }
        if !Path::new(TRACEFS).is_dir() {
            return Err(OsError::unsupported("tracefs", format!("{TRACEFS} does not exist (kernel without tracing?)")));
        }
        let src = c"nodev";
        let target = c"/sys/kernel/tracing";
        let fstype = c"tracefs";
        // SAFETY: NUL-terminated strings and a null data pointer are valid mount(2) arguments.
        let rc = unsafe { libc::mount(src.as_ptr(), target.as_ptr(), fstype.as_ptr(), 0, std::ptr::null()) };
        if rc != 0 {
            return Err(OsError::last(format!("mounting tracefs on {TRACEFS}")));
        }
        Ok(TraceFs { root: TRACEFS.into(), mounted_by_us: true })
    }
}

impl Drop for TraceFs {
    fn drop(&mut self) {
        if self.mounted_by_us {
            let target = c"/sys/kernel/tracing";
            // SAFETY: valid NUL-terminated path. EBUSY (someone else now uses it) leaves it mounted.
            if unsafe { libc::umount2(target.as_ptr(), 0) } != 0 {
                let e = std::io::Error::last_os_error();
                eprintln!("schedlab: left tracefs mounted on {TRACEFS} ({e}); `umount {TRACEFS}` removes it");
            }
        }
    }
}

/// The scheduler tracepoints a full recording enables (`trace record`, `validate`).
pub const SCHED_EVENTS: &[&str] = &[
    "sched/sched_switch",
    "sched/sched_wakeup",
    "sched/sched_wakeup_new",
    "sched/sched_waking",
    "sched/sched_process_fork",
    "sched/sched_process_exec",
    "sched/sched_process_exit",
    "sched/sched_migrate_task",
];

/// Reads of a task's own CPU clock (`clock_gettime` of CLOCK_PROCESS_CPUTIME_ID = 2 or
/// CLOCK_THREAD_CPUTIME_ID = 3): each runs the scheduler's `update_curr()` for the reader, which
/// acts on an expired slice there and then. (event, filter) for [`Instance::enable_filtered`].
pub const CPU_CLOCK_READS: (&str, &str) = ("syscalls/sys_enter_clock_gettime", "which_clock == 2 || which_clock == 3");

/// A private trace instance recording some tracepoints; removed on drop.
#[derive(Debug)]
pub struct Instance {
    dir: PathBuf,
    events: Vec<String>,
    /// The instance in the journal (recorded before it was created), undone after removal.
    journal: Option<crate::journal::Entry>,
}

impl Instance {
    /// Create `instances/<name>` under `fs` with a per-CPU buffer of `buffer_kb`, the mono
    /// clock, overwrite off and `events` (`sched/sched_switch`, …) enabled; tracing stays off
    /// until [`Instance::on`].
    pub fn create(fs: &TraceFs, name: &str, buffer_kb: usize, events: &[&str]) -> OsResult<Self> {
        if name.is_empty() || name.contains('/') {
            return Err(OsError::invalid("trace instance name", name, "must be a plain, non-empty name"));
        }
        let dir = fs.root.join("instances").join(name);
        let journal = crate::journal::record(crate::journal::Change::TraceInstance { path: dir.clone() })?;
        std::fs::create_dir(&dir)
            .map_err(|e| OsError::from_io(format!("creating trace instance {}", dir.display()), e))?;
        let inst = Instance { dir, events: events.iter().map(|e| e.to_string()).collect(), journal: Some(journal) };
        inst.write("tracing_on", "0")?;
        inst.write("trace_clock", "mono")?;
        inst.write("options/overwrite", "0")?;
        inst.write("buffer_size_kb", &buffer_kb.to_string())?;
        for e in events {
            inst.write(&format!("events/{e}/enable"), "1")?;
        }
        Ok(inst)
    }

    fn write(&self, file: &str, value: &str) -> OsResult<()> {
        let path = self.dir.join(file);
        std::fs::write(&path, value)
            .map_err(|e| OsError::from_io(format!("writing '{value}' to {}", path.display()), e))
    }

    /// Remove instances named `<prefix><pid>` whose process is gone: what a run killed with
    /// SIGKILL left behind (still recording into its buffer). Returns how many were removed.
    pub fn remove_orphans(fs: &TraceFs, prefix: &str) -> usize {
        let Ok(entries) = std::fs::read_dir(fs.root.join("instances")) else { return 0 };
        let mut removed = 0;
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name.strip_prefix(prefix).and_then(|p| p.parse::<u32>().ok()) else { continue };
            if !Path::new(&format!("/proc/{pid}")).exists() && remove_instance_dir(&e.path()).is_ok() {
                removed += 1;
            }
        }
        removed
    }

    /// The instance directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Discard what the buffer holds.
    pub fn clear(&self) -> OsResult<()> {
        // Opening `trace` for writing with O_TRUNC clears the buffer.
        std::fs::File::create(self.dir.join("trace"))
            .map(|_| ())
            .map_err(|e| OsError::from_io(format!("clearing {}/trace", self.dir.display()), e))
    }

    /// Start or stop recording.
    pub fn on(&self, on: bool) -> OsResult<()> {
        self.write("tracing_on", if on { "1" } else { "0" })
    }

    /// The tracepoints it records.
    pub fn events(&self) -> &[String] {
        &self.events
    }

    /// Also record `event` (`system/name`) where `filter` holds, if this kernel has it (syscall
    /// tracepoints need CONFIG_FTRACE_SYSCALLS). Returns whether it is recorded.
    pub fn enable_filtered(&mut self, event: &str, filter: &str) -> OsResult<bool> {
        if !self.dir.join("events").join(event).is_dir() {
            return Ok(false);
        }
        self.write(&format!("events/{event}/filter"), filter)?;
        self.write(&format!("events/{event}/enable"), "1")?;
        self.events.push(event.to_string());
        Ok(true)
    }

    /// The buffer as text, in the `trace` file's format (tracing should be off).
    pub fn read_text(&self) -> OsResult<String> {
        let path = self.dir.join("trace");
        std::fs::read_to_string(&path).map_err(|e| OsError::from_io(format!("reading {}", path.display()), e))
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Err(e) = remove_instance_dir(&self.dir) {
            eprintln!(
                "schedlab: could not remove trace instance {} ({e}); `schedlab restore` retries",
                self.dir.display()
            );
            if let Some(j) = self.journal.take() {
                j.keep();
            }
        }
    }
}

/// Stop an instance recording and remove it (the kernel disables its events with it).
pub(crate) fn remove_instance_dir(dir: &Path) -> std::io::Result<()> {
    let _ = std::fs::write(dir.join("tracing_on"), "0");
    std::fs::remove_dir(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instances_of_dead_processes_are_removed_and_live_ones_kept() {
        if !crate::root_for_test("tracefs") {
            return;
        }
        let fs = TraceFs::open().unwrap();
        let prefix = format!("schedlab-orphan-test-{}-", std::process::id());
        // Above any pid_max (at most 2^22), so no such process can exist.
        let mut dead = Instance::create(&fs, &format!("{prefix}99999999"), 64, &["sched/sched_switch"]).unwrap();
        let dead_dir = dead.dir().to_path_buf();
        // Left as a killed run leaves it; its journal entry is settled below, once removed.
        let dead_entry = dead.journal.take();
        std::mem::forget(dead);
        let live =
            Instance::create(&fs, &format!("{prefix}{}", std::process::id()), 64, &["sched/sched_switch"]).unwrap();
        assert_eq!(Instance::remove_orphans(&fs, &prefix), 1);
        assert!(!dead_dir.exists());
        drop(dead_entry);
        assert!(live.dir().exists());
    }

    #[test]
    fn captures_our_own_switches_when_root() {
        if !crate::root_for_test("tracefs") {
            return;
        }
        let fs = TraceFs::open().unwrap();
        let inst = Instance::create(&fs, &format!("schedlab-test-{}", std::process::id()), 256, SCHED_EVENTS).unwrap();
        inst.clear().unwrap();
        inst.on(true).unwrap();
        for _ in 0..5 {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        inst.on(false).unwrap();
        let text = inst.read_text().unwrap();
        let me = nix::unistd::gettid().as_raw();
        // A voluntary switch away from this thread (it slept), and its wake-up.
        let ours = format!("prev_pid={me} ");
        assert!(
            text.lines().any(|l| l.contains("sched_switch:") && l.contains(&ours) && l.contains("prev_state=S")),
            "no voluntary switch of ours in {} lines",
            text.lines().count()
        );
        assert!(text.contains("sched_wakeup: comm=") && text.contains(&format!("pid={me} ")));
        let dir = inst.dir().to_path_buf();
        drop(inst);
        assert!(!dir.exists());
    }
}
