//! The validation's tables and verdicts: a summary of every case under every model, and per
//! case each task live against each model (mean over the repeats, the live range, and each
//! model's worst error marked met ✓, missed ✗ or inconclusive ~).

use super::cases::Case;
use super::judge::{CaseJudgement, Mark, Metric, TaskJudgement, Tolerances};
use super::layout::Layout;
use super::measure::CaseRun;
use schedlab_report::section::{ClaimKind, Table, Verdict};

fn pct(v: f64) -> String {
    format!("{:.0}%", 100.0 * v)
}

fn mean_of(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// Every case under every model, one row each.
pub fn summary(judgements: &[CaseJudgement], cases: &[(String, usize)]) -> Table {
    let mut t = Table::new(
        "Summary: how each model predicted each case",
        &["case", "CPUs", "model", "same task", "same task any CPU", "met", "missed", "inconclusive", "verdict"],
    )
    .keyed(&["case", "model"]);
    for j in judgements {
        let cpus = cases.iter().find(|c| c.0 == j.case).map_or(0, |c| c.1);
        let (met, missed, inc) = j.counts();
        t.row(vec![
            j.case.clone(),
            cpus.to_string(),
            j.model.clone(),
            pct(mean_of(&j.same_task)),
            pct(mean_of(&j.same_task_any_cpu)),
            met.to_string(),
            missed.to_string(),
            inc.to_string(),
            match j.mark {
                Mark::Met => "met".into(),
                Mark::Missed => "missed".into(),
                Mark::Inconclusive => "inconclusive".into(),
                Mark::NotJudged => "not judged".into(),
            },
        ]);
    }
    t.with_note(
        "same task: the fraction of the window (× CPUs) in which the model ran the same task on the same CPU as \
         the kernel did. met/missed/inconclusive count the judged metrics (CPU share, switches/s, wake-up p50) \
         over the case's tasks.",
    )
}

/// A live cell: the mean, and the range over repeats when there are several.
fn live_cell(m: &Metric, decimals: usize) -> String {
    match (Metric::mean(&m.live), Metric::range(&m.live)) {
        (Some(mean), Some((lo, hi))) if m.live.len() > 1 => {
            format!("{mean:.decimals$} [{lo:.decimals$}–{hi:.decimals$}]")
        }
        (Some(mean), _) => format!("{mean:.decimals$}"),
        _ => "–".into(),
    }
}

/// A model cell: the mean, the worst error and the mark.
fn model_cell(m: &Metric, decimals: usize, points: bool) -> String {
    let Some(mean) = Metric::mean(&m.model) else {
        return if m.errors.is_empty() { "–".into() } else { format!("none {}", Mark::Missed.symbol()) };
    };
    match m.worst() {
        None => format!("{mean:.decimals$}"),
        Some(w) if points => format!("{mean:.decimals$} (err {w:.1} pp {})", m.mark.symbol()),
        Some(w) if w.is_finite() => format!("{mean:.decimals$} (err {:.0}% {})", 100.0 * w, m.mark.symbol()),
        Some(_) => format!("{mean:.decimals$} (– {})", m.mark.symbol()),
    }
}

/// One case: its tasks live and under each model.
/// `interchangeable`: the case's groups of identical tasks, judged as ranks.
pub fn case_table(
    what: &str,
    judgements: &[&CaseJudgement],
    tol: &Tolerances,
    interchangeable: &[Vec<String>],
) -> Table {
    let Some(first) = judgements.first() else { return Table::new(what, &["task"]) };
    let mut t = Table::new(
        format!("{} ({} repeat(s)): {what}", first.case, first.repeats),
        &["task", "run by", "CPU share %", "switches/s", "wake-up p50 µs", "wake-up p99 µs"],
    )
    .keyed(&["task", "run by"]);
    for (i, task) in first.tasks.iter().enumerate() {
        t.row(vec![
            task.task.clone(),
            "live".into(),
            live_cell(&task.share, 1),
            live_cell(&task.switches_per_s, 0),
            live_cell(&task.wake_p50_us, 1),
            live_cell(&task.wake_p99_us, 1),
        ]);
        for j in judgements {
            let Some(m) = j.tasks.get(i) else { continue };
            t.row(vec![
                String::new(),
                j.model.clone(),
                model_cell(&m.share, 1, true),
                model_cell(&m.switches_per_s, 0, false),
                model_cell(&m.wake_p50_us, 1, false),
                model_cell(&m.wake_p99_us, 1, false),
            ]);
        }
    }
    let ranks: String = interchangeable
        .iter()
        .map(|g| {
            format!(
                " {} are the same program under the same scheduling on the same CPUs, so which of them the kernel \
                 or a model put where is chance: each metric's values are compared in order (the lowest live with \
                 the model's lowest, and so on), each metric on its own.",
                g.join(" and ")
            )
        })
        .collect();
    t.with_note(format!(
        "Live: mean [range] over the repeats. Models: mean (err: the worst error over the repeats, ✓ within / ✗ beyond the \
         goal in every repeat, ~ repeats on both sides), of the replay judged in each repeat: the medoid of the \
         model's draws of the wake-up delays (results.json: `draw`, and per metric `draws_within`). Goal: share ±{} pp of the case's CPUs, switches ±{:.0}%, \
         wake-up p50 ±{:.0}%; rates and percentiles with fewer than {} live events are not judged; p99 is shown, \
         not judged.{ranks}",
        tol.share_pp,
        100.0 * tol.switches,
        100.0 * tol.wake_p50,
        tol.min_events
    ))
}

/// What a judgement missed, in words (empty when nothing was).
pub fn misses(j: &CaseJudgement) -> Vec<String> {
    let mut out = Vec::new();
    for t in &j.tasks {
        let worst = |m: &Metric| m.worst().unwrap_or(0.0);
        let value = |v: &[Option<f64>]| Metric::mean(v).map_or("none".to_string(), |x| format!("{x:.1}"));
        let mut say = |name: &str, m: &Metric, unit: &str, points: bool| {
            if matches!(m.mark, Mark::Missed | Mark::Inconclusive) {
                let err = if points { format!("{:.1} pp", worst(m)) } else { pct(worst(m)) };
                out.push(format!(
                    "{} {name} {} live vs {} {unit} ({err}{}{}{})",
                    t.task,
                    value(&m.live),
                    value(&m.model),
                    if m.mark == Mark::Inconclusive { ", inconclusive" } else { "" },
                    draws_said(m),
                    if m.live_repeats_within == Some(false) {
                        "; the kernel's own repeats differed beyond the goal"
                    } else {
                        ""
                    }
                ));
            }
        };
        say("share", &t.share, "%", true);
        say("switches/s", &t.switches_per_s, "/s", false);
        say("wake-up p50", &t.wake_p50_us, "µs", false);
    }
    out
}

/// How many of the model's draws met the goal on a metric, when each run had more than one.
fn draws_said(m: &Metric) -> String {
    match m.draws_within_total() {
        (within, n) if n > m.draws_within.len() => format!("; {within} of {n} draws within"),
        _ => String::new(),
    }
}

/// The metrics off in a judgement, counted by what the draws say — some draw within the goal in
/// every repeat, or none within in some repeat (five draws are a small sample: a draw within
/// says the model can give the live value, not how often) — and by whether the kernel's own
/// repeats differed beyond the goal. None with one draw per run.
fn chance_or_model(j: &CaseJudgement) -> Option<String> {
    let off: Vec<&Metric> = j
        .tasks
        .iter()
        .flat_map(TaskJudgement::judged)
        .filter(|m| matches!(m.mark, Mark::Missed | Mark::Inconclusive) && m.draws_within.iter().any(|&(_, n)| n > 1))
        .collect();
    let chance = off.iter().filter(|m| m.draws_within.iter().all(|&(w, _)| w > 0)).count();
    let kernel = off.iter().filter(|m| m.live_repeats_within == Some(false)).count();
    (!off.is_empty()).then(|| {
        format!(
            "Of the {} metrics off, {chance} had at least one draw of the wake-up delays within the goal in every \
             repeat and {} had none within in some repeat; on {kernel} of them the kernel's own repeats differed from \
             each other beyond the goal",
            off.len(),
            off.len() - chance
        )
    })
}

/// The goal's noise floor: per case, how many judged metrics the kernel's own repeats agreed on
/// within the goal, and how many they did not (a metric on which the kernel differs from itself
/// by more than the goal is one no replay of one run can be held to in every repeat, unless the
/// trace carries what made the repeats differ).
pub fn noise_floor(judgements: &[CaseJudgement], tol: &Tolerances) -> Table {
    let mut t = Table::new(
        "The kernel against itself: its repeats of each case compared with each other by the goal",
        &["case", "metrics judged", "metrics the repeats agreed on", "metrics they did not"],
    )
    .keyed(&["case"]);
    for j in judgements.iter().filter(|j| j.model == "linux") {
        let within: Vec<bool> =
            j.tasks.iter().flat_map(TaskJudgement::judged).filter_map(|m| m.live_repeats_within).collect();
        let agree = within.iter().filter(|&&w| w).count();
        t.row(vec![j.case.clone(), within.len().to_string(), agree.to_string(), (within.len() - agree).to_string()]);
    }
    t.with_note(format!(
        "Every pair of the case's live repeats compared by the goal's own rule (share ±{} pp, switches ±{:.0}%, \
         wake-up p50 ±{:.0}%, each repeat taken as the reference in turn), over the metrics judged in at least two \
         repeats. A metric they did not agree on is one on which the kernel did not repeat itself: a layout settled \
         otherwise, a steady state switched, the wake-up path in a burst. A replay follows its own run's trace, so \
         it can still meet such a metric, but only where the trace carries what made the repeats differ.",
        tol.share_pp,
        100.0 * tol.switches,
        100.0 * tol.wake_p50
    ))
}

/// What a case's verdict says beside the metrics.
pub struct Context<'a> {
    /// Which repeats others crowded ([`super::busy::note`]).
    pub busy: Option<&'a str>,
    /// How often the model's layout was the kernel's ([`layouts_agreed`]).
    pub layouts: Option<&'a str>,
    /// Where each repeat's replay parted from the live run ([`parted_note`]).
    pub parted: Option<&'a str>,
}

