//! schedlab-netrx: receive livelock (seed 002), pure.
//!
//! - [`arrival`]: seeded arrival processes (constant, Poisson, normal, peaks, ramp) with the
//!   seed's parameters `wait`, `lambda`, `mu`, `var`, `inc`.
//! - [`strategy`]: the [`strategy::RxStrategy`] trait and its four variants (interrupt, polling,
//!   hybrid, napi). The same strategy objects drive the model here and the live kernel role in
//!   `schedlab-lab`.
//! - [`model`]: a discrete-event single-CPU model with per-packet costs, presets `mogul96` and
//!   `this-machine`.
//! - [`grid`]: the seed's sweep of inter-send waits.
//!
//! Nothing here calls the operating system.

#![forbid(unsafe_code)]

pub mod arrival;
pub mod error;
pub mod grid;
pub mod model;
pub mod strategy;

pub use error::ParamError;
