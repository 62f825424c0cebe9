//! Running tasks for real under a recording: each task is a child (`os::child`) with its
//! scheduling policy and CPUs set before its program starts, held at its own start gate and
//! released at its arrival time; the recording runs from just before the first release until
//! every task has ended or the time is up (the rest are killed). While they run, the controller
//! reads each task thread's load-tracking signals at each of its looks, and every thread's CPU
//! time as the kernel counts it when the recording starts and when the tasks stop (the
//! metadata's `cpu_times`). A simulator workload's tasks become `schedlab workload bursts`
//! children ([`from_workload`]), so the live run and the simulation start from the same
//! description.

use super::meta::{self, Collector};
use super::recorder::Recorder;
use anyhow::{bail, Context, Result};
use schedlab_os::child::{Barrier, Child, ChildSpec, Output};
use schedlab_os::clock::{monotonic_ns, sleep_until_ns};
use schedlab_os::sched::{LinuxPolicy, SchedParams};
use schedlab_os::sched_signals::{self, SchedSignals};
use schedlab_sim::workload::{TaskSpec, Workload};
use schedlab_trace::meta::CpuTimes;
use schedlab_trace::TraceMeta;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// How often the controller looks at its tasks while they run: seldom where it shares their
/// CPUs (each of its wake-ups is a task the trace shows beside theirs), more often where every
/// task is pinned and a CPU is left to it — each reading of `/proc/<tid>/sched` is a place
/// the trace shadow sets its lags to, and between two of them a fast pair's drift by some µs.
const POLL_NS: u64 = 50_000_000;
const POLL_SPARE_CPU_NS: u64 = 10_000_000;

/// The controller's polling period for `tasks`: [`POLL_SPARE_CPU_NS`] when they are all pinned
/// and it may run on a CPU none of them is pinned to, else [`POLL_NS`].
fn poll_ns(tasks: &[LiveTask], controller_cpus: &[usize]) -> u64 {
    let pinned = pinned_cpus(tasks);
    let all_pinned = tasks.iter().all(|t| t.cpus.is_some());
    if all_pinned && controller_cpus.iter().any(|c| !pinned.contains(c)) {
        POLL_SPARE_CPU_NS
    } else {
        POLL_NS
    }
}

/// How long a task may take to start up and stop itself.
const STARTUP_LIMIT: Duration = Duration::from_secs(30);

/// One task to run.
#[derive(Debug, Clone)]
pub struct LiveTask {
    pub name: String,
    pub argv: Vec<String>,
    pub sched: SchedParams,
    /// CPUs it may use (None = every CPU, as SCHED_DEADLINE requires).
    pub cpus: Option<Vec<usize>>,
    /// Released this long after the first task (ns).
    pub arrival_ns: u64,
    /// The program stops itself once started up (`workload … --stopped-start`) and is released
    /// with SIGCONT, so the trace holds its work and not its start-up (exec, loading, argument
    /// parsing: milliseconds for schedlab itself). Otherwise it waits at a gate before its exec.
    pub stopped_start: bool,
}

/// What a live run recorded (kept whole by `validate`, so its runs can be replayed later).
#[derive(Debug, Serialize, Deserialize)]
pub struct LiveRun {
    /// The trace as tracefs text.
    pub text: String,
    pub meta: TraceMeta,
    /// Each task's pid, in task order.
    pub pids: Vec<i32>,
    /// When the first task was released and when the run ended (CLOCK_MONOTONIC ns, the
    /// trace clock).
    pub release_ns: u64,
    pub end_ns: u64,
    /// Every thread's load-tracking signals as the kernel kept them, read at each of the
    /// controller's looks (CLOCK_MONOTONIC ns, reading), by thread id.
    pub signals: BTreeMap<i32, Vec<(u64, SchedSignals)>>,
    /// Each task's signals just before the first release, by pid: what the kernel remembered
    /// of it from its start-up (a stopped task's `util_est` stays as it is until it runs).
    pub at_release: BTreeMap<i32, SchedSignals>,
}

