//! The discrete-event engine: virtual time in integer nanoseconds, N CPUs, a context-switch
//! cost, CPU and I/O bursts, periodic jobs, affinity, named locks with optional priority
//! inheritance, and either one global run queue or one run queue per CPU with migration.
//!
//! The engine owns time and tasks; the [`Policy`] owns only its run queue (see
//! `policy.rs` for the protocol). Events at the same instant are processed in this order:
//! arrivals, releases and I/O completions first, then CPUs whose slice or burst ends, then every
//! idle CPU picks. So a task arriving at the instant a quantum expires is queued ahead of the
//! expired task, as in the textbook round-robin examples.

use crate::metrics::{self, Overall};
use crate::policy::{CpuId, Dur, EnqueueReason, Policy, TaskId, TaskView, Time};
use crate::workload::Workload;
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::sync::Arc;

/// How to run a simulation.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// Number of CPUs (≥ 1).
    pub cpus: usize,
    /// Time a CPU spends switching from one task to a different one before the new one runs.
    pub switch_cost: Dur,
    /// Stop at this virtual time (unfinished tasks report no finish time). None = run to the end.
    pub horizon: Option<Time>,
    /// A task holding a lock takes the priority of the best task waiting for it.
    pub priority_inheritance: bool,
    /// Keep every run slice (for Gantt charts). Off for large benchmarks.
    pub record_slices: bool,
    /// After every instant, count CPUs left idle while a task allowed on them waits (O(tasks)).
    pub check_invariants: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            cpus: 1,
            switch_cost: 0,
            horizon: None,
            priority_inheritance: true,
            record_slices: true,
            check_invariants: false,
        }
    }
}

/// One stretch of a task running on a CPU (for Gantt charts and invariant checks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Slice {
    pub task: TaskId,
    pub cpu: CpuId,
    pub start: Time,
    pub end: Time,
    /// Which job (periodic tasks) and which entry of `bursts` this served.
    pub job: u32,
    pub burst: u32,
}

/// A span a task spent blocked (I/O or waiting for a lock).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Blocked {
    pub task: TaskId,
    pub start: Time,
    pub end: Time,
    /// `io` or `lock:<name>`.
    pub what: String,
}

/// Per-task results. Times in ns; `None` when the task did not finish (or never ran) in time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskResult {
    pub name: Arc<str>,
    pub arrival: Time,
    pub finish: Option<Time>,
    pub turnaround: Option<Dur>,
    /// Time spent runnable in a run queue, not running.
    pub waiting: Dur,
    /// First time it ran minus arrival.
    pub response: Option<Dur>,
    /// CPU time received.
    pub cpu: Dur,
    pub weight: u32,
    /// Times a CPU switched to this task from a different one.
    pub context_switches: u64,
    /// Times it was pushed off a CPU by a task the policy preferred.
    pub preemptions: u64,
    /// Times it ran on a different CPU than the time before.
    pub migrations: u64,
    pub deadline_misses: u64,
    pub jobs_done: u32,
}

/// Everything a run produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimResult {
    pub policy: String,
    pub cpus: usize,
    pub tasks: Vec<TaskResult>,
    pub slices: Vec<Slice>,
    pub blocked: Vec<Blocked>,
    pub overall: Overall,
    /// Events processed (arrivals, releases, I/O completions, CPU stops).
    pub events: u64,
    /// With `check_invariants`: instants at which a CPU idled while an allowed task waited.
    pub idle_violations: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    NotArrived,
    Ready,
    Running,
    Io,
    LockWait,
    Sleeping,
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Release(TaskId),
    IoDone(TaskId),
    CpuStop(CpuId, u64),
}

/// A pending event packed into 24 bytes: `key` = time (high 64 bits), order (bit 63), sequence
/// number (low 63 bits), so the heap compares one u128; `payload` = the [`Kind`], see `encode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Event {
    key: u128,
    payload: u64,
}

const TAG_SHIFT: u32 = 62;
const CPU_SHIFT: u32 = 40;
/// Generations are compared modulo 2^40 (a stale stop is at most a few generations old).
const GEN_MASK: u64 = (1 << CPU_SHIFT) - 1;
const MAX_CPUS: usize = 1 << (TAG_SHIFT - CPU_SHIFT);

