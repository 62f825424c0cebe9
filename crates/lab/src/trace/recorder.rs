//! A private tracefs instance recording the scheduler tracepoints (`sched_switch`, the
//! wake-ups, fork/exec/exit, `sched_migrate_task`), and reads of a task's own CPU clock where the
//! kernel has syscall tracepoints (each is a point where the kernel notices an expired slice),
//! with the monotonic clock. It is named
//! `schedlab-trace-<pid>` and removed when the recorder is dropped — on a normal end, an error,
//! a panic or the stop signal path; one left by a run killed with SIGKILL is removed by the next
//! recorder before it starts.

use anyhow::{Context, Result};
use schedlab_os::tracefs::{Instance, TraceFs, CPU_CLOCK_READS, SCHED_EVENTS};

/// Prefix of our instances' names (the pid of the recording process follows).
pub const INSTANCE_PREFIX: &str = "schedlab-trace-";
/// Per-CPU buffer, enough for a few seconds of a busy 2-CPU machine.
pub const BUFFER_KB: usize = 32 * 1024;

/// A running recording.
pub struct Recorder {
    // Dropped in field order: the instance before the mount.
    instance: Instance,
    _fs: TraceFs,
    /// Instances of dead runs removed when this one started.
    pub orphans_removed: usize,
    steal_at_start: Option<Vec<u64>>,
}

/// A finished recording.
pub struct Recording {
    /// The trace as tracefs text.
    pub text: String,
    /// What the hypervisor took from each CPU while it recorded (see [`schedlab_os::steal`]).
    pub steal_ns: Option<Vec<u64>>,
}

impl Recorder {
    /// Create the instance and start recording.
    pub fn start() -> Result<Self> {
        let fs = TraceFs::open().context("tracing needs tracefs (and root)")?;
        let orphans_removed = Instance::remove_orphans(&fs, INSTANCE_PREFIX);
        let name = format!("{INSTANCE_PREFIX}{}", std::process::id());
        let mut instance = Instance::create(&fs, &name, BUFFER_KB, SCHED_EVENTS)?;
        instance.enable_filtered(CPU_CLOCK_READS.0, CPU_CLOCK_READS.1)?;
        instance.clear()?;
        let steal_at_start = schedlab_os::steal::per_cpu_ns();
        instance.on(true)?;
        Ok(Recorder { instance, _fs: fs, orphans_removed, steal_at_start })
    }

    /// Stop recording and return the trace; the instance goes away with `self`.
    pub fn stop(self) -> Result<Recording> {
        self.instance.on(false)?;
        let steal_ns = self
            .steal_at_start
            .as_deref()
            .zip(schedlab_os::steal::per_cpu_ns())
            .map(|(before, after)| schedlab_os::steal::since(before, &after));
        Ok(Recording { text: self.instance.read_text()?, steal_ns })
    }
}
