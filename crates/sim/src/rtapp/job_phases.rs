//! A periodic rt-app thread whose phases differ (rt-app's example3: ten jobs of 3 ms, then ten
//! of 27 ms, on one timer) as a periodic task's job phases: the thread's rounds unrolled, each
//! phase `loop` jobs of its own body, cut to the jobs that run. Locks are refused there: a lock
//! names a burst by its index, which would be a different burst in each phase.

use super::import::Job;
use super::*;
use crate::workload::JobPhase;

/// At most this many phase changes in one task (a guard against a thread that loops for ever
/// between short phases).
const MAX_PHASES: usize = 100_000;

/// The job phases of `t`, whose phases' bodies are `jobs` (one per phase, one timer, not all
/// alike), cut to `count` jobs.
pub(super) fn job_phases(t: &Thread, jobs: &[Job], count: u32) -> Result<Vec<JobPhase>, RtAppError> {
    for (phase, job) in t.phases.iter().zip(jobs) {
        if !job.locks.is_empty() {
            let key = format!("{}lock", phase.path);
            return Err(t
                .at(&key)
                .err("a lock in phases of different bodies: not mapped (its burst differs per phase)"));
        }
        if phase.repeat == Loop::Forever {
            let key = format!("{}loop", phase.path);
            return Err(t.at(&key).err("a phase of loop -1 never ends: the phases after it never run (give a count)"));
        }
    }
    let mut out: Vec<JobPhase> = Vec::new();
    let mut left = count;
    'rounds: loop {
        for (phase, job) in t.phases.iter().zip(jobs) {
            let Loop::Times(n) = phase.repeat else { unreachable!("refused above") };
            let n = u32::try_from(n).unwrap_or(u32::MAX).min(left);
            if n > 0 {
                match out.last_mut() {
                    Some(last) if *last.bursts == *job.bursts => last.jobs += n,
                    _ => out.push(JobPhase { jobs: n, bursts: job.bursts.as_slice().into() }),
                }
                left -= n;
            }
            if left == 0 {
                break 'rounds;
            }
            if out.len() > MAX_PHASES {
                return Err(t.at("loop").err(format!("more than {MAX_PHASES} phase changes: too many to map")));
            }
        }
    }
    if out.len() == 1 {
        // Only the first phase's jobs run: one job shape, as a plain periodic task.
        out.clear();
    }
    Ok(out)
}
