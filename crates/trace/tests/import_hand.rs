//! Import of the hand-made fixtures/hand-timeline.txt (see tests/timeline_hand.rs for the
//! picture), with and without a metadata sidecar, against bursts worked out by hand (µs):
//! A: runs 40, blocked 30, runs 25 + 40 → [40, 30, 65], arrival 0.
//! B: first named by a sched_waking at 60 → arrival 60; [60, 20, 40], still running at the end.
//! C: running from the trace's start: [70 + 50], then blocked at the end (that block is dropped).

use schedlab_trace::import::{import, ImportOptions, NoteKind, Select};
use schedlab_trace::meta::{SchedPolicy, TaskMeta, TraceMeta};
use schedlab_trace::Timeline;

fn tl() -> Timeline {
    let path = format!("{}/tests/fixtures/hand-timeline.txt", env!("CARGO_MANIFEST_DIR"));
    Timeline::from_text(&std::fs::read_to_string(path).unwrap(), None).0
}

const US: u64 = 1000;

fn kinds(r: &schedlab_trace::ImportReport, pid: i32) -> Vec<NoteKind> {
    r.notes_for(pid).map(|n| n.kind).collect()
}

#[test]
fn bursts_arrivals_and_notes_by_hand() {
    let imp = import(&tl(), &ImportOptions::new(Select::All));
    let w = &imp.workload;
    assert_eq!(imp.report.pids(), vec![101, 103, 102]);
    assert_eq!(imp.report.t0, 1_000_000_000_000);
    let names: Vec<&str> = w.tasks.iter().map(|t| &*t.name).collect();
    assert_eq!(names, vec!["A", "C", "B"]);
    assert_eq!((w.tasks[0].arrival, w.tasks[0].bursts.to_vec()), (0, vec![40 * US, 30 * US, 65 * US]));
    assert_eq!((w.tasks[1].arrival, w.tasks[1].bursts.to_vec()), (0, vec![120 * US]));
    assert_eq!((w.tasks[2].arrival, w.tasks[2].bursts.to_vec()), (60 * US, vec![60 * US, 20 * US, 40 * US]));
    assert_eq!(w.cpus, Some(2));
    assert!(w.tasks.iter().all(|t| t.class.is_none() && t.nice == 0 && t.affinity.is_none()));
    assert!(kinds(&imp.report, 101).is_empty());
    // B's block is in D (`prev_state=D`): kept, and noted as a wait inside the kernel.
    assert_eq!(kinds(&imp.report, 102), vec![NoteKind::PresentAtStart, NoteKind::RunningAtEnd, NoteKind::KernelWait]);
    assert_eq!(kinds(&imp.report, 103), vec![NoteKind::PresentAtStart, NoteKind::BlockedAtEnd]);
    // A later t0 and a pid selection.
    let imp = import(
        &tl(),
        &ImportOptions {
            t0: Some(1_000_000_000_000 + 50 * US),
            ..ImportOptions::new(Select::Pids([101, 102].into_iter().collect()))
        },
    );
    assert_eq!(imp.report.pids(), vec![101, 102]);
    assert_eq!((imp.workload.tasks[0].arrival, imp.workload.tasks[1].arrival), (0, 10 * US));
    assert!(kinds(&imp.report, 101).contains(&NoteKind::BeforeT0));
}

#[test]
fn metadata_gives_policy_priority_deadline_and_affinity() {
    let mut a = TaskMeta::new(101, SchedPolicy::Fifo);
    (a.rt_priority, a.affinity) = (Some(50), Some(vec![1, 5]));
    let mut b = TaskMeta::new(102, SchedPolicy::Deadline);
    (b.dl_runtime_ns, b.dl_deadline_ns, b.dl_period_ns) = (Some(20_000), Some(100_000), Some(200_000));
    let mut c = TaskMeta::new(103, SchedPolicy::Normal);
    (c.nice, c.slice_ns) = (Some(3), Some(3_000_000));
    let mut meta = TraceMeta { cpus: Some(2), ..TraceMeta::default() };
    meta.tasks = vec![a, b, c];
    // The sidecar goes through its JSON form, as a recorder would write it.
    let meta = TraceMeta::from_json_str(&meta.to_json_string()).unwrap();
    let imp = import(&tl(), &ImportOptions { meta: Some(meta), ..ImportOptions::new(Select::All) });
    let w = &imp.workload;
    let (ta, tc, tb) = (&w.tasks[0], &w.tasks[1], &w.tasks[2]);
    assert_eq!((ta.class.as_deref(), ta.priority, ta.affinity.as_deref()), (Some("fifo"), 50, Some(&[1][..])));
    assert_eq!((tb.class.as_deref(), tb.deadline, tb.period), (Some("deadline"), Some(100_000), Some(200_000)));
    assert_eq!(imp.report.tasks[2].dl_runtime_ns, Some(20_000));
    assert_eq!(imp.workload.tasks[2].runtime, Some(20_000), "the DL runtime is the workload's runtime");
    // A deadline task arrives at its enqueue, where the CBS began its first period: B's
    // sched_wakeup at 62 µs, not the sched_waking at 60 µs that first names it (60 without the
    // sidecar, above).
    assert_eq!(tb.arrival, 62 * US);
    let enqueue = imp.report.notes_for(102).find(|n| n.detail.contains("arrives at its enqueue")).expect("noted");
    assert_eq!(enqueue.kind, NoteKind::Deadline);
    assert_eq!((tc.class.as_deref(), tc.nice), (None, 3));
    assert_eq!((imp.report.tasks[1].slice_ns, imp.report.tasks[0].slice_ns), (Some(3_000_000), None));
    // The trace shows prio 120 for A and B: the sidecar wins, and the report says so.
    assert_eq!(kinds(&imp.report, 101), vec![NoteKind::PolicyMismatch, NoteKind::Affinity]);
    assert_eq!(
        kinds(&imp.report, 102),
        vec![
            NoteKind::PresentAtStart,
            NoteKind::RunningAtEnd,
            NoteKind::KernelWait,
            NoteKind::PolicyMismatch,
            NoteKind::Deadline,
            NoteKind::Deadline,
            NoteKind::Affinity
        ]
    );
    assert_eq!(
        kinds(&imp.report, 103),
        vec![NoteKind::PresentAtStart, NoteKind::BlockedAtEnd, NoteKind::Slice, NoteKind::Affinity]
    );
    assert!(imp.report.notes.iter().all(|n| n.pid.is_some()), "no global note with metadata");
}

