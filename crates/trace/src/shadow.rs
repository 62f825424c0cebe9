//! A shadow of the fair class beside a live trace: the eevdf model's run queue
//! ([`FairRq`]) kept for chosen tasks of one CPU, driven by what the kernel did — its wake-ups,
//! its switches, its ticks, the tasks' reads of their own CPU clock — and asked at every
//! decision the kernel made whether the model's rules decide the same.
//!
//! A replay ([`crate::import`], `sim run`) lets the model make every choice, so one early
//! difference changes everything after it and the replay's metrics say only *that* it
//! differs. The shadow never lets the model choose: it follows the kernel's choices and keeps
//! the model's state (vruntimes, lags, deadlines, slice protection, delayed dequeues) as the
//! kernel's would be under the model's rules. Every decision is then judged alone, and the
//! ones the rules get wrong, with the state they were made in, point at the rule or the state
//! that is not the kernel's.
//!
//! Decisions judged: a wake-up of a followed task while another followed task runs (the rules:
//! `check_preempt_wakeup_fair()` and the pick after it; the kernel: the woken task ran within
//! the window, switched in as the running task was switched out runnable); a tick or a clock
//! read at which `update_curr()` asks to reschedule, and every tick (the rules: the pick after
//! it is another task; the kernel: the running task was switched out runnable within the
//! window); and every switch-in of a followed task (the rules' pick against the kernel's).
//! A decision whose outcome the trace leaves open — the running task blocked within the
//! window, or a task not followed took the CPU — is counted as unclear, not judged.

use crate::event::{Pid, PrioClass};
use crate::kernel_positions::{self, Compared, KernelPosition};
use crate::tick_phase::TickPhase;
use crate::timeline::{Run, Timeline};
use schedlab_sim::policies::eevdf::{FairRq, Features};
use schedlab_sim::policy::{EnqueueReason, TaskId, TaskView};
use serde::Serialize;
use std::collections::BTreeMap;

/// On a live trace, the shadow's ticks fall this much before the phase the trace's tick
/// pre-emptions give: that phase is where the kernel's switches after a tick cluster, a few µs
/// after the tick itself.
pub const LIVE_TICK_LEAD_NS: u64 = 30_000;

/// A decision whose [`Decision::margin`] is below this is a near tie.
pub const NEAR_TIE_NS: u64 = 50_000;

/// A decision took effect when the switch it asks for came within this.
pub const DECISION_WINDOW_NS: u64 = 100_000;

/// What to follow.
#[derive(Debug, Clone)]
pub struct ShadowOptions {
    pub cpu: usize,
    /// The tasks whose fair queue the shadow keeps; they must have run on `cpu` only.
    pub pids: Vec<Pid>,
    pub features: Features,
    /// Where the kernel's tick fell (None: no ticks, only wake-ups and clock reads act).
    pub tick: Option<TickPhase>,
    /// The ticks fall this much before `tick`'s phase ([`LIVE_TICK_LEAD_NS`] for a live trace,
    /// 0 for a simulated one, whose switches are at the tick).
    pub tick_lead_ns: u64,
    /// Judge the decisions in `[from, to)` (trace ns); the state is kept from the trace's start.
    pub from: u64,
    pub to: u64,
    /// A decision took effect when the switch it asks for came within this.
    pub window_ns: u64,
    /// Log every event in `[from, to)` (trace ns) with the queue after it.
    pub log: Option<(u64, u64)>,
    /// A task switched out runnable right after a wake-up (nothing between) is charged only up
    /// to the wake-up, and the task switched in from there, as the kernel's run-queue clock
    /// stands still from a pre-empting wake-up to the switch ([`FairRq::freeze_clock`]). Off:
    /// both are charged by the trace's switch time.
    pub clock_skip: bool,
    /// The kernel's own placing of the followed tasks, read beside the trace
    /// ([`crate::kernel_positions`]): at the end of each round of readings the tasks on the
    /// queue are moved to where the kernel had them against each other. Empty: the shadow's
    /// lags are the rules' alone from the trace's start.
    pub kernel_positions: Vec<KernelPosition>,
}

impl ShadowOptions {
    /// Follow `pids` on `cpu` of a live trace under `features`: every decision judged, the
    /// [`DECISION_WINDOW_NS`] window, ticks [`LIVE_TICK_LEAD_NS`] before `tick`'s phase, no log.
    pub fn new(cpu: usize, pids: Vec<Pid>, features: Features, tick: Option<TickPhase>) -> Self {
        ShadowOptions {
            cpu,
            pids,
            features,
            tick,
            tick_lead_ns: LIVE_TICK_LEAD_NS,
            from: 0,
            to: u64::MAX,
            window_ns: DECISION_WINDOW_NS,
            log: None,
            clock_skip: true,
            kernel_positions: Vec::new(),
        }
    }
}

/// What the kernel did at a decision point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Moment {
    Wake,
    Tick,
    ClockRead,
    /// A task not followed was woken onto the CPU: its enqueue runs `update_curr()` too.
    OtherWake,
}

