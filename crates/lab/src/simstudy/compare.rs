//! Run one workload under several policies and compare them: the side-by-side table (best per
//! metric marked), per-task tables, and the JSON document of `schedlab sim run`.

use super::gantt;
use schedlab_report::section::{Figure, Section, Table};
use schedlab_sim::engine::{simulate, simulate_per_cpu, SimConfig, SimResult};
use schedlab_sim::policies::{by_spec, SpecError};
use schedlab_sim::workload::Workload;
use schedlab_sim::{Dur, Policy};
use serde_json::{json, Value};

/// `schedlab sim run` as a section: the side-by-side table, per-task tables when asked, a
/// Gantt chart when slices were recorded (of `window`, ns, when given), and the comparison
/// document as results.
pub fn section(
    w: &Workload,
    results: &[SimResult],
    cfg: &SimConfig,
    per_cpu: bool,
    per_task: bool,
    window: Option<(u64, u64)>,
) -> Section {
    let mut s = Section::new("sim-run", "003", "Policies side by side");
    s.tables.push(comparison_table(results));
    if per_task {
        s.tables.extend(results.iter().map(task_table));
    }
    if cfg.record_slices {
        s.figures.push(Figure {
            title: "Gantt".into(),
            file: "gantt.svg".into(),
            svg: gantt::chart(w, results, "Who ran where", window).to_svg(),
            caption: String::new(),
        });
    }
    s.summary = format!(
        "{} tasks on {} CPU(s), {} queue(s), switch cost {} ms.",
        w.tasks.len(),
        cfg.cpus,
        if per_cpu { "per-CPU" } else { "one global" },
        cfg.switch_cost as f64 / 1e6
    );
    s.results = comparison_json(results, cfg, per_cpu);
    s
}

/// Every policy spec the simulator knows, with its defaults (`schedlab sim policies`).
pub fn catalogue_table() -> Table {
    let mut t = Table::new(
        "Policy specs (name:key=value,...; times with their unit: 4ms, 500us, 1s)",
        &["spec (defaults)", "what", "source"],
    );
    for (s, d, src) in schedlab_sim::policies::CATALOGUE {
        t.row(vec![s.to_string(), d.to_string(), src.to_string()]);
    }
    t.with_note("Priorities: a lower number is a higher priority.")
}

/// Check every spec before anything runs (bad input is rejected up front).
pub fn check_specs(specs: &[String]) -> Result<(), SpecError> {
    specs.iter().try_for_each(|s| by_spec(s).map(drop))
}

/// Simulate `w` under each spec, with one global queue or per-CPU queues.
pub fn run_all(
    w: &Workload,
    specs: &[String],
    cfg: &SimConfig,
    per_cpu: bool,
    tick: TickChoice,
) -> Result<Vec<SimResult>, SpecError> {
    check_specs(specs)?;
    specs
        .iter()
        .map(|s| {
            let cfg = SimConfig { tick: tick.for_policy(by_spec(s)?.as_ref()), ..cfg.clone() };
            if per_cpu {
                let mut qs = (0..cfg.cpus).map(|_| by_spec(s)).collect::<Result<Vec<_>, _>>()?;
                Ok(simulate_per_cpu(w, &mut qs, &cfg))
            } else {
                let mut p = by_spec(s)?;
                Ok(simulate(w, p.as_mut(), &cfg))
            }
        })
        .collect()
}

/// How the scheduler tick is chosen for each policy of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TickChoice {
    /// This tick for the policies that model a tick-driven kernel (`Policy::tick_driven`: the
    /// Linux models), exact slice ends for the textbook ones.
    ForLinux(Option<Dur>),
    /// This tick (None = exact slice ends) for every policy.
    Every(Option<Dur>),
}

impl TickChoice {
    /// No tick for anyone: every slice ends exactly.
    pub const NONE: TickChoice = TickChoice::Every(None);

    /// The tick `p` runs with.
    pub fn for_policy(self, p: &dyn Policy) -> Option<Dur> {
        match self {
            TickChoice::ForLinux(t) if p.tick_driven() => t,
            TickChoice::ForLinux(_) => None,
            TickChoice::Every(t) => t,
        }
    }
}

/// A spec for this machine: the Linux models (`eevdf`, `linux`) scale their base slice by the
/// CPU count and clamp lag by the tick, so a spec that does not set `cpus`, `hz` or
/// `base_slice` gets the host's (the base slice only when the kernel lets us read it).
pub fn for_host(spec: &str, cpus: usize, hz: Option<u32>, base_slice_ns: Option<u64>) -> String {
    let name = spec.split(':').next().unwrap_or(spec);
    if !matches!(name, "eevdf" | "linux") {
        return spec.to_string();
    }
    let given = |key: &str| spec.split([':', ',']).any(|kv| kv.split('=').next() == Some(key));
    let mut extra = vec![];
    if !given("cpus") {
        extra.push(format!("cpus={cpus}"));
    }
    if let (false, Some(hz)) = (given("hz"), hz) {
        extra.push(format!("hz={hz}"));
    }
    if let (false, Some(ns)) = (given("base_slice"), base_slice_ns) {
        extra.push(format!("base_slice={}us", ns / 1000));
    }
    if extra.is_empty() {
        spec.to_string()
    } else if spec.contains(':') {
        format!("{spec},{}", extra.join(","))
    } else {
        format!("{spec}:{}", extra.join(","))
    }
}

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

