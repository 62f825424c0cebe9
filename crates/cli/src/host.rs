//! What the binary learns about the machine, once per command, through `os`, and hands down:
//! the machine facts experiments describe themselves with, the [`Provenance`] every results
//! document carries, and process liveness for the results database (the `report` crate never
//! reads the machine itself).

use schedlab_lab::{Progress, RunContext, Scale};
use schedlab_os::machine::MachineFacts;
use schedlab_os::procfs::ProcessIdentity;
use schedlab_report::db::{Db, Liveness, Owner};
use schedlab_report::results::Provenance;
use std::path::Path;

/// The machine and the build, collected once.
pub struct Host {
    pub facts: MachineFacts,
    pub provenance: Provenance,
}

impl Host {
    /// Read the machine facts and name this build.
    pub fn collect() -> Self {
        let facts = MachineFacts::collect();
        let provenance = Provenance::new(serde_json::to_value(&facts).unwrap_or_default());
        Host { facts, provenance }
    }

    /// What an experiment is given; `keep_dir`: where it may keep what it makes until its results
    /// are written ([`crate::unfinished`]), `None` when nothing is saved.
    pub fn context<'a>(
        &'a self,
        scale: Scale,
        progress: &'a dyn Progress,
        keep_dir: Option<std::path::PathBuf>,
    ) -> RunContext<'a> {
        RunContext { scale, machine: &self.facts, progress, keep_dir }
    }
}

/// Liveness from `/proc`: a row's owner is gone when its (host, boot, pid, start time) no longer
/// names a live process.
struct ProcLiveness;

impl Liveness for ProcLiveness {
    fn current(&self) -> Owner {
        let p = ProcessIdentity::current();
        Owner { host: p.host, boot_id: p.boot_id, pid: p.pid, start_ticks: p.start_ticks }
    }

    fn is_gone(&self, o: &Owner) -> bool {
        ProcessIdentity { host: o.host.clone(), boot_id: o.boot_id.clone(), pid: o.pid, start_ticks: o.start_ticks }
            .is_gone()
    }
}

/// Open (or create) the results database.
pub fn open_db(path: &Path) -> anyhow::Result<Db> {
    Db::open(path, Box::new(ProcLiveness))
}

/// Open a results database that must already exist.
pub fn open_existing_db(path: &Path) -> anyhow::Result<Db> {
    Db::open_existing(path, Box::new(ProcLiveness))
}
