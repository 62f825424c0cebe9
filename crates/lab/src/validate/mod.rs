//! `schedlab validate`: where the simulator meets the kernel it models. Each case of the suite
//! ([`cases`]) runs live on pinned CPUs under a scheduler trace ([`measure`]); the trace is
//! imported and replayed under the simulator's `linux` model (and `cfs`, `rr` for contrast,
//! [`replay`]); each model's timeline is compared with the live one — CPU shares, switches per
//! second, wake-up latency, the time both ran the same task — and judged against schedlab's goal
//! over the repeats ([`judge`]), in tables ([`tables`]) and stacked timelines ([`figure`]).

pub mod as_made;
pub mod busy;
pub mod cases;
pub mod draws;
pub mod figure;
pub mod judge;
pub mod layout;
pub mod measure;
pub mod parted;
pub mod probe;
pub mod recording;
pub mod replay;
pub mod rt_period;
pub mod shadow;
pub mod signals;
pub mod start_layout;
pub mod start_rounds;
pub mod tables;

use crate::{Experiment, RunContext, Scale};
use anyhow::{bail, Result};
use cases::Case;
use judge::{CaseJudgement, Tolerances};
use measure::{CaseRun, RunPlan};
use recording::{Recording, Setup};
use replay::Model;
use schedlab_report::section::{DataFile, Section, Status, Table};
use serde_json::json;
use std::path::Path;

const MS: u64 = 1_000_000;
/// How long each kind of the wake-up probe run before every live run lasts (about 190 timer
/// wake-ups per kind, enough for 16 quantiles).
const RUN_PROBE_SPAN: std::time::Duration = std::time::Duration::from_secs(1);

/// What to run.
#[derive(Debug, Clone)]
pub struct Params {
    /// Case names (empty = the whole suite).
    pub cases: Vec<String>,
    pub repeats: usize,
    pub duration_ns: u64,
    /// Turn autogroup off for the run (the models have no task groups), putting it back after.
    pub autogroup_off: bool,
    /// Replays of each run under each model, each with its own draw of the wake-up delays
    /// ([`draws`]).
    pub draws: usize,
}

impl Params {
    pub fn for_scale(scale: Scale) -> Params {
        let (repeats, secs, draws) = match scale {
            Scale::Quick => (2, 2, 3),
            Scale::Default => (3, 5, 5),
            Scale::Full => (5, 10, 7),
        };
        Params { cases: Vec::new(), repeats, duration_ns: secs * 1_000 * MS, autogroup_off: true, draws }
    }

    /// Rough wall time: the probes (six wake-up probes of 2 s, the DELAY_ZERO probe of 2 s and the
    /// slice probe; six of 1 s, each with its start, before every run), every run, plus a second
    /// to start and import it and a fifth of a second per draw for the replays (three models).
    pub fn estimate_s(&self, cpus: usize) -> f64 {
        let n = if self.cases.is_empty() { cases::suite(cpus >= 2).len() } else { self.cases.len() };
        // Six kinds of wake-up on two CPUs, four on one.
        let kinds = if cpus >= 2 { 6.0 } else { 4.0 };
        let probe = kinds * (RUN_PROBE_SPAN.as_secs_f64() + 0.3);
        17.0 + (n * self.repeats) as f64 * (probe + self.duration_ns as f64 / 1e9 + 1.0 + 0.2 * self.draws as f64)
    }

    /// The cases asked for, in suite order; an unknown name is an error that lists the known.
    pub fn selected(&self, two_cpus: bool) -> Result<Vec<Case>> {
        let all = cases::suite(true);
        for name in &self.cases {
            if !all.iter().any(|c| c.name == name) {
                let known: Vec<&str> = all.iter().map(|c| c.name).collect();
                schedlab_os::bail_usage!("no case '{name}' (known: {})", known.join(", "));
            }
        }
        let here = cases::suite(two_cpus);
        let chosen: Vec<Case> =
            here.into_iter().filter(|c| self.cases.is_empty() || self.cases.iter().any(|n| n == c.name)).collect();
        if chosen.is_empty() {
            bail!("the cases asked for need two CPUs; this machine has one");
        }
        Ok(chosen)
    }
}

/// Why the live cases cannot run here, if they cannot.
pub fn unsupported_reason() -> Option<String> {
    if !schedlab_os::is_root() {
        return Some("needs root: SCHED_FIFO/RR/DEADLINE tasks and a tracefs instance".into());
    }
    if let Err(e) = schedlab_os::sched::require_rt_throttling() {
        return Some(e.to_string());
    }
    if let Err(e) = schedlab_os::tracefs::TraceFs::open() {
        return Some(format!("no tracefs: {e}"));
    }
    None
}