/// The verdict on one case under the `linux` model (a goal of schedlab's, not a seed's claim).
pub fn verdict(j: &CaseJudgement, what: &str, why: Option<&str>, context: Context, tol: &Tolerances) -> Verdict {
    let claim = format!(
        "Goal: the simulator's linux model predicts {} ({what}): shares ±{} pp, switches/s ±{:.0}%, wake-up p50 ±{:.0}%",
        j.case,
        tol.share_pp,
        100.0 * tol.switches,
        100.0 * tol.wake_p50
    );
    let (met, missed, inc) = j.counts();
    let spread = if j.repeats > 1 { format!("{} repeats", j.repeats) } else { "one run: the spread is unknown".into() };
    let mut detail = format!(
        "{met} metric(s) met, {missed} missed, {inc} inconclusive ({spread}); same task {} (on any CPU {})",
        pct(mean_of(&j.same_task)),
        pct(mean_of(&j.same_task_any_cpu))
    );
    let m = misses(j);
    if !m.is_empty() {
        detail.push_str(&format!(". Off: {}", m.join("; ")));
    }
    if let Some(split) = chance_or_model(j) {
        detail.push_str(&format!(". {split}"));
    }
    if let Some(layouts) = context.layouts {
        detail.push_str(&format!(". {layouts}"));
    }
    if let (Some(why), true) = (why, missed + inc > 0) {
        detail.push_str(&format!(". Why: {why}"));
    }
    if let (Some(parted), true) = (context.parted, missed + inc > 0) {
        detail.push_str(&format!(". Where the replay parted from the live run: {parted}"));
    }
    if let Some(busy) = context.busy {
        detail.push_str(&format!(". Beside it: {busy}"));
    }
    match j.mark {
        Mark::Met => Verdict::goal(claim, true, detail),
        Mark::Missed => Verdict::goal(claim, false, detail),
        Mark::Inconclusive => Verdict::inconclusive(ClaimKind::Goal, claim, detail),
        Mark::NotJudged => Verdict::not_measured(ClaimKind::Goal, claim, detail),
    }
}

