//! One journal of what live runs change on the machine, so that a run killed without a chance
//! to clean up (SIGKILL from an OOM killer, `timeout -s KILL`, a cluster's wall-time limit) can
//! be undone afterwards.
//!
//! Every change a live run makes goes through [`record`] first: it appends one JSON line to the
//! run's own file, `<state dir>/journal/<pid>.<start ticks>.jsonl`, naming what is about to
//! change and how to undo it ([`Change`]). The guard that made the change undoes it on every
//! normal exit path and then drops its [`Entry`], which appends an "undone" line. A file's
//! *owner* is the process named by pid and start time (never a reused pid); its first line holds
//! the boot id, so a file from before a reboot is discarded unread.
//!
//! [`heal`] undoes every entry whose owner is gone: it kills the owner's process groups (the
//! net under `PR_SET_PDEATHSIG`, which cannot reach a shell's grandchildren), removes its
//! cgroups and trace instances and writes back its IRQ masks. `schedlab restore` runs it, and so
//! does every live command before it starts, so the machine heals itself on the next use.
//!
//! A child is journaled just after fork(2) returns its pid; in the gap before, its
//! `PR_SET_PDEATHSIG` already kills it if the parent dies.

use crate::irq::{write_back, SavedMask};
use crate::procfs;
use crate::{OsError, OsResult};
use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The environment variable that moves the state directory (tests, unusual systems).
pub const STATE_DIR_ENV: &str = "SCHEDLAB_STATE_DIR";

/// One change a live run makes, with what undoing it needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// A process group the run started: its leader's pid (= the group id) and start time. Undo:
    /// SIGKILL every member (see [`kill_group`] for why a reused pid is never hit).
    ProcessGroup { pgid: i32, start_ticks: u64, what: String },
    /// A cgroup directory the run creates, with the hierarchy root its processes return to.
    /// Undo: move any process back to the root and remove the tree, deepest first.
    Cgroup { path: PathBuf, root: PathBuf },
    /// A tracefs instance the run creates. Undo: tracing off, remove it.
    TraceInstance { path: PathBuf },
    /// IRQ masks as found before steering. Undo: write them back.
    IrqMasks { saved: Vec<SavedMask> },
    /// A kernel setting (a `/proc/sys` file) as found before the run changed it. Undo: write
    /// `value` back.
    Setting { path: PathBuf, value: String },
}

impl Change {
    /// One line for a person.
    pub fn describe(&self) -> String {
        match self {
            Change::ProcessGroup { pgid, what, .. } => format!("process group {pgid} ({what})"),
            Change::Cgroup { path, .. } => format!("cgroup {}", path.display()),
            Change::TraceInstance { path } => format!("trace instance {}", path.display()),
            Change::IrqMasks { saved } => format!("{} IRQ masks", saved.len()),
            Change::Setting { path, value } => format!("{} (back to {value})", path.display()),
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum Line {
    Owner { boot_id: String, pid: u32, command: String },
    Made { id: u64, change: Change },
    Undone { undone: u64 },
}

/// A recorded change. Dropping it marks the change undone; the guard that made the change
/// drops it after undoing. [`Entry::keep`] leaves it for [`heal`] (an undo that failed).
#[must_use = "dropping the entry marks the change as undone"]
#[derive(Debug)]
pub struct Entry {
    id: u64,
}

impl Entry {
    /// Leave the change in the journal: this process could not undo it.
    pub fn keep(self) {
        std::mem::forget(self);
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        let mut guard = RECORDER.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = guard.as_mut() {
            let _ = r.append(&Line::Undone { undone: self.id });
        }
    }
}

/// This process's journal file, opened on the first change.
struct Recorder {
    file: File,
    next: u64,
}

impl Recorder {
    fn append(&mut self, line: &Line) -> std::io::Result<()> {
        let mut text = serde_json::to_string(line).expect("journal lines serialise");
        text.push('\n');
        // One write on an O_APPEND file: lines from different threads never interleave.
        self.file.write_all(text.as_bytes())
    }
}

static RECORDER: Mutex<Option<Recorder>> = Mutex::new(None);

/// Where schedlab keeps its journal and locks: `$SCHEDLAB_STATE_DIR`, else `/run/schedlab` for
/// root (tmpfs: gone at reboot, like every change it records), else the user's runtime
/// directory.
pub fn state_dir() -> PathBuf {
    if let Some(d) = std::env::var_os(STATE_DIR_ENV).filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    if crate::is_root() {
        return PathBuf::from(crate::irq::DEFAULT_STATE_DIR);
    }
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d).join("schedlab"),
        None => std::env::temp_dir().join(format!("schedlab-{}", nix::unistd::geteuid())),
    }
}

fn journal_dir(state: &Path) -> PathBuf {
    state.join("journal")
}

/// Record `change` before making it. Fails if the journal cannot be written: a change that
/// could not be undone after a crash is not made.
pub fn record(change: Change) -> OsResult<Entry> {
    let mut guard = RECORDER.lock().unwrap_or_else(|p| p.into_inner());
    if guard.is_none() {
        *guard = Some(open_own_file(&state_dir())?);
    }
    let r = guard.as_mut().expect("opened above");
    let id = r.next;
    r.next += 1;
    r.append(&Line::Made { id, change })
        .map_err(|e| OsError::from_io("writing the schedlab journal (see `schedlab restore --help`)", e))?;
    Ok(Entry { id })
}

fn open_own_file(state: &Path) -> OsResult<Recorder> {
    let dir = journal_dir(state);
    std::fs::create_dir_all(&dir).map_err(|e| OsError::from_io(format!("creating {}", dir.display()), e))?;
    let me = procfs::ProcessIdentity::current();
    let path = dir.join(format!("{}.jsonl", own_name()));
    let file = File::options()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| OsError::from_io(format!("opening the journal {}", path.display()), e))?;
    let mut r = Recorder { file, next: 0 };
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    r.append(&Line::Owner { boot_id: me.boot_id, pid: me.pid, command })
        .map_err(|e| OsError::from_io(format!("writing {}", path.display()), e))?;
    Ok(r)
}

