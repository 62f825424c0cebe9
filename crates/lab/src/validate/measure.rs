//! One run of one case: the tasks live under a recording, the trace imported and replayed under
//! each model, and every model's timeline compared with the live one over the measured window
//! (the run after a warm-up, until the stop).

use super::cases::Case;
use super::judge::Tolerances;
use super::layout::Layout;
use super::recording::Recording;
use super::replay::{self, LiveTrace, Model};
use super::signals::{self, Pairing, TaskSignals};
use crate::trace::live;
use anyhow::{Context, Result};
use schedlab_sim::engine::WakeDelays;
use schedlab_trace::compare::TaskComparison;
use schedlab_trace::import::Note;
use schedlab_trace::trim::Trimmed;
use schedlab_trace::{compare, CompareOptions, Comparison, ParseStats, Pid, Timeline};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// How a case is run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunPlan {
    /// How long the tasks run (ns).
    pub duration_ns: u64,
    /// The start of the run left out of the comparison (ns): tasks starting, first placements.
    pub warmup_ns: u64,
    /// The host CPUs of a one-CPU case (the last CPU) and of a two-CPU case.
    pub one_cpu: Vec<usize>,
    pub two_cpus: Vec<usize>,
    /// Replays of each run under each model, each with its own draw of the wake-up delays
    /// ([`super::draws`]); the most typical is judged.
    pub draws: usize,
}

/// One model's replay of a run.
#[derive(Debug, Clone, Serialize)]
pub struct ModelRun {
    pub label: &'static str,
    pub spec: String,
    pub tick_ns: Option<u64>,
    /// `a` = live, `b` = the model; task names are the case's. Of the draw judged.
    pub comparison: Comparison,
    /// Which of the replay's draws of the wake-up delays is judged (the medoid, [`super::draws`]).
    pub draw: usize,
    /// Every draw's task comparisons (`draws[draw]` is `comparison.tasks`).
    #[serde(skip)]
    pub draws: Vec<Vec<TaskComparison>>,
    /// In how many draws the model laid the tasks out as the kernel did (cases on more than one
    /// CPU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub draws_with_live_layout: Option<usize>,
    /// Tasks of a two-CPU case the replay put on the kernel's CPU when the compared window
    /// opened ([`super::start_layout`]), in the draw judged.
    pub layout_moved: usize,
    /// The case tasks' load-tracking signals beside the kernel's (`linux` on two CPUs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<TaskSignals>,
    /// Where the case's tasks ran in the window (cases on more than one CPU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<Layout>,
    /// How many of the forks the replay started where the kernel did, the model's fork rule
    /// would have placed there too (`linux` on more than one CPU, when the case forks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forks: Option<ForksPlaced>,
    /// When (since the release, ns) the fair tasks' places were set to the kernel's readings,
    /// one entry per CPU set (`linux`; [`super::start_rounds`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub places_set_ns: Vec<u64>,
    /// The first stretch in which a case task's switch-ins differ from live beyond the goal, in
    /// the draw judged ([`super::parted`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parted: Option<super::parted::Parted>,
    #[serde(skip)]
    pub timeline: Timeline,
}

/// The model's fork rule beside the kernel's placements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ForksPlaced {
    pub forks: usize,
    /// Where the rule, asked in the replay's state at the fork, chose the CPU the kernel chose.
    pub as_the_kernel: usize,
}

impl ForksPlaced {
    /// From the policy's record (task, the rule's CPU, the CPU given); None without forks.
    fn of(checked: &[(usize, usize, usize)]) -> Option<Self> {
        let as_the_kernel = checked.iter().filter(|(_, rule, given)| rule == given).count();
        (!checked.is_empty()).then_some(ForksPlaced { forks: checked.len(), as_the_kernel })
    }
}

