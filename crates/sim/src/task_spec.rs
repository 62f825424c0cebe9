//! One task of a workload, laid out for workloads of millions of tasks: the fields every task
//! has are inline; the ones few tasks use (deadline, period, runtime, affinity, class, locks,
//! wake-ups, clock reads, start CPU) live in one box that a plain task never allocates. A
//! `TaskSpec` dereferences to those fields, so `spec.deadline` reads the same whether the box
//! exists or not (without it, every rare field has its default) and `spec.deadline = …` creates
//! the box. That keeps a plain task at 72 bytes instead of 272. Its bursts sit inline when
//! there is one (a plain CPU-bound task): a heap block of one burst costs 32 bytes a task, 305 MiB
//! at 10 million tasks.

use crate::policy::{CpuId, Dur, Time};
use crate::workload::{BurstPoint, LockUse, WakeUp};
use smallvec::SmallVec;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

/// A task's bursts: CPU, I/O, CPU, … — one burst inline, more on the heap.
pub type Bursts = SmallVec<[Dur; 1]>;

/// One task. Times in nanoseconds. The rare fields are reached through `Deref`
/// ([`RareFields`]).
#[derive(Debug, Clone, Default)]
pub struct TaskSpec {
    /// Shared, so per-task results carry the name without copying it.
    pub name: Arc<str>,
    pub arrival: Time,
    /// CPU, I/O, CPU, … (odd count: starts and ends with CPU).
    pub bursts: Bursts,
    /// Lower number = higher priority — except for classes `fifo`/`rr` under `linux`, where it is
    /// the Linux real-time priority 1–99 and a higher number wins.
    pub priority: i32,
    /// Share weight (WRR, stride, lottery); ≥ 1.
    pub weight: u32,
    /// Linux nice −20..=19 (CFS).
    pub nice: i32,
    /// Number of jobs (periodic tasks); 1 otherwise.
    pub jobs: u32,
    /// The rare fields; None reads as all defaults. Read and write them through `Deref`
    /// (`spec.deadline`); public so that `..spec` and `..Default::default()` work.
    pub rare: Option<Box<RareFields>>,
}

/// The fields of a [`TaskSpec`] that few tasks use.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RareFields {
    /// Relative deadline of each job (from its release).
    pub deadline: Option<Dur>,
    /// Period of a periodic task: job k is released at `arrival + k × period`.
    pub period: Option<Dur>,
    /// `sched_attr.sched_runtime`: for class `deadline` under `linux`, the CBS runtime per period
    /// (with `deadline` as the relative deadline); for a fair task under `linux`/`eevdf`, a
    /// custom slice (the kernel clamps it to 0.1–100 ms). Unused by other policies.
    pub runtime: Option<Dur>,
    /// Allowed CPUs; None = any.
    pub affinity: Option<Vec<CpuId>>,
    /// Queue or class for `mlq`/`linux`/`freebsd`/`windows` (e.g. "0", "fifo", "deadline").
    pub class: Option<String>,
    pub locks: Vec<LockUse>,
    /// Wake-ups it gives other tasks, ordered by (burst, at).
    pub wakes: Vec<WakeUp>,
    /// Its blocked intervals (0 = the first I/O entry, counted per job) that last until another
    /// task wakes it rather than for their length.
    pub until_woken: Vec<usize>,
    /// Where it reads its own CPU clock, ordered by (burst, at): an expired slice ends there.
    pub runtime_reads: Vec<BurstPoint>,
    /// The CPU it starts on, for a policy that keeps a queue per CPU (a replayed trace's task
    /// that was already there: where the trace first shows it). None: the policy places it.
    pub start_cpu: Option<CpuId>,
    /// The CPU each of its CPU bursts runs on (counted per job; past the last, the last's), in
    /// place of `affinity`: a replayed trace's background task held where it ran live, since
    /// where the kernel put it is not what the replay predicts. Empty: `affinity` holds.
    pub burst_cpus: Vec<CpuId>,
    /// When each of its blocked intervals ends (workload time; entry `k` for interval `k` of its
    /// only job), in place of the interval's length: a replayed trace's background task, whose
    /// timers and devices woke it when they did live, however late the model ran it before. An
    /// interval that began after its end lasts 0; one in `until_woken` waits for its wake-up.
    /// Empty: every interval lasts its length.
    pub block_ends: Vec<Time>,
    /// The task that forks it: it arrives at that task's first wake-up naming it (the fork, at
    /// that point of the parent's CPU bursts) rather than at `arrival`, which then only records
    /// when it began in the run it came from. A replayed fork stays where it happened in the
    /// parent's work even when the model runs the parent earlier or later than the kernel did.
    /// Wake-ups from other tasks before then are kept for its first wait.
    pub forked_by: Option<usize>,
    /// A periodic task whose jobs differ (rt-app's phases on one timer): its jobs in order, so
    /// many of each shape. Empty: every job is `bursts`. When set, `bursts` is the first phase's
    /// and `jobs` their sum (the workload file checks both).
    pub job_phases: Vec<JobPhase>,
}

