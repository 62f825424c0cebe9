//! The event loop: arrivals, periodic releases, I/O completions and CPU stops, in time order;
//! after every instant each idle CPU picks. Tasks' state is created when they arrive (in
//! arrival order when the workload is sorted by arrival, as generated ones are), so a large
//! run touches each task's memory while the task is alive.

use super::arrivals::ArrivalOrder;
use super::event::{EventQueue, Kind};
use super::locks::Locks;
use super::state::{settle, CpuState, Phase, TaskState, NONE, NO_CPU};
use super::task_states::TaskStates;
use super::{Blocked, OnMiss, SimConfig, SimResult, Slice};
use crate::metrics::Accum;
use crate::policies::linux::Class;
use crate::policy::{CpuId, Dur, EnqueueReason, Policy, TaskId, TaskView, Time};
use crate::workload::{TaskSpec, Workload};
use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};

/// The general engine: any number of CPUs and run queues, every kind of event (plain runs
/// take plain.rs instead).
pub(super) struct Engine<'w, 'p, P: Policy + ?Sized> {
    pub(super) w: &'w Workload,
    pub(super) cfg: SimConfig,
    pub(super) queues: Vec<&'p mut P>,
    /// State of every task that has arrived (all tasks when arrivals are not sorted), less the
    /// finished ones a run without per-task results drops.
    pub(super) tasks: TaskStates,
    /// Overall metrics, fed as tasks finish.
    acc: Accum,
    pub(super) cpus: Vec<CpuState>,
    pub(super) locks: Option<Locks>,
    /// Releases of periodic jobs that came while the previous job still ran.
    backlog: HashMap<TaskId, VecDeque<Time>>,
    events_q: EventQueue,
    order: ArrivalOrder,
    /// Position in the arrival order of the next arrival, its task and time (MAX = none left).
    next_arrival: usize,
    arrival_task: TaskId,
    arrival_at: Time,
    /// Wake-ups given to each task while it was not waiting for one (empty when no task gives
    /// wake-ups).
    pending: Vec<u32>,
    /// Per-queue membership (per-CPU mode only), for stealing: members and positions.
    members: Vec<Vec<TaskId>>,
    member_pos: Vec<usize>,
    pub(super) slices: Vec<Slice>,
    pub(super) blocked: Vec<Blocked>,
    events: u64,
    /// Pre-emptions so far (the dispatcher notices those it caused).
    preempt_stops: u64,
    idle_violations: u64,
    pub(super) now: Time,
    unfinished: usize,
}

impl<'w, 'p, P: Policy + ?Sized> Engine<'w, 'p, P> {
    pub fn new(w: &'w Workload, queues: Vec<&'p mut P>, cfg: &SimConfig, scan: &SpecScan) -> Self {
        let n = w.tasks.len();
        let tasks = if scan.sorted {
            // A wake-up may name a task that finished, so only runs without them drop states.
            TaskStates::arriving(n, !cfg.task_results && !scan.wakes)
        } else {
            TaskStates::all(w.tasks.iter().map(TaskState::new).collect())
        };
        let nq = queues.len();
        let mut e = Engine {
            w,
            cfg: cfg.clone(),
            queues,
            tasks,
            acc: Accum::new(),
            cpus: vec![CpuState::default(); cfg.cpus],
            locks: None,
            backlog: HashMap::new(),
            events_q: EventQueue::default(),
            order: ArrivalOrder::new(&w.tasks, scan.sorted),
            next_arrival: 0,
            arrival_task: 0,
            arrival_at: Time::MAX,
            pending: if scan.wakes { vec![0; n] } else { Vec::new() },
            members: vec![Vec::new(); if nq > 1 { nq } else { 0 }],
            member_pos: vec![usize::MAX; if nq > 1 { n } else { 0 }],
            slices: Vec::new(),
            blocked: Vec::new(),
            events: 0,
            preempt_stops: 0,
            idle_violations: 0,
            now: 0,
            unfinished: n,
        };
        e.load_next_arrival();
        e
    }