/// One decision the kernel made, and the rules' answer.
#[derive(Debug, Clone, Serialize)]
pub struct Decision {
    pub at: u64,
    pub moment: Moment,
    pub woken: Option<Pid>,
    pub running: Pid,
    /// How long `running` had run since it was switched in.
    pub ran_ns: u64,
    /// The rules switch to another task now.
    pub rules: bool,
    /// The kernel did.
    pub kernel: bool,
    /// The running task's slice protection was still on (`vprot > vruntime`).
    pub protected: bool,
    /// Every followed task on the queue then, as the rules saw it.
    pub queue: Vec<Queued>,
    /// How near the rules were to the other answer (virtual ns): the least of the running
    /// task's lag and protection left, each waiting task's lag, and the gap between the two
    /// earliest deadlines among the eligible. A wrong decision with a margin of a few µs is a
    /// near tie that the trace's 1 µs clock and the kernel's own update times can tip.
    pub margin: u64,
}

/// A followed task on the shadow's queue at a decision.
#[derive(Debug, Clone, Serialize)]
pub struct Queued {
    pub pid: Pid,
    /// `V − v` (virtual ns; ≥ 0 is eligible).
    pub lag: i64,
    /// Its virtual deadline less `V`.
    pub deadline: i64,
    /// Blocked but still queued (DELAY_DEQUEUE).
    pub delayed: bool,
}

impl Queued {
    /// `pid lag/deadline` in µs, ` delayed` when it is.
    pub fn describe(&self) -> String {
        let delayed = if self.delayed { " delayed" } else { "" };
        format!("{} {:.0}/{:.0}{delayed}", self.pid, self.lag as f64 / 1e3, self.deadline as f64 / 1e3)
    }
}

/// A queue as [`Queued::describe`] gives each task, `; `-separated.
pub fn describe_queue(queue: &[Queued]) -> String {
    queue.iter().map(Queued::describe).collect::<Vec<_>>().join("; ")
}

/// A switch-in where the rules would have picked another task.
#[derive(Debug, Clone, Serialize)]
pub struct PickDiffers {
    pub at: u64,
    pub kernel: Pid,
    pub rules: Option<Pid>,
}

/// The shadow's findings.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ShadowReport {
    pub decisions: Vec<Decision>,
    pub picks: usize,
    pub picks_differ: Vec<PickDiffers>,
    /// Decisions the trace leaves open (the running task blocked within the window, or a task
    /// not followed took the CPU).
    pub unclear: usize,
    /// Wake-ups onto a CPU that ran no followed task (nothing to decide among the followed).
    pub wakes_not_contested: usize,
    /// A followed task switched in without a wake-up the shadow saw (queued then, lag 0).
    pub repaired: usize,
    /// The events of [`ShadowOptions::log`]'s span, each with the queue after it.
    pub log: Vec<String>,
    /// Rounds of [`ShadowOptions::kernel_positions`] that compared two tasks or more, and by how
    /// much they moved the tasks in all (ns of virtual time).
    pub resyncs: usize,
    pub resync_moved_ns: u64,
}

impl ShadowReport {
    /// The decisions the rules took otherwise than the kernel.
    pub fn wrong(&self) -> impl Iterator<Item = &Decision> + Clone {
        self.decisions.iter().filter(|d| d.rules != d.kernel)
    }

    /// Of [`ShadowReport::wrong`], those within [`NEAR_TIE_NS`] of the other answer.
    pub fn wrong_near_ties(&self) -> usize {
        self.wrong().filter(|d| d.margin < NEAR_TIE_NS).count()
    }
}

/// Why the shadow cannot follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShadowError {
    UnknownTask(Pid),
    NotFair { pid: Pid, class: String },
    RanElsewhere { pid: Pid, cpu: usize },
    NoTasks,
}

impl std::fmt::Display for ShadowError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShadowError::UnknownTask(p) => write!(f, "task {p} is not in the trace"),
            ShadowError::NotFair { pid, class } => {
                write!(f, "task {pid} is not a fair task ({class}): the shadow keeps the fair class only")
            }
            ShadowError::RanElsewhere { pid, cpu } => write!(
                f,
                "task {pid} also ran on CPU {cpu}: the shadow keeps one CPU's queue, so follow tasks that ran on it alone"
            ),
            ShadowError::NoTasks => write!(f, "no tasks to follow"),
        }
    }
}

impl std::error::Error for ShadowError {}

/// Events at one instant are taken in this order: a wake-up is seen by the task running then,
/// so it comes before that task's switch-out; a tick before the switch it causes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// The end of a round of the kernel's readings ([`ShadowOptions::kernel_positions`]).
    Resync(usize),
    Tick,
    Read(usize),
    /// A task not followed is woken onto the CPU.
    OtherWake,
    Wake {
        task: usize,
        new: bool,
    },
    Out {
        task: usize,
        blocked: bool,
        exited: bool,
    },
    /// A task not followed is switched in.
    Other,
    In(usize),
}