/// Run the suite.
pub fn run(params: &Params, ctx: &RunContext) -> Result<Section> {
    let mut s = Section::new(Validate.name(), Validate.seed(), Validate.title());
    if let Some(why) = unsupported_reason() {
        s.status = Status::Unsupported(why);
        return Ok(s);
    }
    let cpus = schedlab_os::affinity::allowed_cpus()?;
    let chosen = params.selected(cpus.len() >= 2)?;
    let plan = RunPlan {
        duration_ns: params.duration_ns,
        warmup_ns: (params.duration_ns / 10).max(100 * MS),
        one_cpu: vec![*cpus.last().unwrap_or(&0)],
        two_cpus: cpus.iter().copied().take(2).collect(),
        draws: params.draws.max(1),
    };
    // Held for the whole run, so no other run starts on these CPUs between two cases.
    let locked: std::collections::BTreeSet<usize> = plan.two_cpus.iter().chain(&plan.one_cpu).copied().collect();
    let locked: Vec<usize> = locked.into_iter().collect();
    let _cpus = schedlab_os::cpulock::CpuLock::acquire(&locked, "the validation cases")?;
    // Before any probe or case starts a task: those started while it is off sit in the root
    // group with their own weights, as every model has them.
    let autogroup = params.autogroup_off.then(schedlab_os::autogroup::AutogroupOff::apply).transpose()?;
    let autogroup_said = match (&autogroup, schedlab_os::sched::autogroup_enabled()) {
        (Some(g), _) if g.changed() => "autogroup turned off for the run (the models have no task groups)",
        (_, false) => "autogroup off",
        (_, true) => "autogroup on (kept): the case's tasks share their session's task group, which no model has",
    };
    let exe = std::env::current_exe()?;
    let host_tick = ctx.machine.hz.map(|hz| 1_000_000_000 / u64::from(hz.max(1)));
    ctx.progress.update(0.0, "probing how the kernel ends slices");
    let probe = probe::slice_end(&exe, plan.one_cpu[0], host_tick, std::time::Duration::from_millis(400))?;
    ctx.progress.update(0.0, "probing the wake-up path");
    let wake = probe::wake::wake_costs(&exe, plan.two_cpus[0], plan.one_cpu[0], std::time::Duration::from_secs(2))?;
    let models =
        replay::models(schedlab_os::affinity::online_cpus(), ctx.machine.hz, ctx.machine.base_slice_ns, probe.exact);
    let tick = models.iter().find_map(|m| m.tick);
    ctx.progress.update(0.0, "probing how a delayed sleeper keeps its lag");
    let dz_run = probe::delay_zero::record(&exe, plan.one_cpu[0], tick, 2_000 * MS, params.draws)?;
    // Each recording is also written to the context's keep directory as soon as it is made
    // ([`as_made`]), so a run that dies keeps what it recorded.
    let as_made = match &ctx.keep_dir {
        Some(dir) => {
            let early: Vec<Model> = models.iter().cloned().map(|m| m.with_wake_delays(wake.delays())).collect();
            let said = format!(
                "An unfinished run, recorded until it stopped: machine {}; {autogroup_said}. {} {} The wake-up \
                 delays of the probe before the cases only, and DELAY_ZERO as the model's default (a finished \
                 run pools every probe and judges DELAY_ZERO by its probe).",
                ctx.machine.sentence(),
                probe.sentence(),
                wake.sentence(),
            );
            Some(as_made::AsMade::start(dir, &Setup::new(&plan, tick, &early, said))?)
        }
        None => None,
    };
    let total = chosen.len() * params.repeats;
    let mut recorded: Vec<(&Case, Recording)> = Vec::with_capacity(total);
    let mut near_probes: Vec<probe::per_run::Probed> = Vec::with_capacity(total);
    let mut probe_failures: Vec<String> = Vec::new();
    // Recording takes most of the time; the replays come after, once every probe is in.
    let recording = |done: usize| 0.8 * done as f64 / total as f64;
    'cases: for case in &chosen {
        for repeat in 0..params.repeats {
            if schedlab_os::signals::stop_requested() {
                s.status = Status::Interrupted;
                break 'cases;
            }
            let what = format!("{} (repeat {} of {})", case.name, repeat + 1, params.repeats);
            ctx.progress.update(recording(recorded.len()), &format!("probing the wake-up path before {what}"));
            // A probe that saw too few wake-ups leaves the pool one probe short, not the run.
            match probe::wake::wake_costs(&exe, plan.two_cpus[0], plan.one_cpu[0], RUN_PROBE_SPAN) {
                Ok(near) => near_probes.push((case.name, repeat, near)),
                Err(e) => probe_failures.push(format!("{what}: {e:#}")),
            }
            ctx.progress.update(recording(recorded.len()), &what);
            let rec = measure::record_case(case, repeat, &plan, &exe)?;
            let gz = rec.to_gz()?;
            if let Some(kept) = &as_made {
                kept.add(&rec, &gz)?;
            }
            s.files.push(DataFile::bytes(rec.file_name(), gz));
            recorded.push((case, rec));
        }
    }
    // Every replay draws from every probe of this run pooled: a probe next to a run tells no more
    // about that run than the others do (`probe/per_run.rs`).
    let pool: Vec<&probe::wake::WakeProbe> = std::iter::once(&wake).chain(near_probes.iter().map(|p| &p.2)).collect();
    let pooled = probe::per_run::pooled(&pool).unwrap_or_else(|| wake.delays());
    let mut models: Vec<Model> = models.into_iter().map(|m| m.with_wake_delays(pooled)).collect();
    ctx.progress.update(0.8, "replaying the DELAY_ZERO probe");
    let dz = probe::delay_zero::judge(dz_run, &models[0])?;
    models[0].spec.push_str(dz.spec_suffix());
    let recorded_sentence = format!(
        "Machine: {}; {autogroup_said}. {} {} {} {}",
        ctx.machine.sentence(),
        probe.sentence(),
        wake.sentence(),
        probe::per_run::sentence(&near_probes),
        dz.sentence()
    );
    let setup = Setup::new(&plan, tick, &models, recorded_sentence.clone());
    s.files.push(DataFile::text(format!("{}/{}", recording::DIR, recording::SETUP), setup.to_json()?));
    let runs = replay_all(&mut s, recorded, &plan, tick, &models, params.repeats, ctx)?;
    let probes_table = (!near_probes.is_empty()).then(|| {
        let t = probe::per_run::table(&near_probes);
        let note = if probe_failures.is_empty() {
            t.note.clone()
        } else {
            format!("{} Probes that failed: {}.", t.note, probe_failures.join("; "))
        };
        t.with_note(note)
    });
    let judgements = tabulate(&mut s, &chosen, &runs, &models, params.repeats, probes_table);
    s.summary = format!(
        "{} case(s) × {} repeat(s) of {:.1} s each, live on CPU {:?} (one-CPU cases) and {:?} (two-CPU cases) under a \
         scheduler trace; each trace imported and replayed under {} ({} draw(s) of the wake-up delays each, the \
         medoid judged); compared over the run after {:.1} s of warm-up. Every run is kept in {}/ (`schedlab \
         validate --replay <this directory>` judges them again). {recorded_sentence}",
        chosen.len(),
        params.repeats,
        params.duration_ns as f64 / 1e9,
        plan.one_cpu,
        plan.two_cpus,
        models.iter().map(|m| format!("`{}`", m.spec)).collect::<Vec<_>>().join(", "),
        plan.draws,
        plan.warmup_ns as f64 / 1e9,
        recording::DIR,
    );
    s.parameters = json!({
        "cases": chosen.iter().map(|c| c.name).collect::<Vec<_>>(),
        "repeats": params.repeats,
        "duration_s": params.duration_ns as f64 / 1e9,
        "draws": plan.draws,
        "plan": plan,
        "models": models.iter().map(|m| json!({"label": m.label, "spec": m.spec, "tick_ns": m.tick})).collect::<Vec<_>>(),
        // What every replay drew from: the probe before the cases and every per-run probe, pooled.
        "wake_delays_pooled": pooled,
        "tolerances": Tolerances::default(),
        "slice_probe": probe,
        "wake_probe": wake,
        "wake_probe_failures": probe_failures,
        "wake_probes_per_run": near_probes.iter().map(|(c, r, w)| json!({"case": c, "repeat": r, "probe": w})).collect::<Vec<_>>(),
        "delay_zero_probe": dz,
        "autogroup": autogroup_said,
    });
    s.results = json!({ "judgements": judgements, "runs": runs });
    Ok(s)
}

