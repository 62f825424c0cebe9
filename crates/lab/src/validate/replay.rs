//! A live case replayed in the simulator: the case's trace imported as a workload (each task's
//! arrival, CPU bursts, blocked times, policy and affinity, as `schedlab trace import` does it),
//! simulated under a model, and turned back into a timeline with the live pids and the trace's
//! clock, so [`schedlab_trace::compare`] can lay the two side by side.
//!
//! A task that never blocked and was still there when the run stopped (a CPU hog) has no known
//! end to its demand: the trace shows only how much CPU the kernel happened to give it. Its last
//! burst is made open-ended, so the model decides how much CPU it gets; otherwise the replay
//! would hand every hog exactly its live CPU time and its share could not be wrong.
//!
//! Everything else that ran on the case's CPUs (kernel threads, this controller, other
//! programs) is replayed too, with the bursts and blocked times it had, each CPU burst held to
//! the CPU it began on live: the kernel scheduled the case's tasks around it, so the model must
//! as well, and where the kernel put it is not what the replay predicts (a daemon the model
//! left on the CPU it woke on, where the kernel had moved it, would pre-empt the other CPU's
//! hog in its place). Only the case's tasks are judged.
//!
//! Workload time 0 is put on a tick of the live kernel ([`schedlab_trace::tick_phase`]), at or
//! before the release: the model's ticks then fall where the kernel's did. Which task a tick
//! ends and whether a wake-up comes before or after it follow from that phase, and a replay
//! with its ticks elsewhere can settle into another steady pattern than the kernel did (a hog
//! beside a ping-pong pair switching at every tick or at every other).

use crate::simstudy::compare::TickChoice;
use schedlab_os::sched_signals::SchedSignals;
use schedlab_sim::engine::{simulate, SimConfig, SimResult, WakeDelays};
use schedlab_sim::policies::{by_spec, SpecError};
use schedlab_sim::policy::Policy;
use schedlab_sim::workload::Workload;
use schedlab_sim::Dur;
use schedlab_trace::{
    import, FromSimOptions, ImportOptions, Imported, Pid, RtPeriod, Select, TickPhase, Timeline, TraceMeta,
};
use std::collections::{BTreeMap, BTreeSet};

/// The live run a replay starts from.
pub struct LiveTrace<'a> {
    pub timeline: &'a Timeline,
    pub meta: &'a TraceMeta,
    /// The case's processes; their threads come with them.
    pub roots: &'a [Pid],
    /// The first release and the stop (trace clock, ns).
    pub release_ns: u64,
    pub end_ns: u64,
    /// The host CPUs the case runs on.
    pub cpus: &'a [usize],
    /// The host's scheduler tick (ns), if the models run with one.
    pub tick_ns: Option<u64>,
}

impl LiveTrace<'_> {
    /// Every task of the case: the roots and what they forked.
    pub fn pids(&self) -> BTreeSet<Pid> {
        self.roots.iter().flat_map(|&r| self.timeline.descendants(r)).collect()
    }

    /// Every task but the case's (`case`: [`Self::pids`]) that ran on the case's CPUs between
    /// the release and the stop, with the CPUs it ran on then.
    pub fn others(&self, case: &BTreeSet<Pid>) -> Vec<(Pid, Vec<usize>)> {
        let mut out = Vec::new();
        for t in self.timeline.tasks.values().filter(|t| t.pid != 0 && !case.contains(&t.pid)) {
            let runs: Vec<usize> =
                t.runs.iter().filter(|r| r.end > self.release_ns && r.start < self.end_ns).map(|r| r.cpu).collect();
            if runs.iter().any(|c| self.cpus.contains(c)) {
                let mut cpus = runs;
                cpus.sort_unstable();
                cpus.dedup();
                out.push((t.pid, cpus));
            }
        }
        out
    }
}

/// The imported workload, with CPU hogs left open.
pub struct Replay {
    pub imported: Imported,
    /// The tasks whose last burst was opened.
    pub open: Vec<Pid>,
    /// The simulation stops here (workload time).
    pub horizon_ns: u64,
    /// Trace time of workload time 0: the release, or the live tick at or before it.
    pub t0_ns: u64,
    /// The live tick's phase, when the trace shows it.
    pub tick_phase: Option<TickPhase>,
    /// The RT period's boundaries on the trace clock, when the run showed them.
    pub rt_period: Option<RtPeriod>,
}