impl Kind {
    #[inline]
    fn encode(self) -> u64 {
        match self {
            Kind::Release(t) => t as u64,
            Kind::IoDone(t) => (1 << TAG_SHIFT) | t as u64,
            Kind::CpuStop(c, gen) => (2 << TAG_SHIFT) | ((c as u64) << CPU_SHIFT) | (gen & GEN_MASK),
        }
    }

    #[inline]
    fn decode(p: u64) -> Kind {
        let low = p & ((1 << TAG_SHIFT) - 1);
        match p >> TAG_SHIFT {
            0 => Kind::Release(low as TaskId),
            1 => Kind::IoDone(low as TaskId),
            _ => Kind::CpuStop((low >> CPU_SHIFT) as CpuId, low & GEN_MASK),
        }
    }
}

impl Event {
    #[inline]
    fn time(&self) -> Time {
        (self.key >> 64) as Time
    }
}

impl Ord for Event {
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest first. Keys are unique.
        o.key.cmp(&self.key)
    }
}

impl PartialOrd for Event {
    #[inline]
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

const NONE: u64 = u64::MAX;
const NO_CPU: u32 = u32::MAX;

/// Per-task state the event loop touches, kept small (≈ 100 bytes) so 100,000 tasks stay cheap;
/// the policy's [`TaskView`] is built on the stack when the task is enqueued.
#[derive(Clone)]
struct TaskState {
    /// Effective priority (raised by priority inheritance).
    priority: i32,
    phase: Phase,
    burst_idx: u32,
    job: u32,
    jobs_done: u32,
    queue: u32,
    last_cpu: u32,
    cs: u32,
    preemptions: u32,
    migrations: u32,
    misses: u32,
    remaining: Dur,
    /// Absolute deadline of the current job (NONE = none).
    deadline: Time,
    ready_since: Time,
    blocked_since: Time,
    first_run: Time,
    finish: Time,
    waiting: Dur,
    cpu: Dur,
}

#[derive(Default, Clone)]
struct CpuState {
    running: Option<TaskId>,
    work_start: Time,
    last_task: Option<TaskId>,
    gen: u64,
}

struct Lock {
    name: String,
    holder: Option<TaskId>,
    waiters: Vec<TaskId>,
}

struct Engine<'w, 'p> {
    w: &'w Workload,
    cfg: SimConfig,
    queues: Vec<&'p mut dyn Policy>,
    tasks: Vec<TaskState>,
    cpus: Vec<CpuState>,
    locks: Vec<Lock>,
    /// Per task (empty when no task uses locks): (cpu burst index, lock index) needed, and held.
    task_locks: Vec<Vec<(usize, usize)>>,
    held: Vec<Vec<usize>>,
    /// Releases of periodic jobs that came while the previous job still ran.
    backlog: HashMap<TaskId, VecDeque<Time>>,
    heap: BinaryHeap<Event>,
    seq: u64,
    arrivals: Vec<TaskId>,
    next_arrival: usize,
    /// Per-queue membership (per-CPU mode only), for stealing: members and positions.
    members: Vec<Vec<TaskId>>,
    member_pos: Vec<usize>,
    slices: Vec<Slice>,
    blocked: Vec<Blocked>,
    events: u64,
    idle_violations: u64,
    now: Time,
    unfinished: usize,
}

/// Simulate `workload` under one policy with one global run queue shared by all CPUs.
pub fn simulate(workload: &Workload, policy: &mut dyn Policy, config: &SimConfig) -> SimResult {
    let name = policy.name();
    run(workload, vec![policy], config, name)
}

/// Simulate with one run queue per CPU (`policies.len()` must equal `config.cpus`): a woken task
/// goes to an idle allowed CPU (its previous one first) or the shortest allowed queue; a CPU
/// whose queue is empty pulls a task from the longest queue (a migration).
pub fn simulate_per_cpu(workload: &Workload, policies: &mut [Box<dyn Policy>], config: &SimConfig) -> SimResult {
    assert_eq!(policies.len(), config.cpus, "one policy instance per CPU");
    let name = format!("{} (per-CPU queues)", policies[0].name());
    let queues: Vec<&mut dyn Policy> = policies.iter_mut().map(|b| &mut **b as &mut dyn Policy).collect();
    run(workload, queues, config, name)
}

fn run(w: &Workload, queues: Vec<&mut dyn Policy>, cfg: &SimConfig, name: String) -> SimResult {
    assert!(cfg.cpus >= 1, "at least one CPU");
    assert!(cfg.cpus <= MAX_CPUS, "at most {MAX_CPUS} CPUs");
    // One pass over the (large) task specs: state, "any locks?", "already sorted by arrival?".
    let mut any_locks = false;
    let mut sorted = true;
    let mut prev_arrival = 0;
    let tasks: Vec<TaskState> = w
        .tasks
        .iter()
        .map(|t| {
            any_locks |= !t.locks.is_empty();
            sorted &= t.arrival >= prev_arrival;
            prev_arrival = t.arrival;
            TaskState {
                priority: t.priority,
                phase: Phase::NotArrived,
                burst_idx: 0,
                job: 0,
                jobs_done: 0,
                queue: 0,
                last_cpu: NO_CPU,
                cs: 0,
                preemptions: 0,
                migrations: 0,
                misses: 0,
                remaining: 0,
                deadline: NONE,
                ready_since: 0,
                blocked_since: 0,
                first_run: NONE,
                finish: NONE,
                waiting: 0,
                cpu: 0,
            }
        })
        .collect();
    let mut lock_ids: HashMap<&str, usize> = HashMap::new();
    let mut locks = Vec::new();
    let task_locks: Vec<Vec<(usize, usize)>> = if any_locks {
        w.tasks
            .iter()
            .map(|t| {
                t.locks
                    .iter()
                    .map(|l| {
                        let idx = *lock_ids.entry(l.name.as_str()).or_insert_with(|| {
                            locks.push(Lock { name: l.name.clone(), holder: None, waiters: vec![] });
                            locks.len() - 1
                        });
                        (l.burst, idx)
                    })
                    .collect()
            })
            .collect()
    } else {
        Vec::new()
    };
    let held = if any_locks { vec![Vec::new(); w.tasks.len()] } else { Vec::new() };
    let mut arrivals: Vec<TaskId> = (0..tasks.len()).collect();
    if !sorted {
        arrivals.sort_by_key(|&i| (w.tasks[i].arrival, i));
    }
    let nq = queues.len();
    let mut e = Engine {
        w,
        cfg: cfg.clone(),
        queues,
        unfinished: tasks.len(),
        member_pos: vec![usize::MAX; if nq > 1 { tasks.len() } else { 0 }],
        tasks,
        cpus: vec![CpuState::default(); cfg.cpus],
        locks,
        task_locks,
        held,
        backlog: HashMap::new(),
        heap: BinaryHeap::new(),
        seq: 0,
        arrivals,
        next_arrival: 0,
        members: vec![Vec::new(); if nq > 1 { nq } else { 0 }],
        slices: Vec::new(),
        blocked: Vec::new(),
        events: 0,
        idle_violations: 0,
        now: 0,
    };
    e.main_loop();
    e.finish(name)
}

impl<'w, 'p> Engine<'w, 'p> {
    fn push(&mut self, time: Time, order: u8, kind: Kind) {
        self.seq += 1;
        debug_assert!(self.seq < 1 << 63 && order < 2);
        let key = ((time as u128) << 64) | ((order as u128) << 63) | self.seq as u128;
        self.heap.push(Event { key, payload: kind.encode() });
    }

