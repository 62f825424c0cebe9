//! The discrete-event livelock model: one CPU with an interrupt level, a kernel thread and a
//! user level; devices with bounded receive rings; the bounded buffer; an optional output
//! stage (the paper's transmit queue and ring), an optional screening user process whose queue
//! feeds NAPI's feedback, and an optional compute-bound user process. The strategies of
//! [`crate::strategy`] decide; [`engine`] charges the [`Costs`] and moves packets.

mod costs;
mod engine;

pub use costs::{mogul96_screend, mogul96_tx, Costs, Preset};
pub use engine::run;

use crate::arrival::ArrivalParams;
use crate::strategy::{StrategyKind, StrategyParams};
use crate::ParamError;
use serde::{Deserialize, Serialize};

/// The paper's output side: processed packets wait in a queue of `queue` packets; a transmit
/// job moves them to a ring of `ring` descriptors that the wire empties one per `wire_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TxStage {
    pub queue: usize,
    pub ring: usize,
    pub wire_ns: u64,
}

/// A user process that must handle every packet (the paper's `screend`): delivered packets
/// wait in its queue of `queue` packets, and it spends `cost_ns` on each at user priority.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Screen {
    pub queue: usize,
    pub cost_ns: u64,
}

/// Everything one model run needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelConfig {
    pub devices: usize,
    pub arrival: ArrivalParams,
    pub seed: u64,
    /// Simulated seconds.
    pub duration_s: f64,
    pub strategy: StrategyKind,
    pub params: StrategyParams,
    pub costs: Costs,
    /// Receive ring of each device, packets (arrivals beyond it are dropped for free).
    pub device_ring: usize,
    pub tx: Option<TxStage>,
    pub screen: Option<Screen>,
    /// A compute-bound user process that takes whatever CPU is left.
    pub hog: bool,
}

impl ModelConfig {
    /// Mogul & Ramakrishnan's router: one input at a constant `input_pps`, the IP input queue of
    /// 50 packets as the buffer, a 32-packet receive ring and the output stage.
    pub fn mogul96(strategy: StrategyKind, quota: usize, input_pps: f64, duration_s: f64) -> Self {
        ModelConfig {
            devices: 1,
            arrival: ArrivalParams { wait: 1.0 / input_pps, ..ArrivalParams::default() },
            seed: 1996,
            duration_s,
            strategy,
            params: StrategyParams { sz: 50, quota, ..StrategyParams::default() },
            costs: Costs::mogul96(),
            device_ring: 32,
            tx: Some(mogul96_tx()),
            screen: None,
            hog: false,
        }
    }

    /// The seed's set-up on this machine: `devices` devices with constant waits, buffer `sz`,
    /// the given costs and a device ring of `ring` packets (the kernel socket's capacity).
    pub fn this_machine(strategy: StrategyKind, params: StrategyParams, costs: Costs, ring: usize) -> Self {
        ModelConfig {
            devices: 3,
            arrival: ArrivalParams::default(),
            seed: 2,
            duration_s: 1.0,
            strategy,
            params,
            costs,
            device_ring: ring,
            tx: None,
            screen: None,
            hog: false,
        }
    }

    /// Check the parameters, naming the offending value.
    pub fn validate(&self) -> Result<(), ParamError> {
        self.arrival.validate()?;
        self.params.validate()?;
        if self.devices == 0 {
            return Err(ParamError::new("dev", 0, "at least one device is needed"));
        }
        if !(self.duration_s.is_finite() && self.duration_s > 0.0) {
            return Err(ParamError::new("duration", self.duration_s, "must be greater than zero"));
        }
        if self.device_ring == 0 {
            return Err(ParamError::new("device ring", 0, "must hold at least one packet"));
        }
        Ok(())
    }
}

/// Latency percentiles of delivered packets, microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Latency {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

/// Where the model's CPU time went, seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CpuSplit {
    pub interrupt_s: f64,
    pub kernel_thread_s: f64,
    pub screen_s: f64,
    pub hog_s: f64,
    pub idle_s: f64,
}

/// What one model run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelResult {
    pub offered: u64,
    pub delivered: u64,
    pub offered_pps: f64,
    pub delivered_pps: f64,
    /// Dropped at a full device ring (free: no CPU was spent).
    pub lost_device: u64,
    /// Dropped at a full buffer after the interrupt handler's work.
    pub lost_buffer: u64,
    /// Dropped at a full output queue or screen queue after protocol work.
    pub lost_late: u64,
    pub buffer_fills: u64,
    pub switches: u64,
    pub interrupts: u64,
    pub latency_us: Latency,
    pub cpu: CpuSplit,
}

impl ModelResult {
    /// Every packet that did not arrive.
    pub fn lost(&self) -> u64 {
        self.lost_device + self.lost_buffer + self.lost_late
    }
}
