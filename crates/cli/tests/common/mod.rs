//! Helpers shared by the CLI tests.

pub mod trace_event;
