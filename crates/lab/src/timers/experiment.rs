//! The "timers" experiment of `schedlab reproduce`: seed 000's Tables 1–2 with busy ticks as
//! the seed ran them, the same run with sleeping ticks on one array for all queues (wake
//! lateness), and a small scale study — one section, one results directory.

use super::reproduce::{self, ArrayChoice, QueueSummary};
use super::scale;
use super::service::TickMode;
use crate::{Experiment, RunContext, Scale};
use schedlab_report::section::{DataFile, Section, Verdict};
use schedlab_timerq::Kind;
use serde_json::json;

/// Seed 000's experiment.
pub struct Timers;

fn divisor(scale: Scale) -> u32 {
    match scale {
        Scale::Quick => 20,
        Scale::Default => 5,
        Scale::Full => 1,
    }
}

fn base(scale: Scale, mode: TickMode, array: ArrayChoice) -> reproduce::Params {
    reproduce::Params {
        tick_ns: 1_000_000,
        tick_mode: mode,
        rt_priority: None,
        trials: 3,
        queues: Kind::ALL.to_vec(),
        array,
        time_divisor: divisor(scale),
    }
}

fn titled(prefix: &str, mut tables: Vec<schedlab_report::section::Table>) -> Vec<schedlab_report::section::Table> {
    for t in &mut tables {
        t.title = format!("{prefix}: {}", t.title);
    }
    tables
}

impl Experiment for Timers {
    fn name(&self) -> &'static str {
        "timers"
    }
    fn seed(&self) -> &'static str {
        "000"
    }
    fn title(&self) -> &'static str {
        "Delta queue vs control list (and heap, timing wheel) for sleeping threads"
    }
    fn scale_of(&self, scale: Scale) -> String {
        match divisor(scale) {
            1 => "the seed's sleep-time arrays as published: the seed's scale".into(),
            d => format!("the seed's sleep-time arrays with every sleep ÷{d} (seed: as published)"),
        }
    }
    fn estimate_s(&self, scale: Scale) -> f64 {
        // 2 modes × 4 queues × 3 trials × longest sleep (~9.93 s / divisor), plus the scale study.
        24.0 * 9.93 / divisor(scale) as f64 + 15.0
    }

    fn run(&self, ctx: &RunContext) -> anyhow::Result<Section> {
        let exe = std::env::current_exe()?;
        let busy = base(ctx.scale, TickMode::Busy, ArrayChoice::Seed);
        // The sleeping-tick pass runs the ticker and sleepers under SCHED_FIFO when it can (the
        // user-space stand-in for a timer interrupt, which no ordinary thread delays); the busy
        // pass stays SCHED_OTHER, as the seed's threads, so it never holds a CPU at RT priority.
        let mut sleep = base(ctx.scale, TickMode::Sleep, ArrayChoice::Fig9);
        if schedlab_os::is_root() && schedlab_os::sched::require_rt_throttling().is_ok() {
            sleep.rt_priority = Some(10);
        }
        let scale_p = scale::Params {
            max_n: if ctx.scale == Scale::Quick { 100_000 } else { 1_000_000 },
            budget_s: if ctx.scale == Scale::Quick { 1.0 } else { 2.0 },
            queues: Kind::ALL.to_vec(),
            seed: 0,
        };
        let report = |base: f64, span: f64| move |f: f64, what: &str| ctx.progress.update(base + f * span, what);
        let busy_q = reproduce::run(&busy, &exe, &report(0.0, 0.45))?;
        let sleep_q = reproduce::run(&sleep, &exe, &report(0.45, 0.45))?;
        ctx.progress.update(0.9, "scale study");
        let sc = scale::run(&scale_p, &|_| {})?;

        let seed_doc = reproduce::document(&busy, &busy_q);
        let mut s = Section::new(self.name(), self.seed(), self.title());
        s.parameters = json!({ "scale": ctx.scale, "seed_tables": busy, "sleep_mode": sleep, "scale_study": scale_p });
        s.results = json!({
            "queues": seed_doc["queues"],
            "published": seed_doc["published"],
            "scale_note": reproduce::scale_note(&busy),
            "sleep_mode": reproduce::document(&sleep, &sleep_q),
            "scale": sc,
        });
        let (h, rows) = sc.csv();
        s.files.push(DataFile::csv("scale.csv", &h, rows));
        s.files.push(queue_csv("seed_tables.csv", &busy_q));
        s.files.push(queue_csv("sleep_mode.csv", &sleep_q));
        s.summary = format!(
            "100 threads sleep for the seed's times; a ticker drives each queue (control, delta, heap, wheel), \
             3 trials per queue, each trial its own process. Busy ticks with the seed's arrays (delta: Figure 9, \
             control: Figure 10) for Tables 1–2; sleeping ticks with Figure 9's array for every queue for wake \
             lateness. {}. Scale study up to N = {}.",
            reproduce::scale_note(&busy),
            scale_p.max_n
        );
        s.tables.extend(titled("Busy ticks (seed)", reproduce::tables(&busy, &busy_q)));
        s.tables.extend(titled("Sleeping ticks, one array", reproduce::tables(&sleep, &sleep_q)));
        s.verdicts.extend(reproduce::verdicts(&busy, &busy_q));
        s.verdicts.extend(
            reproduce::verdicts(&sleep, &sleep_q)
                .into_iter()
                .filter(|v| v.claim.contains("lateness") || v.claim.contains("fewer")),
        );
        s.verdicts.extend(scale_verdicts(&sc));
        s.figures.extend(sc.figures());
        Ok(s)
    }
}

