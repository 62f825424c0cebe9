//! Per-task timelines: when each task ran (and where), was blocked, or waited runnable; its
//! wake-up latencies, switches and migrations. Built from trace events here
//! ([`Timeline::from_events`]) or from a simulator run ([`crate::from_sim`]), so the comparer
//! and the importer see one type.
//!
//! Rules, per task (pid 0, the idle task, is not a task here: a CPU without a task is idle):
//! - switch-in opens a run; switch-out closes it. `prev_state` R/R+ = pre-empted (involuntary,
//!   runnable from then); X/Z = exiting; anything else (S, D, I, D|K, …) = blocked until the
//!   next wake-up.
//! - a wake-up of a blocked (or not yet seen) task makes it runnable; the next switch-in ends
//!   the wait and gives a wake-up latency sample. Wake-ups of tasks still on a CPU happen (the
//!   task was woken before it got to sleep) and change nothing.
//! - a task first seen being switched out was running when the trace started: its run is
//!   counted from the trace's first event. Intervals still open when the trace ends are
//!   clipped to its last event.
//! - what contradicts this (a switch-out of a task that was not running, a switch-in of a
//!   blocked task whose wake-up is missing, an event recorded on a CPU in the context of a task
//!   other than the one running there, …), usually lost events or a filtered trace, is kept as
//!   an [`Anomaly`] and repaired as described there — never ignored silently.

use crate::event::{Event, EventKind, Pid, PrioClass, OWN_CPU_CLOCKS};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One stretch of a task on a CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    pub cpu: usize,
    pub start: u64,
    pub end: u64,
}

/// A blocked stretch: from a switch-out in a sleeping state to the wake-up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockedSpan {
    pub start: u64,
    pub end: u64,
    /// The `prev_state` it blocked in (`S`, `D`, …).
    pub state: String,
    /// The task that woke it from task context (its sched_waking was recorded in that task's
    /// context, not in an interrupt), and when: a pipe write, a futex wake, a signal. None for a
    /// timer or device wake-up, or when the trace does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub woken_by: Option<Waker>,
}

/// Who woke a task, and when that task did it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waker {
    pub pid: Pid,
    /// Its sched_waking time (the instant the waker acted; the wake-up follows it).
    pub at: u64,
}

impl BlockedSpan {
    pub fn new(start: u64, end: u64, state: &str) -> Self {
        BlockedSpan { start, end, state: state.to_string(), woken_by: None }
    }
}

/// A runnable-but-waiting stretch (woken or pre-empted, until switched in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    pub start: u64,
    pub end: u64,
}

/// A wake-up followed by a switch-in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WakeSample {
    /// sched_wakeup (or sched_wakeup_new) time.
    pub woken: u64,
    /// The sched_waking before it, when recorded.
    pub waking: Option<u64>,
    /// Switch-in time.
    pub ran: u64,
    pub cpu: usize,
    /// A new task's first start (sched_wakeup_new) rather than a wake-up from sleep.
    pub new_task: bool,
}

impl WakeSample {
    /// From the wake-up to the switch-in: from sched_waking when it was recorded (the instant
    /// the waker acted, on its own CPU), else from sched_wakeup. A wake-up of a task on another
    /// CPU may be queued to that CPU and recorded there as sched_wakeup only after the
    /// inter-processor interrupt arrives; sched_waking counts that delay too.
    pub fn latency(&self) -> u64 {
        self.ran.saturating_sub(self.waking.unwrap_or(self.woken).min(self.woken))
    }
}

/// A `sched_migrate_task` event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MigrateEvent {
    pub ts: u64,
    pub from: usize,
    pub to: usize,
}

/// A `sched_process_exec`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecEvent {
    pub ts: u64,
    pub filename: String,
}

/// Where a task was when the trace (or simulation) ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "end", rename_all = "snake_case")]
pub enum EndState {
    /// On this CPU since `since` (its last run is clipped at the end).
    Running {
        cpu: usize,
        since: u64,
    },
    /// Waiting for a CPU since `since`.
    Runnable {
        since: u64,
    },
    /// Blocked in `state` since `since`, not woken before the end (no span recorded for it).
    Blocked {
        since: u64,
        state: String,
    },
    Exited {
        at: u64,
    },
    /// Seen only in wake-ups / fork / exec: not known.
    Unknown,
}

