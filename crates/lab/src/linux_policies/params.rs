//! What a policy benchmark run is asked to do, the scale presets, and the checks that reject
//! bad input (naming the value) before anything is spawned.

use crate::Scale;
use schedlab_os::sched::{LinuxPolicy, SchedParams};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// The three programs of seed 001.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadKind {
    /// rw.c: copy /dev/urandom to /dev/null.
    Io,
    /// calc_pi.c: Monte Carlo π.
    Cpu,
    /// rwpi.c: π with writes interleaved.
    Mixed,
}

impl WorkloadKind {
    /// In the seed's column order (IO, CPU, Mixed).
    pub const ALL: [WorkloadKind; 3] = [WorkloadKind::Io, WorkloadKind::Cpu, WorkloadKind::Mixed];

    /// Column heading in the seed's table_data.
    pub fn heading(self) -> &'static str {
        match self {
            WorkloadKind::Io => "IO",
            WorkloadKind::Cpu => "CPU",
            WorkloadKind::Mixed => "Mixed",
        }
    }
}

impl fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WorkloadKind::Io => "io",
            WorkloadKind::Cpu => "cpu",
            WorkloadKind::Mixed => "mixed",
        })
    }
}

impl FromStr for WorkloadKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "io" => Ok(WorkloadKind::Io),
            "cpu" => Ok(WorkloadKind::Cpu),
            "mixed" => Ok(WorkloadKind::Mixed),
            _ => Err(format!("unknown workload '{s}' (expected cpu, io or mixed)")),
        }
    }
}

/// The seed's process counts.
pub const SEED_PROCS: [usize; 3] = [100, 1000, 10_000];
/// Counts used by `--quick` (CI).
pub const QUICK_PROCS: [usize; 2] = [50, 200];
/// The seed's policies.
pub const SEED_POLICIES: [LinuxPolicy; 3] = [LinuxPolicy::Other, LinuxPolicy::Fifo, LinuxPolicy::Rr];
/// Default RT priority of FIFO/RR children; the harness runs one level above.
pub const DEFAULT_PRIORITY: i32 = 50;
/// SCHED_DEADLINE children share this much of one CPU in total, split evenly.
pub const DEADLINE_TOTAL_BANDWIDTH: f64 = 0.5;
/// SCHED_DEADLINE period (and relative deadline) of every child.
pub const DEADLINE_PERIOD_NS: u64 = 100_000_000;

/// A whole run's parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Params {
    pub policies: Vec<LinuxPolicy>,
    pub procs: Vec<usize>,
    pub workloads: Vec<WorkloadKind>,
    /// RT priority of FIFO/RR children (1..=98; the harness takes priority + 1).
    pub priority: i32,
    /// CPUs the children may use (DEADLINE children use every online CPU: the kernel requires it).
    pub cpus: Vec<usize>,
    /// Bound on each case, spawning included; on expiry every child is killed and reaped.
    #[serde(with = "secs")]
    pub timeout: Duration,
    /// Monte Carlo samples per cpu/mixed process (the seed: 1,000,000).
    pub iterations: u64,
    /// Bytes each io/mixed process copies, and the block size.
    pub io_bytes: u64,
    pub io_block: u64,
    /// Capture sched_switch with tracefs during each case and draw per-CPU timelines.
    pub trace: bool,
    /// The binary children exec (`schedlab workload ...`).
    pub program: PathBuf,
}

mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let secs = f64::deserialize(d)?;
        Duration::try_from_secs_f64(secs)
            .map_err(|e| serde::de::Error::custom(format!("{secs} is not a duration in seconds ({e})")))
    }
}

/// The CPUs children get by default: every allowed CPU but 0 when there are at least two,
/// so CPU 0 stays with the harness (and the rest of the machine).
pub fn default_child_cpus() -> Vec<usize> {
    let allowed = schedlab_os::affinity::allowed_cpus().unwrap_or_else(|_| vec![0]);
    if allowed.len() >= 2 {
        allowed.into_iter().filter(|&c| c != 0).collect()
    } else {
        allowed
    }
}

impl Params {
    /// The parameters of a scale: quick = 50 and 200 processes, default = 100 and 1,000,
    /// full = the seed's 100, 1,000 and 10,000; always the seed's three policies and workloads.
    pub fn for_scale(scale: Scale, program: PathBuf) -> Self {
        let procs = match scale {
            Scale::Quick => QUICK_PROCS.to_vec(),
            Scale::Default => SEED_PROCS[..2].to_vec(),
            Scale::Full => SEED_PROCS.to_vec(),
        };
        Params {
            policies: SEED_POLICIES.to_vec(),
            procs,
            workloads: WorkloadKind::ALL.to_vec(),
            priority: DEFAULT_PRIORITY,
            cpus: default_child_cpus(),
            timeout: Duration::from_secs(if scale == Scale::Quick { 60 } else { 600 }),
            iterations: 1_000_000,
            io_bytes: crate::workloads::io::DEFAULT_TOTAL,
            io_block: crate::workloads::io::DEFAULT_BLOCK as u64,
            trace: false,
            program,
        }
    }