/// One live run of a case and its replays.
#[derive(Debug, Clone, Serialize)]
pub struct CaseRun {
    pub case: String,
    pub repeat: usize,
    pub host_cpus: Vec<usize>,
    /// The compared window, relative to the release (ns).
    pub window_ns: (u64, u64),
    pub parse: ParseStats,
    /// Events the timeline builder found contradictory (and repaired), over the whole trace.
    pub anomalies: usize,
    /// Runs whose end the trace lost, shortened to the CPU time the kernel counted for their
    /// task ([`schedlab_trace::trim`]).
    pub lost_ends: Trimmed,
    /// Tasks whose demand the replay left open (CPU hogs).
    pub open: Vec<String>,
    /// Where the live tick fell (the replays' ticks are put there), when the trace shows it.
    pub tick_phase: Option<schedlab_trace::TickPhase>,
    /// Where the RT period's boundaries fell, when an RT hog was throttled (the `linux` replay
    /// puts its boundaries there, and the live timeline counts a throttled hog from them).
    pub rt_period: Option<RtPeriodSeen>,
    /// Everything else the kernel ran on the case's CPUs in the window (kernel threads, this
    /// controller, other programs): what the models do not see.
    pub interference: Interference,
    /// What the import could not reconstruct or guessed.
    pub import_notes: Vec<Note>,
    /// Where the case's tasks ran live in the window (cases on more than one CPU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub layout: Option<Layout>,
    pub models: Vec<ModelRun>,
    /// The `linux` model's fair rules beside the kernel's decisions (one-CPU cases).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shadow: Option<super::shadow::ShadowCount>,
    /// The live timeline (CPUs numbered as the case's: `host_cpus[i]` is `i`) and the trace,
    /// kept for the figure and the data files; the models' timelines are numbered alike.
    #[serde(skip)]
    pub live: Timeline,
    #[serde(skip)]
    pub trace_text: String,
    /// The kernel's places for the case's threads, read beside the trace (the shadow's).
    #[serde(skip)]
    pub kernel_positions: Vec<schedlab_trace::kernel_positions::KernelPosition>,
    #[serde(skip)]
    pub release_ns: u64,
}

/// The case's name for each of its tasks: the case task's name for a process, `name/comm` for a
/// thread it started.
fn names(case: &Case, tl: &Timeline, roots: &[Pid]) -> BTreeMap<Pid, String> {
    let mut m = BTreeMap::new();
    for (task, &root) in case.tasks.iter().zip(roots) {
        for pid in tl.descendants(root) {
            let name = if pid == root {
                task.name.to_string()
            } else {
                format!("{}/{}", task.name, tl.tasks.get(&pid).map_or("?", |t| t.comm.as_str()))
            };
            m.insert(pid, name);
        }
    }
    m
}

/// Other tasks on the case's CPUs over the window.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Interference {
    /// Their CPU time / (window × case CPUs).
    pub share: f64,
    pub switch_ins_per_s: f64,
    /// The three that ran most, with their CPU time (ns).
    pub top: Vec<(String, u64)>,
}

fn interference(
    tl: &Timeline,
    case_pids: &std::collections::BTreeSet<Pid>,
    cpus: usize,
    start: u64,
    end: u64,
) -> Interference {
    let window = end.saturating_sub(start).max(1);
    let (mut cpu_ns, mut ins, mut by_task) = (0u64, 0u64, Vec::new());
    for t in tl.tasks.values().filter(|t| t.pid != 0 && !case_pids.contains(&t.pid)) {
        let runs = t.runs.iter().filter(|r| r.cpu < cpus && r.end > start && r.start < end);
        let (mut mine, mut n) = (0, 0);
        for r in runs {
            mine += r.end.min(end) - r.start.max(start);
            n += u64::from(r.start >= start);
        }
        if mine > 0 {
            by_task.push((format!("{}-{}", t.comm, t.pid), mine));
        }
        cpu_ns += mine;
        ins += n;
    }
    by_task.sort_by_key(|t| std::cmp::Reverse(t.1));
    by_task.truncate(3);
    Interference {
        share: cpu_ns as f64 / (window as f64 * cpus as f64),
        switch_ins_per_s: ins as f64 / (window as f64 / 1e9),
        top: by_task,
    }
}

/// The RT period of a run, from the throttles its trace shows and the gaps its RT hogs noted.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct RtPeriodSeen {
    pub period: schedlab_trace::RtPeriod,
    /// Throttles that gave it.
    pub throttles: usize,
}

/// What [`super::rt_period::infer`] finds in a run whose RT hogs noted their gaps in `dir`.
fn rt_period_of(
    text: &str,
    tasks: &[live::LiveTask],
    pids: &[i32],
    dir: &Path,
) -> Option<(schedlab_trace::RtPeriod, usize)> {
    let gaps: BTreeMap<Pid, Vec<(u64, u64)>> = tasks
        .iter()
        .zip(pids)
        .filter_map(|(t, &pid)| {
            let g = crate::workloads::gaps::read(&super::cases::gaps_file(dir, &t.name)).ok()?;
            Some((pid, g))
        })
        .collect();
    super::rt_period::infer(text, &gaps, super::rt_period::host_period_ns()?)
}

/// `tl` with the case's CPUs numbered 0.. in `host` order (other CPUs after them), so
/// per-CPU agreement is over the case's CPUs whichever host CPUs they are.
fn on_case_cpus(tl: &Timeline, host: &[usize]) -> Timeline {
    let index = |c: usize| host.iter().position(|&h| h == c).unwrap_or(host.len() + c);
    let mut out = tl.clone();
    for t in out.tasks.values_mut() {
        for r in &mut t.runs {
            r.cpu = index(r.cpu);
        }
        for w in &mut t.wakes {
            w.cpu = index(w.cpu);
        }
        for m in &mut t.migrate_events {
            (m.from, m.to) = (index(m.from), index(m.to));
        }
    }
    out.cpus = host.len();
    out
}

