//! The validation suite: small mixes whose scheduling the Linux model must predict — CPU hogs at
//! mixed nice values, periodic sleepers against a hog, a wake-up-heavy ping-pong pair, FIFO
//! above OTHER, two RR tasks of one priority, a SCHED_DEADLINE reservation beside hogs — on one
//! CPU and on two. Each task is a live process (`schedlab workload bursts|pingpong`); the
//! simulator's input is the case's trace, imported ([`super::replay`]).

use crate::trace::live::LiveTask;
use anyhow::{bail, Context, Result};
use schedlab_os::sched::{LinuxPolicy, SchedParams};
use std::path::Path;

const MS: u64 = 1_000_000;

/// What a task does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Behaviour {
    /// Uses the CPU until the run ends.
    Hog,
    /// Uses `run_ms` of CPU time, sleeps `sleep_ms`, again and again.
    Periodic { run_ms: f64, sleep_ms: f64 },
    /// Two threads passing a byte back and forth with `work_us` of CPU per message.
    PingPong { work_us: u64 },
    /// The same pair, each thread pinning itself to its own CPU (case CPUs `ping`, `pong`):
    /// every message crosses CPUs, and no balancer decides the layout.
    SplitPingPong { work_us: u64, ping: usize, pong: usize },
}

/// One task of a case.
#[derive(Debug, Clone)]
pub struct CaseTask {
    pub name: &'static str,
    pub behaviour: Behaviour,
    /// The workload class: None (SCHED_OTHER), "fifo", "rr", "deadline".
    pub class: Option<&'static str>,
    pub nice: i32,
    /// Linux RT priority for fifo/rr.
    pub priority: i32,
    /// SCHED_DEADLINE runtime and period (deadline = period), ms.
    pub reservation: Option<(f64, f64)>,
    /// The case's CPUs it may use (indices into the case's CPUs); None = all.
    pub pinned: Option<Vec<usize>>,
}

impl CaseTask {
    /// A SCHED_OTHER task at `nice`, free to run on the case's CPUs.
    pub(super) fn other(name: &'static str, behaviour: Behaviour, nice: i32) -> Self {
        CaseTask { name, behaviour, class: None, nice, priority: 0, reservation: None, pinned: None }
    }

    fn rt(name: &'static str, behaviour: Behaviour, class: &'static str, priority: i32) -> Self {
        CaseTask { class: Some(class), priority, ..CaseTask::other(name, behaviour, 0) }
    }

    fn on(mut self, cpu: usize) -> Self {
        self.pinned = Some(vec![cpu]);
        self
    }
}

/// A case: tasks on one or two CPUs.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: &'static str,
    pub what: &'static str,
    /// How many CPUs the case uses: 1 (the last CPU; the controller keeps the others) or every
    /// CPU of the machine.
    pub cpus: usize,
    pub tasks: Vec<CaseTask>,
    /// What the model leaves out that bears on this case (said when the case misses).
    pub model_limits: Option<&'static str>,
}

