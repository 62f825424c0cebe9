//! The live host's dispatch loop, one step per method, run at RT priority on the dispatcher
//! CPU. Every pass: reap tasks that exited; end slices whose CPU budget is used up (extending
//! those of runnable tasks that have not had their CPU yet); stop at the end of the run; give
//! each idle managed CPU the policy's next task (switching by priority or by signal); read the
//! CPU time of the slices just ended once their task has really stopped; sleep until the next
//! slice end, the end of the run or the next poll.

use super::host::{HostConfig, Mechanism, Slice, SliceEnd};
use super::tasks::TaskSet;
use anyhow::Result;
use schedlab_os::process::Signal;
use schedlab_os::sched::{self, SchedParams};
use schedlab_os::{affinity, clock, procfs, signals};
use schedlab_sim::{EnqueueReason, Policy, TaskView};

/// A slice that got within this much of its CPU budget is not extended.
const EXTEND_TOLERANCE_NS: u64 = 50_000;

/// What the dispatch loop hands back to [`super::host::run`].
pub struct Outcome {
    pub slices: Vec<Slice>,
    /// Completed slices per task.
    pub counts: Vec<usize>,
    /// When each task exited (ns since the release).
    pub exited: Vec<Option<u64>>,
    pub wall_ns: u64,
    pub disp_ns: u64,
    pub extensions: usize,
    pub switches: usize,
    pub interrupted: bool,
    /// Each task's CPU time at the end (frozen).
    pub cpu_end: Vec<u64>,
}

/// A slice in progress on a managed CPU.
struct Running {
    task: usize,
    first: bool,
    start: u64,
    cpu_at_start: u64,
    budget: u64,
    wake_at: u64,
}

/// What the loop knows about one task.
#[derive(Default, Clone)]
struct TaskState {
    /// Completed slices.
    slices: usize,
    exited: Option<u64>,
    /// Released from its start barrier.
    started: bool,
    /// Has had a slice (its first one includes exec and start-up).
    had_slice: bool,
}

/// What the loop knows about one managed CPU.
#[derive(Default)]
struct CpuState {
    running: Option<Running>,
    /// The task that ran last, until the next pick decides whether to switch away from it.
    previous: Option<usize>,
    /// A slice ended but not yet switched away from: (index in `slices`, task, CPU at start).
    /// Its CPU time is read again after the switch, when the task has really stopped.
    closing: Option<(usize, usize, u64)>,
}

/// The loop's state.
pub struct Dispatcher<'a> {
    policy: &'a mut dyn Policy,
    set: &'a mut TaskSet,
    views: &'a [TaskView<'a>],
    cfg: &'a HostConfig,
    /// The waiting and the running task's scheduling (the Prio mechanism).
    wait: SchedParams,
    run_p: SchedParams,
    tasks: Vec<TaskState>,
    cpus: Vec<CpuState>,
    slices: Vec<Slice>,
    extensions: usize,
    switches: usize,
    /// How much earlier than the budget the dispatcher wakes: the learnt reaction time from
    /// reading the counter to the task really leaving the CPU (an integral controller on the
    /// measured slice error), so slices end on their budget instead of systematically after it.
    lead: u64,
    t0: u64,
}

