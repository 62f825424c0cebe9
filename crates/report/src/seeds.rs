//! The five seed documents as the report presents them: a title, where it comes from, what
//! schedlab runs for it, the headline published claim, and the seed's own table rebuilt from
//! `data/seed_numbers.json` (passed in by the caller, so this crate does not embed a copy).

use crate::section::Table;
use serde_json::Value;

/// One seed document.
#[derive(Debug, Clone, Copy)]
pub struct Seed {
    /// `000` ... `004`.
    pub id: &'static str,
    /// Its key in `data/seed_numbers.json`.
    pub key: &'static str,
    pub title: &'static str,
    pub source: &'static str,
    /// The experiments that reproduce it (registry names) and what they do.
    pub experiments: &'static str,
    /// The headline published claim, in words.
    pub claim: &'static str,
}

/// Every seed, in order. The report always has one section for each.
pub const SEEDS: [Seed; 5] = [
    Seed {
        id: "000",
        key: "000_delta_queuing",
        title: "Delta queuing for sleeping processes",
        source: "R. Alsheikh, “Computer Efficiency and Delta Queuing” (two Linux system calls, 100 threads, 1 ms tick)",
        experiments: "timers: control list vs delta list (and heap, timing wheel) — the live sleep service with the seed's sleep times, scaling and peer benchmarks",
        claim: "The delta queue does less work per tick than the control list (one head decrement vs. every entry): \
                it used ≈0.1 s less system CPU (9.77 vs 9.86 s) and ≈0.05 s less real time, for ≈17 kB more memory.",
    },
    Seed {
        id: "001",
        key: "001_linux_scheduler",
        title: "Investigating the Linux scheduler",
        source: "L. Dachman, CSCI 3753 PA4 (CPU, I/O and mixed processes under SCHED_OTHER/FIFO/RR; rusage per case)",
        experiments: "policies: 100/1000/10000 CPU-, I/O- and mixed-bound processes under each Linux policy, rusage summed per case",
        claim: "SCHED_FIFO and SCHED_RR always finish sooner than SCHED_OTHER, which causes far more involuntary context switches; \
                FIFO and RR are close to each other.",
    },
    Seed {
        id: "002",
        key: "002_receive_livelock",
        title: "Eliminating receive livelock",
        source: "D. Camacho, G. Vargas, after Mogul & Ramakrishnan (USENIX 1996): interrupt, polling and hybrid receive on 3 devices",
        experiments: "livelock: interrupt / polling / hybrid / NAPI receive paths, live on loopback UDP and in the discrete-event model",
        claim: "Interrupt and hybrid receive collapse (livelock) at around 300 pkt/s while polling keeps delivering (≈745 pkt/s); \
                the hybrid fills the buffer fewer times but does not avoid the livelock.",
    },
    Seed {
        id: "003",
        key: "003_task_manager",
        title: "Task manager for exclusive computation",
        source: "A. I. Martyshkin, RTEP (pinned real-time worker threads, IRQ steering; perf counters over 100 runs)",
        experiments: "taskman: pinned SCHED_FIFO workers with an FCFS task queue vs. the default configuration, with and without external load; \
                      sim-catalogue: the scheduler catalogue in the simulator",
        claim: "With the task manager (C) the runtime hardly depends on external load (≈11–12 s with 2–4 threads vs 19–24 s by default under load) \
                and context switches and migrations nearly vanish.",
    },
    Seed {
        id: "004",
        key: "004_weighted_round_robin",
        title: "Weighted round robin",
        source: "S. George, “Practicality of Implementing a Weighted Round Robin Scheduler” (kernel module, weights 1–20, 10 ms per weight)",
        experiments: "wrr: a user-space weighted round-robin dispatcher for real processes; wrr-sim: the WRR policy in the simulator",
        claim: "Iterations in 30 s grow in proportion to the weight (weight 20 did 19.9× weight 1), \
                but the time to finish a fixed job does not (weight 1 took only 1.8× as long as weight 20).",
    },
];

/// The seed with this id, if any.
pub fn find(id: &str) -> Option<&'static Seed> {
    SEEDS.iter().find(|s| s.id == id)
}

/// The seed's published table(s), rebuilt from `data/seed_numbers.json`. Empty when the
/// document lacks the entry (the claim still stands in words).
pub fn published_tables(seed: &Seed, numbers: &Value) -> Vec<Table> {
    let d = &numbers[seed.key];
    if d.is_null() {
        return vec![];
    }
    match seed.id {
        "000" => seed000(d),
        "001" => seed001(d),
        "002" => seed002(d, &numbers["mogul_ramakrishnan_1996"]),
        "003" => seed003(d),
        "004" => seed004(d),
        _ => vec![],
    }
}

