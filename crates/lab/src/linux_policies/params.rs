//! What a policy benchmark run is asked to do, the scale presets, and the checks that reject
//! bad input (naming the value) before anything is spawned.

use crate::Scale;
use schedlab_os::sched::{LinuxPolicy, SchedParams};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// The three programs of seed 001, and `empty`: a program that only execs and exits, whose
/// rusage is the start-up cost left in every other case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum WorkloadKind {
    /// rw.c: copy /dev/urandom to /dev/null.
    Io,
    /// calc_pi.c: Monte Carlo π.
    Cpu,
    /// rwpi.c: π with writes interleaved.
    Mixed,
    /// Exec and exit: the start-up cost.
    Empty,
}

impl WorkloadKind {
    /// The seed's three programs in its column order (IO, CPU, Mixed).
    pub const SEED: [WorkloadKind; 3] = [WorkloadKind::Io, WorkloadKind::Cpu, WorkloadKind::Mixed];
    /// The seed's programs and then `empty`.
    pub const ALL: [WorkloadKind; 4] = [WorkloadKind::Io, WorkloadKind::Cpu, WorkloadKind::Mixed, WorkloadKind::Empty];

    /// Column heading in the seed's table_data (`Empty` is ours).
    pub fn heading(self) -> &'static str {
        match self {
            WorkloadKind::Io => "IO",
            WorkloadKind::Cpu => "CPU",
            WorkloadKind::Mixed => "Mixed",
            WorkloadKind::Empty => "Empty",
        }
    }
}

impl fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WorkloadKind::Io => "io",
            WorkloadKind::Cpu => "cpu",
            WorkloadKind::Mixed => "mixed",
            WorkloadKind::Empty => "empty",
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
            "empty" => Ok(WorkloadKind::Empty),
            _ => Err(format!("unknown workload '{s}' (expected cpu, io, mixed or empty)")),
        }
    }
}

/// The seed's process counts.
pub const SEED_PROCS: [usize; 3] = [100, 1000, 10_000];
/// `--quick` copies the calibrated io bytes divided by this.
pub const QUICK_IO_DIVISOR: u64 = 10;
/// The seed's Monte Carlo samples per cpu/mixed process.
pub const SEED_ITERATIONS: u64 = 1_000_000;
/// Samples per cpu/mixed process under `--quick`: the seed's million take about 3.5 ms here,
/// under one 4 ms tick, so a SCHED_OTHER child is pre-empted about 0.5 times — too close to
/// FIFO's 0–0.3 (switches forced by the harness and the kernel) to tell apart in one run. Four
/// times as many span three to four ticks.
pub const QUICK_ITERATIONS: u64 = 4 * SEED_ITERATIONS;
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
    /// Bytes each io/mixed process copies (default: calibrated to the seed's system time per io
    /// process, see [`crate::workloads::io::DEFAULT_TOTAL`]), and the block size.
    pub io_bytes: u64,
    pub io_block: u64,
    /// Capture sched_switch with tracefs during each case and draw per-CPU timelines.
    pub trace: bool,
    /// Children over every allowed CPU but the harness's (the seed let its children use every
    /// CPU) instead of `--cpus`; `cpus` then holds that set.
    #[serde(default)]
    pub unpinned: bool,
    /// The binary children exec: `schedlab-work` (see [`work_program`]).
    pub program: PathBuf,
}

/// The name of the tiny workload binary children exec.
pub const WORK_BINARY: &str = "schedlab-work";

/// `schedlab-work` beside the running executable (cargo builds both into target/<profile>/),
/// or an error naming the path looked at.
pub fn work_program() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    work_program_beside(&exe)
}