/// Every trial of every queue as raw CSV rows.
fn queue_csv(name: &str, q: &[(Kind, QueueSummary)]) -> DataFile {
    let header = [
        "queue",
        "array",
        "trial",
        "peak_rss_kb",
        "real_s",
        "user_s",
        "sys_s",
        "ticker_cpu_s",
        "late_p50_us",
        "late_p99_us",
        "late_max_us",
        "timer_ops",
        "insert_ops",
    ];
    let mut rows = vec![];
    for (k, s) in q {
        for (i, t) in s.trials.iter().enumerate() {
            rows.push(vec![
                k.name().to_string(),
                s.array.clone(),
                (i + 1).to_string(),
                t.peak_rss_kb.to_string(),
                format!("{:.4}", t.real_s),
                format!("{:.4}", t.user_s),
                format!("{:.4}", t.sys_s),
                format!("{:.4}", t.ticker_cpu_s),
                format!("{:.1}", t.lateness_us.p50),
                format!("{:.1}", t.lateness_us.p99),
                format!("{:.1}", t.lateness_us.max),
                t.timer_ops.to_string(),
                t.insert_ops.to_string(),
            ]);
        }
    }
    DataFile::csv(name, &header, rows)
}

/// What the scale study says about the seed's choice: the delta list's per-tick cost stays
/// flat while the control list's grows with N; the wheel's insert stays flat too.
pub fn scale_verdicts(sc: &scale::Outcome) -> Vec<Verdict> {
    let series = |k: Kind| sc.cells.iter().filter(|c| c.queue == k).collect::<Vec<_>>();
    let mut v = vec![];
    let (c, d) = (series(Kind::Control), series(Kind::Delta));
    if let (Some(c0), Some(c1), Some(d1)) = (c.first(), c.last(), d.last()) {
        v.push(Verdict::seed_claim(
            "Per tick, the control list's cost grows with N while the delta list's does not",
            c1.ns_per_tick > 10.0 * c0.ns_per_tick && d1.ns_per_tick < c1.ns_per_tick,
            format!(
                "control {:.0} ns/tick at N={} → {:.0} ns at N={}; delta {:.0} ns/tick at N={}",
                c0.ns_per_tick, c0.n, c1.ns_per_tick, c1.n, d1.ns_per_tick, d1.n
            ),
        ));
    }
    if let (Some(d0), Some(d1)) = (d.first(), d.last()) {
        v.push(Verdict::seed_claim(
            "The delta list pays for it at insert: O(n) per insert",
            d1.ns_per_insert > 10.0 * d0.ns_per_insert,
            format!("delta {:.0} ns/insert at N={} → {:.0} ns at N={}", d0.ns_per_insert, d0.n, d1.ns_per_insert, d1.n),
        ));
    }
    let w = series(Kind::Wheel);
    if let (Some(w0), Some(w1)) = (w.first(), w.last()) {
        v.push(Verdict::goal(
            "The timing wheel's insert stays flat (within 4×, or under 20 ns) from the smallest to the largest N",
            w1.ns_per_insert < 4.0 * w0.ns_per_insert.max(5.0),
            format!("wheel {:.0} ns/insert at N={} → {:.0} ns at N={}", w0.ns_per_insert, w0.n, w1.ns_per_insert, w1.n),
        ));
    }
    v
}