/// Import the case's tasks and everything else that ran on its CPUs from `live`, workload time
/// 0 at the release or at the live tick just before it.
pub fn workload(live: &LiveTrace) -> Replay {
    let mut all = live.pids();
    let others = live.others(&all);
    all.extend(others.iter().map(|(p, _)| *p));
    let mut opts = ImportOptions::new(Select::Pids(all));
    opts.t0 = Some(live.release_ns);
    opts.align_tick = live.tick_ns;
    opts.not_before = Some(live.release_ns);
    opts.start_at_exec = true;
    opts.meta = Some(live.meta.clone());
    opts.held = others.iter().map(|(p, _)| *p).collect();
    // Every task starts where the kernel first ran it, a forked one too: where a fork starts
    // hangs on each CPU's blocked utilisation and capacity, which neither the trace nor /proc
    // shows (debugfs refuses them here); the fork rule is asked beside it (`ForksPlaced`).
    opts.fork_cpus = true;
    let mut imported = import(live.timeline, &opts);
    let (t0_ns, tick_phase) = (imported.report.t0, imported.report.tick_phase);
    let horizon_ns = live.end_ns.saturating_sub(t0_ns);
    let mut open = Vec::new();
    for (task, pid) in imported.workload.tasks.iter_mut().zip(imported.report.pids()) {
        if let Some((_, cpus)) = others.iter().find(|(p, _)| *p == pid) {
            task.affinity = Some(cpus.clone());
            continue;
        }
        let Some(t) = live.timeline.tasks.get(&pid) else { continue };
        let blocked = t.blocked.iter().any(|b| b.end > live.release_ns && b.start < live.end_ns);
        let alive = t.exit.is_none_or(|x| x >= live.end_ns);
        if !blocked && alive && task.bursts.len() == 1 {
            task.bursts[0] = 10 * horizon_ns.max(1);
            open.push(pid);
        }
    }
    Replay { imported, open, horizon_ns, t0_ns, tick_phase, rt_period: None }
}

/// The `util_est` the kernel had for each of the replay's tasks just before the release (read
/// by pid), by workload task: the estimate a task keeps through its sleep until the release,
/// which the trace cannot show and placement reads (`schedlab_sim::policies::linux::smp::util_est`).
pub fn util_est_at_start(replay: &Replay, at_release: &BTreeMap<i32, SchedSignals>) -> Vec<(usize, u64)> {
    let pids = replay.imported.report.pids();
    pids.iter().enumerate().filter_map(|(i, p)| Some((i, at_release.get(p)?.util_est?))).collect()
}

/// One model of the comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// What the tables call it (`linux`, `cfs`, `rr`).
    pub label: &'static str,
    pub spec: String,
    /// The scheduler tick it runs with (None: slices end exactly).
    pub tick: Option<Dur>,
    /// How long wake-ups take to act (the calibration [`super::probe::wake`] measures; 0 until
    /// given).
    pub wake: WakeDelays,
}

/// The label of a model called `name`, as [`models`] labels them.
pub fn label(name: &str) -> Option<&'static str> {
    ["linux", "cfs", "rr"].into_iter().find(|l| *l == name)
}

impl Model {
    fn new(label: &'static str, spec: String, tick: Option<Dur>) -> Self {
        Model { label, spec, tick, wake: WakeDelays::default() }
    }

    /// The model with the host's wake-up delays.
    pub fn with_wake_delays(self, wake: WakeDelays) -> Self {
        Model { wake, ..self }
    }
}

/// The models a case is replayed under on a machine of `cpus` CPUs at `hz`: this kernel
/// (`linux`, a run queue per CPU with the kernel's placement and balancing), CFS as a pre-6.6
/// kernel would have configured it here (its 6 ms latency, 0.75 ms minimum granularity and 1 ms
/// wake-up granularity scaled by 1 + ilog2(min(CPUs, 8))), both with the host's tick unless the
/// kernel ends slices exactly ([`super::probe`]), and textbook round robin with a quantum of one
/// tick.
pub fn models(cpus: usize, hz: Option<u32>, base_slice_ns: Option<u64>, exact_slices: bool) -> Vec<Model> {
    let host_tick = hz.map(|hz| 1_000_000_000 / u64::from(hz.max(1)));
    let tick = if exact_slices { None } else { host_tick };
    let factor = 1.0 + (cpus.clamp(1, 8) as f64).log2().floor();
    let linux = crate::simstudy::compare::for_host("linux", cpus, hz, base_slice_ns);
    // Newidle balancing as the probes leave it: their tasks are pinned, so every newidle balance
    // the other CPU tries fails (thousands a second beside the wake-up probe's split pair), and
    // NI_RANDOM's success ratio falls to about 0 (`schedlab_sim::policies::linux::smp::newidle`).
    let linux = format!("{linux}{}ni_ratio=0", if linux.contains(':') { ',' } else { ':' });
    let cfs = format!(
        "cfs:latency={}ms,min_granularity={}ms,wakeup_granularity={}ms",
        6.0 * factor,
        0.75 * factor,
        1.0 * factor
    );
    let quantum_ms = host_tick.unwrap_or(4_000_000) as f64 / 1e6;
    vec![
        Model::new("linux", linux, tick),
        Model::new("cfs", cfs, tick),
        Model::new("rr", format!("rr:quantum={quantum_ms}ms"), None),
    ]
}