/// A stretch of a periodic task's jobs that share their bursts.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobPhase {
    pub jobs: u32,
    /// CPU, I/O, CPU, … of each of these jobs.
    pub bursts: Bursts,
}

/// What a task without the box reads.
static NO_RARE_FIELDS: RareFields = RareFields {
    deadline: None,
    period: None,
    runtime: None,
    affinity: None,
    class: None,
    locks: Vec::new(),
    wakes: Vec::new(),
    until_woken: Vec::new(),
    runtime_reads: Vec::new(),
    start_cpu: None,
    burst_cpus: Vec::new(),
    block_ends: Vec::new(),
    forked_by: None,
    job_phases: Vec::new(),
};

impl TaskSpec {
    /// A CPU-only task: one burst, weight 1.
    pub fn cpu(name: &str, arrival: Time, burst: Dur) -> Self {
        TaskSpec {
            name: name.into(),
            arrival,
            bursts: smallvec::smallvec![burst],
            weight: 1,
            jobs: 1,
            ..Default::default()
        }
    }

    /// The bursts of its job `k` (0 = the first): `bursts`, or those of the phase job `k` is in.
    #[inline]
    pub fn job_bursts(&self, k: u32) -> &[Dur] {
        match self.rare.as_deref() {
            Some(r) if !r.job_phases.is_empty() => phase_bursts(&r.job_phases, k),
            _ => &self.bursts,
        }
    }

    /// The same task with its rare fields set to `rare`.
    pub fn with(mut self, rare: RareFields) -> Self {
        self.rare = (rare != NO_RARE_FIELDS).then(|| Box::new(rare));
        self
    }
}

impl RareFields {
    /// The CPUs its CPU burst `k` may run on: its entry of `burst_cpus`, else `affinity`.
    #[inline]
    pub fn cpus_of_burst(&self, k: usize) -> Option<&[CpuId]> {
        match self.burst_cpus.len() {
            0 => self.affinity.as_deref(),
            n => Some(std::slice::from_ref(&self.burst_cpus[k.min(n - 1)])),
        }
    }

    /// How long its blocked interval `io`, begun at `now`, lasts: to its entry of `block_ends`,
    /// else `length`.
    #[inline]
    pub fn block_length(&self, io: usize, now: Time, length: Dur) -> Dur {
        self.block_ends.get(io).map_or(length, |&end| end.saturating_sub(now))
    }
}

/// The bursts of job `k` of `phases`; past the last phase, the last phase's.
#[cold]
fn phase_bursts(phases: &[JobPhase], mut k: u32) -> &[Dur] {
    for p in phases {
        if k < p.jobs {
            return &p.bursts;
        }
        k -= p.jobs;
    }
    &phases[phases.len() - 1].bursts
}

impl Deref for TaskSpec {
    type Target = RareFields;
    #[inline]
    fn deref(&self) -> &RareFields {
        self.rare.as_deref().unwrap_or(&NO_RARE_FIELDS)
    }
}

impl DerefMut for TaskSpec {
    fn deref_mut(&mut self) -> &mut RareFields {
        self.rare.get_or_insert_with(Box::default)
    }
}

/// Equal when every field reads the same, box or no box.
impl PartialEq for TaskSpec {
    fn eq(&self, o: &Self) -> bool {
        self.name == o.name
            && self.arrival == o.arrival
            && self.bursts == o.bursts
            && self.priority == o.priority
            && self.weight == o.weight
            && self.nice == o.nice
            && self.jobs == o.jobs
            && **self == **o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rare_fields_read_their_defaults_until_set() {
        let mut t = TaskSpec::cpu("a", 0, 5);
        assert!(t.rare.is_none() && t.deadline.is_none() && t.locks.is_empty());
        assert_eq!(std::mem::size_of::<TaskSpec>(), 72);
        t.deadline = Some(3);
        assert_eq!(t.deadline, Some(3));
        assert!(t.rare.is_some());
        // A box holding only defaults equals no box.
        let mut u = TaskSpec::cpu("a", 0, 5);
        u.deadline = None;
        assert!(u.rare.is_some());
        assert_eq!(u, TaskSpec::cpu("a", 0, 5));
        assert_ne!(t, u);
        let w = TaskSpec::cpu("a", 0, 5).with(RareFields { period: Some(9), ..Default::default() });
        assert_eq!(w.period, Some(9));
        assert!(TaskSpec::cpu("a", 0, 5).with(RareFields::default()).rare.is_none());
    }
}
