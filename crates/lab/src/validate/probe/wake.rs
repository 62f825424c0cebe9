//! The wake-up path's own cost on this machine, which no scheduling model derives: how long
//! after its wake-up a task starts, by where the wake-up comes from and where the task runs.
//! Each is the spread of latencies (sched_waking to switch-in) of a small live probe, read
//! through the trace's 1 µs clock as grouped data ([`schedlab_trace::compare::quantile_on_grid`]),
//! kept as 16 quantiles; the sentences give the median:
//!
//! - **idle**: a SCHED_OTHER sleeper alone on a CPU (0.2 ms of work, then 5 ms asleep, as the
//!   cases' sleepers sleep 4–8 ms: after 2 ms asleep beside a hog the wake-up took about 0.7 µs
//!   less, its memory still in the caches): a timer wakes it on an idle CPU (idle exit, the
//!   interrupt, the switch);
//! - **preempt**: the same sleeper beside a SCHED_OTHER hog: the timer wake-ups that pre-empt
//!   the hog at once (nearly all: it wakes with lag to claim; the few that wait for the hog's
//!   tick are the scheduler's decision, not the path's cost, and are left out);
//! - **preempt_rt**: the same sleeper at SCHED_FIFO beside the hog: every timer wake-up pre-empts
//!   it, through the real-time class's wake-up path rather than the fair class's (here the two
//!   differed by about 1 µs either way from run to run: each case's tasks get their own class's);
//! - **task_preempt**: a ping-pong pair on one CPU (50 µs of work per message): the wake-ups
//!   after which the woken thread pre-empts its waker (the waker is switched out runnable at
//!   that switch-in; it first returns from its write). The pair also wakes each other when a
//!   read frees room in the socket (a wake-up that finds nothing to read); those that do not
//!   pre-empt are left out;
//! - **remote_idle**: the pair split over two CPUs: each message wakes a thread on the other,
//!   idle CPU (an inter-processor interrupt and the CPU leaving idle);
//! - **remote_preempt**: the pair at SCHED_FIFO split over two CPUs with a SCHED_OTHER hog on
//!   the woken thread's CPU, which it pre-empts.
//!
//! A calibration: every model is given these delays ([`schedlab_sim::engine::WakeDelays`]) and
//! draws one from the spread at each wake-up; whether a wake-up pre-empts or waits, and where
//! the task runs, is still the model's to predict.

use super::workload;
use crate::trace::live;
use anyhow::{Context, Result};
use schedlab_os::sched::{LinuxPolicy, SchedParams};
use schedlab_sim::engine::{WakeDelay, WakeDelays};
use schedlab_trace::{Pid, Timeline};
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// One probe's result.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Delay {
    /// The CPU the woken task ran on.
    pub cpu: usize,
    pub samples: usize,
    pub p50_ns: u64,
    /// The latencies' spread (16 quantiles), what a model draws from.
    pub spread: WakeDelay,
}

/// Every probe's result (the remote ones need a second CPU).
#[derive(Debug, Clone, Serialize)]
pub struct WakeProbe {
    pub idle: Delay,
    pub preempt: Delay,
    pub preempt_rt: Delay,
    pub task_preempt: Delay,
    pub remote_idle: Option<Delay>,
    pub remote_preempt: Option<Delay>,
}

impl WakeProbe {
    /// The delays a model is given.
    pub fn delays(&self) -> WakeDelays {
        WakeDelays {
            idle: self.idle.spread,
            preempt: self.preempt.spread,
            preempt_rt: Some(self.preempt_rt.spread),
            task_preempt: self.task_preempt.spread,
            remote_idle: self.remote_idle.map_or(WakeDelay::default(), |d| d.spread),
            remote_preempt: self.remote_preempt.map_or(WakeDelay::default(), |d| d.spread),
            draw: 0,
        }
    }

    pub fn sentence(&self) -> String {
        let us = |d: &Delay| format!("{:.0} µs (CPU {}, p50 of {})", d.p50_ns as f64 / 1e3, d.cpu, d.samples);
        let remote = match (&self.remote_idle, &self.remote_preempt) {
            (Some(i), Some(p)) => {
                format!(", from a task on another CPU {} onto an idle CPU and {} pre-empting", us(i), us(p))
            }
            _ => String::new(),
        };
        format!(
            "Wake-up path: a timer wake-up takes {} onto an idle CPU and {} when it pre-empts ({} for a SCHED_FIFO \
             task); a task's wake-up of a task that pre-empts it takes {}{remote} (medians), in a probe before the \
             cases, kept as spreads of 16 quantiles per kind and pooled with the probes before each run for every \
             replay (a calibration).",
            us(&self.idle),
            us(&self.preempt),
            us(&self.preempt_rt),
            us(&self.task_preempt)
        )
    }
}