/// Everything known about one task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskTimeline {
    pub pid: Pid,
    /// The last comm seen.
    pub comm: String,
    /// Every comm seen, in order (a task renames itself on exec).
    pub comms: Vec<String>,
    /// `prio` values seen, with the time each was first seen (consecutive repeats dropped).
    pub prios: Vec<(u64, i32)>,
    /// Time it was created (sched_wakeup_new, else fork; a simulated task's arrival).
    pub arrival: Option<u64>,
    pub parent: Option<Pid>,
    /// Time of the first event that names it.
    pub first_seen: u64,
    /// It was already running when the trace started (its first run is clipped).
    pub running_at_start: bool,
    pub runs: Vec<Run>,
    pub blocked: Vec<BlockedSpan>,
    pub waiting: Vec<Span>,
    pub wakes: Vec<WakeSample>,
    /// Switch-ins.
    pub switch_ins: u64,
    /// Switch-outs in a sleeping or exiting state.
    pub voluntary: u64,
    /// Switch-outs while runnable (R, R+).
    pub involuntary: u64,
    /// Runs on a different CPU than the run before (what the simulator counts).
    pub migrations: u64,
    /// `sched_migrate_task` events (the kernel moving it between run queues).
    pub migrate_events: Vec<MigrateEvent>,
    pub execs: Vec<ExecEvent>,
    /// When it read its own CPU clock (a point where the kernel updates its run time and acts
    /// on an expired slice), when the trace records such reads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_clock_reads: Vec<u64>,
    /// sched_process_exit time (or the simulated finish).
    pub exit: Option<u64>,
    pub end_state: EndState,
}

impl TaskTimeline {
    pub fn new(pid: Pid, comm: &str, first_seen: u64) -> Self {
        TaskTimeline {
            pid,
            comm: comm.to_string(),
            comms: vec![comm.to_string()],
            prios: Vec::new(),
            arrival: None,
            parent: None,
            first_seen,
            running_at_start: false,
            runs: Vec::new(),
            blocked: Vec::new(),
            waiting: Vec::new(),
            wakes: Vec::new(),
            switch_ins: 0,
            voluntary: 0,
            involuntary: 0,
            migrations: 0,
            migrate_events: Vec::new(),
            execs: Vec::new(),
            cpu_clock_reads: Vec::new(),
            exit: None,
            end_state: EndState::Unknown,
        }
    }

    /// Total CPU time.
    pub fn cpu_time(&self) -> u64 {
        self.runs.iter().map(|r| r.end - r.start).sum()
    }

    /// CPU time inside `[start, end)`.
    pub fn cpu_time_in(&self, start: u64, end: u64) -> u64 {
        self.runs.iter().map(|r| r.end.min(end).saturating_sub(r.start.max(start))).sum()
    }

    /// It switched out blocked at `ts` (a blocked span starts there).
    pub fn blocks_at(&self, ts: u64) -> bool {
        self.blocked.binary_search_by_key(&ts, |b| b.start).is_ok()
    }

    /// Its run that starts at `ts`, if one does.
    pub fn run_starting_at(&self, ts: u64) -> Option<&Run> {
        self.runs.binary_search_by_key(&ts, |r| r.start).ok().map(|i| &self.runs[i])
    }

    /// Its run that ends at `ts`, if one does.
    pub fn run_ending_at(&self, ts: u64) -> Option<&Run> {
        self.runs.binary_search_by_key(&ts, |r| r.end).ok().map(|i| &self.runs[i])
    }

    /// Its run going on at `ts` (ends included), if one is.
    pub fn run_at(&self, ts: u64) -> Option<&Run> {
        self.runs.get(self.runs.partition_point(|r| r.end < ts)).filter(|r| r.start <= ts)
    }

    /// The CPU whose run queue held it at `ts`, as far as the trace shows: the later of its last
    /// run started by then and its last `sched_migrate_task` by then (the kernel traces every
    /// change of a task's CPU); before either, the CPU its first move left, else its first run's.
    pub fn queue_at(&self, ts: u64) -> Option<usize> {
        let run = self.runs[..self.runs.partition_point(|r| r.start <= ts)].last();
        let moved = self.migrate_events[..self.migrate_events.partition_point(|m| m.ts <= ts)].last();
        match (run, moved) {
            (Some(r), Some(m)) if m.ts >= r.start => Some(m.to),
            (Some(r), _) => Some(r.cpu),
            (None, Some(m)) => Some(m.to),
            (None, None) => match (self.migrate_events.first(), self.runs.first()) {
                (Some(m), Some(r)) if m.ts <= r.start => Some(m.from),
                (Some(m), None) => Some(m.from),
                (_, r) => r.map(|r| r.cpu),
            },
        }
    }

    /// The `prio` in force at `ts` (the last seen at or before it, else the first seen).
    pub fn prio_at(&self, ts: u64) -> Option<i32> {
        self.prios.iter().take_while(|&&(at, _)| at <= ts).last().or(self.prios.first()).map(|&(_, p)| p)
    }

    /// What the `prio` in force at `ts` says of the scheduling class.
    pub fn class_at(&self, ts: u64) -> Option<PrioClass> {
        self.prio_at(ts).map(PrioClass::from_prio)
    }

    fn see_comm(&mut self, comm: &str) {
        if self.comm != comm && !comm.is_empty() {
            self.comm = comm.to_string();
            if !self.comms.iter().any(|c| c == comm) {
                self.comms.push(comm.to_string());
            }
        }
    }

    fn see_prio(&mut self, ts: u64, prio: i32) {
        if self.prios.last().is_none_or(|&(_, p)| p != prio) {
            self.prios.push((ts, prio));
        }
    }
}

