//! A trace's timeline as a simulator workload: for each selected task its arrival (relative
//! to t0), its CPU bursts (run time summed between blocks) and blocked times in order, its
//! class / nice / RT priority from the `prio` the trace shows or from the metadata sidecar,
//! and its affinity from the sidecar. Whatever could not be reconstructed is written in the
//! [`ImportReport`], never dropped silently.
//!
//! The burst structure is [`bursts`]'s; wake-ups between imported tasks are [`wakes`]'s, and
//! the replies a trace cannot show (a read that found data) are inferred by [`replies`]. A
//! task's import starts at its arrival (sched_wakeup_new / fork), at its last exec with
//! [`ImportOptions::start_at_exec`], or — when it was already there when the trace started —
//! at the first time the trace shows it.

mod bursts;
mod replies;
mod wakes;

use crate::event::{Pid, PrioClass};
use crate::meta::{SchedPolicy, TraceMeta};
use crate::tick_phase::{tick_phase, TickPhase};
use crate::timeline::{EndState, TaskTimeline, Timeline};
use bursts::{bursts_of, Bursts};
use schedlab_sim::workload::{BurstPoint, RareFields, TaskSpec, Workload};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Which tasks to import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Select {
    /// Every task that ran.
    All,
    Pids(BTreeSet<Pid>),
    /// A pid and every task it forked, directly or not (by the trace's fork events).
    Tree(Pid),
    /// Tasks that ever had this comm.
    Comm(String),
}

/// How to import.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportOptions {
    pub select: Select,
    /// Trace time that becomes workload time 0 (default: the earliest start of the selected tasks).
    pub t0: Option<u64>,
    /// CPU count of the workload (default: the metadata's, else the trace's).
    pub cpus: Option<usize>,
    /// Start each task at its last exec in the trace (drops what its launcher did before).
    pub start_at_exec: bool,
    pub meta: Option<TraceMeta>,
    /// A blocked interval that another imported task ended from task context waits for that
    /// task's wake-up in the workload (see [`wakes`]) instead of lasting its length. On by
    /// default.
    pub wake_edges: bool,
    /// Start no task's import before this trace time: what a task did before is dropped, and
    /// one blocked then starts at its wake-up.
    pub not_before: Option<u64>,
    /// The kernel's tick period (ns): put workload time 0 on the trace's tick at or before t0
    /// ([`crate::tick_phase`]), so a replay with this tick has its ticks where the kernel's were.
    /// Left at t0 when the trace shows no tick.
    pub align_tick: Option<u64>,
    /// Tasks held where and when they ran: each CPU burst on the CPU it began on in the trace
    /// (the workload's `burst_cpus`), each blocked interval ending when the trace shows its
    /// wake-up (`block_ends`) rather than lasting its length from wherever the model ended the
    /// burst before it — for tasks a replay carries as background rather than predicts.
    pub held: BTreeSet<Pid>,
    /// A forked task starts on the CPU the trace first shows it running on (`start_cpu`), as a
    /// task already there does, rather than where the policy places a fork: for a replay that
    /// predicts from each task's first CPU on. Off by default.
    pub fork_cpus: bool,
}

impl ImportOptions {
    pub fn new(select: Select) -> Self {
        ImportOptions {
            select,
            t0: None,
            cpus: None,
            start_at_exec: false,
            meta: None,
            wake_edges: true,
            not_before: None,
            align_tick: None,
            held: BTreeSet::new(),
            fork_cpus: false,
        }
    }
}

