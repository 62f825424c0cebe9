//! schedlab-sim: a pure, deterministic scheduling simulator.
//!
//! The heart is the [`policy::Policy`] trait, shaped after Linux's `struct sched_class`: a
//! policy owns only its run queue and answers enqueue / dequeue / pick_next / charge /
//! preempts. It knows nothing of clocks, processes or I/O, so the same implementation is
//! driven by the discrete-event engine here and by the live dispatcher in `schedlab-lab`
//! (which schedules real processes), letting reports put "predicted" beside "measured".
//!
//! - [`workload`]: tasks and JSON workload files (ms outside, integer ns inside);
//!   [`generate`]: seeded generators.
//! - [`engine`]: the discrete-event engine ([`engine::simulate`]).
//! - [`policies`]: one file per policy and [`policies::by_spec`] to build one from a spec.
//! - [`metrics`]: overall metrics (Jain's index, share error, utilisation, …);
//!   [`jobs`]: per-job release, finish, response and lateness read from a run's slices.
//! - [`analysis`]: schedulability tests of periodic task sets (utilisation bounds, response-time
//!   analysis, EDF processor demand) to set beside what a run shows.
//!
//! This crate never calls the operating system.

#![forbid(unsafe_code)]

pub mod analysis;
pub mod engine;
pub mod generate;
pub mod jobs;
pub mod metrics;
pub mod policies;
pub mod policy;
pub mod rtapp;
mod task_spec;
pub mod workload;

pub use policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};
