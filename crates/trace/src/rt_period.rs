//! Where the kernel's RT bandwidth period falls on a trace's clock.
//!
//! With classic RT throttling (`CONFIG_RT_GROUP_SCHED`) one period timer serves every CPU: an RT
//! queue that ran past its budget is throttled, and its CPU runs fair tasks or idles until the
//! next period boundary unthrottles it. The timer keeps one phase for as long as the host runs,
//! so a probe can measure it once ([`RtPeriod`]); a timeline builder told it knows when a
//! throttled task that went off its CPU runnable came back, even where the trace lost that
//! switch.

use serde::{Deserialize, Serialize};

/// The RT period boundaries: `phase_ns + k × period_ns` on the trace clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RtPeriod {
    pub phase_ns: u64,
    pub period_ns: u64,
}

impl RtPeriod {
    /// The first boundary after `t`.
    pub fn boundary_after(&self, t: u64) -> u64 {
        let p = self.period_ns.max(1);
        let phase = self.phase_ns % p;
        if t < phase {
            return phase;
        }
        phase + ((t - phase) / p + 1) * p
    }

    /// The phase on a clock whose time 0 is `t0` on this one (a replay's workload time).
    pub fn phase_from(&self, t0: u64) -> u64 {
        let p = self.period_ns.max(1);
        (self.phase_ns % p + p - t0 % p) % p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_and_phases() {
        let r = RtPeriod { phase_ns: 580, period_ns: 1000 };
        assert_eq!(r.boundary_after(100), 580);
        assert_eq!(r.boundary_after(580), 1580);
        assert_eq!(r.boundary_after(2600), 3580);
        // Workload time 0 at trace time 141: boundaries at 439 + k·1000 there.
        assert_eq!(r.phase_from(2141), 439);
        assert_eq!(r.phase_from(580), 0);
    }
}
