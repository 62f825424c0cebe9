//! The kernel's readings of a case's tasks as the rounds the `linux` replay takes its fair
//! tasks' places from ([`schedlab_sim::policies::linux::start_positions`]). A reading's
//! `se.vruntime` is in its run queue's frame, so a round is split by the queue the trace shows
//! each task on. Per queue, the tasks that waited at their reading (their `se.vruntime` is
//! current) and the one that ran: its reading is as of the kernel's last update of it, at
//! `se.exec_start` on the queue's task clock. A waiting task's last switch-out lines that clock
//! up with the trace's (`kernel_positions::clock_offset`); where no waiting task can, the last
//! update is taken to be the latest the trace shows of the points where the kernel updates a
//! running task — its switch-in, its reads of its own CPU clock, a wake-up queued on its CPU,
//! a tick.

use super::replay::Replay;
use schedlab_sim::policies::linux::start_positions::{RunningRead, StartRound};
use schedlab_trace::kernel_positions::{self, KernelPosition};
use schedlab_trace::{Pid, TaskTimeline, Timeline};
use std::collections::BTreeMap;

/// How far before its run's traced start a running task's last update may lie: the kernel
/// starts a task's clock a µs or so before the trace prints the switch.
const SWITCH_SLACK_NS: u64 = 2_000;

/// The rounds of `positions` before `until_ns` (trace time) that have two or more usable
/// readings on one queue, on workload time, by workload task.
pub fn start_rounds(replay: &Replay, live: &Timeline, positions: &[KernelPosition], until_ns: u64) -> Vec<StartRound> {
    let pids = replay.imported.report.pids();
    let ticks = replay.tick_phase.map(|p| (p.phase_ns, p.tick_ns));
    let mut rounds = Vec::new();
    for round in kernel_positions::rounds(positions) {
        let Some(at) = round.first().map(|r| r.at).filter(|&at| at >= replay.t0_ns) else { continue };
        let mut queues: BTreeMap<usize, Queue> = BTreeMap::new();
        for r in round.iter().filter(|r| r.at < until_ns) {
            let (Some(t), Some(task)) = (live.tasks.get(&r.pid), pids.iter().position(|&p| p == r.pid)) else {
                continue;
            };
            let Some(cpu) = t.queue_at(r.at) else { continue };
            let queue = queues.entry(cpu).or_default();
            if t.waiting.iter().any(|s| s.start <= r.at && r.at < s.end) {
                queue.waiting.push((task, r.vruntime));
                if queue.offset.is_none() {
                    queue.offset = last_switch_out(t, cpu, r.at).map(|left| kernel_positions::clock_offset(r, left));
                }
            } else if let Some(run) = t.run_at(r.at).filter(|run| run.cpu == cpu && r.at < run.end) {
                queue.running = Some((task, *r, run.start));
            }
        }
        for (cpu, q) in queues {
            let running = q.running.and_then(|(task, r, since)| {
                let updated = match q.offset {
                    Some(offset) => u64::try_from(r.exec_start - offset).ok()?,
                    None => last_update(live, pids[task], cpu, since, r.at, ticks),
                };
                let believable =
                    updated + SWITCH_SLACK_NS >= since && updated <= r.at + kernel_positions::ROUND_SLACK_NS;
                believable.then(|| RunningRead {
                    task,
                    vruntime: r.vruntime,
                    updated_at: updated.saturating_sub(replay.t0_ns),
                })
            });
            if q.waiting.len() + usize::from(running.is_some()) >= 2 {
                rounds.push(StartRound { at: at - replay.t0_ns, tasks: q.waiting, running });
            }
        }
    }
    rounds
}

/// One run queue's readings in a round.
#[derive(Default)]
struct Queue {
    waiting: Vec<(usize, i64)>,
    /// The task that ran, its reading, and when its run began (trace ns).
    running: Option<(usize, KernelPosition, u64)>,
    /// The queue's task clock less the trace's.
    offset: Option<i64>,
}

/// When a task waiting on `cpu` at `at` last left the CPU, if that was on `cpu` and it has not
/// moved since (a move clears `se.exec_start`).
fn last_switch_out(t: &TaskTimeline, cpu: usize, at: u64) -> Option<u64> {
    let last = t.runs[..t.runs.partition_point(|r| r.end <= at)].last().filter(|r| r.cpu == cpu)?;
    let moved = t.migrate_events.iter().any(|m| m.ts >= last.end && m.ts <= at);
    (!moved).then_some(last.end)
}