/// A metric of the comparison: header, value, whether lower is better.
struct Metric {
    name: &'static str,
    value: fn(&SimResult) -> f64,
    lower_better: bool,
    decimals: usize,
}

const METRICS: &[Metric] = &[
    Metric { name: "avg waiting ms", value: |r| ms(r.overall.avg_waiting), lower_better: true, decimals: 3 },
    Metric { name: "avg turnaround ms", value: |r| ms(r.overall.avg_turnaround), lower_better: true, decimals: 3 },
    Metric { name: "avg response ms", value: |r| ms(r.overall.avg_response), lower_better: true, decimals: 3 },
    Metric { name: "max waiting ms", value: |r| ms(r.overall.max_waiting as f64), lower_better: true, decimals: 3 },
    Metric { name: "makespan ms", value: |r| ms(r.overall.makespan as f64), lower_better: true, decimals: 3 },
    Metric { name: "throughput /s", value: |r| r.overall.throughput, lower_better: false, decimals: 2 },
    Metric { name: "CPU util %", value: |r| 100.0 * r.overall.utilisation, lower_better: false, decimals: 1 },
    Metric { name: "ctx switches", value: |r| r.overall.context_switches as f64, lower_better: true, decimals: 0 },
    Metric { name: "preemptions", value: |r| r.overall.preemptions as f64, lower_better: true, decimals: 0 },
    Metric { name: "quantum expiries", value: |r| r.overall.quantum_expiries as f64, lower_better: true, decimals: 0 },
    Metric { name: "migrations", value: |r| r.overall.migrations as f64, lower_better: true, decimals: 0 },
    Metric { name: "deadline misses", value: |r| r.overall.deadline_misses as f64, lower_better: true, decimals: 0 },
    Metric { name: "Jain cpu/weight", value: |r| r.overall.jain_cpu_per_weight, lower_better: false, decimals: 3 },
];

/// One row per policy, one column per metric; the best value of each column ends in `*`, in the
/// columns whose values (as printed) differ — a tie of every row has no best.
pub fn comparison_table(results: &[SimResult]) -> Table {
    let mut cols = vec!["policy"];
    cols.extend(METRICS.iter().map(|m| m.name));
    let mut t = Table::new("Policies side by side (* = best in column)", &cols);
    let best: Vec<f64> = METRICS
        .iter()
        .map(|m| {
            let vals = results.iter().map(|r| (m.value)(r));
            if m.lower_better {
                vals.fold(f64::INFINITY, f64::min)
            } else {
                vals.fold(f64::NEG_INFINITY, f64::max)
            }
        })
        .collect();
    let differs: Vec<bool> = METRICS
        .iter()
        .map(|m| {
            let mut printed = results.iter().map(|r| format!("{:.*}", m.decimals, (m.value)(r)));
            let first = printed.next();
            printed.any(|p| Some(&p) != first.as_ref())
        })
        .collect();
    for r in results {
        let mut row = vec![r.policy.clone()];
        for ((m, b), differs) in METRICS.iter().zip(&best).zip(&differs) {
            let v = (m.value)(r);
            let cell = format!("{v:.*}", m.decimals);
            let is_best = *differs && format!("{b:.*}", m.decimals) == cell;
            row.push(if is_best { format!("{cell}*") } else { cell });
        }
        t.row(row);
    }
    let unfinished: Vec<String> = results
        .iter()
        .filter(|r| r.overall.finished < r.overall.tasks)
        .map(|r| format!("{}: {}/{} finished", r.policy, r.overall.finished, r.overall.tasks))
        .collect();
    let mut note =
        String::from("Waiting = time in a run queue; response = first run − arrival; averages over finished tasks.");
    if !unfinished.is_empty() {
        note.push_str(&format!(" Stopped at the horizon: {}.", unfinished.join("; ")));
    }
    t.with_note(note)
}

/// Per-task results of one policy.
pub fn task_table(r: &SimResult) -> Table {
    let mut t = Table::new(
        format!("Tasks under {}", r.policy),
        &[
            "task",
            "arrival ms",
            "finish ms",
            "turnaround ms",
            "waiting ms",
            "response ms",
            "cpu ms",
            "ctx sw",
            "preempt",
            "expiries",
            "migr",
            "misses",
        ],
    );
    let opt = |x: Option<u64>| x.map_or("-".to_string(), |v| format!("{:.3}", ms(v as f64)));
    for x in &r.tasks {
        t.row(vec![
            x.name.to_string(),
            format!("{:.3}", ms(x.arrival as f64)),
            opt(x.finish),
            opt(x.turnaround),
            format!("{:.3}", ms(x.waiting as f64)),
            opt(x.response),
            format!("{:.3}", ms(x.cpu as f64)),
            x.context_switches.to_string(),
            x.preemptions.to_string(),
            x.quantum_expiries.to_string(),
            x.migrations.to_string(),
            x.deadline_misses.to_string(),
        ]);
    }
    t
}