/// What a replay of saved recordings takes beside the directory.
#[derive(Debug, Clone, Default)]
pub struct ReplayParams {
    /// Case names (empty = every case recorded).
    pub cases: Vec<String>,
    /// Draws per replay (None: as recorded).
    pub draws: Option<usize>,
}

/// Judge the recordings of an earlier validate run (`dir`: its run directory) again, under this
/// schedlab's models with the probes' delays as recorded: no root, no live run.
pub fn replay_saved(dir: &Path, params: &ReplayParams, ctx: &RunContext) -> Result<Section> {
    let mut s = Section::new(Validate.name(), Validate.seed(), Validate.title());
    let (setup, recordings) = recording::load(dir)?;
    let models = setup.models()?;
    let mut plan = setup.plan.clone();
    if let Some(d) = params.draws {
        plan.draws = d.max(1);
    }
    let suite = cases::suite(true);
    let position = |name: &str| suite.iter().position(|c| c.name == name);
    for name in &params.cases {
        if !recordings.iter().any(|r| &r.case == name) {
            let kept: std::collections::BTreeSet<&str> = recordings.iter().map(|r| r.case.as_str()).collect();
            schedlab_os::bail_usage!(
                "no recording of case '{name}' in {} (recorded: {})",
                dir.display(),
                kept.into_iter().collect::<Vec<_>>().join(", ")
            );
        }
    }
    let mut recorded: Vec<(&Case, Recording)> = Vec::with_capacity(recordings.len());
    for r in recordings {
        let Some(i) = position(&r.case) else {
            bail!("{}: a recording of case '{}', which this schedlab does not have", dir.display(), r.case);
        };
        if params.cases.is_empty() || params.cases.contains(&r.case) {
            recorded.push((&suite[i], r));
        }
    }
    recorded.sort_by_key(|(c, r)| (position(c.name), r.repeat));
    let mut chosen: Vec<Case> = Vec::new();
    for (c, _) in &recorded {
        if chosen.last().is_none_or(|l| l.name != c.name) {
            chosen.push((*c).clone());
        }
    }
    let repeats = recorded.iter().map(|(_, r)| r.repeat + 1).max().unwrap_or(0);
    let n_runs = recorded.len();
    let runs = replay_all(&mut s, recorded, &plan, setup.tick_ns, &models, repeats, ctx)?;
    let judgements = tabulate(&mut s, &chosen, &runs, &models, repeats, None);
    s.summary = format!(
        "{n_runs} recorded run(s) of {} case(s) from {}, replayed under {} ({} draw(s) of the wake-up delays each, \
         the medoid judged), with the wake-up delays and the DELAY_ZERO setting the live run chose. As recorded: {}",
        chosen.len(),
        dir.display(),
        models.iter().map(|m| format!("`{}`", m.spec)).collect::<Vec<_>>().join(", "),
        plan.draws,
        setup.recorded
    );
    s.parameters = json!({
        "replayed_from": dir.display().to_string(),
        "cases": chosen.iter().map(|c| c.name).collect::<Vec<_>>(),
        "repeats": repeats,
        "draws": plan.draws,
        "plan": plan,
        "models": setup.models,
        "tolerances": Tolerances::default(),
    });
    s.results = json!({ "judgements": judgements, "runs": runs });
    Ok(s)
}

