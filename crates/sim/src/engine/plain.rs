//! The engine for plain runs: one CPU, no tick, every task one CPU burst of one job with no
//! locks or wake-ups, a policy that never pre-empts, and nothing recorded but the results.
//! Large generated sweeps and the benchmark are such runs. Then an instant holds at most
//! arrivals and the one CPU's stop, so the loop handles one event per turn with the running
//! task's CPU state in locals, and a task's state is the few fields such a run changes.
//!
//! It gives what the general engine (event_loop.rs) gives for the same run, field for field;
//! tests/invariants.rs checks that on random plain workloads, and the test below checks that
//! the check would notice a difference.

use super::arrivals::ArrivalOrder;
use super::event_loop::{view_with, SpecScan};
use super::state::{settle, Phase, TaskState, NONE};
use super::task_states::{Record, TaskStates};
use super::{OnMiss, SimConfig, SimResult};
use crate::metrics::Accum;
use crate::policy::{Dur, EnqueueReason, Policy, TaskId, Time};
use crate::workload::{TaskSpec, Workload};
use std::borrow::Cow;

#[cfg(test)]
thread_local! {
    /// A deliberately broken plain engine, for the negative control of the plain/general
    /// equivalence: when set, it records every finish 1 ns late.
    static FINISHES_LATE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Can the plain engine run this? One CPU and queue, no tick, plain tasks, a policy that never
/// pre-empts, no slice records, no invariant checks, no wake-up delays, no aborted jobs.
pub(super) fn can_run_plain<P: Policy + ?Sized>(cfg: &SimConfig, queues: &[&mut P], scan: &SpecScan) -> bool {
    cfg.cpus == 1
        && cfg.tick.is_none()
        && queues.len() == 1
        && scan.plain
        && !queues[0].may_preempt()
        && !cfg.record_slices
        && !cfg.check_invariants
        && cfg.wake.none()
        && cfg.on_miss != OnMiss::Abort
}

/// A task's state in a plain run. Its CPU time is its burst less `remaining`, and it missed
/// its deadline if it finished after it: neither is kept.
#[derive(Debug, Clone)]
struct PlainTask {
    remaining: Dur,
    /// When it last became ready (NONE: not arrived yet).
    since: Time,
    waiting: Dur,
    first_run: Time,
    finish: Time,
    cs: u32,
    expiries: u32,
}

impl PlainTask {
    const NEW: PlainTask =
        PlainTask { remaining: 0, since: NONE, waiting: 0, first_run: NONE, finish: NONE, cs: 0, expiries: 0 };

    /// The same task as the general engine's state, with the fields its sums and results read
    /// (and its phase, and since when it is ready).
    fn state(&self, spec: &TaskSpec, running: bool) -> TaskState {
        let arrived = self.since != NONE;
        let done = self.finish != NONE;
        let deadline = job_deadline(spec);
        let phase = match () {
            _ if !arrived => Phase::NotArrived,
            _ if done => Phase::Done,
            _ if running => Phase::Running,
            _ => Phase::Ready,
        };
        TaskState {
            since: if arrived { self.since } else { 0 },
            phase,
            waiting: self.waiting,
            cpu: if arrived { spec.bursts[0] - self.remaining } else { 0 },
            first_run: self.first_run,
            finish: self.finish,
            jobs_done: u32::from(done),
            cs: self.cs,
            expiries: self.expiries,
            misses: u32::from(done && deadline != NONE && self.finish > deadline),
            ..TaskState::new(spec)
        }
    }
}

impl Record for PlainTask {
    #[inline(always)]
    fn done(&self) -> bool {
        self.finish != NONE
    }
}

/// The absolute deadline of a plain task's one job (NONE = none).
#[inline(always)]
fn job_deadline(spec: &TaskSpec) -> Time {
    spec.rare.as_deref().and_then(|r| r.deadline.or(r.period)).map_or(NONE, |d| spec.arrival + d)
}

/// What a policy may know about `t`. A plain task has one burst; it is read without a bounds
/// check that could panic, so a policy that never looks at the burst does not pay for reading it.
#[inline(always)]
fn view<'w>(t: TaskId, spec: &'w TaskSpec, ts: &PlainTask) -> crate::policy::TaskView<'w> {
    let burst = spec.bursts.first().copied().unwrap_or_default();
    view_with(t, spec, spec.priority, job_deadline(spec), burst, ts.remaining, None)
}

/// Run a plain run (see [`can_run_plain`]).
pub(super) fn run<P: Policy + ?Sized>(
    w: &Workload,
    policy: &mut P,
    cfg: &SimConfig,
    scan: &SpecScan,
    name: String,
) -> SimResult {
    let mut e = Plain::new(w, policy, cfg, scan);
    e.main_loop();
    e.finish(name)
}

/// A plain run: the workload, the policy's one queue, the task states and the totals.
struct Plain<'w, 'p, P: Policy + ?Sized> {
    w: &'w Workload,
    cfg: &'w SimConfig,
    policy: &'p mut P,
    tasks: TaskStates<PlainTask>,
    acc: Accum,
    order: ArrivalOrder,
    cpu: Cpu,
    events: u64,
    now: Time,
    unfinished: usize,
}