/// What kind of thing a note reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoteKind {
    /// Already there when the trace started: its arrival is the first time the trace shows it.
    PresentAtStart,
    /// Blocked when the trace ended: that last block has no end and is not in the workload.
    BlockedAtEnd,
    /// Running when the trace ended: its last CPU burst is cut at the end.
    RunningAtEnd,
    /// Waiting for a CPU when the trace ended.
    RunnableAtEnd,
    /// Woken but not run again before the end: the last blocked time is dropped.
    NoRunAfterLastBlock,
    /// The part before its exec was dropped (`start_at_exec`).
    BeforeExecDropped,
    /// Blocked before it first ran in the window: its start moved to that wake-up.
    BlockedAtStart,
    /// Two blocked spans without a run between (missing events): merged.
    MergedBlocks,
    /// A blocked interval in `D` (uninterruptible): a wait inside the kernel — disk, a lock,
    /// reclaim, exit — rather than a sleep the program asked for. Kept as a block, one note each.
    KernelWait,
    /// Blocked intervals that end when another imported task wakes it.
    WokenByTask,
    /// Runs that ended pre-empted by the task it had just woken, which replied before it ran
    /// again: each resumes only after that reply (see `replies`).
    ReplyInferred,
    /// Forked by an imported task: it arrives when its parent's replay reaches the fork.
    Forked,
    /// A CPU burst of 0 ns (a run shorter than the text's resolution): set to 1 ns.
    ZeroBurst,
    /// Trace events that contradict each other for this task (see the timeline's anomalies).
    Anomaly,
    /// Policy guessed from `prio` (no metadata for it).
    PolicyGuessed,
    /// `prio` changed in the window (priority inheritance, renice, sched_setattr).
    PrioChanged,
    /// The metadata's policy and the trace's `prio` disagree.
    PolicyMismatch,
    /// A `prio` outside every known range.
    UnknownPolicy,
    /// SCHED_DEADLINE parameters missing or not representable in a TaskSpec.
    Deadline,
    /// A custom slice the workload cannot carry yet (kept in the report).
    Slice,
    /// CPU affinity not recorded, or naming CPUs the workload does not have.
    Affinity,
    /// The workload starts after the task (t0 later than its start): arrival clamped to 0.
    BeforeT0,
    /// Not imported (why in the detail).
    Skipped,
}

/// One thing the import could not reconstruct, or guessed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    /// None: about the whole import.
    pub pid: Option<Pid>,
    pub kind: NoteKind,
    pub detail: String,
}

/// One imported task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportedTask {
    pub pid: Pid,
    pub name: String,
    /// Trace time its import starts at.
    pub start: u64,
    /// CPU time imported (= Σ CPU bursts).
    pub cpu_ns: u64,
    /// How far `cpu_ns` may be off: the sum of the windows of the lost events its runs were
    /// repaired over (0 when the trace had every switch).
    #[serde(default)]
    pub cpu_uncertain_ns: u64,
    /// SCHED_DEADLINE runtime from the metadata (the workload's `runtime`).
    pub dl_runtime_ns: Option<u64>,
    /// A custom slice from the metadata (EEVDF; the workload's `runtime` for a fair task).
    pub slice_ns: Option<u64>,
}

/// What the import did, task by task, and what it could not do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImportReport {
    pub t0: u64,
    /// The tick t0 was put on ([`ImportOptions::align_tick`]), when the trace shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick_phase: Option<TickPhase>,
    /// In workload order.
    pub tasks: Vec<ImportedTask>,
    pub notes: Vec<Note>,
}

impl ImportReport {
    /// Pid of each workload task, in workload order (for [`crate::from_sim::FromSimOptions::pids`]).
    pub fn pids(&self) -> Vec<Pid> {
        self.tasks.iter().map(|t| t.pid).collect()
    }

    /// Notes about `pid`.
    pub fn notes_for(&self, pid: Pid) -> impl Iterator<Item = &Note> {
        self.notes.iter().filter(move |n| n.pid == Some(pid))
    }
}

/// The workload and its report.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub workload: Workload,
    pub report: ImportReport,
}

fn note(notes: &mut Vec<Note>, pid: Pid, kind: NoteKind, detail: impl Into<String>) {
    notes.push(Note { pid: Some(pid), kind, detail: detail.into() });
}

/// The selected pids, in pid order.
fn selected(tl: &Timeline, select: &Select) -> Vec<Pid> {
    match select {
        Select::All => tl.tasks.keys().copied().collect(),
        Select::Pids(p) => p.iter().copied().filter(|p| tl.tasks.contains_key(p)).collect(),
        Select::Tree(root) => {
            let mut v = tl.descendants(*root);
            v.sort_unstable();
            v
        }
        Select::Comm(c) => tl.tasks.values().filter(|t| t.comms.iter().any(|x| x == c)).map(|t| t.pid).collect(),
    }
}

