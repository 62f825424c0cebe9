//! A [`Timeline`] (or a simulator run) written as tracefs `trace` text: sched_wakeup_new at
//! each arrival, sched_switch at each run's start and end, sched_wakeup at each blocked span's
//! end, sched_process_exit at each exit. What [`crate::parse`] reads back, for round-trip
//! tests and for tests of recorders and importers.
//!
//! Times are printed as the kernel prints them, in µs truncated from ns (`SECS.USECS`), or
//! with all nine digits when [`RenderOptions::ns`] is set. Events at one instant are ordered
//! so the parser rebuilds the same states: exits, then switch-outs to idle, then wake-ups,
//! then switch-ins (a switch-out and a switch-in on one CPU at one instant are one
//! `A ==> B` line when no other event of A or B at that instant must come between them).
//! A task already running at the timeline's start gets no switch-in line; a parser then
//! counts it from the text's first event, as it would for a real trace.

use crate::event::Pid;
use crate::from_sim::{timeline_from_sim, FromSimOptions};
use crate::timeline::{EndState, TaskTimeline, Timeline};
use schedlab_sim::engine::SimResult;
use schedlab_sim::workload::Workload;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// How to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderOptions {
    /// Nanosecond timestamps (nine digits) instead of the kernel's microseconds.
    pub ns: bool,
    /// Start with the `# tracer: nop` header block.
    pub header: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions { ns: false, header: true }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Rec {
    Exit {
        pid: Pid,
    },
    /// `prev` ==> `next` (0 = idle).
    Switch {
        prev: Pid,
        state: String,
        next: Pid,
    },
    Wake {
        pid: Pid,
        target: usize,
        new: bool,
    },
}

/// The state a run ending at `end` switches out in (None: still running at the end).
fn out_state(t: &TaskTimeline, k: usize) -> Option<String> {
    let r = &t.runs[k];
    if let Some(b) = t.blocked.iter().find(|b| b.start == r.end) {
        return Some(b.state.clone());
    }
    if t.exit == Some(r.end) && k + 1 == t.runs.len() {
        return Some("Z".into());
    }
    if k + 1 == t.runs.len() && matches!(t.end_state, EndState::Running { .. }) {
        return None;
    }
    Some("R".into())
}

/// Render `tl` as tracefs text.
pub fn render(tl: &Timeline, opts: &RenderOptions) -> String {
    // (ts, phase, cpu, seq) → record; phases: 0 exit, 1 switch-out, 2 wake-up, 3 switch-in.
    let mut outs: BTreeMap<(u64, usize), Vec<(Pid, String)>> = BTreeMap::new();
    let mut ins: BTreeMap<(u64, usize), Vec<Pid>> = BTreeMap::new();
    let mut recs: Vec<(u64, u8, usize, Rec)> = Vec::new();
    // Per instant: who wakes, who switches in and who switches out (on any CPU).
    let mut woken: BTreeSet<(u64, Pid)> = BTreeSet::new();
    let mut in_at: BTreeMap<(u64, Pid), usize> = BTreeMap::new();
    let mut out_at: BTreeMap<(u64, Pid), usize> = BTreeMap::new();
    for t in tl.tasks.values() {
        let first = t.runs.first();
        if let (Some(a), false) = (t.arrival, t.running_at_start) {
            if first.is_none_or(|r| r.start >= a) {
                recs.push((
                    a,
                    2,
                    first.map_or(0, |r| r.cpu),
                    Rec::Wake { pid: t.pid, target: first.map_or(0, |r| r.cpu), new: true },
                ));
                woken.insert((a, t.pid));
            }
        }
        for b in &t.blocked {
            let target = t.runs.iter().find(|r| r.start >= b.end).map_or(0, |r| r.cpu);
            recs.push((b.end, 2, target, Rec::Wake { pid: t.pid, target, new: false }));
            woken.insert((b.end, t.pid));
        }
        for (k, r) in t.runs.iter().enumerate() {
            if !(k == 0 && t.running_at_start) {
                ins.entry((r.start, r.cpu)).or_default().push(t.pid);
                in_at.insert((r.start, t.pid), r.cpu);
            }
            if let Some(state) = out_state(t, k) {
                outs.entry((r.end, r.cpu)).or_default().push((t.pid, state));
                out_at.insert((r.end, t.pid), r.cpu);
            }
        }
        if let Some(at) = t.exit {
            let cpu = t.runs.iter().rev().find(|r| r.end == at).map_or(0, |r| r.cpu);
            recs.push((at, 0, cpu, Rec::Exit { pid: t.pid }));
        }
    }
    for ((ts, cpu), mut list) in outs {
        let mut incoming = ins.remove(&(ts, cpu)).unwrap_or_default();
        while let Some((prev, state)) = list.pop() {
            // Merge with an incoming task when nothing of either must happen in between.
            let can = |next: Pid| {
                !woken.contains(&(ts, prev))
                    && !in_at.contains_key(&(ts, prev))
                    && out_at.get(&(ts, next)).is_none_or(|&c| c == cpu)
            };
            match incoming.iter().position(|&n| can(n)) {
                Some(i) => {
                    let next = incoming.remove(i);
                    recs.push((ts, 3, cpu, Rec::Switch { prev, state, next }));
                }
                None => recs.push((ts, 1, cpu, Rec::Switch { prev, state, next: 0 })),
            }
        }
        if !incoming.is_empty() {
            ins.insert((ts, cpu), incoming);
        }
    }
    for ((ts, cpu), list) in ins {
        for next in list {
            recs.push((ts, 3, cpu, Rec::Switch { prev: 0, state: "R".into(), next }));
        }
    }
    recs.sort();
    let mut out = String::new();
    if opts.header {
        header(&mut out, recs.len(), tl.cpus);
    }
    let mut current: Vec<Pid> = vec![0; tl.cpus.max(1 + recs.iter().map(|r| r.2).max().unwrap_or(0))];
    let task = |p: Pid| tl.tasks.get(&p);
    let comm = |p: Pid, cpu: usize| -> String {
        match task(p) {
            Some(t) => t.comm.clone(),
            None => format!("swapper/{cpu}"),
        }
    };
    for (ts, _, cpu, rec) in recs {
        let ctx = current[cpu];
        let head_comm = if ctx == 0 { "<idle>".to_string() } else { comm(ctx, cpu) };
        let time = if opts.ns {
            format!("{}.{:09}", ts / 1_000_000_000, ts % 1_000_000_000)
        } else {
            format!("{}.{:06}", ts / 1_000_000_000, ts % 1_000_000_000 / 1000)
        };
        let flags = if matches!(rec, Rec::Exit { .. }) { "....." } else { "d..2." };
        let _ = write!(out, "{head_comm:>16}-{ctx:<7} [{cpu:03}] {flags} {time:>16}: ");
        let prio = |p: Pid| task(p).and_then(|t| t.prio_at(ts)).unwrap_or(120);
        match rec {
            Rec::Exit { pid } => {
                let _ = writeln!(
                    out,
                    "sched_process_exit: comm={} pid={pid} prio={} group_dead=true",
                    comm(pid, cpu),
                    prio(pid)
                );
            }
            Rec::Wake { pid, target, new } => {
                let name = if new { "sched_wakeup_new" } else { "sched_wakeup" };
                let _ = writeln!(
                    out,
                    "{name}: comm={} pid={pid} prio={} target_cpu={target:03}",
                    comm(pid, cpu),
                    prio(pid)
                );
            }
            Rec::Switch { prev, state, next } => {
                let _ = writeln!(
                    out,
                    "sched_switch: prev_comm={} prev_pid={prev} prev_prio={} prev_state={state} ==> next_comm={} next_pid={next} next_prio={}",
                    comm(prev, cpu),
                    prio(prev),
                    comm(next, cpu),
                    prio(next)
                );
                current[cpu] = next;
            }
        }
    }
    out
}

