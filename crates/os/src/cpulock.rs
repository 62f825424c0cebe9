//! A lock per CPU for live experiments: two runs that put real-time work on the same CPU would
//! each get about half of it and measure nonsense (two `wrr run` on CPU 1 stretch each other's
//! slices from 0.025 ms to 10 ms), so the second is refused up front, naming the holder.
//!
//! Each CPU has a lock file `<state dir>/cpu<N>.lock` (see [`crate::journal::state_dir`]); a run
//! takes an exclusive `flock` on the file of every CPU it pins work to, and writes its pid and
//! command line into it for the refusal message. The kernel drops a flock when its holder dies,
//! so a run killed with SIGKILL never leaves a CPU locked. Within one process the locks are
//! counted, so nested users (a benchmark starting a manager per repetition) do not refuse
//! themselves. [`set_force`] (the `--force` of live commands) turns a refusal into a warning.

use crate::{OsError, OsResult};
use nix::fcntl::{Flock, FlockArg};
use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static FORCE: AtomicBool = AtomicBool::new(false);

/// Held locks of this process: CPU → (count, the locked file).
type Held = HashMap<usize, (usize, Flock<File>)>;
static HELD: Mutex<Option<Held>> = Mutex::new(None);

/// Run even when another run holds a CPU (the deliberate case: measuring interference).
pub fn set_force(on: bool) {
    FORCE.store(on, Ordering::Relaxed);
}

/// CPUs locked for one run; released when dropped.
#[must_use = "the CPUs are unlocked when this is dropped"]
#[derive(Debug)]
pub struct CpuLock {
    cpus: Vec<usize>,
}

impl CpuLock {
    /// Lock `cpus` for `what` (a command name for messages) in the default state directory.
    pub fn acquire(cpus: &[usize], what: &str) -> OsResult<CpuLock> {
        Self::acquire_in(&crate::journal::state_dir(), cpus, what)
    }

    /// Lock `cpus` with the lock files in `dir`.
    pub fn acquire_in(dir: &Path, cpus: &[usize], what: &str) -> OsResult<CpuLock> {
        std::fs::create_dir_all(dir).map_err(|e| OsError::from_io(format!("creating {}", dir.display()), e))?;
        let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
        let held = held.get_or_insert_with(HashMap::new);
        let mut taken = Vec::new();
        for &cpu in cpus {
            if let Some((count, _)) = held.get_mut(&cpu) {
                *count += 1;
                taken.push(cpu);
                continue;
            }
            match lock_file(&lock_path(dir, cpu)) {
                Ok(Some(lock)) => {
                    held.insert(cpu, (1, lock));
                    taken.push(cpu);
                }
                Ok(None) if FORCE.load(Ordering::Relaxed) => eprintln!(
                    "schedlab: CPU {cpu} is in use by another run ({}); going on because of --force",
                    holder(dir, cpu)
                ),
                Ok(None) => {
                    release(held, &taken);
                    return Err(OsError::Busy {
                        what: format!("CPU {cpu} (for {what})"),
                        why: format!(
                            "another schedlab run holds it ({}); wait for it, choose other CPUs, or pass --force \
                             to share it (both runs' measurements then suffer)",
                            holder(dir, cpu)
                        ),
                    });
                }
                Err(e) => {
                    release(held, &taken);
                    return Err(e);
                }
            }
        }
        Ok(CpuLock { cpus: taken })
    }

    /// The CPUs this lock holds.
    pub fn cpus(&self) -> &[usize] {
        &self.cpus
    }
}

impl Drop for CpuLock {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(held) = held.as_mut() {
            release(held, &self.cpus);
        }
    }
}

fn release(held: &mut Held, cpus: &[usize]) {
    for cpu in cpus {
        if let Some((count, _)) = held.get_mut(cpu) {
            *count -= 1;
            if *count == 0 {
                held.remove(cpu); // dropping the Flock unlocks
            }
        }
    }
}