/// Something the events contradict; how it was repaired is in `what`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Anomaly {
    pub ts: u64,
    /// Source line of the event (0 for simulated timelines).
    pub line: usize,
    pub pid: Pid,
    pub what: String,
    /// How far the repaired times may be off, in ns: the width of the window the lost event
    /// lies in (the task's CPU time is known to ± this); 0 when no time was guessed.
    #[serde(default)]
    pub uncertain_ns: u64,
    /// The task's switch-out was lost and its run was ended at `ts`, the first event in another
    /// context: the run ended somewhere in the `uncertain_ns` before ([`Timeline::trim_lost_ends`]).
    #[serde(default)]
    pub run_end_lost: bool,
    /// The task's switch-in was lost while it waited runnable on this CPU, and its run was
    /// started at the CPU's last sign of another task: (the earliest it can have started, the
    /// start given). Where that other task's run ended earlier than the trace showed, this one
    /// ran from then: a runnable task is not left waiting on an idle CPU
    /// ([`Timeline::trim_lost_ends`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_from: Option<(u64, u64)>,
}

/// Timelines of every task in a trace window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Timeline {
    /// First and last event time (the window intervals are clipped to).
    pub start: u64,
    pub end: u64,
    pub cpus: usize,
    pub tasks: BTreeMap<Pid, TaskTimeline>,
    pub anomalies: Vec<Anomaly>,
    /// Wake-ups of tasks that were on a CPU or already runnable (no state change).
    pub redundant_wakeups: u64,
    /// The clock grid every event time lies on, in ns (1000 for tracefs text, which prints
    /// µs); 0 for exact times (a simulated timeline). Differences of such times are rounded,
    /// and statistics of them say so ([`crate::compare::median_on_grid`]).
    #[serde(default)]
    pub resolution_ns: u64,
}

/// A task's state while the events are replayed.
#[derive(Debug, Clone, PartialEq)]
enum Cur {
    Unknown,
    Running {
        cpu: usize,
        since: u64,
    },
    /// `woken`: the wake-up time (and waking, new) when a wake-up made it runnable.
    Runnable {
        since: u64,
        woken: Option<(u64, Option<u64>, bool)>,
    },
    Blocked {
        since: u64,
        state: String,
    },
    Dead {
        at: u64,
    },
}

struct Builder {
    tl: Timeline,
    cur: BTreeMap<Pid, Cur>,
    /// Last sched_waking per pid (consumed by the wake-up): its time and the task that gave it
    /// from task context.
    waking: BTreeMap<Pid, (u64, Option<Pid>)>,
    last_cpu: BTreeMap<Pid, usize>,
    /// Time of the last switch per CPU.
    cpu_switch: Vec<Option<u64>>,
    /// The task each CPU runs, as far as the events tell.
    cpu_task: Vec<Option<Pid>>,
    /// Time of the last event per CPU in the context of the task `cpu_task` names (idle when
    /// none): a lost switch on that CPU happened after it.
    cpu_seen: Vec<Option<u64>>,
    /// Per CPU, a task seen running there without its switch-in since the CPU's last switch:
    /// (pid, the window's start, the first event in its context).
    lost_in: Vec<Option<(Pid, u64, u64)>>,
    /// Per CPU, when a task's switch to idle left it runnable (its RT queue throttled); kept
    /// while other tasks come and go there, until a task runnable since then is seen running.
    idled_from: Vec<Option<u64>>,
    /// The RT period, when known: a throttled task comes back at its next boundary.
    rt_period: Option<crate::RtPeriod>,
}

impl Builder {
    fn task(&mut self, pid: Pid, comm: &str, ts: u64) -> &mut TaskTimeline {
        let t = self.tl.tasks.entry(pid).or_insert_with(|| TaskTimeline::new(pid, comm, ts));
        t.see_comm(comm);
        t
    }

    fn anomaly(&mut self, e: &Event, pid: Pid, what: impl Into<String>) {
        self.anomaly_within(e, pid, 0, what);
    }

    /// An anomaly whose repair guessed a time known only to ± `uncertain_ns`.
    fn anomaly_within(&mut self, e: &Event, pid: Pid, uncertain_ns: u64, what: impl Into<String>) {
        self.tl.anomalies.push(Anomaly {
            ts: e.ts,
            line: e.line,
            pid,
            what: what.into(),
            uncertain_ns,
            run_end_lost: false,
            waited_from: None,
        });
    }

    fn cur(&self, pid: Pid) -> Cur {
        self.cur.get(&pid).cloned().unwrap_or(Cur::Unknown)
    }

