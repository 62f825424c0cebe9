//! schedlab-os: the one crate that talks to Linux.
//!
//! Everything above this crate calls safe functions that return [`OsError`] with a sentence a
//! user can act on. Each module wraps one kernel facility; the `unsafe` syscalls live here and
//! nowhere else. Live experiments use the guards in [`sched`] and [`signals`] so that whatever
//! they change (policies, affinity, IRQ masks, cgroups) is restored on every exit path, and
//! [`journal`] records each change first so a run killed with SIGKILL is undone later.

pub mod affinity;
pub mod autogroup;
pub mod cgroup;
pub mod child;
pub mod clock;
pub mod cpulock;
pub mod crypt;
pub mod error;
pub mod irq;
pub mod journal;
pub mod kconfig;
pub mod machine;
pub mod perf;
pub mod process;
pub mod procfs;
pub mod rusage;
pub mod sched;
pub mod sched_signals;
pub mod signals;
pub mod steal;
pub mod test_gate;
pub mod topology;
pub mod tracefs;
pub mod udp;
pub mod usage;

pub use error::{OsError, OsResult};

/// True when the process runs with effective uid 0 (root can use RT policies, IRQ masks, tracefs).
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// For tests that need root: true when root; otherwise failed on CI and skipped (false)
/// elsewhere, through [`test_gate`].
pub fn root_for_test(what: &str) -> bool {
    test_gate::require(what, is_root(), "needs root")
}