/// Held tasks keep, per CPU burst, the CPU its first run was on; others are left to the model.
/// A: burst 0 on CPU 0 (10–50), burst 1 from CPU 0 (95–120, then 160–200 on CPU 1) → [0, 0].
/// B: burst 0 on CPU 1 (70–130), burst 1 on CPU 0 (170–210) → [1, 0]. C (not held): none.
/// And when: A's block ends at its wake-up at 80, B's at 150.
#[test]
fn held_tasks_keep_the_cpu_each_burst_began_on() {
    let opts = ImportOptions { held: [101, 102].into_iter().collect(), ..ImportOptions::new(Select::All) };
    let w = import(&tl(), &opts).workload;
    let held: Vec<Vec<usize>> = w.tasks.iter().map(|t| t.burst_cpus.clone()).collect();
    assert_eq!(held, vec![vec![0, 0], vec![], vec![1, 0]], "A, C, B");
    // Their blocks end when the trace shows the wake-ups (A's at 80, B's at 150; t0 is at 0).
    let ends: Vec<Vec<u64>> = w.tasks.iter().map(|t| t.block_ends.clone()).collect();
    assert_eq!(ends, vec![vec![80 * US], vec![], vec![150 * US]], "A, C, B");
    // The workload file keeps them, and a CPU beyond the workload's is refused.
    let text = w.to_json_string();
    assert_eq!(schedlab_sim::workload::Workload::from_json_str(&text).unwrap().tasks[2].burst_cpus, [1, 0]);
    let mut bad: serde_json::Value = serde_json::from_str(&text).unwrap();
    bad["tasks"][2]["burst_cpus"] = serde_json::json!([1, 2]);
    let e = schedlab_sim::workload::Workload::from_json_str(&bad.to_string()).unwrap_err();
    assert_eq!(e.field, "tasks[2].burst_cpus", "{e}");
}

/// Without metadata a task at real-time priority 99 (trace prio 0) is SCHED_FIFO 99 — unless it
/// is the kernel's stopper thread (`migration/N`), whose class is the stop class: it imports as
/// class `stop`, which the `linux` model runs as priority 99 without pushing what it pre-empts.
#[test]
fn the_stopper_thread_imports_as_the_stop_class() {
    let text = "\
          <idle>-0     [000] d..2.  1000.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=migration/0 next_pid=18 next_prio=0
     migration/0-18    [000] d..2.  1000.000020: sched_switch: prev_comm=migration/0 prev_pid=18 prev_prio=0 prev_state=S ==> next_comm=watchdog next_pid=40 next_prio=0
        watchdog-40    [000] d..2.  1000.000050: sched_switch: prev_comm=watchdog prev_pid=40 prev_prio=0 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
";
    let (tl, _) = Timeline::from_text(text, None);
    let imp = import(&tl, &ImportOptions::new(Select::All));
    let class_of = |pid: i32| {
        let i = imp.report.pids().iter().position(|&p| p == pid).expect("imported");
        (imp.workload.tasks[i].class.as_deref().map(str::to_string), imp.workload.tasks[i].priority)
    };
    assert_eq!(class_of(18), (Some("stop".to_string()), 99));
    assert_eq!(class_of(40), (Some("fifo".to_string()), 99));
    assert!(imp.report.notes_for(18).any(|n| n.kind == NoteKind::PolicyGuessed && n.detail.contains("stopper")));
}