/// The Linux scheduling a workload task asks for (its `class`, `nice`, `priority`, `runtime`).
pub fn sched_of(t: &TaskSpec) -> Result<SchedParams> {
    let p = match t.class.as_deref() {
        Some("fifo") => SchedParams::new(LinuxPolicy::Fifo, t.priority),
        Some("rr") => SchedParams::new(LinuxPolicy::Rr, t.priority),
        Some("deadline") => {
            let (Some(rt), Some(period)) = (t.runtime, t.period) else {
                schedlab_os::bail_usage!("task {}: a deadline task needs runtime and period", t.name);
            };
            SchedParams::deadline(rt, t.deadline.unwrap_or(period), period)?
        }
        Some("batch") => SchedParams { nice: t.nice, ..SchedParams::new(LinuxPolicy::Batch, 0) },
        Some("idle") => SchedParams::new(LinuxPolicy::Idle, 0),
        None | Some("other") => SchedParams { runtime_ns: t.runtime.unwrap_or(0), ..SchedParams::other_nice(t.nice) },
        Some(c) => {
            schedlab_os::bail_usage!(
                "task {}: class '{c}' has no Linux policy (use other, batch, idle, fifo, rr or deadline)",
                t.name
            )
        }
    };
    Ok(p)
}

/// The `workload bursts` pattern of a task's bursts, in ms; a last burst of `open_ns` or more is
/// endless (`inf`, a hog until the run ends).
pub fn pattern(t: &TaskSpec, open_ns: u64) -> String {
    let n = t.bursts.len();
    t.bursts
        .iter()
        .enumerate()
        .map(|(i, &b)| if i + 1 == n && b >= open_ns { "inf".to_string() } else { format!("{}", b as f64 / 1e6) })
        .collect::<Vec<_>>()
        .join(",")
}

/// The workload's tasks as live tasks: `exe workload bursts --ms …`, the workload's CPU `i`
/// being `cpus[i]` on this machine; a burst of `open_ns` or more never ends.
pub fn from_workload(exe: &Path, w: &Workload, cpus: &[usize], open_ns: u64) -> Result<Vec<LiveTask>> {
    w.tasks
        .iter()
        .map(|t| {
            let sched = sched_of(t)?;
            if t.period.is_some() && sched.policy != LinuxPolicy::Deadline {
                schedlab_os::bail_usage!(
                    "task {}: periodic releases cannot run live yet (give its sleeps as bursts)",
                    t.name
                );
            }
            if !t.locks.is_empty() {
                schedlab_os::bail_usage!("task {}: locks cannot run live yet", t.name);
            }
            if !t.job_phases.is_empty() {
                schedlab_os::bail_usage!("task {}: jobs of different shapes (phases) cannot run live yet", t.name);
            }
            let on = |a: &[usize]| -> Result<Vec<usize>> {
                a.iter()
                    .map(|&c| cpus.get(c).copied().with_context(|| format!("task {}: no CPU {c} here", t.name)))
                    .collect()
            };
            let task_cpus = match (&t.affinity, sched.policy) {
                (_, LinuxPolicy::Deadline) => None,
                (Some(a), _) => Some(on(a)?),
                (None, _) => Some(cpus.to_vec()),
            };
            let repeat = if t.jobs > 1 { vec!["--repeat".into(), t.jobs.to_string()] } else { vec![] };
            let mut argv =
                vec![exe.display().to_string(), "workload".into(), "bursts".into(), "--stopped-start".into()];
            argv.extend(["--ms".to_string(), pattern(t, open_ns)]);
            argv.extend(repeat);
            Ok(LiveTask {
                name: t.name.to_string(),
                argv,
                sched,
                cpus: task_cpus,
                arrival_ns: t.arrival,
                stopped_start: true,
            })
        })
        .collect()
}

/// Every CPU some task is pinned to: the CPUs a run locks against other runs.
fn pinned_cpus(tasks: &[LiveTask]) -> Vec<usize> {
    let set: std::collections::BTreeSet<usize> =
        tasks.iter().filter_map(|t| t.cpus.as_ref()).flatten().copied().collect();
    set.into_iter().collect()
}

/// Does `t` take its scheduling policy once it has stopped itself before its release, rather
/// than at its start? An RR task's time slice is counted in ticks while it runs as RR and is
/// refilled only when it runs out (or at a fork): one that started up as RR would be released
/// with what its start-up left of it, which nothing shows; given the policy while stopped, it
/// starts the run with the whole slice, as the replay starts it.
fn policy_once_stopped(t: &LiveTask) -> bool {
    t.stopped_start && t.sched.policy == LinuxPolicy::Rr
}