    fn switch_out(&mut self, e: &Event, pid: Pid, comm: &str, prio: i32, state: &str) {
        let (ts, cpu) = (e.ts, e.cpu);
        let start = self.tl.start;
        let cpu_last = self.cpu_switch.get(cpu).copied().flatten();
        self.task(pid, comm, ts).see_prio(ts, prio);
        // A task first seen running: the CPU it ran on counts for its next migration.
        self.last_cpu.entry(pid).or_insert(cpu);
        let run_start = match self.cur(pid) {
            Cur::Running { cpu: c, since } if c == cpu => since,
            Cur::Running { cpu: c, since } => {
                let guess = cpu_last.unwrap_or(start).max(since);
                self.anomaly_within(
                    e,
                    pid,
                    ts - guess,
                    format!("switched out on CPU {cpu} while running on CPU {c}: that run ends here"),
                );
                self.close_run(pid, c, since, ts);
                guess
            }
            Cur::Unknown if cpu_last.is_none() => {
                self.task(pid, comm, ts).running_at_start = true;
                start
            }
            other => {
                // A missed switch-in: it ran at most since the CPU's last switch or its own last change.
                let since = match other {
                    Cur::Runnable { since, .. } | Cur::Blocked { since, .. } => since,
                    Cur::Dead { at } => at,
                    _ => start,
                };
                let guess = cpu_last.unwrap_or(start).max(since);
                if let Some(back) = self.throttled_return(cpu, since, ts) {
                    self.idled_from[cpu] = None;
                    self.anomaly(
                        e,
                        pid,
                        format!(
                            "switched out of CPU {cpu} without a switch-in: runnable while its RT queue was throttled \
                             (CPU {cpu} idle from {since}), it is counted from the next RT period boundary, {back}"
                        ),
                    );
                    back
                } else {
                    // The switch-in lies between the CPU's last sign of another task and this task's
                    // first event there; without that window, anywhere in the run.
                    let (uncertain, window) = match self.lost_in.get(cpu).copied().flatten() {
                        Some((p, from, to)) if p == pid => {
                            let (from, to) = (from.max(since), to.max(since));
                            (
                                from.abs_diff(guess).max(to.abs_diff(guess)),
                                format!(" (it began between {from} and {to})"),
                            )
                        }
                        _ => (ts - guess, String::new()),
                    };
                    self.anomaly_within(
                        e,
                        pid,
                        uncertain,
                        format!("switched out of CPU {cpu} without a switch-in: run counted from {guess}{window}"),
                    );
                    let waited_here = matches!(other, Cur::Runnable { .. }) && self.last_cpu.get(&pid) == Some(&cpu);
                    if let (true, Some(a)) = (waited_here, self.tl.anomalies.last_mut()) {
                        a.waited_from = Some((since, guess));
                    }
                    guess
                }
            }
        };
        self.close_run(pid, cpu, run_start, ts);
        let t = self.tl.tasks.get_mut(&pid).expect("task");
        let next = if state.starts_with('R') {
            t.involuntary += 1;
            Cur::Runnable { since: ts, woken: None }
        } else if state.contains(['X', 'Z']) {
            t.voluntary += 1;
            t.exit.get_or_insert(ts);
            Cur::Dead { at: ts }
        } else {
            t.voluntary += 1;
            Cur::Blocked { since: ts, state: state.to_string() }
        };
        self.cur.insert(pid, next);
    }

    /// When a task whose switch-in was lost came back, if the trace says its RT queue was
    /// throttled: `cpu` went idle at `t0` leaving a task runnable, this one has been runnable
    /// since then or before (a runnable fair task would have run instead of idle: it is an RT
    /// task), and the RT period is known — the boundary after `t0` (or the CPU's last switch, if
    /// other tasks ran there after it), if before `ts`.
    fn throttled_return(&self, cpu: usize, since: u64, ts: u64) -> Option<u64> {
        let rt = self.rt_period?;
        let t0 = self.idled_from.get(cpu).copied().flatten().filter(|&t0| since <= t0)?;
        let last = self.cpu_switch.get(cpu).copied().flatten().unwrap_or(t0);
        Some(rt.boundary_after(t0).max(last)).filter(|&b| b <= ts)
    }

    fn close_run(&mut self, pid: Pid, cpu: usize, start: u64, end: u64) {
        let t = self.tl.tasks.get_mut(&pid).expect("task");
        t.runs.push(Run { cpu, start, end });
    }

    /// An event recorded on a CPU in the context of another task (the line's task column, or
    /// idle) than the one running there by the events so far: that task's switch-out was lost.
    /// Its run ends here and it is taken as blocked (in state `?`) until its next wake-up.
    /// `seen`: the CPU's last event in `q`'s context, after which the switch was lost.
    fn lost_switch_out(&mut self, e: &Event, seen: u64) {
        let Some(current) = e.task else { return };
        let Some(Some(q)) = self.cpu_task.get(e.cpu).copied() else { return };
        if q == current {
            return;
        }
        self.cpu_task[e.cpu] = None;
        if let Cur::Running { cpu, since } = self.cur(q) {
            if cpu == e.cpu {
                let seen = seen.max(since);
                self.anomaly_within(e, q, e.ts - seen, format!("CPU {cpu} switched from another task while it ran there: its switch-out was lost (after {seen}); run ends here, blocked until its next wake-up"));
                self.close_run(q, cpu, since, e.ts);
                if let Some(a) = self.tl.anomalies.last_mut() {
                    a.run_end_lost = true;
                }
                self.cur.insert(q, Cur::Blocked { since: e.ts, state: "?".into() });
                // A task whose switch-in was lost too is counted from here, not over q's run.
                if let Some(c) = self.cpu_switch.get_mut(cpu) {
                    *c = Some(e.ts);
                }
            }
        }
    }

