//! tracefs: find or mount it, capture `sched:sched_switch` in a private trace instance
//! (`/sys/kernel/tracing/instances/<name>`, so global tracing is left alone), parse the
//! events, and remove the instance — and unmount tracefs if we mounted it — when dropped.
//!
//! The instance uses the `mono` trace clock, so event times are CLOCK_MONOTONIC and line up
//! with [`crate::clock::monotonic_ns`], and `overwrite` off, so a full buffer keeps the
//! beginning of a run and drops the rest instead of the other way round.

use crate::{OsError, OsResult};
use serde::{Deserialize, Serialize};
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

/// One `sched_switch` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchEvent {
    pub cpu: usize,
    /// CLOCK_MONOTONIC nanoseconds (microsecond resolution in the text format).
    pub ts_ns: u64,
    pub prev_comm: String,
    pub prev_pid: i32,
    pub prev_prio: i32,
    /// `R` (or `R+`) = pre-empted while runnable; `S`, `D`, ... = blocked.
    pub prev_state: String,
    pub next_comm: String,
    pub next_pid: i32,
    pub next_prio: i32,
}

impl SwitchEvent {
    /// The outgoing task was still runnable: an involuntary switch.
    pub fn preempted(&self) -> bool {
        self.prev_state.starts_with('R')
    }
}

/// A private trace instance recording `sched:sched_switch`; removed on drop.
#[derive(Debug)]
pub struct Instance {
    dir: PathBuf,
}