/// The suite. `two_cpus`: whether the machine has a second CPU for the two-CPU mixes.
pub fn suite(two_cpus: bool) -> Vec<Case> {
    use Behaviour::*;
    let hog = |name, nice| CaseTask::other(name, Hog, nice);
    let periodic = |name, run_ms, sleep_ms| CaseTask::other(name, Periodic { run_ms, sleep_ms }, 0);
    let mut v = vec![
        Case {
            name: "nice-hogs",
            what: "three CPU hogs at nice -5, 0 and 5 on one CPU: shares follow the nice weights",
            cpus: 1,
            model_limits: None,
            tasks: vec![hog("hog-n-5", -5), hog("hog-n0", 0), hog("hog-n5", 5)],
        },
        Case {
            name: "sleepers-vs-hog",
            what: "two periodic sleepers (2 ms every 10 ms, 1 ms every 5 ms) against a CPU hog on one CPU",
            cpus: 1,
            model_limits: Some(
                "the sleepers' switch rates follow where their wake-ups fall against the 4 ms tick and the hog's protected slice; a sleeper whose wake-ups are a mix (about a third wait behind the other sleeper, the rest run within µs) has a median that moves with that share, by several µs from repeat to repeat live and in the model",
            ),
            tasks: vec![periodic("sleep-2/8", 2.0, 8.0), periodic("sleep-1/4", 1.0, 4.0), hog("hog", 0)],
        },
        Case {
            name: "pingpong-hog",
            what: "a ping-pong pair (50 µs of work per message) beside a CPU hog on one CPU",
            cpus: 1,
            model_limits: Some(
                "the hog's switch rate has two steady states, live and in the model: the pair hands the CPU back to the hog at the tick (125/s) or halfway between ticks (250/s), and which one a run settles in is not in the trace the model replays. The kernel moves between them when something out of the tick's rhythm (the stopper thread or a kernel worker pre-empting the hog) renews the hog's deadline between ticks: whether the next tick finds its 1.4 ms slice spent is a matter of tens of µs of the pair's lag, finer than the replay keeps it. The pair's own switches follow the trace: a writer pre-empted by the partner it woke resumes only after the partner's reply (inferred by the importer, since the trace shows no block for a read that finds data)",
            ),
            tasks: vec![CaseTask::other("pingpong", PingPong { work_us: 50 }, 0), hog("hog", 0)],
        },
        Case {
            name: "fifo-over-other",
            what: "a SCHED_FIFO task (3 ms every 10 ms, priority 50) above two SCHED_OTHER hogs on one CPU",
            cpus: 1,
            model_limits: Some(
                "the FIFO task wakes in a few µs, recorded to the trace's 1 µs; the model draws from the RT pre-empting delays of every probe of the validate run pooled, and the path's cost comes in bursts (a run's own wake-ups can take 9 or 14 µs), so a 2–3 µs difference straddles the 25% tolerance",
            ),
            tasks: vec![
                CaseTask::rt("fifo-3/7", Periodic { run_ms: 3.0, sleep_ms: 7.0 }, "fifo", 50),
                hog("hog-a", 0),
                hog("hog-b", 0),
            ],
        },
        Case {
            name: "rr-pair",
            what: "two SCHED_RR hogs of priority 10 on one CPU: 100 ms turns",
            cpus: 1,
            model_limits: Some(
                "with 100 ms turns the window holds about 25 switches per task, so where it cuts a turn moves the rate by about 4% per switch",
            ),
            tasks: vec![CaseTask::rt("rr-a", Hog, "rr", 10), CaseTask::rt("rr-b", Hog, "rr", 10)],
        },
    ];
    if two_cpus {
        let dl = CaseTask { reservation: Some((2.0, 10.0)), ..CaseTask::rt("dl-2/10", Hog, "deadline", 0) };
        v.extend([
            Case {
                name: "deadline-beside-hogs",
                what: "a SCHED_DEADLINE hog reserved 2 ms every 10 ms beside one CPU hog per CPU (DEADLINE tasks \
                       cannot be pinned to part of the machine)",
                cpus: 2,
                model_limits: Some(
                "the hogs' switch rates follow what else runs on each CPU: the deadline task alternates between the CPUs at each replenishment (push_dl_task), live and in the model, and the host's tasks (this controller, the VM's agent) pre-empt the hog of the CPU they woke on, which the replay takes from the trace (each of their bursts held on the CPU it began on); a repeat whose hogs' rates the replay's host tasks do not account for is not explained",
                ),
                tasks: vec![dl, hog("hog-cpu0", 0).on(0), hog("hog-cpu1", 0).on(1)],
            },
            Case {
                name: "nice-hogs-2cpu",
                what: "four CPU hogs at nice -5, 0, 0 and 5 on two CPUs",
                cpus: 2,
                model_limits: Some(
                "the lone nice -5 hog's switch rate is mostly the host's tasks pre-empting it, which the replay holds on the CPUs they ran on live, so it follows how often they woke on its CPU in that repeat (the replay opens the window with the hog on the kernel's CPU); and the kernel moves the nice 5 hog onto its CPU and back in some repeats, the model seldom does",
                ),
                tasks: vec![hog("hog-n-5", -5), hog("hog-n0-a", 0), hog("hog-n0-b", 0), hog("hog-n5", 5)],
            },
            Case {
                name: "sleepers-vs-hogs-2cpu",
                what: "two periodic sleepers against two CPU hogs on two CPUs",
                cpus: 2,
                model_limits: Some(
                "as in sleepers-vs-hog; the hogs' rates also follow which sleeper and which of the host's tasks share each hog's CPU (the replay opens the window from the kernel's layout, the host's tasks held where they ran), and the model's balancer moves sleep-2/8 a few times a repeat where the kernel keeps it in place, with the same task loads (see the load-tracking table)",
                ),
                tasks: vec![
                    periodic("sleep-2/8", 2.0, 8.0),
                    periodic("sleep-1/4", 1.0, 4.0),
                    hog("hog-a", 0),
                    hog("hog-b", 0),
                ],
            },
            Case {
                name: "pingpong-hogs-2cpu",
                what: "a ping-pong pair beside two CPU hogs on two CPUs",
                cpus: 2,
                model_limits: Some(
                "the layout a repeat settles in decides every rate — the pair gathered on one CPU (switching at every message with 2 µs wake-ups, the hogs sharing the other CPU at the tick) or each pair thread beside a hog; the replay opens the window from the kernel's layout, and the model's balancer may regroup the tasks after; it starts the pong thread where the kernel forked it (the fork follows each CPU's blocked utilisation and capacity, which nothing here shows), and which task the first balances then move is decided on a knife edge: the lone hog's CPU pulls load, and the imbalance it may pull, half the difference of the two CPUs' loads, is by the case's make-up about one pair thread's load ((p + q + h − h′)/2 against p), so whether a pair thread or a hog moves turns on a few units of PELT load and on which task runs at that tick — the model's loads are the kernel's within a few percent, not within those units, and it falls on either side, not on the kernel's side in each repeat; earlier still, in the first milliseconds, a pipe wake-up that pulls a pair thread to its partner's CPU races an idle CPU's pull of a hog at a tick, tens of µs apart (docs/validate.md, Layouts on two CPUs); with the layout fixed (pingpong-split-hogs-2cpu) the model predicts it",
                ),
                tasks: vec![CaseTask::other("pingpong", PingPong { work_us: 50 }, 0), hog("hog-a", 0), hog("hog-b", 0)],
            },
            Case {
                name: "pingpong-split-hogs-2cpu",
                what: "a ping-pong pair split across two CPUs (each thread pinned to its own) with a CPU hog pinned \
                       beside each: pingpong-hogs-2cpu with the layout fixed, so every wake-up crosses CPUs and \
                       pre-empts a hog",
                cpus: 2,
                model_limits: Some(
                "each message wakes a thread on the other CPU, where it pre-empts the hog or waits for the hog's tick; the model draws the cross-CPU wake-up delays from the probe's own split pair, and lacks the live wake-ups that wait for the hog's next tick",
                ),
                tasks: vec![
                    CaseTask::other("pingpong", SplitPingPong { work_us: 50, ping: 0, pong: 1 }, 0),
                    hog("hog-a", 0).on(0),
                    hog("hog-b", 0).on(1),
                ],
            },
            Case {
                name: "fifo-over-other-2cpu",
                what: "two SCHED_FIFO tasks (3 ms every 10 ms) above two SCHED_OTHER hogs on two CPUs",
                cpus: 2,
                model_limits: Some(
                "the hogs' shares and switch rates follow which CPU each FIFO task runs on and when balancing moves a hog; with a CPU's capacity reduced by its FIFO tasks its hog is a balancing source, the busy CPU pulls it after failed attempts and the other CPU, idle between FIFO runs, pulls a hog back — and which of the two hogs then sharing a CPU waits at that instant, and comes back, is chance the model draws apart from the kernel: a swap reads as two shares off",
                ),
                tasks: vec![
                    CaseTask::rt("fifo-a", Periodic { run_ms: 3.0, sleep_ms: 7.0 }, "fifo", 50),
                    CaseTask::rt("fifo-b", Periodic { run_ms: 3.0, sleep_ms: 7.0 }, "fifo", 40),
                    hog("hog-a", 0),
                    hog("hog-b", 0),
                ],
            },
        ]);
    }
    v
}