/// Which wake-ups a probe measures.
#[derive(Clone, Copy)]
struct Kind {
    /// Given from task context (else by a timer or device).
    from_task: bool,
    /// Only those whose switch-in pre-empted another task (switched out runnable then).
    preempting: bool,
}

/// The longest a wake-up path takes here (the idle kind, which includes leaving idle, reached
/// about 31 µs). A pre-empting wake-up that took longer waited: the kernel let the running task
/// finish its protected slice and switched at a tick — a decision every model makes itself, so
/// it is no part of the path's cost (kept, a sixteenth of the fair sleeper's wake-ups drew a
/// 3.9 ms delay in every model, a wait on top of the model's own).
const PATH_COST_MAX_NS: u64 = 100_000;

/// Wake-up latencies (sorted) of `pid` of `kind`, first starts left out.
fn latencies(tl: &Timeline, pid: Pid, kind: Kind) -> Vec<u64> {
    let Some(t) = tl.tasks.get(&pid) else { return Vec::new() };
    let preempted_at = |at: u64, cpu: usize| {
        tl.tasks.values().any(|u| {
            u.pid != pid
                && u.waiting.iter().any(|s| s.start == at)
                && u.runs.iter().any(|r| r.end == at && r.cpu == cpu)
        })
    };
    let mut v: Vec<u64> = t
        .wakes
        .iter()
        .filter(|w| !w.new_task)
        .filter(|w| t.blocked.iter().any(|b| b.end == w.woken && b.woken_by.is_some() == kind.from_task))
        .filter(|w| !kind.preempting || preempted_at(w.ran, w.cpu))
        .map(|w| w.latency())
        .filter(|&l| !kind.preempting || l <= PATH_COST_MAX_NS)
        .collect();
    v.sort_unstable();
    v
}

/// Run `tasks` for `span` and measure the wake-ups of the task `which` picks among the first
/// task's process and threads (`threads[i]` is the i-th of them by pid).
fn measure(
    tasks: &[live::LiveTask],
    span: Duration,
    what: &str,
    kind: Kind,
    which: impl Fn(&[Pid]) -> Option<Pid>,
    cpu: usize,
) -> Result<Delay> {
    let run = live::run(tasks, span, &|_| {}).with_context(|| format!("the {what} wake-up probe"))?;
    let (tl, _) = Timeline::from_text(&run.text, Some(schedlab_trace::Format::Tracefs));
    let mut family = tl.descendants(run.pids[0]);
    family.sort_unstable();
    let pid = which(&family).with_context(|| format!("the {what} probe's task is not in its trace"))?;
    let lat = latencies(&tl, pid, kind);
    anyhow::ensure!(lat.len() >= 20, "the {what} wake-up probe saw only {} wake-ups", lat.len());
    let p50_ns = schedlab_trace::compare::median_on_grid(&lat, tl.resolution_ns).unwrap_or(0);
    let grid = tl.resolution_ns.max(1);
    let spread = WakeDelay::spread(|q| schedlab_trace::compare::quantile_on_grid(&lat, grid, q).unwrap_or(0));
    Ok(Delay { cpu, samples: lat.len(), p50_ns, spread })
}

