//! What a trace does not carry, read from the kernel while the tasks live: each task's
//! scheduling policy, nice, RT priority, SCHED_DEADLINE parameters, custom slice and CPU
//! affinity (`sched_getattr(2)`, `sched_getaffinity(2)`), as `schedlab_trace`'s metadata sidecar.

use schedlab_os::procfs;
use schedlab_os::sched::{self, LinuxPolicy, SchedParams};
use schedlab_trace::meta::CpuTimes;
use schedlab_trace::{SchedPolicy, TaskMeta, TraceMeta};
use std::collections::BTreeMap;

/// The sidecar's policy for a Linux policy.
pub fn policy(p: LinuxPolicy) -> SchedPolicy {
    match p {
        LinuxPolicy::Other => SchedPolicy::Normal,
        LinuxPolicy::Batch => SchedPolicy::Batch,
        LinuxPolicy::Idle => SchedPolicy::Idle,
        LinuxPolicy::Fifo => SchedPolicy::Fifo,
        LinuxPolicy::Rr => SchedPolicy::Rr,
        LinuxPolicy::Deadline => SchedPolicy::Deadline,
    }
}

/// A task's entry from its scheduling parameters and affinity.
pub fn from_params(pid: i32, comm: Option<String>, p: &SchedParams, affinity: Option<Vec<usize>>) -> TaskMeta {
    let mut m = TaskMeta::new(pid, policy(p.policy));
    m.comm = comm;
    match p.policy {
        LinuxPolicy::Fifo | LinuxPolicy::Rr => m.rt_priority = Some(p.priority as u32),
        LinuxPolicy::Deadline => {
            (m.dl_runtime_ns, m.dl_deadline_ns, m.dl_period_ns) =
                (Some(p.runtime_ns), Some(p.deadline_ns), Some(p.period_ns));
        }
        _ => {
            m.nice = Some(p.nice);
            // A fair task's sched_runtime is its custom slice (0 = the default).
            m.slice_ns = (p.runtime_ns > 0).then_some(p.runtime_ns);
        }
    }
    m.affinity = affinity;
    m
}

/// A live task's entry, read from the kernel (None once it is gone).
pub fn read(tid: i32) -> Option<TaskMeta> {
    let p = sched::get_sched(tid).ok()?;
    let affinity = schedlab_os::affinity::get_affinity(tid).ok();
    Some(from_params(tid, procfs::comm(tid), &p, affinity))
}

/// Entries collected while a recording runs, by task id.
#[derive(Debug, Default)]
pub struct Collector {
    tasks: BTreeMap<i32, TaskMeta>,
}

impl Collector {
    /// Read every thread of `root` and of the processes below it that is not known yet (a
    /// task keeps the first entry read: its policy when it started).
    pub fn poll(&mut self, root: i32) {
        for pid in procfs::descendants(root) {
            for tid in procfs::threads(pid) {
                if let std::collections::btree_map::Entry::Vacant(e) = self.tasks.entry(tid) {
                    if let Some(m) = read(tid) {
                        e.insert(m);
                    }
                }
            }
        }
    }

    /// Add an entry known without asking the kernel (what a runner set itself).
    pub fn insert(&mut self, m: TaskMeta) {
        self.tasks.insert(m.pid, m);
    }

    /// A known task's CPU affinity as read now (a task may change it after it starts).
    pub fn set_affinity(&mut self, tid: i32, cpus: Option<Vec<usize>>) {
        if let Some(m) = self.tasks.get_mut(&tid) {
            m.affinity = cpus;
        }
    }

    /// The sidecar.
    /// The sidecar; `steal_ns`: what the hypervisor took from each CPU during the recording.
    pub fn finish(self, cpus: usize, steal_ns: Option<Vec<u64>>, cpu_times: Option<CpuTimes>) -> TraceMeta {
        TraceMeta {
            version: 1,
            clock: Some("mono".into()),
            cpus: Some(cpus),
            tasks: self.tasks.into_values().collect(),
            steal_resolution_ns: steal_ns.as_ref().map(|_| schedlab_os::steal::resolution_ns()),
            steal_ns,
            cpu_times,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calling_thread_is_read() {
        let me = schedlab_os::signals::thread_id();
        let m = read(me).unwrap();
        assert_eq!(m.pid, me);
        assert!(m.affinity.as_ref().is_some_and(|a| !a.is_empty()));
        let dl = SchedParams::deadline(2_000_000, 10_000_000, 10_000_000).unwrap();
        let d = from_params(7, None, &dl, None);
        assert_eq!(
            (d.policy, d.dl_runtime_ns, d.dl_period_ns),
            (SchedPolicy::Deadline, Some(2_000_000), Some(10_000_000))
        );
        let f = from_params(8, None, &SchedParams::new(LinuxPolicy::Fifo, 50), Some(vec![1]));
        assert_eq!((f.policy, f.rt_priority, f.affinity), (SchedPolicy::Fifo, Some(50), Some(vec![1])));
    }
}