    /// What the policy may know about `t`, built fresh (cheap: class/affinity are usually None).
    fn view(&self, t: TaskId) -> TaskView<'w> {
        let spec = &self.w.tasks[t];
        let ts = &self.tasks[t];
        TaskView {
            id: t,
            arrival: spec.arrival,
            priority: ts.priority,
            weight: spec.weight.max(1),
            nice: spec.nice,
            deadline: (ts.deadline != NONE).then_some(ts.deadline),
            period: spec.period,
            burst: Some(spec.bursts[ts.burst_idx as usize]),
            remaining: Some(ts.remaining),
            class: spec.class.as_deref(),
            affinity: spec.affinity.as_deref(),
        }
    }

    #[inline]
    fn allowed(&self, t: TaskId, c: CpuId) -> bool {
        self.w.tasks[t].affinity.as_ref().is_none_or(|a| a.contains(&c))
    }

    /// The earliest pending instant, if any.
    fn next_time(&self) -> Option<Time> {
        let a = self.arrivals.get(self.next_arrival).map(|&i| self.w.tasks[i].arrival);
        let h = self.heap.peek().map(Event::time);
        match (a, h) {
            (Some(a), Some(h)) => Some(a.min(h)),
            (a, h) => a.or(h),
        }
    }

    fn main_loop(&mut self) {
        while self.unfinished > 0 {
            let Some(t) = self.next_time() else { break };
            if self.cfg.horizon.is_some_and(|h| t > h) {
                break;
            }
            self.now = t;
            // Arrivals (order 0) first, then heap events at t in (order, seq) order.
            loop {
                if let Some(&i) = self.arrivals.get(self.next_arrival) {
                    if self.w.tasks[i].arrival == t {
                        self.next_arrival += 1;
                        self.events += 1;
                        self.arrive(i);
                        continue;
                    }
                }
                match self.heap.peek() {
                    Some(ev) if ev.time() == t => {
                        let ev = self.heap.pop().expect("peeked");
                        self.events += 1;
                        self.handle(Kind::decode(ev.payload));
                    }
                    _ => break,
                }
            }
            self.dispatch_idle();
            if self.cfg.check_invariants {
                self.check_idle();
            }
        }
        let end = match self.cfg.horizon {
            Some(h) if self.unfinished > 0 => h,
            _ => self.now,
        };
        self.now = end;
        for c in 0..self.cpus.len() {
            if self.cpus[c].running.is_some() {
                self.account_stop(c, end);
            }
        }
        for t in &mut self.tasks {
            if t.phase == Phase::Ready {
                t.waiting += end - t.ready_since;
            }
        }
    }

