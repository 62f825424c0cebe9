//! The metadata sidecar a recorder writes next to a trace: what the trace itself does not
//! carry — each task's scheduling policy, nice, RT priority, SCHED_DEADLINE parameters and CPU
//! affinity, and a fair task's custom slice (as `sched_getattr(2)` / `sched_getaffinity(2)`
//! report them). JSON, times in
//! integer nanoseconds:
//!
//! ```json
//! {"version":1,"clock":"mono","cpus":2,"tasks":[
//!   {"pid":4242,"comm":"worker","policy":"fifo","rt_priority":50,"affinity":[1]},
//!   {"pid":4244,"policy":"normal","nice":5,"slice_ns":3000000},
//!   {"pid":4243,"policy":"deadline","dl_runtime_ns":2000000,"dl_deadline_ns":10000000,"dl_period_ns":10000000}]}
//! ```

use crate::event::Pid;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A Linux scheduling policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SchedPolicy {
    /// SCHED_OTHER / SCHED_NORMAL.
    Normal,
    Batch,
    Idle,
    Fifo,
    Rr,
    Deadline,
}

impl SchedPolicy {
    /// The `class` a schedlab workload gives it (`None` = the fair class's default).
    pub fn workload_class(self) -> Option<&'static str> {
        match self {
            SchedPolicy::Normal => None,
            SchedPolicy::Batch => Some("batch"),
            SchedPolicy::Idle => Some("idle"),
            SchedPolicy::Fifo => Some("fifo"),
            SchedPolicy::Rr => Some("rr"),
            SchedPolicy::Deadline => Some("deadline"),
        }
    }
}

/// What the recorder knows of one task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskMeta {
    pub pid: Pid,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comm: Option<String>,
    pub policy: SchedPolicy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nice: Option<i32>,
    /// 1..=99 for fifo/rr.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rt_priority: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dl_runtime_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dl_deadline_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dl_period_ns: Option<u64>,
    /// A custom time slice (`sched_attr.sched_runtime` of a fair-class task, EEVDF, Linux ≥ 6.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice_ns: Option<u64>,
    /// Allowed CPUs; absent = not recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Vec<usize>>,
}

impl TaskMeta {
    /// A task of `policy` with nothing else recorded.
    pub fn new(pid: Pid, policy: SchedPolicy) -> Self {
        TaskMeta {
            pid,
            comm: None,
            policy,
            nice: None,
            rt_priority: None,
            dl_runtime_ns: None,
            dl_deadline_ns: None,
            dl_period_ns: None,
            slice_ns: None,
            affinity: None,
        }
    }
}

/// The sidecar file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceMeta {
    /// Format version: 1.
    pub version: u32,
    /// The trace clock (`mono`, `global`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<usize>,
    #[serde(default)]
    pub tasks: Vec<TaskMeta>,
    /// Time the hypervisor took from each CPU while the trace ran, in ns, by CPU number: the
    /// trace's run times include it, the tasks' own CPU clocks do not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_ns: Option<Vec<u64>>,
    /// The resolution of `steal_ns` (`/proc/stat` counts in USER_HZ ticks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_resolution_ns: Option<u64>,
    /// Every thread's CPU time over a window of the recording, as the kernel counted it: what
    /// runs whose end the trace lost are trimmed to ([`crate::trim`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_times: Option<CpuTimes>,
}

/// Threads' CPU time between two instants (`/proc/<tid>/schedstat` read at both).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuTimes {
    /// The two instants, on the trace clock (ns).
    pub window: (u64, u64),
    /// CPU time in the window (ns), by thread id: threads alive at both instants.
    pub ns: BTreeMap<Pid, u64>,
}

impl CpuTimes {
    /// From two readings of every thread's CPU time so far, taken at `window.0` and `window.1`.
    pub fn between(window: (u64, u64), before: &BTreeMap<Pid, u64>, after: &BTreeMap<Pid, u64>) -> CpuTimes {
        let ns = after.iter().filter_map(|(t, a)| Some((*t, a.checked_sub(*before.get(t)?)?))).collect();
        CpuTimes { window, ns }
    }
}

impl Default for TraceMeta {
    fn default() -> Self {
        TraceMeta {
            version: 1,
            clock: None,
            cpus: None,
            tasks: Vec::new(),
            steal_ns: None,
            steal_resolution_ns: None,
            cpu_times: None,
        }
    }
}

impl TraceMeta {
    pub fn from_json_str(s: &str) -> Result<TraceMeta, serde_json::Error> {
        let m: TraceMeta = serde_json::from_str(s)?;
        if m.version != 1 {
            return Err(serde::de::Error::custom(format!("metadata version {} (this build reads 1)", m.version)));
        }
        Ok(m)
    }

    pub fn to_json_string(&self) -> String {
        serde_json::to_string_pretty(self).expect("metadata serializes")
    }

    /// What the steal says about the trace, for a run's summary: empty when no CPU lost time.
    pub fn steal_summary(&self) -> String {
        let Some(steal) = &self.steal_ns else { return String::new() };
        let lost: Vec<String> = steal
            .iter()
            .enumerate()
            .filter(|(_, &ns)| ns > 0)
            .map(|(cpu, &ns)| format!("{:.0} ms from CPU {cpu}", ns as f64 / 1e6))
            .collect();
        if lost.is_empty() {
            return String::new();
        }
        format!(
            " The hypervisor took {} while it ran (steal): the trace's run times include it, the tasks' CPU clocks do not.",
            lost.join(", ")
        )
    }

    /// The entry of `pid` (the last one, if a recorder wrote several).
    pub fn task(&self, pid: Pid) -> Option<&TaskMeta> {
        self.tasks.iter().rev().find(|t| t.pid == pid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_example_reads_and_round_trips() {
        let text = r#"{"version":1,"clock":"mono","cpus":2,"tasks":[
          {"pid":4242,"comm":"worker","policy":"fifo","rt_priority":50,"affinity":[1]},
          {"pid":4244,"policy":"normal","nice":5,"slice_ns":3000000},
          {"pid":4243,"policy":"deadline","dl_runtime_ns":2000000,"dl_deadline_ns":10000000,"dl_period_ns":10000000}]}"#;
        let m = TraceMeta::from_json_str(text).unwrap();
        assert_eq!(m.cpus, Some(2));
        let w = m.task(4242).unwrap();
        assert_eq!((w.policy, w.rt_priority, w.affinity.as_deref()), (SchedPolicy::Fifo, Some(50), Some(&[1][..])));
        assert_eq!(m.task(4243).unwrap().dl_runtime_ns, Some(2_000_000));
        assert_eq!((m.task(4244).unwrap().nice, m.task(4244).unwrap().slice_ns), (Some(5), Some(3_000_000)));
        assert!(m.task(1).is_none());
        assert_eq!(TraceMeta::from_json_str(&m.to_json_string()).unwrap(), m);
        assert!(TraceMeta::from_json_str(r#"{"version":2}"#).is_err());
        assert!(TraceMeta::from_json_str(r#"{"version":1,"tasks":[{"pid":1,"policy":"cfs"}]}"#).is_err());
        assert!(TraceMeta::from_json_str(r#"{"version":1,"colour":1}"#).is_err());
    }
}
