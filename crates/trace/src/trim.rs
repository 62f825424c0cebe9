//! Runs whose end the trace lost, trimmed to the CPU time the kernel counted. A task whose
//! switch-out is missing is taken as running until the CPU's next event in another task's
//! context ([`crate::timeline`]), which can be milliseconds later when a CPU hog takes over and
//! records nothing until the next tick. On this VM that happens to host tasks that run for
//! microseconds (the agent's threads: 24 ms of runs in a 5 s trace where the kernel counted
//! under 3 ms), and a replay that gives them those runs gives them that CPU and that load.
//!
//! Given each task's CPU time over a window as the kernel counted it (`/proc/<tid>/schedstat`
//! read at both ends), the runs of a task that the trace makes longer are shortened — only
//! those whose end was lost, each within its uncertainty window, in proportion to it — until
//! the task's CPU time in the window is the kernel's, or the windows are used up.

use crate::timeline::Timeline;
use crate::Pid;
use std::collections::BTreeMap;

/// What [`Timeline::trim_lost_ends`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Trimmed {
    pub tasks: usize,
    pub runs: usize,
    /// CPU time taken off the runs (ns).
    pub ns: u64,
    /// Of that, the time given to the tasks that waited runnable for the trimmed ones and ran
    /// after them (ns).
    pub given_back_ns: u64,
}

impl Timeline {
    /// Shorten the lost-end runs of each task in `cpu_ns` (its CPU time over `window`, trace
    /// clock) so that its runs in the window add up to no more than that.
    pub fn trim_lost_ends(&mut self, cpu_ns: &BTreeMap<Pid, u64>, window: (u64, u64)) -> Trimmed {
        let mut done = Trimmed::default();
        let mut lost: BTreeMap<Pid, Vec<(u64, u64)>> = BTreeMap::new();
        for a in self.anomalies.iter().filter(|a| a.run_end_lost && a.uncertain_ns > 0) {
            lost.entry(a.pid).or_default().push((a.ts, a.uncertain_ns));
        }
        let mut freed: Vec<(usize, u64, u64)> = Vec::new();
        for (pid, ends) in lost {
            let (Some(&kernel), Some(t)) = (cpu_ns.get(&pid), self.tasks.get_mut(&pid)) else { continue };
            let clip = |s: u64, e: u64| e.min(window.1).saturating_sub(s.max(window.0));
            let traced: u64 = t.runs.iter().map(|r| clip(r.start, r.end)).sum();
            let excess = traced.saturating_sub(kernel);
            // The repaired runs inside the window, and how much of each may go.
            let mut cut: Vec<(usize, u64)> = Vec::new();
            for (i, r) in t.runs.iter().enumerate() {
                if let Some(&(_, w)) = ends.iter().find(|(ts, _)| *ts == r.end) {
                    let room = w.min(clip(r.start, r.end));
                    if room > 0 {
                        cut.push((i, room));
                    }
                }
            }
            let room: u64 = cut.iter().map(|c| c.1).sum();
            if excess == 0 || room == 0 {
                continue;
            }
            let take = excess.min(room);
            let mut taken = 0;
            for (k, &(i, r)) in cut.iter().enumerate() {
                // The last run takes the rounding.
                let by =
                    if k + 1 == cut.len() { take - taken } else { (take as u128 * r as u128 / room as u128) as u64 };
                let by = by.min(r);
                let run = &mut t.runs[i];
                if by > 0 {
                    freed.push((run.cpu, run.end, run.end - by));
                }
                run.end -= by;
                taken += by;
                done.runs += usize::from(by > 0);
            }
            done.tasks += 1;
            done.ns += taken;
        }
        done.given_back_ns = self.give_back(&freed);
        done
    }

    /// Start each run that began where a trimmed run had ended (`freed`: CPU, the old end, the
    /// new one) from the new end, when its task waited runnable on that CPU until then: the
    /// trace shows the task only at its first event, but it ran from the moment the other task
    /// left (a runnable task is not left waiting on an idle CPU). The time given back.
    fn give_back(&mut self, freed: &[(usize, u64, u64)]) -> u64 {
        let waited: Vec<(Pid, u64, u64)> =
            self.anomalies.iter().filter_map(|a| a.waited_from.map(|(from, start)| (a.pid, from, start))).collect();
        let mut given = 0;
        for &(cpu, old_end, new_end) in freed {
            for &(pid, from, start) in waited.iter().filter(|w| w.2 == old_end) {
                let Some(t) = self.tasks.get_mut(&pid) else { continue };
                if let Some(r) = t.runs.iter_mut().find(|r| r.cpu == cpu && r.start == start) {
                    let to = new_end.max(from);
                    given += r.start - to.min(r.start);
                    r.start = to.min(r.start);
                }
            }
        }
        given
    }
}

