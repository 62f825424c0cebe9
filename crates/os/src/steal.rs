//! Time the hypervisor took from each CPU: the `steal` column of `/proc/stat`. A guest's clocks
//! run on while its vCPU is descheduled by the host, so the run times in a scheduler trace
//! include stolen time, while the tasks' own CPU clocks do not (with paravirtual steal
//! accounting the kernel leaves it out of `sum_exec_runtime`). A comparison of the two needs it.

use nix::unistd::{sysconf, SysconfVar};

/// Stolen time of each CPU since boot, in ns, indexed by CPU number (at `/proc/stat`'s
/// resolution, one USER_HZ tick: 10 ms at the usual 100). None where `/proc/stat` cannot be
/// read.
pub fn per_cpu_ns() -> Option<Vec<u64>> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    Some(parse(&stat, resolution_ns()))
}

/// The resolution of [`per_cpu_ns`] in ns (one USER_HZ tick).
pub fn resolution_ns() -> u64 {
    let hz = sysconf(SysconfVar::CLK_TCK).ok().flatten().filter(|&h| h > 0).unwrap_or(100) as u64;
    1_000_000_000 / hz
}

/// Steal per CPU from the text of `/proc/stat` (`cpuN user nice system idle iowait irq softirq
/// steal …`), `tick_ns` per unit. CPUs missing from the text (offline) read 0.
pub fn parse(stat: &str, tick_ns: u64) -> Vec<u64> {
    let mut steal = Vec::new();
    for line in stat.lines() {
        let mut f = line.split_whitespace();
        let Some(cpu) = f.next().and_then(|n| n.strip_prefix("cpu")).and_then(|n| n.parse::<usize>().ok()) else {
            continue;
        };
        let ticks: u64 = f.nth(7).and_then(|s| s.parse().ok()).unwrap_or(0);
        if steal.len() <= cpu {
            steal.resize(cpu + 1, 0);
        }
        steal[cpu] = ticks * tick_ns;
    }
    steal
}

/// What each CPU lost between two readings of [`per_cpu_ns`].
pub fn since(before: &[u64], after: &[u64]) -> Vec<u64> {
    after.iter().enumerate().map(|(i, a)| a.saturating_sub(before.get(i).copied().unwrap_or(0))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_eighth_column_of_each_cpu_line_is_read() {
        let stat = "cpu  10 0 5 100 1 0 2 7 0 0\ncpu0 4 0 2 50 1 0 1 3 0 0\ncpu2 6 0 3 50 0 0 1 4 0 0\nintr 5\n";
        assert_eq!(parse(stat, 10_000_000), vec![30_000_000, 0, 40_000_000]);
        assert_eq!(since(&[10, 5], &[15, 5, 9]), vec![5, 0, 9]);
    }
}
