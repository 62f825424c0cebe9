//! A thread's load-tracking signals as the kernel keeps them, read from `/proc/<tid>/sched`
//! (`proc_sched_show_task()`): `se.avg.load_avg`, `runnable_avg`, `util_avg` and `util_est`,
//! and how often it changed CPU (`se.nr_migrations`). These are what the load balancer and the
//! wake-up placement decide from; `schedlab validate` sets them beside the model's. The values
//! are as the kernel last updated them (at the thread's last enqueue, dequeue, switch or tick),
//! not decayed to the moment of reading. With them, the fair class's place for the thread,
//! `se.vruntime` as of its last update (`se.exec_start`, on the run queue's task clock), which
//! the trace shadow sets its lags right by.

use serde::{Deserialize, Serialize};
use std::fs;

/// The signals of one thread at one reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedSignals {
    pub load_avg: u64,
    pub runnable_avg: u64,
    pub util_avg: u64,
    /// None on kernels without `util_est` in this file.
    pub util_est: Option<u64>,
    pub nr_migrations: u64,
    /// `se.vruntime` and `se.exec_start`, ns (None where the file lacks them).
    pub vruntime_ns: Option<i64>,
    pub exec_start_ns: Option<i64>,
}

/// Read thread `tid`'s signals; None when it is gone or the kernel prints no load averages.
pub fn read(tid: i32) -> Option<SchedSignals> {
    parse(&fs::read_to_string(format!("/proc/{tid}/sched")).ok()?)
}

/// The signals in the text of a `/proc/<tid>/sched` file.
pub fn parse(text: &str) -> Option<SchedSignals> {
    let field = |key: &str| -> Option<u64> { value(text, key)?.parse::<f64>().ok().map(|x| x as u64) };
    Some(SchedSignals {
        load_avg: field("se.avg.load_avg")?,
        runnable_avg: field("se.avg.runnable_avg")?,
        util_avg: field("se.avg.util_avg")?,
        util_est: field("se.avg.util_est"),
        nr_migrations: field("se.nr_migrations")?,
        vruntime_ns: exact_ns(text, "se.vruntime"),
        exec_start_ns: exact_ns(text, "se.exec_start"),
    })
}

/// The text after `key :` on its line.
fn value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim())
    })
}

/// A field the kernel prints as ms with six decimals (`SPLIT_NS`), exactly, in ns.
fn exact_ns(text: &str, key: &str) -> Option<i64> {
    let v = value(text, key)?;
    let (negative, v) = v.strip_prefix('-').map_or((false, v), |rest| (true, rest));
    let (ms, frac) = v.split_once('.').unwrap_or((v, "0"));
    if frac.len() > 6 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let ns = ms.parse::<i64>().ok()?.checked_mul(1_000_000)? + format!("{frac:0<6}").parse::<i64>().ok()?;
    Some(if negative { -ns } else { ns })
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
            se.vruntime                                  :        463353.649188\n\
            se.sum_exec_runtime                          :            64.778558\n\
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
            SchedSignals {
                load_avg: 464,
                runnable_avg: 259,
                util_avg: 199,
                util_est: Some(245),
                nr_migrations: 3,
                vruntime_ns: Some(463_353_649_188),
                exec_start_ns: Some(30_211_427_854_519),
            }
        );
        assert_eq!(parse("policy : 0\n"), None);
        // Exactly, to the ns, either sign.
        assert_eq!(exact_ns("se.vruntime : -12.000001\n", "se.vruntime"), Some(-12_000_001));
        assert_eq!(exact_ns("se.vruntime : 7.5\n", "se.vruntime"), Some(7_500_000));
    }

    #[test]
    fn reads_this_thread() {
        let tid = std::process::id() as i32;
        let s = read(tid).expect("/proc/self/sched with load averages (a kernel with CONFIG_SMP)");
        assert!(s.util_avg <= 1024 && s.runnable_avg <= 1024 * 4, "{s:?}");
        assert_eq!(read(i32::MAX), None);
    }
}