/// Follow `opts.pids` on `opts.cpu` through `tl`.
pub fn shadow(tl: &Timeline, opts: &ShadowOptions) -> Result<ShadowReport, ShadowError> {
    if opts.pids.is_empty() {
        return Err(ShadowError::NoTasks);
    }
    let mut nice = Vec::new();
    for &pid in &opts.pids {
        let t = tl.tasks.get(&pid).ok_or(ShadowError::UnknownTask(pid))?;
        if let Some(r) = t.runs.iter().find(|r| r.cpu != opts.cpu) {
            return Err(ShadowError::RanElsewhere { pid, cpu: r.cpu });
        }
        match t.class_at(t.runs.first().map_or(t.first_seen, |r| r.start)) {
            Some(PrioClass::Fair { nice: n }) => nice.push(n),
            None => nice.push(0),
            Some(other) => return Err(ShadowError::NotFair { pid, class: format!("{other:?}") }),
        }
    }
    let rounds = kernel_positions::rounds(&opts.kernel_positions);
    let events = events(tl, opts, &rounds);
    let switch_ins = switch_ins(tl, opts.cpu);
    let mut s = Shadow {
        tl,
        opts,
        nice,
        fair: FairRq::new(opts.features.clone()),
        running: None,
        seen: vec![false; opts.pids.len()],
        switch_ins,
        base: tick_base(tl, opts),
        wakes: events.iter().filter(|(_, e)| matches!(e, Ev::Wake { .. })).map(|&(ts, _)| ts).collect(),
        last_was_wake: None,
        report: ShadowReport::default(),
        rounds,
        moved_at: vec![0; opts.pids.len()],
        left_at: vec![None; opts.pids.len()],
    };
    s.fair.set_tick(opts.tick.map(|t| t.tick_ns));
    for &(ts, ev) in &events {
        s.step(ts, ev);
    }
    Ok(s.report)
}

/// Every event of the followed tasks and the ticks, in order.
fn events(tl: &Timeline, opts: &ShadowOptions, rounds: &[Vec<KernelPosition>]) -> Vec<(u64, Ev)> {
    let mut out = Vec::new();
    for (i, pid) in opts.pids.iter().enumerate() {
        let t = &tl.tasks[pid];
        if let Some(a) = t.arrival.filter(|&a| a >= tl.start) {
            out.push((a, Ev::Wake { task: i, new: true }));
        }
        for b in &t.blocked {
            if b.end < tl.end {
                out.push((b.end, Ev::Wake { task: i, new: false }));
            }
        }
        for r in &t.runs {
            out.push((r.start, Ev::In(i)));
            let blocked = t.blocks_at(r.end);
            let exited = t.exit == Some(r.end);
            if r.end < tl.end {
                out.push((r.end, Ev::Out { task: i, blocked, exited }));
            }
        }
        out.extend(t.cpu_clock_reads.iter().map(|&ts| (ts, Ev::Read(i))));
    }
    for t in tl.tasks.values().filter(|t| t.pid != 0 && !opts.pids.contains(&t.pid)) {
        out.extend(t.runs.iter().filter(|r| r.cpu == opts.cpu).map(|r| (r.start, Ev::Other)));
        out.extend(t.wakes.iter().filter(|w| w.cpu == opts.cpu && !w.new_task).map(|w| (w.woken, Ev::OtherWake)));
    }
    if let Some(tick) = opts.tick {
        let base = tick_base(tl, opts);
        out.extend(
            (1..)
                .map(|k| base + k * tick.tick_ns)
                .skip_while(|&ts| ts < tl.start)
                .take_while(|&ts| ts < tl.end)
                .map(|ts| (ts, Ev::Tick)),
        );
    }
    for (i, round) in rounds.iter().enumerate() {
        if let Some(last) = round.last().filter(|r| r.at >= tl.start && r.at < tl.end) {
            out.push((last.at, Ev::Resync(i)));
        }
    }
    out.sort();
    out
}

/// The shadow's last tick at or before the trace's start (its start without ticks).
fn tick_base(tl: &Timeline, opts: &ShadowOptions) -> u64 {
    match opts.tick {
        Some(t) => t.tick_at_or_before(tl.start).saturating_sub(opts.tick_lead_ns),
        None => tl.start,
    }
}

/// Every switch-in on `cpu`, of any task: (time, task).
fn switch_ins(tl: &Timeline, cpu: usize) -> Vec<(u64, Pid)> {
    let mut v: Vec<(u64, Pid)> =
        tl.tasks.values().flat_map(|t| t.runs.iter().filter(|r| r.cpu == cpu).map(|r| (r.start, t.pid))).collect();
    v.sort();
    v
}

struct Shadow<'a> {
    tl: &'a Timeline,
    opts: &'a ShadowOptions,
    nice: Vec<i32>,
    fair: FairRq,
    /// The followed task the kernel runs on the CPU, and since when.
    running: Option<(usize, u64)>,
    /// The task has been queued at least once.
    seen: Vec<bool>,
    switch_ins: Vec<(u64, Pid)>,
    /// Trace time of the queue's time 0, a tick (the queue reads "the last tick" as the last
    /// multiple of its period).
    base: u64,
    /// Every wake-up of a followed task, in order.
    wakes: Vec<u64>,
    /// The event just taken was a wake-up of a followed task, at this time.
    last_was_wake: Option<u64>,
    report: ShadowReport,
    rounds: Vec<Vec<KernelPosition>>,
    /// Per followed task: when its virtual runtime last moved in the shadow (placed, or switched
    /// out after a run).
    moved_at: Vec<u64>,
    /// Per followed task: when it was last switched out (the kernel's last update of it).
    left_at: Vec<Option<u64>>,
}

