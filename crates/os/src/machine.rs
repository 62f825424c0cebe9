//! Machine facts recorded with every result: kernel, CPU model and count, clocksource,
//! RT throttling, preemption model and timer frequency, so a result can be re-read later.

use serde::{Deserialize, Serialize};

/// What a result needs to say about the machine it was measured on.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MachineFacts {
    pub hostname: String,
    /// `uname -r`.
    pub kernel: String,
    /// `uname -v` (carries PREEMPT_DYNAMIC and the build date).
    pub kernel_version: String,
    pub arch: String,
    pub cpu_model: String,
    pub cpus_online: usize,
    /// CPUs this process may use (its affinity).
    pub cpus_allowed: usize,
    pub memory_kb: u64,
    pub clocksource: Option<String>,
    pub rt_runtime_us: Option<i64>,
    pub rt_period_us: Option<i64>,
    /// `/sys/kernel/debug/sched/preempt` or the uname version's PREEMPT word.
    pub preempt: Option<String>,
    pub is_root: bool,
    /// The hypervisor when this is a virtual machine (`/sys/hypervisor/type`, or "unknown"
    /// when /proc/cpuinfo only shows the `hypervisor` flag); None on bare metal.
    #[serde(default)]
    pub hypervisor: Option<String>,
    /// The 1-minute load average when the facts were collected: other work on the machine.
    #[serde(default)]
    pub load_avg_1m: Option<f64>,
    /// The kernel's tick frequency (CONFIG_HZ from /proc/config.gz or /boot/config-<release>).
    #[serde(default)]
    pub hz: Option<u32>,
    /// EEVDF's base slice in ns (debugfs `sched/base_slice_ns`), when the kernel lets us read it.
    #[serde(default)]
    pub base_slice_ns: Option<u64>,
}

impl MachineFacts {
    /// Read the facts; missing files become empty or `None`, never an error.
    pub fn collect() -> Self {
        let uts = nix::sys::utsname::uname().ok();
        let field = |f: fn(&nix::sys::utsname::UtsName) -> &std::ffi::OsStr| {
            uts.as_ref().map(|u| f(u).to_string_lossy().into_owned()).unwrap_or_default()
        };
        let kernel_version = field(|u| u.version());
        let rt = crate::sched::rt_throttling().ok();
        MachineFacts {
            hostname: field(|u| u.nodename()),
            kernel: field(|u| u.release()),
            preempt: kernel_version.split_whitespace().find(|w| w.starts_with("PREEMPT")).map(str::to_string),
            kernel_version,
            arch: field(|u| u.machine()),
            cpu_model: cpu_model(),
            cpus_online: crate::affinity::online_cpus(),
            cpus_allowed: crate::affinity::allowed_cpus().map(|c| c.len()).unwrap_or(0),
            memory_kb: meminfo_kb("MemTotal").unwrap_or(0),
            clocksource: crate::clock::clocksource(),
            rt_runtime_us: rt.map(|r| r.runtime_us),
            rt_period_us: rt.map(|r| r.period_us),
            is_root: crate::is_root(),
            hypervisor: hypervisor(),
            load_avg_1m: std::fs::read_to_string("/proc/loadavg")
                .ok()
                .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok())),
            hz: crate::kconfig::value("CONFIG_HZ").and_then(|v| v.parse().ok()),
            base_slice_ns: std::fs::read_to_string("/sys/kernel/debug/sched/base_slice_ns")
                .ok()
                .and_then(|s| s.trim().parse().ok()),
        }
    }

    /// One sentence on where a measurement was taken, for report summaries:
    /// "Measured on a 2-CPU virtual machine (kvm; Intel Xeon …), Linux 6.18, load average 1.30
    /// at the start."
    pub fn sentence(&self) -> String {
        let kind = match &self.hypervisor {
            Some(h) if h != "unknown" => format!("virtual machine ({h}; {})", self.cpu_model),
            Some(_) => format!("virtual machine ({})", self.cpu_model),
            None => format!("machine ({})", self.cpu_model),
        };
        let load = self.load_avg_1m.map(|l| format!(", load average {l:.2} at the start")).unwrap_or_default();
        format!("Measured on a {}-CPU {kind}, Linux {}{load}.", self.cpus_online, self.kernel)
    }
}

fn hypervisor() -> Option<String> {
    if let Ok(t) = std::fs::read_to_string("/sys/hypervisor/type") {
        let t = t.trim();
        if !t.is_empty() {
            return Some(t.to_string());
        }
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let flags = cpuinfo.lines().find(|l| l.starts_with("flags"))?;
    flags.split_whitespace().any(|f| f == "hypervisor").then(|| "unknown".to_string())
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".to_string())
}

/// A `/proc/meminfo` field in kB.
pub fn meminfo_kb(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    text.lines()
        .find(|l| l.split(':').next() == Some(key))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_read() {
        let f = MachineFacts::collect();
        assert!(!f.kernel.is_empty());
        assert!(f.cpus_online >= 1);
        assert!(f.memory_kb > 0);
        assert!(
            f.cpus_allowed >= 1 && f.cpus_allowed <= f.cpus_online,
            "{} allowed of {}",
            f.cpus_allowed,
            f.cpus_online
        );
        let s = f.sentence();
        assert!(s.contains(&format!("{}-CPU", f.cpus_online)) && s.contains(&f.kernel), "{s}");
    }
}