    fn switch_in(&mut self, e: &Event, pid: Pid, comm: &str, prio: i32) {
        let (ts, cpu) = (e.ts, e.cpu);
        self.task(pid, comm, ts).see_prio(ts, prio);
        match self.cur(pid) {
            Cur::Runnable { since, woken } => {
                let t = self.tl.tasks.get_mut(&pid).expect("task");
                t.waiting.push(Span { start: since, end: ts });
                if let Some((woken, waking, new_task)) = woken {
                    t.wakes.push(WakeSample { woken, waking, ran: ts, cpu, new_task });
                }
            }
            Cur::Blocked { since, state } => {
                self.anomaly(e, pid, "switched in while blocked (its wake-up is missing): blocked until now");
                self.tl.tasks.get_mut(&pid).expect("task").blocked.push(BlockedSpan::new(since, ts, &state));
            }
            Cur::Running { cpu: c, since } => {
                self.anomaly(e, pid, format!("switched in on CPU {cpu} while running on CPU {c}: that run ends here"));
                self.close_run(pid, c, since, ts);
            }
            Cur::Dead { .. } => self.anomaly(e, pid, "switched in after it exited (pid reused?)"),
            Cur::Unknown => {}
        }
        let t = self.tl.tasks.get_mut(&pid).expect("task");
        t.switch_ins += 1;
        if self.last_cpu.insert(pid, cpu).is_some_and(|c| c != cpu) {
            t.migrations += 1;
        }
        self.cur.insert(pid, Cur::Running { cpu, since: ts });
    }

    fn wakeup(&mut self, e: &Event, pid: Pid, comm: &str, prio: i32, new_task: bool) {
        let ts = e.ts;
        let t = self.task(pid, comm, ts);
        t.see_prio(ts, prio);
        if new_task {
            t.arrival = Some(ts);
        }
        let waking = self.waking.remove(&pid);
        let woken_by = waking.and_then(|(at, by)| by.filter(|&b| b != pid).map(|pid| Waker { pid, at }));
        let waking = waking.map(|(at, _)| at);
        match self.cur(pid) {
            Cur::Blocked { since, state } => {
                let span = BlockedSpan { woken_by, ..BlockedSpan::new(since, ts, &state) };
                self.tl.tasks.get_mut(&pid).expect("task").blocked.push(span);
            }
            Cur::Unknown => {}
            Cur::Dead { .. } => {
                self.anomaly(e, pid, "woken after it exited (pid reused?)");
            }
            Cur::Running { .. } | Cur::Runnable { .. } => {
                self.tl.redundant_wakeups += 1;
                return;
            }
        }
        self.cur.insert(pid, Cur::Runnable { since: ts, woken: Some((ts, waking, new_task)) });
    }

    /// Follow whose context the CPU's events are in: an event of another task than the one
    /// the CPU runs by the events so far means a switch was lost.
    fn note_context(&mut self, e: &Event) {
        let Some(current) = e.task else { return };
        let Some(&running) = self.cpu_task.get(e.cpu) else { return };
        if running.unwrap_or(0) == current {
            self.cpu_seen[e.cpu] = Some(e.ts);
            return;
        }

        let seen = self.cpu_seen[e.cpu].unwrap_or(self.tl.start);
        if current != 0 && self.lost_in[e.cpu].is_none_or(|(p, ..)| p != current) {
            self.lost_in[e.cpu] = Some((current, seen, e.ts));
        }
        self.lost_switch_out(e, seen);
    }

    fn event(&mut self, e: &Event) {
        let ts = e.ts;
        self.note_context(e);
        match &e.kind {
            EventKind::Switch(s) => {
                if s.prev_pid != 0 {
                    self.switch_out(e, s.prev_pid, &s.prev_comm, s.prev_prio, &s.prev_state);
                }
                if let Some(c) = self.cpu_task.get_mut(e.cpu) {
                    *c = (s.next_pid != 0).then_some(s.next_pid);
                }
                if s.next_pid != 0 {
                    self.switch_in(e, s.next_pid, &s.next_comm, s.next_prio);
                }
                if let Some(c) = self.cpu_switch.get_mut(e.cpu) {
                    *c = Some(ts);
                    self.cpu_seen[e.cpu] = Some(ts);
                    self.lost_in[e.cpu] = None;
                    let throttled = s.next_pid == 0 && s.prev_pid != 0 && s.prev_state.starts_with('R');
                    if throttled {
                        self.idled_from[e.cpu] = Some(ts);
                    } else if s.next_pid != 0 {
                        // A task switched in where the trace shows it: the throttle is over.
                        self.idled_from[e.cpu] = None;
                    }
                }
            }
            EventKind::Wakeup(w) => self.wakeup(e, w.pid, &w.comm, w.prio, false),
            EventKind::WakeupNew(w) => self.wakeup(e, w.pid, &w.comm, w.prio, true),
            EventKind::Waking(w) => {
                self.task(w.pid, &w.comm, ts).see_prio(ts, w.prio);
                self.waking.insert(w.pid, (ts, e.task_context()));
            }
            EventKind::Fork { parent_comm, parent_pid, child_comm, child_pid } => {
                self.task(*parent_pid, parent_comm, ts);
                let c = self.task(*child_pid, child_comm, ts);
                c.parent = Some(*parent_pid);
                c.arrival.get_or_insert(ts);
            }
            EventKind::Exec { filename, pid, .. } => {
                // The kernel sets comm to the file's base name, at most 15 bytes.
                let base = filename.rsplit('/').next().unwrap_or(filename);
                let comm: String = base
                    .chars()
                    .scan(0, |n, c| {
                        *n += c.len_utf8();
                        (*n <= 15).then_some(c)
                    })
                    .collect();
                let t = self.task(*pid, &comm, ts);
                t.execs.push(ExecEvent { ts, filename: filename.clone() });
            }
            EventKind::Exit { comm, pid, prio } => {
                let t = self.task(*pid, comm, ts);
                t.see_prio(ts, *prio);
                t.exit = Some(ts);
            }
            EventKind::ClockRead { which_clock } => {
                if let Some(pid) = e.task.filter(|&p| p != 0 && OWN_CPU_CLOCKS.contains(which_clock)) {
                    if let Some(t) = self.tl.tasks.get_mut(&pid) {
                        t.cpu_clock_reads.push(ts);
                    }
                }
            }
            EventKind::Migrate { comm, pid, prio, orig_cpu, dest_cpu } => {
                let t = self.task(*pid, comm, ts);
                t.see_prio(ts, *prio);
                t.migrate_events.push(MigrateEvent { ts, from: *orig_cpu, to: *dest_cpu });
            }
        }
    }