/// How the kernel answered a decision at some instant.
enum Answer {
    Switched,
    Kept,
    /// The running task ran on past the moment, then blocked, or was switched out after a
    /// wake-up, within the window: whether the kernel would have kept it longer the trace does
    /// not say.
    RanOnUntil,
    /// A task not followed took the CPU within the window, or the trace has no run there.
    Unclear,
}

impl Shadow<'_> {
    /// The queue's time for trace time `ts`: the model's ticks fall on multiples of the period.
    fn at(&self, ts: u64) -> u64 {
        ts - self.base
    }

    fn view(&self, task: usize) -> TaskView<'static> {
        TaskView { nice: self.nice[task], ..TaskView::new(task as TaskId) }
    }

    fn pid(&self, task: usize) -> Pid {
        self.opts.pids[task]
    }

    fn judged(&self, ts: u64) -> bool {
        ts >= self.opts.from && ts < self.opts.to
    }

    fn step(&mut self, ts: u64, ev: Ev) {
        self.apply(ts, ev);
        if self.opts.log.is_some_and(|(from, to)| ts >= from && ts < to) {
            let name = |t: usize| self.pid(t).to_string();
            let what = match ev {
                Ev::Resync(_) => "the kernel's positions are read".to_string(),
                Ev::Tick => "tick".to_string(),
                Ev::Read(t) => format!("{} reads its clock", name(t)),
                Ev::OtherWake => "a task not followed wakes here".to_string(),
                Ev::Wake { task, .. } => format!("{} wakes", name(task)),
                Ev::Out { task, blocked: true, .. } => format!("{} blocks", name(task)),
                Ev::Out { task, .. } => format!("{} is switched out runnable", name(task)),
                Ev::Other => "a task not followed is switched in".to_string(),
                Ev::In(t) => format!("{} is switched in", name(t)),
            };
            let queue = describe_queue(&self.queue());
            let at = ts.saturating_sub(self.tl.start) as f64 / 1e6;
            self.report.log.push(format!("{at:.3} ms {what}: {queue}"));
        }
    }

    fn apply(&mut self, ts: u64, ev: Ev) {
        // A switch-out runnable right after a wake-up, nothing between: the wake-up pre-empted
        // it, and the kernel's clock stood at the wake-up until the switch.
        let woken_just_before = self.last_was_wake.take();
        match ev {
            Ev::Wake { task, new } => {
                self.wake(ts, task, new);
                self.last_was_wake = Some(ts);
            }
            Ev::Out { task, blocked, exited } => {
                if let Some(at) = woken_just_before.filter(|_| self.opts.clock_skip && !blocked && !exited) {
                    self.fair.freeze_clock(self.opts.cpu, self.at(at));
                }
                self.switch_out(ts, task, blocked, exited)
            }
            Ev::In(task) => self.switch_in(ts, task),
            Ev::Other => {
                if let Some((r, _)) = self.running {
                    self.switch_out(ts, r, false, false);
                }
                self.fair.put_prev(self.opts.cpu);
            }
            Ev::Resync(round) => self.resync(ts, round),
            Ev::Tick => self.update(ts, Moment::Tick),
            Ev::Read(task) => {
                if self.running.is_some_and(|(r, _)| r == task) {
                    self.update(ts, Moment::ClockRead);
                }
            }
            Ev::OtherWake => self.update(ts, Moment::OtherWake),
        }
    }

    fn wake(&mut self, ts: u64, task: usize, new: bool) {
        let t = task as TaskId;
        if self.fair.on_queue(t) && !self.fair.is_delayed(t) {
            return;
        }
        self.moved_at[task] = ts;
        let why = if new && !self.seen[task] { EnqueueReason::New } else { EnqueueReason::Woken };
        self.seen[task] = true;
        let view = self.view(task);
        self.fair.enqueue(&view, why, self.at(ts));
        let Some((running, _)) = self.running else {
            if self.judged(ts) {
                self.report.wakes_not_contested += 1;
            }
            return;
        };
        let rules = self.fair.preempts(t, running as TaskId, self.at(ts))
            && self.schedule_switches(running, ts, EnqueueReason::Preempted);
        let answer = self.kernel_answer(running, ts, Some(task));
        self.decide(ts, Moment::Wake, Some(task), rules, answer);
    }

    /// The end of a round of the kernel's readings: the followed tasks waiting on the queue whose
    /// virtual runtime has not moved since they were read (not run, not placed), and the running
    /// one where a waiting one lines its `se.exec_start` up with the trace, are compared by
    /// `se.vruntime` against the shadow's ([`kernel_positions`]) and moved to where the kernel
    /// had them against each other.
    fn resync(&mut self, ts: u64, round: usize) {
        let mut tasks: Vec<TaskId> = Vec::new();
        let mut compared: Vec<Compared> = Vec::new();
        let mut offset: Option<i64> = None;
        let mut running_read: Option<(usize, KernelPosition)> = None;
        for r in &self.rounds[round] {
            let Some(i) = self.opts.pids.iter().position(|&p| p == r.pid) else { continue };
            let t = i as TaskId;
            if let Some((x, since)) = self.running.filter(|&(x, _)| x == i) {
                if since <= r.at {
                    running_read = Some((x, *r));
                }
                continue;
            }
            if !self.fair.on_queue(t) || self.fair.is_stopped(t) || self.moved_at[i] > r.at {
                continue;
            }
            if let Some(left) = self.left_at[i].filter(|_| offset.is_none()) {
                offset = Some(kernel_positions::clock_offset(r, left));
            }
            let e = self.fair.e(t);
            tasks.push(t);
            compared.push(Compared { weight: e.load.weight, kernel: r.vruntime, model: e.vruntime });
        }
        if let (Some((i, r)), Some(offset), Some((_, since))) = (running_read, offset, self.running) {
            // The kernel's last update of the running task, on the trace's clock: within this
            // run, the shadow's vruntime then is today's less what it ran since (or plus, by the
            // µs the read came after the round's time).
            let updated = r.exec_start - offset;
            if updated >= since as i64 && updated <= (ts + kernel_positions::ROUND_SLACK_NS) as i64 {
                let t = i as TaskId;
                let (now, load) = (self.fair.vruntime_at(t, self.at(ts)), self.fair.e(t).load);
                let then = kernel_positions::carried(now, load, ts, updated as u64);
                tasks.push(t);
                compared.push(Compared { weight: load.weight, kernel: r.vruntime, model: then });
            }
        }
        if compared.len() < 2 {
            return;
        }
        for (t, dv) in tasks.into_iter().zip(kernel_positions::shifts(&compared)) {
            self.fair.shift_vruntime(t, dv);
            self.report.resync_moved_ns += dv.unsigned_abs();
        }
        self.report.resyncs += 1;
    }

    /// A tick or a clock read of the running task: `update_curr()`.
    fn update(&mut self, ts: u64, moment: Moment) {
        let Some((running, _)) = self.running else { return };
        let r = running as TaskId;
        let asked_before = self.fair.wants_resched(r);
        self.fair.update_at(self.at(ts));
        if moment != Moment::Tick && (asked_before || !self.fair.wants_resched(r)) {
            return;
        }
        let rules = self.fair.wants_resched(r) && self.schedule_switches(running, ts, EnqueueReason::SliceExpired);
        let answer = self.kernel_answer(running, ts, None);
        self.decide(ts, moment, None, rules, answer);
    }

    /// Asked to reschedule `running`, would `schedule()` run another task? Played on a copy of
    /// the queue: the pick may finish delayed dequeues on the way (which moves the average), and
    /// the shadow must not make a choice the kernel did not.
    fn schedule_switches(&self, running: usize, ts: u64, why: EnqueueReason) -> bool {
        let mut fair = self.fair.clone();
        let r = running as TaskId;
        fair.charge(r, self.at(ts));
        fair.enqueue(&self.view(running), why, self.at(ts));
        fair.pick_task(self.opts.cpu, self.at(ts)) != Some(r)
    }

    /// Record a decision and, where the kernel ran on with the running task though the rules
    /// had asked to reschedule it, pick it again (the kernel's schedule() chose it again, and a
    /// task picked again keeps its protection as it was). The decision is about the task the
    /// kernel is running.
    fn decide(&mut self, ts: u64, moment: Moment, woken: Option<usize>, rules: bool, answer: Answer) {
        let Some((running, since)) = self.running else { return };
        let r = running as TaskId;
        if self.judged(ts) {
            match answer {
                Answer::Unclear | Answer::RanOnUntil => self.report.unclear += 1,
                Answer::Switched | Answer::Kept => {
                    let e = *self.fair.e(r);
                    let queue = self.queue();
                    let margin = margin(&queue, self.pid(running), e.vprot - e.vruntime);
                    let d = Decision {
                        at: ts,
                        moment,
                        woken: woken.map(|w| self.pid(w)),
                        running: self.pid(running),
                        ran_ns: ts - since,
                        rules,
                        kernel: matches!(answer, Answer::Switched),
                        protected: e.vprot > e.vruntime,
                        queue,
                        margin,
                    };
                    self.report.decisions.push(d);
                }
            }
        }
        if matches!(answer, Answer::Kept | Answer::RanOnUntil) && self.fair.wants_resched(r) {
            self.fair.charge(r, self.at(ts));
            let view = self.view(running);
            self.fair.enqueue(&view, EnqueueReason::SliceExpired, self.at(ts));
            let _ = self.fair.pick_as(self.opts.cpu, r, self.at(ts));
        }
    }

    /// The followed tasks on the queue, as the rules see them now.
    fn queue(&mut self) -> Vec<Queued> {
        let v = self.fair.avg_vruntime();
        (0..self.opts.pids.len())
            .filter(|&i| self.fair.on_queue(i as TaskId))
            .map(|i| {
                let e = self.fair.e(i as TaskId);
                Queued { pid: self.pid(i), lag: v - e.vruntime, deadline: e.deadline - v, delayed: e.delayed }
            })
            .collect()
    }

    /// Did the kernel switch `running` out, runnable, within the window after `ts` — and, for a
    /// wake-up, switch `woken` in?
    fn kernel_answer(&self, running: usize, ts: u64, woken: Option<usize>) -> Answer {
        let t = &self.tl.tasks[&self.pid(running)];
        let Some(run) = t.run_at(ts).copied() else { return Answer::Unclear };
        if run.end >= ts + self.opts.window_ns || run.end >= self.tl.end {
            return Answer::Kept;
        }
        if t.blocks_at(run.end) || t.exit == Some(run.end) {
            return Answer::RanOnUntil;
        }
        let next = self.next_switch_in(&run);
        let Some(woken) = woken else {
            // A switch after a tick or a clock read is theirs unless a wake-up came between or
            // a task not followed took the CPU (woken, it may have pre-empted).
            let i = self.wakes.partition_point(|&w| w < ts);
            return match self.wakes.get(i) {
                Some(&w) if w <= run.end => Answer::RanOnUntil,
                _ if next.is_some_and(|p| self.opts.pids.contains(&p)) => Answer::Switched,
                _ => Answer::Unclear,
            };
        };
        match next {
            Some(p) if p == self.pid(woken) => Answer::Switched,
            _ => Answer::Unclear,
        }
    }

    /// The task switched in on the CPU when `run` ended.
    fn next_switch_in(&self, run: &Run) -> Option<Pid> {
        let i = self.switch_ins.partition_point(|&(at, _)| at < run.end);
        self.switch_ins.get(i).map(|&(_, p)| p)
    }

    fn switch_out(&mut self, ts: u64, task: usize, blocked: bool, exited: bool) {
        if self.running.is_none_or(|(r, _)| r != task) {
            return;
        }
        self.running = None;
        self.moved_at[task] = ts;
        self.left_at[task] = Some(ts);
        let t = task as TaskId;
        self.fair.charge(t, self.at(ts));
        if exited {
            self.fair.exit(t);
        } else if blocked {
            self.fair.blocked(t, self.at(ts));
        } else {
            let view = self.view(task);
            self.fair.enqueue(&view, EnqueueReason::Preempted, self.at(ts));
        }
    }

    fn switch_in(&mut self, ts: u64, task: usize) {
        let t = task as TaskId;
        if !self.fair.is_waiting(t) {
            // Running since before the trace, or woken where the trace did not show it.
            self.report.repaired += usize::from(self.seen[task]);
            self.seen[task] = true;
            if self.fair.is_delayed(t) || !self.fair.on_queue(t) {
                self.moved_at[task] = ts;
                let view = self.view(task);
                self.fair.enqueue(&view, EnqueueReason::Woken, self.at(ts));
            }
        }
        if let Some((r, _)) = self.running {
            // A switch-out the trace lost: the task the kernel ran before stops here.
            self.switch_out(ts, r, false, false);
        }
        let Ok(rules) = self.fair.pick_as(self.opts.cpu, t, self.at(ts)) else { return };
        if self.judged(ts) {
            self.report.picks += 1;
            if rules != Some(t) {
                let rules = rules.map(|r| self.pid(r));
                self.report.picks_differ.push(PickDiffers { at: ts, kernel: self.pid(task), rules });
            }
        }
        self.running = Some((task, ts));
    }
}