/// Where a task's import starts, and a note on why there.
fn start_of(t: &TaskTimeline, at_exec: bool, notes: &mut Vec<Note>) -> u64 {
    if at_exec {
        if let Some(e) = t.execs.last() {
            let before: u64 = t.runs.iter().map(|r| r.end.min(e.ts).saturating_sub(r.start)).sum();
            note(
                notes,
                t.pid,
                NoteKind::BeforeExecDropped,
                format!("{before} ns of CPU before its exec of {} at {} dropped", e.filename, e.ts),
            );
            return e.ts;
        }
    }
    match t.arrival {
        Some(a) if !t.running_at_start => a,
        _ => {
            // A task running at the start shows first in its (clipped) first run.
            let first = match t.runs.first() {
                Some(r) if t.running_at_start => r.start.min(t.first_seen),
                _ => t.first_seen,
            };
            note(notes, t.pid, NoteKind::PresentAtStart, format!("no fork or wakeup_new in the trace: it starts at {first}, the first time the trace shows it; what it did before is unknown"));
            first
        }
    }
}

/// Where a deadline task already there at `start` was enqueued, when its import starts at the
/// `sched_waking` of a wake-up: at that wake-up's `sched_wakeup`. The CBS starts its period at
/// the enqueue (`replenish_dl_new_period()`: deadline = now + D), which for a task woken from
/// another CPU comes only when the inter-processor interrupt arrives (40 µs after the waking in a
/// deadline-beside-hogs run), and every later period follows from there: the period's place
/// against the tick decides how far each job overruns its runtime to the next tick.
fn enqueued_at(t: &TaskTimeline, start: u64, notes: &mut Vec<Note>) -> u64 {
    match t.wakes.iter().find(|w| w.woken >= start) {
        Some(w) if w.waking == Some(start) && w.woken > start => {
            note(
                notes,
                t.pid,
                NoteKind::Deadline,
                format!("arrives at its enqueue, {} (sched_wakeup), where its first period began, not at {start} (sched_waking)", w.woken),
            );
            w.woken
        }
        _ => start,
    }
}

/// Class, nice, priority, deadline/period and DL runtime of a task.
struct Sched {
    class: Option<String>,
    nice: i32,
    priority: i32,
    deadline: Option<u64>,
    period: Option<u64>,
    dl_runtime: Option<u64>,
    slice: Option<u64>,
}

