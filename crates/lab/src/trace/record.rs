//! `schedlab trace record -- COMMAND…`: run a program (and whatever it starts) under a private
//! tracefs instance recording the scheduler tracepoints, and keep the raw trace (`trace.txt`),
//! the policy and affinity of every task it had and every thread's CPU time as the kernel
//! counted it (`meta.json`) and a summary of who ran how much. `schedlab trace record --workload FILE` runs a simulator workload for real instead —
//! each task a `schedlab workload bursts` child with its policy, affinity and arrival — so a
//! workload can go live and come back through `schedlab trace import`.

use super::live;
use super::meta::Collector;
use super::recorder::Recorder;
use anyhow::{Context, Result};
use schedlab_os::child::{Barrier, Child, ChildSpec};
use schedlab_os::clock::{monotonic_ns, sleep_until_ns};
use schedlab_report::section::{DataFile, Section, Status, Table};
use schedlab_sim::workload::Workload;
use schedlab_trace::meta::CpuTimes;
use schedlab_trace::{Select, Timeline};
use serde_json::json;
use std::time::Duration;

/// What to record.
#[derive(Debug, Clone)]
pub struct RecordRequest {
    pub argv: Vec<String>,
    /// Pin the program to these CPUs (None = as inherited).
    pub cpus: Option<Vec<usize>>,
    /// Stop (kill the program) after this long.
    pub limit: Duration,
}

/// Record `req`'s program; the section's files are the trace and the metadata.
pub fn record(req: &RecordRequest) -> Result<Section> {
    let mut spec = ChildSpec::from_argv(&req.argv)?.barrier(Barrier::Gate);
    let _cpus = schedlab_os::cpulock::CpuLock::acquire(req.cpus.as_deref().unwrap_or(&[]), "the traced program")?;
    if let Some(c) = &req.cpus {
        spec = spec.cpus(c);
    }
    let mut child = Child::spawn(&spec).with_context(|| format!("starting {}", spec.display()))?;
    let root = child.pid();
    let mut meta = Collector::default();
    let recorder = Recorder::start()?;
    let (cpu_from, cpu_before) = (monotonic_ns(), schedlab_os::procfs::thread_cpu_times());
    let t0 = monotonic_ns();
    child.release()?;
    let end = t0 + req.limit.as_nanos() as u64;
    let mut timed_out = false;
    while child.try_wait()?.is_none() {
        meta.poll(root);
        if schedlab_os::signals::stop_requested() {
            break;
        }
        let now = monotonic_ns();
        if now >= end {
            timed_out = true;
            break;
        }
        sleep_until_ns((now + 10_000_000).min(end))?;
    }
    // Before the kill, while the program's threads can still be read.
    let cpu_after = schedlab_os::procfs::thread_cpu_times();
    let cpu_times = CpuTimes::between((cpu_from, monotonic_ns()), &cpu_before, &cpu_after);
    let reaped = child.kill()?;
    let rec = recorder.stop()?;
    let text = rec.text;
    let meta = meta.finish(schedlab_os::affinity::online_cpus(), rec.steal_ns, Some(cpu_times));
    let (tl, stats) = Timeline::from_text(&text, Some(schedlab_trace::Format::Tracefs));
    let tree: Vec<i32> = tl.descendants(root);
    let mut s = Section::new("trace-record", "-", "A scheduler trace of one program");
    s.summary = format!(
        "{} ran {:.3} s{}; {} events ({} lost), {} of its tasks. Import it with `schedlab trace import {{run dir}}/trace.txt --meta {{run dir}}/meta.json --tree {root}`.{}",
        req.argv.join(" "),
        (monotonic_ns() - t0) as f64 / 1e9,
        if timed_out { " (stopped at the time limit)" } else { "" },
        stats.events,
        stats.lost_events(),
        tree.len(),
        meta.steal_summary()
    );
    if schedlab_os::signals::stop_requested() {
        s.status = Status::Interrupted;
    }
    let mut t =
        Table::new("Tasks of the program", &["pid", "comm", "CPU ms", "switch-ins", "voluntary", "involuntary"]);
    for pid in &tree {
        if let Some(task) = tl.tasks.get(pid) {
            t.row(vec![
                pid.to_string(),
                task.comm.clone(),
                format!("{:.3}", task.cpu_time() as f64 / 1e6),
                task.switch_ins.to_string(),
                task.voluntary.to_string(),
                task.involuntary.to_string(),
            ]);
        }
    }
    s.tables.push(t);
    s.files.push(super::perfetto::file(&tl, &tree, &req.argv.join(" "), "schedlab trace record")?);
    s.files.push(DataFile::text("trace.txt", text));
    s.files.push(DataFile::text("meta.json", serde_json::to_string_pretty(&meta)?));
    s.parameters = json!({ "command": req.argv, "cpus": req.cpus, "limit_s": req.limit.as_secs_f64() });
    s.results = json!({
        "root_pid": root,
        "exit": format!("{:?}", reaped.status),
        "timed_out": timed_out,
        "parse": stats,
        "tasks": tree,
        "anomalies": tl.anomalies.len(),
        "select": Select::Tree(root),
    });
    Ok(s)
}

