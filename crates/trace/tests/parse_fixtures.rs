//! Each parser on its real captured fixture (see fixtures/capture/capture.sh): exact counts of
//! events by kind, every line accounted for, and a few events checked field by field. And a
//! hand-made fixture whose malformed, truncated and unknown lines must be counted with their
//! line numbers.

use schedlab_trace::event::{Event, EventKind, Switch, Wake};
use schedlab_trace::parse::{detect, parse, Format, ParseStats};
use std::collections::BTreeMap;

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn counts(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
    pairs.iter().map(|&(k, v)| (k.to_string(), v)).collect()
}

/// Every line is one of the categories, exactly once.
fn accounted(s: &ParseStats) {
    let unknown: usize = s.unknown_events.values().sum();
    assert_eq!(s.lines, s.events + s.headers + s.blank + unknown + s.malformed + s.lost.len(), "{s:?}");
    assert_eq!(s.events, s.by_kind.values().sum::<usize>());
}

fn at(events: &[Event], line: usize) -> &Event {
    events.iter().find(|e| e.line == line).unwrap_or_else(|| panic!("no event from line {line}"))
}

fn wake(comm: &str, pid: i32, prio: i32, cpu: usize) -> Wake {
    Wake { comm: comm.into(), pid, prio, target_cpu: Some(cpu) }
}

fn switch(prev: (&str, i32, i32, &str), next: (&str, i32, i32)) -> EventKind {
    EventKind::Switch(Switch {
        prev_comm: prev.0.into(),
        prev_pid: prev.1,
        prev_prio: prev.2,
        prev_state: prev.3.into(),
        next_comm: next.0.into(),
        next_pid: next.1,
        next_prio: next.2,
    })
}

#[test]
fn tracefs_trace_file_with_header_and_irq_flags() {
    let text = fixture("tracefs.txt");
    assert_eq!(detect(&text), Format::Tracefs);
    let p = parse(&text, None);
    let s = &p.stats;
    accounted(s);
    assert_eq!((s.lines, s.events, s.headers, s.malformed, s.blank, s.lost.len()), (81, 69, 12, 0, 0, 0));
    assert_eq!(s.cpus, Some(2));
    assert!(s.unknown_events.is_empty());
    assert_eq!(
        s.by_kind,
        counts(&[
            ("sched_migrate_task", 2),
            ("sched_process_exec", 4),
            ("sched_process_exit", 3),
            ("sched_process_fork", 2),
            ("sched_switch", 26),
            ("sched_wakeup", 15),
            ("sched_wakeup_new", 2),
            ("sched_waking", 15),
        ])
    );
    let e = at(&p.events, 13);
    assert_eq!((e.ts, e.cpu), (1_224_898_744_000, 1));
    assert_eq!(
        e.kind,
        EventKind::Fork { parent_comm: "sh".into(), parent_pid: 13327, child_comm: "sh".into(), child_pid: 13328 }
    );
    let e = at(&p.events, 14);
    assert_eq!((e.ts, e.cpu), (1_224_898_770_000, 1));
    assert_eq!(e.kind, EventKind::WakeupNew(wake("sh", 13328, 120, 1)));
    let e = at(&p.events, 19);
    assert_eq!((e.ts, e.cpu), (1_224_899_991_000, 1));
    assert_eq!(e.kind, switch(("taskset", 13328, 120, "D"), ("migration/1", 21, 0)));
    let e = at(&p.events, 29);
    assert_eq!(e.kind, switch(("taskset", 13329, 120, "R+"), ("sh", 13327, 120)));
    let e = at(&p.events, 31);
    assert_eq!((e.ts, e.cpu), (1_224_900_287_000, 0));
    assert_eq!(e.kind, EventKind::Exec { filename: "/tmp/schedlab-burst".into(), pid: 13328, old_pid: 13328 });
    let e = at(&p.events, 44);
    assert_eq!((e.ts, e.cpu), (1_224_908_015_000, 0));
    assert_eq!(e.kind, EventKind::Wakeup(wake("schedlab-burst", 13328, 120, 0)));
    let e = at(&p.events, 61);
    assert_eq!(e.kind, EventKind::Exit { comm: "schedlab-burst".into(), pid: 13328, prio: 120 });
    let e = at(&p.events, 63);
    assert_eq!((e.ts, e.cpu), (1_224_921_408_000, 0));
    assert_eq!(e.kind, EventKind::Migrate { comm: "sh".into(), pid: 13327, prio: 120, orig_cpu: 1, dest_cpu: 0 });
}

#[test]
fn tracefs_pipe_without_header_or_flags_with_tgid_column() {
    let text = fixture("tracefs-pipe.txt");
    assert_eq!(detect(&text), Format::Tracefs);
    let p = parse(&text, Some(Format::Tracefs));
    let s = &p.stats;
    accounted(s);
    assert_eq!((s.lines, s.events, s.headers, s.malformed), (64, 64, 0, 0));
    assert_eq!(s.cpus, None);
    assert_eq!(
        s.by_kind,
        counts(&[
            ("sched_process_exec", 4),
            ("sched_process_exit", 3),
            ("sched_process_fork", 2),
            ("sched_switch", 25),
            ("sched_wakeup", 14),
            ("sched_wakeup_new", 2),
            ("sched_waking", 14),
        ])
    );
    let e = at(&p.events, 2);
    assert_eq!((e.ts, e.cpu), (1_225_207_103_000, 0));
    assert_eq!(e.kind, EventKind::WakeupNew(wake("sh", 13343, 120, 0)));
    let e = at(&p.events, 7);
    assert_eq!((e.ts, e.cpu), (1_225_208_031_000, 0));
    assert_eq!(e.kind, switch(("taskset", 13343, 120, "R"), ("sh", 13344, 120)));
    // A comm with a colon and a dash.
    let e = at(&p.events, 12);
    assert_eq!(e.kind, EventKind::Wakeup(wake("memfd:sealed-91", 6327, 120, 0)));
    let e = at(&p.events, 15);
    assert_eq!(e.kind, switch(("taskset", 13344, 120, "R"), ("memfd:sealed-91", 5798, 120)));
}