fn sched_of(t: &TaskTimeline, start: u64, meta: Option<&TraceMeta>, notes: &mut Vec<Note>) -> Sched {
    let prio = t.prio_at(start);
    let later: BTreeSet<i32> = t.prios.iter().filter(|&&(at, _)| at >= start).map(|&(_, p)| p).collect();
    if later.len() > 1 {
        note(
            notes,
            t.pid,
            NoteKind::PrioChanged,
            format!("prio changed in the window ({later:?}): the one at its start ({prio:?}) is used"),
        );
    }
    let seen = t.class_at(start);
    let mut s =
        Sched { class: None, nice: 0, priority: 0, deadline: None, period: None, dl_runtime: None, slice: None };
    let m = meta.and_then(|m| m.task(t.pid));
    match m {
        Some(m) => {
            s.class = m.policy.workload_class().map(str::to_string);
            let agrees = matches!(
                (m.policy, seen),
                (_, None)
                    | (SchedPolicy::Normal | SchedPolicy::Batch | SchedPolicy::Idle, Some(PrioClass::Fair { .. }))
                    | (SchedPolicy::Fifo | SchedPolicy::Rr, Some(PrioClass::RealTime { .. }))
                    | (SchedPolicy::Deadline, Some(PrioClass::Deadline))
            );
            if !agrees {
                note(
                    notes,
                    t.pid,
                    NoteKind::PolicyMismatch,
                    format!("metadata says {:?} but the trace shows prio {prio:?}: the metadata is used", m.policy),
                );
            }
            s.nice = m
                .nice
                .or(match seen {
                    Some(PrioClass::Fair { nice }) => Some(nice),
                    _ => None,
                })
                .unwrap_or(0);
            // In the simulator's `linux` model a fifo/rr task's `priority` is its Linux RT
            // priority (a higher number wins), as sched_setattr takes it.
            s.priority = match (m.rt_priority, seen) {
                (Some(rt), _) => rt.clamp(1, 99) as i32,
                (None, Some(PrioClass::RealTime { rt_priority })) => rt_priority as i32,
                _ => 0,
            };
            if let Some(slice) = m.slice_ns {
                s.slice = Some(slice);
                note(notes, t.pid, NoteKind::Slice, format!("custom slice {slice} ns (the task's runtime)"));
            }
            if m.policy == SchedPolicy::Deadline {
                s.deadline = m.dl_deadline_ns;
                s.period = m.dl_period_ns;
                s.dl_runtime = m.dl_runtime_ns;
                note(
                    notes,
                    t.pid,
                    NoteKind::Deadline,
                    format!(
                        "SCHED_DEADLINE runtime {:?}, deadline {:?}, period {:?} ns from the metadata",
                        m.dl_runtime_ns, m.dl_deadline_ns, m.dl_period_ns
                    ),
                );
            }
        }
        None => {
            if meta.is_some() {
                note(notes, t.pid, NoteKind::PolicyGuessed, "not in the metadata: policy guessed from prio");
            }
            match seen {
                Some(PrioClass::Fair { nice }) => s.nice = nice,
                Some(PrioClass::RealTime { rt_priority: 99 }) if is_stopper(&t.comm) => {
                    s.class = Some("stop".into());
                    s.priority = 99;
                    note(
                        notes,
                        t.pid,
                        NoteKind::PolicyGuessed,
                        "the kernel's stopper thread (shown as real-time priority 99): stop class",
                    );
                }
                Some(PrioClass::RealTime { rt_priority }) => {
                    s.class = Some("fifo".into());
                    s.priority = rt_priority as i32;
                    note(
                        notes,
                        t.pid,
                        NoteKind::PolicyGuessed,
                        format!(
                            "real-time priority {rt_priority}: SCHED_FIFO or SCHED_RR, the trace cannot tell; \
                             fifo assumed"
                        ),
                    );
                }
                Some(PrioClass::Deadline) => {
                    s.class = Some("deadline".into());
                    note(
                        notes,
                        t.pid,
                        NoteKind::Deadline,
                        "SCHED_DEADLINE: runtime, deadline and period are not in a trace (no metadata)",
                    );
                }
                Some(PrioClass::Unknown { prio }) => {
                    note(
                        notes,
                        t.pid,
                        NoteKind::UnknownPolicy,
                        format!("prio {prio} is in no known range: fair class, nice 0 assumed"),
                    );
                }
                None => note(notes, t.pid, NoteKind::UnknownPolicy, "no prio seen: fair class, nice 0 assumed"),
            }
        }
    }
    s
}