fn header(out: &mut String, n: usize, cpus: usize) {
    let _ = write!(
        out,
        "# tracer: nop\n#\n# entries-in-buffer/entries-written: {n}/{n}   #P:{cpus}\n#\n\
         #           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n\
         #              | |         |   |||||     |         |\n"
    );
}

/// Render a simulator run (see [`timeline_from_sim`] for the mapping).
pub fn render_sim(result: &SimResult, workload: &Workload, sim: &FromSimOptions, opts: &RenderOptions) -> String {
    render(&timeline_from_sim(result, workload, sim), opts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::Run;

    #[test]
    fn a_preemption_at_one_instant_is_one_switch_line() {
        let mut tl = Timeline { start: 0, end: 3000, cpus: 1, ..Timeline::default() };
        let mut a = TaskTimeline::new(1, "a", 0);
        a.arrival = Some(0);
        a.runs = vec![Run { cpu: 0, start: 0, end: 1000 }, Run { cpu: 0, start: 2000, end: 3000 }];
        a.exit = Some(3000);
        let mut b = TaskTimeline::new(2, "b b", 500);
        b.arrival = Some(500);
        b.runs = vec![Run { cpu: 0, start: 1000, end: 2000 }];
        b.exit = Some(2000);
        tl.tasks.insert(1, a);
        tl.tasks.insert(2, b);
        let text = render(&tl, &RenderOptions { ns: true, header: false });
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 8, "{text}");
        assert!(lines[0].ends_with("0.000000000: sched_wakeup_new: comm=a pid=1 prio=120 target_cpu=000"), "{text}");
        assert!(
            lines[1].contains("prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=1")
        );
        assert!(lines[3].contains("0.000001000: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=R ==> next_comm=b b next_pid=2"), "{text}");
        assert!(lines[4].contains("sched_process_exit: comm=b b pid=2"));
        assert!(lines[5].contains("prev_state=Z ==> next_comm=a next_pid=1"), "{text}");
        assert!(lines[6].contains("0.000003000: sched_process_exit: comm=a pid=1 prio=120"), "{text}");
        assert!(
            lines[7].starts_with("               a-1       [000] d..2.")
                && lines[7].contains("prev_state=Z ==> next_comm=swapper/0"),
            "{text}"
        );
    }
}
