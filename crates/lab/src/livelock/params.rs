//! The live system's parameters — the seed's Tables I–III (`fun`, `wait`, `lambda`, `mu`,
//! `var`, `inc`, `dev`, `maxtime`, `lag`, `eval_lat`, `experiment`, `print`, `sz`,
//! `perc_occup`, ports) plus the kernel role's busy-work costs, threads and CPU — and their
//! checks.

use schedlab_netrx::arrival::ArrivalParams;
use schedlab_netrx::strategy::{StrategyKind, StrategyParams};
use schedlab_netrx::ParamError;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The UDP ports: device `i` sends to `kernel_port + i`, the kernel delivers to `app_port + i`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ports {
    pub kernel_port: u16,
    pub app_port: u16,
}

impl Default for Ports {
    fn default() -> Self {
        Ports { kernel_port: 47000, app_port: 47100 }
    }
}

impl Ports {
    /// Check that both ranges of `dev` ports fit and do not overlap.
    pub fn validate(&self, dev: usize) -> Result<(), ParamError> {
        for (name, base) in [("kernel port", self.kernel_port), ("app port", self.app_port)] {
            if base == 0 || base as usize + dev > 65536 {
                return Err(ParamError::new(name, base, format!("{dev} ports from here must fit in 1..=65535")));
            }
        }
        let (k, a) = (self.kernel_port as usize, self.app_port as usize);
        if k < a + dev && a < k + dev {
            return Err(ParamError::new(
                "app port",
                self.app_port,
                format!("overlaps the kernel ports {}..{}", k, k + dev),
            ));
        }
        Ok(())
    }

    pub fn kernel(&self, i: usize) -> u16 {
        self.kernel_port + i as u16
    }

    pub fn app(&self, i: usize) -> u16 {
        self.app_port + i as u16
    }
}

/// The kernel role's per-packet busy work: the CPU each step costs on top of the real
/// syscalls, so that overload is reachable on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BusyCosts {
    /// Spent by the interrupt thread on every interrupt.
    pub irq_ns: u64,
    /// Protocol processing of every packet (kernel thread).
    pub proto_ns: u64,
    /// Delivery of every packet to its application (kernel thread).
    pub deliver_ns: u64,
}

impl Default for BusyCosts {
    fn default() -> Self {
        BusyCosts { irq_ns: 25_000, proto_ns: 10_000, deliver_ns: 5_000 }
    }
}

impl BusyCosts {
    /// CPU one packet costs from interrupt to delivery.
    pub fn per_packet_ns(&self) -> u64 {
        self.irq_ns + self.proto_ns + self.deliver_ns
    }

    /// The same split, scaled so that one CPU handles `pps` packets per second from interrupt to
    /// delivery: where an interrupt-driven receiver stops keeping up when nothing else runs.
    pub fn scaled_to_knee(&self, pps: f64) -> BusyCosts {
        let k = 1e9 / pps / self.per_packet_ns() as f64;
        let s = |ns: u64| (ns as f64 * k).round() as u64;
        BusyCosts { irq_ns: s(self.irq_ns), proto_ns: s(self.proto_ns), deliver_ns: s(self.deliver_ns) }
    }
}

/// How the kernel role's threads are scheduled on its CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KernelThreads {
    /// One interrupt thread at SCHED_FIFO `irq_prio` above the kernel thread at `softirq_prio`:
    /// interrupts pre-empt delivery, as in a kernel.
    #[default]
    Priorities,
    /// The seed's `kernel.py`: one receiving thread per device beside the delivery thread, all
    /// SCHED_OTHER at nice 0 (Python threads at equal priority, time-shared by the OS), and the
    /// device sockets at the system's default receive buffer (the seed set none).
    Equal,
}

impl std::str::FromStr for KernelThreads {
    type Err = ParamError;
    fn from_str(s: &str) -> Result<Self, ParamError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "priorities" => Ok(KernelThreads::Priorities),
            "equal" => Ok(KernelThreads::Equal),
            _ => Err(ParamError::new("threads", s, "expected priorities or equal")),
        }
    }
}

impl std::fmt::Display for KernelThreads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            KernelThreads::Priorities => "priorities",
            KernelThreads::Equal => "equal",
        })
    }
}

/// Everything a live run needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveParams {
    pub dev: usize,
    pub arrival: ArrivalParams,
    pub seed: u64,
    /// How long the devices send.
    pub maxtime: Duration,
    /// Extra time at the end for the kernel and apps to drain.
    pub lag: Duration,
    pub eval_lat: bool,
    pub print: bool,
    pub experiment: String,
    pub strategy: StrategyKind,
    pub kernel: StrategyParams,
    pub costs: BusyCosts,
    pub ports: Ports,
    /// UDP payload bytes (at least the 20-byte header).
    pub payload: usize,
    /// CPU of the kernel role (`None` = the last CPU this process may use, never CPU 0 if
    /// another exists).
    pub kernel_cpu: Option<usize>,
    /// SCHED_FIFO priorities of the interrupt thread and the kernel thread (higher number =
    /// more urgent; the interrupt thread must be above).
    pub irq_prio: i32,
    pub softirq_prio: i32,
    /// How the kernel role's threads are scheduled (the priorities above apply to
    /// `Priorities` only).
    #[serde(default)]
    pub threads: KernelThreads,
    /// SO_RCVBUF of each application socket, bytes.
    pub app_rcvbuf: usize,
}

