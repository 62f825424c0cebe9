//! Task groups as the load balancer and the wake-up placement weigh them (`CONFIG_FAIR_GROUP_SCHED`
//! with autogroup: every session's tasks share a group of 1024 shares). A group is one entity per
//! CPU at the root, beside the root's own tasks (kernel threads, and on this VM its agent); its
//! weight on a CPU is the group's shares in proportion to the group's load there
//! (`calc_group_shares()`), and its load that weight times the part of the time it had a task
//! to run (`update_tg_cfs_load()`). A CPU's load is its root tasks' loads plus its group
//! entities' (`cpu_load()`), and a grouped task weighs its share of its group's entity
//! (`task_h_load()`).
//!
//! Simpler than the kernel: the entity's weight is taken from the tasks' averaged loads at the
//! moment asked, where the kernel recomputes it at each enqueue, dequeue and tick (from the
//! larger of the queue's instantaneous weight and its average) and averages the entity's load
//! over time; the hierarchy is one level deep; pick order within a CPU stays flat (a group's
//! tasks compete with root tasks by their own weights).

use super::super::pelt::SCALE;
use super::Smp;
use crate::policy::{CpuId, TaskId, Time};

/// `MIN_SHARES`: the least weight a group entity has.
const MIN_SHARES: u64 = 2;
/// The shares of a group (an autogroup of nice 0, a cgroup's default `cpu.weight`).
const GROUP_SHARES: u64 = SCALE;

/// A group's tasks on one CPU: Σ load, Σ runnable.
fn on_cpu(smp: &Smp, g: u32, c: CpuId, now: Time) -> (u64, u64) {
    smp.cpus[c].attached.iter().filter(|&&t| smp.tasks.get_ref(t).and_then(|s| s.group) == Some(g)).fold(
        (0, 0),
        |(l, r), &t| {
            let p = smp.pelt_of(t, now);
            (l + p.load_avg, r + p.runnable_avg)
        },
    )
}

impl Smp {
    /// The load of group `g`'s entity on CPU `c`.
    pub fn group_entity_load(&self, g: u32, c: CpuId, now: Time) -> u64 {
        let (here, runnable) = on_cpu(self, g, c, now);
        let total: u64 = (0..self.cpus.len()).map(|x| if x == c { here } else { on_cpu(self, g, x, now).0 }).sum();
        if total == 0 {
            return 0;
        }
        let shares = (GROUP_SHARES * here / total).clamp(MIN_SHARES, GROUP_SHARES);
        shares * runnable.min(SCALE) / SCALE
    }

    /// `cpu_load()`: the root's tasks' loads and its group entities'.
    pub fn root_load(&self, c: CpuId, now: Time) -> u64 {
        let mut load = 0;
        let mut groups: Vec<u32> = Vec::new();
        for &t in &self.cpus[c].attached {
            match self.tasks.get_ref(t).and_then(|s| s.group) {
                None => load += self.pelt_of(t, now).load_avg,
                Some(g) if !groups.contains(&g) => groups.push(g),
                Some(_) => {}
            }
        }
        load + groups.iter().map(|&g| self.group_entity_load(g, c, now)).sum::<u64>()
    }

    /// `task_h_load()`: what moving `t` moves of its CPU's load.
    pub fn h_load(&self, t: TaskId, now: Time) -> u64 {
        let own = self.pelt_of(t, now).load_avg;
        let Some((g, c)) = self.tasks.get_ref(t).and_then(|s| Some((s.group?, s.attached?))) else { return own };
        let (here, _) = on_cpu(self, g, c, now);
        own * self.group_entity_load(g, c, now) / (here + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::pelt::Pelt;
    use super::*;

    /// An SMP state with tasks `(cpu, group, load, runnable)` whose signals hold still.
    fn smp(tasks: &[(CpuId, Option<u32>, u64, u64)]) -> Smp {
        let mut s = Smp::new(2, 4_000_000);
        for (t, &(c, g, load, runnable)) in tasks.iter().enumerate() {
            s.attach(t, c);
            let x = s.tasks.get_mut(t);
            x.group = g;
            x.pelt = Pelt { load_avg: load, runnable_avg: runnable, last_update: 0, ..Pelt::default() };
            s.any_group |= g.is_some();
        }
        s
    }

    #[test]
    fn a_group_weighs_its_shares_split_by_its_load_per_cpu() {
        // Group 1: a hog (1024) and a sleeper (360) on CPU 0, a hog and a sleeper (470) on CPU 1;
        // a root task (an agent at nice -10, load 2000) on CPU 1.
        let s = smp(&[
            (0, Some(1), 1024, 1024),
            (0, Some(1), 360, 360),
            (1, Some(1), 1024, 1024),
            (1, Some(1), 470, 300),
            (1, None, 2000, 200),
        ]);
        // Shares: 1024 × 1384 / 2878 = 492 on CPU 0, 1024 × 1494 / 2878 = 531 on CPU 1; the hog
        // keeps each entity runnable all the time.
        assert_eq!(s.group_entity_load(1, 0, 0), 492);
        assert_eq!(s.group_entity_load(1, 1, 0), 531);
        assert_eq!(s.root_load(0, 0), 492);
        assert_eq!(s.root_load(1, 0), 531 + 2000);
        // The sleeper on CPU 1 weighs 470 × 531 / 1495 = 166 of it; the root task its own load.
        assert_eq!(s.h_load(3, 0), 166);
        assert_eq!(s.h_load(4, 0), 2000);
    }

    #[test]
    fn an_entity_that_seldom_has_work_weighs_little_and_without_groups_nothing_changes() {
        // A group of one sleeper, runnable a fifth of the time: all its shares on CPU 0, a fifth
        // of them as load.
        let s = smp(&[(0, Some(7), 300, 205), (1, None, 1024, 1024)]);
        assert_eq!(s.group_entity_load(7, 0, 0), 1024 * 205 / 1024);
        assert_eq!(s.group_entity_load(7, 1, 0), 0);
        let flat = smp(&[(0, None, 300, 205), (1, None, 1024, 1024)]);
        assert!(!flat.any_group);
        assert_eq!((flat.root_load(0, 0), flat.h_load(0, 0)), (300, 300));
    }
}
