//! IRQ affinity: read and steer `/proc/irq/N/smp_affinity`, remembering the old masks and
//! restoring them on every exit path.
//!
//! [`IrqSteering::steer`] moves every movable IRQ to a set of CPUs (seed 003 moves them to the
//! core it leaves for the system). It takes an exclusive `flock` on `<dir>/irq.lock` (default
//! dir [`DEFAULT_STATE_DIR`]) for as long as the steering lasts, heals what dead runs left
//! ([`crate::journal::heal`]), and records the old masks in the run's journal
//! ([`crate::journal::Change::IrqMasks`]) before it changes any. Dropping the guard (normal
//! return, error, unwinding panic, or the caller's SIGINT/SIGTERM path) writes the old masks
//! back. If the process dies without unwinding (SIGKILL, `abort`), the journal entry survives and
//! `schedlab restore` — or the next live command — puts the masks back.

use crate::affinity::{format_cpu_list, parse_cpu_list};
use crate::{OsError, OsResult};
use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::Path;

/// Where the journal and lock live by default (tmpfs: gone after a reboot, as are the masks).
pub const DEFAULT_STATE_DIR: &str = "/run/schedlab";
const PROC_IRQ: &str = "/proc/irq";
const LOCK: &str = "irq.lock";

/// Masks this process failed to put back (an IRQ whose earlier move had not completed), by
/// IRQ. A later steering in the same process saves these as the old masks instead of the
/// steered ones it reads, so its restore still aims at the machine as it was found.
static OWED: std::sync::Mutex<std::collections::BTreeMap<u32, String>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

fn owed() -> std::sync::MutexGuard<'static, std::collections::BTreeMap<u32, String>> {
    OWED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Every IRQ number that has a directory under `/proc/irq`, sorted.
pub fn list_irqs() -> OsResult<Vec<u32>> {
    let rd = std::fs::read_dir(PROC_IRQ).map_err(|e| OsError::from_io(format!("listing {PROC_IRQ}"), e))?;
    let mut irqs: Vec<u32> = rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect();
    irqs.sort_unstable();
    Ok(irqs)
}

/// The raw `smp_affinity` text of one IRQ (a hex mask such as `3` or `ffffffff,ffffffff`).
pub fn read_mask(irq: u32) -> OsResult<String> {
    let p = format!("{PROC_IRQ}/{irq}/smp_affinity");
    std::fs::read_to_string(&p).map(|s| s.trim().to_string()).map_err(|e| OsError::from_io(format!("reading {p}"), e))
}

/// The CPUs an IRQ may be delivered to (`smp_affinity_list`).
pub fn read_cpus(irq: u32) -> OsResult<Vec<usize>> {
    let p = format!("{PROC_IRQ}/{irq}/smp_affinity_list");
    let text = std::fs::read_to_string(&p).map_err(|e| OsError::from_io(format!("reading {p}"), e))?;
    parse_cpu_list(&text)
}

/// Write a raw mask to `smp_affinity` (the kernel answers EIO for IRQs it will not move).
pub fn write_mask(irq: u32, mask: &str) -> std::io::Result<()> {
    std::fs::write(format!("{PROC_IRQ}/{irq}/smp_affinity"), mask)
}

/// Point an IRQ at `cpus` through `smp_affinity_list`.
pub fn write_cpus(irq: u32, cpus: &[usize]) -> std::io::Result<()> {
    std::fs::write(format!("{PROC_IRQ}/{irq}/smp_affinity_list"), format_cpu_list(cpus))
}

/// A snapshot of every IRQ's mask (for before/after comparisons).
pub fn snapshot() -> OsResult<Vec<(u32, String)>> {
    list_irqs()?.into_iter().map(|irq| Ok((irq, read_mask(irq)?))).collect()
}

/// One IRQ's saved mask in the journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedMask {
    pub irq: u32,
    pub mask: String,
}

/// An IRQ the kernel would not move, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    pub irq: u32,
    pub error: String,
}

/// What a restore did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RestoreReport {
    pub restored: Vec<u32>,
    /// Masks that could not be written back (or read back differently).
    pub failed: Vec<Refusal>,
}

/// Steered IRQs; the old masks come back when this is dropped.
#[must_use = "the IRQ masks are restored when the guard is dropped"]
pub struct IrqSteering {
    /// IRQs we changed, with their old masks.
    moved: Vec<SavedMask>,
    /// Every mask as found, restored in full: an IRQ whose write reported an error may still
    /// have moved, so restoring only `moved` could leave one behind.
    saved: Vec<SavedMask>,
    refused: Vec<Refusal>,
    /// The journal entry of the old masks: marked undone after they are back (kept if not).
    entry: Option<crate::journal::Entry>,
    /// Held for the guard's lifetime; the kernel drops it if the process dies.
    _lock: Flock<File>,
    restored: bool,
}

impl IrqSteering {
    /// Move every movable IRQ to `target` (journal in [`DEFAULT_STATE_DIR`]).
    pub fn steer(target: &[usize]) -> OsResult<Self> {
        Self::steer_with_dir(target, Path::new(DEFAULT_STATE_DIR))
    }

