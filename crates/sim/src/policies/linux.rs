//! Linux's scheduling classes in priority order, built from the same pieces as `mlq`:
//! deadline (`class: "deadline"`, EDF on the job's absolute deadline) above real-time
//! (`"fifo"` / `"rr"`: fixed priority, lower number = higher, SCHED_RR quantum 100 ms) above
//! the fair class (everything else: CFS with nice weights). A task in a higher class always
//! pre-empts one in a lower class, as `pick_next_task` walks the classes in order.

use super::mlq::Mlq;
use super::{Cfs, Edf, Priority};
use crate::policy::{Dur, Policy, TaskView};

/// Class index: 0 deadline, 1 real-time, 2 fair.
pub fn linux_class(t: &TaskView, _n: usize) -> usize {
    match t.class {
        Some("deadline") => 0,
        Some("fifo") | Some("rr") => 1,
        _ => 2,
    }
}

/// The `linux` policy: deadline > real-time FIFO/RR > CFS.
pub fn linux(rr_quantum: Dur, cfs: Cfs) -> Mlq {
    let queues: Vec<Box<dyn Policy>> =
        vec![Box::new(Edf::new()), Box::new(Priority::linux_rt(rr_quantum)), Box::new(cfs)];
    Mlq::new("linux".into(), queues, linux_class)
}
