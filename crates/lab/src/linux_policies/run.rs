//! A whole benchmark run: every case in order, then the report section with its files
//! (cases.csv, table_data.txt, SVG figures) for the run directory.

use super::case::CaseResult;
use super::harness::Harness;
use super::params::Params;
use super::trace::{self, Tracer};
use super::{charts, compare, predict, table_data};
use crate::Progress;
use anyhow::Context;
use schedlab_os::child::{Child, ChildSpec, Output};
use schedlab_os::signals;
use schedlab_report::section::{DataFile, Figure, Section, Status};
use serde_json::{json, Value};

/// What a run hands back: the section and the seed-layout text.
pub struct RunOutput {
    pub section: Section,
    pub table_data: String,
    pub cases: Vec<CaseResult>,
}

/// The title used in the report.
pub const TITLE: &str = "Live Linux policy benchmark: OTHER vs FIFO vs RR on real processes";

/// Check that `program cpu --iterations 1` runs (within 30 s) before spawning thousands of it.
fn check_program(params: &Params) -> anyhow::Result<()> {
    let spec = ChildSpec::new(&params.program).args(["cpu", "--iterations", "1"]).stdout(Output::Null);
    let mut child = Child::spawn(&spec).with_context(|| format!("running {} cpu", params.program.display()))?;
    let status = match child.wait_timeout(std::time::Duration::from_secs(30))? {
        Some(r) => r.status,
        None => {
            child.kill()?;
            anyhow::bail!("{} cpu --iterations 1 did not finish in 30 s", params.program.display());
        }
    };
    if !status.success() {
        schedlab_os::bail_usage!(
            "{} does not run `cpu --iterations 1` ({status:?}): children must exec the schedlab-work binary",
            params.program.display()
        );
    }
    Ok(())
}

/// The summary's sentence on how the workloads were sized.
fn sizing(params: &Params) -> String {
    let mib = params.io_bytes as f64 / (1024.0 * 1024.0);
    let calibrated = crate::workloads::io::DEFAULT_TOTAL;
    let io = if params.io_bytes == calibrated {
        format!(
            "io copies {mib:.1} MiB in {} B blocks, calibrated to the seed's ≈35–40 ms of system time per io \
             process (on a 2-core VM, Linux 6.18: docs/policies.md says how to calibrate another host)",
            params.io_block
        )
    } else {
        format!(
            "io copies {mib:.2} MiB in {} B blocks ({:.2} × the {:.0} MiB calibrated to the seed's ≈35–40 ms of \
             system time per io process)",
            params.io_block,
            params.io_bytes as f64 / calibrated as f64,
            calibrated as f64 / (1024.0 * 1024.0)
        )
    };
    format!(
        "Children exec {} (std only; the `empty` case measures its exec and start-up); {io}; cpu and mixed draw \
         {} π samples.",
        params.program.file_name().map_or("the workload program".into(), |f| f.to_string_lossy().into_owned()),
        params.iterations
    )
}