    /// Reject bad input with the offending value named. Nothing has been spawned yet.
    pub fn validate(&self) -> anyhow::Result<()> {
        use anyhow::bail;
        if self.policies.is_empty() {
            bail!("--policy names no policy (expected some of other, batch, idle, fifo, rr, deadline)");
        }
        if self.workloads.is_empty() {
            bail!("--workload names no workload (expected some of cpu, io, mixed)");
        }
        if self.procs.is_empty() {
            bail!("--procs names no process count");
        }
        for &n in &self.procs {
            if n == 0 {
                bail!("invalid --procs value 0: each case needs at least one process");
            }
            if n > 1_000_000 {
                bail!("invalid --procs value {n}: at most 1,000,000 processes per case");
            }
        }
        for p in &self.policies {
            if p.is_realtime() && *p != LinuxPolicy::Deadline {
                p.check_priority(self.priority).map_err(|e| anyhow::anyhow!("{e}"))?;
                if self.priority >= 99 {
                    bail!(
                        "invalid priority for {p}: {} (children may use 1..=98: the harness runs one \
                         level above them so it can always reap and stop them)",
                        self.priority
                    );
                }
            }
        }
        if self.cpus.is_empty() {
            bail!("--cpus names no CPU");
        }
        let allowed = schedlab_os::affinity::allowed_cpus()?;
        for c in &self.cpus {
            if !allowed.contains(c) {
                bail!(
                    "invalid --cpus entry {c}: this process may only use CPUs {}",
                    schedlab_os::affinity::format_cpu_list(&allowed)
                );
            }
        }
        let online = schedlab_os::affinity::online_cpus();
        let rt_on_every_cpu = online > 1 && (0..online).all(|c| self.cpus.contains(&c));
        if rt_on_every_cpu && self.policies.iter().any(|p| matches!(p, LinuxPolicy::Fifo | LinuxPolicy::Rr)) {
            // On one CPU there is no other choice, and RT throttling keeps 5% for the rest.
            bail!(
                "--cpus {} would put CPU-bound real-time children on every CPU; leave at least one CPU for \
                 the harness and the system (e.g. --cpus 1-{})",
                schedlab_os::affinity::format_cpu_list(&self.cpus),
                online - 1
            );
        }
        if self.timeout.is_zero() {
            bail!("invalid --timeout 0s: each case needs time to run");
        }
        if self.iterations == 0 {
            bail!("invalid --iterations 0: the π loop needs at least one sample");
        }
        if self.io_block == 0 || self.io_bytes == 0 {
            bail!("invalid IO sizes: block {} and bytes {} must be positive", self.io_block, self.io_bytes);
        }
        if !self.program.is_absolute() {
            bail!("the workload program must be an absolute path, not {}", self.program.display());
        }
        Ok(())
    }

    /// A rough wall time in seconds, for progress: about 12 ms per process (fork, exec and a
    /// million-sample workload on one CPU) plus a second per case.
    pub fn estimate_s(&self) -> f64 {
        self.cases().iter().map(|&(n, _, _)| 1.0 + n as f64 * 0.012).sum()
    }

    /// True when any policy needs root (CAP_SYS_NICE).
    pub fn needs_realtime(&self) -> bool {
        self.policies.iter().any(|p| p.is_realtime())
    }

    /// The scheduling children of `policy` get in a case of `procs` processes.
    pub fn child_sched(&self, policy: LinuxPolicy, procs: usize) -> SchedParams {
        match policy {
            LinuxPolicy::Fifo | LinuxPolicy::Rr => SchedParams::new(policy, self.priority),
            LinuxPolicy::Deadline => {
                let runtime = deadline_runtime_ns(procs);
                SchedParams::deadline(runtime, DEADLINE_PERIOD_NS, DEADLINE_PERIOD_NS)
                    .expect("runtime is positive and below the period")
            }
            // Keep the nice value the harness was started with: children inherit it anyway,
            // and lowering it (e.g. under `nice cargo test`) would need privileges.
            _ => SchedParams { nice: inherited_nice(), ..SchedParams::new(policy, 0) },
        }
    }

