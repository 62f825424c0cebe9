//! `schedlab restore`: undo what live runs that are gone left on the machine (read from the
//! journal, see `schedlab_os::journal`); the same heal run before every live command; and the
//! guardian every live command starts, which undoes the command's changes the moment it dies.
//!
//! The guardian exists because `PR_SET_PDEATHSIG` is not enough: it cannot reach a shell's
//! grandchildren, it is dropped by set-uid programs, and on some kernels it is not delivered at
//! all when the parent process dies (seen on this project's 6.18 Firecracker VMs: children set up
//! with it outlive a parent killed with SIGKILL). The guardian is `schedlab restore --guard
//! PID.START` in its own process group, so Ctrl-C in the terminal does not reach it; it blocks
//! reading a pipe whose only write end the live command holds, and at end-of-file — the command
//! has ended, however it ended — it heals that command's journal and exits.

use anyhow::{bail, Context, Result};
use schedlab_os::journal::{self, Healed};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `schedlab restore`.
#[derive(clap::Args)]
#[command(after_long_help = "\
Before a live run changes anything it writes what it is about to change to its journal, one file
per run under the state directory's journal/ folder: the process groups it starts (pid and start
time), the cgroups and trace instances it creates, the IRQ masks it moves, the kernel settings it
changes (validate's autogroup). A run that ends in any
normal way (done, error, Ctrl-C, SIGTERM, SIGHUP, a panic) undoes its changes itself. A run killed
with SIGKILL cannot; restore then undoes, for every journal whose run is gone (pid and start time
no longer match a live process):
  - kills what is left of its process groups (never a reused pid),
  - moves processes out of its cgroups and removes them, deepest first,
  - turns its trace instances off and removes them,
  - writes its IRQ masks back,
  - writes its kernel settings back.
Journals of runs still alive are left alone. Every live command does the same before it starts,
so the machine heals itself on the next use; restore is for doing it now.

Examples:
  sudo schedlab restore
  schedlab restore --state-dir /tmp/schedlab-test")]
pub struct Args {
    /// The state directory (default: $SCHEDLAB_STATE_DIR, else /run/schedlab for root, else
    /// $XDG_RUNTIME_DIR/schedlab).
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// (internal) Guard the run PID.START: wait for end-of-file on stdin, then undo its journal.
    #[arg(long, hide = true, value_name = "PID.START")]
    guard: Option<String>,
}

/// Run `schedlab restore` (and `schedlab taskman restore`).
pub fn run(a: Args) -> Result<()> {
    let dir = a.state_dir.unwrap_or_else(journal::state_dir);
    if let Some(owner) = a.guard {
        return guard(&dir, &owner);
    }
    let healed = journal::heal_in(&dir)?;
    if healed.is_empty() {
        println!("nothing to restore: no run that is gone left changes in {}", dir.join("journal").display());
        return Ok(());
    }
    for run in &healed.runs {
        println!("run that is gone: {run}");
    }
    for u in &healed.undone {
        println!("  undone: {u}");
    }
    if !healed.failed.is_empty() {
        bail!(
            "{} change(s) could not be undone (their journal stays for the next try): {}",
            healed.failed.len(),
            healed.failed.join("; ")
        );
    }
    Ok(())
}

/// The guardian's body: block until the owner's pipe closes, then heal its journal.
fn guard(dir: &std::path::Path, owner: &str) -> Result<()> {
    let (pid, start) = journal::parse_owner(owner).with_context(|| format!("--guard takes PID.START, not {owner}"))?;
    let mut sink = [0u8; 64];
    let mut stdin = std::io::stdin();
    while stdin.read(&mut sink).is_ok_and(|n| n > 0) {}
    let healed = journal::heal_owner(dir, pid, start, Duration::from_secs(30))?;
    report(&healed, &format!("run {pid} ended without cleaning up; its guardian undid"));
    Ok(())
}

/// Start this process's guardian (see the module documentation). Its pipe's write end is kept
/// open for the rest of the process's life and closes when the process ends, however it ends.
pub fn start_guardian() {
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("schedlab: no guardian for this run ({e}); after a SIGKILL run `schedlab restore`");
            return;
        }
    };
    let spawned = std::process::Command::new(exe)
        .args(["restore", "--guard", &journal::own_name()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .process_group(0)
        .spawn();
    match spawned {
        // The child handle is dropped (std never kills on drop); only the pipe is kept.
        Ok(mut child) => std::mem::forget(child.stdin.take()),
        Err(e) => eprintln!("schedlab: no guardian for this run ({e}); after a SIGKILL run `schedlab restore`"),
    }
}

/// Heal before a live command starts: undo what dead runs left, saying so on stderr. A failure
/// is reported and does not stop the command (what could not be undone stays journaled).
pub fn heal_before_live_run() {
    match journal::heal() {
        Ok(h) => report(&h, &format!("undid what {} earlier run(s) killed without cleaning up left", h.runs.len())),
        Err(e) => eprintln!("schedlab: could not read the journal of earlier runs: {e}"),
    }
}

/// Say on stderr what a heal undid (after `heading`) and what it could not.
fn report(h: &Healed, heading: &str) {
    if !h.undone.is_empty() {
        eprintln!("schedlab: {heading}: {}", h.undone.join(", "));
    }
    for f in &h.failed {
        eprintln!("schedlab: could not undo {f}; `schedlab restore` retries");
    }
}
