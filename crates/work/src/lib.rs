//! The programs seed 001's benchmark execs as its children, kept apart from the `schedlab`
//! binary so that a child's CPU time is the workload's and not schedlab's start-up: the 62 MB
//! `schedlab` binary cost about 2 ms of CPU per exec, nearly all of an io child's measured time.
//!
//! - [`cpu`]: calc_pi.c, [`io`]: rw.c, [`mixed`]: rwpi.c — also what `schedlab workload
//!   cpu|io|mixed` runs, so there is one implementation of each.
//! - [`command`]: the `schedlab-work cpu|io|mixed|empty` command line, parsed by hand (std
//!   only; the binary adds one call into schedlab_os, to give SIGPIPE back its default action).

#![forbid(unsafe_code)]

pub mod command;
pub mod cpu;
pub mod io;
pub mod mixed;
