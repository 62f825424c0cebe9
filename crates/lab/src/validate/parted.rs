//! Where a replay and its live run parted: the first stretch of the compared window in which a
//! case task's switch-ins, live and replayed, differ beyond the goal's tolerance, and what else
//! the kernel ran on that task's CPU then.
//!
//! A switch rate judged over the whole window says only that the two timelines differ. A task
//! whose rate has steady states (pingpong-hog's hog: 125 or 250 switches a second) differs from
//! one moment on, and that moment is usually an event outside the case — the stopper thread or a
//! kernel worker pre-empting a task between ticks. A verdict short of met names the stretch and
//! the host's tasks that ran there, so the miss can be looked up in the saved traces.

use super::layout::cpu_ran_most;
use schedlab_trace::{Pid, Timeline};
use serde::Serialize;
use std::collections::BTreeSet;

/// The stretch switch-ins are counted over.
pub const STRETCH_NS: u64 = 250_000_000;
/// Counts closer than this many switch-ins are not told apart (one stretch of a task that
/// switches a few times a second differs by one or two by chance).
const MIN_DIFFERENCE: u64 = 4;
/// How many of the host's tasks a parting names.
const BESIDE: usize = 3;

/// The first stretch in which a task's switch-ins differ, live against replayed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Parted {
    pub task: String,
    /// Start of the stretch, since the compared window opened (ns).
    pub at_ns: u64,
    /// Switch-ins in the stretch, live and replayed.
    pub live: u64,
    pub model: u64,
    /// The CPU the task ran on most in the live stretch (the case's numbering; the host's once
    /// [`Parted::on_host`] has renumbered it).
    pub cpu: usize,
    /// Tasks not the case's that pre-empted one of its tasks on that CPU live, in the stretch or
    /// the one before it (out of the tick's rhythm, the kind of event after which a task with
    /// steady states changes state): each with its first time, since the window opened (ns), earliest
    /// first, and how many times it did.
    pub beside: Vec<(String, u64, usize)>,
}

impl Parted {
    /// With the CPU numbered as the host numbers it (`host_cpus[i]` is the case's CPU `i`).
    pub fn on_host(mut self, host_cpus: &[usize]) -> Self {
        self.cpu = host_cpus.get(self.cpu).copied().unwrap_or(self.cpu);
        self
    }

    /// One line for a verdict.
    pub fn describe(&self) -> String {
        let s = |ns: u64| format!("{:.2} s", ns as f64 / 1e9);
        let beside = if self.beside.is_empty() {
            "no task outside the case pre-empted one of its tasks there then".to_string()
        } else {
            let named: Vec<String> = self
                .beside
                .iter()
                .map(|(comm, at, n)| match n {
                    1 => format!("{comm} at {}", s(*at)),
                    n => format!("{comm} from {} ({n} times)", s(*at)),
                })
                .collect();
            format!("pre-empting the case's tasks on CPU {} then: {}", self.cpu, named.join(", "))
        };
        format!(
            "{}'s switch-ins part from {} of the window ({} live, {} replayed in {} ms; {beside})",
            self.task,
            s(self.at_ns),
            self.live,
            self.model,
            STRETCH_NS / 1_000_000
        )
    }
}

/// Switch-ins of `pid` per stretch of `window` on CPUs below `cpus`.
fn switch_ins(tl: &Timeline, pid: Pid, window: (u64, u64), cpus: usize) -> Vec<u64> {
    let n = window.1.saturating_sub(window.0).div_ceil(STRETCH_NS) as usize;
    let mut counts = vec![0; n];
    if let Some(t) = tl.tasks.get(&pid) {
        for r in t.runs.iter().filter(|r| r.cpu < cpus && r.start >= window.0 && r.start < window.1) {
            counts[((r.start - window.0) / STRETCH_NS) as usize] += 1;
        }
    }
    counts
}