/// Import and replay every recorded run under `models`; a stop during the replays keeps what is
/// replayed (a stop during the live runs still has those recorded replayed: seconds, not minutes).
fn replay_all(
    s: &mut Section,
    recorded: Vec<(&Case, Recording)>,
    plan: &RunPlan,
    tick: Option<u64>,
    models: &[Model],
    repeats: usize,
    ctx: &RunContext,
) -> Result<Vec<CaseRun>> {
    let total = recorded.len().max(1);
    let mut runs: Vec<CaseRun> = Vec::with_capacity(recorded.len());
    let stopped_before = schedlab_os::signals::stop_requested();
    for (case, rec) in recorded {
        if !stopped_before && schedlab_os::signals::stop_requested() {
            s.status = Status::Interrupted;
            break;
        }
        let what = format!("replaying {} (repeat {} of {repeats})", case.name, rec.repeat + 1);
        ctx.progress.update(0.8 + 0.2 * runs.len() as f64 / total as f64, &what);
        let imported = measure::import_case(case, rec, plan, tick);
        runs.push(measure::replay_case(case, imported, plan, models)?);
    }
    Ok(runs)
}

/// Judge the runs case by case and model by model, and put the tables, verdicts, figures and
/// data files in `s` (`probes`: the per-run probe table of a live run); the judgements.
fn tabulate(
    s: &mut Section,
    chosen: &[Case],
    runs: &[CaseRun],
    models: &[Model],
    repeats: usize,
    probes: Option<Table>,
) -> Vec<CaseJudgement> {
    let tol = Tolerances::default();
    let mut judgements: Vec<CaseJudgement> = Vec::new();
    for case in chosen {
        let of_case: Vec<CaseRun> = runs.iter().filter(|r| r.case == case.name).cloned().collect();
        if of_case.is_empty() {
            continue;
        }
        let interchangeable = case.interchangeable();
        for m in models {
            judgements.push(judge::judge(&of_case, m.label, &tol, &interchangeable));
        }
        let js: Vec<&CaseJudgement> = judgements.iter().filter(|j| j.case == case.name).collect();
        s.tables.push(tables::case_table(case.what, &js, &tol, &interchangeable));
        if let Some(linux) = js.iter().find(|j| j.model == "linux") {
            let busy = busy::note(of_case.iter().map(|r| (r.repeat, &r.interference)));
            let layouts = tables::layouts_agreed(&of_case, "linux", &interchangeable);
            let parted = tables::parted_note(&of_case, "linux");
            s.verdicts.push(tables::verdict(
                linux,
                case.what,
                case.model_limits,
                tables::Context { busy: busy.as_deref(), layouts: layouts.as_deref(), parted: parted.as_deref() },
                &tol,
            ));
        }
        if let Some(first) = of_case.first() {
            s.figures.push(figure::stacked(first));
            s.files.push(DataFile::text(format!("trace_{}.txt", case.name), first.trace_text.clone()));
            // The linux model's replay of the same run, on the live trace's clock and pids, in the
            // same text: the two can be diffed, or loaded into one viewer.
            if let Some(linux) = first.models.iter().find(|m| m.label == "linux") {
                let opts = schedlab_trace::RenderOptions { ns: true, header: true };
                let text = schedlab_trace::render(&linux.timeline, &opts);
                s.files.push(DataFile::text(format!("trace_{}_linux.txt", case.name), text));
            }
            if !first.kernel_positions.is_empty() {
                let text = schedlab_trace::kernel_positions::to_text(&first.kernel_positions);
                s.files.push(DataFile::text(format!("positions_{}.txt", case.name), text));
            }
        }
    }
    let sizes: Vec<(String, usize)> = chosen.iter().map(|c| (c.name.to_string(), c.cpus)).collect();
    s.tables.insert(0, tables::summary(&judgements, &sizes));
    if repeats > 1 {
        s.tables.push(tables::noise_floor(&judgements, &tol));
    }
    if let Some(t) = tables::layout_table(runs, chosen) {
        s.tables.push(t);
    }
    s.tables.push(tables::trace_table(runs));
    if let Some(t) = shadow::table(runs) {
        s.tables.push(t);
    }
    if let Some(t) = probes {
        s.tables.push(t);
    }
    let kept = runs.iter().flat_map(|r| r.models.iter().map(move |m| (r.case.as_str(), r.repeat, &m.signals[..])));
    if let Some(t) = signals::table(kept.filter(|(_, _, s)| !s.is_empty())) {
        s.tables.push(t);
    }
    judgements
}

/// The registered experiment.
pub struct Validate;

impl Experiment for Validate {
    fn name(&self) -> &'static str {
        "validate"
    }
    fn seed(&self) -> &'static str {
        ""
    }
    fn title(&self) -> &'static str {
        "Record, replay, predict: the simulator's Linux model against live traces"
    }
    fn scale_of(&self, scale: Scale) -> String {
        let p = Params::for_scale(scale);
        format!(
            "{} live runs of {} s per case (schedlab's own experiment: no seed scale)",
            p.repeats,
            p.duration_ns / 1_000_000_000
        )
    }
    fn estimate_s(&self, scale: Scale) -> f64 {
        Params::for_scale(scale).estimate_s(schedlab_os::affinity::online_cpus())
    }
    fn run(&self, ctx: &RunContext) -> Result<Section> {
        run(&Params::for_scale(ctx.scale), ctx)
    }
}

/// The experiments of this module.
pub fn experiments() -> Vec<Box<dyn Experiment>> {
    vec![Box::new(Validate)]
}