/// "No task" for [`Cpu`]'s task ids.
const NO_TASK: TaskId = TaskId::MAX;

/// The one CPU: the task it runs (NO_TASK = idle), when that run's work started (after any
/// switch cost), when it stops (NONE = idle), and the task it ran last. The loop keeps it in
/// a local, so in registers.
#[derive(Clone, Copy)]
struct Cpu {
    running: TaskId,
    work_start: Time,
    stop_at: Time,
    last_task: TaskId,
    /// The run ends the task's burst. Known when it starts, so the stop's branch on it does not
    /// wait for the task's state to be read (it is mispredicted often: which way it goes is
    /// the workload's).
    ends_burst: bool,
}

impl<'w, 'p, P: Policy + ?Sized> Plain<'w, 'p, P> {
    fn new(w: &'w Workload, policy: &'p mut P, cfg: &'w SimConfig, scan: &SpecScan) -> Self {
        let n = w.tasks.len();
        let tasks = if scan.sorted {
            TaskStates::arriving(n, !cfg.task_results)
        } else {
            TaskStates::all(vec![PlainTask::NEW; n])
        };
        Plain {
            w,
            cfg,
            policy,
            tasks,
            acc: Accum::new(),
            order: ArrivalOrder::new(&w.tasks, scan.sorted),
            cpu: Cpu { running: NO_TASK, work_start: 0, stop_at: NONE, last_task: NO_TASK, ends_burst: false },
            events: 0,
            now: 0,
            unfinished: n,
        }
    }

    /// The task at position `k` of the arrival order and its arrival (Time::MAX: none left).
    #[inline(always)]
    fn arrival(&self, k: usize) -> (TaskId, Time) {
        self.order.at(k, &self.w.tasks).unwrap_or((NO_TASK, Time::MAX))
    }

    /// Events in time order, arrivals before the CPU's stop at the same instant; the idle CPU
    /// picks once the instant holds no more events (all its arrivals are queued). When every
    /// task is done, no arrival is left and the CPU is idle: the next instant is Time::MAX.
    fn main_loop(&mut self) {
        let horizon_end = self.cfg.horizon.map_or(Time::MAX, |h| h.saturating_add(1));
        let (mut next, mut cpu, mut events, mut now) = (0, self.cpu, self.events, self.now);
        let (mut arrival_task, mut arrival_at) = self.arrival(next);
        loop {
            let t = arrival_at.min(cpu.stop_at);
            if t >= horizon_end {
                break;
            }
            now = t;
            events += 1;
            if arrival_at == t {
                self.arrive(arrival_task, t);
                next += 1;
                (arrival_task, arrival_at) = self.arrival(next);
            } else {
                self.stop(&mut cpu, t);
            }
            if cpu.running == NO_TASK && arrival_at != t {
                if let Some(pick) = self.policy.pick_next(0, t) {
                    self.start(&mut cpu, pick.task, pick.slice, t);
                }
            }
        }
        let end = match self.cfg.horizon {
            Some(h) if self.unfinished > 0 => h,
            _ => now,
        };
        self.now = end;
        if cpu.running != NO_TASK {
            let t = cpu.running;
            let ts = &mut self.tasks[t];
            let ran = (end - cpu.work_start.min(end)).min(ts.remaining);
            ts.remaining -= ran;
            self.policy.charge(t, ran, end);
        }
        (self.cpu, self.events) = (cpu, events);
    }

    #[inline(always)]
    fn arrive(&mut self, t: TaskId, now: Time) {
        let spec = &self.w.tasks[t];
        if t == self.tasks.len() {
            self.tasks.push(PlainTask::NEW);
        }
        let ts = &mut self.tasks[t];
        ts.remaining = spec.bursts[0];
        ts.since = now;
        self.policy.enqueue(&view(t, spec, ts), EnqueueReason::New, now);
    }

    /// The CPU's stop is due: the running task's slice or burst ends.
    #[inline(always)]
    fn stop(&mut self, cpu: &mut Cpu, now: Time) {
        let t = cpu.running;
        cpu.running = NO_TASK;
        cpu.stop_at = NONE;
        let spec = &self.w.tasks[t];
        let ts = &mut self.tasks[t];
        let ran = (now - cpu.work_start.min(now)).min(ts.remaining);
        ts.remaining -= ran;
        self.policy.charge(t, ran, now);
        if !cpu.ends_burst {
            ts.expiries += 1;
            ts.since = now;
            self.policy.enqueue(&view(t, spec, ts), EnqueueReason::SliceExpired, now);
            return;
        }
        ts.finish = now;
        #[cfg(test)]
        if FINISHES_LATE.with(std::cell::Cell::get) {
            ts.finish += 1;
        }
        self.acc.add(&ts.state(spec, false).sums(spec));
        self.unfinished -= 1;
        self.policy.task_exit(t);
        self.tasks.finished();
    }