/// A live run of a case, recorded and imported, not yet replayed.
pub struct Recorded {
    pub repeat: usize,
    host_cpus: Vec<usize>,
    run: live::LiveRun,
    parse: ParseStats,
    anomalies: usize,
    lost_ends: Trimmed,
    rt_period: Option<RtPeriodSeen>,
    replay: replay::Replay,
    pids: std::collections::BTreeSet<Pid>,
    opts: CompareOptions,
    label: BTreeMap<Pid, String>,
    live_on_case: Timeline,
}

/// Run `case` once (repeat number `repeat`) under a recording: the run as it was recorded, with
/// what only the live run can find out (the RT period, from the gaps the RT hogs noted).
pub fn record_case(case: &Case, repeat: usize, plan: &RunPlan, exe: &Path) -> Result<Recording> {
    let host_cpus = if case.cpus == 1 { plan.one_cpu.clone() } else { plan.two_cpus.clone() };
    let gaps_dir = tempfile::tempdir().context("a directory for the RT hogs' gaps")?;
    let tasks = case.live_tasks(exe, &host_cpus, plan.duration_ns, Some(gaps_dir.path()))?;
    let run = live::run(&tasks, Duration::from_nanos(plan.duration_ns), &|_| {})
        .with_context(|| format!("running case {}", case.name))?;
    let rt_period = rt_period_of(&run.text, &tasks, &run.pids, gaps_dir.path())
        .map(|(period, throttles)| RtPeriodSeen { period, throttles });
    Ok(Recording::new(case.name, repeat, host_cpus, rt_period, run))
}

/// Import a recorded run of `case`, workload time 0 on the live tick when the models run with
/// one (`tick_ns`).
pub fn import_case(case: &Case, recording: Recording, plan: &RunPlan, tick_ns: Option<u64>) -> Recorded {
    let Recording { repeat, host_cpus, rt_period, run, .. } = recording;
    let (mut tl, parse) =
        Timeline::from_text_with(&run.text, Some(schedlab_trace::Format::Tracefs), rt_period.map(|r| r.period));
    let lost_ends = run.meta.cpu_times.as_ref().map(|c| tl.trim_lost_ends(&c.ns, c.window)).unwrap_or_default();
    let trace = LiveTrace {
        timeline: &tl,
        meta: &run.meta,
        roots: &run.pids,
        release_ns: run.release_ns,
        end_ns: run.end_ns,
        cpus: &host_cpus,
        tick_ns,
    };
    let mut replay = replay::workload(&trace);
    replay.rt_period = rt_period.map(|r| r.period);
    let pids = trace.pids();
    let start = run.release_ns + plan.warmup_ns;
    let opts =
        CompareOptions { start, end: run.end_ns.max(start + 1), cpus: Some(case.cpus), pids: Some(pids.clone()) };
    let label = names(case, &tl, &run.pids);
    let live_on_case = on_case_cpus(&tl, &host_cpus);
    Recorded {
        repeat,
        host_cpus,
        parse,
        anomalies: tl.anomalies.len(),
        lost_ends,
        rt_period,
        replay,
        pids,
        opts,
        label,
        live_on_case,
        run,
    }
}

