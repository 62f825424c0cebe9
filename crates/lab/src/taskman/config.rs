//! The task manager's configuration and the plan derived from it and the machine's topology.
//! Every check happens here, before anything on the machine changes.

use super::queue::QueueKind;
use schedlab_os::sched::LinuxPolicy;
use schedlab_os::topology::Topology;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The default real-time priority of the workers.
///
/// 49: above every SCHED_OTHER task (so CPU-hungry neighbours cannot take the worker's CPU),
/// but below the kernel's threaded interrupt handlers (50) and far below its migration and
/// watchdog threads (99). The seed uses 99, which ties with those kernel threads and can delay
/// CPU hot-plug, stop-machine and the watchdog; pass `--priority 99` to reproduce it exactly.
pub const DEFAULT_PRIORITY: i32 = 49;

/// What the manager should look like.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManagerConfig {
    /// Number of workers; `None` = one per core, minus the core left for the system.
    pub workers: Option<usize>,
    /// Scheduling policy of the workers (SCHED_FIFO as in the seed).
    pub policy: LinuxPolicy,
    /// Static RT priority 1..=99 (ignored for SCHED_OTHER).
    pub priority: i32,
    /// Pin worker i to its own CPU (otherwise workers float over the non-reserved CPUs).
    pub pin: bool,
    /// Move every movable IRQ to the reserved CPU while the manager runs.
    pub steer_irqs: bool,
    /// Which task queue the workers take tasks from.
    pub queue: QueueKind,
    /// Where the IRQ journal and lock live (see `schedlab_os::irq`).
    pub irq_state_dir: PathBuf,
}

impl Default for ManagerConfig {
    fn default() -> Self {
        ManagerConfig {
            workers: None,
            policy: LinuxPolicy::Fifo,
            priority: DEFAULT_PRIORITY,
            pin: true,
            steer_irqs: true,
            queue: QueueKind::MutexFifo,
            irq_state_dir: PathBuf::from(schedlab_os::irq::DEFAULT_STATE_DIR),
        }
    }
}

/// A rejected configuration, naming the offending value.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ConfigError {
    #[error("invalid --workers {given}: {why}")]
    Workers { given: usize, why: String },
    #[error("invalid --priority {given}: {policy} accepts {lo}..={hi} (a larger number is a more urgent task; 99 is the most urgent)")]
    Priority { given: i32, policy: String, lo: i32, hi: i32 },
    #[error("invalid policy {0}: the task manager runs workers under fifo, rr or other")]
    Policy(String),
    #[error("no CPU is left for workers: this machine has {cpus} online CPU(s) and the first core is reserved for the system")]
    NoWorkerCpu { cpus: usize },
}

/// Where each worker will run, decided before anything changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The CPUs left to the system (IRQs go here).
    pub reserved: Vec<usize>,
    /// One affinity set per worker (a single CPU when pinning, the non-reserved CPUs otherwise).
    pub worker_affinity: Vec<Vec<usize>>,
    pub policy: LinuxPolicy,
    pub priority: i32,
}

impl ManagerConfig {
    /// Check the configuration against the machine and decide where the workers go.
    pub fn plan(&self, topo: &Topology) -> Result<Plan, ConfigError> {
        if !matches!(self.policy, LinuxPolicy::Fifo | LinuxPolicy::Rr | LinuxPolicy::Other) {
            return Err(ConfigError::Policy(self.policy.to_string()));
        }
        let (lo, hi) = self.policy.priority_range();
        let priority = if self.policy.is_realtime() { self.priority } else { 0 };
        if self.policy.is_realtime() && (priority < lo || priority > hi) {
            return Err(ConfigError::Priority { given: self.priority, policy: self.policy.to_string(), lo, hi });
        }
        let cpus = topo.cpu_ids().len();
        let worker_cpus = topo.worker_cpus();
        if worker_cpus.is_empty() {
            return Err(ConfigError::NoWorkerCpu { cpus });
        }
        let n = self.workers.unwrap_or(worker_cpus.len());
        if n == 0 {
            return Err(ConfigError::Workers { given: 0, why: "at least one worker is needed".into() });
        }
        if n > worker_cpus.len() {
            return Err(ConfigError::Workers {
                given: n,
                why: format!(
                    "this machine has {cpus} online CPU(s) in {} core(s); core {{{}}} is reserved for the system, \
                     so at most {} worker(s) fit (one per remaining core)",
                    topo.cores().len(),
                    schedlab_os::affinity::format_cpu_list(&topo.reserved_core()),
                    worker_cpus.len()
                ),
            });
        }
        let worker_affinity = if self.pin {
            worker_cpus[..n].iter().map(|&c| vec![c]).collect()
        } else {
            vec![topo.non_reserved_cpus(); n]
        };
        Ok(Plan { reserved: topo.reserved_core(), worker_affinity, policy: self.policy, priority })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_os::topology::Cpu;

    fn topo(n: usize) -> Topology {
        Topology {
            cpus: (0..n)
                .map(|id| Cpu { id, package: 0, core: id as i64, siblings: vec![id], caches: vec![] })
                .collect(),
        }
    }

    #[test]
    fn default_is_one_worker_per_core_minus_one() {
        let p = ManagerConfig::default().plan(&topo(4)).unwrap();
        assert_eq!(p.worker_affinity, vec![vec![1], vec![2], vec![3]]);
        assert_eq!(p.reserved, vec![0]);
        assert_eq!(p.priority, DEFAULT_PRIORITY);
    }

    #[test]
    fn unpinned_workers_float_but_never_on_the_reserved_cpu() {
        let cfg = ManagerConfig { pin: false, workers: Some(2), ..Default::default() };
        let p = cfg.plan(&topo(3)).unwrap();
        assert_eq!(p.worker_affinity, vec![vec![1, 2], vec![1, 2]]);
    }

    #[test]
    fn too_many_workers_are_rejected_with_the_value() {
        let cfg = ManagerConfig { workers: Some(2), ..Default::default() };
        let e = cfg.plan(&topo(2)).unwrap_err().to_string();
        assert!(e.contains("--workers 2") && e.contains("at most 1"), "{e}");
        let e = ManagerConfig { workers: Some(0), ..Default::default() }.plan(&topo(2)).unwrap_err();
        assert!(e.to_string().contains("--workers 0"));
    }

    #[test]
    fn priorities_outside_1_to_99_are_rejected() {
        for bad in [0, 100, -5] {
            let e = ManagerConfig { priority: bad, ..Default::default() }.plan(&topo(2)).unwrap_err();
            assert!(e.to_string().contains(&format!("--priority {bad}")), "{e}");
        }
        assert!(ManagerConfig { priority: 99, ..Default::default() }.plan(&topo(2)).is_ok());
    }

    #[test]
    fn single_cpu_machine_has_no_worker_cpu() {
        assert!(matches!(ManagerConfig::default().plan(&topo(1)), Err(ConfigError::NoWorkerCpu { .. })));
    }

    #[test]
    fn deadline_policy_is_refused() {
        let cfg = ManagerConfig { policy: LinuxPolicy::Deadline, ..Default::default() };
        assert!(matches!(cfg.plan(&topo(2)), Err(ConfigError::Policy(_))));
    }
}