/// The first parting over `tasks` (pid and the case's name), live against `model`, both on the
/// case's CPUs (`cpus`), over `window`; a count differs when it is off by more than `tolerance`
/// of the live count and by at least [`MIN_DIFFERENCE`]. `case` holds every pid of the case.
pub fn parted(
    live: &Timeline,
    model: &Timeline,
    tasks: &[(Pid, String)],
    case: &BTreeSet<Pid>,
    window: (u64, u64),
    cpus: usize,
    tolerance: f64,
) -> Option<Parted> {
    let first = tasks
        .iter()
        .filter_map(|(pid, name)| {
            let (a, b) = (switch_ins(live, *pid, window, cpus), switch_ins(model, *pid, window, cpus));
            // Above (1) or below (-1) live beyond the tolerance, else 0.
            let side = |i: usize| {
                let (l, m) = (a[i], b[i]);
                let off = l.abs_diff(m);
                let beyond = off >= MIN_DIFFERENCE && off as f64 > tolerance * l as f64;
                i32::from(beyond) * if m > l { 1 } else { -1 }
            };
            // A stretch that differs and the next one on the same side (a last stretch alone):
            // a one-stretch wobble is not a parting.
            let i = (0..a.len()).find(|&i| side(i) != 0 && (i + 1 == a.len() || side(i + 1) == side(i)))?;
            Some((i, *pid, name, a[i], b[i]))
        })
        .min_by_key(|&(i, pid, ..)| (i, pid))?;
    let (i, pid, name, l, m) = first;
    let from = window.0 + i as u64 * STRETCH_NS;
    let to = (from + STRETCH_NS).min(window.1);
    let cpu = live.tasks.get(&pid).and_then(|t| cpu_ran_most(t, cpus, (from, to))).unwrap_or(0);
    let look_from = from.saturating_sub(STRETCH_NS).max(window.0);
    // Instants at which a case task on that CPU was pre-empted (its run ended and it waited).
    let preempted: BTreeSet<u64> = case
        .iter()
        .filter_map(|p| live.tasks.get(p))
        .flat_map(|t| {
            let waits: BTreeSet<u64> = t.waiting.iter().map(|w| w.start).collect();
            t.runs.iter().filter(move |r| r.cpu == cpu && waits.contains(&r.end)).map(|r| r.end)
        })
        .filter(|&at| at >= look_from && at < to)
        .collect();
    let mut beside: Vec<(String, u64)> = live
        .tasks
        .values()
        .filter(|t| t.pid != 0 && !case.contains(&t.pid))
        .flat_map(|t| {
            let pre = &preempted;
            t.runs
                .iter()
                .filter(move |r| r.cpu == cpu && pre.contains(&r.start))
                .map(move |r| (t.comm.clone(), r.start - window.0))
        })
        .collect();
    beside.sort_by_key(|&(_, at)| at);
    // Each task once, at its first pre-emption, with how many it made.
    let mut named: Vec<(String, u64, usize)> = Vec::new();
    for (comm, at) in beside {
        match named.iter_mut().find(|n| n.0 == comm) {
            Some(n) => n.2 += 1,
            None => named.push((comm, at, 1)),
        }
    }
    named.truncate(BESIDE);
    Some(Parted { task: name.clone(), at_ns: from - window.0, live: l, model: m, cpu, beside: named })
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_trace::timeline::{Run, Span};
    use schedlab_trace::TaskTimeline;

    const MS: u64 = 1_000_000;

    fn task(pid: Pid, comm: &str, starts: &[u64], cpu: usize) -> TaskTimeline {
        let mut t = TaskTimeline::new(pid, comm, 0);
        t.runs = starts.iter().map(|&s| Run { cpu, start: s, end: s + MS / 2 }).collect();
        t
    }

    fn timeline(tasks: Vec<TaskTimeline>) -> Timeline {
        let mut tl = Timeline { start: 0, end: 1_000 * MS, cpus: 1, ..Timeline::default() };
        tl.tasks = tasks.into_iter().map(|t| (t.pid, t)).collect();
        tl
    }

    /// Every `every` ms from `from` to `to` ms.
    fn every(from: u64, to: u64, every: u64) -> Vec<u64> {
        (from..to).step_by(every as usize).map(|ms| ms * MS).collect()
    }

    #[test]
    fn the_first_stretch_whose_switch_ins_differ_is_named_with_the_host_task_that_pre_empted_the_case_before_it() {
        // A hog switching every 8 ms (31 or 32 a stretch) in both timelines until 500 ms; from
        // there every 4 ms live (62-63 a stretch), on after a stopper thread ran at 480 ms.
        let live_hog: Vec<u64> = every(0, 500, 8).into_iter().chain(every(500, 1_000, 4)).collect();
        let mut hog = task(10, "hog", &live_hog, 0);
        // The stopper pre-empts it at 480 ms: its run ends there and it waits.
        hog.runs.push(Run { cpu: 0, start: 478 * MS, end: 480 * MS });
        hog.runs.sort_by_key(|r| r.start);
        hog.waiting.push(Span { start: 480 * MS, end: 480 * MS + MS / 10 });
        let live = timeline(vec![
            hog,
            task(21, "migration/1", &[480 * MS], 0),
            // Earlier than the stretch before the parting.
            task(30, "kworker/1:0", &[100 * MS], 0),
            // In the stretch, but on a CPU the hog had left to it (nothing pre-empted).
            task(31, "memfd:sealed-91", &[600 * MS + MS / 2], 0),
        ]);
        let model = timeline(vec![task(10, "hog", &every(0, 1_000, 8), 0), task(21, "migration/1", &[480 * MS], 0)]);
        let case = BTreeSet::from([10]);
        let p = parted(&live, &model, &[(10, "hog".into())], &case, (0, 1_000 * MS), 1, 0.15).unwrap();
        // The stretch 500–750 ms: 63 live, 31 replayed; the stopper pre-empted the hog in the
        // stretch before it (250–500 ms); the worker ran earlier still and the other task
        // pre-empted nobody, so neither is named.
        assert_eq!((p.at_ns, p.live, p.model, p.cpu), (500 * MS, 63, 31, 0));
        assert_eq!(p.beside, vec![("migration/1".to_string(), 480 * MS, 1)]);
        assert!(p.describe().contains("hog's switch-ins part from 0.50 s"), "{}", p.describe());
        assert!(p.describe().contains("migration/1 at 0.48 s"), "{}", p.describe());
    }

    #[test]
    fn a_stretch_that_differs_alone_is_not_a_parting() {
        // 10 more switch-ins live in 250–500 ms only, then the same again.
        let wobble: Vec<u64> = every(0, 1_000, 8).into_iter().chain((0..10).map(|k| 300 * MS + k * MS)).collect();
        let live = timeline(vec![task(10, "hog", &wobble, 0)]);
        let model = timeline(vec![task(10, "hog", &every(0, 1_000, 8), 0)]);
        let tasks = [(10, "hog".to_string())];
        assert_eq!(parted(&live, &model, &tasks, &BTreeSet::from([10]), (0, 1_000 * MS), 1, 0.15), None);
    }

    #[test]
    fn counts_within_the_tolerance_or_a_few_switch_ins_apart_do_not_part() {
        // 31-32 against 29-30 a stretch: 6% apart, within 15%.
        let live = timeline(vec![task(10, "hog", &every(0, 1_000, 8), 0)]);
        let model = timeline(vec![task(10, "hog", &every(0, 1_000, 8).into_iter().step_by(16).collect::<Vec<_>>(), 0)]);
        let close = timeline(vec![task(10, "hog", &every(0, 1_000, 8)[2..], 0)]);
        let case = BTreeSet::from([10]);
        let tasks = [(10, "hog".to_string())];
        assert_eq!(parted(&live, &close, &tasks, &case, (0, 1_000 * MS), 1, 0.15), None);
        // A rare task: 2 against 0 is beyond 15% but within noise.
        let rare = timeline(vec![task(10, "hog", &[10 * MS, 20 * MS], 0)]);
        let none = timeline(vec![task(10, "hog", &[], 0)]);
        assert_eq!(parted(&rare, &none, &tasks, &case, (0, 1_000 * MS), 1, 0.15), None);
        // Far apart from the start: the first stretch.
        let p = parted(&live, &model, &tasks, &case, (0, 1_000 * MS), 1, 0.15).unwrap();
        assert_eq!((p.at_ns, p.live), (0, 32));
        assert!(p.describe().contains("no task outside the case pre-empted"), "{}", p.describe());
        assert_eq!(p.clone().on_host(&[1]).cpu, 1);
    }
}
