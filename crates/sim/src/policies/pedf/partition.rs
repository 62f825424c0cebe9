//! First-fit decreasing (FFD) partitioning of tasks onto CPUs for `pedf`.
//!
//! Each task's weight is its density C / min(D, T): C is one job's CPU demand, D its relative
//! deadline and T its period, whichever it has (both: the smaller). For
//! the usual implicit-deadline task (D = T) that is its utilisation C / T. On one CPU, EDF meets
//! every deadline if the densities sum to at most 1 (exactly when D = T: Liu & Layland 1973), so
//! a CPU takes a task only while its densities stay ≤ 1 (to within 1e-9, for rounding).
//!
//! Order: density decreasing, equal densities by task id (lower first); each task goes to the
//! first CPU (lowest number) among those it may use that still fits it. A task that fits nowhere
//! goes to the least-loaded CPU it may use (lowest number on ties) and is flagged
//! (`fits: false`): it will run, but EDF on that CPU may miss deadlines. Tasks with neither a
//! deadline nor a period (no density) come last, by task id, each to the allowed CPU with the
//! fewest tasks so far. (After J. M. López, J. L. Díaz and D. F. García, "Utilization bounds
//! for EDF scheduling on real-time multiprocessor systems", Real-Time Systems 28(1), 2004, whose
//! EDF-FF with decreasing utilisations this is.)

use crate::policy::{CpuId, Dur, TaskId};

/// Slack for floating-point sums of densities.
const EPS: f64 = 1e-9;

/// Where one task was put.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    pub cpu: CpuId,
    /// C / min(D, T); None for a task with neither (best effort).
    pub density: Option<f64>,
    /// False if the task fitted on no CPU and was put on the least-loaded one.
    pub fits: bool,
}

/// A task's density from its job demand `c` and its relative deadline and period.
pub fn density(c: Dur, deadline: Option<Dur>, period: Option<Dur>) -> Option<f64> {
    let window = match (deadline, period) {
        (Some(d), Some(p)) => d.min(p),
        (Some(w), None) | (None, Some(w)) => w,
        (None, None) => return None,
    };
    Some(c as f64 / window.max(1) as f64)
}

/// The CPUs among `0..cpus` that a task with `affinity` may use (all if it names none of them).
fn allowed(affinity: Option<&[CpuId]>, cpus: usize) -> Vec<CpuId> {
    let v: Vec<CpuId> = (0..cpus).filter(|c| affinity.is_none_or(|a| a.contains(c))).collect();
    if v.is_empty() {
        (0..cpus).collect()
    } else {
        v
    }
}

/// CPU loads (sum of densities) and task counts, as tasks are placed one by one.
#[derive(Debug, Clone, Default)]
pub struct Bins {
    pub load: Vec<f64>,
    pub count: Vec<usize>,
}

impl Bins {
    pub fn new(cpus: usize) -> Self {
        Bins { load: vec![0.0; cpus.max(1)], count: vec![0; cpus.max(1)] }
    }

    /// Place one task: first fit by density, least loaded if none fits, fewest tasks if it has
    /// no density.
    pub fn place(&mut self, density: Option<f64>, affinity: Option<&[CpuId]>) -> Placement {
        let cpus = allowed(affinity, self.load.len());
        let (cpu, fits) = match density {
            None => (*cpus.iter().min_by_key(|&&c| (self.count[c], c)).expect("a CPU"), true),
            Some(u) => match cpus.iter().find(|&&c| self.load[c] + u <= 1.0 + EPS) {
                Some(&c) => (c, true),
                None => {
                    let least = cpus.iter().copied().reduce(|a, b| if self.load[b] < self.load[a] { b } else { a });
                    (least.expect("a CPU"), false)
                }
            },
        };
        self.load[cpu] += density.unwrap_or(0.0);
        self.count[cpu] += 1;
        Placement { cpu, density, fits }
    }

    /// Take a placed task out of its bin (it is placed again elsewhere).
    pub fn unplace(&mut self, p: &Placement) {
        self.load[p.cpu] = (self.load[p.cpu] - p.density.unwrap_or(0.0)).max(0.0);
        self.count[p.cpu] = self.count[p.cpu].saturating_sub(1);
    }
}

/// A task to place: its id, density and allowed CPUs.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub task: TaskId,
    pub density: Option<f64>,
    pub affinity: Option<Vec<CpuId>>,
}

impl Bins {
    /// First-fit decreasing over a batch, on top of what the bins hold: placements in the order
    /// made (density decreasing, then task id; tasks without a density last, by id).
    pub fn place_decreasing(&mut self, mut batch: Vec<Item>) -> Vec<(TaskId, Placement)> {
        batch.sort_by(|a, b| match (a.density, b.density) {
            (Some(x), Some(y)) => y.total_cmp(&x).then(a.task.cmp(&b.task)),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => a.task.cmp(&b.task),
        });
        batch.into_iter().map(|i| (i.task, self.place(i.density, i.affinity.as_deref()))).collect()
    }
}
