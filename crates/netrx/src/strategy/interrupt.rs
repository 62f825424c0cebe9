//! The unmodified interrupt-driven kernel: every arrival interrupts, the handler moves the
//! packet into the bounded buffer, and the lower-priority kernel thread drains the buffer.
//! Under overload the handler takes the whole CPU and the buffer is never drained: livelock.

use super::{IrqAction, Job, JobOutcome, RxStrategy, RxView};

/// Interrupts always on; the buffer is drained one packet per job.
#[derive(Debug, Default)]
pub struct Interrupt;

impl Interrupt {
    pub fn new() -> Self {
        Interrupt
    }
}

impl RxStrategy for Interrupt {
    fn name(&self) -> &'static str {
        "interrupt"
    }
    fn interrupts_enabled(&self) -> bool {
        true
    }
    fn on_interrupt(&mut self, _dev: usize, _v: &RxView) -> IrqAction {
        IrqAction::Enqueue
    }
    fn next_job(&mut self, v: &RxView) -> Job {
        if v.buffer_len > 0 {
            Job::Deliver
        } else {
            Job::Idle { timer_ns: None }
        }
    }
    fn job_done(&mut self, _job: Job, _out: JobOutcome, _v: &RxView) {}
    fn switches(&self) -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drains_the_buffer_and_sleeps_when_empty() {
        let mut s = Interrupt::new();
        let v = RxView { buffer_len: 2, buffer_cap: 100, devices: 3, ..Default::default() };
        assert!(s.interrupts_enabled());
        assert_eq!(s.on_interrupt(0, &v), IrqAction::Enqueue);
        assert_eq!(s.next_job(&v), Job::Deliver);
        assert_eq!(s.next_job(&RxView { buffer_len: 0, ..v }), Job::Idle { timer_ns: None });
    }
}
