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
    assert_eq!((s.lines, s.headers, s.malformed, s.blank, s.lost.len()), (85, 12, 0, 0, 0));
    assert_eq!(s.cpus, Some(2));
    assert!(s.unknown_events.is_empty());
    assert_eq!(
        s.by_kind,
        counts(&[
            ("sched_migrate_task", 1),
            ("sched_process_exec", 4),
            ("sched_process_exit", 3),
            ("sched_process_fork", 2),
            ("sched_switch", 26),
            ("sched_wakeup", 17),
            ("sched_wakeup_new", 2),
            ("sched_waking", 18),
        ])
    );
    let e = at(&p.events, 13);
    assert_eq!((e.ts, e.cpu), (583_970_491_000, 0));
    assert_eq!(
        e.kind,
        EventKind::Fork { parent_comm: "sh".into(), parent_pid: 7050, child_comm: "sh".into(), child_pid: 7051 }
    );
    let e = at(&p.events, 17);
    assert_eq!((e.ts, e.cpu), (583_970_615_000, 0));
    assert_eq!(e.kind, switch(("sh", 7050, 120, "D"), ("sh", 7051, 120)));
    let e = at(&p.events, 33);
    assert_eq!((e.ts, e.cpu), (583_971_192_000, 1));
    assert_eq!(e.kind, EventKind::Migrate { comm: "taskset".into(), pid: 7051, prio: 120, orig_cpu: 1, dest_cpu: 0 });
    let e = at(&p.events, 43);
    assert_eq!(e.kind, EventKind::Exec { filename: "/tmp/schedlab-burst".into(), pid: 7052, old_pid: 7052 });
    let e = at(&p.events, 52);
    assert_eq!((e.ts, e.cpu), (583_980_539_000, 1));
    assert_eq!(e.kind, EventKind::Wakeup(wake("schedlab-burst", 7051, 120, 1)));
    let e = at(&p.events, 65);
    assert_eq!(e.kind, EventKind::Exit { comm: "schedlab-burst".into(), pid: 7051, prio: 120 });
}

#[test]
fn tracefs_pipe_without_header_or_flags_with_tgid_column() {
    let text = fixture("tracefs-pipe.txt");
    assert_eq!(detect(&text), Format::Tracefs);
    let p = parse(&text, Some(Format::Tracefs));
    let s = &p.stats;
    accounted(s);
    assert_eq!((s.lines, s.events, s.headers, s.malformed), (58, 58, 0, 0));
    assert_eq!(s.cpus, None);
    assert_eq!(
        s.by_kind,
        counts(&[
            ("sched_migrate_task", 2),
            ("sched_process_exec", 4),
            ("sched_process_exit", 3),
            ("sched_process_fork", 2),
            ("sched_switch", 19),
            ("sched_wakeup", 13),
            ("sched_wakeup_new", 2),
            ("sched_waking", 13),
        ])
    );
    let e = at(&p.events, 2);
    assert_eq!((e.ts, e.cpu), (629_546_683_000, 0));
    assert_eq!(e.kind, EventKind::WakeupNew(wake("sh", 7426, 120, 0)));
    let e = at(&p.events, 18);
    assert_eq!((e.ts, e.cpu), (629_548_615_000, 1));
    assert_eq!(e.kind, switch(("schedlab-burst", 7427, 120, "R"), ("taskset", 7426, 120)));
}

#[test]
fn trace_cmd_report_with_instance_prefix_and_compact_bodies() {
    let text = fixture("trace-cmd-report.txt");
    assert_eq!(detect(&text), Format::TraceCmd);
    let p = parse(&text, None);
    let s = &p.stats;
    accounted(s);
    assert_eq!((s.lines, s.events, s.headers, s.malformed), (57, 56, 1, 0));
    assert_eq!(s.cpus, Some(2));
    assert_eq!(
        s.by_kind,
        counts(&[
            ("sched_migrate_task", 3),
            ("sched_process_exec", 4),
            ("sched_process_exit", 3),
            ("sched_process_fork", 2),
            ("sched_switch", 17),
            ("sched_wakeup", 12),
            ("sched_wakeup_new", 2),
            ("sched_waking", 13),
        ])
    );
    let e = at(&p.events, 6);
    assert_eq!((e.ts, e.cpu), (625_646_266_000, 1));
    assert_eq!(e.kind, switch(("sh", 7335, 120, "D"), ("sh", 7336, 120)));
    let e = at(&p.events, 7);
    assert_eq!(e.kind, switch(("swapper/0", 0, 120, "R"), ("sh", 7337, 120)));
    let e = at(&p.events, 9);
    assert_eq!((e.ts, e.cpu), (625_646_338_000, 0));
    assert_eq!(e.kind, EventKind::Wakeup(wake("sh", 7335, 120, 1)));
    let e = at(&p.events, 32);
    assert_eq!(e.kind, EventKind::Migrate { comm: "rcu_preempt".into(), pid: 15, prio: 120, orig_cpu: 1, dest_cpu: 0 });
}

#[test]
fn perf_script_with_unknown_sched_events() {
    let text = fixture("perf-script.txt");
    assert_eq!(detect(&text), Format::Perf);
    let p = parse(&text, None);
    let s = &p.stats;
    accounted(s);
    assert_eq!((s.lines, s.events, s.headers, s.malformed), (85, 77, 0, 0));
    assert_eq!(s.unknown_events, counts(&[("sched_prepare_exec", 5), ("sched_process_wait", 3)]));
    assert_eq!(
        s.by_kind,
        counts(&[
            ("sched_migrate_task", 4),
            ("sched_process_exec", 5),
            ("sched_process_exit", 3),
            ("sched_process_fork", 2),
            ("sched_switch", 35),
            ("sched_wakeup", 12),
            ("sched_wakeup_new", 2),
            ("sched_waking", 14),
        ])
    );
    let e = at(&p.events, 2);
    assert_eq!((e.ts, e.cpu), (611_550_010_000, 0));
    assert_eq!(e.kind, EventKind::Wakeup(wake("migration/0", 18, 0, 0)));
    let e = at(&p.events, 6);
    assert_eq!(e.kind, switch(("migration/0", 18, 0, "S"), ("swapper/0", 0, 120)));
    let e = at(&p.events, 53);
    assert_eq!((e.ts, e.cpu), (611_574_519_000, 1));
    assert_eq!(e.kind, EventKind::Exit { comm: "schedlab-burst".into(), pid: 7252, prio: 120 });
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
