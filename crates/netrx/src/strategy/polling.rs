//! The seed's polling: no interrupts and no buffer; one thread visits the device ports round
//! robin taking one packet from each, processed to completion, and sleeps for a poll interval
//! after a round that found nothing.

use super::{IrqAction, Job, JobOutcome, RxStrategy, RxView};

/// Round-robin polling, one packet per port per visit.
#[derive(Debug)]
pub struct Polling {
    devices: usize,
    next: usize,
    empty_streak: usize,
    interval_ns: u64,
}

impl Polling {
    pub fn new(devices: usize, interval_ns: u64) -> Self {
        Polling { devices, next: 0, empty_streak: 0, interval_ns }
    }

    /// Slots in one round: every device, then the output side.
    fn round(&self) -> usize {
        self.devices + 1
    }
}

impl RxStrategy for Polling {
    fn name(&self) -> &'static str {
        "polling"
    }
    fn interrupts_enabled(&self) -> bool {
        false
    }
    fn on_interrupt(&mut self, _dev: usize, _v: &RxView) -> IrqAction {
        // Interrupts are never enabled, so a host never calls this; poll if one does.
        IrqAction::SchedulePoll
    }
    fn next_job(&mut self, _v: &RxView) -> Job {
        if self.empty_streak >= self.round() {
            self.empty_streak = 0;
            return Job::Idle { timer_ns: Some(self.interval_ns) };
        }
        let slot = self.next;
        self.next = (self.next + 1) % self.round();
        if slot < self.devices {
            Job::Poll { dev: slot, quota: 1 }
        } else {
            Job::Transmit { quota: 1 }
        }
    }
    fn job_done(&mut self, job: Job, out: JobOutcome, _v: &RxView) {
        if matches!(job, Job::Idle { .. }) {
            return;
        }
        if out.found > 0 || out.pending {
            self.empty_streak = 0;
        } else {
            self.empty_streak += 1;
        }
    }
    fn switches(&self) -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visits_ports_round_robin_and_sleeps_after_an_empty_round() {
        let mut s = Polling::new(2, 1000);
        let v = RxView { devices: 2, ..Default::default() };
        assert!(!s.interrupts_enabled());
        let mut jobs = vec![];
        for _ in 0..3 {
            let j = s.next_job(&v);
            s.job_done(j, JobOutcome::default(), &v);
            jobs.push(j);
        }
        assert_eq!(
            jobs,
            vec![Job::Poll { dev: 0, quota: 1 }, Job::Poll { dev: 1, quota: 1 }, Job::Transmit { quota: 1 }]
        );
        assert_eq!(s.next_job(&v), Job::Idle { timer_ns: Some(1000) });
        let j = s.next_job(&v);
        s.job_done(j, JobOutcome { found: 1, pending: false }, &v);
        assert!(matches!(s.next_job(&v), Job::Poll { .. }));
    }
}
