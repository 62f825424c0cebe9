//! schedlab-sim: a pure, deterministic scheduling simulator.
//!
//! The heart is the [`policy::Policy`] trait, shaped after Linux's `struct sched_class`: a
//! policy owns only its run queue and answers enqueue / dequeue / pick_next / charge /
//! preempts. It knows nothing of clocks, processes or I/O, so the same implementation is
//! driven by the discrete-event engine here and by the live dispatcher in `schedlab-lab`
//! (which schedules real processes), letting reports put "predicted" beside "measured".
//!
//! This crate never calls the operating system.

pub mod policies;
pub mod policy;

pub use policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};