/// The kernel's per-CPU stopper thread (`migration/N`): the stop class, which the trace shows as
/// real-time priority 99 (`sched_set_stop_task()` gives it SCHED_FIFO 99 for that).
fn is_stopper(comm: &str) -> bool {
    comm.strip_prefix("migration/").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Import the selected tasks of `tl` as a workload.
pub fn import(tl: &Timeline, opts: &ImportOptions) -> Imported {
    let mut notes: Vec<Note> = Vec::new();
    let meta = opts.meta.as_ref();
    let cpus = opts.cpus.or(meta.and_then(|m| m.cpus)).unwrap_or(tl.cpus).max(1);
    if meta.is_none() {
        notes.push(Note {
            pid: None,
            kind: NoteKind::PolicyGuessed,
            detail: "no metadata: policies come from prio (normal, batch and idle look alike; so do fifo and rr) and affinity is unknown (any CPU)".into(),
        });
    }
    struct Pending {
        pid: Pid,
        start: u64,
        bursts: Bursts,
        sched: Sched,
        affinity: Option<Vec<usize>>,
        comm: String,
        /// Where it first runs, for a task already there at its import start (not forked then).
        start_cpu: Option<usize>,
        /// Its parent, when its import starts at its fork.
        parent: Option<Pid>,
    }
    let mut pending: Vec<Pending> = Vec::new();
    let pids = selected(tl, &opts.select);
    let replies =
        if opts.wake_edges { replies::inferred(tl, &pids.iter().copied().collect()) } else { BTreeMap::new() };
    for pid in pids {
        let t = &tl.tasks[&pid];
        let mut start = start_of(t, opts.start_at_exec, &mut notes);
        if let Some(nb) = opts.not_before.filter(|&nb| nb > start) {
            note(
                &mut notes,
                pid,
                NoteKind::BeforeT0,
                format!("its import starts at {nb}: what it did before is dropped"),
            );
            start = nb;
        }
        let inferred = replies.get(&pid).map_or(&[][..], Vec::as_slice);
        let Some(bursts) = bursts_of(t, inferred, &mut start, &mut notes) else {
            note(&mut notes, pid, NoteKind::Skipped, "no CPU time in the trace from its start on");
            continue;
        };
        let counted = inferred.iter().filter(|(at, _)| *at > start).count();
        if counted > 0 {
            note(
                &mut notes,
                pid,
                NoteKind::ReplyInferred,
                format!(
                    "{counted} of its runs ended pre-empted by the task it had just woken, which blocked again \
                     before it resumed and was woken by it later: each resumes only after that task's reply \
                     (a read that found data: the trace shows no block)"
                ),
            );
        }
        for b in t.blocked.iter().filter(|b| b.start >= start && b.state.starts_with('D')) {
            note(
                &mut notes,
                pid,
                NoteKind::KernelWait,
                format!(
                    "blocked {} ns in {} from {}: a wait inside the kernel, not a sleep it asked for",
                    b.end - b.start,
                    b.state,
                    b.start
                ),
            );
        }
        for a in tl.anomalies.iter().filter(|a| a.pid == pid) {
            note(&mut notes, pid, NoteKind::Anomaly, format!("line {}: {}", a.line, a.what));
        }
        match &t.end_state {
            EndState::Blocked { since, state } => note(
                &mut notes,
                pid,
                NoteKind::BlockedAtEnd,
                format!(
                    "blocked ({state}) since {since} when the trace ended: that block and anything after are unknown"
                ),
            ),
            EndState::Running { since, .. } => note(
                &mut notes,
                pid,
                NoteKind::RunningAtEnd,
                format!("running since {since} when the trace ended: its last CPU burst is cut there"),
            ),
            EndState::Runnable { since } => note(
                &mut notes,
                pid,
                NoteKind::RunnableAtEnd,
                format!("waiting for a CPU since {since} when the trace ended: its remaining work is unknown"),
            ),
            EndState::Exited { .. } | EndState::Unknown => {}
        }
        let sched = sched_of(t, start, meta, &mut notes);
        if sched.class.as_deref() == Some("deadline") {
            start = enqueued_at(t, start, &mut notes);
        }
        let affinity = match meta.and_then(|m| m.task(pid)).and_then(|m| m.affinity.clone()) {
            Some(a) => {
                let (ok, bad): (Vec<usize>, Vec<usize>) = a.into_iter().partition(|&c| c < cpus);
                if !bad.is_empty() {
                    note(
                        &mut notes,
                        pid,
                        NoteKind::Affinity,
                        format!("affinity names CPUs {bad:?} beyond the workload's {cpus}: left out"),
                    );
                }
                if ok.is_empty() {
                    None
                } else {
                    Some(ok)
                }
            }
            None => {
                if meta.is_some() {
                    note(&mut notes, pid, NoteKind::Affinity, "affinity not recorded: any CPU");
                }
                None
            }
        };
        let forked = t.arrival == Some(start) && !t.running_at_start;
        let start_cpu = if forked && !opts.fork_cpus {
            None
        } else {
            t.runs.iter().find(|r| r.end > start).map(|r| r.cpu).filter(|&c| c < cpus)
        };
        let parent = t.parent.filter(|_| forked);
        pending.push(Pending { pid, start, bursts, sched, affinity, comm: t.comm.clone(), start_cpu, parent });
    }
    pending.sort_by_key(|p| (p.start, p.pid));
    let t0 = opts.t0.or(pending.first().map(|p| p.start)).unwrap_or(tl.start);
    let tick_phase = opts.align_tick.and_then(|tick| tick_phase(tl, tick));
    let t0 = tick_phase.map_or(t0, |p| p.tick_at_or_before(t0));
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for p in &pending {
        *count.entry(p.comm.as_str()).or_default() += 1;
    }
    let mut tasks = Vec::with_capacity(pending.len());
    let mut report_tasks = Vec::with_capacity(pending.len());
    let edges = if opts.wake_edges {
        let plans: Vec<(Pid, &Bursts)> = pending.iter().map(|p| (p.pid, &p.bursts)).collect();
        let mut edges = wakes::edges(&plans, &mut notes);
        let forks: Vec<Option<wakes::Fork>> =
            pending.iter().map(|p| p.parent.map(|parent| wakes::Fork { parent, at: p.start })).collect();
        wakes::add_forks(&mut edges, &plans, &forks, &mut notes);
        Some(edges)
    } else {
        None
    };
    for (i, p) in pending.iter().enumerate() {
        let name = if count[p.comm.as_str()] > 1 { format!("{}-{}", p.comm, p.pid) } else { p.comm.clone() };
        if p.start < t0 {
            note(&mut notes, p.pid, NoteKind::BeforeT0, format!("starts at {} before t0 {t0}: arrival 0", p.start));
        }
        let cpu_ns = p.bursts.lengths.iter().step_by(2).sum();
        let held = opts.held.contains(&p.pid);
        let burst_cpus = match p.bursts.cpus.iter().find(|&&c| c >= cpus) {
            None if held => p.bursts.cpus.clone(),
            Some(c) if held => {
                note(
                    &mut notes,
                    p.pid,
                    NoteKind::Affinity,
                    format!("held where it ran, but it ran on CPU {c}, beyond the workload's {cpus}: not held"),
                );
                Vec::new()
            }
            _ => Vec::new(),
        };
        // A held task starts where its first burst is held.
        let start_cpu = p.start_cpu.map(|c| burst_cpus.first().copied().unwrap_or(c));
        let block_ends = if held { p.bursts.ends.iter().map(|&e| e.saturating_sub(t0)).collect() } else { Vec::new() };
        tasks.push(
            TaskSpec {
                name: name.as_str().into(),
                arrival: p.start.saturating_sub(t0),
                bursts: p.bursts.lengths.as_slice().into(),
                priority: p.sched.priority,
                weight: 1,
                nice: p.sched.nice,
                jobs: 1,
                ..TaskSpec::default()
            }
            .with(RareFields {
                deadline: p.sched.deadline,
                period: p.sched.period,
                affinity: p.affinity.clone(),
                class: p.sched.class.clone(),
                locks: Vec::new(),
                runtime: p.sched.dl_runtime.or(p.sched.slice),
                wakes: edges.as_ref().map(|e| e.wakes[i].clone()).unwrap_or_default(),
                until_woken: edges.as_ref().map(|e| e.until_woken[i].clone()).unwrap_or_default(),
                runtime_reads: p.bursts.reads.iter().map(|&(burst, at)| BurstPoint { burst, at }).collect(),
                start_cpu,
                burst_cpus,
                block_ends,
                forked_by: edges.as_ref().and_then(|e| e.forked_by[i]),
                job_phases: Vec::new(),
            }),
        );
        report_tasks.push(ImportedTask {
            pid: p.pid,
            name,
            start: p.start,
            cpu_ns,
            cpu_uncertain_ns: tl
                .anomalies
                .iter()
                .filter(|a| a.pid == p.pid && a.ts >= p.start)
                .map(|a| a.uncertain_ns)
                .sum(),
            dl_runtime_ns: p.sched.dl_runtime,
            slice_ns: p.sched.slice,
        });
    }
    notes.sort_by_key(|n| (n.pid, n.kind));
    Imported {
        workload: Workload { cpus: Some(cpus), tasks },
        report: ImportReport { t0, tick_phase, tasks: report_tasks, notes },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::Run;

    /// One task per prio, each running 1 µs from its arrival and exiting.
    fn timeline(prios: &[i32]) -> Timeline {
        let mut tl = Timeline { start: 0, end: 10_000, cpus: 1, ..Timeline::default() };
        for (i, &p) in prios.iter().enumerate() {
            let pid = 10 + i as Pid;
            let mut t = TaskTimeline::new(pid, "t", 0);
            t.arrival = Some(i as u64 * 1000);
            t.prios.push((0, p));
            t.runs.push(Run { cpu: 0, start: i as u64 * 1000, end: i as u64 * 1000 + 1000 });
            t.exit = Some(i as u64 * 1000 + 1000);
            t.end_state = EndState::Exited { at: i as u64 * 1000 + 1000 };
            tl.tasks.insert(pid, t);
        }
        tl
    }

    #[test]
    fn classes_from_prio_without_metadata() {
        let imp = import(&timeline(&[-1, 9, 125, 99]), &ImportOptions::new(Select::All));
        let w = &imp.workload;
        // Same comm for all: names get the pid.
        let names: Vec<&str> = w.tasks.iter().map(|t| &*t.name).collect();
        assert_eq!(names, vec!["t-10", "t-11", "t-12", "t-13"]);
        assert_eq!((w.tasks[0].class.as_deref(), w.tasks[0].deadline), (Some("deadline"), None));
        // prio 9 = RT priority 90.
        assert_eq!((w.tasks[1].class.as_deref(), w.tasks[1].priority), (Some("fifo"), 90));
        assert_eq!((w.tasks[2].class.as_deref(), w.tasks[2].nice), (None, 5));
        assert_eq!((w.tasks[3].class.as_deref(), w.tasks[3].nice), (None, 0));
        let kinds = |pid| imp.report.notes_for(pid).map(|n| n.kind).collect::<Vec<_>>();
        assert_eq!(kinds(10), vec![NoteKind::Deadline]);
        assert_eq!(kinds(11), vec![NoteKind::PolicyGuessed]);
        assert!(kinds(12).is_empty());
        assert_eq!(kinds(13), vec![NoteKind::UnknownPolicy]);
        assert_eq!(w.tasks.iter().map(|t| t.arrival).collect::<Vec<_>>(), vec![0, 1000, 2000, 3000]);
    }

    #[test]
    fn tasks_without_cpu_time_are_skipped_with_a_note() {
        let mut tl = timeline(&[120]);
        let mut idle = TaskTimeline::new(99, "sleeper", 0);
        idle.end_state = EndState::Blocked { since: 0, state: "S".into() };
        tl.tasks.insert(99, idle);
        let imp = import(&tl, &ImportOptions::new(Select::Comm("sleeper".into())));
        assert!(imp.workload.tasks.is_empty());
        assert!(imp.report.notes_for(99).any(|n| n.kind == NoteKind::Skipped));
    }

    #[test]
    fn a_block_in_d_is_kept_and_noted_as_a_kernel_wait() {
        let mut tl = timeline(&[120]);
        let t = tl.tasks.get_mut(&10).unwrap();
        t.runs = vec![
            Run { cpu: 0, start: 0, end: 100 },
            Run { cpu: 0, start: 150, end: 300 },
            Run { cpu: 0, start: 400, end: 500 },
        ];
        t.blocked =
            vec![crate::timeline::BlockedSpan::new(100, 150, "S"), crate::timeline::BlockedSpan::new(300, 400, "D")];
        t.exit = Some(500);
        t.end_state = EndState::Exited { at: 500 };
        let imp = import(&tl, &ImportOptions::new(Select::All));
        assert_eq!(imp.workload.tasks[0].bursts.to_vec(), vec![100, 50, 150, 100, 100]);
        let waits: Vec<&Note> = imp.report.notes_for(10).filter(|n| n.kind == NoteKind::KernelWait).collect();
        assert_eq!(waits.len(), 1, "{waits:?}");
        assert!(waits[0].detail.contains("100 ns in D from 300"), "{}", waits[0].detail);
    }
}
