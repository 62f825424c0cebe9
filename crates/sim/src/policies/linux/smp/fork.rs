//! Where a forked fair task starts: `sched_balance_find_dst_cpu()` (Linux 6.18, fair.c, with
//! WF_FORK) for CPUs that share one cache, each its own group. The idlest other CPU is found
//! (`update_pick_idlest()`: by group type — spare capacity, fully busy, overloaded, the
//! `group_classify()` of `rq->nr_running`, utilisation and runnable average — then the lower
//! average load, or more idle CPUs and then the lower utilisation); the parent's CPU, the local
//! group, keeps the child unless that CPU is idler (`sched_balance_find_dst_group()`): by type,
//! then between busy ones by average load with the parent's CPU favoured by the domain's
//! imbalance margin, between ones with spare capacity by idle CPUs alone. Utilisation is
//! `cpu_util()`'s, with the runnable tasks' estimates ([`super::util_est`]): tasks that just woke
//! beside the parent make its CPU overloaded by their estimates, not by their decayed averages.
//! Real-time and deadline children start where the policy places a new task.
//!
//! The group type is what keeps a child beside a parent whose CPU has spare capacity, even when
//! a sleeper still queued there (a delayed entity) makes its task count look like a busier CPU's.

use super::super::Linux;
use super::balance::{classify, GroupType};
use super::select::IMBALANCE_PCT;
use crate::policy::{CpuId, TaskId, Time};

/// `struct sg_lb_stats` of a one-CPU group as `update_sg_wakeup_stats()` fills it for a task
/// not yet on any CPU.
#[derive(Debug, Clone, Copy)]
struct WakeupStats {
    kind: GroupType,
    avg_load: u64,
    idle_cpus: u32,
    util: u64,
}

/// `update_pick_idlest()`: is `s` idler than the idlest so far?
fn idler(s: &WakeupStats, idlest: Option<&WakeupStats>) -> bool {
    let Some(i) = idlest else { return true };
    if s.kind != i.kind {
        return s.kind < i.kind;
    }
    match s.kind {
        GroupType::Overloaded | GroupType::FullyBusy => s.avg_load < i.avg_load,
        GroupType::Misfit => false,
        GroupType::HasSpare => s.idle_cpus > i.idle_cpus || (s.idle_cpus == i.idle_cpus && s.util < i.util),
    }
}

impl Linux {
    /// The forks the workload gave a CPU (a replay starts them where the kernel did), each with
    /// the CPU the rule below chose: (task, the rule's CPU, the CPU given).
    pub fn forks_checked(&self) -> &[(TaskId, CpuId, CpuId)] {
        self.smp.as_ref().map_or(&[], |s| &s.forks_checked)
    }

    fn wakeup_stats(&self, c: CpuId, now: Time) -> WakeupStats {
        let smp = self.smp.as_ref().expect("smp");
        let (load, util, runnable) = smp.cpu_signals(c, now);
        let (nr, cap) = (self.rqs[c].nr_running(), smp.capacity(c, now));
        let kind = classify(nr, util, runnable, cap, false);
        let busy = matches!(kind, GroupType::FullyBusy | GroupType::Overloaded);
        let idle_cpus = u32::from(nr == 0 && self.idle(c));
        WakeupStats { kind, avg_load: if busy { load * 1024 / cap } else { 0 }, idle_cpus, util }
    }

    /// The CPU a task forked on `parent` starts on.
    pub(crate) fn select_fork(&mut self, t: TaskId, parent: CpuId, now: Time) -> CpuId {
        let mut idlest: Option<(CpuId, WakeupStats)> = None;
        for c in (0..self.rqs.len()).filter(|&c| c != parent && self.allowed(t, c)) {
            let s = self.wakeup_stats(c, now);
            if idler(&s, idlest.as_ref().map(|(_, i)| i)) {
                idlest = Some((c, s));
            }
        }
        let Some((other, is)) = idlest else { return parent };
        if !self.allowed(t, parent) {
            return other;
        }
        let ls = self.wakeup_stats(parent, now);
        if ls.kind != is.kind {
            return if ls.kind < is.kind { parent } else { other };
        }
        let stay = match ls.kind {
            GroupType::Overloaded | GroupType::FullyBusy => {
                let imbalance = 1024 * (IMBALANCE_PCT - 100) / 100;
                is.avg_load >= ls.avg_load + imbalance || 100 * ls.avg_load <= IMBALANCE_PCT * is.avg_load
            }
            // Equal capacities: the kernel keeps the child home.
            GroupType::Misfit => true,
            GroupType::HasSpare => ls.idle_cpus >= is.idle_cpus,
        };
        if stay {
            parent
        } else {
            other
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(kind: GroupType, avg_load: u64, idle: bool, util: u64) -> WakeupStats {
        WakeupStats { kind, avg_load, idle_cpus: u32::from(idle), util }
    }

    #[test]
    fn the_idlest_group_is_by_type_then_load_or_idleness() {
        let spare = stats(GroupType::HasSpare, 0, false, 300);
        let overloaded = stats(GroupType::Overloaded, 2048, false, 1024);
        assert!(idler(&spare, Some(&overloaded)) && !idler(&overloaded, Some(&spare)));
        assert!(idler(&overloaded, None));
        // Busy: the lower average load; equal is not idler (the first found stays).
        let lighter = stats(GroupType::Overloaded, 1500, false, 1024);
        assert!(idler(&lighter, Some(&overloaded)) && !idler(&overloaded, Some(&overloaded)));
        // Spare: an idle CPU, then the lower utilisation.
        let idle = stats(GroupType::HasSpare, 0, true, 500);
        assert!(idler(&idle, Some(&spare)) && !idler(&spare, Some(&idle)));
        assert!(idler(&stats(GroupType::HasSpare, 0, false, 200), Some(&spare)));
    }
}
