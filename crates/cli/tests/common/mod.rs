//! Helpers shared by the CLI tests (each test file uses some of them).

#![allow(dead_code)]

pub mod pyarrow;
pub mod trace_event;
