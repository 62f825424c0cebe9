//! Linux's Completely Fair Scheduler (the classic, pre-EEVDF one in kernel/sched/fair.c):
//! every task accumulates virtual runtime `vruntime += ran × 1024 / weight(nice)`; the task with
//! the smallest vruntime runs next, for `period × weight / Σweight`, where
//! `period = max(latency, nr_running × min_granularity)`. New tasks start at the queue's
//! `min_vruntime`; woken sleepers get at most half a latency of credit (GENTLE_FAIR_SLEEPERS);
//! a woken task pre-empts the current one if its vruntime is smaller by more than the wake-up
//! granularity.

use super::common::{KeyQueue, PerTask};
use super::spec::ms;
use crate::policy::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};

/// Linux's `sched_prio_to_weight[]`: nice −20 … 19; nice 0 = 1024, each step ≈ ×1.25.
pub const NICE_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904, 3906, 3121, 2501,
    1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
];

/// The load weight of a nice value (clamped to −20..=19).
pub fn weight_of_nice(nice: i32) -> u64 {
    NICE_TO_WEIGHT[(nice.clamp(-20, 19) + 20) as usize]
}

/// `a × b / c` without overflow, in u64 when it fits.
fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    let c = c.max(1);
    match a.checked_mul(b) {
        Some(p) => p / c,
        None => ((a as u128 * b as u128) / c as u128) as u64,
    }
}

/// Linux's `sched_entity`, reduced to what this model uses.
#[derive(Debug, Clone, Copy, Default)]
struct Entity {
    vruntime: u64,
    weight: u64,
    run_start: Time,
    /// Counted in the load (queued or running) — cleared when the host charges it.
    on_rq: bool,
}

#[derive(Debug, Clone)]
pub struct Cfs {
    latency: Dur,
    min_granularity: Dur,
    wakeup_granularity: Dur,
    tree: KeyQueue<u64>,
    /// Per-task entity, in one table so an enqueue or a charge touches one cache line.
    se: PerTask<Entity>,
    load: u64,
    nr: u64,
    min_vruntime: u64,
}

impl Cfs {
    /// CFS with Linux's defaults for one CPU: latency 6 ms, min granularity 0.75 ms,
    /// wake-up granularity 1 ms.
    pub fn new(latency: Dur, min_granularity: Dur, wakeup_granularity: Dur) -> Self {
        Cfs {
            latency: latency.max(1),
            min_granularity: min_granularity.max(1),
            wakeup_granularity,
            tree: KeyQueue::default(),
            se: PerTask::default(),
            load: 0,
            nr: 0,
            min_vruntime: 0,
        }
    }

    /// `ran × 1024 / weight` (u64 unless it would overflow: u128 division is slow).
    fn vdelta(ran: Dur, weight: u64) -> u64 {
        mul_div(ran, 1024, weight)
    }

    fn remove_load(&mut self, t: TaskId) {
        if let Some(se) = self.se.get_mut_existing(t) {
            if se.on_rq {
                se.on_rq = false;
                self.load -= se.weight;
                self.nr -= 1;
            }
        }
    }

    /// The current vruntime of a running task, counting the time it has run since picked.
    fn curr_vruntime(&self, t: TaskId, now: Time) -> u64 {
        let se = self.se.get(t);
        se.vruntime + Self::vdelta(now.saturating_sub(se.run_start), se.weight)
    }
}

impl Default for Cfs {
    fn default() -> Self {
        Cfs::new(6_000_000, 750_000, 1_000_000)
    }
}

impl Policy for Cfs {
    fn name(&self) -> String {
        if self.latency == 6_000_000 && self.min_granularity == 750_000 && self.wakeup_granularity == 1_000_000 {
            "cfs".into()
        } else {
            format!(
                "cfs:latency={},min_granularity={},wakeup_granularity={}",
                ms(self.latency),
                ms(self.min_granularity),
                ms(self.wakeup_granularity)
            )
        }
    }

    fn enqueue(&mut self, task: &TaskView, why: EnqueueReason, _now: Time) {
        let t = task.id;
        let w = weight_of_nice(task.nice);
        let (min_vruntime, half_latency) = (self.min_vruntime, self.latency / 2);
        let se = self.se.get_mut(t);
        if se.on_rq && se.weight != w {
            // Re-weighted while counted: take the old weight out of the load.
            se.on_rq = false;
            self.load -= se.weight;
            self.nr -= 1;
        }
        se.weight = w;
        let vr = se.vruntime;
        let vr = match why {
            EnqueueReason::New => vr.max(min_vruntime),
            EnqueueReason::Woken => vr.max(min_vruntime.saturating_sub(half_latency)),
            EnqueueReason::Migrated => vr.max(min_vruntime),
            _ => vr,
        };
        se.vruntime = vr;
        if !se.on_rq {
            se.on_rq = true;
            self.load += w;
            self.nr += 1;
        }
        self.tree.push(task, vr);
    }

