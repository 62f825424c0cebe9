//! What `schedlab taskman topology|run|bench-queue` print: the topology and its roles, the
//! task summary of a run with what was restored, and the queue benchmark — as tables, so the
//! command line only parses and prints.

use super::jobs::JobsReport;
use super::qbench::QueueBench;
use schedlab_os::affinity::format_cpu_list;
use schedlab_os::topology::Topology;
use schedlab_report::section::Table;

fn human_bytes(n: u64) -> String {
    if n >= 1 << 20 && n & ((1 << 20) - 1) == 0 {
        format!("{} MiB", n >> 20)
    } else if n >= 1024 {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} B")
    }
}

/// The CPUs with their role, the caches, and a closing sentence.
pub fn topology(t: &Topology) -> (Vec<Table>, String) {
    let mut cpus = Table::new("CPUs", &["cpu", "package", "core", "SMT siblings", "role"]);
    for c in &t.cpus {
        let role = if t.reserved_core().contains(&c.id) {
            "reserved for the system (IRQs)"
        } else if t.worker_cpus().contains(&c.id) {
            "worker"
        } else {
            "SMT sibling of a worker (left idle)"
        };
        cpus.row(vec![
            c.id.to_string(),
            c.package.to_string(),
            c.core.to_string(),
            format_cpu_list(&c.siblings),
            role.into(),
        ]);
    }
    let mut caches = Table::new("Caches", &["level", "type", "size", "shared by CPUs"]);
    for c in t.caches() {
        caches.row(vec![c.level.to_string(), c.kind, human_bytes(c.size_bytes), format_cpu_list(&c.shared_cpus)]);
    }
    let line = format!(
        "{} online CPU(s), {} package(s), {} core(s); default: {} worker(s) on CPU(s) {}",
        t.cpus.len(),
        t.packages().len(),
        t.cores().len(),
        t.worker_cpus().len(),
        if t.worker_cpus().is_empty() { "(none)".into() } else { format_cpu_list(&t.worker_cpus()) }
    );
    (vec![cpus, caches], line)
}

/// The tasks of a run (FCFS order), then what the manager did and restored, in lines.
pub fn jobs(report: &JobsReport) -> (Table, Vec<String>) {
    let mut t = Table::new("Tasks (FCFS)", &["#", "command", "worker", "cpu", "status", "exit", "wait (s)", "run (s)"]);
    for j in &report.jobs {
        t.row(vec![
            j.id.to_string(),
            j.command.clone(),
            j.worker.to_string(),
            j.cpu.to_string(),
            j.status.clone() + &j.error.as_ref().map(|e| format!(": {e}")).unwrap_or_default(),
            match (j.exit_code, j.signal) {
                (Some(c), _) => c.to_string(),
                (None, Some(s)) => format!("signal {s}"),
                _ => "—".into(),
            },
            format!("{:.3}", j.wait_s),
            format!("{:.3}", j.wall_s),
        ]);
    }
    let m = &report.manager;
    let refused = if m.irq_refused.is_empty() {
        "none".to_string()
    } else {
        m.irq_refused.iter().map(|r| format!("{} ({})", r.irq, r.error)).collect::<Vec<_>>().join(", ")
    };
    let lines = vec![
        format!(
            "{} task(s): {} ok, {} failed, {} killed, {} panicked, {} cancelled, {} error; {:.3} s in all",
            report.jobs.len(),
            report.count("ok"),
            report.count("failed"),
            report.count("killed"),
            report.count("panicked"),
            report.count("cancelled"),
            report.count("error"),
            report.wall_s
        ),
        format!(
            "workers: {} under {} priority {} on CPU(s) {}; IRQs moved to CPU(s) {}: {}, refused: {refused}",
            m.workers.len(),
            m.plan.policy.kernel_name(),
            m.plan.priority,
            m.workers.iter().map(|w| format_cpu_list(&w.cpus)).collect::<Vec<_>>().join(" "),
            format_cpu_list(&m.plan.reserved),
            m.irq_moved.len(),
        ),
        format!(
            "restored: worker policies/affinity {}, IRQ masks {}",
            if m.workers.iter().all(|w| w.restored) { "yes" } else { "NO" },
            if m.irq_restore.failed.is_empty() {
                "yes".to_string()
            } else {
                format!("NO ({:?})", m.irq_restore.failed)
            }
        ),
    ];
    (t, lines)
}

/// The queue benchmark: ns per empty task and speed-up over the seed's mutex FCFS queue.
pub fn queue_bench(q: &QueueBench, tasks: usize, reps: usize) -> Table {
    let mut t = Table::new(
        format!("ns per empty task ({tasks} tasks × {reps} reps; worker CPU(s) {})", format_cpu_list(&q.worker_cpus)),
        &["queue", "ns/task (mean ± 95% CI)", "speed-up vs mutex FCFS"],
    );
    for r in &q.rows {
        t.row(vec![
            r.queue.clone(),
            format!("{:.1} ± {:.1}", r.ns_per_task.mean, r.ns_per_task.ci95),
            format!("{:.2}×", r.speedup_vs_mutex),
        ]);
    }
    t.with_note(
        "All pools SCHED_OTHER on the same worker CPUs; tasks submitted from the reserved CPU. Compare ratios, not \
         absolute ns, on a busy machine.",
    )
}
