//! schedlab-report: how results are kept and shown.
//!
//! - [`results`]: the one run writer — the run directory `results/<experiment>/<UTC timestamp>/`
//!   with `results.json` (the envelope: provenance, parameters, raw results, verdicts), CSV
//!   tables, SVG figures and data files.
//! - [`section`]: what an experiment hands the report — tables with the published numbers
//!   beside ours, figures, verdicts.
//! - [`judge`]: verdicts that claim a difference or an agreement only beyond the run-to-run
//!   spread.
//! - [`table`]: plain-text tables for the terminal.
//! - [`svg`]: hand-written SVG line, bar and Gantt charts (self-contained, no fonts to ship).
//! - [`html`] and [`db`]: the one-page report and the results database (see `schedlab reproduce`).
//!
//! This crate never touches the machine: machine facts and process liveness are handed in.

#![forbid(unsafe_code)]

pub mod db;
pub mod html;
pub mod judge;
pub mod leaves;
pub mod results;
pub mod section;
pub mod seeds;
pub mod shard;
pub mod stats;
pub mod svg;
pub mod table;
pub mod tidy;
pub mod tidy_parquet;
pub mod trace_event;

/// schedlab's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The git commit the binary was built from (`-dirty` when the tree had changes).
pub const GIT_COMMIT: &str = env!("SCHEDLAB_GIT_COMMIT");