/// A simulator workload to run for real.
#[derive(Debug, Clone)]
pub struct WorkloadRecordRequest {
    pub workload: Workload,
    /// `host_cpus[i]` runs the workload's CPU `i`.
    pub host_cpus: Vec<usize>,
    /// Stop (kill what still runs) after this long.
    pub limit: Duration,
}

/// Run `req`'s workload under a recording; the section's files are the trace, the metadata and
/// the workload, and its table sets each task's CPU demand beside the CPU the trace shows it
/// used after its exec.
pub fn record_workload(req: &WorkloadRecordRequest) -> Result<Section> {
    let exe = std::env::current_exe()?;
    let tasks = live::from_workload(&exe, &req.workload, &req.host_cpus, u64::MAX)?;
    let run = live::run(&tasks, req.limit, &|_| {})?;
    let (tl, stats) = Timeline::from_text(&run.text, Some(schedlab_trace::Format::Tracefs));
    let mut s = Section::new("trace-record", "-", "A simulator workload run for real under a scheduler trace");
    let mut t = Table::new(
        "Each task's CPU demand and what the trace shows it used",
        &["task", "pid", "demand ms", "traced ms (after exec)", "traced / demand", "switch-ins"],
    );
    let mut per_task = Vec::new();
    for ((spec, task), pid) in req.workload.tasks.iter().zip(&tasks).zip(&run.pids) {
        let demand: u64 = (0..spec.jobs.max(1)).map(|k| schedlab_sim::jobs::job_cpu(spec, k)).sum();
        let traced = tl.tasks.get(pid).map_or(0, |t| {
            let from = t.execs.last().map_or(t.first_seen, |e| e.ts);
            t.cpu_time_in(from, u64::MAX)
        });
        let ratio = traced as f64 / demand.max(1) as f64;
        t.row(vec![
            task.name.clone(),
            pid.to_string(),
            format!("{:.3}", demand as f64 / 1e6),
            format!("{:.3}", traced as f64 / 1e6),
            format!("{ratio:.4}"),
            tl.tasks.get(pid).map_or(0, |t| t.switch_ins).to_string(),
        ]);
        per_task.push(json!({"name": task.name, "pid": pid, "demand_ns": demand, "traced_ns": traced}));
    }
    s.tables.push(t);
    let stopped = schedlab_os::signals::stop_requested();
    if stopped {
        s.status = Status::Interrupted;
    }
    let pids: std::collections::BTreeSet<i32> = run.pids.iter().copied().collect();
    let pid_list: Vec<String> = run.pids.iter().map(i32::to_string).collect();
    s.summary = format!(
        "{} tasks on CPU(s) {:?} for {:.3} s; {} events ({} lost). Import it with `schedlab trace import {{run dir}}/trace.txt \
         --meta {{run dir}}/meta.json --start-at-exec --pid {}`.{}",
        tasks.len(),
        req.host_cpus,
        (run.end_ns - run.release_ns) as f64 / 1e9,
        stats.events,
        stats.lost_events(),
        pid_list.join(","),
        run.meta.steal_summary()
    );
    s.files.push(super::perfetto::file(&tl, &run.pids, "workload", "schedlab trace record --workload")?);
    s.files.push(DataFile::text("trace.txt", run.text));
    s.files.push(DataFile::text("meta.json", serde_json::to_string_pretty(&run.meta)?));
    s.files.push(DataFile::text("workload.json", req.workload.to_json_string()));
    s.parameters =
        json!({ "tasks": req.workload.tasks.len(), "cpus": req.host_cpus, "limit_s": req.limit.as_secs_f64() });
    s.results =
        json!({ "parse": stats, "tasks": per_task, "select": Select::Pids(pids), "anomalies": tl.anomalies.len() });
    Ok(s)
}