/// Where `model`'s replay of each repeat parted from the live run (None: nowhere).
pub fn parted_note(runs: &[CaseRun], model: &str) -> Option<String> {
    let parts: Vec<String> = runs
        .iter()
        .filter_map(|r| {
            let p = r.models.iter().find(|m| m.label == model)?.parted.as_ref()?;
            Some(format!("repeat {}: {}", r.repeat + 1, p.describe()))
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// A run's live layout and `model`'s (None: a one-CPU case).
fn layouts<'a>(r: &'a CaseRun, model: &str) -> Option<(&'a Layout, &'a Layout)> {
    Some((r.layout.as_ref()?, r.models.iter().find(|m| m.label == model)?.layout.as_ref()?))
}

/// How often `model` laid the case's tasks out as the kernel did (None: a one-CPU case).
pub fn layouts_agreed(runs: &[CaseRun], model: &str, interchangeable: &[Vec<String>]) -> Option<String> {
    let pairs: Vec<(&Layout, &Layout)> = runs.iter().filter_map(|r| layouts(r, model)).collect();
    if pairs.is_empty() {
        return None;
    }
    let same = pairs.iter().filter(|(live, sim)| live.same_as(sim, interchangeable)).count();
    let of_model = || runs.iter().filter_map(|r| r.models.iter().find(|m| m.label == model));
    let draws: usize = of_model().map(|m| m.draws.len()).sum();
    let in_draws = match of_model().map(|m| m.draws_with_live_layout).sum::<Option<usize>>() {
        Some(same) if draws > pairs.len() => format!(" (in {same} of its {draws} draws)"),
        _ => String::new(),
    };
    let forks = of_model().filter_map(|m| m.forks).fold((0, 0), |(a, n), f| (a + f.as_the_kernel, n + f.forks));
    let forks = match forks {
        (_, 0) => String::new(),
        (agreed, n) => format!(
            "; every replay starts a forked task on the CPU the kernel did (where a fork goes hangs on each CPU's \
             blocked utilisation and capacity, which neither the trace nor /proc shows), and the model's fork rule, asked in the \
             replay's state, chose that CPU for {agreed} of {n}"
        ),
    };
    let moved: usize = of_model().map(|m| m.layout_moved).sum();
    Some(format!(
        "Layouts (which tasks ran on one CPU): the replay puts each task on the kernel's CPU when the window opens \
         (it moved {moved} over the {n} repeats; the first milliseconds' races that decide the layout are left out \
         of the comparison), and the model's layout over the window was the kernel's in {same} of {n} repeats\
         {in_draws}{forks}",
        n = pairs.len()
    ))
}

/// Where the tasks of the two-CPU cases ran, live and in the `linux` model: per repeat, each
/// task's CPU.
pub fn layout_table(runs: &[CaseRun], cases: &[Case]) -> Option<Table> {
    let mut t = Table::new(
        "Where the tasks ran (two-CPU cases): each task on the CPU it ran on most in the window",
        &["case", "repeat", "task", "live CPU", "linux CPU", "same layout"],
    )
    .keyed(&["case", "task", "repeat"]);
    for r in runs {
        let Some((live, sim)) = layouts(r, "linux") else { continue };
        let interchangeable = cases.iter().find(|c| c.name == r.case).map(Case::interchangeable).unwrap_or_default();
        let same = if live.same_as(sim, &interchangeable) { "yes" } else { "no" };
        let cpu = |l: &Layout, task: &str| l.cpu_of(task).map_or_else(|| "–".to_string(), |c| c.to_string());
        for task in live.tasks().into_iter().chain(sim.tasks()).collect::<std::collections::BTreeSet<_>>() {
            t.row(vec![
                r.case.clone(),
                (r.repeat + 1).to_string(),
                task.clone(),
                cpu(live, &task),
                cpu(sim, &task),
                same.into(),
            ]);
        }
    }
    if t.rows.is_empty() {
        return None;
    }
    Some(t.with_note(
        "The same layout: the same tasks together on one CPU, whatever the CPUs are numbered and whichever of two \
         identical tasks is where. The linux replay puts each task on the CPU the kernel had it on when the window \
         opens; from there its placement and balancing are its own, so \"same\" says the model kept the kernel's \
         layout. –: the task did not run in the window.",
    ))
}

/// Import and trace health per run: what a reader needs to trust the live side.
pub fn trace_table(runs: &[CaseRun]) -> Table {
    let mut t = Table::new(
        "The live traces",
        &[
            "case",
            "repeat",
            "CPUs",
            "events",
            "lost",
            "malformed",
            "anomalies",
            "lost ends trimmed ms",
            "trimmed runs",
            "given back ms",
            "import notes",
            "left open",
            "others' CPU %",
            "others' switch-ins/s",
        ],
    )
    .keyed(&["case", "repeat"]);
    for r in runs {
        t.row(vec![
            r.case.clone(),
            (r.repeat + 1).to_string(),
            r.host_cpus.len().to_string(),
            r.parse.events.to_string(),
            r.parse.lost_events().to_string(),
            r.parse.malformed.to_string(),
            r.anomalies.to_string(),
            format!("{:.1}", r.lost_ends.ns as f64 / 1e6),
            r.lost_ends.runs.to_string(),
            format!("{:.1}", r.lost_ends.given_back_ns as f64 / 1e6),
            r.import_notes.len().to_string(),
            r.open.len().to_string(),
            format!("{:.2}", 100.0 * r.interference.share),
            format!("{:.0}", r.interference.switch_ins_per_s),
        ]);
    }
    t.with_note(
        "anomalies: events that contradict each other (repaired by the timeline builder; see results.json). \
         lost ends trimmed: runs whose switch-out the trace lost, which the builder ends at the CPU's next \
         event in another task's context, shortened (in that window) to the CPU time the kernel counted for \
         their task (/proc/<tid>/schedstat at both ends of the recording). given back: of that, the time \
         that went to the task found running after each trimmed run, which had waited runnable for it (its \
         switch-in was lost too). left open: how many tasks never blocked, whose CPU demand the replay leaves to the model (named in \
         results.json). others: \
         every task outside the case that ran on its CPUs in the window (kernel threads, this controller) — \
         invisible to the models.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metric(within: Option<bool>) -> Metric {
        Metric {
            live: vec![],
            model: vec![],
            errors: vec![],
            draws_within: vec![],
            live_repeats_within: within,
            mark: Mark::NotJudged,
        }
    }

    fn judgement(model: &str, tasks: Vec<TaskJudgement>) -> CaseJudgement {
        CaseJudgement {
            case: "c".into(),
            model: model.into(),
            repeats: 2,
            tasks,
            same_task: vec![0.5, 0.5],
            same_task_any_cpu: vec![0.5, 0.5],
            mark: Mark::Inconclusive,
        }
    }

    fn task(name: &str, share: Metric, switches: Metric, wake: Metric) -> TaskJudgement {
        TaskJudgement {
            task: name.into(),
            share,
            switches_per_s: switches,
            wake_p50_us: wake,
            wake_p99_us: metric(None),
        }
    }

    #[test]
    fn the_noise_floor_counts_the_metrics_the_kernel_did_not_repeat() {
        let tasks = || {
            vec![
                task("a", metric(Some(true)), metric(Some(false)), metric(None)),
                task("b", metric(Some(true)), metric(Some(true)), metric(Some(true))),
            ]
        };
        // One row per case (the live side is the same under every model).
        let t = noise_floor(&[judgement("linux", tasks()), judgement("cfs", tasks())], &Tolerances::default());
        assert_eq!(t.rows, vec![vec!["c", "5", "4", "1"]]);
    }

    #[test]
    fn a_metric_off_names_its_draws_and_whether_the_kernel_repeated_itself() {
        // A hog at 125 and 250 switches a second live (two steady states), 125 in the model in both
        // repeats: none of five draws came within in the second repeat, three in the first.
        let hog = Metric {
            live: vec![Some(125.0), Some(250.0)],
            model: vec![Some(125.0), Some(125.0)],
            errors: vec![0.0, 0.5],
            draws_within: vec![(3, 5), (0, 5)],
            live_repeats_within: Some(false),
            mark: Mark::Inconclusive,
        };
        let j = judgement("linux", vec![task("hog", metric(Some(true)), hog, metric(None))]);
        let said = misses(&j);
        assert_eq!(said.len(), 1);
        assert!(
            said[0].starts_with("hog switches/s 187.5 live vs 125.0 /s (50%, inconclusive; 3 of 10 draws within"),
            "{}",
            said[0]
        );
        assert!(said[0].contains("the kernel's own repeats differed beyond the goal"), "{}", said[0]);
        let split = chance_or_model(&j).unwrap();
        assert!(split.starts_with("Of the 1 metrics off, 0 had at least one draw"), "{split}");
        assert!(split.contains("1 had none within in some repeat; on 1 of them the kernel's own"), "{split}");
    }
}