    /// The CPUs children of `policy` are pinned to.
    pub fn child_cpus(&self, policy: LinuxPolicy) -> Vec<usize> {
        if policy == LinuxPolicy::Deadline {
            // SCHED_DEADLINE admission needs the task's affinity to span its root domain.
            (0..schedlab_os::affinity::online_cpus()).collect()
        } else {
            self.cpus.clone()
        }
    }

    /// The argv (after the program) of one child.
    pub fn workload_args(&self, w: WorkloadKind) -> Vec<String> {
        let mut a = vec!["workload".to_string(), w.to_string()];
        match w {
            WorkloadKind::Cpu => a.extend(["--iterations".into(), self.iterations.to_string()]),
            WorkloadKind::Io => {
                a.extend(["--block".into(), self.io_block.to_string(), "--bytes".into(), self.io_bytes.to_string()])
            }
            WorkloadKind::Mixed => a.extend([
                "--iterations".into(),
                self.iterations.to_string(),
                "--block".into(),
                self.io_block.to_string(),
                "--bytes".into(),
                self.io_bytes.to_string(),
            ]),
        }
        a
    }

    /// Every case in the seed's order: process count, then policy, then workload.
    pub fn cases(&self) -> Vec<(usize, LinuxPolicy, WorkloadKind)> {
        let mut v = Vec::new();
        for &n in &self.procs {
            for &p in &self.policies {
                for &w in &self.workloads {
                    v.push((n, p, w));
                }
            }
        }
        v
    }
}

/// Runtime per period of one SCHED_DEADLINE child when `procs` share [`DEADLINE_TOTAL_BANDWIDTH`].
pub fn deadline_runtime_ns(procs: usize) -> u64 {
    let bw = DEADLINE_TOTAL_BANDWIDTH / procs.max(1) as f64;
    ((DEADLINE_PERIOD_NS as f64 * bw) as u64).max(1024)
}

/// The calling thread's nice value (0 if it cannot be read).
fn inherited_nice() -> i32 {
    schedlab_os::sched::get_sched(0).map(|p| p.nice).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Params {
        Params::for_scale(Scale::Quick, "/bin/true".into())
    }

    #[test]
    fn a_timeout_that_is_no_duration_is_an_error_not_a_panic() {
        let mut doc = serde_json::to_value(base()).unwrap();
        assert_eq!(serde_json::from_value::<Params>(doc.clone()).unwrap().timeout, base().timeout);
        for bad in [-1.0, 1e300] {
            doc["timeout"] = serde_json::json!(bad);
            let e = serde_json::from_value::<Params>(doc.clone()).unwrap_err().to_string();
            assert!(e.contains("not a duration in seconds"), "{bad}: {e}");
        }
    }

    #[test]
    fn quick_params_are_valid() {
        base().validate().unwrap();
        assert_eq!(base().cases().len(), 3 * 3 * QUICK_PROCS.len());
    }

    #[test]
    fn bad_values_are_named() {
        let mut p = base();
        p.procs = vec![10, 0];
        assert!(p.validate().unwrap_err().to_string().contains("--procs value 0"));
        let mut p = base();
        p.priority = 0;
        assert!(p.validate().unwrap_err().to_string().contains(": 0"));
        p.priority = 99;
        assert!(p.validate().unwrap_err().to_string().contains("99"));
        p.priority = 150;
        assert!(p.validate().unwrap_err().to_string().contains("150"));
        let mut p = base();
        p.cpus = vec![4096];
        assert!(p.validate().unwrap_err().to_string().contains("4096"));
        assert!("gpu".parse::<WorkloadKind>().unwrap_err().contains("gpu"));
    }

    #[test]
    fn real_time_children_may_not_take_every_cpu() {
        let online = schedlab_os::affinity::online_cpus();
        let mut p = base();
        p.cpus = (0..online).collect();
        p.policies = vec![LinuxPolicy::Other, LinuxPolicy::Fifo];
        if online > 1 {
            assert!(p.validate().unwrap_err().to_string().contains("every CPU"));
            p.policies = vec![LinuxPolicy::Other, LinuxPolicy::Deadline];
        }
        p.validate().expect("SCHED_OTHER and DEADLINE may use every CPU; so may anything on a one-CPU machine");
    }

    #[test]
    fn deadline_bandwidth_fits_admission() {
        for n in [1, 20, 100, 1000, 10_000] {
            let r = deadline_runtime_ns(n);
            assert!((1024..=DEADLINE_PERIOD_NS).contains(&r));
            let total = r as f64 * n as f64 / DEADLINE_PERIOD_NS as f64;
            assert!(total <= DEADLINE_TOTAL_BANDWIDTH + 0.02, "{n}: {total}");
        }
    }
}
