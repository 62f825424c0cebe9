//! Where the tasks of a two-CPU case ran: each task's CPU over the compared window (the one it
//! spent most of its CPU time there on), live and in a model, and whether the model's layout is
//! the kernel's once the CPUs' numbers and the names of identical tasks are set aside. On two
//! CPUs the layout a repeat settles in decides most rates (a ping-pong pair gathered on one CPU,
//! or split across both), so each case's verdict says how often the layouts agreed.

use schedlab_trace::{Pid, TaskTimeline, Timeline};
use serde::Serialize;
use std::collections::BTreeMap;

/// The CPU below `cpus` that `t` ran on longest over `window` (ns), the lowest on a tie; None
/// when it did not run there.
pub fn cpu_ran_most(t: &TaskTimeline, cpus: usize, window: (u64, u64)) -> Option<usize> {
    let (start, end) = window;
    let mut per_cpu = vec![0u64; cpus];
    for r in t.runs.iter().filter(|r| r.cpu < cpus && r.end > start && r.start < end) {
        per_cpu[r.cpu] += r.end.min(end) - r.start.max(start);
    }
    let most = per_cpu.iter().enumerate().filter(|(_, &ns)| ns > 0).max_by_key(|(c, &ns)| (ns, usize::MAX - c));
    most.map(|(c, _)| c)
}

/// The case's tasks grouped by the CPU each mostly ran on, one group per CPU in CPU order, each
/// sorted by name. A task that did not run in the window is in no group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Layout(pub Vec<Vec<String>>);

impl Layout {
    /// The layout of the tasks `names` on `tl` (CPUs numbered 0..`cpus`) over `window` (ns).
    pub fn of(tl: &Timeline, names: &BTreeMap<Pid, String>, cpus: usize, window: (u64, u64)) -> Self {
        let mut groups = vec![Vec::new(); cpus];
        for (pid, name) in names {
            if let Some(c) = tl.tasks.get(pid).and_then(|t| cpu_ran_most(t, cpus, window)) {
                groups[c].push(name.clone());
            }
        }
        for g in &mut groups {
            g.sort();
        }
        Layout(groups)
    }

    /// Every task placed, in name order.
    pub fn tasks(&self) -> Vec<String> {
        let mut v: Vec<String> = self.0.iter().flatten().cloned().collect();
        v.sort();
        v
    }

    /// The CPU `task` ran on most (None: it did not run in the window).
    pub fn cpu_of(&self, task: &str) -> Option<usize> {
        self.0.iter().position(|g| g.iter().any(|t| t == task))
    }

    /// The same layout, whatever the CPUs are called and whichever of a group of identical tasks
    /// (`interchangeable`) is where.
    pub fn same_as(&self, other: &Layout, interchangeable: &[Vec<String>]) -> bool {
        self.canonical(interchangeable) == other.canonical(interchangeable)
    }

    fn canonical(&self, interchangeable: &[Vec<String>]) -> Vec<Vec<String>> {
        let alias =
            |n: &String| interchangeable.iter().find(|g| g.contains(n)).map_or_else(|| n.clone(), |g| g.join("|"));
        let mut groups: Vec<Vec<String>> = self
            .0
            .iter()
            .map(|g| {
                let mut v: Vec<String> = g.iter().map(alias).collect();
                v.sort();
                v
            })
            .collect();
        groups.sort();
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(groups: &[&[&str]]) -> Layout {
        Layout(groups.iter().map(|g| g.iter().map(|s| s.to_string()).collect()).collect())
    }

    #[test]
    fn layouts_agree_up_to_cpu_numbers_and_identical_tasks() {
        let hogs = vec![vec!["hog-a".to_string(), "hog-b".to_string()]];
        let gathered = layout(&[&["hog-a", "hog-b"], &["ping", "pong"]]);
        assert!(gathered.same_as(&layout(&[&["ping", "pong"], &["hog-a", "hog-b"]]), &hogs));
        let split = layout(&[&["hog-a", "ping"], &["hog-b", "pong"]]);
        assert!(!gathered.same_as(&split, &hogs));
        // The two hogs swapped: the same layout only because they are identical.
        let swapped = layout(&[&["hog-b", "ping"], &["hog-a", "pong"]]);
        assert!(split.same_as(&swapped, &hogs) && !split.same_as(&swapped, &[]));
        assert_eq!((split.cpu_of("pong"), split.cpu_of("idle")), (Some(1), None));
        assert_eq!(split.tasks(), ["hog-a", "hog-b", "ping", "pong"]);
    }

    #[test]
    fn a_task_goes_where_it_ran_most_in_the_window() {
        let text = "\
 a-1 [000] d..2. 1.000000: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=R ==> next_comm=b next_pid=2 next_prio=120
 b-2 [000] d..2. 1.003000: sched_switch: prev_comm=b prev_pid=2 prev_prio=120 prev_state=R ==> next_comm=a next_pid=1 next_prio=120
 a-1 [000] d..2. 1.004000: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
 b-2 [001] d..2. 1.005000: sched_switch: prev_comm=b prev_pid=2 prev_prio=120 prev_state=R ==> next_comm=swapper/1 next_pid=0 next_prio=120
";
        let (tl, _) = Timeline::from_text(text, None);
        let names: BTreeMap<Pid, String> = [(1, "a".to_string()), (2, "b".to_string())].into();
        // b ran 3 ms on CPU 0 and an unknown start to 1.005 on CPU 1 (not counted: no switch-in).
        let l = Layout::of(&tl, &names, 2, (1_000_000_000, 1_010_000_000));
        assert_eq!(l, Layout(vec![vec!["a".into(), "b".into()], vec![]]));
    }
}
