//! A thread's load-tracking signals as the kernel keeps them, read from `/proc/<tid>/sched`
//! (`proc_sched_show_task()`): `se.avg.load_avg`, `runnable_avg`, `util_avg` and `util_est`,
//! and how often it changed CPU (`se.nr_migrations`). These are what the load balancer and the
//! wake-up placement decide from; `schedlab validate` sets them beside the model's. The values
//! are as the kernel last updated them (at the thread's last enqueue, dequeue, switch or tick),
//! not decayed to the moment of reading.

use std::fs;

/// The signals of one thread at one reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedSignals {
    pub load_avg: u64,
    pub runnable_avg: u64,
    pub util_avg: u64,
    /// None on kernels without `util_est` in this file.
    pub util_est: Option<u64>,
    pub nr_migrations: u64,
}

/// Read thread `tid`'s signals; None when it is gone or the kernel prints no load averages.
pub fn read(tid: i32) -> Option<SchedSignals> {
    parse(&fs::read_to_string(format!("/proc/{tid}/sched")).ok()?)
}

/// The signals in the text of a `/proc/<tid>/sched` file.
pub fn parse(text: &str) -> Option<SchedSignals> {
    let field = |key: &str| -> Option<u64> {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == key).then(|| v.trim().parse::<f64>().ok().map(|x| x as u64)).flatten()
        })
    };
    Some(SchedSignals {
        load_avg: field("se.avg.load_avg")?,
        runnable_avg: field("se.avg.runnable_avg")?,
        util_avg: field("se.avg.util_avg")?,
        util_est: field("se.avg.util_est"),
        nr_migrations: field("se.nr_migrations")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_kernels_layout() {
        // Linux 6.18, as this VM prints it (trimmed).
        let text = "workload (20708, #threads: 1)\n\
            -------------------------------------------------------------------\n\
            se.exec_start                                :      30211427.854519\n\
            se.nr_migrations                             :                    3\n\
            se.avg.load_avg                              :                  464\n\
            se.avg.runnable_avg                          :                  259\n\
            se.avg.util_avg                              :                  199\n\
            se.avg.last_update_time                      :       30211427854336\n\
            se.avg.util_est                              :                  245\n\
            policy                                       :                    0\n";
        let s = parse(text).unwrap();
        assert_eq!(
            s,
            SchedSignals { load_avg: 464, runnable_avg: 259, util_avg: 199, util_est: Some(245), nr_migrations: 3 }
        );
        assert_eq!(parse("policy : 0\n"), None);
    }

    #[test]
    fn reads_this_thread() {
        let tid = std::process::id() as i32;
        let s = read(tid).expect("/proc/self/sched with load averages (a kernel with CONFIG_SMP)");
        assert!(s.util_avg <= 1024 && s.runnable_avg <= 1024 * 4, "{s:?}");
        assert_eq!(read(i32::MAX), None);
    }
}
