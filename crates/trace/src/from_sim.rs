//! A simulator run as a [`Timeline`], so simulated and live runs meet in one type.
//!
//! From `SimResult::slices` (adjacent slices of the same burst on the same CPU make one run),
//! `SimResult::blocked` (`io` spans block in state `S`, `lock:…` spans in `D`) and the
//! workload (arrival; for periodic tasks the sleep from a job's end to the next release, which
//! the engine does not record as a span, is a blocked span in `S`). Wake-up latency = start of
//! the next run − end of a blocked span; a task's first run after its arrival is a
//! `new_task` sample. A run that ends neither in a block nor in the task's finish ended by
//! pre-emption or an expired slice: an involuntary switch.

use crate::event::Pid;
use crate::timeline::{BlockedSpan, EndState, Run, Span, TaskTimeline, Timeline, WakeSample};
use schedlab_sim::engine::SimResult;
use schedlab_sim::workload::{TaskSpec, Workload};
use std::collections::BTreeSet;

/// Pid of workload task `i` when none are given: `FIRST_SIM_PID + i`.
pub const FIRST_SIM_PID: Pid = 1000;

/// How simulated tasks and times map onto a trace's.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FromSimOptions {
    /// Added to every simulated time (e.g. the import's t0, to line up with the live trace).
    pub offset: u64,
    /// Pid of each workload task, in workload order (e.g. `ImportReport::pids()`).
    pub pids: Option<Vec<Pid>>,
}

/// The `prio` a trace would show for a task of this spec: −1 deadline, 99 − RT priority for
/// fifo/rr (the workload's `priority` is the Linux RT priority there, 1..=99), else 120 + nice.
pub fn trace_prio(spec: &TaskSpec) -> i32 {
    match spec.class.as_deref() {
        Some("deadline") => -1,
        Some("fifo") | Some("rr") => 99 - spec.priority.clamp(1, 99),
        _ => 120 + spec.nice.clamp(-20, 19),
    }
}

struct Piece {
    run: Run,
    job: u32,
    burst: u32,
}