/// The `policies` entry of one result (times in ms).
pub fn policy_json(r: &SimResult) -> Value {
    let o = &r.overall;
    let opt = |x: Option<u64>| x.map(|v| ms(v as f64));
    json!({
        "policy": r.policy,
        "avg_waiting": ms(o.avg_waiting),
        "avg_turnaround": ms(o.avg_turnaround),
        "avg_response": ms(o.avg_response),
        "max_waiting": ms(o.max_waiting as f64),
        "makespan": ms(o.makespan as f64),
        "throughput": o.throughput,
        "utilisation": o.utilisation,
        "context_switches": o.context_switches,
        "preemptions": o.preemptions,
        "quantum_expiries": o.quantum_expiries,
        "migrations": o.migrations,
        "deadline_misses": o.deadline_misses,
        "jain_cpu_per_weight": o.jain_cpu_per_weight,
        "share_error_max": o.share_error_max,
        "finished": o.finished,
        "events": r.events,
        "tasks": r.tasks.iter().map(|t| json!({
            "name": t.name,
            "arrival": ms(t.arrival as f64),
            "finish": opt(t.finish),
            "turnaround": opt(t.turnaround),
            "waiting": ms(t.waiting as f64),
            "response": opt(t.response),
            "cpu": ms(t.cpu as f64),
            "context_switches": t.context_switches,
            "preemptions": t.preemptions,
            "quantum_expiries": t.quantum_expiries,
            "migrations": t.migrations,
            "deadline_misses": t.deadline_misses,
            "jobs_done": t.jobs_done,
            "jobs_skipped": t.jobs_skipped,
            "jobs_aborted": t.jobs_aborted,
        })).collect::<Vec<_>>(),
    })
}

/// The document of `schedlab sim run --json`: `policies` array, times in ms.
pub fn comparison_json(results: &[SimResult], cfg: &SimConfig, per_cpu: bool) -> Value {
    json!({
        "time_unit": "ms",
        "cpus": cfg.cpus,
        "switch_cost_ms": ms(cfg.switch_cost as f64),
        "queues": if per_cpu { "per-cpu" } else { "global" },
        "priority_inheritance": cfg.priority_inheritance,
        "policies": results.iter().map(policy_json).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_sim::workload::TaskSpec;

    #[test]
    fn best_values_are_marked() {
        let w = Workload {
            cpus: Some(1),
            tasks: vec![
                TaskSpec::cpu("P1", 0, 24_000_000),
                TaskSpec::cpu("P2", 0, 3_000_000),
                TaskSpec::cpu("P3", 0, 3_000_000),
            ],
        };
        let rs = run_all(&w, &["fcfs".into(), "rr:quantum=4ms".into()], &SimConfig::default(), false, TickChoice::NONE)
            .unwrap();
        let t = comparison_table(&rs);
        assert_eq!(t.rows[0][1], "17.000");
        assert_eq!(t.rows[1][1], "5.667*");
        let col = |name: &str| t.columns.iter().position(|c| c == name).unwrap();
        // Round robin with a 4 ms quantum: P1 (24 ms) runs 0–4, 10–14, …, 26–30: its slice runs
        // out with work left 5 times (the sixth ends its burst); P2 and P3 (3 ms) finish inside
        // their first slice. Nothing is pre-empted by a wake-up or an arrival.
        let (pre, exp) = (col("preemptions"), col("quantum expiries"));
        assert_eq!((t.rows[1][pre].as_str(), t.rows[1][exp].as_str()), ("0", "5"));
        assert_eq!(rs[1].tasks[0].quantum_expiries, 5);
        assert_eq!(rs[0].overall.quantum_expiries, 0, "FCFS has no quantum");
        let migrations = col("migrations");
        assert_eq!((t.rows[0][migrations].as_str(), t.rows[1][migrations].as_str()), ("0", "0"), "a tie has no star");
        let doc = comparison_json(&rs, &SimConfig::default(), false);
        assert_eq!(doc["policies"][0]["avg_waiting"], 17.0);
        assert_eq!(doc["policies"][1]["tasks"][1]["waiting"], 4.0);
        assert_eq!(for_host("eevdf", 4, Some(1000), None), "eevdf:cpus=4,hz=1000");
        assert_eq!(
            for_host("linux:rr_quantum=10ms", 2, Some(250), Some(700_000)),
            "linux:rr_quantum=10ms,cpus=2,hz=250,base_slice=700us"
        );
        assert_eq!(for_host("eevdf:cpus=8,hz=100", 2, Some(250), None), "eevdf:cpus=8,hz=100");
        assert_eq!(for_host("rr:quantum=4ms", 2, Some(250), None), "rr:quantum=4ms");
        assert!(run_all(&w, &["fcfs".into(), "rr:quantum=0ms".into()], &SimConfig::default(), false, TickChoice::NONE)
            .is_err());
    }
}
