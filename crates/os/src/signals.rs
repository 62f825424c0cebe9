//! Termination requests: SIGINT/SIGTERM/SIGHUP set a flag that long-running experiments poll,
//! so they stop, restore what they changed and report, instead of dying half-way.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static STOP: AtomicBool = AtomicBool::new(false);
static LAST_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    // Only async-signal-safe work here: two atomic stores.
    LAST_SIGNAL.store(sig, Ordering::SeqCst);
    STOP.store(true, Ordering::SeqCst);
}

/// Install the handler for SIGINT, SIGTERM and SIGHUP (idempotent). Without SA_RESTART,
/// blocking calls return EINTR so loops notice the flag promptly.
pub fn install_stop_handler() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only touches atomics; sigaction struct is fully initialised.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = 0;
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// True once a stop signal arrived (or [`request_stop`] was called).
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// Ask every loop that polls [`stop_requested`] to stop (used by tests and time limits).
pub fn request_stop() {
    STOP.store(true, Ordering::SeqCst);
}

/// The signal that requested the stop, if any (0 = none or [`request_stop`]).
pub fn stop_signal() -> i32 {
    LAST_SIGNAL.load(Ordering::SeqCst)
}

/// Clear the flag (for a new experiment within the same process).
pub fn reset_stop() {
    STOP.store(false, Ordering::SeqCst);
    LAST_SIGNAL.store(0, Ordering::SeqCst);
}

/// Block every asynchronous signal in the calling thread (seed 003's "software interrupts are
/// prohibited" for worker threads): SIGINT/SIGTERM then go to another thread. Synchronous
/// faults stay deliverable, or a crash would hang instead of dying.
pub fn block_async_signals() -> crate::OsResult<()> {
    use nix::sys::signal::{pthread_sigmask, SigSet, SigmaskHow, Signal};
    let mut set = SigSet::all();
    for s in [Signal::SIGSEGV, Signal::SIGBUS, Signal::SIGFPE, Signal::SIGILL, Signal::SIGTRAP, Signal::SIGABRT] {
        set.remove(s);
    }
    pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None)
        .map_err(|e| crate::OsError::from_io("blocking signals in a worker thread", e.into()))
}

/// The kernel id of the calling thread (gettid(2)).
pub fn thread_id() -> i32 {
    nix::unistd::gettid().as_raw()
}

/// Give SIGPIPE back its default action (the Rust runtime ignores it at start-up): for the
/// workload programs children exec, which should behave like the seed's C programs — killed by a
/// write to a closed pipe, with no signal ignored — and for commands with nothing to clean up,
/// which then end quietly when the reader of their output goes away.
pub fn default_sigpipe() {
    // SAFETY: setting a standard signal's disposition to its default is always valid.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
}

/// Re-raise the stop signal with its default action after cleanup, so the exit status tells
/// the parent shell the truth (130 for Ctrl-C, 143 for SIGTERM).
pub fn exit_like_signal() -> ! {
    let sig = stop_signal();
    if sig != 0 {
        // SAFETY: restoring the default disposition and raising are async-safe and valid.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
    std::process::exit(130)
}