/// Run `tasks` under a recording for at most `limit` after the first release.
pub fn run(tasks: &[LiveTask], limit: Duration, progress: &dyn Fn(&str)) -> Result<LiveRun> {
    if tasks.iter().any(|t| t.sched.policy.is_realtime()) {
        schedlab_os::sched::require_rt_throttling()?;
    }
    let _cpus = schedlab_os::cpulock::CpuLock::acquire(&pinned_cpus(tasks), "the traced tasks")?;
    let mut children = Vec::with_capacity(tasks.len());
    let mut meta = Collector::default();
    for t in tasks {
        let barrier = if t.stopped_start { Barrier::None } else { Barrier::Gate };
        let mut spec = ChildSpec::from_argv(&t.argv)?.stdout(Output::Null).barrier(barrier);
        if !policy_once_stopped(t) {
            spec = spec.sched(t.sched);
        }
        if let Some(c) = &t.cpus {
            spec = spec.cpus(c);
        }
        let child = Child::spawn(&spec).with_context(|| format!("starting task {}", t.name))?;
        meta.insert(meta::from_params(child.pid(), Some(t.name.clone()), &t.sched, t.cpus.clone()));
        children.push(child);
    }
    for (c, t) in children.iter().zip(tasks).filter(|(_, t)| t.stopped_start) {
        if !schedlab_os::process::wait_stopped(c.pid(), STARTUP_LIMIT) {
            bail!(
                "task {} did not stop itself within {} s of starting (did its program take --stopped-start?)",
                t.name,
                STARTUP_LIMIT.as_secs()
            );
        }
    }
    for (c, t) in children.iter().zip(tasks).filter(|(_, t)| policy_once_stopped(t)) {
        schedlab_os::sched::set_sched(c.pid(), &t.sched)
            .with_context(|| format!("setting task {}'s scheduling ({})", t.name, t.sched.policy.kernel_name()))?;
    }
    let recorder = Recorder::start()?;
    let at_release: BTreeMap<i32, SchedSignals> =
        children.iter().filter_map(|c| Some((c.pid(), sched_signals::read(c.pid())?))).collect();
    let (cpu_from, cpu_before) = (monotonic_ns(), schedlab_os::procfs::thread_cpu_times());
    let release_ns = monotonic_ns();
    let end_ns = release_ns + limit.as_nanos() as u64;
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_by_key(|&i| tasks[i].arrival_ns);
    progress(&format!("running {} tasks for up to {:.1} s", tasks.len(), limit.as_secs_f64()));
    for i in order {
        sleep_until_ns(release_ns + tasks[i].arrival_ns)?;
        if tasks[i].stopped_start {
            schedlab_os::process::signal(children[i].pid(), schedlab_os::process::Signal::SIGCONT)?;
        } else {
            children[i].release()?;
        }
    }
    let poll = poll_ns(tasks, &schedlab_os::affinity::allowed_cpus().unwrap_or_default());
    let mut last = 0;
    let mut signals: BTreeMap<i32, Vec<(u64, SchedSignals)>> = BTreeMap::new();
    while monotonic_ns() < end_ns && !schedlab_os::signals::stop_requested() {
        let alive: Vec<i32> =
            children.iter_mut().filter_map(|c| c.try_wait().ok()?.is_none().then(|| c.pid())).collect();
        if alive.is_empty() {
            break;
        }
        // Threads a task starts (the pingpong pair) inherit its scheduling: record them too. A
        // thread may pin itself once released (`workload pingpong --split`): its affinity is
        // read from the kernel, the last reading kept.
        for (c, t) in children.iter().zip(tasks) {
            for (i, tid) in schedlab_os::procfs::threads(c.pid()).into_iter().enumerate() {
                let cpus = narrowed(t.cpus.as_deref(), schedlab_os::affinity::get_affinity(tid).ok());
                if i > 0 {
                    meta.insert(meta::from_params(tid, schedlab_os::procfs::comm(tid), &t.sched, cpus));
                } else {
                    meta.set_affinity(tid, cpus);
                }
                // Timed before the read: a reading is then where the thread was at that time or
                // later, and the shadow takes it only if the thread has not moved since.
                let at = monotonic_ns();
                if let Some(sig) = sched_signals::read(tid) {
                    signals.entry(tid).or_default().push((at, sig));
                }
            }
        }
        last = monotonic_ns();
        // Seldom: every wake-up of this controller is a task the trace shows on the case's CPUs.
        sleep_until_ns((last + poll).min(end_ns))?;
    }
    let stopped_ns = monotonic_ns().max(last);
    // Before the kill, while the tasks' counts can still be read.
    let cpu_after = schedlab_os::procfs::thread_cpu_times();
    let cpu_times = CpuTimes::between((cpu_from, monotonic_ns()), &cpu_before, &cpu_after);
    for c in children.iter_mut() {
        c.kill()?;
    }
    let rec = recorder.stop()?;
    let pids = children.iter().map(Child::pid).collect();
    let meta = meta.finish(schedlab_os::affinity::online_cpus(), rec.steal_ns, Some(cpu_times));
    Ok(LiveRun { text: rec.text, meta, pids, release_ns, end_ns: stopped_ns, signals, at_release })
}