#[test]
fn trace_cmd_report_with_instance_prefix_and_compact_bodies() {
    let text = fixture("trace-cmd-report.txt");
    assert_eq!(detect(&text), Format::TraceCmd);
    let p = parse(&text, None);
    let s = &p.stats;
    accounted(s);
    assert_eq!((s.lines, s.events, s.headers, s.malformed), (62, 61, 1, 0));
    assert_eq!(s.cpus, Some(2));
    assert_eq!(
        s.by_kind,
        counts(&[
            ("sched_process_exec", 4),
            ("sched_process_exit", 3),
            ("sched_process_fork", 2),
            ("sched_switch", 26),
            ("sched_wakeup", 12),
            ("sched_wakeup_new", 2),
            ("sched_waking", 12),
        ])
    );
    let e = at(&p.events, 6);
    assert_eq!((e.ts, e.cpu), (1_225_499_166_000, 0));
    assert_eq!(e.kind, switch(("sh", 13358, 120, "D"), ("sh", 13359, 120)));
    let e = at(&p.events, 8);
    assert_eq!(e.kind, switch(("taskset", 13359, 120, "R"), ("sh", 13360, 120)));
    let e = at(&p.events, 10);
    assert_eq!((e.ts, e.cpu), (1_225_500_092_000, 0));
    assert_eq!(e.kind, EventKind::Wakeup(wake("sh", 13358, 120, 0)));
}

#[test]
fn perf_script_with_unknown_sched_events() {
    let text = fixture("perf-script.txt");
    assert_eq!(detect(&text), Format::Perf);
    let p = parse(&text, None);
    let s = &p.stats;
    accounted(s);
    assert_eq!((s.lines, s.events, s.headers, s.malformed), (98, 90, 0, 0));
    assert_eq!(s.unknown_events, counts(&[("sched_prepare_exec", 5), ("sched_process_wait", 3)]));
    assert_eq!(
        s.by_kind,
        counts(&[
            ("sched_migrate_task", 2),
            ("sched_process_exec", 5),
            ("sched_process_exit", 3),
            ("sched_process_fork", 2),
            ("sched_switch", 38),
            ("sched_wakeup", 19),
            ("sched_wakeup_new", 2),
            ("sched_waking", 19),
        ])
    );
    let e = at(&p.events, 2);
    assert_eq!((e.ts, e.cpu), (1_226_773_576_000, 0));
    assert_eq!(e.kind, EventKind::Wakeup(wake("migration/0", 18, 0, 0)));
    let e = at(&p.events, 3);
    assert_eq!(e.kind, switch(("perf", 13373, 120, "D"), ("migration/0", 18, 0)));
    let e = at(&p.events, 5);
    assert_eq!((e.ts, e.cpu), (1_226_773_592_000, 0));
    assert_eq!(e.kind, EventKind::Migrate { comm: "perf".into(), pid: 13373, prio: 120, orig_cpu: 0, dest_cpu: 1 });
    let e = at(&p.events, 75);
    assert_eq!((e.ts, e.cpu), (1_226_800_358_000, 0));
    assert_eq!(e.kind, EventKind::Exit { comm: "schedlab-burst".into(), pid: 13376, prio: 120 });
}

#[test]
fn malformed_truncated_unknown_and_lost_lines_are_counted_with_line_numbers() {
    let text = fixture("malformed-tracefs.txt");
    let p = parse(&text, None);
    let s = &p.stats;
    accounted(s);
    assert_eq!((s.lines, s.events, s.headers, s.blank), (17, 2, 5, 1));
    assert_eq!(s.cpus, Some(2));
    assert_eq!(s.unknown_events, counts(&[("sched_pi_setprio", 1), ("sched_stat_runtime", 2)]));
    assert_eq!(s.malformed, 5);
    let bad: Vec<usize> = s.malformed_examples.iter().map(|b| b.line).collect();
    assert_eq!(bad, vec![6, 11, 12, 15, 16]);
    assert!(s.malformed_examples[0].why.contains("sched_switch"), "{:?}", s.malformed_examples[0]);
    assert!(s.malformed_examples[2].why.contains("CPU"), "{:?}", s.malformed_examples[2]);
    assert_eq!(s.malformed_examples[1].text, "this line is not a trace line at all");
    assert_eq!(s.lost.len(), 1);
    assert_eq!((s.lost[0].line, s.lost[0].cpu, s.lost[0].count), (7, Some(1), Some(3)));
    assert_eq!(s.lost_events(), 3);
    // The two good events, with a comm that contains a space.
    assert_eq!(p.events[0].kind, switch(("swapper/0", 0, 120, "R"), ("a b", 100, 120)));
    assert_eq!((p.events[1].line, p.events[1].ts), (13, 10_003_000_000));
    assert_eq!(p.events[1].kind, EventKind::Wakeup(wake("a b", 100, 120, 0)));
}
