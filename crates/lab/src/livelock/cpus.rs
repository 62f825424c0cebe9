//! Where the roles run: the kernel role on one CPU (the last one this process may use, never
//! CPU 0 when another exists), devices and apps on the others, plus the RT preflight.

use anyhow::{bail, Result};
use schedlab_os::affinity;

/// The kernel role's CPU and the CPUs left for devices and apps.
pub fn choose(kernel_cpu: Option<usize>) -> Result<(usize, Vec<usize>)> {
    let allowed = affinity::allowed_cpus()?;
    if allowed.len() < 2 {
        schedlab_os::bail_usage!(
            "the live livelock system needs two CPUs (the kernel role takes one, devices and apps the other); \
             this process may use only {}",
            affinity::format_cpu_list(&allowed)
        );
    }
    let k = match kernel_cpu {
        Some(c) if allowed.contains(&c) => c,
        Some(c) => schedlab_os::bail_usage!(
            "invalid kernel CPU: {c} (this process may use CPUs {})",
            affinity::format_cpu_list(&allowed)
        ),
        None => *allowed.iter().rev().find(|&&c| c != 0).unwrap_or(&allowed[allowed.len() - 1]),
    };
    let others = allowed.into_iter().filter(|&c| c != k).collect();
    Ok((k, others))
}

/// Refuse to start unless SCHED_FIFO is usable and bounded: root (or CAP_SYS_NICE) and RT
/// throttling on.
pub fn preflight() -> Result<()> {
    if !schedlab_os::is_root() {
        bail!("the live kernel role uses SCHED_FIFO threads, which need root or CAP_SYS_NICE: run with sudo");
    }
    schedlab_os::sched::require_rt_throttling()?;
    Ok(())
}