/// The policy spec `model` replays `replay` with: the `linux` model's RT period boundaries where
/// the live run's fell.
pub fn spec_for(replay: &Replay, model: &Model) -> String {
    match replay.rt_period.filter(|_| model.spec.starts_with("linux")) {
        Some(rt) => {
            let sep = if model.spec.contains(':') { ',' } else { ':' };
            format!("{}{sep}rt_phase={}ns", model.spec, rt.phase_from(replay.t0_ns))
        }
        None => model.spec.clone(),
    }
}

/// Simulate the replay under `model` (slices recorded).
pub fn simulate_under(replay: &Replay, model: &Model) -> Result<SimResult, SpecError> {
    let mut policy = by_spec(&spec_for(replay, model))?;
    Ok(simulate_with(replay, model, policy.as_mut()))
}

/// Simulate the replay under `model` with a policy the caller built from
/// [`spec_for`]`(replay, model)` (to read its state afterwards).
pub fn simulate_with(replay: &Replay, model: &Model, policy: &mut dyn Policy) -> SimResult {
    let w: &Workload = &replay.imported.workload;
    let cfg = SimConfig {
        cpus: w.cpus.unwrap_or(1),
        horizon: Some(replay.horizon_ns),
        tick: TickChoice::Every(model.tick).for_policy(policy),
        wake: model.wake,
        ..SimConfig::default()
    };
    simulate(w, policy, &cfg)
}