fn num(v: &Value) -> String {
    match v.as_f64() {
        Some(x) if x.abs() >= 1e7 => format!("{x:.3e}"),
        Some(x) if x.fract() == 0.0 => format!("{x:.0}"),
        Some(x) => {
            let s = format!("{x:.4}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        }
        None => v.as_str().map(str::to_string).unwrap_or_else(|| "—".into()),
    }
}

fn seed000(d: &Value) -> Vec<Table> {
    let mut t = Table::new(
        "Published Tables 1–2: three trials of 100 sleeping threads",
        &["queue", "trial", "peak RSS (kB)", "real (s)", "system (s)"],
    );
    for (name, key) in [("delta", "table1_delta"), ("control", "table2_control")] {
        let tab = &d[key];
        let n = tab["real_s"].as_array().map_or(0, |a| a.len());
        for i in 0..n {
            t.row(vec![
                name.into(),
                (i + 1).to_string(),
                num(&tab["peak_rss_kb"][i]),
                num(&tab["real_s"][i]),
                num(&tab["sys_s"][i]),
            ]);
        }
        let avg = &tab["avg"];
        t.row(vec![name.into(), "average".into(), num(&avg["peak_rss_kb"]), num(&avg["real_s"]), num(&avg["sys_s"])]);
    }
    vec![t.with_note(format!("Hypothesis: {}", d["hypothesis"].as_str().unwrap_or("")))]
}

fn seed001(d: &Value) -> Vec<Table> {
    let mut t = Table::new(
        "Published results: rusage summed over the processes of each case",
        &[
            "policy",
            "processes",
            "workload",
            "total CPU (s)",
            "avg per process (s)",
            "avg voluntary ctx",
            "avg involuntary ctx",
        ],
    );
    for c in d["cases"].as_array().into_iter().flatten() {
        t.row(vec![
            num(&c["policy"]),
            num(&c["procs"]),
            num(&c["workload"]),
            num(&c["total_s"]),
            num(&c["average_s"]),
            num(&c["avg_voluntary_ctx"]),
            num(&c["avg_involuntary_ctx"]),
        ]);
    }
    vec![t.with_note(format!("Test machine: {}.", d["machine"].as_str().unwrap_or("?")))]
}

fn seed002(d: &Value, mogul: &Value) -> Vec<Table> {
    let mut claims = Table::new("Published claims (simulation with 3 devices, buffer of 100)", &["#", "claim"]);
    for (i, c) in d["claims"].as_array().into_iter().flatten().enumerate() {
        claims.row(vec![(i + 1).to_string(), num(c)]);
    }
    let mut out = vec![claims.with_note(format!(
        "{} s per point; buffer occupancy threshold {}.",
        num(&d["seconds_per_point"]),
        num(&d["perc_occup"])
    ))];
    if !mogul.is_null() {
        let mut m = Table::new("Mogul & Ramakrishnan 1996, read off the figures", &["measure", "pkt/s"]);
        for (label, key) in [
            ("unmodified kernel, peak output", "unmodified_peak_output"),
            ("unmodified kernel, output at 10,700 input", "unmodified_output_at_10700_input"),
            ("with screend, complete livelock at input", "screend_livelock_input"),
            ("polling with quota 5, plateau", "polling_quota5_plateau"),
        ] {
            m.row(vec![label.into(), num(&mogul[key])]);
        }
        out.push(m.with_note("≈ values; the reference the seed reproduces."));
    }
    out
}

fn seed003(d: &Value) -> Vec<Table> {
    let mut t = Table::new(
        "Published Table 2 (excerpt): default OS (D) vs task manager (C), mean of 100 runs",
        &[
            "load",
            "threads",
            "time D (s)",
            "time C (s)",
            "ctx switches D",
            "ctx switches C",
            "migrations D",
            "migrations C",
        ],
    );
    for r in d["table2"].as_array().into_iter().flatten() {
        t.row(vec![
            num(&r["load"]),
            num(&r["threads"]),
            num(&r["D"]["time"]["mean"]),
            num(&r["C"]["time"]["mean"]),
            num(&r["D"]["context-switches"]["mean"]),
            num(&r["C"]["context-switches"]["mean"]),
            num(&r["D"]["cpu-migrations"]["mean"]),
            num(&r["C"]["cpu-migrations"]["mean"]),
        ]);
    }
    vec![t.with_note(format!("Test machine: {}. {}", num(&d["machine"]), num(&d["note"])))]
}

fn seed004(d: &Value) -> Vec<Table> {
    let weights: Vec<String> = d["weights"].as_array().into_iter().flatten().map(num).collect();
    let mut cols: Vec<&str> = vec!["measure"];
    cols.extend(weights.iter().map(String::as_str));
    let mut t = Table::new("Published tests 1–2 by weight (10 runs each)", &cols);
    let row = |label: &str, v: &Value| {
        let mut r = vec![label.to_string()];
        r.extend((0..weights.len()).map(|i| num(&v[i])));
        r
    };
    let t1 = &d["test1_iterations_30s"];
    let t2 = &d["test2_seconds_for_2M"];
    t.row(row("iterations in 30 s (mean)", &t1["average"]));
    t.row(row("fold over weight 1", &t1["fold_over_w1"]));
    t.row(row("seconds for 2M encryptions (mean)", &t2["average"]));
    t.row(row("fold over weight 20", &t2["fold_over_w20"]));
    vec![t.with_note(format!("Slice = {} ms × weight.", num(&d["slice_ms_per_weight"])))]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers() -> Value {
        serde_json::from_str(include_str!("../../../data/seed_numbers.json")).unwrap()
    }

    #[test]
    fn every_seed_has_a_published_table() {
        let n = numbers();
        for s in &SEEDS {
            let tables = published_tables(s, &n);
            assert!(!tables.is_empty(), "seed {} has no published table", s.id);
            for t in &tables {
                assert!(!t.rows.is_empty(), "seed {}: {} is empty", s.id, t.title);
                assert!(t.rows.iter().all(|r| r.len() == t.columns.len()));
            }
        }
    }

    #[test]
    fn tables_carry_the_seed_numbers() {
        let n = numbers();
        let t000 = &published_tables(find("000").unwrap(), &n)[0];
        assert!(t000.rows.iter().any(|r| r[0] == "delta" && r[1] == "average" && r[4] == "9.77"));
        let t001 = &published_tables(find("001").unwrap(), &n)[0];
        assert_eq!(t001.rows.len(), 27);
        let t004 = &published_tables(find("004").unwrap(), &n)[0];
        assert_eq!(t004.columns, ["measure", "1", "4", "8", "12", "16", "20"]);
        assert_eq!(t004.rows[1][6], "19.8854");
        assert!(published_tables(find("003").unwrap(), &Value::Null).is_empty());
    }
}
