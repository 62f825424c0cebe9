//! The wake-up probe run just before each live run of a case ([`super::wake`]), and the spread
//! every replay draws from: all of them pooled.
//!
//! The wake-up path's cost is not steady here: most probes put a pre-empting wake-up at 8–11 µs,
//! 7 and 13 of the 33 of two validate runs at 12–24 µs (the cases' sleepers' own medians were
//! above 12 µs in about 3 of 21 per run). Yet a probe does not foretell the run after it: over
//! the 42 fair and FIFO sleepers of those two runs of 2026-11-28/29 (each replayed with the probe
//! made just before its run), the probe's median and the run's live median were uncorrelated
//! (r = −0.01), and the model, following its probe, missed wake-up medians of runs whose probe
//! was slow (18 µs against 8 live). So a probe next to a run says nothing more about that run
//! than any other, and every replay draws from the mixture of every probe of the validate run:
//! a slow probe is then one probe's share of the pool, not the whole calibration of one run.

use super::wake::{Delay, WakeProbe};
use schedlab_report::section::Table;
use schedlab_sim::engine::{WakeDelay, WakeDelays};

/// The delays a model draws from: each kind's spreads over `probes` pooled with equal weight (the
/// remote kinds over the probes that measured them).
pub fn pooled(probes: &[&WakeProbe]) -> Option<WakeDelays> {
    let pool = |kind: &dyn Fn(&WakeProbe) -> Option<&Delay>| {
        let parts: Vec<WakeDelay> = probes.iter().filter_map(|w| kind(w)).map(|d| d.spread).collect();
        WakeDelay::pooled(&parts)
    };
    Some(WakeDelays {
        idle: pool(&|w| Some(&w.idle))?,
        preempt: pool(&|w| Some(&w.preempt))?,
        preempt_rt: pool(&|w| Some(&w.preempt_rt)),
        task_preempt: pool(&|w| Some(&w.task_preempt))?,
        remote_idle: pool(&|w| w.remote_idle.as_ref()).unwrap_or_default(),
        remote_preempt: pool(&|w| w.remote_preempt.as_ref()).unwrap_or_default(),
        draw: 0,
    })
}

fn us(d: &Delay) -> String {
    format!("{:.1}", d.p50_ns as f64 / 1e3)
}

/// The kinds a probe measures, with the column each goes in.
fn kinds(w: &WakeProbe) -> [(&'static str, Option<&Delay>); 6] {
    [
        ("idle µs", Some(&w.idle)),
        ("pre-empting µs", Some(&w.preempt)),
        ("RT pre-empting µs", Some(&w.preempt_rt)),
        ("task pre-empting µs", Some(&w.task_preempt)),
        ("remote idle µs", w.remote_idle.as_ref()),
        ("remote pre-empting µs", w.remote_preempt.as_ref()),
    ]
}

/// A probe and the run it was made for: the case and the repeat (from 0).
pub type Probed<'a> = (&'a str, usize, WakeProbe);

/// One row per run: the median latency of each kind of wake-up its probe measured.
pub fn table(probes: &[Probed]) -> Table {
    let mut columns = vec!["case", "repeat"];
    if let Some((_, _, first)) = probes.first() {
        columns.extend(kinds(first).iter().map(|(c, _)| *c));
    }
    let mut t = Table::new("The wake-up probe before each run: median latency (waking to switch-in)", &columns)
        .keyed(&["case", "repeat"]);
    for (case, repeat, w) in probes {
        let mut row = vec![case.to_string(), (repeat + 1).to_string()];
        row.extend(kinds(w).iter().map(|(_, d)| d.map_or_else(|| "–".to_string(), us)));
        t.row(row);
    }
    t.with_note(
        "Each kind ran 1 s just before the run; every replay draws each wake-up's delay from all of these \
         probes pooled (16 quantiles of their mixture, each probe with equal weight). idle: a timer wake-up onto an idle CPU; pre-empting: one that pre-empts \
         a hog (RT: the sleeper at SCHED_FIFO); task pre-empting: a pipe wake-up that pre-empts its waker; remote: \
         from a task on the other CPU.",
    )
}

/// "… RT pre-empting 8.0–9.1 µs, …": the spread of the per-run probes, one kind after another.
pub fn sentence(probes: &[Probed]) -> String {
    let Some((_, _, first)) = probes.first() else { return String::new() };
    let ranges: Vec<String> = (0..kinds(first).len())
        .filter_map(|k| {
            let p50s: Vec<f64> =
                probes.iter().filter_map(|(_, _, w)| kinds(w)[k].1.map(|d| d.p50_ns as f64 / 1e3)).collect();
            let lo = p50s.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = p50s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let name = kinds(first)[k].0.trim_end_matches(" µs");
            (!p50s.is_empty()).then(|| format!("{name} {lo:.1}–{hi:.1} µs"))
        })
        .collect();
    format!(
        "A probe ran just before each live run (the table \"The wake-up probe before each run\"), and every \
         replay draws from all of them pooled; their medians ranged: {}.",
        ranges.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_sim::engine::WakeDelay;

    fn delay(p50_ns: u64) -> Delay {
        Delay { cpu: 1, samples: 100, p50_ns, spread: WakeDelay::from(p50_ns) }
    }

    fn probe(rt_ns: u64, remote: bool) -> WakeProbe {
        WakeProbe {
            idle: delay(20_000),
            preempt: delay(8_000),
            preempt_rt: delay(rt_ns),
            task_preempt: delay(2_000),
            remote_idle: remote.then(|| delay(25_000)),
            remote_preempt: remote.then(|| delay(12_000)),
        }
    }

    #[test]
    fn each_run_gets_a_row_and_the_sentence_gives_each_kinds_range() {
        let probes = vec![("a", 0, probe(8_000, true)), ("a", 1, probe(18_000, true))];
        let t = table(&probes);
        assert_eq!(t.columns.len(), 8);
        assert_eq!(t.rows[1], ["a", "2", "20.0", "8.0", "18.0", "2.0", "25.0", "12.0"]);
        let s = sentence(&probes);
        assert!(s.contains("RT pre-empting 8.0–18.0 µs") && s.contains("idle 20.0–20.0 µs"), "{s}");
    }

    #[test]
    fn the_replays_draw_from_every_probe_pooled() {
        // Three probes at 8 µs for an RT pre-emption and one caught in a burst at 18 µs: the pool
        // is 8 µs in three draws of four.
        let probes = [probe(8_000, true), probe(18_000, true), probe(8_000, true), probe(8_000, true)];
        let refs: Vec<&WakeProbe> = probes.iter().collect();
        let d = pooled(&refs).unwrap();
        let rt = d.preempt_rt.unwrap();
        assert_eq!(rt.values().iter().filter(|&&v| v == 8_000).count(), 12);
        assert_eq!((rt.median(), d.preempt.median(), d.remote_idle.median()), (8_000, 8_000, 25_000));
        let local = [probe(8_000, false)];
        let d = pooled(&[&local[0]]).unwrap();
        assert_eq!(d.remote_idle, WakeDelay::default());
        assert!(pooled(&[]).is_none());
    }

    #[test]
    fn a_one_cpu_host_has_no_remote_kinds() {
        let probes = vec![("a", 0, probe(8_000, false))];
        assert_eq!(table(&probes).rows[0][6], "–");
        assert!(!sentence(&probes).contains("remote"));
    }
}