impl Instance {
    /// Create `instances/<name>` under `fs` with a per-CPU buffer of `buffer_kb`, the mono
    /// clock, overwrite off and sched_switch enabled (tracing stays off until [`Instance::on`]).
    pub fn create(fs: &TraceFs, name: &str, buffer_kb: usize) -> OsResult<Self> {
        if name.is_empty() || name.contains('/') {
            return Err(OsError::invalid("trace instance name", name, "must be a plain, non-empty name"));
        }
        let dir = fs.root.join("instances").join(name);
        std::fs::create_dir(&dir)
            .map_err(|e| OsError::from_io(format!("creating trace instance {}", dir.display()), e))?;
        let inst = Instance { dir };
        inst.write("tracing_on", "0")?;
        inst.write("trace_clock", "mono")?;
        inst.write("options/overwrite", "0")?;
        inst.write("buffer_size_kb", &buffer_kb.to_string())?;
        inst.write("events/sched/sched_switch/enable", "1")?;
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

    /// Read and parse every sched_switch event in the buffer (tracing should be off).
    pub fn read_switches(&self) -> OsResult<Vec<SwitchEvent>> {
        let path = self.dir.join("trace");
        let text =
            std::fs::read_to_string(&path).map_err(|e| OsError::from_io(format!("reading {}", path.display()), e))?;
        Ok(text.lines().filter_map(parse_switch_line).collect())
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Err(e) = remove_instance_dir(&self.dir) {
            eprintln!("schedlab: could not remove trace instance {} ({e}); rmdir it by hand", self.dir.display());
        }
    }
}

/// Stop an instance recording and remove it.
fn remove_instance_dir(dir: &Path) -> std::io::Result<()> {
    let _ = std::fs::write(dir.join("tracing_on"), "0");
    let _ = std::fs::write(dir.join("events/sched/sched_switch/enable"), "0");
    std::fs::remove_dir(dir)
}

/// Parse one line of the text `trace` file, e.g.
/// `  bash-1234  [001] d..2.  5.123456: sched_switch: prev_comm=bash prev_pid=1234 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120`.
/// Comments and other events give `None`.
pub fn parse_switch_line(line: &str) -> Option<SwitchEvent> {
    let (head, body) = line.split_once(": sched_switch: ")?;
    let cpu_start = head.find('[')?;
    let cpu_end = head[cpu_start..].find(']')? + cpu_start;
    let cpu: usize = head[cpu_start + 1..cpu_end].trim().parse().ok()?;
    let ts_text = head.rsplit(' ').next()?.trim_end_matches(':');
    let (secs, frac) = ts_text.split_once('.')?;
    let frac_ns: u64 = format!("{frac:0<9}")[..9].parse().ok()?;
    let ts_ns = secs.parse::<u64>().ok()? * 1_000_000_000 + frac_ns;
    let (prev, next) = body.split_once(" ==> ")?;
    // comm may contain spaces, so split on the known keys rather than on whitespace.
    let field = |s: &str, key: &str, next_key: Option<&str>| -> Option<String> {
        let start = s.find(key)? + key.len();
        let rest = &s[start..];
        let end = match next_key {
            Some(k) => rest.find(k)?,
            None => rest.len(),
        };
        Some(rest[..end].trim().to_string())
    };
    Some(SwitchEvent {
        cpu,
        ts_ns,
        prev_comm: field(prev, "prev_comm=", Some(" prev_pid="))?,
        prev_pid: field(prev, "prev_pid=", Some(" prev_prio="))?.parse().ok()?,
        prev_prio: field(prev, "prev_prio=", Some(" prev_state="))?.parse().ok()?,
        prev_state: field(prev, "prev_state=", None)?,
        next_comm: field(next, "next_comm=", Some(" next_pid="))?,
        next_pid: field(next, "next_pid=", Some(" next_prio="))?.parse().ok()?,
        next_prio: field(next, "next_prio=", None)?.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_switch_lines() {
        let l = "  kworker/u4:1 x-37      [001] d..2.  1234.567891: sched_switch: prev_comm=kworker/u4:1 x \
                 prev_pid=37 prev_prio=120 prev_state=R+ ==> next_comm=schedlab next_pid=4242 next_prio=49";
        let e = parse_switch_line(l).unwrap();
        assert_eq!(e.cpu, 1);
        assert_eq!(e.ts_ns, 1_234_567_891_000);
        assert_eq!(e.prev_comm, "kworker/u4:1 x");
        assert_eq!((e.prev_pid, e.prev_prio), (37, 120));
        assert!(e.preempted());
        assert_eq!((e.next_comm.as_str(), e.next_pid, e.next_prio), ("schedlab", 4242, 49));
        assert!(parse_switch_line("# tracer: nop").is_none());
        assert!(parse_switch_line("  bash-1 [000] d..2. 1.5: sched_wakeup: comm=x pid=2").is_none());
    }

    #[test]
    fn instances_of_dead_processes_are_removed_and_live_ones_kept() {
        if !crate::root_for_test("tracefs") {
            return;
        }
        let fs = TraceFs::open().unwrap();
        let prefix = format!("schedlab-orphan-test-{}-", std::process::id());
        // Above any pid_max (at most 2^22), so no such process can exist.
        let dead = Instance::create(&fs, &format!("{prefix}99999999"), 64).unwrap();
        let dead_dir = dead.dir().to_path_buf();
        std::mem::forget(dead);
        let live = Instance::create(&fs, &format!("{prefix}{}", std::process::id()), 64).unwrap();
        assert_eq!(Instance::remove_orphans(&fs, &prefix), 1);
        assert!(!dead_dir.exists());
        assert!(live.dir().exists());
    }

    #[test]
    fn captures_our_own_switches_when_root() {
        if !crate::root_for_test("tracefs") {
            return;
        }
        let fs = TraceFs::open().unwrap();
        let inst = Instance::create(&fs, &format!("schedlab-test-{}", std::process::id()), 256).unwrap();
        inst.clear().unwrap();
        inst.on(true).unwrap();
        for _ in 0..5 {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        inst.on(false).unwrap();
        let ev = inst.read_switches().unwrap();
        let me = nix::unistd::gettid().as_raw();
        assert!(
            ev.iter().any(|e| e.prev_pid == me && !e.preempted()),
            "no voluntary switch of ours among {}",
            ev.len()
        );
        let dir = inst.dir().to_path_buf();
        drop(inst);
        assert!(!dir.exists());
    }
}