impl<'a> Dispatcher<'a> {
    pub fn new(
        policy: &'a mut dyn Policy,
        set: &'a mut TaskSet,
        views: &'a [TaskView<'a>],
        cfg: &'a HostConfig,
        (wait, run_p): (SchedParams, SchedParams),
    ) -> Self {
        let n = set.len();
        Dispatcher {
            policy,
            set,
            views,
            cfg,
            wait,
            run_p,
            tasks: vec![TaskState::default(); n],
            cpus: cfg.cpus.iter().map(|_| CpuState::default()).collect(),
            slices: Vec::new(),
            extensions: 0,
            switches: 0,
            lead: 0,
            t0: 0,
        }
    }

    /// Run until the end of the run (or a stop request), then freeze the tasks and close the
    /// slices still running.
    pub fn run(mut self) -> Result<Outcome> {
        let disp0 = clock::thread_cpu_ns();
        self.t0 = clock::monotonic_ns();
        for v in self.views {
            self.policy.enqueue(v, EnqueueReason::New, 0);
        }
        let end_at = self.t0 + self.cfg.duration_ns;
        let hard_end = self.t0 + 2 * self.cfg.duration_ns + 1_000_000_000;
        let interrupted = loop {
            let now = clock::monotonic_ns();
            self.reap_exited(now);
            self.end_used_slices(now, hard_end);
            if signals::stop_requested() {
                break true;
            }
            if self.over(now, end_at, hard_end) {
                break false;
            }
            // After the stop check, so a run ends on a round.
            self.fill_idle_cpus(now);
            self.close_switched_slices();
            self.sleep(end_at)?;
        };
        Ok(self.finish(interrupted, disp0))
    }

    fn at(&self, now: u64) -> u64 {
        now - self.t0
    }

    fn slice(&self, r: &Running, cpu: usize, now: u64, used: u64, end: SliceEnd) -> Slice {
        Slice {
            task: r.task,
            cpu,
            start_ns: r.start - self.t0,
            end_ns: now - self.t0,
            planned_ns: r.budget,
            cpu_ns: used,
            end,
            first: r.first,
        }
    }

    /// Step 1: tasks that exited leave the policy (ending their slice if they were running).
    fn reap_exited(&mut self, now: u64) {
        for i in self.set.reap() {
            self.tasks[i].exited = Some(self.at(now));
            match self.cpus.iter().position(|c| c.running.as_ref().is_some_and(|r| r.task == i)) {
                Some(k) => {
                    let r = self.cpus[k].running.take().expect("slot holds the task");
                    let used = self.set.cpu_ns(i).saturating_sub(r.cpu_at_start);
                    let s = self.slice(&r, self.cfg.cpus[k], now, used, SliceEnd::Exited);
                    self.slices.push(s);
                    self.policy.charge(i, used, self.at(now));
                    self.cpus[k].previous = None;
                }
                None => self.policy.dequeue(i),
            }
            self.policy.task_exit(i);
        }
    }

    /// Step 2: slices whose budget is used up end. A runnable task that has not had its CPU keeps
    /// the slice however long that takes (as the kernel's current task would); only blocking
    /// or the run's hard end cut it short.
    fn end_used_slices(&mut self, now: u64, hard_end: u64) {
        for k in 0..self.cpus.len() {
            let Some(r) = self.cpus[k].running.as_mut() else { continue };
            if now < r.wake_at {
                continue;
            }
            let used = self.set.cpu_ns(r.task).saturating_sub(r.cpu_at_start);
            let deficit = r.budget.saturating_sub(used);
            // /proc is read only when the task fell short (blocked, or preempted by throttling).
            let short = deficit > self.lead + EXTEND_TOLERANCE_NS;
            let state = if short { procfs::stat(self.set.pid(r.task)).map(|s| s.state) } else { None };
            if short && state == Some('R') && now < hard_end {
                r.wake_at = now + deficit - self.lead;
                self.extensions += 1;
                continue;
            }
            let r = self.cpus[k].running.take().expect("checked above");
            let why = if matches!(state, Some('S') | Some('D')) { SliceEnd::Blocked } else { SliceEnd::Expired };
            let s = self.slice(&r, self.cfg.cpus[k], now, used, why);
            self.slices.push(s);
            self.cpus[k].closing = Some((self.slices.len() - 1, r.task, r.cpu_at_start));
            self.tasks[r.task].slices += 1;
            self.policy.charge(r.task, used, self.at(now));
            let reason = if why == SliceEnd::Blocked { EnqueueReason::Yielded } else { EnqueueReason::SliceExpired };
            self.policy.enqueue(&self.views[r.task], reason, self.at(now));
            self.cpus[k].previous = Some(r.task);
        }
    }

    /// Step 3: is the run over? Every task gone, the hard end, or the end (on a round boundary
    /// when asked: every live task has had the same number of slices and no CPU is busy).
    fn over(&self, now: u64, end_at: u64, hard_end: u64) -> bool {
        let live: Vec<&TaskState> = self.tasks.iter().filter(|t| t.exited.is_none()).collect();
        let round_done = live.windows(2).all(|w| w[0].slices == w[1].slices);
        let all_idle = self.cpus.iter().all(|c| c.running.is_none());
        live.is_empty() || now >= hard_end || (now >= end_at && (!self.cfg.end_on_round || (round_done && all_idle)))
    }

    /// Step 4: give every idle CPU the policy's next task.
    fn fill_idle_cpus(&mut self, now: u64) {
        for k in 0..self.cpus.len() {
            if self.cpus[k].running.is_some() {
                continue;
            }
            let cpu = self.cfg.cpus[k];
            let pick = self.policy.pick_next(cpu, self.at(now));
            let previous = self.cpus[k].previous.take();
            let busy = |t: usize| self.cpus.iter().any(|c| c.running.as_ref().is_some_and(|r| r.task == t));
            let old = previous.filter(|&o| self.set.alive(o) && !busy(o));
            match pick {
                Some(p) => {
                    if old != Some(p.task) {
                        self.switch(old, p.task, cpu);
                    }
                    let budget = p.slice.unwrap_or(self.cfg.duration_ns);
                    let start = clock::monotonic_ns();
                    let first = !self.tasks[p.task].had_slice;
                    self.tasks[p.task].had_slice = true;
                    self.cpus[k].running = Some(Running {
                        task: p.task,
                        first,
                        start,
                        cpu_at_start: self.set.cpu_ns(p.task),
                        budget,
                        wake_at: start + budget.saturating_sub(self.lead),
                    });
                }
                None => {
                    if let Some(o) = old {
                        self.park(o);
                    }
                }
            }
        }
    }

    /// Let `next` run on `cpu` instead of `old`.
    fn switch(&mut self, old: Option<usize>, next: usize, cpu: usize) {
        if self.cfg.cpus.len() > 1 {
            let _ = affinity::set_affinity(self.set.pid(next), &[cpu]);
        }
        match self.cfg.mechanism {
            Mechanism::Prio => {
                let _ = sched::set_sched(self.set.pid(next), &self.run_p);
            }
            Mechanism::Signal => self.set.signal(next, Signal::SIGCONT),
        }
        if let Some(o) = old {
            self.park(o);
        }
        if !self.tasks[next].started {
            self.tasks[next].started = true;
            if self.cfg.mechanism == Mechanism::Prio {
                // First pick: let every task past its barrier; the waiting ones sit at the lower
                // priority behind the chosen one.
                for i in 0..self.tasks.len() {
                    if self.set.alive(i) {
                        let _ = self.set.release(i);
                        self.tasks[i].started = true;
                    }
                }
            }
        }
        self.switches += 1;
    }

    /// Make `task` wait: the lower priority, or stopped.
    fn park(&mut self, task: usize) {
        match self.cfg.mechanism {
            Mechanism::Prio => {
                let _ = sched::set_sched(self.set.pid(task), &self.wait);
            }
            Mechanism::Signal => self.set.signal(task, Signal::SIGSTOP),
        }
    }

    /// The slices just ended have now really stopped (or continue as the next slice): read
    /// their CPU time and learn how late the switch takes effect.
    fn close_switched_slices(&mut self) {
        for k in 0..self.cpus.len() {
            if let Some((idx, task, at_start)) = self.cpus[k].closing.take() {
                let used = self.set.cpu_ns(task).saturating_sub(at_start);
                let s = &mut self.slices[idx];
                s.cpu_ns = used;
                // The task ran until the switch took effect, not until the dispatcher woke.
                s.end_ns = clock::monotonic_ns() - self.t0;
                if s.end == SliceEnd::Expired && !s.first {
                    // Clamped so one outlier (the dispatcher delayed by other RT work on its
                    // CPU) does not make the following slices end early.
                    let err = (used as i64 - s.planned_ns as i64).clamp(-200_000, 200_000);
                    self.lead = (self.lead as i64 + err / 4).clamp(0, 1_000_000) as u64;
                }
            }
        }
    }

    /// Step 5: sleep to the next slice end, the end of the run, or the next poll.
    fn sleep(&self, end_at: u64) -> Result<()> {
        let now = clock::monotonic_ns();
        let mut wake = now + self.cfg.poll_ns;
        for r in self.cpus.iter().filter_map(|c| c.running.as_ref()) {
            wake = wake.min(r.wake_at);
        }
        if now < end_at {
            wake = wake.min(end_at);
        }
        Ok(clock::sleep_until_ns(wake)?)
    }

    /// Freeze everyone at one instant, then close the slices still running.
    fn finish(mut self, interrupted: bool, disp0: u64) -> Outcome {
        self.set.freeze();
        let now = clock::monotonic_ns();
        let cpu_end: Vec<u64> = (0..self.tasks.len()).map(|i| self.set.cpu_ns(i)).collect();
        for k in 0..self.cpus.len() {
            if let Some((idx, task, at_start)) = self.cpus[k].closing.take() {
                self.slices[idx].cpu_ns = cpu_end[task].saturating_sub(at_start);
            }
            if let Some(r) = self.cpus[k].running.take() {
                let used = cpu_end[r.task].saturating_sub(r.cpu_at_start);
                let s = self.slice(&r, self.cfg.cpus[k], now, used, SliceEnd::RunEnded);
                self.slices.push(s);
            }
        }
        Outcome {
            counts: self.tasks.iter().map(|t| t.slices).collect(),
            exited: self.tasks.iter().map(|t| t.exited).collect(),
            wall_ns: now - self.t0,
            disp_ns: clock::thread_cpu_ns() - disp0,
            extensions: self.extensions,
            switches: self.switches,
            interrupted,
            cpu_end,
            slices: self.slices,
        }
    }
}