impl Case {
    /// Groups of tasks that are the same program under the same scheduling on the same CPUs
    /// (two identical hogs): nothing but their names tells them apart, so the judgement compares
    /// them as a set ([`super::judge::judge`]).
    pub fn interchangeable(&self) -> Vec<Vec<String>> {
        let mut groups: Vec<Vec<&CaseTask>> = Vec::new();
        for t in &self.tasks {
            match groups.iter_mut().find(|g| g[0].same_as(t)) {
                Some(g) => g.push(t),
                None => groups.push(vec![t]),
            }
        }
        groups.into_iter().filter(|g| g.len() > 1).map(|g| g.iter().map(|t| t.name.to_string()).collect()).collect()
    }
}

impl CaseTask {
    /// Whether `other` does the same thing under the same scheduling on the same CPUs.
    fn same_as(&self, other: &CaseTask) -> bool {
        self.behaviour == other.behaviour
            && self.class == other.class
            && self.nice == other.nice
            && self.priority == other.priority
            && self.reservation == other.reservation
            && self.pinned == other.pinned
    }
}

impl CaseTask {
    /// The Linux scheduling it runs under.
    fn sched(&self) -> Result<SchedParams> {
        Ok(match self.class {
            None => SchedParams::other_nice(self.nice),
            Some("fifo") => SchedParams::new(LinuxPolicy::Fifo, self.priority),
            Some("rr") => SchedParams::new(LinuxPolicy::Rr, self.priority),
            Some("deadline") => {
                let (runtime, period) = self.reservation.context("a deadline task needs a reservation")?;
                let (runtime, period) = ((runtime * MS as f64) as u64, (period * MS as f64) as u64);
                SchedParams::deadline(runtime, period, period)?
            }
            Some(c) => bail!("task {}: no class {c}", self.name),
        })
    }