    /// What the policy may know about `t` (a few loads and stores; nothing is cloned).
    #[inline]
    pub(super) fn view(&self, t: TaskId) -> TaskView<'w> {
        view_of(t, &self.w.tasks[t], &self.tasks[t])
    }

    #[inline]
    fn allowed(&self, t: TaskId, c: CpuId) -> bool {
        let ts = &self.tasks[t];
        !ts.pinned || self.w.tasks[t].cpus_of_burst(ts.burst_idx as usize / 2).is_none_or(|a| a.contains(&c))
    }

    /// Look up the task at position `next_arrival` of the arrival order.
    fn load_next_arrival(&mut self) {
        match self.order.at(self.next_arrival, &self.w.tasks) {
            Some((i, at)) => (self.arrival_task, self.arrival_at) = (i, at),
            None => self.arrival_at = Time::MAX,
        }
    }

    pub fn main_loop(&mut self) {
        // Stop at the first instant past the horizon, or when nothing is left (Time::MAX).
        let stop_at = self.cfg.horizon.map_or(Time::MAX, |h| h.saturating_add(1));
        while self.unfinished > 0 {
            let next_stop = self.cpus.iter().map(|c| c.stop_at.min(c.wake_at).min(c.preempt_at)).min().unwrap_or(NONE);
            let next_event = self.events_q.next_time().unwrap_or(Time::MAX);
            let next_timer = self.next_timer();
            let t = self.arrival_at.min(next_event).min(next_stop).min(next_timer.max(self.now));
            if t >= stop_at {
                break;
            }
            self.now = t;
            // Arrivals first, then queued events at t in (order class, insertion) order.
            loop {
                if self.arrival_at == t {
                    let i = self.arrival_task;
                    self.next_arrival += 1;
                    self.load_next_arrival();
                    self.events += 1;
                    self.arrive(i, t, NO_CPU);
                    continue;
                }
                // Releases and I/O completions, then CPU stops in the order they were set.
                if let Some(kind) = self.events_q.pop_due_early(t) {
                    self.events += 1;
                    self.handle(kind);
                    continue;
                }
                // Then wake-ups tasks give as they run, and pre-emptions that were deferred.
                if let Some(c) = (0..self.cpus.len()).find(|&c| self.cpus[c].wake_at == t) {
                    self.events += 1;
                    self.fire_wake(c);
                    continue;
                }
                if let Some(c) = (0..self.cpus.len()).find(|&c| self.cpus[c].preempt_at == t) {
                    self.events += 1;
                    self.fire_preempt(c);
                    continue;
                }
                if let Some(c) = self.due_cpu(t) {
                    self.events += 1;
                    self.cpus[c].stop_at = NONE;
                    self.stop(c, EnqueueReason::SliceExpired);
                    continue;
                }
                match self.events_q.pop_due(t) {
                    Some(kind) => {
                        self.events += 1;
                        self.handle(kind);
                    }
                    None => break,
                }
            }
            if next_timer <= t {
                self.fire_timers();
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
        if self.unfinished > 0 {
            for ts in self.tasks.kept_mut() {
                if ts.phase == Phase::Ready {
                    ts.waiting += end - ts.since;
                }
            }
        }
    }

    /// The CPU whose live stop is due at `t` and was set first.
    #[inline]
    fn due_cpu(&self, t: Time) -> Option<CpuId> {
        if self.cpus.len() == 1 {
            return (self.cpus[0].stop_at == t).then_some(0);
        }
        (0..self.cpus.len()).filter(|&c| self.cpus[c].stop_at == t).min_by_key(|&c| self.cpus[c].stop_seq)
    }

    #[inline]
    fn handle(&mut self, kind: Kind) {
        match kind {
            Kind::Release(t) => self.release(t),
            Kind::IoDone(t) => {
                let now = self.now;
                let ts = &mut self.tasks[t];
                if ts.phase != Phase::Io || ts.since + ts.burst != now {
                    // The job whose I/O this was has been aborted.
                    return;
                }
                if self.cfg.record_slices {
                    self.blocked.push(Blocked { task: t, start: ts.since, end: now, what: "io".into() });
                }
                ts.burst_idx += 1;
                ts.burst = self.w.tasks[t].job_bursts(ts.job)[ts.burst_idx as usize];
                ts.remaining = ts.burst;
                self.make_ready(t, EnqueueReason::Woken);
            }
            Kind::StaleStop => {}
            Kind::Deadline(t) => self.deadline_passed(t),
        }
    }

    /// `OnMiss::Abort`: the deadline of `t`'s job has come; if the job is still queued, running
    /// or in I/O, it is aborted.
    fn deadline_passed(&mut self, t: TaskId) {
        let now = self.now;
        let ts = &mut self.tasks[t];
        if ts.deadline != now || ts.waiting_wake {
            // That job ended (a later job has a later deadline), or it waits for a task's wake-up.
            return;
        }
        let q = ts.queue as usize;
        match ts.phase {
            Phase::Ready => {
                ts.waiting += now - ts.since;
                self.queues[q].dequeue(t);
            }
            Phase::Running => {
                let c = (0..self.cpus.len()).find(|&c| self.cpus[c].running == Some(t)).expect("running somewhere");
                self.account_stop(c, now);
                if self.locks.is_some() {
                    self.tasks[t].phase = Phase::Stopped;
                    self.release_locks(t);
                }
            }
            // Its I/O completion, still queued, is ignored when it comes.
            Phase::Io => {}
            _ => return,
        }
        let ts = &mut self.tasks[t];
        let was_running = ts.phase != Phase::Ready && ts.phase != Phase::Io;
        ts.jobs_aborted += 1;
        ts.misses += 1;
        ts.remaining = 0;
        // Off the queue (dequeued) or already blocked (in I/O): the policy is not told again.
        self.after_job(t, was_running);
    }

    /// `t` arrives at `now`: at its `arrival`, or forked by the task running on CPU `from` if it
    /// arrives when woken.
    #[inline]
    fn arrive(&mut self, t: TaskId, now: Time, from: u32) {
        let spec = &self.w.tasks[t];
        if t == self.tasks.len() {
            // Sorted arrivals: state is created now, in index order.
            self.tasks.push(TaskState::new(spec));
        }
        debug_assert!(spec.forked_by.is_none() || spec.period.is_none(), "a forked task is not periodic");
        self.tasks[t].arrival = now;
        if !spec.locks.is_empty() {
            self.locks.get_or_insert_with(|| Locks::new(self.w.tasks.len())).register(t, spec);
        }
        if spec.jobs > 1 {
            if let Some(p) = spec.period {
                self.events_q.push(spec.arrival + p, false, Kind::Release(t));
            }
        }
        self.start_job(t, now, EnqueueReason::New, from);
    }

    fn release(&mut self, t: TaskId) {
        let now = self.now;
        let spec = &self.w.tasks[t];
        let k = (now - spec.arrival) / spec.period.unwrap_or(1);
        if (k as u32) + 1 < spec.jobs {
            self.events_q.push(now + spec.period.unwrap_or(1), false, Kind::Release(t));
        }
        if self.tasks[t].phase == Phase::Sleeping {
            self.start_job(t, now, EnqueueReason::Woken, NO_CPU);
        } else {
            self.backlog.entry(t).or_default().push_back(now);
        }
    }

    #[inline]
    fn start_job(&mut self, t: TaskId, release: Time, why: EnqueueReason, from: u32) {
        let spec = &self.w.tasks[t];
        let ts = &mut self.tasks[t];
        let (deadline, period) = spec.rare.as_deref().map_or((None, None), |r| (r.deadline, r.period));
        ts.job = period.map_or(0, |p| ((release - spec.arrival) / p.max(1)) as u32);
        ts.burst_idx = 0;
        ts.burst = spec.job_bursts(ts.job)[0];
        ts.remaining = ts.burst;
        ts.next_wake = 0;
        ts.deadline = deadline.or(period).map_or(NONE, |d| release + d);
        if self.cfg.on_miss == OnMiss::Abort && ts.deadline != NONE {
            // Late: after the CPU stops of that instant, so a job ending on its deadline is done.
            self.events_q.push(ts.deadline, true, Kind::Deadline(t));
        }
        self.make_ready_from(t, why, from);
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

    #[inline]
    fn queue_of_cpu(&self, c: CpuId) -> usize {
        if self.queues.len() > 1 {
            c
        } else {
            0
        }
    }

    #[inline(always)]
    pub(super) fn enqueue(&mut self, t: TaskId, why: EnqueueReason) {
        let q = if self.queues.len() > 1 {
            let q = self.choose_queue(t);
            self.member_pos[t] = self.members[q].len();
            self.members[q].push(t);
            q
        } else {
            0
        };
        let w = self.w;
        let ts = &mut self.tasks[t];
        ts.queue = q as u32;
        let view = view_of(t, &w.tasks[t], ts);
        self.queues[q].enqueue(&view, why, self.now);
    }

    pub(super) fn forget_member(&mut self, t: TaskId) {
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

    /// The task became runnable: queue it.
    #[inline(always)]
    fn queue_ready(&mut self, t: TaskId, why: EnqueueReason) {
        let ts = &mut self.tasks[t];
        ts.phase = Phase::Ready;
        ts.since = self.now;
        self.enqueue(t, why);
    }

    /// The task became runnable: queue it and, on arrival or wake-up, let it pre-empt a CPU.
    #[inline]
    pub(super) fn make_ready(&mut self, t: TaskId, why: EnqueueReason) {
        self.make_ready_from(t, why, NO_CPU);
    }

    /// [`Self::make_ready`] for a wake-up given by the task running on CPU `from` (NO_CPU: a
    /// timer or device).
    #[inline]
    pub(super) fn make_ready_from(&mut self, t: TaskId, why: EnqueueReason, from: u32) {
        // A fork is a wake-up from its parent's CPU, which the policy may place it by.
        if why == EnqueueReason::Woken || (why == EnqueueReason::New && from != NO_CPU) {
            let ts = &mut self.tasks[t];
            ts.woken_at = self.now;
            ts.woken_from = from;
        }
        self.queue_ready(t, why);
        if matches!(why, EnqueueReason::New | EnqueueReason::Woken) {
            self.preempt_for(t);
        }
    }

    /// If no CPU that may run the just-woken `t` is idle, pre-empt the first running task the
    /// policy says `t` should displace.
    pub(super) fn preempt_for(&mut self, t: TaskId) {
        let now = self.now;
        let q = self.tasks[t].queue as usize;
        if !self.queues[q].may_preempt() {
            return;
        }
        if self.queues.len() == 1 {
            if let Some(c) = self.queues[0].placed_on(t) {
                // The policy put it in CPU c's queue: c picks it if idle, else it may pre-empt c.
                if let Some(r) = self.cpus[c].running {
                    if self.queues[0].preempts(t, r, now) {
                        self.preempt_cpu(t, c);
                    }
                }
                return;
            }
        }
        let serving = |c: CpuId| self.queues.len() == 1 || c == q;
        if (0..self.cpus.len()).any(|c| serving(c) && self.cpus[c].running.is_none() && self.allowed(t, c)) {
            return;
        }
        let victim = (0..self.cpus.len()).find(|&c| {
            serving(c) && self.allowed(t, c) && self.cpus[c].running.is_some_and(|r| self.queues[q].preempts(t, r, now))
        });
        if let Some(c) = victim {
            self.preempt_cpu(t, c);
        }
    }

    /// `t`, woken now, pre-empts the task running on `c`: at once, or after the wake-up delay.
    fn preempt_cpu(&mut self, t: TaskId, c: CpuId) {
        let now = self.now;
        let delay = self.preempt_delay(t, c);
        if delay == 0 {
            let r = self.cpus[c].running.expect("running");
            self.tasks[r].preemptions += 1;
            self.preempt_stops += 1;
            self.stop(c, EnqueueReason::Preempted);
            return;
        }
        let cpu = &mut self.cpus[c];
        if cpu.preempt_at == NONE || cpu.preempt_at > now + delay {
            cpu.preempt_at = now + delay;
            cpu.preempt_for = t;
        }
    }

    /// How long the task running on `c` runs on when `t`, woken now, pre-empts it.
    fn preempt_delay(&self, t: TaskId, c: CpuId) -> Dur {
        let ts = &self.tasks[t];
        if ts.woken_at != self.now {
            return 0;
        }
        let d = &self.cfg.wake;
        let kind = match ts.woken_from {
            NO_CPU => match &d.preempt_rt {
                Some(rt) if Class::of(self.w.tasks[t].class.as_deref()) != Class::Fair => rt,
                _ => &d.preempt,
            },
            w if w as usize == c => &d.task_preempt,
            _ => &d.remote_preempt,
        };
        kind.draw(t, self.now, d.draw)
    }

    /// A deferred pre-emption comes due: the running task stops unless the task it was for no
    /// longer waits (another CPU took it meanwhile).
    #[cold]
    fn fire_preempt(&mut self, c: CpuId) {
        let cpu = &mut self.cpus[c];
        let t = cpu.preempt_for;
        cpu.preempt_at = NONE;
        cpu.preempt_for = TaskId::MAX;
        if let Some(r) = cpu.running {
            if self.tasks[t].phase == Phase::Ready {
                self.tasks[r].preemptions += 1;
                self.preempt_stops += 1;
                let (q, woken_at) = (self.tasks[t].queue as usize, self.tasks[t].woken_at);
                self.queues[q].preempted_after_wakeup(c, woken_at);
                self.stop(c, EnqueueReason::Preempted);
            }
        }
    }

    /// The running task on `c` has reached its next wake-up: it wakes its target and runs on.
    #[cold]
    fn fire_wake(&mut self, c: CpuId) {
        let t = self.cpus[c].running.expect("a wake-up from a running task");
        self.cpus[c].wake_at = NONE;
        let k = self.tasks[t].next_wake as usize;
        let target = self.w.tasks[t].wakes[k].task;
        self.tasks[t].next_wake += 1;
        self.arm_wake(c);
        self.deliver_wake(target, c as u32, t);
    }

    /// Set `c`'s `wake_at` to the running task's next wake-up, if it falls in this run.
    fn arm_wake(&mut self, c: CpuId) {
        let Some(t) = self.cpus[c].running else { return };
        let spec = &self.w.tasks[t];
        if spec.wakes.is_empty() {
            return;
        }
        let now = self.now;
        let ts = &mut self.tasks[t];
        let burst = ts.burst_idx as usize / 2;
        while spec.wakes.get(ts.next_wake as usize).is_some_and(|w| w.burst < burst) {
            ts.next_wake += 1;
        }
        let Some(w) = spec.wakes.get(ts.next_wake as usize).filter(|w| w.burst == burst) else { return };
        let cpu = &self.cpus[c];
        let begin = cpu.work_start.max(now);
        let done = ts.burst - ts.remaining + (now - cpu.work_start.min(now));
        let at = begin + w.at.min(ts.burst).saturating_sub(done);
        if at <= cpu.stop_at {
            self.cpus[c].wake_at = at;
        }
    }

    /// Task `u` is woken by task `waker`, running on CPU `from`: if `u` waits for a wake-up, its
    /// blocked interval ends now; if `waker` forks it and it has not arrived, it arrives now;
    /// otherwise the wake-up is kept for its next wait.
    fn deliver_wake(&mut self, u: TaskId, from: u32, waker: TaskId) {
        let phase = self.tasks.get(u).ok().flatten().map(|ts| (ts.phase, ts.waiting_wake));
        if phase == Some((Phase::NotArrived, false)) && self.w.tasks[u].forked_by == Some(waker) {
            self.arrive(u, self.now, from);
            return;
        }
        let waiting = phase == Some((Phase::Io, true));
        if !waiting {
            self.pending[u] += 1;
            return;
        }
        let now = self.now;
        let ts = &mut self.tasks[u];
        ts.waiting_wake = false;
        if self.cfg.record_slices {
            self.blocked.push(Blocked { task: u, start: ts.since, end: now, what: "wait".into() });
        }
        ts.burst_idx += 1;
        ts.burst = self.w.tasks[u].job_bursts(ts.job)[ts.burst_idx as usize];
        ts.remaining = ts.burst;
        self.make_ready_from(u, EnqueueReason::Woken, from);
    }

    /// The running task's CPU burst ends now and its next blocked interval waits for a wake-up
    /// it already has: it runs on into its next CPU burst without leaving the CPU (the read finds
    /// the byte; nothing blocks, the policy sees nothing). False when that is not the case.
    fn run_on_through_wait(&mut self, c: CpuId) -> bool {
        let now = self.now;
        let t = self.cpus[c].running.expect("running");
        let spec = &self.w.tasks[t];
        let ts = &self.tasks[t];
        let start = self.cpus[c].work_start.min(now);
        let io = ts.burst_idx as usize / 2;
        if now - start < ts.remaining
            || ts.burst_idx as usize + 2 >= spec.job_bursts(ts.job).len()
            || self.pending[t] == 0
            || !spec.locks.is_empty()
            || spec.until_woken.binary_search(&io).is_err()
            || spec.cpus_of_burst(io + 1).is_some_and(|a| !a.contains(&c))
        {
            return false;
        }
        self.pending[t] -= 1;
        let ts = &mut self.tasks[t];
        let ran = ts.remaining;
        ts.cpu += ran;
        if self.cfg.record_slices && ran > 0 {
            self.slices.push(Slice { task: t, cpu: c, start, end: start + ran, job: ts.job, burst: ts.burst_idx });
        }
        ts.burst_idx += 2;
        ts.burst = spec.job_bursts(ts.job)[ts.burst_idx as usize];
        ts.remaining = ts.burst;
        let burst_end = now + ts.remaining;
        let slice_end = self.cpus[c].slice_end;
        let mut stop_at = match slice_end {
            e if e == NONE || e >= burst_end => burst_end,
            e if self.cfg.tick.is_some() => at_tick(e, self.cfg.tick, burst_end).max(now),
            e => e.max(now),
        };
        if stop_at < burst_end && self.cfg.tick.is_some() {
            stop_at = self.first_read(t, now, slice_end.max(now), stop_at);
        }
        let seq = self.events_q.take_seq();
        let cpu = &mut self.cpus[c];
        cpu.work_start = now;
        cpu.stop_at = stop_at;
        cpu.stop_seq = seq;
        self.arm_wake(c);
        true
    }

    /// Account the run that ends now on CPU `c` (CPU time, slice, policy charge).
    #[inline(always)]
    fn account_stop(&mut self, c: CpuId, now: Time) -> TaskId {
        let cpu = &mut self.cpus[c];
        let t = cpu.running.take().expect("running");
        cpu.stopped_at = now;
        cpu.wake_at = NONE;
        cpu.preempt_at = NONE;
        cpu.preempt_for = TaskId::MAX;
        cpu.slice_end = NONE;
        if cpu.stop_at != NONE {
            // Stopped before its stop came due (pre-empted): the stop stays an event that is
            // counted when due and then ignored, as a stale one.
            self.events_q.push_with_seq(cpu.stop_at, true, cpu.stop_seq, Kind::StaleStop);
            cpu.stop_at = NONE;
        }
        let start = cpu.work_start.min(now);
        let ts = &mut self.tasks[t];
        let ran = (now - start).min(ts.remaining);
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
    pub(super) fn stop(&mut self, c: CpuId, why: EnqueueReason) {
        if why == EnqueueReason::SliceExpired && !self.pending.is_empty() && self.run_on_through_wait(c) {
            return;
        }
        let now = self.now;
        let t = self.account_stop(c, now);
        if self.tasks[t].remaining > 0 {
            if why == EnqueueReason::SliceExpired {
                self.tasks[t].expiries += 1;
            }
            // Slice over or pre-empted: never a reason to pre-empt another CPU.
            self.queue_ready(t, why);
            return;
        }
        if self.locks.is_some() {
            // No longer running: dropping its inherited priority is no business of the policy.
            self.tasks[t].phase = Phase::Stopped;
            self.release_locks(t);
        }
        let spec = &self.w.tasks[t];
        let ts = &mut self.tasks[t];
        if (ts.burst_idx as usize) + 1 < spec.job_bursts(ts.job).len() {
            let io = ts.burst_idx as usize / 2;
            if spec.rare.as_deref().is_some_and(|r| r.until_woken.binary_search(&io).is_ok()) {
                self.wait_for_wake(t, why);
                return;
            }
            ts.burst_idx += 1;
            ts.burst = spec.job_bursts(ts.job)[ts.burst_idx as usize];
            if let Some(r) = spec.rare.as_deref() {
                ts.burst = r.block_length(io, now, ts.burst);
            }
            ts.phase = Phase::Io;
            ts.since = now;
            let q = ts.queue as usize;
            self.events_q.push(now + ts.burst, false, Kind::IoDone(t));
            self.queues[q].blocked(t, now);
            return;
        }
        // Job done.
        ts.jobs_done += 1;
        if ts.deadline != NONE && now > ts.deadline {
            ts.misses += 1;
            if self.cfg.on_miss == OnMiss::Skip {
                // Releases at or after the deadline came while this job was late.
                if let Some(waiting) = self.backlog.get_mut(&t) {
                    let before = waiting.len();
                    waiting.retain(|&rel| rel < ts.deadline);
                    ts.jobs_skipped += (before - waiting.len()) as u32;
                }
            }
        }
        self.after_job(t, true);
    }

    /// A job of `t` has ended (done or aborted): start a job released meanwhile, wait for the next
    /// release, or finish. `tell_blocked`: the policy hears that it blocks (it was just charged).
    fn after_job(&mut self, t: TaskId, tell_blocked: bool) {
        let now = self.now;
        let spec = &self.w.tasks[t];
        let next = if self.backlog.is_empty() { None } else { self.backlog.get_mut(&t).and_then(VecDeque::pop_front) };
        let ts = &mut self.tasks[t];
        if let Some(rel) = next {
            self.start_job(t, rel, EnqueueReason::Woken, NO_CPU);
        } else if ts.jobs_done + ts.jobs_skipped + ts.jobs_aborted < spec.jobs {
            ts.phase = Phase::Sleeping;
            let q = ts.queue as usize;
            if tell_blocked {
                self.queues[q].blocked(t, now);
            }
        } else {
            ts.phase = Phase::Done;
            ts.finish = now;
            self.acc.add(&ts.sums(spec));
            self.unfinished -= 1;
            let q = ts.queue as usize;
            self.queues[q].task_exit(t);
            self.tasks.finished();
        }
    }

    /// The time task `t`, running its current burst from `work_start` on, first reads its CPU
    /// clock at or after `expiry` (where the kernel would notice its expired slice), if before
    /// `limit`; else `limit`.
    fn first_read(&self, t: TaskId, work_start: Time, expiry: Time, limit: Time) -> Time {
        let Some(reads) = self.w.tasks[t].rare.as_deref().map(|r| &r.runtime_reads).filter(|r| !r.is_empty()) else {
            return limit;
        };
        let ts = &self.tasks[t];
        let burst = ts.burst_idx as usize / 2;
        let done = ts.burst - ts.remaining;
        let from = done + (expiry - work_start);
        let i = reads.partition_point(|p| (p.burst, p.at) < (burst, from));
        match reads.get(i).filter(|p| p.burst == burst) {
            Some(p) => (work_start + (p.at - done)).min(limit),
            None => limit,
        }
    }

    /// `t` ended a CPU burst whose next blocked interval lasts until a task wakes it: it blocks,
    /// or runs on if a wake-up came already (it was pre-empted at its burst's end: queued again).
    fn wait_for_wake(&mut self, t: TaskId, why: EnqueueReason) {
        let now = self.now;
        let spec = &self.w.tasks[t];
        let ts = &mut self.tasks[t];
        if self.pending[t] > 0 {
            self.pending[t] -= 1;
            ts.burst_idx += 2;
            ts.burst = spec.job_bursts(ts.job)[ts.burst_idx as usize];
            ts.remaining = ts.burst;
            let here = ts.last_cpu as usize;
            let next = spec.cpus_of_burst(ts.burst_idx as usize / 2);
            if next.is_some_and(|a| !a.contains(&here)) {
                // Its next burst is held on another CPU: it goes there as the kernel woke it
                // there, pre-empting as a wake-up may.
                self.make_ready(t, EnqueueReason::Woken);
            } else {
                self.queue_ready(t, why);
            }
            return;
        }
        ts.burst_idx += 1;
        ts.burst = spec.job_bursts(ts.job)[ts.burst_idx as usize];
        ts.phase = Phase::Io;
        ts.since = now;
        ts.waiting_wake = true;
        let q = ts.queue as usize;
        self.queues[q].blocked(t, now);
    }

    /// The earliest policy timer (Time::MAX = none).
    #[inline(always)]
    fn next_timer(&self) -> Time {
        self.queues.iter().filter_map(|q| q.next_timer()).min().unwrap_or(Time::MAX)
    }

    /// Fire the policy timers due now; then a running task a queue no longer wants to run is
    /// stopped (the idle CPUs pick right after, in `dispatch_idle`).
    #[cold]
    #[inline(never)]
    fn fire_timers(&mut self) {
        let now = self.now;
        for q in 0..self.queues.len() {
            if self.queues[q].next_timer().is_none_or(|t| t > now) {
                continue;
            }
            self.queues[q].timer(now);
            assert!(
                self.queues[q].next_timer().is_none_or(|t| t > now),
                "{}: next_timer() did not move past {now} after timer()",
                self.queues[q].name()
            );
            for c in 0..self.cpus.len() {
                if self.queues.len() > 1 && c != q {
                    continue;
                }
                if let Some(r) = self.cpus[c].running {
                    if self.queues[q].preempt_current(r, now) {
                        self.tasks[r].preemptions += 1;
                        self.preempt_stops += 1;
                        self.stop(c, EnqueueReason::Preempted);
                    }
                }
            }
        }
    }

    #[inline]
    fn dispatch_idle(&mut self) {
        if self.queues.len() == 1 && self.locks.is_none() {
            // The common case, kept small for the compiler: one global queue, no locks to take,
            // so a picked task simply runs.
            let now = self.now;
            for c in 0..self.cpus.len() {
                if self.cpus[c].running.is_none() {
                    if let Some(pick) = self.queues[0].pick_next(c, now) {
                        self.start(c, pick.task, pick.slice);
                    }
                }
            }
            return;
        }
        // Picking can pre-empt a CPU already passed over (a task blocked on a lock raised its
        // holder's priority): start over until a pass pre-empts nothing.
        let mut c = 0;
        while c < self.cpus.len() {
            if self.cpus[c].running.is_none() {
                let before = self.preempt_stops;
                self.dispatch(c);
                if self.preempt_stops != before {
                    c = 0;
                    continue;
                }
            }
            c += 1;
        }
    }

    /// Pick for idle CPU `c` in the general case (per-CPU queues with stealing, locks).
    #[inline(never)]
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
            if self.locks.is_some() && !self.acquire_locks(t) {
                continue;
            }
            // A zero slice would expire at once and be picked again at the same instant, forever.
            assert!(pick.slice != Some(0), "{}: picked task {t} with a zero slice", self.queues[q].name());
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
        let view = self.view(t);
        self.queues[c].enqueue(&view, EnqueueReason::Migrated, self.now);
        true
    }

    #[inline(always)]
    fn start(&mut self, c: CpuId, t: TaskId, slice: Option<Dur>) {
        let now = self.now;
        let switch = self.cpus[c].last_task.is_some_and(|l| l != t);
        let mut work_start = now + if switch { self.cfg.switch_cost } else { 0 };
        let ts = &mut self.tasks[t];
        if ts.woken_at != NONE {
            // Woken this instant onto a CPU that was idle: it starts once the CPU is out of idle.
            let cpu = &self.cpus[c];
            let was_idle = cpu.last_task.is_none() || cpu.stopped_at < now;
            if ts.woken_at == now && was_idle {
                work_start += match ts.woken_from {
                    NO_CPU => self.cfg.wake.idle.draw(t, now, self.cfg.wake.draw),
                    w if w as usize != c => self.cfg.wake.remote_idle.draw(t, now, self.cfg.wake.draw),
                    _ => 0,
                };
            }
            ts.woken_at = NONE;
        }
        ts.waiting += now - ts.since;
        ts.phase = Phase::Running;
        // Branch-free counting: which way these go depends on the workload, so branches on
        // them are mispredicted often.
        ts.cs += u32::from(switch);
        ts.migrations += u32::from((ts.last_cpu != NO_CPU) & (ts.last_cpu as usize != c));
        ts.last_cpu = c as u32;
        // NONE is the largest value and time never goes back: this sets it on the first run only.
        ts.first_run = ts.first_run.min(work_start);
        let run = slice.map_or(ts.remaining, |s| s.max(1).min(ts.remaining));
        let mut stop_at = work_start + run;
        if self.cfg.tick.is_some() && run < ts.remaining {
            stop_at = at_tick(stop_at, self.cfg.tick, work_start + ts.remaining);
            stop_at = self.first_read(t, work_start, work_start + run, stop_at);
        }
        let cpu = &mut self.cpus[c];
        cpu.running = Some(t);
        cpu.last_task = Some(t);
        cpu.work_start = work_start;
        cpu.stop_at = stop_at;
        cpu.stop_seq = self.events_q.take_seq();
        cpu.slice_end = slice.map_or(NONE, |s| work_start + s.max(1));
        if !self.pending.is_empty() {
            self.arm_wake(c);
        }
    }

    fn check_idle(&mut self) {
        if self.queues.len() == 1 && !self.queues[0].work_conserving() {
            return;
        }
        for c in 0..self.cpus.len() {
            if self.cpus[c].running.is_some() {
                continue;
            }
            let waiting = |t: TaskId| {
                self.tasks[t].phase == Phase::Ready
                    && self.allowed(t, c)
                    && !self.queues[self.tasks[t].queue as usize].throttled(t)
            };
            if self.tasks.kept_ids().any(waiting) {
                self.idle_violations += 1;
            }
        }
    }

    pub fn finish(mut self, policy: String) -> SimResult {
        let states = &self.tasks;
        let tasks = settle(&self.w.tasks, &mut self.acc, self.unfinished > 0, self.cfg.task_results, |t| {
            states.get(t).map(|s| s.map(Cow::Borrowed))
        });
        let overall = self.acc.finish(self.cpus.len(), self.now);
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

/// What one pass over the specs finds out before a run.
pub(super) struct SpecScan {
    /// The specs are in arrival order.
    pub sorted: bool,
    /// Every task is one CPU burst, one job, no locks: nothing of it will enter the event heap.
    pub plain: bool,
    /// Some task gives or waits for wake-ups.
    pub wakes: bool,
}

/// Scan the specs once: in arrival order? all plain? It reads a few fields of each (large) spec
/// and walks four quarters side by side, since one walk waits on one memory read at a time more
/// than the hardware needs to.
pub(super) fn scan_specs(specs: &[TaskSpec]) -> SpecScan {
    let plain = |t: &TaskSpec| {
        t.bursts.len() == 1
            && t.jobs <= 1
            && t.locks.is_empty()
            && t.wakes.is_empty()
            && t.forked_by.is_none()
            && t.burst_cpus.is_empty()
    };
    let n = specs.len();
    let q = n / 4;
    let parts = [&specs[..q], &specs[q..2 * q], &specs[2 * q..3 * q], &specs[3 * q..]];
    let mut sorted = true;
    let mut all_plain = true;
    // Each quarter is sorted, and so are the seams between quarters.
    for k in 1..4 {
        if let (Some(a), Some(b)) = (parts[k - 1].last(), parts[k].first()) {
            sorted &= a.arrival <= b.arrival;
        }
    }
    let mut prev = [0u64; 4];
    for k in 0..4 {
        prev[k] = parts[k].first().map_or(0, |t| t.arrival);
    }
    for (((a, b), c), d) in parts[0].iter().zip(parts[1]).zip(parts[2]).zip(parts[3]) {
        for (k, t) in [a, b, c, d].into_iter().enumerate() {
            sorted &= t.arrival >= prev[k];
            all_plain &= plain(t);
            prev[k] = t.arrival;
        }
    }
    // The last quarter may be longer by up to 3.
    for t in &parts[3][q.min(parts[3].len())..] {
        sorted &= t.arrival >= prev[3];
        all_plain &= plain(t);
        prev[3] = t.arrival;
    }
    let wakes = !all_plain && specs.iter().any(|t| !t.wakes.is_empty() || !t.until_woken.is_empty());
    // A task that arrives when woken is not in the arrival order; the order must be a table.
    let sorted = sorted && (all_plain || !specs.iter().any(|t| t.forked_by.is_some()));
    SpecScan { sorted, plain: all_plain, wakes }
}

/// No HRTICK: a slice that expires at `expiry` is noticed at the next tick boundary, and the task
/// runs on until then (but not past the end of its burst, `burst_end`).
#[cold]
#[inline(never)]
fn at_tick(expiry: Time, tick: Option<Dur>, burst_end: Time) -> Time {
    let tick = tick.expect("a tick");
    expiry.div_ceil(tick).saturating_mul(tick).min(burst_end)
}

/// What a policy may know about task `t`, from its spec and state.
#[inline(always)]
fn view_of<'w>(t: TaskId, spec: &'w TaskSpec, ts: &TaskState) -> TaskView<'w> {
    let waker_cpu = (ts.woken_at != NONE && ts.woken_from != NO_CPU).then_some(ts.woken_from as CpuId);
    let mut view = view_with(t, spec, ts.priority, ts.deadline, ts.burst, ts.remaining, waker_cpu);
    if !spec.burst_cpus.is_empty() {
        view.affinity = spec.cpus_of_burst(ts.burst_idx as usize / 2);
    }
    TaskView { arrival: ts.arrival, ..view }
}

/// What a policy may know about task `t`, from its spec and the state a view shows (`deadline`
/// NONE = none).
#[inline(always)]
pub(super) fn view_with<'w>(
    t: TaskId,
    spec: &'w TaskSpec,
    priority: i32,
    deadline: Time,
    burst: Dur,
    remaining: Dur,
    waker_cpu: Option<CpuId>,
) -> TaskView<'w> {
    // One test of the rare fields' box rather than one per field: most tasks have none.
    let mut v = TaskView {
        id: t,
        arrival: spec.arrival,
        priority,
        weight: spec.weight.max(1),
        nice: spec.nice,
        deadline: (deadline != NONE).then_some(deadline),
        period: None,
        runtime: None,
        burst: Some(burst),
        remaining: Some(remaining),
        class: None,
        affinity: None,
        waker_cpu,
        start_cpu: None,
    };
    if let Some(r) = spec.rare.as_deref() {
        (v.period, v.runtime, v.start_cpu) = (r.period, r.runtime, r.start_cpu);
        (v.class, v.affinity) = (r.class.as_deref(), r.affinity.as_deref());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs(arrivals: &[u64]) -> Vec<TaskSpec> {
        arrivals.iter().map(|&a| TaskSpec::cpu("t", a, 1)).collect()
    }

    #[test]
    fn sortedness_is_seen_at_every_position_and_seam() {
        for n in 0..14u64 {
            let sorted: Vec<u64> = (1..=n).map(|i| 10 * i).collect();
            assert!(scan_specs(&specs(&sorted)).sorted, "n = {n}");
            // One step back at each position (quarter seams included) is caught.
            for i in 1..n as usize {
                let mut a = sorted.clone();
                a[i] = a[i - 1] - 1;
                assert!(!scan_specs(&specs(&a)).sorted, "n = {n}, descent at {i}");
            }
        }
    }
}