    /// Move every movable IRQ to `target`, keeping the journal and lock in `dir`.
    pub fn steer_with_dir(target: &[usize], dir: &Path) -> OsResult<Self> {
        if target.is_empty() {
            return Err(OsError::invalid("IRQ target CPUs", "(empty)", "name at least one CPU"));
        }
        let lock = take_lock(dir)?;
        // Masks a dead run left steered go back first, otherwise we would save them as "old".
        let healed = crate::journal::heal()?;
        if !healed.is_empty() {
            eprintln!("schedlab: undid what an earlier run left: {}", healed.undone.join(", "));
        }
        let saved: Vec<SavedMask> = {
            let owed = owed();
            snapshot()?
                .into_iter()
                .map(|(irq, mask)| SavedMask { irq, mask: owed.get(&irq).cloned().unwrap_or(mask) })
                .collect()
        };
        let entry = crate::journal::record(crate::journal::Change::IrqMasks { saved: saved.clone() })?;
        let mut moved = Vec::new();
        let mut refused = Vec::new();
        for s in saved.iter().cloned() {
            match read_cpus(s.irq) {
                Ok(cpus) if cpus == target => continue, // already there: nothing to restore
                _ => {}
            }
            match write_cpus(s.irq, target) {
                Ok(()) => moved.push(s),
                Err(e) => refused.push(Refusal { irq: s.irq, error: describe(&e) }),
            }
        }
        Ok(IrqSteering { moved, saved, refused, entry: Some(entry), _lock: lock, restored: false })
    }

    /// IRQs that were moved.
    pub fn moved(&self) -> Vec<u32> {
        self.moved.iter().map(|s| s.irq).collect()
    }

    /// IRQs the kernel refused to move (EIO for per-CPU or managed interrupts, ...).
    pub fn refused(&self) -> &[Refusal] {
        &self.refused
    }

    /// Put every old mask back now and mark the journal entry undone (also done on drop). A
    /// mask that would not go back keeps the entry for `schedlab restore`.
    pub fn restore(&mut self) -> RestoreReport {
        if self.restored {
            return RestoreReport::default();
        }
        self.restored = true;
        let report = write_back(&self.saved);
        if let Some(entry) = self.entry.take() {
            if !report.failed.is_empty() {
                entry.keep();
            }
        }
        report
    }
}

impl Drop for IrqSteering {
    fn drop(&mut self) {
        let r = self.restore();
        for f in &r.failed {
            eprintln!(
                "schedlab: could not restore IRQ {} ({}); the journal keeps it for `schedlab restore`",
                f.irq, f.error
            );
        }
    }
}

/// Write saved masks back (an IRQ that vanished needs nothing).
pub(crate) fn write_back(saved: &[SavedMask]) -> RestoreReport {
    let mut r = RestoreReport::default();
    for s in saved {
        match write_back_one(s) {
            Ok(()) => {
                owed().remove(&s.irq);
                r.restored.push(s.irq)
            }
            // An IRQ that vanished (device removed) needs no restore.
            Err(_) if !Path::new(&format!("{PROC_IRQ}/{}", s.irq)).exists() => {
                owed().remove(&s.irq);
            }
            Err(e) => {
                owed().insert(s.irq, s.mask.clone());
                r.failed.push(Refusal { irq: s.irq, error: describe(&e) })
            }
        }
    }
    r
}

/// Write one saved mask back and read it back to confirm. x86 answers EBUSY while an earlier
/// move of the same IRQ is still pending (it completes at the IRQ's next interrupt), so a
/// restore right after steering is retried for up to about half a second.
fn write_back_one(s: &SavedMask) -> std::io::Result<()> {
    let mut last = Ok(());
    for attempt in 0..50 {
        if matches!(read_mask(s.irq), Ok(m) if same_mask(&m, &s.mask)) {
            return Ok(());
        }
        if attempt > 0 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        last = write_mask(s.irq, &s.mask);
        if let Err(e) = &last {
            if e.raw_os_error() != Some(libc::EBUSY) {
                return last;
            }
        }
    }
    match last {
        Ok(()) => Err(std::io::Error::other(format!("IRQ {} did not keep mask {}", s.irq, s.mask))),
        err => err,
    }
}

/// Masks compare equal ignoring leading zero groups (`00000003` == `3`).
fn same_mask(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        let t: String = s.chars().filter(|c| *c != ',').collect();
        t.trim_start_matches('0').to_ascii_lowercase()
    };
    norm(a) == norm(b)
}

fn take_lock(dir: &Path) -> OsResult<Flock<File>> {
    std::fs::create_dir_all(dir).map_err(|e| OsError::from_io(format!("creating {}", dir.display()), e))?;
    let p = dir.join(LOCK);
    let f = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&p)
        .map_err(|e| OsError::from_io(format!("opening {}", p.display()), e))?;
    Flock::lock(f, FlockArg::LockExclusiveNonblock).map_err(|(_, e)| {
        if e == nix::errno::Errno::EWOULDBLOCK {
            OsError::Busy {
                what: "IRQ steering".into(),
                why: format!("another schedlab run is steering IRQs right now (it holds {})", p.display()),
            }
        } else {
            OsError::from_io(format!("locking {}", p.display()), e.into())
        }
    })
}

fn describe(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EIO) => "EIO: the kernel does not allow moving this IRQ".to_string(),
        Some(libc::EINVAL) => "EINVAL: the target CPUs are not valid for this IRQ".to_string(),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_compare_without_leading_zeros() {
        assert!(same_mask("00000003", "3"));
        assert!(same_mask("00000000,00000003", "3"));
        assert!(!same_mask("1", "3"));
    }

    #[test]
    fn irqs_are_listed() {
        let irqs = list_irqs().unwrap();
        // Every Linux machine has some IRQ directory; masks are readable.
        assert!(!irqs.is_empty());
        assert!(!read_mask(irqs[0]).unwrap().is_empty());
    }

    #[test]
    fn second_steerer_is_refused_while_the_first_holds_the_lock() {
        let d = tempfile::tempdir().unwrap();
        let _held = take_lock(d.path()).unwrap();
        let e = take_lock(d.path()).unwrap_err().to_string();
        assert!(e.contains("another schedlab run"), "{e}");
    }
}