    fn finish(mut self) -> Timeline {
        let end = self.tl.end;
        for (pid, cur) in std::mem::take(&mut self.cur) {
            let t = self.tl.tasks.get_mut(&pid).expect("task");
            t.end_state = match cur {
                Cur::Running { cpu, since } => {
                    t.runs.push(Run { cpu, start: since, end });
                    EndState::Running { cpu, since }
                }
                Cur::Runnable { since, .. } => {
                    t.waiting.push(Span { start: since, end });
                    EndState::Runnable { since }
                }
                Cur::Blocked { since, state } => EndState::Blocked { since, state },
                Cur::Dead { at } => EndState::Exited { at },
                Cur::Unknown => EndState::Unknown,
            };
        }
        for t in self.tl.tasks.values_mut() {
            if t.end_state == EndState::Unknown {
                if let Some(at) = t.exit {
                    t.end_state = EndState::Exited { at };
                }
            }
        }
        self.tl
    }
}

/// The coarsest of 1 µs, 100 ns and 10 ns that every event time is a multiple of (1 ns
/// otherwise; 0 with no events).
fn grid_of(events: &[Event]) -> u64 {
    if events.is_empty() {
        return 0;
    }
    [1000, 100, 10].into_iter().find(|g| events.iter().all(|e| e.ts % g == 0)).unwrap_or(1)
}

/// A timeline holding these tasks (keyed by pid), every other field at its default.
impl FromIterator<TaskTimeline> for Timeline {
    fn from_iter<I: IntoIterator<Item = TaskTimeline>>(tasks: I) -> Self {
        Timeline { tasks: tasks.into_iter().map(|t| (t.pid, t)).collect(), ..Timeline::default() }
    }
}

impl Timeline {
    /// Build timelines from events. They are replayed in time order (ties keep their order in
    /// `events`: each text format lists simultaneous events in the order they happened on a
    /// CPU). `cpus`: the CPU count if known (else the highest CPU seen + 1).
    pub fn from_events(events: &[Event], cpus: Option<usize>) -> Timeline {
        Timeline::from_events_with(events, cpus, None)
    }

    /// [`Timeline::from_events`], told the RT period of the host the trace comes from (a
    /// throttled task whose return the trace lost is counted from the boundary that ended its
    /// throttle).
    pub fn from_events_with(events: &[Event], cpus: Option<usize>, rt_period: Option<crate::RtPeriod>) -> Timeline {
        let mut order: Vec<&Event> = events.iter().collect();
        order.sort_by_key(|e| e.ts);
        let seen_cpus = events.iter().map(|e| e.cpu + 1).max().unwrap_or(0);
        let cpus = cpus.unwrap_or(0).max(seen_cpus);
        let mut b = Builder {
            tl: Timeline {
                start: order.first().map_or(0, |e| e.ts),
                end: order.last().map_or(0, |e| e.ts),
                cpus,
                resolution_ns: grid_of(events),
                ..Timeline::default()
            },
            cur: BTreeMap::new(),
            waking: BTreeMap::new(),
            last_cpu: BTreeMap::new(),
            cpu_switch: vec![None; cpus],
            cpu_task: vec![None; cpus],
            cpu_seen: vec![None; cpus],
            lost_in: vec![None; cpus],
            idled_from: vec![None; cpus],
            rt_period,
        };
        for e in order {
            b.event(e);
        }
        b.finish()
    }

    /// Parse `text` and build its timeline (the parse stats are returned too).
    pub fn from_text(text: &str, format: Option<crate::Format>) -> (Timeline, crate::ParseStats) {
        Timeline::from_text_with(text, format, None)
    }