    /// An RT hog: RT throttling stops it, and the trace may lose its return.
    fn rt_hog(&self) -> bool {
        self.behaviour == Behaviour::Hog && matches!(self.class, Some("fifo") | Some("rr"))
    }

    /// `schedlab workload …` arguments that do what the task does for `duration_ns` (and a
    /// little longer: the run is stopped from outside); `host_cpus[i]` is the case's CPU `i`.
    fn argv(&self, exe: &Path, duration_ns: u64, host_cpus: &[usize]) -> Vec<String> {
        let mut argv = vec![exe.display().to_string(), "workload".into()];
        let more: Vec<String> = match self.behaviour {
            Behaviour::Hog => vec!["bursts".into(), "--stopped-start".into(), "--ms".into(), "inf".into()],
            Behaviour::Periodic { run_ms, sleep_ms } => {
                let cycles = duration_ns as f64 / ((run_ms + sleep_ms) * MS as f64);
                let repeat = cycles.ceil() as u64 + 2;
                vec![
                    "bursts".into(),
                    "--stopped-start".into(),
                    "--ms".into(),
                    format!("{run_ms},{sleep_ms}"),
                    "--repeat".into(),
                    repeat.to_string(),
                ]
            }
            Behaviour::PingPong { work_us } | Behaviour::SplitPingPong { work_us, .. } => {
                let mut v = vec![
                    "pingpong".into(),
                    "--stopped-start".into(),
                    "--for".into(),
                    format!("{}ms", duration_ns / MS + 1000),
                    "--work".into(),
                    format!("{work_us}us"),
                ];
                if let Behaviour::SplitPingPong { ping, pong, .. } = self.behaviour {
                    v.extend(["--split".to_string(), format!("{},{}", host_cpus[ping], host_cpus[pong])]);
                }
                v
            }
        };
        argv.extend(more);
        argv
    }
}

/// The file an RT hog of a case notes its time off the CPU in (`workload bursts --gaps-out`).
pub fn gaps_file(dir: &Path, task: &str) -> std::path::PathBuf {
    dir.join(format!("{}.gaps", task.replace('/', "_")))
}

