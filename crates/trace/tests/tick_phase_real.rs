//! The tick's phase found in a real trace: `fixtures/capture/nice-hogs-tick.txt` is the start of
//! a `schedlab validate` recording of three CPU hogs at nice −5, 0 and 5 pinned to CPU 1 of a
//! 2-CPU VM (Linux 6.18, HZ=250, no HRTICK), so every switch between the hogs follows a tick.
//! The phase is checked against the switch times read straight from the text, and the import
//! puts workload time 0 on that tick.

use schedlab_trace::import::{import, ImportOptions, Select};
use schedlab_trace::{tick_phase, Timeline};

const TICK: u64 = 4_000_000;

fn fixture() -> String {
    let path = format!("{}/tests/fixtures/capture/nice-hogs-tick.txt", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Times (ns) of the switches on CPU 1 whose outgoing task was still runnable, from the text.
fn preemptions_on_cpu1(text: &str) -> Vec<u64> {
    text.lines()
        .filter(|l| l.contains("[001]") && l.contains("sched_switch:") && l.contains("prev_state=R "))
        .map(|l| {
            let ts = l.split(": sched_switch").next().unwrap().rsplit(' ').next().unwrap();
            let (s, us) = ts.split_once('.').unwrap();
            s.parse::<u64>().unwrap() * 1_000_000_000 + us.parse::<u64>().unwrap() * 1_000
        })
        .collect()
}

#[test]
fn the_hogs_switch_on_one_phase_of_the_tick_and_time_zero_goes_there() {
    let text = fixture();
    let (tl, _) = Timeline::from_text(&text, None);
    let p = tick_phase(&tl, TICK).expect("hogs switching at the tick");
    let raw = preemptions_on_cpu1(&text);
    assert!(raw.len() > 200, "{} pre-emptions in the fixture", raw.len());
    let near = raw.iter().filter(|&&t| (t % TICK).abs_diff(p.phase_ns) <= 30_000).count();
    assert!(near * 10 >= raw.len() * 9, "{near} of {} pre-emptions within 30 µs of {p:?}", raw.len());
    assert!(p.phase_ns < 100_000, "a few µs after the jiffy: {p:?}");
    assert!(p.samples * 10 >= p.preemptions * 9, "{p:?}");

    let plain = import(&tl, &ImportOptions::new(Select::All));
    let aligned = import(&tl, &ImportOptions { align_tick: Some(TICK), ..ImportOptions::new(Select::All) });
    assert_eq!(aligned.report.tick_phase, Some(p));
    assert_eq!(aligned.report.t0 % TICK, p.phase_ns);
    assert!(aligned.report.t0 <= plain.report.t0 && plain.report.t0 - aligned.report.t0 < TICK);
    let shift = plain.report.t0 - aligned.report.t0;
    for (a, b) in aligned.workload.tasks.iter().zip(&plain.workload.tasks) {
        assert_eq!((a.arrival, &a.bursts), (b.arrival + shift, &b.bursts), "{}", a.name);
    }
    assert_eq!(plain.report.tick_phase, None);
}