/// A process group this run just started, journaled: its leader's start time and the entry.
/// On failure the group is killed (it could not be undone after a crash).
pub fn record_group(pgid: i32, what: String) -> OsResult<GroupEntry> {
    let start_ticks = procfs::stat(pgid).map_or(0, |s| s.start_ticks);
    match record(Change::ProcessGroup { pgid, start_ticks, what }) {
        Ok(entry) => Ok(GroupEntry { pgid, start_ticks, entry: Some(entry) }),
        Err(e) => {
            // SAFETY: plain syscall on the group we just created.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            Err(e)
        }
    }
}

/// A journaled process group. Dropping it kills whatever is left of the group (a shell's
/// grandchildren, which `PR_SET_PDEATHSIG` does not reach), then marks the entry undone.
#[derive(Debug)]
pub struct GroupEntry {
    pgid: i32,
    start_ticks: u64,
    entry: Option<Entry>,
}

impl Drop for GroupEntry {
    fn drop(&mut self) {
        if let Err(why) = kill_group(self.pgid, self.start_ticks, Duration::from_secs(2)) {
            eprintln!("schedlab: process group {}: {why}; `schedlab restore` retries", self.pgid);
            if let Some(e) = self.entry.take() {
                e.keep();
            }
        }
    }
}

/// What [`heal`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Healed {
    /// Journals of dead runs that were read.
    pub runs: Vec<String>,
    /// What was undone, one line each.
    pub undone: Vec<String>,
    /// What could not be undone (its journal stays for the next try).
    pub failed: Vec<String>,
}

impl Healed {
    /// True when nothing was left behind.
    pub fn is_empty(&self) -> bool {
        self.undone.is_empty() && self.failed.is_empty()
    }
}

/// Undo everything recorded by runs that are gone, in the default state directory.
pub fn heal() -> OsResult<Healed> {
    heal_in(&state_dir())
}

/// Undo everything recorded in `state`'s journal by runs that are gone. Journals of live runs
/// (including this process) are left alone; a journal another healer holds is skipped.
pub fn heal_in(state: &Path) -> OsResult<Healed> {
    let dir = journal_dir(state);
    let mut healed = Healed::default();
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(healed),
        Err(e) => return Err(OsError::from_io(format!("listing {}", dir.display()), e)),
    };
    for e in entries.flatten() {
        let path = e.path();
        let Some((pid, start)) = owner_of(&path) else { continue };
        if !owner_alive(pid, start) {
            heal_file(&path, &mut healed)?;
        }
    }
    Ok(healed)
}