impl Case {
    /// The live tasks, in case order: `host_cpus[i]` is the case's CPU `i`. RT hogs note their
    /// gaps in `gaps_dir` when given ([`gaps_file`]).
    pub fn live_tasks(
        &self,
        exe: &Path,
        host_cpus: &[usize],
        duration_ns: u64,
        gaps_dir: Option<&Path>,
    ) -> Result<Vec<LiveTask>> {
        if host_cpus.len() != self.cpus {
            bail!("case {} runs on {} CPU(s), given {:?}", self.name, self.cpus, host_cpus);
        }
        self.tasks
            .iter()
            .map(|t| {
                let sched = t.sched().with_context(|| format!("case {}", self.name))?;
                let cpus = match (&t.pinned, sched.policy) {
                    // SCHED_DEADLINE refuses an affinity narrower than its root domain.
                    (_, LinuxPolicy::Deadline) => None,
                    (Some(p), _) => Some(p.iter().map(|&i| host_cpus[i]).collect()),
                    (None, _) => Some(host_cpus.to_vec()),
                };
                let mut argv = t.argv(exe, duration_ns, host_cpus);
                if let Some(dir) = gaps_dir.filter(|_| t.rt_hog()) {
                    argv.extend(["--gaps-out".to_string(), gaps_file(dir, t.name).display().to_string()]);
                }
                Ok(LiveTask { name: t.name.to_string(), argv, sched, cpus, arrival_ns: 0, stopped_start: true })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_becomes_live_tasks_on_its_cpus() {
        let exe = Path::new("/x/schedlab");
        for c in suite(true) {
            let host: Vec<usize> = if c.cpus == 1 { vec![1] } else { vec![0, 1] };
            let live = c.live_tasks(exe, &host, 2_000 * MS, None).unwrap_or_else(|e| panic!("{}: {e}", c.name));
            assert_eq!(live.len(), c.tasks.len(), "{}", c.name);
            for (l, t) in live.iter().zip(&c.tasks) {
                assert_eq!(l.argv[..2], [exe.display().to_string(), "workload".into()]);
                match (&l.cpus, l.sched.policy) {
                    (None, LinuxPolicy::Deadline) => {}
                    (Some(cpus), _) => assert!(cpus.iter().all(|c| host.contains(c)), "{}: {cpus:?}", t.name),
                    (None, p) => panic!("{}: {p:?} without CPUs", t.name),
                }
            }
            assert!(c.live_tasks(exe, &[0, 1, 2], MS, None).is_err(), "the CPU count is checked");
        }
        let dl = suite(true).into_iter().find(|c| c.name == "deadline-beside-hogs").unwrap();
        let live = dl.live_tasks(exe, &[0, 1], 1_000 * MS, None).unwrap();
        assert_eq!((live[0].sched.runtime_ns, live[0].sched.period_ns), (2 * MS, 10 * MS));
        assert_eq!((live[1].cpus.clone(), live[2].cpus.clone()), (Some(vec![0]), Some(vec![1])));
        // The split pair pins its threads itself, to the host CPUs behind the case's 0 and 1.
        let split = suite(true).into_iter().find(|c| c.name == "pingpong-split-hogs-2cpu").unwrap();
        let live = split.live_tasks(exe, &[2, 3], 1_000 * MS, None).unwrap();
        assert_eq!(live[0].argv[2..3], ["pingpong".to_string()]);
        assert_eq!(live[0].argv[live[0].argv.len() - 2..], ["--split", "2,3"].map(String::from));
        assert_eq!((live[1].cpus.clone(), live[2].cpus.clone()), (Some(vec![2]), Some(vec![3])));
        let sleepers = suite(false).into_iter().find(|c| c.name == "sleepers-vs-hog").unwrap();
        let live = sleepers.live_tasks(exe, &[1], 1_000 * MS, None).unwrap();
        assert_eq!(
            live[0].argv[2..],
            ["bursts", "--stopped-start", "--ms", "2,8", "--repeat", "102"].map(String::from)
        );
        assert_eq!(live[2].argv[2..], ["bursts", "--stopped-start", "--ms", "inf"].map(String::from));
        assert_eq!(suite(false).len(), 5, "the two-CPU mixes need a second CPU");
        // RT hogs, and only they, note their gaps when asked.
        let rr = suite(false).into_iter().find(|c| c.name == "rr-pair").unwrap();
        let live = rr.live_tasks(exe, &[1], 1_000 * MS, Some(Path::new("/tmp/g"))).unwrap();
        assert_eq!(live[0].argv[6..], ["--gaps-out", "/tmp/g/rr-a.gaps"].map(String::from));
        let live = sleepers.live_tasks(exe, &[1], 1_000 * MS, Some(Path::new("/tmp/g"))).unwrap();
        assert!(live.iter().all(|t| !t.argv.iter().any(|a| a == "--gaps-out")));
    }

    #[test]
    fn identical_tasks_and_only_they_are_interchangeable() {
        let groups = |name: &str| suite(true).into_iter().find(|c| c.name == name).unwrap().interchangeable();
        let pair = |a: &str, b: &str| vec![vec![a.to_string(), b.to_string()]];
        assert_eq!(groups("nice-hogs"), Vec::<Vec<String>>::new(), "different nice values");
        assert_eq!(groups("fifo-over-other"), pair("hog-a", "hog-b"));
        assert_eq!(groups("rr-pair"), pair("rr-a", "rr-b"));
        assert_eq!(groups("nice-hogs-2cpu"), pair("hog-n0-a", "hog-n0-b"));
        assert_eq!(groups("sleepers-vs-hogs-2cpu"), pair("hog-a", "hog-b"), "the sleepers differ");
        assert_eq!(groups("fifo-over-other-2cpu"), pair("hog-a", "hog-b"), "the FIFO tasks' priorities differ");
        assert!(groups("deadline-beside-hogs").is_empty(), "hogs pinned to different CPUs");
        assert!(groups("pingpong-split-hogs-2cpu").is_empty(), "hogs pinned to different CPUs");
    }
}