/// The simulated run as a timeline on the live trace's clock and pids.
pub fn timeline(replay: &Replay, result: &SimResult) -> Timeline {
    let opts = FromSimOptions { offset: replay.t0_ns, pids: Some(replay.imported.report.pids()) };
    schedlab_trace::timeline_from_sim(result, &replay.imported.workload, &opts)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use schedlab_sim::workload::TaskSpec;
    use schedlab_trace::{render, render_sim, RenderOptions, TaskMeta};

    const MS: u64 = 1_000_000;

    /// `w` run for `horizon` under round robin with 4 ms turns on `cpus` CPUs, rendered as
    /// tracefs text from 5 ms on the trace clock and parsed back: a "live" trace whose every
    /// switch is known.
    pub(crate) fn rr_trace(w: &Workload, horizon: u64, cpus: usize) -> Timeline {
        let mut rr = by_spec("rr:quantum=4ms").unwrap();
        let r = simulate(w, rr.as_mut(), &SimConfig { horizon: Some(horizon), cpus, ..SimConfig::default() });
        let text = render_sim(&r, w, &FromSimOptions { offset: 5 * MS, pids: None }, &RenderOptions::default());
        Timeline::from_text(&text, None).0
    }

    /// The replay of every task of `tl` released at `release_ns` on `cpus`, without a tick.
    pub(crate) fn replay_all_of(tl: &Timeline, cpus: &[usize], release_ns: u64, end_ns: u64) -> Replay {
        let meta = TraceMeta { cpus: Some(cpus.len()), ..TraceMeta::default() };
        let roots: Vec<Pid> = tl.tasks.keys().copied().collect();
        workload(&LiveTrace { timeline: tl, meta: &meta, roots: &roots, release_ns, end_ns, cpus, tick_ns: None })
    }

    /// A "live" trace made by simulating a hog and a sleeper under rr and rendering it as
    /// tracefs text (it ends with the sleeper's exit, 41 ms in).
    fn synthetic() -> (Timeline, TraceMeta) {
        let mut sleeper = TaskSpec::cpu("sleeper", 0, 0);
        sleeper.bursts = vec![2 * MS, 8 * MS, 2 * MS, 8 * MS, 2 * MS, 8 * MS, 2 * MS].into();
        let w = Workload { cpus: Some(1), tasks: vec![TaskSpec::cpu("hog", 0, 1_000 * MS), sleeper] };
        let tl = rr_trace(&w, 100 * MS, 1);
        let mut meta = TraceMeta { cpus: Some(1), ..TraceMeta::default() };
        for pid in tl.tasks.keys() {
            meta.tasks.push(TaskMeta::new(*pid, schedlab_trace::SchedPolicy::Normal));
        }
        // Round trip of the text is the trace crate's business; here it only has to parse.
        assert!(!render(&tl, &RenderOptions::default()).is_empty());
        (tl, meta)
    }

    #[test]
    fn hogs_are_opened_and_sleepers_kept() {
        let (tl, meta) = synthetic();
        let roots: Vec<Pid> = tl.tasks.keys().copied().collect();
        let live = LiveTrace {
            timeline: &tl,
            meta: &meta,
            roots: &roots,
            release_ns: 5 * MS,
            end_ns: 105 * MS,
            cpus: &[0],
            tick_ns: None,
        };
        let r = workload(&live);
        assert_eq!(r.open, vec![roots[0]]);
        assert_eq!(r.horizon_ns, 100 * MS);
        let w = &r.imported.workload;
        assert_eq!(w.tasks[0].bursts.to_vec(), vec![1_000 * MS]);
        assert!(w.tasks[1].bursts.len() >= 3, "the sleeper keeps its bursts: {:?}", w.tasks[1].bursts);
        assert_eq!(w.tasks[1].bursts[..3], [2 * MS, 8 * MS, 2 * MS]);
    }

    #[test]
    fn a_replay_under_the_generating_policy_gives_the_live_timeline_back() {
        let (tl, meta) = synthetic();
        let roots: Vec<Pid> = tl.tasks.keys().copied().collect();
        let live = LiveTrace {
            timeline: &tl,
            meta: &meta,
            roots: &roots,
            release_ns: 5 * MS,
            end_ns: tl.end,
            cpus: &[0],
            tick_ns: None,
        };
        let r = workload(&live);
        let window =
            schedlab_trace::CompareOptions { start: 10 * MS, end: tl.end, cpus: Some(1), pids: Some(live.pids()) };
        let model = Model::new("rr", "rr:quantum=4ms".into(), None);
        let sim = timeline(&r, &simulate_under(&r, &model).unwrap());
        let c = schedlab_trace::compare(&tl, &sim, &window);
        assert!(c.same_task > 0.999, "same task {:.4}", c.same_task);
        for t in &c.tasks {
            assert_eq!(t.a.cpu_ns, t.b.cpu_ns, "{}", t.name);
            assert_eq!(t.a.switch_ins, t.b.switch_ins, "{}", t.name);
        }
        let other = Model::new("fcfs", "fcfs".into(), None);
        let fcfs = timeline(&r, &simulate_under(&r, &other).unwrap());
        let c = schedlab_trace::compare(&tl, &fcfs, &window);
        assert!(c.same_task < 0.8, "first come first served runs the hog throughout: {:.4}", c.same_task);
        let sleeper = c.tasks.iter().find(|t| t.name == "sleeper").unwrap();
        assert_eq!((sleeper.b.cpu_ns, sleeper.a.cpu_ns), (0, 7 * MS), "the open hog starves the sleeper under fcfs");
    }

    #[test]
    fn time_zero_goes_on_the_live_tick() {
        // Two hogs taking 4 ms turns from 5 ms on the trace clock: every turn ends at 1 ms past
        // a multiple of 4 ms, as a 4 ms tick at that phase would end it.
        let w = Workload {
            cpus: Some(1),
            tasks: vec![TaskSpec::cpu("a", 0, 1_000 * MS), TaskSpec::cpu("b", 0, 1_000 * MS)],
        };
        let tl = rr_trace(&w, 100 * MS, 1);
        let meta = TraceMeta { cpus: Some(1), ..TraceMeta::default() };
        let roots: Vec<Pid> = tl.tasks.keys().copied().collect();
        let live = LiveTrace {
            timeline: &tl,
            meta: &meta,
            roots: &roots,
            release_ns: 7 * MS + 300_000,
            end_ns: 105 * MS,
            cpus: &[0],
            tick_ns: Some(4 * MS),
        };
        let replay = workload(&live);
        let phase = replay.tick_phase.expect("the turns end on a 4 ms grid");
        assert_eq!((phase.phase_ns, phase.tick_ns), (MS, 4 * MS));
        assert_eq!(replay.t0_ns, 5 * MS, "the tick at or before the release");
        assert_eq!(replay.horizon_ns, 100 * MS);
        let untimed = workload(&LiveTrace { tick_ns: None, ..live });
        assert_eq!((untimed.t0_ns, untimed.tick_phase), (7 * MS + 300_000, None));
    }

    #[test]
    fn models_follow_the_host() {
        let m = models(2, Some(250), None, false);
        assert_eq!(m[0].spec, "linux:cpus=2,hz=250,ni_ratio=0");
        assert_eq!((m[0].tick, m[1].tick), (Some(4 * MS), Some(4 * MS)));
        assert_eq!(m[1].spec, "cfs:latency=12ms,min_granularity=1.5ms,wakeup_granularity=2ms");
        assert_eq!((m[2].spec.as_str(), m[2].tick), ("rr:quantum=4ms", None));
        assert_eq!(m.len(), 3);
        let exact = models(1, Some(1000), None, true);
        assert_eq!(exact[1].spec, "cfs:latency=6ms,min_granularity=0.75ms,wakeup_granularity=1ms");
        assert_eq!((exact[0].tick, exact[1].tick, exact[2].spec.as_str()), (None, None, "rr:quantum=1ms"));
    }
}