/// Undo what one run (pid and start time) left, once it has ended: the guardian's job. Waits up
/// to `limit` for the owner to be gone (a zombie counts as gone).
pub fn heal_owner(state: &Path, pid: u32, start_ticks: u64, limit: Duration) -> OsResult<Healed> {
    let t0 = Instant::now();
    while owner_alive(pid, start_ticks) {
        if t0.elapsed() > limit {
            return Err(OsError::unsupported(
                format!("healing after process {pid}"),
                "it is still running".to_string(),
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut healed = Healed::default();
    let path = journal_dir(state).join(format!("{pid}.{start_ticks}.jsonl"));
    if path.exists() {
        heal_file(&path, &mut healed)?;
    }
    Ok(healed)
}

/// Whether the process with this pid and start time still runs (a zombie has ended).
fn owner_alive(pid: u32, start_ticks: u64) -> bool {
    procfs::stat(pid as i32).is_some_and(|s| s.start_ticks == start_ticks && !matches!(s.state, 'Z' | 'X'))
}

/// `<pid>.<start ticks>.jsonl` → (pid, start ticks).
fn owner_of(path: &Path) -> Option<(u32, u64)> {
    parse_owner(path.file_name()?.to_str()?.strip_suffix(".jsonl")?)
}

/// `PID.START` (how a journal names its owner) → (pid, start ticks).
pub fn parse_owner(text: &str) -> Option<(u32, u64)> {
    let (pid, start) = text.split_once('.')?;
    Some((pid.parse().ok()?, start.parse().ok()?))
}

/// How a journal names the current process: `PID.START`.
pub fn own_name() -> String {
    let me = procfs::ProcessIdentity::current();
    format!("{}.{}", me.pid, me.start_ticks)
}

fn heal_file(path: &Path, healed: &mut Healed) -> OsResult<()> {
    let file = File::options()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| OsError::from_io(format!("opening {}", path.display()), e))?;
    let Ok(_lock) = Flock::lock(file, FlockArg::LockExclusiveNonblock) else {
        return Ok(()); // another `restore` is healing it right now
    };
    let text = std::fs::read_to_string(path).map_err(|e| OsError::from_io(format!("reading {}", path.display()), e))?;
    let (owner, pending) = pending_changes(&text);
    let boot = procfs::boot_id();
    let same_boot = owner.as_ref().is_none_or(|(b, _)| b.is_empty() || boot.is_empty() || *b == boot);
    let mut failed = false;
    if same_boot && !pending.is_empty() {
        healed.runs.push(owner.map_or_else(|| path.display().to_string(), |(_, cmd)| cmd));
        // Processes first, so cgroups are empty when removed; the rest newest first.
        let (groups, others): (Vec<_>, Vec<_>) =
            pending.into_iter().partition(|c| matches!(c, Change::ProcessGroup { .. }));
        for change in groups.into_iter().chain(others.into_iter().rev()) {
            match undo(&change) {
                Ok(()) => healed.undone.push(change.describe()),
                Err(why) => {
                    failed = true;
                    healed.failed.push(format!("{}: {why}", change.describe()));
                }
            }
        }
    }
    if !failed {
        std::fs::remove_file(path).map_err(|e| OsError::from_io(format!("removing {}", path.display()), e))?;
    }
    Ok(())
}

/// The owner line (boot id, command) and the changes made but not undone, in record order. A
/// torn last line (the owner died mid-write) is ignored: its change had not been made yet.
fn pending_changes(text: &str) -> (Option<(String, String)>, Vec<Change>) {
    let mut owner = None;
    let mut made: Vec<(u64, Change)> = Vec::new();
    let mut undone = std::collections::HashSet::new();
    for line in text.lines() {
        match serde_json::from_str::<Line>(line) {
            Ok(Line::Owner { boot_id, command, .. }) => owner = Some((boot_id, command)),
            Ok(Line::Made { id, change }) => made.push((id, change)),
            Ok(Line::Undone { undone: id }) => {
                undone.insert(id);
            }
            Err(_) => {}
        }
    }
    (owner, made.into_iter().filter(|(id, _)| !undone.contains(id)).map(|(_, c)| c).collect())
}

fn undo(change: &Change) -> Result<(), String> {
    match change {
        Change::ProcessGroup { pgid, start_ticks, .. } => kill_group(*pgid, *start_ticks, Duration::from_secs(10)),
        Change::Cgroup { path, root } => remove_cgroup_tree(path, root),
        Change::TraceInstance { path } => remove_trace_instance(path),
        Change::IrqMasks { saved } => {
            let r = write_back(saved);
            match r.failed.first() {
                None => Ok(()),
                Some(f) => Err(format!("IRQ {}: {}", f.irq, f.error)),
            }
        }
        Change::Setting { path, value } => {
            std::fs::write(path, value).map_err(|e| format!("writing {value} to {}: {e}", path.display()))
        }
    }
}

/// Every live (non-zombie) process in group `pgid`.
pub fn group_members(pgid: i32) -> Vec<i32> {
    let Ok(rd) = std::fs::read_dir("/proc") else { return Vec::new() };
    rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| procfs::stat(pid).is_some_and(|s| s.pgrp == pgid && s.state != 'Z'))
        .collect()
}

/// SIGKILL process group `pgid`, whose leader started at `start_ticks`, and wait up to `limit`
/// for its members to die. A reused number is never hit: Linux does not hand out a pid while a
/// process still uses it as its group id, so if the leader's pid now belongs to a process with
/// another start time, the old group had emptied first and the present one is someone else's.
pub fn kill_group(pgid: i32, start_ticks: u64, limit: Duration) -> Result<(), String> {
    if pgid <= 1 {
        return Err(format!("refusing to signal process group {pgid}"));
    }
    if procfs::stat(pgid).is_some_and(|s| s.start_ticks != start_ticks) {
        return Ok(());
    }
    let t0 = Instant::now();
    loop {
        if group_members(pgid).is_empty() {
            return Ok(());
        }
        // SAFETY: plain syscall; ESRCH (the group just emptied) is fine.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        if t0.elapsed() > limit {
            return Err(format!("members {:?} still alive after SIGKILL", group_members(pgid)));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Remove a cgroup tree, deepest first.
fn remove_cgroup_tree(path: &Path, root: &Path) -> Result<(), String> {
    if !path.is_dir() {
        return Ok(());
    }
    let subdirs: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| format!("listing {}: {e}", path.display()))?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    for d in subdirs {
        remove_cgroup_tree(&d, root)?;
    }
    crate::cgroup::remove_group(root, path)
}

fn remove_trace_instance(path: &Path) -> Result<(), String> {
    match crate::tracefs::remove_instance_dir(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("removing {}: {e}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    fn write_journal(state: &Path, pid: u32, start: u64, lines: &[Line]) -> PathBuf {
        let dir = journal_dir(state);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{pid}.{start}.jsonl"));
        let text: String = lines.iter().map(|l| serde_json::to_string(l).unwrap() + "\n").collect();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn owner_line(boot_id: String) -> Line {
        Line::Owner { boot_id, pid: 1, command: "schedlab test".into() }
    }

    /// A `sleep 60` leading its own process group, with its pid and start time.
    fn sleeper() -> (std::process::Child, i32, u64) {
        let child = std::process::Command::new("sleep").arg("60").process_group(0).spawn().unwrap();
        let pid = child.id() as i32;
        let start = procfs::stat(pid).unwrap().start_ticks;
        (child, pid, start)
    }

    #[test]
    fn pending_changes_are_those_made_and_not_undone_and_a_torn_line_is_ignored() {
        let a = Change::TraceInstance { path: "/x/a".into() };
        let b = Change::TraceInstance { path: "/x/b".into() };
        let text = [
            serde_json::to_string(&owner_line("boot".into())).unwrap(),
            serde_json::to_string(&Line::Made { id: 0, change: a }).unwrap(),
            serde_json::to_string(&Line::Made { id: 1, change: b.clone() }).unwrap(),
            serde_json::to_string(&Line::Undone { undone: 0 }).unwrap(),
            "{\"id\":2,\"change\":{\"kind\":\"trace_ins".to_string(),
        ]
        .join("\n");
        let (owner, pending) = pending_changes(&text);
        assert_eq!(owner, Some(("boot".into(), "schedlab test".into())));
        assert_eq!(pending, vec![b]);
    }

    #[test]
    fn a_dead_runs_process_group_is_killed_and_its_journal_removed_while_a_live_runs_stays() {
        let state = tempfile::tempdir().unwrap();
        let (mut sleeper, pid, start) = sleeper();
        let me = procfs::ProcessIdentity::current();
        let group = Change::ProcessGroup { pgid: pid, start_ticks: start, what: "sleep 60".into() };
        // Our own pid with a wrong start time: a dead owner whose pid was reused.
        let dead = write_journal(
            state.path(),
            me.pid,
            me.start_ticks + 1,
            &[owner_line(me.boot_id.clone()), Line::Made { id: 0, change: group.clone() }],
        );
        let live = write_journal(
            state.path(),
            me.pid,
            me.start_ticks,
            &[owner_line(me.boot_id.clone()), Line::Made { id: 0, change: group }],
        );
        let healed = heal_in(state.path()).unwrap();
        assert_eq!(healed.undone, vec![format!("process group {pid} (sleep 60)")], "{healed:?}");
        assert!(healed.failed.is_empty());
        let status = sleeper.wait().unwrap();
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(libc::SIGKILL));
        assert!(!dead.exists(), "the dead run's journal stays");
        assert!(live.exists(), "a live run's journal was touched");
    }

    #[test]
    fn a_group_whose_leader_pid_was_reused_is_left_alone() {
        let (mut sleeper, pid, start) = sleeper();
        kill_group(pid, start + 1, Duration::from_secs(1)).unwrap();
        assert!(sleeper.try_wait().unwrap().is_none(), "a process with another start time was killed");
        kill_group(pid, start, Duration::from_secs(10)).unwrap();
        assert!(sleeper.wait().is_ok());
        assert!(kill_group(1, 0, Duration::ZERO).is_err(), "init's group must never be signalled");
    }

    #[test]
    fn a_journal_from_another_boot_is_discarded_without_undoing() {
        let state = tempfile::tempdir().unwrap();
        let (mut sleeper, pid, start) = sleeper();
        let change = Change::ProcessGroup { pgid: pid, start_ticks: start, what: "sleep".into() };
        let path = write_journal(
            state.path(),
            999_999_999,
            1,
            &[owner_line("another-boot".into()), Line::Made { id: 0, change }],
        );
        let healed = heal_in(state.path()).unwrap();
        assert!(healed.is_empty(), "{healed:?}");
        assert!(!path.exists());
        assert!(sleeper.try_wait().unwrap().is_none(), "a process of this boot was killed");
        sleeper.kill().unwrap();
        sleeper.wait().unwrap();
    }

    #[test]
    fn a_dead_runs_kernel_setting_is_written_back() {
        let state = tempfile::tempdir().unwrap();
        // A plain file stands for /proc/sys/kernel/sched_autogroup_enabled, left at 0 by a run
        // killed before it could put back the 1 it found.
        let setting = state.path().join("sched_autogroup_enabled");
        std::fs::write(&setting, "0").unwrap();
        let me = procfs::ProcessIdentity::current();
        let change = Change::Setting { path: setting.clone(), value: "1".into() };
        let dead = write_journal(
            state.path(),
            me.pid,
            me.start_ticks + 1,
            &[owner_line(me.boot_id.clone()), Line::Made { id: 0, change: change.clone() }],
        );
        let healed = heal_in(state.path()).unwrap();
        assert_eq!(std::fs::read_to_string(&setting).unwrap(), "1");
        assert!(!dead.exists(), "the dead run's journal is removed once healed");
        assert!(!healed.is_empty(), "{healed:?}");
        assert!(change.describe().contains("back to 1"), "{}", change.describe());
    }

    #[test]
    fn trace_instance_and_cgroup_undo_treat_a_missing_directory_as_done() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(remove_trace_instance(&d.path().join("gone")), Ok(()));
        assert_eq!(remove_cgroup_tree(&d.path().join("gone"), d.path()), Ok(()));
        // A plain directory tree stands in for a cgroup tree: removed deepest first.
        std::fs::create_dir_all(d.path().join("g/t0")).unwrap();
        std::fs::create_dir_all(d.path().join("g/t1")).unwrap();
        assert_eq!(remove_cgroup_tree(&d.path().join("g"), d.path()), Ok(()));
        assert!(!d.path().join("g").exists());
    }

    #[test]
    fn recorded_entries_are_marked_undone_when_dropped() {
        // The process-wide recorder writes to the default state dir; read back our own file.
        let entry = record(Change::TraceInstance { path: "/nonexistent/schedlab-journal-test".into() }).unwrap();
        let kept = record(Change::TraceInstance { path: "/nonexistent/schedlab-journal-kept".into() }).unwrap();
        drop(entry);
        let me = procfs::ProcessIdentity::current();
        let own = journal_dir(&state_dir()).join(format!("{}.jsonl", own_name()));
        let (owner, pending) = pending_changes(&std::fs::read_to_string(&own).unwrap());
        assert_eq!(owner.unwrap().0, me.boot_id);
        assert!(pending.contains(&Change::TraceInstance { path: "/nonexistent/schedlab-journal-kept".into() }));
        assert!(!pending.contains(&Change::TraceInstance { path: "/nonexistent/schedlab-journal-test".into() }));
        drop(kept);
    }
}
