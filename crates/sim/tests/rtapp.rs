//! rt-app workloads: rt-app's own example files import with the arithmetic written out here,
//! round-trip through `export`, simulate, and what schedlab cannot model is refused by name.

use schedlab_sim::engine::{simulate, SimConfig};
use schedlab_sim::policies::by_spec;
use schedlab_sim::rtapp::{export, import, RtAppError};
use schedlab_sim::workload::{LockUse, TaskSpec, Workload};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;

fn data(name: &str) -> String {
    let path = format!("{}/tests/data/rtapp/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn imported(name: &str) -> Workload {
    import(&data(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn refused(text: &str) -> RtAppError {
    match import(text) {
        Ok(w) => panic!("imported, expected a refusal: {}", w.to_json_string()),
        Err(e) => e,
    }
}

/// The files that import (example6 is refused: see below).
const SUPPORTED: [&str; 5] = ["example1.json", "example2.json", "example3.json", "custom-slice.json", "deadline.json"];

/// CPU time a task asks for: the CPU bursts (even indices) of each of its jobs.
fn cpu_demand(t: &TaskSpec) -> u64 {
    (0..t.jobs).map(|k| schedlab_sim::jobs::job_cpu(t, k)).sum()
}

#[test]
fn example1_run_sleep_until_the_duration() {
    // thread0: loop -1 of run 20000 µs, sleep 80000 µs; global.duration 2 s.
    // One loop lasts 20 + 80 = 100 ms, so loops start at 0, 100, …, 1900 ms: 2000 / 100 = 20
    // loops. The 20th loop's sleep (1920–2000 ms) only delays the thread's exit and is dropped:
    // bursts = [20, 80] × 19 then [20] = 39 entries, 20 × 20 ms = 400 ms of CPU.
    let w = imported("example1.json");
    assert_eq!(w.cpus, None);
    assert_eq!(w.tasks.len(), 1);
    let t = &w.tasks[0];
    let mut bursts = [20 * MS, 80 * MS].repeat(19);
    bursts.push(20 * MS);
    assert_eq!(&*t.name, "thread0");
    assert_eq!(t.arrival, 0);
    assert_eq!(t.bursts.to_vec(), bursts);
    assert_eq!(t.bursts.len(), 39);
    assert_eq!(cpu_demand(t), 400 * MS);
    assert_eq!(t.class.as_deref(), Some("other")); // global.default_policy SCHED_OTHER
    assert_eq!((t.priority, t.nice, t.weight), (0, 0, 1));
    assert_eq!((t.period, t.jobs, t.deadline, t.runtime), (None, 1, None, None));
    assert_eq!(t.affinity, None);
}

#[test]
fn example2_run_and_timer_is_a_periodic_task() {
    // thread0: 1 instance, loop -1 of run 10000 µs + timer period 100000 µs (10 % load);
    // global.duration 2 s. Jobs are released at 0, 100, …, 1900 ms: 2000 / 100 = 20 jobs of
    // one 10 ms burst, 200 ms of CPU.
    let w = imported("example2.json");
    assert_eq!(w.tasks.len(), 1);
    let t = &w.tasks[0];
    assert_eq!(&*t.name, "thread0"); // "instance": 1 keeps the name
    assert_eq!(t.period, Some(100 * MS));
    assert_eq!(t.bursts.to_vec(), vec![10 * MS]);
    assert_eq!(t.jobs, 20);
    assert_eq!(cpu_demand(t), 200 * MS);
    assert_eq!((t.arrival, t.deadline, t.runtime), (0, None, None));
    assert_eq!(t.class.as_deref(), Some("other"));
}

#[test]
fn custom_slice_maps_nice_slice_and_deadline_defaults() {
    // thread0: SCHED_OTHER, "priority": -19 (rt-app's nice), "dl-runtime": 100000 µs (a custom
    // slice), loop -1 of run 20000 µs over 2 s: 2000 / 20 = 100 runs, merged into one 2 s burst.
    // thread1: SCHED_DEADLINE, "dl-runtime": 200000 µs alone: rt-app's dl-period defaults to the
    // runtime and dl-deadline to the period, so runtime = deadline = period = 200 ms.
    let w = imported("custom-slice.json");
    assert_eq!(w.tasks.len(), 2);
    let (a, b) = (&w.tasks[0], &w.tasks[1]);
    assert_eq!(&*a.name, "thread0");
    assert_eq!(a.class.as_deref(), Some("other"));
    assert_eq!((a.nice, a.priority), (-19, 0));
    assert_eq!(a.runtime, Some(100 * MS));
    assert_eq!((a.period, a.deadline), (None, None));
    assert_eq!(a.bursts.to_vec(), vec![2000 * MS]);
    assert_eq!(&*b.name, "thread1");
    assert_eq!(b.class.as_deref(), Some("deadline"));
    assert_eq!((b.runtime, b.deadline, b.period), (Some(200 * MS), Some(200 * MS), Some(200 * MS)));
    assert_eq!((b.bursts.to_vec(), b.jobs), (vec![2000 * MS], 1));
}

#[test]
fn deadline_example_is_a_periodic_deadline_task() {
    // default_policy SCHED_DEADLINE, dl-runtime 12000 µs, dl-period 100000 µs (dl-deadline
    // defaults to it), run 10000 µs + timer 100000 µs, loop -1 over 2 s: 20 jobs.
    let w = imported("deadline.json");
    let t = &w.tasks[0];
    assert_eq!(t.class.as_deref(), Some("deadline"));
    assert_eq!((t.runtime, t.deadline, t.period), (Some(12 * MS), Some(100 * MS), Some(100 * MS)));
    assert_eq!((t.bursts.to_vec(), t.jobs), (vec![10 * MS], 20));
}

#[test]
fn import_export_import_gives_the_same_workload() {
    for name in SUPPORTED {
        let w = imported(name);
        let text = export(&w).unwrap_or_else(|e| panic!("{name}: {e}"));
        let back = import(&text).unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
        assert_eq!(back, w, "{name}:\n{text}");
        assert_eq!(back.to_json_string(), w.to_json_string(), "{name}");
        // The export is plain JSON too (no comments, no trailing commas).
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["global"]["duration"], -1, "{name}");
    }
}

#[test]
fn export_of_example1_is_rt_app_json_in_microseconds() {
    let text = export(&imported("example1.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let t = &v["tasks"]["thread0"];
    assert_eq!(t["policy"], "SCHED_OTHER");
    assert_eq!(t["loop"], 1);
    assert_eq!(t["phases"]["p0"]["loop"], 19);
    assert_eq!(t["phases"]["p0"]["run"], 20000);
    assert_eq!(t["phases"]["p0"]["sleep"], 80000);
    assert_eq!(t["phases"]["p1"]["run"], 20000);
    // Events keep their order in the text: the run comes before the sleep.
    assert!(text.find("\"run\"").unwrap() < text.find("\"sleep\"").unwrap());
    let text = export(&imported("example2.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let t = &v["tasks"]["thread0"];
    assert_eq!((t["loop"].clone(), t["run"].clone()), (20.into(), 10000.into()));
    assert_eq!(t["timer"]["period"], 100000);
}

#[test]
fn imported_examples_validate_and_simulate_all_their_cpu_time() {
    for name in SUPPORTED {
        let w = imported(name);
        // Workload validation, as for a workload file.
        let reread = Workload::from_json_str(&w.to_json_string()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(reread, w);
        for spec in ["rr:quantum=4ms", "linux"] {
            let mut policy = by_spec(spec).unwrap();
            let r = simulate(&w, policy.as_mut(), &SimConfig { cpus: 2, ..SimConfig::default() });
            let simulated: u64 = r.tasks.iter().map(|t| t.cpu).sum();
            let asked: u64 = w.tasks.iter().map(cpu_demand).sum();
            assert_eq!(simulated, asked, "{name} under {spec}");
            for (t, res) in w.tasks.iter().zip(&r.tasks) {
                assert!(res.finish.is_some(), "{name} under {spec}: {} did not finish", t.name);
                assert_eq!(res.jobs_done, t.jobs, "{name} under {spec}: {}", t.name);
            }
        }
    }
}

#[test]
fn unsupported_events_are_refused_naming_event_and_task() {
    // rt-app's example6 has "mem" (and "iorun") in thread0.
    let e = import(&data("example6.json")).unwrap_err();
    assert_eq!(e.task.as_deref(), Some("thread0"));
    assert_eq!(e.key, "mem");
    let msg = e.to_string();
    assert!(msg.contains("thread0") && msg.contains("mem") && msg.contains("not supported"), "{msg}");

    let e = refused(r#"{"tasks": {"worker": {"loop": 3, "run": 1000, "barrier": "x"}}}"#);
    assert_eq!((e.task.as_deref(), e.key.as_str()), (Some("worker"), "barrier"));
    assert!(e.to_string().contains("barrier"), "{e}");
    // Inside a phase the key path names the phase too; numbered events match by prefix.
    let e = refused(r#"{"tasks": {"w": {"loop": 1, "phases": {"p": {"run": 10, "barrier0": "b"}}}}}"#);
    assert_eq!((e.task.as_deref(), e.key.as_str()), (Some("w"), "phases.p.barrier0"));
    assert!(e.message.contains("\"barrier\""), "{e}");
    for (key, value) in [
        ("iorun", "10"),
        ("wait", r#"{"ref": "c", "mutex": "m"}"#),
        ("signal", r#""c""#),
        ("suspend", r#""w""#),
        ("resume", r#""w""#),
        ("yield", r#""""#),
        ("fork", r#""w""#),
        ("taskgroup", r#""/tg1""#),
        ("util_min", "100"),
    ] {
        let e = refused(&format!(r#"{{"tasks": {{"w": {{"loop": 1, "run": 10, "{key}": {value}}}}}}}"#));
        assert_eq!((e.task.as_deref(), e.key.as_str()), (Some("w"), key), "{e}");
    }
    // Per-phase affinity (rt-app's example8) is refused.
    let e = refused(r#"{"tasks": {"w": {"loop": 1, "phases": {"a": {"cpus": [0], "run": 1500}}}}}"#);
    assert_eq!(e.key, "phases.a.cpus");
}

#[test]
fn unknown_keys_are_refused_naming_key_and_task() {
    let e = refused(r#"{"tasks": {"worker": {"loop": 1, "run": 1000, "colour": "red"}}}"#);
    assert_eq!((e.task.as_deref(), e.key.as_str()), (Some("worker"), "colour"));
    assert!(e.message.contains("unknown key"), "{e}");
    assert!(e.to_string().contains("worker") && e.to_string().contains("colour"));
    assert_eq!(refused(r#"{"tasks": {"w": {"run": 1}}, "global": {"frobnicate": 1}}"#).key, "global.frobnicate");
    assert_eq!(
        refused(r#"{"tasks": {"w": {"loop": 1, "run": 1, "timer": {"ref": "x", "period": 5, "jitter": 1}}}}"#).key,
        "timer.jitter"
    );
    assert_eq!(refused(r#"{"tasks": {"w": {"loop": 1, "run": 1}}, "extra": {}}"#).key, "extra");
}

#[test]
fn loop_forever_needs_global_duration() {
    let e = refused(r#"{"tasks": {"t": {"loop": -1, "run": 20000, "sleep": 80000}}}"#);
    assert_eq!((e.task.as_deref(), e.key.as_str()), (Some("t"), "loop"));
    assert!(e.message.contains("global.duration"), "{e}");
    // No "loop" means -1 too, and a duration of -1 is no duration.
    let e = refused(
        r#"{"tasks": {"t": {"run": 10, "timer": {"ref": "unique", "period": 100}}}, "global": {"duration": -1}}"#,
    );
    assert_eq!(e.key, "loop");
    assert_eq!(refused(r#"{"tasks": {"t": {"loop": 0, "run": 10}}}"#).key, "loop");
}

#[test]
fn phases_of_different_jobs_on_one_timer_are_one_task_with_job_phases() {
    // rt-app's example3: twelve threads, each ten jobs of 3 ms and then ten of 27 ms, one every
    // 30 ms on one timer: one periodic task each, its jobs in two phases.
    let w = imported("example3.json");
    assert_eq!(w.tasks.len(), 12);
    for (i, t) in w.tasks.iter().enumerate() {
        assert_eq!(*t.name, format!("thread0-{i}"));
        assert_eq!((t.period, t.jobs, t.bursts.to_vec()), (Some(30 * MS), 20, vec![3 * MS]));
        let phases: Vec<(u32, Vec<u64>)> = t.job_phases.iter().map(|p| (p.jobs, p.bursts.to_vec())).collect();
        assert_eq!(phases, vec![(10, vec![3 * MS]), (10, vec![27 * MS])]);
        assert_eq!(cpu_demand(t), 10 * 3 * MS + 10 * 27 * MS);
    }
    // Two rounds of the thread: the phases take turns; a duration cuts the jobs that start after it.
    let two = |extra: &str| {
        format!(
            r#"{{"tasks": {{"w": {{"loop": 2, "phases": {{
            "a": {{"loop": 2, "run": 1000, "timer": {{"ref": "unique", "period": 1000000}}}},
            "b": {{"loop": 1, "run": 5000, "sleep": 1000, "run1": 2000, "timer": {{"ref": "unique", "period": 1000000}}}}}}}}}}{extra}}}"#
        )
    };
    let w = import(&two("")).unwrap();
    let shapes: Vec<(u32, usize)> = w.tasks[0].job_phases.iter().map(|p| (p.jobs, p.bursts.len())).collect();
    assert_eq!(shapes, vec![(2, 1), (1, 3), (2, 1), (1, 3)]);
    assert_eq!(w.tasks[0].jobs, 6);
    let w = import(&two(r#", "global": {"duration": 4}"#)).unwrap();
    let shapes: Vec<(u32, usize)> = w.tasks[0].job_phases.iter().map(|p| (p.jobs, p.bursts.len())).collect();
    assert_eq!((w.tasks[0].jobs, shapes), (4, vec![(2, 1), (1, 3), (1, 1)]), "releases at 0, 1, 2, 3 s");
    // What a phase cannot carry is refused by name: another timer, a lock (its burst index
    // would name another burst in each phase), a phase that never ends.
    let phased = |a: &str, b: &str| {
        format!(
            r#"{{"tasks": {{"w": {{"loop": 1, "phases": {{"a": {{"loop": 2, {a}}}, "b": {{"loop": 2, {b}}}}}}}}}}}"#
        )
    };
    let timer = |p: u32| format!(r#""timer": {{"ref": "unique", "period": {p}}}"#);
    for (a, b, key) in [
        (format!(r#""run": 1000, {}"#, timer(10000)), format!(r#""run": 2000, {}"#, timer(20000)), "phases.b.timer"),
        (
            format!(r#""lock": "m", "run": 1000, "unlock": "m", {}"#, timer(10000)),
            format!(r#""run": 2000, {}"#, timer(10000)),
            "phases.a.lock",
        ),
    ] {
        let e = refused(&phased(&a, &b));
        assert_eq!((e.task.as_deref(), e.key.as_str()), (Some("w"), key), "{e}");
    }
    let e = refused(&format!(
        r#"{{"tasks": {{"w": {{"loop": 1, "phases": {{"a": {{"loop": -1, "run": 1000, {t}}}, "b": {{"run": 2000, {t}}}}}}}}}, "global": {{"duration": 1}}}}"#,
        t = timer(10000)
    ));
    assert_eq!(e.key, "phases.a.loop", "{e}");
}

#[test]
fn timers_are_mapped_only_as_one_periodic_job() {
    // A timer in the middle of a body, a sleep right before it, two timers: refused.
    for body in [
        r#""run0": 10, "timer": {"ref": "unique", "period": 100}, "run1": 10"#,
        r#""run": 10, "sleep": 10, "timer": {"ref": "unique", "period": 100}"#,
        r#""run0": 10, "timer0": {"ref": "unique", "period": 50}, "run1": 10, "timer1": {"ref": "unique", "period": 50}"#,
    ] {
        let e = refused(&format!(r#"{{"tasks": {{"w": {{"loop": 5, {body}}}}}}}"#));
        assert_eq!(e.task.as_deref(), Some("w"));
        assert!(e.key.contains("timer"), "{e}");
    }
    // A body longer than its period would not keep it.
    let e = refused(r#"{"tasks": {"w": {"loop": 5, "run": 200, "timer": {"ref": "unique", "period": 100}}}}"#);
    assert!(e.message.contains("longer than the timer period"), "{e}");
    // A timer shared by two instances is one timer for both: not a periodic task each.
    let e =
        refused(r#"{"tasks": {"w": {"instance": 2, "loop": 5, "run": 10, "timer": {"ref": "tick", "period": 100}}}}"#);
    assert!(e.message.contains("shared"), "{e}");
    // Identical phases on one timer are one periodic task: 3 + 4 jobs.
    let w = import(
        r#"{"tasks": {"w": {"loop": 1, "phases": {
            "a": {"loop": 3, "run": 1000, "timer": {"ref": "unique", "period": 10000}},
            "b": {"loop": 4, "run": 1000, "timer": {"ref": "unique", "period": 10000}}}}}}"#,
    )
    .unwrap();
    assert_eq!((w.tasks[0].jobs, w.tasks[0].period), (7, Some(10 * MS)));
}

#[test]
fn instances_policies_affinity_and_delay() {
    let text = r#"{
        // rt-app allows comments and trailing commas
        "tasks": {
            "rt": {"instance": 3, "policy": "SCHED_FIFO", "priority": 90, "cpus": [1, 0], "delay": 1500,
                   "loop": 4, "run": 2000, "sleep": 3000,},
            "low": {"policy": "SCHED_RR", "loop": 1, "runtime": 500},
            "nice": {"priority": 5, "loop": 2, "phases": {"x": {"run": 1000}, "y": {"loop": 2, "sleep": 10, "run": 1}}},
            "none": {"instance": 0, "loop": 1, "run": 1},
        },
        "global": {"default_policy": "SCHED_OTHER", "logdir": "/tmp", "cumulative_slack": true},
    }"#;
    let e = refused(text);
    // rt-app also reads a task-level "runtime" key as the legacy dl-runtime: refused.
    assert_eq!((e.task.as_deref(), e.key.as_str()), (Some("low"), "runtime"));
    let text = text.replace(r#""runtime": 500"#, r#""runtime0": 500"#);
    let w = import(&text).unwrap();
    let names: Vec<&str> = w.tasks.iter().map(|t| &*t.name).collect();
    assert_eq!(names, ["rt-0", "rt-1", "rt-2", "low", "nice"]);
    let rt = &w.tasks[0];
    assert_eq!((rt.class.as_deref(), rt.priority), (Some("fifo"), 90));
    assert_eq!(rt.affinity, Some(vec![1, 0]));
    assert_eq!(rt.arrival, 1500 * US);
    assert_eq!(rt.bursts.to_vec(), [2 * MS, 3 * MS].repeat(4)[..7].to_vec());
    let low = &w.tasks[3];
    assert_eq!((low.class.as_deref(), low.priority), (Some("rr"), 10)); // rt-app's default RT priority
    assert_eq!(low.bursts.to_vec(), vec![500 * US]);
    let nice = &w.tasks[4];
    assert_eq!((nice.class.as_deref(), nice.nice), (Some("other"), 5));
    // (x: run 1000; y: 2 × (sleep 10, run 1)) × 2 = 1000, 10, 1, 10, 1 + 1000, 10, 1, 10, 1 µs:
    // a run that ends one round and the run that starts the next are one CPU burst.
    let us = |v: &[u64]| v.iter().map(|x| x * US).collect::<Vec<_>>();
    assert_eq!(nice.bursts.to_vec(), us(&[1000, 10, 1, 10, 1001, 10, 1, 10, 1]));
    // Round trip, instances included.
    let out = export(&w).unwrap();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["tasks"]["rt"]["instance"], 3);
    assert_eq!(v["tasks"]["rt"]["priority"], 90);
    assert_eq!(import(&out).unwrap(), w);
    // RT priority 90 stays more urgent than 10 under the linux policy: the 90 task runs first.
    let hi = {
        let mut t = TaskSpec { priority: 90, ..TaskSpec::cpu("hi", 0, 5 * MS) };
        t.class = Some("fifo".into());
        t
    };
    let lo = {
        let mut t = TaskSpec { priority: 10, ..TaskSpec::cpu("lo", 0, 5 * MS) };
        t.class = Some("fifo".into());
        t
    };
    let w = import(&export(&Workload { cpus: Some(1), tasks: vec![lo, hi] }).unwrap()).unwrap();
    let r = simulate(&w, by_spec("linux").unwrap().as_mut(), &SimConfig::default());
    assert_eq!((r.tasks[1].finish, r.tasks[0].finish), (Some(5 * MS), Some(10 * MS)));
}

#[test]
fn export_refuses_what_rt_app_cannot_express() {
    let base = TaskSpec::cpu("t", 0, 10 * MS);
    let refuse = |t: TaskSpec| export(&Workload { cpus: None, tasks: vec![t] }).unwrap_err();
    // Times are whole µs or refused: never rounded.
    let e = refuse(TaskSpec { bursts: vec![1500].into(), ..base.clone() });
    assert_eq!((e.task.as_deref(), e.key.as_str()), (Some("t"), "bursts[0]"));
    assert!(e.message.contains("not a whole number of µs") && e.message.contains("refused rather than rounded"), "{e}");
    assert_eq!(refuse(TaskSpec { arrival: 1, ..base.clone() }).key, "arrival");
    assert_eq!(refuse(TaskSpec { weight: 3, ..base.clone() }).key, "weight");
    assert_eq!(
        refuse({
            let mut t = TaskSpec { bursts: vec![MS, MS, MS].into(), ..base.clone() };
            t.until_woken = vec![0];
            t
        })
        .key,
        "until_woken"
    );
    assert_eq!(refuse(TaskSpec { priority: 3, ..base.clone() }).key, "priority");
    assert_eq!(
        refuse({
            let mut t = base.clone();
            t.class = Some("batch".into());
            t
        })
        .key,
        "class"
    );
    assert_eq!(refuse(TaskSpec { bursts: vec![MS, 0, MS].into(), ..base.clone() }).key, "bursts[1]");
    let e = refuse({
        let mut t = TaskSpec { jobs: 3, ..base.clone() };
        t.period = Some(5 * MS);
        t
    });
    assert!(e.message.contains("longer than its period"), "{e}");
    // What is whole µs exports and comes back.
    let ok = TaskSpec { arrival: 7 * US, bursts: vec![1500 * US, 20 * US, 3 * MS].into(), ..base };
    let w = Workload { cpus: None, tasks: vec![ok] };
    let back = import(&export(&w).unwrap()).unwrap();
    assert_eq!(back.tasks[0].bursts, w.tasks[0].bursts);
    assert_eq!(back.tasks[0].arrival, 7 * US);
}

#[test]
fn mutexes_become_locks_held_over_whole_cpu_bursts() {
    let text = r#"{
        "resources": {"m": {"type": "mutex"}},
        "tasks": {
            "a": {"loop": 3, "lock": "m", "run": 2000, "unlock": "m", "sleep": 3000},
            "b": {"loop": 2, "phases": {"p": {"sleep": 500, "lock0": "m", "lock1": "n", "run": 4000,
                                               "unlock1": "n", "unlock0": "m"}}},
            "c": {"loop": 4, "lock": "m", "run": 1000, "unlock": "m", "timer": {"ref": "unique", "period": 10000}}
        }
    }"#;
    let w = import(text).unwrap();
    let lock = |name: &str, burst| LockUse { name: name.into(), burst };
    // a: 3 × (locked run 2 ms, sleep 3 ms), the last sleep dropped (it only delays the exit): each
    // of the three CPU bursts holds m.
    let a = &w.tasks[0];
    assert_eq!(a.bursts.to_vec(), vec![2 * MS, 3 * MS, 2 * MS, 3 * MS, 2 * MS]);
    assert_eq!(a.locks, vec![lock("m", 0), lock("m", 1), lock("m", 2)]);
    // b: the first sleep is its arrival; then 4 ms under m and n (taken in that order), 0.5 ms
    // asleep, 4 ms under both again.
    let b = &w.tasks[1];
    assert_eq!((b.arrival, b.bursts.to_vec()), (500 * US, vec![4 * MS, 500 * US, 4 * MS]));
    assert_eq!(b.locks, vec![lock("m", 0), lock("n", 0), lock("m", 1), lock("n", 1)]);
    // c: a periodic job of 1 ms under m, every 10 ms, 4 jobs (the lock is per job: burst 0).
    let c = &w.tasks[2];
    assert_eq!((c.bursts.to_vec(), c.period, c.jobs), (vec![MS], Some(10 * MS), 4));
    assert_eq!(c.locks, vec![lock("m", 0)]);

    // Export writes the mutexes back around their runs, and the import of that is the same.
    let out = export(&w).unwrap();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["global"]["pi_enabled"], true, "{out}");
    assert_eq!((v["tasks"]["c"]["lock"].clone(), v["tasks"]["c"]["unlock"].clone()), ("m".into(), "m".into()));
    assert_eq!(import(&out).unwrap(), w, "{out}");
    assert_eq!(import(&export(&import(&out).unwrap()).unwrap()).unwrap(), w);

    // The lock excludes: two instances each running 10 ms under m on two CPUs finish at 10 and
    // 20 ms; without the mutex both finish at 10 ms.
    let pair = |body: &str| import(&format!(r#"{{"tasks": {{"x": {{"instance": 2, "loop": 1, {body}}}}}}}"#)).unwrap();
    let finishes = |w: &Workload| {
        let r = simulate(w, by_spec("fcfs").unwrap().as_mut(), &SimConfig { cpus: 2, ..SimConfig::default() });
        r.tasks.iter().map(|t| t.finish.unwrap()).collect::<Vec<_>>()
    };
    assert_eq!(finishes(&pair(r#""lock": "m", "run": 10000, "unlock": "m""#)), vec![10 * MS, 20 * MS]);
    assert_eq!(finishes(&pair(r#""run": 10000"#)), vec![10 * MS, 10 * MS]);
}

#[test]
fn mutexes_that_do_not_cover_one_whole_cpu_burst_are_refused_by_key() {
    for (body, key, words) in [
        (r#""run0": 10, "lock": "m", "run1": 10, "unlock": "m""#, "lock", "middle of a CPU burst"),
        (r#""lock": "m", "run": 10, "sleep": 10, "unlock": "m""#, "sleep", "sleep while mutex \"m\" is held"),
        (r#""lock": "m", "run0": 10, "unlock": "m", "run1": 10"#, "run1", "right after an unlock"),
        (r#""unlock": "m", "run": 10"#, "unlock", "does not hold"),
        (r#""lock": "m", "unlock": "m", "run": 10"#, "lock", "held over no run"),
        (r#""lock": "m", "run": 10"#, "lock", "never unlocked"),
        (r#""lock0": "m", "lock1": "m", "run": 10, "unlock": "m""#, "lock1", "already held"),
        (r#""lock": 5, "run": 10"#, "lock", "must be a string"),
        (r#""lock": "", "run": 10"#, "lock", "needs a name"),
    ] {
        let e = refused(&format!(r#"{{"tasks": {{"w": {{"loop": 1, {body}}}}}}}"#));
        assert_eq!((e.task.as_deref(), e.key.as_str()), (Some("w"), key), "{body}: {e}");
        assert!(e.message.contains(words), "{body}: {e}");
    }
    // Across loops: the run that ends one round and the locked run of the next would be one burst.
    let e = refused(r#"{"tasks": {"w": {"loop": 2, "lock": "m", "run0": 10, "unlock": "m", "sleep": 5, "run1": 10}}}"#);
    assert_eq!(e.key, "lock");
    // Only mutexes are taken from the legacy resources section.
    let e = refused(r#"{"resources": {"b": {"type": "barrier"}}, "tasks": {"w": {"loop": 1, "run": 10}}}"#);
    assert_eq!((e.task, e.key.as_str()), (None, "resources.b.type"));
    let e = refused(r#"{"resources": {"m": {"kind": 3}}, "tasks": {"w": {"loop": 1, "run": 10}}}"#);
    assert_eq!((e.key.as_str(), e.message.as_str()), ("resources.m.kind", "unknown key"));
}