/// Run every case of `params` and build the section.
pub fn run(params: &Params, progress: &dyn Progress) -> anyhow::Result<RunOutput> {
    params.validate()?;
    check_program(params)?;
    // The CPUs of the children (DEADLINE children may also run elsewhere, as the kernel requires).
    let _cpus = schedlab_os::cpulock::CpuLock::acquire(&params.cpus, "the policy benchmark's children")?;
    let harness = Harness::prepare(params)?;
    let tracer = if params.trace { Some(Tracer::open().context("setting up --trace")?) } else { None };
    let plan = params.cases();
    let mut cases: Vec<CaseResult> = Vec::new();
    let mut trace_docs: Vec<Value> = Vec::new();
    let mut trace_figs: Vec<Figure> = Vec::new();
    let mut trace_texts: Vec<DataFile> = Vec::new();
    let mut interrupted = false;
    for (i, &(n, p, w)) in plan.iter().enumerate() {
        if signals::stop_requested() {
            interrupted = true;
            break;
        }
        progress.update(i as f64 / plan.len() as f64, &format!("case {}/{}: {p} {w} × {n}", i + 1, plan.len()));
        let run = match harness.run_case(params, n, p, w, tracer.as_ref().map(|t| &t.instance)) {
            Ok(r) => r,
            Err(e) if signals::stop_requested() => {
                eprintln!("schedlab: {e:#}");
                interrupted = true;
                break;
            }
            Err(e) => return Err(e),
        };
        if let Some((events, text)) = &run.trace {
            let title = format!("sched_switch per CPU: {p} {w}, {n} processes");
            let (gantt, summary) = trace::timeline(events, &run.pids, run.release_ns, &title);
            let file = format!("trace_{p}_{w}_{n}.svg");
            let raw = format!("trace_{p}_{w}_{n}.txt");
            let (tl, _) = schedlab_trace::Timeline::from_text(text, Some(schedlab_trace::Format::Tracefs));
            let children = crate::trace::perfetto::timeline(&tl, &run.pids, &format!("{p} {w} × {n}"));
            let perfetto = format!("trace_{p}_{w}_{n}.trace.json");
            trace_texts.push(crate::trace::perfetto::file_named(&perfetto, &[children], &title)?);
            trace_texts.push(DataFile::text(raw.clone(), text.clone()));
            trace_docs.push(json!({
                "policy": p, "workload": w, "procs": n, "file": file, "raw": raw, "perfetto": perfetto, "summary": summary,
                "rusage_involuntary_ctx": run.result.involuntary_ctx,
            }));
            trace_figs.push(Figure {
                title,
                file,
                svg: gantt.to_svg(),
                caption: "Per-CPU timeline from sched:sched_switch (#n = child n, one colour each; grey = other tasks and the harness).".into(),
            });
        }
        let r = run.result;
        progress.update(
            (i + 1) as f64 / plan.len() as f64,
            &format!(
                "{p} {w} × {n}: wall {:.2}s, avg {:.2} ms, invol {:.2}/proc{}",
                r.wall_s,
                r.avg_s * 1e3,
                r.avg_involuntary_ctx,
                if r.timed_out { " — TIMED OUT, children killed" } else { "" }
            ),
        );
        let stop = r.interrupted;
        cases.push(r);
        if stop {
            interrupted = true;
            break;
        }
    }
    drop(tracer);
    let predictions = predict::predictions(params, &cases);

    let io_scale = params.io_bytes as f64 / crate::workloads::io::DEFAULT_TOTAL as f64;
    let verdicts = compare::verdicts(&cases, io_scale);
    let text = table_data::render(&cases, "table_data.txt");
    let seed_cases = crate::seed_data::seed("001_linux_scheduler")["cases"].clone();
    let data = json!({
        "cases": cases,
        "seed_cases": seed_cases,
        "harness": { "cpus": harness.harness_cpus, "notes": harness.notes },
        "verdicts": verdicts,
        "predictions": predictions.doc,
        "placement": placement_doc(params),
        "traces": trace_docs,
        "interrupted": interrupted,
    });
    let mut figures = charts::figures(&cases);
    figures.extend(trace_figs);

    let mut section = Section::new("policies", "001", TITLE);
    let placement = params.placement();
    section.summary = format!(
        "{} cases ({} processes × {} × {}), {placement}, FIFO/RR priority {}. {} {} {}",
        cases.len(),
        params.procs.iter().map(|n| n.to_string()).collect::<Vec<_>>().join("/"),
        params.policies.iter().map(|p| p.to_string()).collect::<Vec<_>>().join(","),
        params.workloads.iter().map(|w| w.to_string()).collect::<Vec<_>>().join(","),
        params.priority,
        sizing(params),
        compare::startup_note(&cases),
        harness.notes.join("; ")
    );
    if interrupted {
        section.status = Status::Interrupted;
    }
    section.tables = vec![compare::comparison_table(&cases, &placement), compare::timing_table(&cases, &placement)];
    section.tables.extend(predictions.table.map(|t| {
        let note = format!("{} Setting: {placement}. {}", t.note, compare::startup_note(&cases));
        t.with_note(note.trim_start().to_string())
    }));
    section.figures = figures;
    section.verdicts = verdicts;
    section.parameters = serde_json::to_value(params)?;
    section.results = data;
    section.files = vec![DataFile::text("table_data.txt", text.clone()), cases_csv(&cases)];
    section.files.extend(trace_texts);
    Ok(RunOutput { section, table_data: text, cases })
}

/// Where the children ran, for results.json.
fn placement_doc(params: &Params) -> Value {
    json!({ "unpinned": params.unpinned, "cpus": params.cpus, "text": params.placement() })
}

/// Every case as a raw CSV row.
fn cases_csv(cases: &[CaseResult]) -> DataFile {
    let header = [
        "policy",
        "workload",
        "procs",
        "completed",
        "killed",
        "failed",
        "sys_s",
        "user_s",
        "total_s",
        "avg_s",
        "cpu_sd_s",
        "voluntary_ctx",
        "avg_voluntary_ctx",
        "involuntary_ctx",
        "avg_involuntary_ctx",
        "wall_s",
        "spawn_s",
        "turnaround_p50_s",
        "turnaround_p95_s",
        "turnaround_max_s",
        "throughput_per_s",
        "timed_out",
    ];
    let rows: Vec<Vec<String>> = cases
        .iter()
        .map(|c| {
            vec![
                c.policy.to_string(),
                c.workload.to_string(),
                c.procs.to_string(),
                c.completed.to_string(),
                c.killed.to_string(),
                c.failed.to_string(),
                format!("{:.6}", c.sys_s),
                format!("{:.6}", c.user_s),
                format!("{:.6}", c.total_s),
                format!("{:.6}", c.avg_s),
                format!("{:.6}", c.cpu_sd_s),
                c.voluntary_ctx.to_string(),
                format!("{:.6}", c.avg_voluntary_ctx),
                c.involuntary_ctx.to_string(),
                format!("{:.6}", c.avg_involuntary_ctx),
                format!("{:.6}", c.wall_s),
                format!("{:.6}", c.spawn_s),
                format!("{:.6}", c.turnaround_p50_s),
                format!("{:.6}", c.turnaround_p95_s),
                format!("{:.6}", c.turnaround_max_s),
                format!("{:.3}", c.throughput_per_s),
                c.timed_out.to_string(),
            ]
        })
        .collect();
    DataFile::csv("cases.csv", &header, rows)
}
