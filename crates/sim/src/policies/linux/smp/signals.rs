//! A record, kept on request, of each fair task's load-tracking signals as the model stores them
//! (`se.avg.load_avg`, `runnable_avg`, `util_avg` after each update), so that they can be set
//! beside what the kernel shows in `/proc/<pid>/sched` during the same run (`schedlab validate`).
//! The balancer and the wake-up placement decide from these signals; where the model's differ
//! from the kernel's, its decisions will too.

use super::super::pelt::Pelt;
use super::super::Linux;
use crate::policy::{TaskId, Time};
use std::collections::HashMap;

/// A task's stored signals from `at` on (until its next update).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignalSample {
    pub at: Time,
    pub load: u64,
    pub runnable: u64,
    pub util: u64,
}

/// Every update of every fair task's signals, in time order per task.
#[derive(Debug, Clone, Default)]
pub struct SignalLog {
    pub tasks: HashMap<TaskId, Vec<SignalSample>>,
}

impl SignalLog {
    /// Note `t`'s signals as stored at `at`.
    pub fn push(&mut self, t: TaskId, at: Time, p: &Pelt) {
        let s = SignalSample { at, load: p.load_avg, runnable: p.runnable_avg, util: p.util_avg };
        let v = self.tasks.entry(t).or_default();
        if v.last().is_some_and(|l| (l.load, l.runnable, l.util) == (s.load, s.runnable, s.util)) {
            return;
        }
        v.push(s);
    }

    /// What `t` had stored at `at`: its last update at or before then.
    pub fn stored_at(&self, t: TaskId, at: Time) -> Option<SignalSample> {
        let v = self.tasks.get(&t)?;
        let i = v.partition_point(|s| s.at <= at);
        i.checked_sub(1).map(|i| v[i])
    }
}

impl Linux {
    /// Keep a [`SignalLog`] in the runs to come (with more than one CPU: one CPU tracks no load).
    pub fn keep_signals(mut self) -> Self {
        self.keep_signals = true;
        self
    }

    /// The signals recorded over the last run, if [`Linux::keep_signals`] asked for them.
    pub fn signal_log(&self) -> Option<&SignalLog> {
        self.smp.as_ref()?.log.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stored_value_is_the_last_update_at_or_before() {
        let mut log = SignalLog::default();
        let p = |load| Pelt { load_avg: load, ..Pelt::default() };
        log.push(3, 10, &p(100));
        log.push(3, 20, &p(100)); // unchanged: not a new sample
        log.push(3, 30, &p(200));
        assert_eq!(log.tasks[&3].len(), 2);
        assert_eq!(log.stored_at(3, 5), None);
        assert_eq!(log.stored_at(3, 10).map(|s| s.load), Some(100));
        assert_eq!(log.stored_at(3, 29).map(|s| s.load), Some(100));
        assert_eq!(log.stored_at(3, 30).map(|s| s.load), Some(200));
        assert_eq!(log.stored_at(4, 30), None);
    }

    #[test]
    fn a_two_cpu_run_keeps_every_fair_tasks_signals_when_asked() {
        use crate::engine::{simulate, SimConfig};
        use crate::workload::{TaskSpec, Workload};
        const MS: u64 = 1_000_000;
        // Three hogs and a sleeper (1 ms every 5 ms) on two CPUs for 300 ms.
        let mut sleeper = TaskSpec::cpu("sleeper", 0, MS);
        sleeper.bursts = [MS, 4 * MS].repeat(60).into();
        sleeper.bursts.push(MS);
        let mut tasks: Vec<TaskSpec> = (0..3).map(|i| TaskSpec::cpu(&format!("hog{i}"), 0, 300 * MS)).collect();
        tasks.push(sleeper);
        let w = Workload { cpus: Some(2), tasks };
        let cfg = SimConfig { cpus: 2, ..SimConfig::default() };
        let mut plain = crate::policies::linux_by_spec("linux").unwrap();
        simulate(&w, &mut plain, &cfg);
        assert!(plain.signal_log().is_none(), "kept only when asked");
        let mut linux = crate::policies::linux_by_spec("linux").unwrap().keep_signals();
        simulate(&w, &mut linux, &cfg);
        let log = linux.signal_log().expect("asked for");
        assert_eq!(log.tasks.len(), 4);
        // A hog is always runnable: after 200 ms its load is near its weight (1 − y^195 of it).
        let hog = log.stored_at(0, 200 * MS).unwrap();
        assert!(hog.load > 1000 && hog.runnable > 1000, "{hog:?}");
        // The sleeper runs at most a fifth of the time, and is never runnable without load.
        let s = log.stored_at(3, 250 * MS).unwrap();
        assert!(s.util < 300 && s.util <= s.runnable, "{s:?}");
        assert!(log.tasks[&3].iter().all(|x| x.runnable <= x.load + 1), "runnable above load");
    }

    #[test]
    fn a_task_that_was_there_before_the_run_starts_without_a_new_tasks_load() {
        use crate::engine::{simulate, SimConfig};
        use crate::workload::{TaskSpec, Workload};
        const MS: u64 = 1_000_000;
        // Two hogs: one new (forked in the run), one a replayed trace's task already on CPU 1.
        let new = TaskSpec::cpu("new", 0, 100 * MS);
        let mut old = TaskSpec::cpu("old", 0, 100 * MS);
        old.start_cpu = Some(1);
        let w = Workload { cpus: Some(2), tasks: vec![new, old] };
        let mut linux = crate::policies::linux_by_spec("linux").unwrap().keep_signals();
        simulate(&w, &mut linux, &SimConfig { cpus: 2, ..SimConfig::default() });
        let log = linux.signal_log().unwrap();
        // A new task is charged its full weight from the start (init_entity_runnable_average());
        // the old one grows from nothing: after 10 ms of running, 1 − y^9.8 ≈ 19% of it.
        let (n, o) = (log.stored_at(0, 10 * MS).unwrap(), log.stored_at(1, 10 * MS).unwrap());
        assert!(n.load > 1000, "{n:?}");
        assert!((150..=250).contains(&o.load), "{o:?}");
    }
}