fn lock_path(dir: &Path, cpu: usize) -> PathBuf {
    dir.join(format!("cpu{cpu}.lock"))
}

/// Lock one file; `Ok(None)` when another process holds it. The holder's identity is written
/// into the file once locked.
fn lock_file(path: &Path) -> OsResult<Option<Flock<File>>> {
    let f = File::options()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| OsError::from_io(format!("opening {}", path.display()), e))?;
    match Flock::lock(f, FlockArg::LockExclusiveNonblock) {
        Ok(mut lock) => {
            let who = format!("pid {}: {}", std::process::id(), std::env::args().collect::<Vec<_>>().join(" "));
            let _ = lock.set_len(0);
            let _ = lock.rewind();
            let _ = lock.write_all(who.as_bytes());
            Ok(Some(lock))
        }
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, e)) => Err(OsError::from_io(format!("locking {}", path.display()), e.into())),
    }
}

/// Who holds CPU `cpu`'s lock, as its holder wrote it.
fn holder(dir: &Path, cpu: usize) -> String {
    let mut text = String::new();
    let _ = File::open(lock_path(dir, cpu)).and_then(|mut f| f.read_to_string(&mut text));
    if text.trim().is_empty() {
        "holder unknown".to_string()
    } else {
        text.trim().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hold the flock of `file` from another process (flock(1) from util-linux execs `sleep`
    /// with the lock held), until killed.
    fn hold_in_another_process(file: &Path) -> std::process::Child {
        std::fs::write(file, "").unwrap();
        let c = std::process::Command::new("flock")
            .args(["--exclusive", "--no-fork"])
            .arg(file)
            .args(["sleep", "30"])
            .spawn()
            .expect("flock(1) from util-linux");
        // Until it holds the lock.
        let t0 = std::time::Instant::now();
        while lock_file(file).unwrap().is_some() {
            assert!(t0.elapsed() < std::time::Duration::from_secs(10), "flock(1) never took the lock");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        std::fs::write(file, "pid 4242: schedlab wrr run --cpus 1").unwrap();
        c
    }

    #[test]
    fn a_cpu_held_by_another_process_is_refused_naming_the_holder_and_force_lets_it_through() {
        let d = tempfile::tempdir().unwrap();
        // CPU numbers no other test uses, so the process-wide counts stay ours.
        let mut other = hold_in_another_process(&lock_path(d.path(), 901));
        let err = CpuLock::acquire_in(d.path(), &[900, 901], "wrr run").unwrap_err().to_string();
        assert!(err.contains("CPU 901") && err.contains("pid 4242: schedlab wrr run --cpus 1"), "{err}");
        // The refusal released CPU 900 again.
        assert!(lock_file(&lock_path(d.path(), 900)).unwrap().is_some(), "CPU 900 stayed locked");
        set_force(true);
        let forced = CpuLock::acquire_in(d.path(), &[900, 901], "wrr run");
        set_force(false);
        assert_eq!(forced.unwrap().cpus(), &[900]);
        other.kill().unwrap();
        other.wait().unwrap();
        // The kernel dropped the dead holder's lock.
        assert_eq!(CpuLock::acquire_in(d.path(), &[901], "wrr run").unwrap().cpus(), &[901]);
    }

    #[test]
    fn one_process_may_nest_its_locks_and_the_last_release_unlocks() {
        let d = tempfile::tempdir().unwrap();
        let outer = CpuLock::acquire_in(d.path(), &[910], "bench").unwrap();
        let inner = CpuLock::acquire_in(d.path(), &[910], "manager").unwrap();
        drop(outer);
        // Still held by `inner`: another open of the file cannot lock it.
        assert!(lock_file(&lock_path(d.path(), 910)).unwrap().is_none());
        drop(inner);
        assert!(lock_file(&lock_path(d.path(), 910)).unwrap().is_some());
    }
}