/// `schedlab-work` in the directory of `exe`, or an error naming the path looked at.
pub fn work_program_beside(exe: &std::path::Path) -> anyhow::Result<PathBuf> {
    let path = exe.parent().unwrap_or(std::path::Path::new("/")).join(WORK_BINARY);
    if !path.is_file() {
        anyhow::bail!(
            "the workload program {} is missing: seed 001's children exec it (`cargo build --release` builds it \
             beside schedlab; `cargo install --path crates/cli` installs both)",
            path.display()
        );
    }
    Ok(path)
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

/// The CPUs children get with `--unpinned`: every allowed CPU but the harness's, the lowest
/// allowed one (on a 2-CPU machine that is one CPU, the same set as the default's).
pub fn unpinned_child_cpus() -> Vec<usize> {
    let allowed = schedlab_os::affinity::allowed_cpus().unwrap_or_else(|_| vec![0]);
    if allowed.len() >= 2 {
        allowed[1..].to_vec()
    } else {
        allowed
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
    /// full = the seed's 100, 1,000 and 10,000; always the seed's three policies and workloads
    /// and the `empty` case. `--quick` copies a tenth of the calibrated io bytes
    /// ([`QUICK_IO_DIVISOR`]), so its io cases stay short, and computes [`QUICK_ITERATIONS`].
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
            iterations: if scale == Scale::Quick { QUICK_ITERATIONS } else { SEED_ITERATIONS },
            io_bytes: if scale == Scale::Quick {
                crate::workloads::io::DEFAULT_TOTAL / QUICK_IO_DIVISOR
            } else {
                crate::workloads::io::DEFAULT_TOTAL
            },
            io_block: crate::workloads::io::DEFAULT_BLOCK as u64,
            trace: false,
            unpinned: false,
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
            bail!("--workload names no workload (expected some of cpu, io, mixed, empty)");
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

    /// A rough wall time in seconds, for progress: per process about 1 ms of fork and exec,
    /// 5 ms per million π samples and 4 ms per MiB copied from /dev/urandom (on one CPU),
    /// plus a second per case.
    pub fn estimate_s(&self) -> f64 {
        let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
        let per_proc = |w: WorkloadKind| {
            0.001
                + match w {
                    WorkloadKind::Cpu => 0.005 * self.iterations as f64 / 1e6,
                    WorkloadKind::Io => 0.004 * mib(self.io_bytes),
                    WorkloadKind::Mixed => 0.005 * self.iterations as f64 / 1e6 + 0.0005 * mib(self.io_bytes),
                    WorkloadKind::Empty => 0.0,
                }
        };
        self.cases().iter().map(|&(n, _, w)| 1.0 + n as f64 * per_proc(w)).sum()
    }

    /// Where the children ran, in words, for every table: pinned to `--cpus` or unpinned.
    pub fn placement(&self) -> String {
        let list = schedlab_os::affinity::format_cpu_list(&self.cpus);
        if self.unpinned {
            format!(
                "children unpinned: CPUs {list} (--unpinned: every allowed CPU but the harness's; the seed's \
                 children could use every CPU)"
            )
        } else {
            format!("children pinned to CPUs {list} (--cpus)")
        }
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

    /// The argv (after the program, `schedlab-work`) of one child.
    pub fn workload_args(&self, w: WorkloadKind) -> Vec<String> {
        let mut a = vec![w.to_string()];
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
            WorkloadKind::Empty => {}
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
        assert_eq!(base().cases().len(), 3 * 4 * QUICK_PROCS.len());
    }

    #[test]
    fn every_child_argv_is_one_the_work_binary_accepts() {
        use schedlab_work::command::Job;
        let mut p = Params::for_scale(Scale::Default, "/x/schedlab-work".into());
        p.iterations = 123;
        p.io_block = 512;
        for w in WorkloadKind::ALL {
            let argv = p.workload_args(w);
            let job = Job::parse(argv.iter().map(std::ffi::OsString::from)).unwrap_or_else(|e| panic!("{w}: {e}"));
            let want = match w {
                WorkloadKind::Cpu => Job::Cpu { iterations: 123 },
                WorkloadKind::Io => Job::Io {
                    block: 512,
                    bytes: crate::workloads::io::DEFAULT_TOTAL,
                    input: "/dev/urandom".into(),
                    output: "/dev/null".into(),
                },
                WorkloadKind::Mixed => Job::Mixed {
                    iterations: 123,
                    block: 512,
                    bytes: crate::workloads::io::DEFAULT_TOTAL,
                    output: "/dev/null".into(),
                },
                WorkloadKind::Empty => Job::Empty,
            };
            assert_eq!(job, want, "{argv:?}");
        }
    }

    #[test]
    fn quick_copies_a_tenth_of_the_calibrated_bytes() {
        let full = Params::for_scale(Scale::Full, "/x".into());
        assert_eq!(full.io_bytes, crate::workloads::io::DEFAULT_TOTAL);
        assert_eq!(base().io_bytes, full.io_bytes / QUICK_IO_DIVISOR);
        assert!(full.workloads.contains(&WorkloadKind::Empty));
    }

    #[test]
    fn a_missing_work_binary_is_named_with_how_to_build_it() {
        let dir = tempfile::tempdir().unwrap();
        let e = work_program_beside(&dir.path().join("schedlab")).unwrap_err().to_string();
        assert!(e.contains(&dir.path().join(WORK_BINARY).display().to_string()) && e.contains("cargo build"), "{e}");
        std::fs::write(dir.path().join(WORK_BINARY), b"").unwrap();
        assert_eq!(work_program_beside(&dir.path().join("schedlab")).unwrap(), dir.path().join(WORK_BINARY));
    }

    #[test]
    fn each_placement_says_which_setting_it_is() {
        let mut p = base();
        p.cpus = vec![1, 2];
        assert_eq!(p.placement(), "children pinned to CPUs 1-2 (--cpus)");
        p.unpinned = true;
        assert!(p.placement().starts_with("children unpinned: CPUs 1-2"), "{}", p.placement());
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
