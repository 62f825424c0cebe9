//! NAPI, after Mogul & Ramakrishnan: an interrupt only schedules the polling thread and stays
//! masked while it polls; each poll callback handles at most `quota` packets, each processed to
//! completion (no buffer); the thread visits every device and the output side round robin and
//! re-enables interrupts only after a whole round found no work. Feedback: when the
//! application queue reaches `fb_high` of its size, input polling stops until the queue is back
//! at `fb_low` or `fb_timeout_ns` passed.

use super::{IrqAction, Job, JobOutcome, RxStrategy, RxView, StrategyParams};

/// Polling with quota and feedback.
#[derive(Debug)]
pub struct Napi {
    devices: usize,
    quota: usize,
    fb_high: f64,
    fb_low: f64,
    fb_timeout_ns: u64,
    scheduled: bool,
    inhibited_until: Option<u64>,
    next: usize,
    empty_streak: usize,
    switches: u64,
    inhibits: u64,
}

impl Napi {
    pub fn new(devices: usize, p: &StrategyParams) -> Self {
        Napi {
            devices,
            quota: p.quota,
            fb_high: p.fb_high,
            fb_low: p.fb_low,
            fb_timeout_ns: p.fb_timeout_ns,
            scheduled: false,
            inhibited_until: None,
            next: 0,
            empty_streak: 0,
            switches: 0,
            inhibits: 0,
        }
    }

    /// Times input was inhibited by queue feedback.
    pub fn inhibits(&self) -> u64 {
        self.inhibits
    }

    fn round(&self) -> usize {
        self.devices + 1
    }
}

impl RxStrategy for Napi {
    fn name(&self) -> &'static str {
        "napi"
    }
    fn interrupts_enabled(&self) -> bool {
        !self.scheduled
    }
    fn on_interrupt(&mut self, _dev: usize, _v: &RxView) -> IrqAction {
        if !self.scheduled {
            self.scheduled = true;
            self.switches += 1;
        }
        self.empty_streak = 0;
        IrqAction::SchedulePoll
    }
    fn next_job(&mut self, v: &RxView) -> Job {
        if !self.scheduled {
            return Job::Idle { timer_ns: None };
        }
        if v.app_queue_cap > 0 {
            let fill = v.app_queue as f64 / v.app_queue_cap as f64;
            match self.inhibited_until {
                Some(until) if fill > self.fb_low && v.now_ns < until => {
                    return Job::Idle { timer_ns: Some(until - v.now_ns) };
                }
                Some(_) => self.inhibited_until = None,
                None if fill >= self.fb_high => {
                    self.inhibited_until = Some(v.now_ns + self.fb_timeout_ns);
                    self.inhibits += 1;
                    return Job::Idle { timer_ns: Some(self.fb_timeout_ns) };
                }
                None => {}
            }
        }
        let slot = self.next;
        self.next = (self.next + 1) % self.round();
        if slot < self.devices {
            Job::Poll { dev: slot, quota: self.quota }
        } else {
            Job::Transmit { quota: self.quota }
        }
    }
    fn job_done(&mut self, job: Job, out: JobOutcome, _v: &RxView) {
        if matches!(job, Job::Idle { .. }) || !self.scheduled {
            return;
        }
        if out.found > 0 || out.pending {
            self.empty_streak = 0;
            return;
        }
        self.empty_streak += 1;
        if self.empty_streak >= self.round() {
            // A whole round without work: unmask interrupts and sleep.
            self.scheduled = false;
            self.empty_streak = 0;
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

    fn napi(devices: usize) -> Napi {
        Napi::new(devices, &StrategyParams { quota: 5, ..Default::default() })
    }

    #[test]
    fn interrupt_masks_until_a_round_finds_nothing() {
        let mut s = napi(2);
        let v = RxView { devices: 2, ..Default::default() };
        assert!(s.interrupts_enabled());
        assert_eq!(s.next_job(&v), Job::Idle { timer_ns: None });
        assert_eq!(s.on_interrupt(1, &v), IrqAction::SchedulePoll);
        assert!(!s.interrupts_enabled());
        let j = s.next_job(&v);
        assert_eq!(j, Job::Poll { dev: 0, quota: 5 });
        s.job_done(j, JobOutcome { found: 5, pending: true }, &v);
        for _ in 0..2 {
            let j = s.next_job(&v);
            s.job_done(j, JobOutcome::default(), &v);
            assert!(!s.interrupts_enabled());
        }
        let j = s.next_job(&v);
        s.job_done(j, JobOutcome::default(), &v);
        assert!(s.interrupts_enabled(), "three empty visits (2 devices + output) re-enable interrupts");
        assert_eq!(s.switches(), 2);
    }

    #[test]
    fn feedback_inhibits_input_until_the_queue_drains_or_times_out() {
        let mut s = napi(1);
        let mut v = RxView { devices: 1, app_queue: 24, app_queue_cap: 32, now_ns: 1000, ..Default::default() };
        s.on_interrupt(0, &v);
        assert_eq!(s.next_job(&v), Job::Idle { timer_ns: Some(4_000_000) });
        v.now_ns += 1_000_000;
        v.app_queue = 20;
        assert_eq!(s.next_job(&v), Job::Idle { timer_ns: Some(3_000_000) });
        v.app_queue = 8;
        assert_eq!(s.next_job(&v), Job::Poll { dev: 0, quota: 5 });
        assert_eq!(s.inhibits(), 1);
        // Timeout: resume even though the queue is still above the low mark.
        v.app_queue = 30;
        assert!(matches!(s.next_job(&v), Job::Idle { .. }));
        v.now_ns += 5_000_000;
        v.app_queue = 20;
        assert!(matches!(s.next_job(&v), Job::Poll { .. } | Job::Transmit { .. }));
    }
}