    #[inline(always)]
    fn start(&mut self, cpu: &mut Cpu, t: TaskId, slice: Option<Dur>, now: Time) {
        let switch = cpu.last_task != NO_TASK && cpu.last_task != t;
        let work_start = now + if switch { self.cfg.switch_cost } else { 0 };
        let ts = &mut self.tasks[t];
        ts.waiting += now - ts.since;
        ts.cs += u32::from(switch);
        ts.first_run = ts.first_run.min(work_start);
        let run = slice.map_or(ts.remaining, |s| s.max(1).min(ts.remaining));
        let ends_burst = run == ts.remaining;
        *cpu = Cpu { running: t, work_start, stop_at: work_start + run, last_task: t, ends_burst };
    }

    fn finish(mut self, policy: String) -> SimResult {
        let running = Some(self.cpu.running).filter(|&t| t != NO_TASK);
        let end = self.now;
        // A task still ready when the run ends waited until then.
        let (specs, states) = (&self.w.tasks, &self.tasks);
        let tasks = settle(specs, &mut self.acc, self.unfinished > 0, self.cfg.task_results, |t| {
            states.get(t).map(|ts| {
                ts.map(|ts| {
                    let mut s = ts.state(&specs[t], running == Some(t));
                    if s.phase == Phase::Ready {
                        s.waiting += end - s.since;
                    }
                    Cow::Owned(s)
                })
            })
        });
        let overall = self.acc.finish(1, self.now);
        SimResult {
            policy,
            cpus: 1,
            tasks,
            slices: Vec::new(),
            blocked: Vec::new(),
            overall,
            events: self.events,
            idle_violations: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::event_loop::scan_specs;

    #[test]
    fn only_plain_runs_of_never_preempting_policies_take_the_plain_engine() {
        use crate::policies::{Cfs, RoundRobin};
        let plain: Vec<TaskSpec> = [10, 20, 30, 40, 50].iter().map(|&a| TaskSpec::cpu("t", a, 1)).collect();
        let scan = scan_specs(&plain);
        assert!(scan.plain);
        let plain_cfg = SimConfig { record_slices: false, check_invariants: false, ..SimConfig::default() };
        let mut rr = RoundRobin::new(1);
        assert!(can_run_plain(&plain_cfg, &[&mut rr], &scan));
        let mut cfs = Cfs::default();
        assert!(!can_run_plain(&plain_cfg, &[&mut cfs], &scan), "CFS pre-empts");
        for cfg in [
            SimConfig { cpus: 2, ..plain_cfg.clone() },
            SimConfig { record_slices: true, ..plain_cfg.clone() },
            SimConfig { check_invariants: true, ..plain_cfg.clone() },
            SimConfig { tick: Some(4_000_000), ..plain_cfg.clone() },
            SimConfig { on_miss: OnMiss::Abort, ..plain_cfg.clone() },
        ] {
            assert!(!can_run_plain(&cfg, &[&mut rr], &scan));
        }
        // Any task with I/O, a second job or a lock makes the run not plain, wherever it is.
        for i in 0..plain.len() {
            for change in 0..3 {
                let mut s = plain.clone();
                match change {
                    0 => s[i].bursts = vec![1, 1, 1].into(),
                    1 => (s[i].jobs, s[i].period) = (2, Some(5)),
                    _ => s[i].locks = vec![crate::workload::LockUse { name: "L".into(), burst: 0 }],
                }
                assert!(!scan_specs(&s).plain, "task {i}, change {change}");
            }
        }
    }

    #[test]
    fn the_equivalence_check_catches_a_broken_plain_engine() {
        // tests/invariants.rs checks that the plain and general engines agree. That check means
        // something only if its workloads take the plain engine and a wrong plain result shows:
        // with the plain engine made to finish every task 1 ns late, they must differ.
        use crate::engine::simulate;
        use crate::policies::by_spec;
        let w = Workload {
            cpus: Some(1),
            tasks: [(0, 5_000), (1_000, 2_000), (1_500, 9_000)]
                .iter()
                .enumerate()
                .map(|(i, &(arrival, burst))| TaskSpec::cpu(&format!("T{i}"), arrival, burst))
                .collect(),
        };
        let plain_cfg = SimConfig { record_slices: false, ..SimConfig::default() };
        let general_cfg = SimConfig { check_invariants: true, ..plain_cfg.clone() };
        for spec in ["fcfs", "rr:quantum=2ms", "sjf"] {
            let run = |cfg: &SimConfig| simulate(&w, by_spec(spec).unwrap().as_mut(), cfg);
            assert_eq!(run(&plain_cfg), run(&general_cfg), "{spec}: the engines agree");
            FINISHES_LATE.with(|b| b.set(true));
            let (broken, general) = (run(&plain_cfg), run(&general_cfg));
            FINISHES_LATE.with(|b| b.set(false));
            assert_ne!(broken, general, "{spec}: the check would not notice a broken plain engine");
            assert_eq!(broken.tasks[0].finish, general.tasks[0].finish.map(|f| f + 1), "{spec}");
        }
    }
}