#[cfg(test)]
mod tests {
    use crate::timeline::tests::sw;
    use crate::timeline::Timeline;
    use std::collections::BTreeMap;

    #[test]
    fn lost_ends_shrink_to_the_kernels_cpu_time_within_their_windows() {
        // 7 is switched in at 0 and 35; both switch-outs are lost, the next events in another
        // task's (5's) context come at 30 and 100: runs 0–30 and 35–100, 95 µs in the trace.
        let lines = [
            sw(0, 0, 5, "S", 7),
            "p5-5 [000] d..2. 1.000030: sched_waking: comm=p9 pid=9 prio=120 target_cpu=000".to_string(),
            sw(35, 0, 5, "S", 7),
            "p7-7 [000] d..2. 1.000040: sched_waking: comm=p9 pid=9 prio=120 target_cpu=000".to_string(),
            "p5-5 [000] d..2. 1.000100: sched_waking: comm=p9 pid=9 prio=120 target_cpu=000".to_string(),
        ];
        let text = lines.join("\n");
        let (mut t, _) = Timeline::from_text_with(&text, Some(crate::Format::Tracefs), None);
        let ends: Vec<(u64, u64)> = t.tasks[&7].runs.iter().map(|r| (r.start, r.end)).collect();
        assert_eq!(ends, vec![(1_000_000_000, 1_000_030_000), (1_000_035_000, 1_000_100_000)]);
        // Windows: the first run's end lies after its switch-in (0), the second's after its last
        // event in its own context (40): 30 µs and 60 µs of room. The kernel counted 20 µs of CPU
        // for 7: 75 µs go, 25 from the first run and 50 from the second.
        let mut cpu = BTreeMap::new();
        cpu.insert(7, 20_000);
        let done = t.trim_lost_ends(&cpu, (1_000_000_000, 1_000_200_000));
        assert_eq!((done.tasks, done.runs, done.ns), (1, 2, 75_000));
        let ends: Vec<(u64, u64)> = t.tasks[&7].runs.iter().map(|r| (r.start, r.end)).collect();
        assert_eq!(ends, vec![(1_000_000_000, 1_000_005_000), (1_000_035_000, 1_000_050_000)]);
        // A task the kernel counted more for, or one not measured, is left alone.
        let (mut u, _) = Timeline::from_text_with(&text, Some(crate::Format::Tracefs), None);
        cpu.insert(7, 1_000_000);
        assert_eq!(u.trim_lost_ends(&cpu, (0, u64::MAX)).ns, 0);
        assert_eq!(u.trim_lost_ends(&BTreeMap::new(), (0, u64::MAX)).ns, 0);
    }

    #[test]
    fn a_trimmed_run_gives_its_time_to_the_task_that_waited_runnable_for_it() {
        // A hog (5) is pre-empted by a daemon (7) at 0 and left runnable; the daemon's switch-out
        // and the hog's switch-in are lost, and the hog's next event comes at 40: the trace gives
        // the daemon 0–40 and the hog 40–100. The kernel counted 10 µs for the daemon: it ran
        // 0–10, and the hog, runnable, from then.
        let lines = |hog_left: &str| {
            [
                sw(0, 0, 5, hog_left, 7),
                "p5-5 [000] d..2. 1.000040: sched_waking: comm=p9 pid=9 prio=120 target_cpu=000".to_string(),
                sw(100, 0, 5, "R", 8),
            ]
            .join("\n")
        };
        let mut cpu = BTreeMap::new();
        cpu.insert(7, 10_000);
        let window = (1_000_000_000, 1_000_200_000);
        let runs = |t: &Timeline, pid| -> Vec<(u64, u64)> {
            t.tasks[&pid].runs.iter().map(|r| (r.start - 1_000_000_000, r.end - 1_000_000_000)).collect()
        };
        let (mut t, _) = Timeline::from_text_with(&lines("R"), Some(crate::Format::Tracefs), None);
        assert_eq!(runs(&t, 5).last(), Some(&(40_000, 100_000)));
        let done = t.trim_lost_ends(&cpu, window);
        assert_eq!((done.ns, done.given_back_ns), (30_000, 30_000));
        assert_eq!(runs(&t, 7), vec![(0, 10_000)]);
        assert_eq!(runs(&t, 5).last(), Some(&(10_000, 100_000)));
        // A task that had blocked may have woken at any time in between: nothing is given to it.
        let (mut t, _) = Timeline::from_text_with(&lines("S"), Some(crate::Format::Tracefs), None);
        let done = t.trim_lost_ends(&cpu, window);
        assert_eq!((done.ns, done.given_back_ns), (30_000, 0));
        assert_eq!(runs(&t, 5).last(), Some(&(40_000, 100_000)));
    }
}