    fn handle(&mut self, kind: Kind) {
        match kind {
            Kind::Release(t) => self.release(t),
            Kind::IoDone(t) => {
                let ts = &mut self.tasks[t];
                if self.cfg.record_slices {
                    self.blocked.push(Blocked { task: t, start: ts.blocked_since, end: self.now, what: "io".into() });
                }
                ts.burst_idx += 1;
                ts.remaining = self.w.tasks[t].bursts[ts.burst_idx as usize];
                self.make_ready(t, EnqueueReason::Woken);
            }
            Kind::CpuStop(c, gen) => {
                if self.cpus[c].gen & GEN_MASK == gen && self.cpus[c].running.is_some() {
                    self.stop(c, EnqueueReason::SliceExpired);
                }
            }
        }
    }

    fn arrive(&mut self, t: TaskId) {
        let spec = &self.w.tasks[t];
        if spec.jobs > 1 {
            if let Some(p) = spec.period {
                self.push(spec.arrival + p, 0, Kind::Release(t));
            }
        }
        self.start_job(t, spec.arrival, EnqueueReason::New);
    }

    fn release(&mut self, t: TaskId) {
        let now = self.now;
        let spec = &self.w.tasks[t];
        let k = (now - spec.arrival) / spec.period.unwrap_or(1);
        if (k as u32) + 1 < spec.jobs {
            self.push(now + spec.period.unwrap_or(1), 0, Kind::Release(t));
        }
        if self.tasks[t].phase == Phase::Sleeping {
            self.start_job(t, now, EnqueueReason::Woken);
        } else {
            self.backlog.entry(t).or_default().push_back(now);
        }
    }

    fn start_job(&mut self, t: TaskId, release: Time, why: EnqueueReason) {
        let spec = &self.w.tasks[t];
        let ts = &mut self.tasks[t];
        ts.burst_idx = 0;
        ts.remaining = spec.bursts[0];
        ts.deadline = spec.deadline.or(spec.period).map_or(NONE, |d| release + d);
        self.make_ready(t, why);
    }