/// A thread's affinity: what the controller gave its task, unless the thread has since narrowed
/// it itself (a strict subset: pinned to fewer CPUs).
fn narrowed(given: Option<&[usize]>, read: Option<Vec<usize>>) -> Option<Vec<usize>> {
    let online = schedlab_os::affinity::online_cpus();
    match read {
        Some(r) if !r.is_empty() && r.len() < given.map_or(online, <[usize]>::len) => {
            if given.is_none_or(|g| r.iter().all(|c| g.contains(c))) {
                Some(r)
            } else {
                given.map(<[usize]>::to_vec)
            }
        }
        _ => given.map(<[usize]>::to_vec),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_that_pinned_itself_keeps_its_narrower_affinity() {
        // The controller gave the task CPUs 0 and 1; the thread pinned itself to 1.
        assert_eq!(narrowed(Some(&[0, 1]), Some(vec![1])), Some(vec![1]));
        // Unchanged, unreadable (gone), or wider than given: what the controller gave.
        assert_eq!(narrowed(Some(&[0, 1]), Some(vec![0, 1])), Some(vec![0, 1]));
        assert_eq!(narrowed(Some(&[1]), None), Some(vec![1]));
        assert_eq!(narrowed(Some(&[1]), Some(vec![0, 1])), Some(vec![1]));
        // Not a subset of what was given: not the thread's own narrowing; keep what was given.
        assert_eq!(narrowed(Some(&[0, 1]), Some(vec![2])), Some(vec![0, 1]));
        // A task given no affinity (SCHED_DEADLINE) keeps none unless it pinned itself.
        let all: Vec<usize> = (0..schedlab_os::affinity::online_cpus()).collect();
        assert_eq!(narrowed(None, Some(all)), None);
    }

    #[test]
    fn the_controller_polls_often_only_with_a_cpu_of_its_own() {
        let task = |cpus: Option<Vec<usize>>| LiveTask {
            name: "t".into(),
            argv: vec![],
            sched: SchedParams::other_nice(0),
            cpus,
            arrival_ns: 0,
            stopped_start: true,
        };
        // Every task on CPU 1, the controller free to use CPU 0: often.
        assert_eq!(poll_ns(&[task(Some(vec![1])), task(Some(vec![1]))], &[0, 1]), POLL_SPARE_CPU_NS);
        // The tasks on both CPUs, or one of them unpinned (SCHED_DEADLINE): seldom.
        assert_eq!(poll_ns(&[task(Some(vec![0])), task(Some(vec![1]))], &[0, 1]), POLL_NS);
        assert_eq!(poll_ns(&[task(Some(vec![1])), task(None)], &[0, 1]), POLL_NS);
        // The controller itself confined to the tasks' CPU: seldom.
        assert_eq!(poll_ns(&[task(Some(vec![1]))], &[1]), POLL_NS);
    }

    #[test]
    fn workload_tasks_become_bursts_children() {
        let mut hog = TaskSpec::cpu("hog", 0, 10_000_000_000);
        hog.nice = 5;
        let mut per = TaskSpec::cpu("per", 1_000_000, 3_000_000);
        per.bursts = vec![3_000_000, 7_000_000, 3_000_000].into();
        per.class = Some("fifo".into());
        per.priority = 50;
        per.affinity = Some(vec![0]);
        let w = Workload { cpus: Some(1), tasks: vec![hog, per] };
        let t = from_workload(Path::new("/x/schedlab"), &w, &[1], 5_000_000_000).unwrap();
        assert_eq!(t[0].argv[3..], ["--stopped-start".to_string(), "--ms".into(), "inf".into()]);
        assert!(t[0].stopped_start);
        assert_eq!(t[0].sched, SchedParams::other_nice(5));
        assert_eq!(t[1].argv[5], "3,7,3");
        assert_eq!((t[1].sched.policy, t[1].sched.priority, t[1].cpus.clone()), (LinuxPolicy::Fifo, 50, Some(vec![1])));
        assert_eq!(t[1].arrival_ns, 1_000_000);
        let mut dl = TaskSpec::cpu("dl", 0, 1);
        dl.class = Some("deadline".into());
        assert!(sched_of(&dl).unwrap_err().to_string().contains("runtime"));
        (dl.runtime, dl.period) = (Some(2_000_000), Some(10_000_000));
        assert_eq!(sched_of(&dl).unwrap().deadline_ns, 10_000_000);
    }
}