/// Run every probe, each for `span`: the timer ones and the one-CPU pair on `cpu`, the idle one
/// and the woken side of the split pair on `idle_cpu` (some hosts lose switches out of idle on
/// some CPUs — this VM's CPU 1 never shows one — which leaves nothing to measure there: give a
/// CPU that records them). With `idle_cpu == cpu` the remote probes are left out.
pub fn wake_costs(exe: &Path, idle_cpu: usize, cpu: usize, span: Duration) -> Result<WakeProbe> {
    let repeat = ((span.as_secs_f64() / 5.2e-3).ceil() as u64 + 10).to_string();
    let sleeper = ["--ms", "0.2,5", "--repeat", repeat.as_str()];
    let other = SchedParams::other_nice(0);
    let fifo = SchedParams::new(LinuxPolicy::Fifo, 10);
    let first = |f: &[Pid]| f.first().copied();
    let timer = Kind { from_task: false, preempting: false };
    let task = Kind { from_task: true, preempting: false };
    let idle = measure(
        &[workload(exe, "sleeper", "bursts", &sleeper, other, idle_cpu)],
        span,
        "idle",
        timer,
        first,
        idle_cpu,
    )?;
    let beside = |name: &str, sched: SchedParams| {
        [
            workload(exe, name, "bursts", &sleeper, sched, cpu),
            workload(exe, "hog", "bursts", &["--ms", "inf"], other, cpu),
        ]
    };
    let timer_preempting = Kind { from_task: false, preempting: true };
    let preempt = measure(&beside("sleeper", other), span, "pre-empting", timer_preempting, first, cpu)?;
    let preempt_rt = measure(&beside("fifo-sleeper", fifo), span, "RT pre-empting", timer, first, cpu)?;
    let for_ms = format!("{}ms", span.as_millis() + 1000);
    let pair = ["--for", for_ms.as_str(), "--work", "50us"];
    // The pong thread (the process's second task) is woken by ping's writes.
    let pong = |f: &[Pid]| f.get(1).copied();
    let pair_alone = [workload(exe, "pingpong", "pingpong", &pair, other, cpu)];
    let preempting = Kind { from_task: true, preempting: true };
    let task_preempt = measure(&pair_alone, span, "task pre-empting", preempting, pong, cpu)?;
    if idle_cpu == cpu {
        return Ok(WakeProbe { idle, preempt, preempt_rt, task_preempt, remote_idle: None, remote_preempt: None });
    }
    let split = format!("{cpu},{idle_cpu}");
    let split_pair = ["--for", for_ms.as_str(), "--work", "50us", "--split", split.as_str()];
    let both = |p: SchedParams| live::LiveTask {
        cpus: Some(vec![idle_cpu, cpu]),
        ..workload(exe, "pingpong", "pingpong", &split_pair, p, cpu)
    };
    let remote_idle = measure(&[both(other)], span, "remote idle", task, pong, idle_cpu)?;
    let remote_preempt = measure(
        &[both(fifo), workload(exe, "hog", "bursts", &["--ms", "inf"], other, idle_cpu)],
        span,
        "remote pre-empting",
        task,
        pong,
        idle_cpu,
    )?;
    Ok(WakeProbe {
        idle,
        preempt,
        preempt_rt,
        task_preempt,
        remote_idle: Some(remote_idle),
        remote_preempt: Some(remote_preempt),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sleeper (pid 100) beside a hog (pid 200) on CPU 1, woken twice by its timer: the first
    /// wake-up pre-empts the hog 8 µs after it is raised; at the second the hog runs on to its
    /// tick, 3 ms later, and is then switched out runnable too.
    const TRACE: &str = "\
          <idle>-0       [001] d..2. 1000.000000: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=sleeper next_pid=100 next_prio=120
         sleeper-100     [001] d..2. 1000.000200: sched_switch: prev_comm=sleeper prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=hog next_pid=200 next_prio=120
             hog-200     [001] d.h3. 1000.005000: sched_waking: comm=sleeper pid=100 prio=120 target_cpu=001
             hog-200     [001] dNh4. 1000.005001: sched_wakeup: comm=sleeper pid=100 prio=120 target_cpu=001
             hog-200     [001] d..2. 1000.005008: sched_switch: prev_comm=hog prev_pid=200 prev_prio=120 prev_state=R ==> next_comm=sleeper next_pid=100 next_prio=120
         sleeper-100     [001] d..2. 1000.005208: sched_switch: prev_comm=sleeper prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=hog next_pid=200 next_prio=120
             hog-200     [001] d.h3. 1000.010000: sched_waking: comm=sleeper pid=100 prio=120 target_cpu=001
             hog-200     [001] d.h4. 1000.010001: sched_wakeup: comm=sleeper pid=100 prio=120 target_cpu=001
             hog-200     [001] d..2. 1000.013017: sched_switch: prev_comm=hog prev_pid=200 prev_prio=120 prev_state=R ==> next_comm=sleeper next_pid=100 next_prio=120
         sleeper-100     [001] d..2. 1000.013217: sched_switch: prev_comm=sleeper prev_pid=100 prev_prio=120 prev_state=S ==> next_comm=hog next_pid=200 next_prio=120
";

    #[test]
    fn a_wake_up_that_waited_for_the_tick_is_no_part_of_the_path_cost() {
        let (tl, _) = Timeline::from_text(TRACE, Some(schedlab_trace::Format::Tracefs));
        let timer_preempting = Kind { from_task: false, preempting: true };
        assert_eq!(latencies(&tl, 100, timer_preempting), vec![8_000], "the wait for the tick is left out");
        // Every timer wake-up, pre-empting or not, when the kind does not ask for pre-emptions.
        let timer = Kind { from_task: false, preempting: false };
        assert_eq!(latencies(&tl, 100, timer), vec![8_000, 3_017_000]);
    }
}