/// Replay a recorded run of `case` under `models` and compare each with the live timeline.
pub fn replay_case(case: &Case, recorded: Recorded, plan: &RunPlan, models: &[Model]) -> Result<CaseRun> {
    let r = recorded;
    let start = r.opts.start;
    let layout_of = |tl: &Timeline| (case.cpus > 1).then(|| Layout::of(tl, &r.label, case.cpus, (start, r.opts.end)));
    let live_layout = layout_of(&r.live_on_case);
    let groups = case.interchangeable();
    let kernel_positions = super::shadow::positions(&r.run.signals);
    let start_rounds = super::start_rounds::start_rounds(&r.replay, &r.live_on_case, &kernel_positions, start);
    let start_layout = super::start_layout::start_layout(&r.replay, &r.live_on_case, &r.pids, start);
    let mut model_runs = Vec::with_capacity(models.len());
    for m in models {
        let spec = replay::spec_for(&r.replay, m);
        let model_error = |e: schedlab_sim::policies::SpecError| anyhow::anyhow!("model {spec}: {e}");
        let util_est = replay::util_est_at_start(&r.replay, &r.run.at_release);
        let mut tries = Vec::with_capacity(plan.draws.max(1));
        for draw in 0..plan.draws.max(1) as u64 {
            let m = Model { wake: WakeDelays { draw, ..m.wake }, ..m.clone() };
            // The fair tasks start where the kernel's readings put them against each other; the
            // balancer's inputs are set beside the kernel's where there is balancing.
            let (result, log, forks, places, moved) = if m.label == "linux" {
                let linux = schedlab_sim::policies::linux_by_spec(&spec)
                    .map_err(model_error)?
                    .with_start_positions(start_rounds.clone());
                let mut linux = if case.cpus > 1 {
                    linux
                        .keep_signals()
                        .with_util_est(util_est.iter().copied())
                        .with_balance_draw(draw)
                        .with_start_layout(start_layout.clone())
                } else {
                    linux
                };
                let result = replay::simulate_with(&r.replay, &m, &mut linux);
                let forks = ForksPlaced::of(linux.forks_checked());
                let since_release = |at: u64| (at + r.replay.t0_ns).saturating_sub(r.run.release_ns);
                let places = linux.start_positions_set().iter().map(|s| since_release(s.0)).collect();
                let moved = linux.start_layout_moves().len();
                (result, linux.signal_log().cloned(), forks, places, moved)
            } else {
                (replay::simulate_under(&r.replay, &m).map_err(model_error)?, None, None, Vec::new(), 0)
            };
            let sim = on_case_cpus(&replay::timeline(&r.replay, &result), &r.host_cpus);
            let mut comparison = compare(&r.live_on_case, &sim, &r.opts);
            for t in &mut comparison.tasks {
                if let Some(n) = r.label.get(&t.pid) {
                    t.name = n.clone();
                }
            }
            tries.push((comparison, log, sim, forks, places, moved));
        }
        let draws: Vec<Vec<TaskComparison>> = tries.iter().map(|t| t.0.tasks.clone()).collect();
        let slices: Vec<&[TaskComparison]> = draws.iter().map(Vec::as_slice).collect();
        let tol = Tolerances::default();
        let window = (start, r.opts.end);
        let draw = super::draws::medoid(&slices, &groups, &tol);
        let draws_with_live_layout = live_layout
            .as_ref()
            .map(|live| tries.iter().filter(|t| layout_of(&t.2).is_some_and(|l| l.same_as(live, &groups))).count());
        let (comparison, log, sim, forks, places, layout_moved) = tries.swap_remove(draw);
        let signals = log.map_or_else(Vec::new, |log| {
            let replayed = r.replay.imported.report.pids();
            let pairing = Pairing { pids: &replayed, t0_ns: r.replay.t0_ns, window, names: &r.label };
            signals::compare(&r.run.signals, &log, &pairing, &r.live_on_case, &sim)
        });
        let layout = layout_of(&sim);
        let tasks: Vec<(Pid, String)> = comparison.tasks.iter().map(|t| (t.pid, t.name.clone())).collect();
        let parted = super::parted::parted(&r.live_on_case, &sim, &tasks, &r.pids, window, case.cpus, tol.switches)
            .map(|p| p.on_host(&r.host_cpus));
        model_runs.push(ModelRun {
            label: m.label,
            spec,
            tick_ns: m.tick,
            comparison,
            draw,
            draws,
            draws_with_live_layout,
            signals,
            layout,
            forks,
            places_set_ns: places,
            layout_moved,
            parted,
            timeline: sim,
        });
    }
    let shadow = models.iter().find(|m| m.label == "linux").and_then(|m| {
        let spec = replay::spec_for(&r.replay, m);
        let pids: Vec<Pid> = r.pids.iter().copied().collect();
        super::shadow::count(&r.live_on_case, &pids, r.replay.tick_phase, (start, r.opts.end), &spec, &kernel_positions)
    });
    Ok(CaseRun {
        case: case.name.to_string(),
        repeat: r.repeat,
        host_cpus: r.host_cpus.clone(),
        window_ns: (plan.warmup_ns, r.run.end_ns - r.run.release_ns),
        parse: r.parse,
        anomalies: r.anomalies,
        lost_ends: r.lost_ends,
        interference: interference(&r.live_on_case, &r.pids, case.cpus, start, r.run.end_ns),
        open: r.replay.open.iter().map(|p| r.label.get(p).cloned().unwrap_or_else(|| p.to_string())).collect(),
        tick_phase: r.replay.tick_phase,
        rt_period: r.rt_period,
        import_notes: r.replay.imported.report.notes,
        layout: live_layout,
        models: model_runs,
        shadow,
        live: r.live_on_case,
        trace_text: r.run.text,
        release_ns: r.run.release_ns,
        kernel_positions,
    })
}