/// The latest point in `[since, at]` where the kernel updated the task `pid` running on `cpu`
/// as far as the trace shows: its switch-in, its reads of its own CPU clock, a wake-up queued on
/// `cpu`, a tick.
fn last_update(live: &Timeline, pid: Pid, cpu: usize, since: u64, at: u64, ticks: Option<(u64, u64)>) -> u64 {
    let within = |ts: u64| ts >= since && ts <= at;
    let own = live.tasks.get(&pid).into_iter().flat_map(|t| t.cpu_clock_reads.iter().copied());
    let wakes = live.tasks.values().flat_map(|t| {
        let from = t.wakes.partition_point(|w| w.woken < since);
        t.wakes[from..].iter().take_while(|w| w.woken <= at).filter(move |w| t.queue_at(w.woken) == Some(cpu))
    });
    let tick = ticks.and_then(|(phase, tick)| {
        let last = at.checked_sub(phase)? / tick * tick + phase;
        Some(last).filter(|&ts| within(ts))
    });
    own.filter(|&ts| within(ts)).chain(wakes.map(|w| w.woken)).chain(tick).fold(since, u64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::replay::tests::{replay_all_of, rr_trace};
    use schedlab_sim::workload::{TaskSpec, Workload};

    const MS: u64 = 1_000_000;

    /// Three hogs pinned to each of two CPUs taking 4 ms turns from 5 ms on the trace clock
    /// (under rr): at 7 ms one runs and two wait on each CPU; at 11 ms the second of each runs,
    /// the first having left at 9 ms.
    fn two_queues() -> (Timeline, Replay) {
        let mut tasks = Vec::new();
        for (name, cpu) in [("a", 0), ("b", 0), ("c", 0), ("d", 1), ("e", 1), ("f", 1)] {
            let mut t = TaskSpec::cpu(name, 0, 1_000 * MS);
            t.affinity = Some(vec![cpu]);
            tasks.push(t);
        }
        let tl = rr_trace(&Workload { cpus: Some(2), tasks }, 50 * MS, 2);
        let replay = replay_all_of(&tl, &[0, 1], 5 * MS, 55 * MS);
        (tl, replay)
    }

    /// A reading of every task at `at`, a µs apart, each task's `se.vruntime` and
    /// `se.exec_start` given by `read`.
    fn readings(tl: &Timeline, at: u64, read: impl Fn(&str) -> (i64, i64)) -> Vec<KernelPosition> {
        tl.tasks
            .values()
            .enumerate()
            .map(|(i, t)| {
                let (vruntime, exec_start) = read(&t.comm);
                KernelPosition { at: at + i as u64 * 1_000, pid: t.pid, vruntime, exec_start }
            })
            .collect()
    }

    fn names(tl: &Timeline, replay: &Replay, tasks: &[(usize, i64)]) -> Vec<String> {
        let pids = replay.imported.report.pids();
        tasks.iter().map(|&(t, _)| tl.tasks[&pids[t]].comm.clone()).collect()
    }

    #[test]
    fn a_round_is_split_by_run_queue_and_takes_each_queues_running_task() {
        let (tl, replay) = two_queues();
        let rounds = start_rounds(&replay, &tl, &readings(&tl, 7 * MS, |_| (0, 0)), 55 * MS);
        let waiting: Vec<Vec<String>> = rounds.iter().map(|r| names(&tl, &replay, &r.tasks)).collect();
        assert_eq!(waiting, vec![vec!["b", "c"], vec!["e", "f"]], "a and d run at 7 ms");
        assert!(rounds.iter().all(|r| r.at == 7 * MS - replay.t0_ns));
        // No task has left a CPU yet: the running ones' last update is their switch-in, at 5 ms.
        let pids = replay.imported.report.pids();
        let running: Vec<(String, u64)> = rounds
            .iter()
            .map(|r| r.running.expect("the running task is taken"))
            .map(|r| (tl.tasks[&pids[r.task]].comm.clone(), r.updated_at + replay.t0_ns))
            .collect();
        assert_eq!(running, vec![("a".to_string(), 5 * MS), ("d".to_string(), 5 * MS)]);
    }

    #[test]
    fn a_waiting_task_that_left_the_cpu_lines_the_running_tasks_update_up() {
        // At 11 ms b runs (since 9 ms) on CPU 0 and a waits, having left at 9 ms: the queue's task
        // clock runs 100 µs behind the trace's, and b's last update read 10.3 ms on the trace.
        let (tl, replay) = two_queues();
        let clock = |trace_ns: u64| trace_ns as i64 - 100_000;
        let read = |comm: &str| match comm {
            "a" => (0, clock(9 * MS)),
            "b" => (0, clock(10 * MS + 300_000)),
            _ => (0, 0),
        };
        let rounds = start_rounds(&replay, &tl, &readings(&tl, 11 * MS, read), 55 * MS);
        let cpu0 = rounds.iter().find(|r| names(&tl, &replay, &r.tasks).contains(&"a".to_string())).expect("CPU 0");
        let running = cpu0.running.expect("b is taken");
        assert_eq!(running.updated_at + replay.t0_ns, 10 * MS + 300_000);
    }
}
