//! The seed's hybrid: interrupts (as [`super::Interrupt`]) until the buffer is full, then
//! interrupts masked and round-robin polling over the device ports and the buffer until the
//! buffer's occupancy falls to `perc_occup` % — each fill therefore costs two switches.

use super::{IrqAction, Job, JobOutcome, RxStrategy, RxView};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Interrupts,
    Polling,
}

/// Interrupts with a polling escape when the buffer fills.
#[derive(Debug)]
pub struct Hybrid {
    devices: usize,
    perc_occup: f64,
    mode: Mode,
    next: usize,
    switches: u64,
}

impl Hybrid {
    pub fn new(devices: usize, perc_occup: f64) -> Self {
        Hybrid { devices, perc_occup, mode: Mode::Interrupts, next: 0, switches: 0 }
    }

    fn low_enough(&self, v: &RxView) -> bool {
        v.buffer_len as f64 <= self.perc_occup / 100.0 * v.buffer_cap as f64
    }
}

impl RxStrategy for Hybrid {
    fn name(&self) -> &'static str {
        "hybrid"
    }
    fn interrupts_enabled(&self) -> bool {
        self.mode == Mode::Interrupts
    }
    fn on_interrupt(&mut self, _dev: usize, _v: &RxView) -> IrqAction {
        IrqAction::Enqueue
    }
    fn after_enqueue(&mut self, v: &RxView) {
        if self.mode == Mode::Interrupts && v.buffer_len >= v.buffer_cap {
            self.mode = Mode::Polling;
            self.switches += 1;
        }
    }
    fn next_job(&mut self, v: &RxView) -> Job {
        match self.mode {
            Mode::Interrupts if v.buffer_len > 0 => Job::Deliver,
            Mode::Interrupts => Job::Idle { timer_ns: None },
            Mode::Polling => {
                // Round: every device port, then the buffer, then the output side.
                let slot = self.next;
                self.next = (self.next + 1) % (self.devices + 2);
                if slot < self.devices {
                    Job::Poll { dev: slot, quota: 1 }
                } else if slot == self.devices {
                    Job::Deliver
                } else {
                    Job::Transmit { quota: 1 }
                }
            }
        }
    }
    fn job_done(&mut self, _job: Job, _out: JobOutcome, v: &RxView) {
        if self.mode == Mode::Polling && self.low_enough(v) {
            self.mode = Mode::Interrupts;
            self.switches += 1;
        }
    }
    fn switches(&self) -> u64 {
        self.switches
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polls_from_full_until_the_threshold() {
        let mut s = Hybrid::new(3, 80.0);
        let full = RxView { buffer_len: 100, buffer_cap: 100, devices: 3, ..Default::default() };
        s.after_enqueue(&RxView { buffer_len: 99, ..full });
        assert!(s.interrupts_enabled());
        s.after_enqueue(&full);
        assert!(!s.interrupts_enabled());
        let jobs: Vec<Job> = (0..5).map(|_| s.next_job(&full)).collect();
        assert_eq!(jobs[3], Job::Deliver);
        assert_eq!(jobs[0], Job::Poll { dev: 0, quota: 1 });
        s.job_done(Job::Deliver, JobOutcome::default(), &RxView { buffer_len: 81, ..full });
        assert!(!s.interrupts_enabled());
        s.job_done(Job::Deliver, JobOutcome::default(), &RxView { buffer_len: 80, ..full });
        assert!(s.interrupts_enabled());
        assert_eq!(s.switches(), 2);
    }
}
