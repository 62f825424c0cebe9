//! schedlab-trace: scheduler traces in, timelines and workloads out.
//!
//! - [`parse`]: tracefs `trace`/`trace_pipe`, `perf script` and `trace-cmd report` text into
//!   [`event::Event`]s, with [`parse::ParseStats`] accounting for every line.
//! - [`timeline`]: events into per-task run / blocked / waiting intervals, wake-up latencies,
//!   switch counts and migrations ([`timeline::Timeline`]); [`from_sim`] builds the same from
//!   a simulator run, so live and simulated runs meet in one type.
//! - [`import`]: a trace (plus an optional [`meta::TraceMeta`] sidecar) into a
//!   `schedlab_sim::workload::Workload`, with a report of what could not be reconstructed.
//! - [`compare`]: two timelines over a window: CPU shares, switch rates, wake-up latency
//!   percentiles and how often both run the same task on the same CPU.
//! - [`render`]: a timeline (or a simulator run) as tracefs text.
//! - [`tick_phase`]: where the scheduler tick falls on a trace's clock, so a replay's ticks
//!   fall where the kernel's did.
//!
//! This crate never calls the operating system.

#![forbid(unsafe_code)]

pub mod compare;
pub mod event;
pub mod from_sim;
pub mod import;
pub mod kernel_positions;
pub mod meta;
pub mod parse;
pub mod render;
pub mod rt_period;
pub mod shadow;
pub mod tick_phase;
pub mod timeline;
pub mod trim;

pub use compare::{compare, CompareOptions, Comparison};
pub use event::{Event, EventKind, Pid};
pub use from_sim::{timeline_from_sim, FromSimOptions};
pub use import::{import, ImportOptions, ImportReport, Imported, Select};
pub use meta::{SchedPolicy, TaskMeta, TraceMeta};
pub use parse::{parse, Format, ParseStats, Parsed};
pub use render::{render, render_sim, RenderOptions};
pub use rt_period::RtPeriod;
pub use tick_phase::{tick_phase, TickPhase};
pub use timeline::{BlockedSpan, TaskTimeline, Timeline, Waker};
