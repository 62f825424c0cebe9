//! One file per scheduling policy, as in Linux's kernel/sched/ (fair.c, rt.c, deadline.c).

pub mod wrr;

pub use wrr::WeightedRoundRobin;