    /// Choose the run queue for a task (per-CPU mode): an idle allowed CPU (previous first),
    /// else the allowed CPU with the fewest queued + running tasks (previous wins ties).
    fn choose_queue(&self, t: TaskId) -> usize {
        let prev = (self.tasks[t].last_cpu != NO_CPU).then_some(self.tasks[t].last_cpu as usize);
        let allowed = |c: &usize| self.allowed(t, *c);
        if let Some(p) = prev.filter(allowed) {
            if self.cpus[p].running.is_none() {
                return p;
            }
        }
        if let Some(c) = (0..self.cpus.len()).filter(allowed).find(|&c| self.cpus[c].running.is_none()) {
            return c;
        }
        let load = |c: usize| self.queues[c].queued() + usize::from(self.cpus[c].running.is_some());
        let mut best = prev.filter(allowed);
        for c in (0..self.cpus.len()).filter(allowed) {
            if best.is_none_or(|b| load(c) < load(b)) {
                best = Some(c);
            }
        }
        best.unwrap_or(0)
    }

    fn queue_of_cpu(&self, c: CpuId) -> usize {
        if self.queues.len() > 1 {
            c
        } else {
            0
        }
    }

    fn enqueue(&mut self, t: TaskId, why: EnqueueReason) {
        let q = if self.queues.len() > 1 { self.choose_queue(t) } else { 0 };
        self.tasks[t].queue = q as u32;
        if self.queues.len() > 1 {
            self.member_pos[t] = self.members[q].len();
            self.members[q].push(t);
        }
        let now = self.now;
        let view = self.view(t);
        self.queues[q].enqueue(&view, why, now);
    }

    fn forget_member(&mut self, t: TaskId) {
        if self.queues.len() > 1 {
            let q = self.tasks[t].queue as usize;
            let pos = self.member_pos[t];
            let last = self.members[q].pop().expect("member");
            if last != t {
                self.members[q][pos] = last;
                self.member_pos[last] = pos;
            }
            self.member_pos[t] = usize::MAX;
        }
    }

    /// The task became runnable: queue it and, on arrival or wake-up, let it pre-empt a CPU.
    fn make_ready(&mut self, t: TaskId, why: EnqueueReason) {
        let now = self.now;
        {
            let ts = &mut self.tasks[t];
            ts.phase = Phase::Ready;
            ts.ready_since = now;
        }
        self.enqueue(t, why);
        if !matches!(why, EnqueueReason::New | EnqueueReason::Woken) {
            return;
        }
        let q = self.tasks[t].queue as usize;
        let serving = |c: CpuId| self.queues.len() == 1 || c == q;
        if (0..self.cpus.len()).any(|c| serving(c) && self.cpus[c].running.is_none() && self.allowed(t, c)) {
            return;
        }
        let victim = (0..self.cpus.len()).find(|&c| {
            serving(c) && self.allowed(t, c) && self.cpus[c].running.is_some_and(|r| self.queues[q].preempts(t, r, now))
        });
        if let Some(c) = victim {
            let r = self.cpus[c].running.expect("running");
            self.tasks[r].preemptions += 1;
            self.stop(c, EnqueueReason::Preempted);
        }
    }

    /// Account the run that ends now on CPU `c` (CPU time, slice, policy charge).
    fn account_stop(&mut self, c: CpuId, now: Time) -> TaskId {
        let cpu = &mut self.cpus[c];
        let t = cpu.running.take().expect("running");
        cpu.gen += 1;
        let ran = now.saturating_sub(cpu.work_start).min(self.tasks[t].remaining);
        let start = cpu.work_start.min(now);
        let ts = &mut self.tasks[t];
        ts.remaining -= ran;
        ts.cpu += ran;
        if self.cfg.record_slices && ran > 0 {
            self.slices.push(Slice { task: t, cpu: c, start, end: start + ran, job: ts.job, burst: ts.burst_idx });
        }
        let q = ts.queue as usize;
        self.queues[q].charge(t, ran, now);
        t
    }