    /// [`Timeline::from_text`] told the host's RT period (see [`Timeline::from_events_with`]).
    pub fn from_text_with(
        text: &str,
        format: Option<crate::Format>,
        rt_period: Option<crate::RtPeriod>,
    ) -> (Timeline, crate::ParseStats) {
        let p = crate::parse(text, format);
        (Timeline::from_events_with(&p.events, p.stats.cpus, rt_period), p.stats)
    }

    /// `pid` and every task it forked, directly or not (by the fork events seen).
    pub fn descendants(&self, root: Pid) -> Vec<Pid> {
        let mut out = vec![root];
        let mut i = 0;
        while i < out.len() {
            let p = out[i];
            out.extend(
                self.tasks
                    .values()
                    .filter(|t| t.parent == Some(p) && !out.contains(&t.pid))
                    .map(|t| t.pid)
                    .collect::<Vec<_>>(),
            );
            i += 1;
        }
        out.retain(|p| self.tasks.contains_key(p));
        out
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A tracefs `sched_switch` line at `1.<ts µs>` s (for the tests of this crate).
    pub(crate) fn sw(ts: u64, cpu: usize, prev: Pid, state: &str, next: Pid) -> String {
        format!(
            "p{prev}-{prev} [{cpu:03}] d..2. 1.{ts:06}: sched_switch: prev_comm=p{prev} prev_pid={prev} prev_prio=120 \
             prev_state={state} ==> next_comm=p{next} next_pid={next} next_prio=120"
        )
    }

    fn tl(lines: &[String]) -> Timeline {
        Timeline::from_text(&lines.join("\n"), Some(crate::Format::Tracefs)).0
    }

    #[test]
    fn the_queue_a_task_is_on_follows_its_runs_and_its_moves() {
        let mut t = TaskTimeline::new(5, "p5", 0);
        // Moved 1 → 0 at 5 before its first run (on 0, 10–20), moved 0 → 1 at 30 while it
        // waited, ran on 1 from 40.
        t.migrate_events = vec![MigrateEvent { ts: 5, from: 1, to: 0 }, MigrateEvent { ts: 30, from: 0, to: 1 }];
        t.runs = vec![Run { cpu: 0, start: 10, end: 20 }, Run { cpu: 1, start: 40, end: 50 }];
        let at: Vec<Option<usize>> = [0, 5, 9, 10, 25, 30, 35, 45, 60].iter().map(|&ts| t.queue_at(ts)).collect();
        assert_eq!(at, [1, 0, 0, 0, 0, 1, 1, 1, 1].map(Some));
        // No move: its first run's CPU throughout; nothing known: none.
        t.migrate_events.clear();
        assert_eq!((t.queue_at(0), t.queue_at(35)), (Some(0), Some(0)));
        t.runs.clear();
        assert_eq!(t.queue_at(0), None);
    }

    #[test]
    fn a_throttled_task_whose_return_was_lost_comes_back_at_the_rt_period_boundary() {
        // Task 5 runs on CPU 1, goes to idle still runnable at 1.000100 s (its RT queue
        // throttled), and is next seen switching out at 1.060 s: its switch back in, out of idle,
        // was not recorded. The RT period's boundaries fall at 0.05 s + k s.
        let lines = [sw(0, 1, 7, "S", 5), sw(100, 1, 5, "R", 0), sw(60_000, 1, 5, "R", 6)];
        let text = lines.join("\n");
        let rt = crate::RtPeriod { phase_ns: 50_000_000, period_ns: 1_000_000_000 };
        let (hinted, _) = Timeline::from_text_with(&text, Some(crate::Format::Tracefs), Some(rt));
        let runs: Vec<(u64, u64)> = hinted.tasks[&5].runs.iter().map(|r| (r.start, r.end)).collect();
        assert_eq!(runs, vec![(1_000_000_000, 1_000_100_000), (1_050_000_000, 1_060_000_000)]);
        // Without the period the idle time counts as running (the window's start).
        assert_eq!(tl(&lines).tasks[&5].runs[1].start, 1_000_100_000);
        // A kworker ran in the gap (its own switch in lost too) and went back to idle: task 5
        // still comes back at the boundary.
        let lines = [sw(0, 1, 7, "S", 5), sw(100, 1, 5, "R", 0), sw(20_000, 1, 8, "S", 0), sw(60_000, 1, 5, "R", 6)];
        let (t, _) = Timeline::from_text_with(&lines.join("\n"), Some(crate::Format::Tracefs), Some(rt));
        assert_eq!(t.tasks[&5].runs[1].start, 1_050_000_000);
        // The other RT task comes back first (task 5's slice had run out): it was runnable since
        // before the throttle, so it too returns at the boundary.
        let lines = [sw(0, 1, 7, "S", 5), sw(50, 1, 5, "R", 9), sw(90, 1, 9, "R", 0), sw(60_000, 1, 9, "R", 5)];
        let (t, _) = Timeline::from_text_with(&lines.join("\n"), Some(crate::Format::Tracefs), Some(rt));
        assert_eq!(t.tasks[&9].runs[1].start, 1_050_000_000);
        // Something else switched to it: its switch-in is in the trace, nothing to guess.
        let lines = [sw(0, 1, 7, "S", 5), sw(100, 1, 5, "R", 0), sw(20_000, 1, 8, "S", 5), sw(60_000, 1, 5, "R", 6)];
        let (t, _) = Timeline::from_text_with(&lines.join("\n"), Some(crate::Format::Tracefs), Some(rt));
        assert_eq!(t.tasks[&5].runs[1].start, 1_020_000_000);
    }

    #[test]
    fn contradictions_become_anomalies_and_are_repaired() {
        let t = tl(&[
            sw(0, 0, 0, "R", 5),
            // 5 blocks; its wake-up is missing; it is switched in again at 30.
            sw(10, 0, 5, "S", 0),
            sw(30, 0, 0, "R", 5),
            // 6 is woken at 40 but its switch-in is missing: switched out at 50, from CPU 1 where
            // 7 runs since 45 — whose switch-out is then missing too.
            "<idle>-0 [001] d..2. 1.000040: sched_wakeup: comm=p6 pid=6 prio=120 target_cpu=001".to_string(),
            sw(45, 1, 0, "R", 7),
            sw(50, 1, 6, "S", 0),
            sw(60, 0, 5, "R", 0),
        ]);
        let five = &t.tasks[&5];
        assert_eq!(five.blocked, vec![BlockedSpan::new(1_000_010_000, 1_000_030_000, "S")]);
        assert_eq!(five.cpu_time(), 40_000);
        // 7, switched in at 45, runs until the event at 50 recorded in 6's context; then it is
        // taken as blocked. 6's run is counted from the later of its wake-up (40) and that end.
        let seven = &t.tasks[&7];
        assert_eq!(seven.runs, vec![Run { cpu: 1, start: 1_000_045_000, end: 1_000_050_000 }]);
        assert_eq!(seven.end_state, EndState::Blocked { since: 1_000_050_000, state: "?".into() });
        let six = &t.tasks[&6];
        assert_eq!(six.runs, vec![Run { cpu: 1, start: 1_000_050_000, end: 1_000_050_000 }]);
        let what: Vec<(Pid, usize)> = t.anomalies.iter().map(|a| (a.pid, a.line)).collect();
        assert_eq!(what, vec![(5, 3), (7, 6), (6, 6)]);
        assert!(t.anomalies[0].what.contains("wake-up is missing"));
        assert!(t.anomalies[1].what.contains("switch-out was lost"));
        assert!(t.anomalies[2].what.contains("without a switch-in"));
        // The lost switch on CPU 1 lies between 7's switch-in (45) and 6's first event (50): both
        // repaired runs are known to ± 5 µs; the lost wake-up guessed no time.
        let uncertain: Vec<u64> = t.anomalies.iter().map(|a| a.uncertain_ns).collect();
        assert_eq!(uncertain, vec![0, 5_000, 5_000]);
    }

    #[test]
    fn a_run_whose_switch_in_was_lost_is_known_to_the_window_it_began_in() {
        let t = tl(&[
            sw(0, 1, 0, "R", 8),
            sw(10, 1, 8, "S", 0),
            // Woken from idle at 15; the switch from idle to 9 is lost; 9's first event is at 30.
            "<idle>-0 [001] d.h2. 1.000015: sched_wakeup: comm=p9 pid=9 prio=120 target_cpu=001".to_string(),
            "p9-9 [001] d..2. 1.000030: sched_waking: comm=p5 pid=5 prio=120 target_cpu=000".to_string(),
            sw(40, 1, 9, "S", 0),
        ]);
        assert_eq!(t.tasks[&9].runs, vec![Run { cpu: 1, start: 1_000_015_000, end: 1_000_040_000 }]);
        assert_eq!(t.anomalies.len(), 1);
        assert!(t.anomalies[0].what.contains("began between 1000015000 and 1000030000"), "{:?}", t.anomalies);
        assert_eq!(t.anomalies[0].uncertain_ns, 15_000);
    }

    #[test]
    fn wakeups_of_running_tasks_change_nothing_and_exec_renames() {
        let t = tl(&[
            sw(0, 0, 0, "R", 5),
            "<idle>-0 [001] d..2. 1.000005: sched_wakeup: comm=p5 pid=5 prio=120 target_cpu=000".to_string(),
            "p5-5 [000] ..... 1.000006: sched_process_exec: filename=/usr/bin/a-very-long-program-name pid=5 old_pid=5"
                .to_string(),
            sw(20, 0, 5, "R+", 0),
        ]);
        assert_eq!(t.redundant_wakeups, 1);
        let five = &t.tasks[&5];
        assert_eq!((five.involuntary, five.voluntary, five.wakes.len()), (1, 0, 0));
        assert_eq!(five.comms, vec!["p5".to_string(), "a-very-long-pro".to_string()]);
        assert_eq!(five.comm, "p5", "the switch-out names it p5 again");
        assert_eq!(five.class_at(0), Some(PrioClass::Fair { nice: 0 }));
        assert!(t.anomalies.is_empty());
    }
}