/// Build the timeline of `result`, a run of `workload`.
pub fn timeline_from_sim(result: &SimResult, workload: &Workload, opts: &FromSimOptions) -> Timeline {
    let off = opts.offset;
    let n = workload.tasks.len();
    let pid_of = |i: usize| opts.pids.as_ref().and_then(|p| p.get(i).copied()).unwrap_or(FIRST_SIM_PID + i as Pid);
    let mut pieces: Vec<Vec<Piece>> = (0..n).map(|_| Vec::new()).collect();
    let mut sorted = result.slices.clone();
    sorted.sort_by_key(|s| (s.task, s.start));
    // A task that goes from one CPU burst into the next without blocking (its wait found the
    // wake-up pending) stays on the CPU: one run, as the kernel would trace it.
    let block_starts: BTreeSet<(usize, u64)> = result.blocked.iter().map(|b| (b.task, b.start)).collect();
    for s in &sorted {
        let v = &mut pieces[s.task];
        match v.last_mut() {
            Some(p)
                if p.run.cpu == s.cpu
                    && p.run.end == off + s.start
                    && p.job == s.job
                    && (p.burst == s.burst || !block_starts.contains(&(s.task, s.start))) =>
            {
                p.run.end = off + s.end;
                p.burst = s.burst;
            }
            _ => v.push(Piece {
                run: Run { cpu: s.cpu, start: off + s.start, end: off + s.end },
                job: s.job,
                burst: s.burst,
            }),
        }
    }
    let mut blocked: Vec<Vec<BlockedSpan>> = (0..n).map(|_| Vec::new()).collect();
    for b in &result.blocked {
        let state = if b.what.starts_with("lock") { "D" } else { "S" };
        blocked[b.task].push(BlockedSpan::new(off + b.start, off + b.end, state));
    }
    for (i, spec) in workload.tasks.iter().enumerate() {
        // Periodic tasks sleep from the end of job k−1 until job k's release.
        if let Some(period) = spec.period {
            let p = &pieces[i];
            for w in p.windows(2) {
                if w[1].job > w[0].job {
                    let release = off + spec.arrival + u64::from(w[1].job) * period;
                    if release > w[0].run.end {
                        blocked[i].push(BlockedSpan::new(w[0].run.end, release, "S"));
                    }
                }
            }
        }
        blocked[i].sort_by_key(|b| b.start);
    }
    let end = off
        + result
            .slices
            .iter()
            .map(|s| s.end)
            .chain(result.blocked.iter().map(|b| b.end))
            .chain(workload.tasks.iter().map(|t| t.arrival))
            .max()
            .unwrap_or(0);
    let mut tl = Timeline {
        start: off + workload.tasks.iter().map(|t| t.arrival).min().unwrap_or(0),
        end,
        cpus: result.cpus,
        ..Timeline::default()
    };
    for (i, spec) in workload.tasks.iter().enumerate() {
        let pid = pid_of(i);
        // A forked task arrived when the model's parent forked it, not at its recorded time.
        let arrival = off + result.tasks.get(i).map_or(spec.arrival, |r| r.arrival);
        let finish = result.tasks.get(i).and_then(|r| r.finish).map(|f| off + f);
        let mut t = TaskTimeline::new(pid, &spec.name, arrival);
        t.arrival = Some(arrival);
        t.prios.push((arrival, trace_prio(spec)));
        t.exit = finish;
        let runs: Vec<Run> = pieces[i].iter().map(|p| p.run).collect();
        let blocks = std::mem::take(&mut blocked[i]);
        // Runnable from arrival, each wake-up and each involuntary stop until the next run.
        let mut ready: Option<(u64, Option<bool>)> = Some((arrival, Some(true)));
        let mut bi = 0;
        for (k, r) in runs.iter().enumerate() {
            // Blocked spans that ended before this run started woke the task.
            while bi < blocks.len() && blocks[bi].end <= r.start {
                ready = Some((blocks[bi].end, Some(false)));
                bi += 1;
            }
            if let Some((since, woke)) = ready.take() {
                t.waiting.push(Span { start: since, end: r.start });
                if let Some(new_task) = woke {
                    t.wakes.push(WakeSample { woken: since, waking: None, ran: r.start, cpu: r.cpu, new_task });
                }
            }
            t.switch_ins += 1;
            if k > 0 && runs[k - 1].cpu != r.cpu {
                t.migrations += 1;
            }
            let last = k + 1 == runs.len();
            if blocks.get(bi).is_some_and(|b| b.start == r.end) || (last && finish == Some(r.end)) {
                t.voluntary += 1;
            } else if !(last && finish.is_none() && r.end == end) {
                t.involuntary += 1;
                ready = Some((r.end, None));
            }
        }
        t.end_state = match (finish, runs.last()) {
            (Some(at), _) => EndState::Exited { at },
            (None, Some(r)) if r.end == end => EndState::Running { cpu: r.cpu, since: r.start },
            (None, _) => match blocks.last().filter(|b| runs.last().is_none_or(|r| b.start >= r.end)) {
                Some(b) if b.end > end => EndState::Blocked { since: b.start, state: b.state.clone() },
                _ => EndState::Runnable { since: runs.last().map_or(arrival, |r| r.end) },
            },
        };
        if let (EndState::Runnable { since }, true) = (&t.end_state, finish.is_none()) {
            t.waiting.push(Span { start: *since, end });
        }
        t.runs = runs;
        t.blocked = blocks;
        tl.tasks.insert(pid, t);
    }
    tl
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_sim::engine::{simulate, SimConfig};
    use schedlab_sim::policies::by_spec;
    use schedlab_sim::policy::MS;

    fn task(name: &str, arrival: u64, bursts: &[u64]) -> TaskSpec {
        TaskSpec { bursts: bursts.iter().map(|b| b * MS).collect(), ..TaskSpec::cpu(name, arrival * MS, 1) }
    }

    #[test]
    fn one_cpu_round_robin_by_hand() {
        // rr quantum 2 ms on one CPU: A arrives at 0 with 3 ms CPU, 4 ms I/O, 1 ms CPU;
        // B arrives at 1 ms with 2 ms CPU.
        // 0–2 A, 2–4 B (B done), 4–5 A (blocks until 9), 9–10 A (done).
        let w = Workload { cpus: Some(1), tasks: vec![task("A", 0, &[3, 4, 1]), task("B", 1, &[2])] };
        let r = simulate(&w, &mut *by_spec("rr:quantum=2ms").unwrap(), &SimConfig::default());
        let tl = timeline_from_sim(&r, &w, &FromSimOptions { offset: 100, pids: Some(vec![7, 8]) });
        let ms = |x: u64| 100 + x * MS;
        let a = &tl.tasks[&7];
        assert_eq!(
            a.runs,
            vec![
                Run { cpu: 0, start: ms(0), end: ms(2) },
                Run { cpu: 0, start: ms(4), end: ms(5) },
                Run { cpu: 0, start: ms(9), end: ms(10) }
            ]
        );
        assert_eq!(a.blocked, vec![BlockedSpan::new(ms(5), ms(9), "S")]);
        assert_eq!((a.switch_ins, a.voluntary, a.involuntary), (3, 2, 1));
        assert_eq!(
            a.waiting,
            vec![
                Span { start: ms(0), end: ms(0) },
                Span { start: ms(2), end: ms(4) },
                Span { start: ms(9), end: ms(9) }
            ]
        );
        let lat: Vec<(u64, bool)> = a.wakes.iter().map(|w| (w.latency(), w.new_task)).collect();
        assert_eq!(lat, vec![(0, true), (0, false)]);
        assert_eq!(a.end_state, EndState::Exited { at: ms(10) });
        let b = &tl.tasks[&8];
        assert_eq!(b.wakes[0].latency(), MS);
        assert_eq!((b.comm.as_str(), b.prios.clone()), ("B", vec![(ms(1), 120)]));
        assert_eq!((tl.start, tl.end, tl.cpus), (ms(0), ms(10), 1));
    }

    #[test]
    fn periodic_sleep_between_jobs_is_blocked_time() {
        let mut t = task("P", 0, &[1]);
        (t.period, t.jobs) = (Some(5 * MS), 3);
        let w = Workload { cpus: Some(1), tasks: vec![t] };
        let r = simulate(&w, &mut *by_spec("fcfs").unwrap(), &SimConfig::default());
        let tl = timeline_from_sim(&r, &w, &FromSimOptions::default());
        let p = &tl.tasks[&FIRST_SIM_PID];
        let spans: Vec<(u64, u64)> = p.blocked.iter().map(|b| (b.start / MS, b.end / MS)).collect();
        assert_eq!(spans, vec![(1, 5), (6, 10)]);
        assert_eq!(p.wakes.iter().filter(|w| !w.new_task).count(), 2);
        assert_eq!(p.cpu_time(), 3 * MS);
    }
}