impl Default for LiveParams {
    fn default() -> Self {
        LiveParams {
            dev: 3,
            arrival: ArrivalParams::default(),
            seed: 2,
            maxtime: Duration::from_secs(5),
            lag: Duration::from_millis(500),
            eval_lat: true,
            print: false,
            experiment: "livelock".into(),
            strategy: StrategyKind::Napi,
            kernel: StrategyParams::default(),
            costs: BusyCosts::default(),
            ports: Ports::default(),
            payload: 32,
            kernel_cpu: None,
            irq_prio: 60,
            softirq_prio: 50,
            threads: KernelThreads::Priorities,
            app_rcvbuf: 4 << 20,
        }
    }
}

/// The longest a single live run may last (sending time).
pub const MAX_RUN: Duration = Duration::from_secs(3600);

impl LiveParams {
    /// Check everything, naming the offending value.
    pub fn validate(&self) -> Result<(), ParamError> {
        self.arrival.validate()?;
        self.kernel.validate()?;
        if self.dev == 0 || self.dev > 64 {
            return Err(ParamError::new("dev", self.dev, "between 1 and 64 devices"));
        }
        if self.maxtime.is_zero() || self.maxtime > MAX_RUN {
            return Err(ParamError::new("maxtime", format!("{:?}", self.maxtime), "between 1 ms and 1 hour"));
        }
        if self.lag > Duration::from_secs(60) {
            return Err(ParamError::new("lag", format!("{:?}", self.lag), "at most 60 s"));
        }
        if self.payload < crate::livelock::packet::HEADER || self.payload > 1400 {
            return Err(ParamError::new(
                "payload",
                self.payload,
                format!("between {} and 1400 bytes", crate::livelock::packet::HEADER),
            ));
        }
        if self.threads == KernelThreads::Priorities {
            self.validate_priorities()?;
        }
        if self.experiment.is_empty() || self.experiment.contains(['/', '\\']) || self.experiment.starts_with('.') {
            return Err(ParamError::new("experiment", &self.experiment, "a plain directory name"));
        }
        self.ports.validate(self.dev)
    }

    fn validate_priorities(&self) -> Result<(), ParamError> {
        if !(1..=98).contains(&self.irq_prio) || !(1..=98).contains(&self.softirq_prio) {
            return Err(ParamError::new(
                "RT priority",
                format!("irq={} softirq={}", self.irq_prio, self.softirq_prio),
                "SCHED_FIFO priorities 1..=98 (99 is the kernel's own)",
            ));
        }
        if self.irq_prio <= self.softirq_prio {
            return Err(ParamError::new(
                "irq priority",
                self.irq_prio,
                format!("must be above the kernel thread's {} so interrupts pre-empt delivery", self.softirq_prio),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_netrx::arrival::Fun;

    #[test]
    fn defaults_are_valid_and_bad_values_named() {
        LiveParams::default().validate().unwrap();
        let mut p = LiveParams::default();
        p.arrival = ArrivalParams { wait: -0.5, ..p.arrival };
        assert!(p.validate().unwrap_err().to_string().contains("-0.5"));
        let mut p = LiveParams::default();
        p.kernel.sz = 0;
        assert_eq!(p.validate().unwrap_err().name, "sz");
        let mut p = LiveParams::default();
        p.kernel.perc_occup = 101.0;
        assert!(p.validate().unwrap_err().to_string().contains("101"));
        let p = LiveParams { ports: Ports { kernel_port: 47000, app_port: 47001 }, ..Default::default() };
        assert!(p.validate().unwrap_err().to_string().contains("47001"));
        let p = LiveParams { irq_prio: 40, ..Default::default() };
        assert_eq!(p.validate().unwrap_err().name, "irq priority");
        let mut p = LiveParams::default();
        p.arrival.fun = Fun::Poisson;
        p.arrival.lambda = 0.0;
        assert_eq!(p.validate().unwrap_err().name, "lambda");
        let p = Ports { kernel_port: 65535, app_port: 1000 };
        assert!(p.validate(3).is_err());
        // Equal threads take no priorities, so none is checked.
        let p = LiveParams { irq_prio: 40, threads: KernelThreads::Equal, ..Default::default() };
        p.validate().unwrap();
        assert_eq!("equal".parse::<KernelThreads>().unwrap(), KernelThreads::Equal);
        assert_eq!("fifo".parse::<KernelThreads>().unwrap_err().name, "threads");
    }

    #[test]
    fn costs_scaled_to_a_knee_keep_their_split() {
        let c = BusyCosts::default().scaled_to_knee(250.0);
        assert_eq!(c.per_packet_ns(), 4_000_000);
        assert_eq!((c.irq_ns, c.proto_ns, c.deliver_ns), (2_500_000, 1_000_000, 500_000));
    }
}