    /// Stop what runs on CPU `c`; requeue it with `why` if its burst is not done.
    fn stop(&mut self, c: CpuId, why: EnqueueReason) {
        let now = self.now;
        let t = self.account_stop(c, now);
        if self.tasks[t].remaining > 0 {
            self.tasks[t].phase = Phase::Ready;
            self.make_ready(t, why);
            return;
        }
        self.release_locks(t);
        let spec = &self.w.tasks[t];
        let ts = &mut self.tasks[t];
        if (ts.burst_idx as usize) + 1 < spec.bursts.len() {
            ts.burst_idx += 1;
            ts.phase = Phase::Io;
            ts.blocked_since = now;
            let io = spec.bursts[ts.burst_idx as usize];
            self.push(now + io, 0, Kind::IoDone(t));
            return;
        }
        // Job done.
        ts.jobs_done += 1;
        if ts.deadline != NONE && now > ts.deadline {
            ts.misses += 1;
        }
        ts.job += 1;
        let next = if self.backlog.is_empty() { None } else { self.backlog.get_mut(&t).and_then(VecDeque::pop_front) };
        let ts = &mut self.tasks[t];
        if let Some(r) = next {
            self.start_job(t, r, EnqueueReason::Woken);
        } else if ts.job < spec.jobs {
            ts.phase = Phase::Sleeping;
        } else {
            ts.phase = Phase::Done;
            ts.finish = now;
            self.unfinished -= 1;
            let q = ts.queue as usize;
            self.queues[q].task_exit(t);
        }
    }

    fn dispatch_idle(&mut self) {
        for c in 0..self.cpus.len() {
            if self.cpus[c].running.is_none() {
                self.dispatch(c);
            }
        }
    }

    fn dispatch(&mut self, c: CpuId) {
        let now = self.now;
        let q = self.queue_of_cpu(c);
        loop {
            let pick = match self.queues[q].pick_next(c, now) {
                Some(p) => p,
                None => {
                    if self.queues.len() > 1 && self.steal(c) {
                        continue;
                    }
                    return;
                }
            };
            let t = pick.task;
            self.forget_member(t);
            if !self.acquire_locks(t) {
                continue;
            }
            self.start(c, t, pick.slice);
            return;
        }
    }

    /// Pull one task allowed on `c` from the longest other queue into `c`'s queue.
    fn steal(&mut self, c: CpuId) -> bool {
        let mut best: Option<(usize, TaskId)> = None;
        for src in 0..self.queues.len() {
            if src == c || best.is_some_and(|(b, _)| self.members[src].len() <= self.members[b].len()) {
                continue;
            }
            if let Some(&t) = self.members[src].iter().rev().find(|&&t| self.allowed(t, c)) {
                best = Some((src, t));
            }
        }
        let Some((src, t)) = best else { return false };
        self.queues[src].dequeue(t);
        self.forget_member(t);
        self.tasks[t].queue = c as u32;
        self.member_pos[t] = self.members[c].len();
        self.members[c].push(t);
        let now = self.now;
        let view = self.view(t);
        self.queues[c].enqueue(&view, EnqueueReason::Migrated, now);
        true
    }

    fn start(&mut self, c: CpuId, t: TaskId, slice: Option<Dur>) {
        let now = self.now;
        let switch = self.cpus[c].last_task.is_some_and(|l| l != t);
        let cost = if switch { self.cfg.switch_cost } else { 0 };
        let ts = &mut self.tasks[t];
        ts.waiting += now - ts.ready_since;
        ts.phase = Phase::Running;
        if switch {
            ts.cs += 1;
        }
        if ts.last_cpu != NO_CPU && ts.last_cpu as usize != c {
            ts.migrations += 1;
        }
        ts.last_cpu = c as u32;
        let work_start = now + cost;
        if ts.first_run == NONE {
            ts.first_run = work_start;
        }
        let run = slice.map_or(ts.remaining, |s| s.max(1).min(ts.remaining));
        let cpu = &mut self.cpus[c];
        cpu.running = Some(t);
        cpu.last_task = Some(t);
        cpu.work_start = work_start;
        let gen = cpu.gen;
        self.push(work_start + run, 1, Kind::CpuStop(c, gen));
    }

    /// Take every lock the task's current CPU burst needs; false = it blocked on one.
    fn acquire_locks(&mut self, t: TaskId) -> bool {
        if self.task_locks.is_empty() {
            return true;
        }
        let cpu_burst = self.tasks[t].burst_idx as usize / 2;
        for k in 0..self.task_locks[t].len() {
            let (b, l) = self.task_locks[t][k];
            if b != cpu_burst || self.locks[l].holder == Some(t) {
                continue;
            }
            match self.locks[l].holder {
                None => {
                    self.locks[l].holder = Some(t);
                    self.held[t].push(l);
                }
                Some(h) => {
                    let ts = &mut self.tasks[t];
                    ts.waiting += self.now - ts.ready_since;
                    ts.phase = Phase::LockWait;
                    ts.blocked_since = self.now;
                    self.locks[l].waiters.push(t);
                    if self.cfg.priority_inheritance {
                        self.refresh_priority(h, 0);
                    }
                    return false;
                }
            }
        }
        true
    }

