//! Real captured traces of a known program (fixtures/capture/burst.c run by capture.sh: two
//! processes pinned to CPU 0, each doing 3 × (burn, 5 ms nanosleep) and a last burn of 1 ms
//! or 2 ms of CPU) import to tasks whose CPU totals equal what the trace's own run intervals
//! sum to — summed here straight from the sched_switch events, not through the timeline — and
//! whose burst structure has exactly one blocked time per sleep.

use schedlab_trace::event::EventKind;
use schedlab_trace::import::{import, ImportOptions, NoteKind, Select};
use schedlab_trace::{parse, Timeline};

const SLEEPS: usize = 3;
const SLEEP_NS: u64 = 5_000_000;

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// From the events alone: CPU time of `pid` after its exec, and its switch-outs in S after it.
fn from_switches(events: &[schedlab_trace::Event], pid: i32) -> (u64, usize) {
    let exec = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::Exec { pid: p, filename, .. } if *p == pid && filename.ends_with("schedlab-burst") => Some(e.ts),
            _ => None,
        })
        .expect("exec");
    let mut sorted: Vec<_> = events.iter().collect();
    sorted.sort_by_key(|e| e.ts);
    let (mut on, mut cpu, mut sleeps) = (None, 0, 0);
    for e in sorted {
        if let EventKind::Switch(s) = &e.kind {
            if s.prev_pid == pid {
                let start: u64 = on.take().expect("a switch-in before each switch-out");
                if e.ts > exec {
                    cpu += e.ts - start.max(exec);
                    sleeps += usize::from(s.prev_state == "S");
                }
            }
            if s.next_pid == pid {
                on = Some(e.ts);
            }
        }
    }
    (cpu, sleeps)
}

fn check(name: &str) {
    let text = fixture(name);
    let p = parse(&text, None);
    let tl = Timeline::from_events(&p.events, p.stats.cpus);
    let imp = import(
        &tl,
        &ImportOptions { start_at_exec: true, ..ImportOptions::new(Select::Comm("schedlab-burst".into())) },
    );
    assert_eq!(imp.workload.tasks.len(), 2, "{name}: {:?}", imp.report);
    let mut by_cpu: Vec<(u64, usize)> = Vec::new();
    for (k, (spec, got)) in imp.workload.tasks.iter().zip(&imp.report.tasks).enumerate() {
        let (cpu, sleeps) = from_switches(&p.events, got.pid);
        assert_eq!(sleeps, SLEEPS, "{name} {}: sleeps in the trace", got.pid);
        assert_eq!(spec.bursts.len(), 2 * SLEEPS + 1, "{name} {}: {:?}", got.pid, spec.bursts);
        let imported: u64 = spec.bursts.iter().step_by(2).sum();
        assert_eq!(imported, cpu, "{name} {}: CPU total", got.pid);
        assert_eq!(got.cpu_ns, cpu);
        // nanosleep never returns early; the fixtures show 5.05–5.09 ms.
        for b in spec.bursts.iter().skip(1).step_by(2) {
            assert!((SLEEP_NS..SLEEP_NS + 200_000).contains(b), "{name} {}: blocked {b} ns", got.pid);
        }
        let kinds: Vec<NoteKind> = imp.report.notes_for(got.pid).map(|n| n.kind).collect();
        assert_eq!(kinds, vec![NoteKind::BeforeExecDropped], "{name} {}", got.pid);
        // Arrival = exec time − the first task's exec time.
        assert_eq!(spec.arrival, got.start - imp.report.t0);
        assert_eq!(spec.arrival == 0, k == 0);
        by_cpu.push((imported, k));
    }
    // One burns 1 ms per burst, the other 2 ms (thread CPU time, so a run is never shorter).
    by_cpu.sort_unstable();
    for (burn, (_, k)) in [1_000_000u64, 2_000_000].into_iter().zip(by_cpu) {
        let spec = &imp.workload.tasks[k];
        assert!(spec.bursts.iter().step_by(2).all(|&b| b >= burn), "{name}: {:?} ≥ {burn}", spec.bursts);
    }
}

#[test]
fn tracefs_capture_imports_to_the_known_program() {
    check("tracefs.txt");
}

#[test]
fn tracefs_pipe_capture_imports_to_the_known_program() {
    check("tracefs-pipe.txt");
}

#[test]
fn trace_cmd_capture_imports_to_the_known_program() {
    check("trace-cmd-report.txt");
}

#[test]
fn perf_capture_imports_to_the_known_program() {
    check("perf-script.txt");
}

#[test]
fn a_process_tree_imports_with_its_launcher_and_notes() {
    let (tl, _) = Timeline::from_text(&fixture("tracefs.txt"), None);
    // sh 13327 (already running when tracing began) forked both bursts.
    assert_eq!(tl.descendants(13327), vec![13327, 13328, 13329]);
    let imp = import(&tl, &ImportOptions::new(Select::Tree(13327)));
    let pids = imp.report.pids();
    assert_eq!(pids, vec![13327, 13328, 13329]);
    assert!(imp.report.notes_for(13327).any(|n| n.kind == NoteKind::PresentAtStart));
    // Without start_at_exec the launcher part (fork → taskset → exec, with its D sleeps) is in.
    let burst = &imp.workload.tasks[1];
    assert!(burst.bursts.len() > 2 * SLEEPS + 1, "{:?}", burst.bursts);
    assert_eq!(burst.bursts.iter().step_by(2).sum::<u64>(), tl.tasks[&13328].cpu_time());
    // The global note: no metadata.
    assert!(imp.report.notes.iter().any(|n| n.pid.is_none() && n.kind == NoteKind::PolicyGuessed));
    // Each child arrives when sh reaches its fork, given as a wake-up at that point of sh's
    // bursts; sh itself was there from the start.
    let sh = &imp.workload.tasks[0];
    assert_eq!(sh.forked_by, None);
    for (i, child) in [(1, 13328), (2, 13329)] {
        assert_eq!(imp.workload.tasks[i].forked_by, Some(0), "task {child}");
        assert!(imp.report.notes_for(child).any(|n| n.kind == NoteKind::Forked && n.detail.contains("13327")));
        let fork = sh.wakes.iter().find(|w| w.task == i).expect("sh forks it");
        // The point is where sh ran up to the fork event, to the trace's microsecond.
        let ts = tl.tasks[&child].arrival.expect("forked in the trace");
        let ran: u64 = tl.tasks[&13327].runs.iter().filter(|r| r.start < ts).map(|r| r.end.min(ts) - r.start).sum();
        let before: u64 = sh.bursts.iter().step_by(2).take(fork.burst).sum();
        assert_eq!(before + fork.at, ran, "task {child}");
        // The policy places a fork, unless the import is asked to start it where it first ran.
        assert_eq!(imp.workload.tasks[i].start_cpu, None, "task {child}");
    }
    assert!(imp.workload.check_wakes().is_ok());
    let mut opts = ImportOptions::new(Select::Tree(13327));
    opts.fork_cpus = true;
    let given = import(&tl, &opts);
    for (i, child) in [(1, 13328), (2, 13329)] {
        let first = tl.tasks[&child].runs[0].cpu;
        assert_eq!(given.workload.tasks[i].start_cpu, Some(first), "task {child}");
        assert_eq!(given.workload.tasks[i].forked_by, Some(0), "still forked: task {child}");
    }
}