    fn dequeue(&mut self, task: TaskId) {
        if self.tree.remove(task).is_some() {
            self.remove_load(task);
        }
    }

    /// The order does not depend on priority: a priority change leaves the task in place.
    fn requeue(&mut self, _task: &TaskView, _now: Time) {}

    fn pick_next(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
        let (t, vr) = self.tree.pop(cpu)?;
        self.min_vruntime = self.min_vruntime.max(self.tree.min_key().map_or(vr, |m| m.min(vr)));
        let se = self.se.get_mut(t);
        se.run_start = now;
        let weight = se.weight;
        let period = self.latency.max(self.nr * self.min_granularity);
        let slice = mul_div(period, weight, self.load);
        Some(Pick { task: t, slice: Some(slice.max(self.min_granularity.min(period))) })
    }

    fn charge(&mut self, task: TaskId, ran: Dur, _now: Time) {
        let se = self.se.get_mut(task);
        se.vruntime += Self::vdelta(ran, se.weight);
        if se.on_rq {
            se.on_rq = false;
            self.load -= se.weight;
            self.nr -= 1;
        }
    }

    fn preempts(&self, woken: TaskId, running: TaskId, now: Time) -> bool {
        let se = self.se.get(woken);
        let gran = Self::vdelta(self.wakeup_granularity, se.weight);
        se.vruntime + gran < self.curr_vruntime(running, now)
    }

    fn task_exit(&mut self, task: TaskId) {
        self.dequeue(task);
        self.remove_load(task);
    }

    fn queued(&self) -> usize {
        self.tree.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_follow_linux_table() {
        assert_eq!(weight_of_nice(0), 1024);
        assert_eq!(weight_of_nice(-20), 88761);
        assert_eq!(weight_of_nice(19), 15);
        assert_eq!(weight_of_nice(5), 335);
    }

    #[test]
    fn slices_split_the_latency_by_weight() {
        let mut p = Cfs::default();
        p.enqueue(&TaskView::new(0), EnqueueReason::New, 0);
        p.enqueue(&TaskView { nice: -5, ..TaskView::new(1) }, EnqueueReason::New, 0);
        let a = p.pick_next(0, 0).unwrap();
        // Equal vruntime: FIFO, task 0 first; its share is 1024 / (1024 + 3121) of 6 ms.
        assert_eq!(a.task, 0);
        assert_eq!(a.slice, Some(6_000_000 * 1024 / (1024 + 3121)));
    }

    #[test]
    fn two_hogs_of_nice_0_and_minus_5_share_each_latency_period_by_weight() {
        use crate::engine::{simulate, SimConfig};
        use crate::workload::{TaskSpec, Workload};
        // Linux's CFS (sched_slice(): period × weight / load; vruntime += ran × 1024 / weight).
        // A (nice 0, weight 1024) and B (nice −5, weight 3121) arrive at 0 with vruntime 0; the
        // load is 4145 and the period max(6 ms, 2 × 0.75 ms) = 6 ms.
        // A first (equal vruntimes: first come): slice 6,000,000 × 1024 / 4145 = 1,482,267 ns;
        // A's vruntime becomes 1,482,267. B (vruntime 0) next: 6,000,000 × 3121 / 4145 =
        // 4,517,732 ns, to 5,999,999; its vruntime += 4,517,732 × 1024 / 3121 = 1,482,267.
        // Equal again: A (queued first) runs, and the pattern repeats every 5,999,999 ns.
        let hog = |n: &str, nice| TaskSpec { nice, ..TaskSpec::cpu(n, 0, 20_000_000) };
        let w = Workload { cpus: Some(1), tasks: vec![hog("A", 0), hog("B", -5)] };
        let r = simulate(&w, &mut Cfs::default(), &SimConfig::default());
        let got: Vec<(usize, u64, u64)> = r.slices.iter().take(4).map(|s| (s.task, s.start, s.end)).collect();
        assert_eq!(
            got,
            vec![(0, 0, 1_482_267), (1, 1_482_267, 5_999_999), (0, 5_999_999, 7_482_266), (1, 7_482_266, 11_999_998)]
        );
        // B gets 3121 / 4145 = 75.3% of each period: its 20 ms are done after 4 full periods
        // (18,070,928 ns of its CPU) and 1,929,072 ns of a fifth slice of 4,517,732.
        let b_done = r.tasks[1].finish.unwrap();
        assert_eq!(b_done, 4 * 5_999_999 + 1_482_267 + 1_929_072);
    }
}