    /// Release the locks held for the burst that just ended; hand each to its best waiter.
    fn release_locks(&mut self, t: TaskId) {
        if self.held.is_empty() || self.held[t].is_empty() {
            return;
        }
        let held = std::mem::take(&mut self.held[t]);
        for l in held {
            let waiters = &mut self.locks[l].waiters;
            if waiters.is_empty() {
                self.locks[l].holder = None;
                continue;
            }
            // Best = highest priority (lowest number), first come among equals.
            let (pos, _) =
                waiters.iter().enumerate().min_by_key(|&(i, &w)| (self.tasks[w].priority, i)).expect("non-empty");
            let next = waiters.remove(pos);
            self.locks[l].holder = Some(next);
            self.held[next].push(l);
            if self.cfg.record_slices {
                let what = format!("lock:{}", self.locks[l].name);
                self.blocked.push(Blocked { task: next, start: self.tasks[next].blocked_since, end: self.now, what });
            }
            self.make_ready(next, EnqueueReason::Woken);
            if self.cfg.priority_inheritance {
                self.refresh_priority(next, 0);
            }
        }
        if self.cfg.priority_inheritance {
            self.refresh_priority(t, 0);
        }
    }

    /// Effective priority = best of own base and every waiter of every lock held (transitive).
    fn refresh_priority(&mut self, t: TaskId, depth: usize) {
        let mut p = self.w.tasks[t].priority;
        for &l in &self.held[t] {
            for &w in &self.locks[l].waiters {
                p = p.min(self.tasks[w].priority);
            }
        }
        if p == self.tasks[t].priority {
            return;
        }
        self.tasks[t].priority = p;
        let now = self.now;
        match self.tasks[t].phase {
            Phase::Ready => {
                let q = self.tasks[t].queue as usize;
                self.queues[q].dequeue(t);
                self.forget_member(t);
                self.enqueue(t, EnqueueReason::Woken);
            }
            Phase::Running => {
                let q = self.tasks[t].queue as usize;
                let view = self.view(t);
                self.queues[q].prio_changed(&view, now);
            }
            Phase::LockWait if depth < 16 => {
                // Pass the boost along the chain of holders.
                if let Some(l) = self.locks.iter().position(|lk| lk.waiters.contains(&t)) {
                    if let Some(h) = self.locks[l].holder {
                        self.refresh_priority(h, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }

    fn check_idle(&mut self) {
        for c in 0..self.cpus.len() {
            if self.cpus[c].running.is_some() {
                continue;
            }
            if (0..self.tasks.len()).any(|t| self.tasks[t].phase == Phase::Ready && self.allowed(t, c)) {
                self.idle_violations += 1;
            }
        }
    }

    fn finish(self, policy: String) -> SimResult {
        let mut acc = metrics::Accum::with_capacity(self.tasks.len());
        let mut tasks: Vec<TaskResult> = Vec::with_capacity(self.tasks.len());
        for (t, spec) in self.tasks.iter().zip(&self.w.tasks) {
            let r = TaskResult {
                name: spec.name.clone(),
                arrival: spec.arrival,
                finish: (t.finish != NONE).then_some(t.finish),
                turnaround: (t.finish != NONE).then(|| t.finish - spec.arrival),
                waiting: t.waiting,
                response: (t.first_run != NONE).then(|| t.first_run - spec.arrival),
                cpu: t.cpu,
                weight: spec.weight,
                context_switches: t.cs as u64,
                preemptions: t.preemptions as u64,
                migrations: t.migrations as u64,
                deadline_misses: t.misses as u64,
                jobs_done: t.jobs_done,
            };
            acc.add(&r);
            tasks.push(r);
        }
        let overall = acc.finish(self.cpus.len(), self.now);
        SimResult {
            policy,
            cpus: self.cpus.len(),
            tasks,
            slices: self.slices,
            blocked: self.blocked,
            overall,
            events: self.events,
            idle_violations: self.idle_violations,
        }
    }
}