/// How near a decision was to the other answer; see [`Decision::margin`]. `protection_left`
/// is the running task's `vprot − vruntime`.
fn margin(queue: &[Queued], running: Pid, protection_left: i64) -> u64 {
    let runnable = || queue.iter().filter(|q| !q.delayed);
    let mut m = runnable().map(|q| q.lag.unsigned_abs()).min().unwrap_or(u64::MAX);
    if protection_left > 0 {
        m = m.min(protection_left as u64);
    }
    let mut deadlines: Vec<i64> = runnable().filter(|q| q.lag >= 0 || q.pid == running).map(|q| q.deadline).collect();
    deadlines.sort();
    if let [a, b, ..] = deadlines[..] {
        m = m.min(b.abs_diff(a));
    }
    m
}

/// The decisions counted per (woken, running) pair and how long the running task had run, for
/// a text summary.
pub fn tally(report: &ShadowReport, names: &BTreeMap<Pid, String>) -> Vec<String> {
    let name = |p: Pid| names.get(&p).cloned().unwrap_or_else(|| p.to_string());
    let mut lines = Vec::new();
    for moment in [Moment::Wake, Moment::Tick, Moment::ClockRead, Moment::OtherWake] {
        let ds: Vec<&Decision> = report.decisions.iter().filter(|d| d.moment == moment).collect();
        if ds.is_empty() {
            continue;
        }
        let wrong = ds.iter().filter(|d| d.rules != d.kernel).count();
        let rules_only = ds.iter().filter(|d| d.rules && !d.kernel).count();
        let near = ds.iter().filter(|d| d.rules != d.kernel && d.margin < NEAR_TIE_NS).count();
        lines.push(format!(
            "{:<10} {:>6} judged, {:>5} wrong ({} switched where the kernel kept the task, {} kept where it switched; {near} of them near ties, within {} µs)",
            format!("{moment:?}"),
            ds.len(),
            wrong,
            rules_only,
            wrong - rules_only,
            NEAR_TIE_NS / 1_000
        ));
        let mut by: BTreeMap<(String, String, &str), (usize, usize)> = BTreeMap::new();
        for d in &ds {
            let bucket = match d.ran_ns {
                0..1_000_000 => "ran < 1 ms",
                1_000_000..2_000_000 => "ran 1-2 ms",
                2_000_000..4_000_000 => "ran 2-4 ms",
                _ => "ran >= 4 ms",
            };
            let woken = d.woken.map_or_else(|| "-".to_string(), name);
            let c = by.entry((woken, name(d.running), bucket)).or_default();
            c.0 += 1;
            c.1 += usize::from(d.rules != d.kernel);
        }
        for ((woken, running, bucket), (n, w)) in by {
            lines.push(format!("    {woken:>14} while {running:<14} {bucket:<12} {n:>5} judged, {w:>4} wrong"));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::from_sim::{timeline_from_sim, FromSimOptions, FIRST_SIM_PID};
    use schedlab_sim::engine::{simulate, SimConfig};
    use schedlab_sim::policies::by_spec;
    use schedlab_sim::policy::MS;
    use schedlab_sim::workload::{TaskSpec, Workload};

    /// A hog and two sleepers (about 1 ms every 5 ms and 2 ms every 10 ms) on one CPU: the mix
    /// of validate's sleepers-vs-hog. The odd nanoseconds keep wake-ups and deadlines from
    /// falling on the same instant, where the order of simultaneous events, not a rule, decides.
    fn sleepers_vs_hog() -> Workload {
        let sleeper = |name: &str, run: u64, sleep: u64, arrival: u64| TaskSpec {
            bursts: (0..40).flat_map(|_| [run, sleep]).take(79).collect(),
            ..TaskSpec::cpu(name, arrival, 1)
        };
        Workload {
            cpus: Some(1),
            tasks: vec![
                TaskSpec::cpu("hog", 1_234_567, 400 * MS),
                sleeper("sleep-1/4", 1_013_117, 3_991_211, 1_534_574),
                sleeper("sleep-2/8", 2_017_389, 7_983_563, 2_934_570),
            ],
        }
    }

    /// The simulated schedule as a trace that starts `offset` ns into its clock (the ticks then
    /// fall at the offset's phase, as a live trace's fall anywhere), followed by `rules`.
    fn shadow_of_sim(run_by: &str, rules: Features, offset: u64) -> ShadowReport {
        shadow_of(sleepers_vs_hog(), run_by, rules, offset)
    }

    /// Three hogs at nice −5, 0 and 5 (validate's nice-hogs).
    fn nice_hogs() -> Workload {
        let hog = |name: &str, nice: i32, arrival: u64| TaskSpec { nice, ..TaskSpec::cpu(name, arrival, 400 * MS) };
        Workload {
            cpus: Some(1),
            tasks: vec![hog("n-5", -5, 1_234_567), hog("n0", 0, 1_334_571), hog("n5", 5, 1_434_577)],
        }
    }

    fn shadow_of(w: Workload, run_by: &str, rules: Features, offset: u64) -> ShadowReport {
        let cfg = SimConfig { cpus: 1, tick: Some(4 * MS), ..SimConfig::default() };
        let r = simulate(&w, &mut *by_spec(run_by).unwrap(), &cfg);
        let tl = timeline_from_sim(&r, &w, &FromSimOptions { offset, ..FromSimOptions::default() });
        let pids: Vec<Pid> = (0..3).map(|i| FIRST_SIM_PID + i).collect();
        let tick = TickPhase { phase_ns: offset % (4 * MS), tick_ns: 4 * MS, samples: 0, preemptions: 0 };
        // The simulator switches at the tick itself: no lead.
        let opts = ShadowOptions { tick_lead_ns: 0, ..ShadowOptions::new(0, pids, rules, Some(tick)) };
        shadow(&tl, &opts).unwrap()
    }

    fn wrong(r: &ShadowReport, moment: Moment) -> usize {
        r.wrong().filter(|d| d.moment == moment).count()
    }

    #[test]
    fn the_rules_that_made_a_schedule_agree_with_it_at_every_decision() {
        for offset in [0, 7_654_321_987] {
            let r = shadow_of_sim("eevdf:cpus=1", Features::linux_6_18(1, 250), offset);
            let wakes = r.decisions.iter().filter(|d| d.moment == Moment::Wake).count();
            let switched = r.decisions.iter().filter(|d| d.kernel).count();
            assert!(wakes > 60 && switched > 20, "{wakes} wake-ups judged, {switched} switches");
            let first_wrong = r.decisions.iter().find(|d| d.rules != d.kernel);
            assert_eq!((wrong(&r, Moment::Wake), wrong(&r, Moment::Tick)), (0, 0), "offset {offset}: {first_wrong:?}");
            assert!(
                r.picks > 100 && r.picks_differ.is_empty(),
                "{} picks, differ {:?}",
                r.picks,
                r.picks_differ.first()
            );
        }
    }

    #[test]
    fn weights_from_nice_are_followed_as_the_rules_gave_them() {
        let r = shadow_of(nice_hogs(), "eevdf:cpus=1", Features::linux_6_18(1, 250), 7_654_321_987);
        let ticks = r.decisions.iter().filter(|d| d.moment == Moment::Tick).count();
        let first_wrong = r.decisions.iter().find(|d| d.rules != d.kernel);
        assert!(ticks > 50, "{ticks} ticks judged");
        assert_eq!(wrong(&r, Moment::Tick), 0, "{first_wrong:?}");
        assert!(r.picks_differ.is_empty(), "{:?}", r.picks_differ.first());
    }

    #[test]
    fn other_rules_are_caught_where_they_decide_otherwise() {
        let no_wakeup_preemption = Features { wakeup_preemption: false, ..Features::linux_6_18(1, 250) };
        let r = shadow_of_sim("eevdf:cpus=1", no_wakeup_preemption, 0);
        assert!(wrong(&r, Moment::Wake) > 10, "{} wrong wake-ups", wrong(&r, Moment::Wake));
        // And the other way: a schedule made without wake-up pre-emption, judged by 6.18's rules.
        let r = shadow_of_sim("eevdf:cpus=1,wakeup_preemption=0", Features::linux_6_18(1, 250), 0);
        let wrongly_kept = r.decisions.iter().filter(|d| d.moment == Moment::Wake && d.rules && !d.kernel).count();
        assert!(wrongly_kept > 10, "{wrongly_kept} wake-ups the rules pre-empt and the schedule did not");
    }

    #[test]
    fn the_margin_is_the_nearest_of_eligibility_protection_and_deadline_order() {
        let q = |pid, lag, deadline, delayed| Queued { pid, lag, deadline, delayed };
        // Running 1 (lag -300, out of eligibility by 300 µs, protection over); 2 eligible by
        // 120 µs with its deadline 80 µs before 3's; 4 delayed, its lag of 5 µs not counted.
        let queue = [
            q(1, -300_000, 900_000, false),
            q(2, 120_000, 400_000, false),
            q(3, 500_000, 480_000, false),
            q(4, 5_000, 0, true),
        ];
        assert_eq!(margin(&queue, 1, -10), 80_000);
        // With 60 µs of protection left, that is the nearest.
        assert_eq!(margin(&queue, 1, 60_000), 60_000);
        // The running task at the eligibility border.
        let queue = [q(1, -7_000, 900_000, false), q(2, 400_000, 100_000, false)];
        assert_eq!(margin(&queue, 1, 0), 7_000);
    }

    #[test]
    fn the_log_shows_each_event_of_its_span_with_the_queue() {
        let w = sleepers_vs_hog();
        let cfg = SimConfig { cpus: 1, tick: Some(4 * MS), ..SimConfig::default() };
        let r = simulate(&w, &mut *by_spec("eevdf:cpus=1").unwrap(), &cfg);
        let tl = timeline_from_sim(&r, &w, &FromSimOptions::default());
        let tick = TickPhase { phase_ns: 0, tick_ns: 4 * MS, samples: 0, preemptions: 0 };
        let pids = (0..3).map(|i| FIRST_SIM_PID + i).collect();
        let opts = ShadowOptions {
            tick_lead_ns: 0,
            log: Some((20 * MS, 30 * MS)),
            ..ShadowOptions::new(0, pids, Features::linux_6_18(1, 250), Some(tick))
        };
        let log = shadow(&tl, &opts).unwrap().log;
        // Ticks at 20, 24 and 28 ms, and the tasks' switches and wake-ups between.
        assert_eq!(log.iter().filter(|l| l.contains(" tick: ")).count(), 3, "{log:#?}");
        assert!(log.iter().any(|l| l.contains("1001 wakes: ") && l.contains("1001 ")), "{log:#?}");
        assert!(log.iter().all(|l| l.contains("1000 ")), "the hog is always queued: {log:#?}");
    }

    #[test]
    fn a_task_that_ran_on_another_cpu_is_refused() {
        let mut tl = Timeline::from_events(&[], Some(2));
        let mut t = crate::timeline::TaskTimeline::new(5, "x", 0);
        t.runs = vec![Run { cpu: 0, start: 0, end: 10 }, Run { cpu: 1, start: 20, end: 30 }];
        tl.tasks.insert(5, t);
        let opts = ShadowOptions::new(0, vec![5], Features::default(), None);
        assert_eq!(shadow(&tl, &opts).unwrap_err(), ShadowError::RanElsewhere { pid: 5, cpu: 1 });
    }
}
