//! Our queues in the bench: any [`TimerQueue`] (the wheel and the heap of schedlab-timerq),
//! driven through the trait exactly as a caller would: insert returning a handle, cancel by
//! handle, one `tick` per millisecond appending what expired.

use super::phases::{Laps, Phases};
use super::workload::Workload;
use schedlab_timerq::{Handle, TimerQueue};

/// Run the workload through a queue built by `make`, timing each phase.
pub fn drive<Q: TimerQueue<u32>>(make: impl FnOnce() -> Q, w: &Workload) -> Phases {
    let mut laps = Laps::start();
    let mut q = make();
    let setup_s = laps.lap();
    let handles: Vec<Handle> = w.deadlines.iter().enumerate().map(|(i, &d)| q.insert(d, i as u32)).collect();
    let insert_s = laps.lap();
    for &c in &w.cancels {
        q.cancel(handles[c as usize]);
    }
    let cancel_s = laps.lap();
    let mut out = Vec::with_capacity(1024);
    let mut expired = 0;
    for _ in 0..w.ticks {
        q.tick(&mut out);
        expired += out.len() as u64;
        out.clear();
    }
    let expiry_s = laps.lap();
    Phases { setup_s, insert_s, cancel_s, expiry_s, expired }
}
