//! The `linux` policy: Linux 6.18's classes walked in order — deadline (EDF + CBS) > real-time
//! (FIFO/RR, priority 1–99, higher wins) > fair (EEVDF) — with classic RT throttling and the fair
//! deadline server.

use schedlab_sim::engine::{simulate, SimConfig, SimResult};
use schedlab_sim::policies::by_spec;
use schedlab_sim::policy::TaskView;
use schedlab_sim::workload::{TaskSpec, Workload};

const MS: u64 = 1_000_000;

fn run(w: &Workload, spec: &str, cfg: SimConfig) -> SimResult {
    simulate(w, by_spec(spec).unwrap().as_mut(), &cfg)
}

fn class(c: &str, priority: i32, t: TaskSpec) -> TaskSpec {
    {
        let mut t = TaskSpec { priority, ..t };
        t.class = Some(c.into());
        t
    }
}

fn one_cpu(tasks: Vec<TaskSpec>) -> Workload {
    Workload { cpus: Some(1), tasks }
}

/// Who ran when, in ms, one entry per uninterrupted run (a fair task's back-to-back slices merged).
fn runs(r: &SimResult) -> Vec<(usize, u64, u64)> {
    let mut out: Vec<(usize, u64, u64)> = Vec::new();
    for s in &r.slices {
        match out.last_mut() {
            Some(last) if last.0 == s.task && last.2 == s.start => last.2 = s.end,
            _ => out.push((s.task, s.start, s.end)),
        }
    }
    out.into_iter().map(|(t, a, b)| (t, a / MS, b / MS)).collect()
}

#[test]
fn fifo_priority_90_runs_before_10() {
    // Listed (and arriving) first, the priority-10 task still waits: a higher number wins.
    let w = one_cpu(vec![
        class("fifo", 10, TaskSpec::cpu("low", 0, 5 * MS)),
        class("fifo", 90, TaskSpec::cpu("high", 0, 5 * MS)),
    ]);
    let r = run(&w, "linux", SimConfig::default());
    assert_eq!(r.tasks[1].finish, Some(5 * MS));
    assert_eq!(r.tasks[0].finish, Some(10 * MS));
    // A priority-90 task arriving later pre-empts the running priority-10 one at once.
    let w = one_cpu(vec![
        class("fifo", 10, TaskSpec::cpu("low", 0, 5 * MS)),
        class("fifo", 90, TaskSpec::cpu("high", MS, 2 * MS)),
    ]);
    let r = run(&w, "linux", SimConfig::default());
    assert_eq!(r.tasks[1].finish, Some(3 * MS));
    assert_eq!((r.tasks[0].finish, r.tasks[0].preemptions), (Some(7 * MS), 1));
    // An equal priority does not pre-empt: FIFO among equals.
    let w = one_cpu(vec![
        class("fifo", 50, TaskSpec::cpu("first", 0, 5 * MS)),
        class("fifo", 50, TaskSpec::cpu("second", MS, 2 * MS)),
    ]);
    let r = run(&w, "linux", SimConfig::default());
    assert_eq!((r.tasks[0].finish, r.tasks[1].finish), (Some(5 * MS), Some(7 * MS)));
}

#[test]
fn rr_tasks_of_one_level_take_turns_of_100_ms() {
    let w = one_cpu(vec![
        class("rr", 20, TaskSpec::cpu("a", 0, 250 * MS)),
        class("rr", 20, TaskSpec::cpu("b", 0, 150 * MS)),
    ]);
    let r = run(&w, "linux", SimConfig::default());
    let spans: Vec<(usize, u64, u64)> = r.slices.iter().map(|s| (s.task, s.start / MS, s.end / MS)).collect();
    assert_eq!(spans, vec![(0, 0, 100), (1, 100, 200), (0, 200, 300), (1, 300, 350), (0, 350, 400)]);
    // A pre-empted RR task keeps the rest of its slice and its place at the head.
    let w = one_cpu(vec![
        class("rr", 20, TaskSpec::cpu("a", 0, 250 * MS)),
        class("rr", 20, TaskSpec::cpu("b", 0, 150 * MS)),
        class("fifo", 30, TaskSpec::cpu("intruder", 40 * MS, 10 * MS)),
    ]);
    let r = run(&w, "linux", SimConfig::default());
    let spans: Vec<(usize, u64, u64)> = r.slices.iter().map(|s| (s.task, s.start / MS, s.end / MS)).take(4).collect();
    assert_eq!(spans, vec![(0, 0, 40), (2, 40, 50), (0, 50, 110), (1, 110, 210)]);
}

fn dl(name: &str, runtime: u64, deadline: u64, period: u64, burst: u64) -> TaskSpec {
    {
        let mut t = TaskSpec::cpu(name, 0, burst * MS);
        t.class = Some("deadline".into());
        t.runtime = Some(runtime * MS);
        t.deadline = Some(deadline * MS);
        t.period = Some(period * MS);
        t
    }
}

#[test]
fn a_deadline_task_of_2_in_10_ms_gets_20_percent_beside_hogs() {
    // It wants the CPU all the time; the CBS throttles it after 2 ms in every 10 ms and
    // replenishes it at the next period (runtime refilled, deadline + 10 ms). The hogs share
    // the rest.
    let w = one_cpu(vec![
        dl("dl", 2, 10, 10, 10_000),
        TaskSpec::cpu("hog1", 0, 10_000 * MS),
        TaskSpec::cpu("hog2", 0, 10_000 * MS),
    ]);
    for tick in [None, Some(4 * MS)] {
        let r = run(
            &w,
            "linux",
            SimConfig { horizon: Some(1000 * MS), tick, check_invariants: true, ..SimConfig::default() },
        );
        assert_eq!(r.tasks[0].cpu, 200 * MS, "tick {tick:?}");
        assert_eq!(r.tasks[1].cpu + r.tasks[2].cpu, 800 * MS, "tick {tick:?}");
        assert_eq!(r.idle_violations, 0);
        // Without a tick: at 0 it runs 2 ms, then the hogs until 10 ms, when it pre-empts.
        if tick.is_none() {
            assert_eq!((r.slices[0].task, r.slices[0].end), (0, 2 * MS));
            let back = r.slices.iter().find(|s| s.task == 0 && s.start > 0).expect("again");
            assert_eq!((back.start, back.end), (10 * MS, 12 * MS));
        }
    }
    // Alone it still gets 20%: the CPU idles while it is throttled (the idle-CPU check knows
    // a throttled task may wait).
    let w = one_cpu(vec![dl("dl", 2, 10, 10, 10_000)]);
    let r = run(&w, "linux", SimConfig { horizon: Some(1000 * MS), check_invariants: true, ..SimConfig::default() });
    assert_eq!((r.tasks[0].cpu, r.idle_violations), (200 * MS, 0));
}

#[test]
fn classes_are_walked_deadline_realtime_fair() {
    // A fair hog from 0, a fifo task from 1 ms, a deadline task from 2 ms: each pre-empts.
    let w = one_cpu(vec![
        TaskSpec::cpu("fair", 0, 10 * MS),
        class("fifo", 1, TaskSpec::cpu("rt", MS, 3 * MS)),
        TaskSpec { arrival: 2 * MS, ..dl("dl", 1, 5, 5, 1) },
    ]);
    let r = run(&w, "linux", SimConfig::default());
    assert_eq!(runs(&r), vec![(0, 0, 1), (1, 1, 2), (2, 2, 3), (1, 3, 5), (0, 5, 14)]);
    // A woken fair task never pre-empts an RT one (with its budget left).
    let w = one_cpu(vec![class("fifo", 1, TaskSpec::cpu("rt", 0, 5 * MS)), TaskSpec::cpu("fair", MS, MS)]);
    let r = run(&w, "linux", SimConfig::default());
    assert_eq!(r.tasks[1].finish, Some(6 * MS));
}

#[test]
fn classic_rt_throttling_idles_the_cpu_past_the_budget_until_the_period_boundary() {
    // An RT hog alone, ticks every 4 ms, RT periods from 0. Its budget (950 ms) runs out just
    // after 950 ms; the tick notices at 952 ms, and the CPU idles — no fair task wants it — until
    // the boundary at 1000 ms takes 950 ms off the 952. The 2 ms overrun stays: the next budget
    // runs out after 1948 ms (tick 1952, 954 ms in all, 4 ms left over), the next after 2946 ms
    // (tick 2948).
    let w = one_cpu(vec![class("fifo", 50, TaskSpec::cpu("rt", 0, 10_000 * MS))]);
    let cfg = SimConfig { horizon: Some(3000 * MS), tick: Some(4 * MS), ..SimConfig::default() };
    let r = run(&w, "linux", cfg.clone());
    assert_eq!(runs(&r), vec![(0, 0, 952), (0, 1000, 1952), (0, 2000, 2948)]);
    // Boundaries at 300 + k·1000 ms: 300 ms are paid back at 300 ms, so the first throttle
    // comes at 1252 ms.
    let r = run(&w, "linux:rt_phase=300ms", cfg.clone());
    assert_eq!(runs(&r), vec![(0, 0, 1252), (0, 1300, 2252), (0, 2300, 3000)]);
    // Off, the RT task has the CPU all the time.
    assert_eq!(run(&w, "linux:rt_throttle=0", cfg).tasks[0].cpu, 3000 * MS);
}

#[test]
fn the_fair_server_serves_a_starved_fair_task_at_zero_laxity() {
    // An RT hog and a fair hog from 0, no tick. The fair task starts the server: a new period
    // (deadline 1000 ms, 50 ms), deferred to its zero-laxity instant, 950 ms. Then it serves the
    // fair task above the RT one; 50 ms for the 50 ms to its deadline overflow its 5%, so that
    // period is a new one (deadline 1950 ms), spent at 1000 ms and replenished at 1950 ms. The
    // RT budget is never exceeded (950 ms of RT per period).
    let w =
        one_cpu(vec![class("fifo", 50, TaskSpec::cpu("rt", 0, 10_000 * MS)), TaskSpec::cpu("fair", 0, 10_000 * MS)]);
    let cfg = SimConfig { horizon: Some(3000 * MS), ..SimConfig::default() };
    let expected =
        vec![(0, 0, 950), (1, 950, 1000), (0, 1000, 1950), (1, 1950, 2000), (0, 2000, 2950), (1, 2950, 3000)];
    for spec in ["linux", "linux:rt_throttle=0"] {
        let r = run(&w, spec, cfg.clone());
        assert_eq!(runs(&r), expected, "{spec}");
        assert_eq!((r.tasks[0].cpu, r.tasks[1].cpu), (2850 * MS, 150 * MS), "{spec}");
    }
    // With neither mechanism, the RT task starves the fair one.
    let r = run(&w, "linux:rt_throttle=0,fair_server=0", cfg);
    assert_eq!((r.tasks[0].cpu, r.tasks[1].cpu), (3000 * MS, 0));
}

#[test]
fn once_the_server_has_run_a_fair_wakeup_is_served_at_once_until_idle_time_spends_it() {
    let rt = class("fifo", 50, TaskSpec::cpu("rt", 0, 10_000 * MS));
    let fair = |name, at| TaskSpec::cpu(name, at * MS, 5 * MS);
    let w = one_cpu(vec![rt, fair("a", 100), fair("b", 1500), fair("c", 2050)]);
    let cfg = SimConfig { horizon: Some(4000 * MS), tick: Some(4 * MS), ..SimConfig::default() };
    let finishes = |r: &SimResult| [1, 2, 3].map(|i| r.tasks[i].finish.map(|f| f / MS));
    // Without RT throttling: `a` starts the server (deadline 1100 ms) and waits for zero laxity,
    // 1050 ms; the server runs with a new period (50 ms for 50 ms overflows its 5%: deadline
    // 2050 ms), serves `a` and stops. `b` at 1500 ms is served at once — the server has run this
    // period; 45 ms left for 550 ms overflow, so the revised rule gives it 27.5 ms. `c` at
    // 2050 ms finds the deadline reached: a new period, and the wait until 3000 ms.
    let r = run(&w, "linux:rt_throttle=0", cfg.clone());
    assert_eq!(finishes(&r), [Some(1055), Some(1505), Some(3005)]);
    // With classic throttling the RT task stops at the 952 ms tick: `a` runs then, in the
    // background (45 ms left), and 43 ms of idle follow, leaving 2 ms: the wait moves to
    // 1098 ms, where a new period starts (deadline 2098 ms) and the server stops. `b` is served
    // at once (29.9 ms by the revised rule; 24.9 ms left after it). The throttle at the
    // 1956 ms tick idles the CPU 44 ms, more than is left: the server is no longer running, so
    // `c` at 2050 ms waits for its zero-laxity instant, 2098 ms.
    let r = run(&w, "linux", cfg);
    assert_eq!(finishes(&r), [Some(957), Some(1505), Some(2103)]);
}

#[test]
fn fair_tasks_follow_eevdf_and_its_parameters() {
    // Two fair hogs switch at every 4 ms tick (the 1.4 ms slice is shorter than a tick).
    let w = one_cpu(vec![TaskSpec::cpu("a", 0, 10_000 * MS), TaskSpec::cpu("b", 0, 10_000 * MS)]);
    let cfg = SimConfig { horizon: Some(1000 * MS), tick: Some(4 * MS), ..SimConfig::default() };
    assert_eq!(run(&w, "linux", cfg.clone()).overall.context_switches, 250);
    assert_eq!(run(&w, "eevdf", cfg.clone()).overall, run(&w, "linux", cfg.clone()).overall);
    // The fair parameters are eevdf's.
    let w = one_cpu(vec![
        TaskSpec { nice: -5, ..TaskSpec::cpu("a", 0, 10_000 * MS) },
        {
            let mut t = TaskSpec::cpu("b", 0, 10_000 * MS);
            t.class = Some("batch".into());
            t
        },
        {
            let mut t = TaskSpec::cpu("c", 0, 10_000 * MS);
            t.class = Some("idle".into());
            t
        },
    ]);
    assert_eq!(
        run(&w, "eevdf:base_slice=3ms", cfg.clone()).overall,
        run(&w, "linux:base_slice=3ms", cfg.clone()).overall
    );
    assert_ne!(run(&w, "linux:base_slice=3ms", cfg.clone()).overall, run(&w, "linux", cfg).overall);
}

#[test]
fn the_spec_names_what_differs_and_is_tick_driven() {
    assert_eq!(by_spec("linux").unwrap().name(), "linux");
    assert_eq!(by_spec("linux:rr_quantum=100ms,rt_runtime=950ms").unwrap().name(), "linux");
    assert_eq!(
        by_spec("linux:rr_quantum=10ms,rt_throttle=0,delay_dequeue=0").unwrap().name(),
        "linux:rr_quantum=10ms,rt_throttle=0,delay_dequeue=0"
    );
    assert_eq!(by_spec("linux:ni_ratio=0,ni_random=1").unwrap().name(), "linux:ni_ratio=0");
    assert_eq!(by_spec("linux:ni_ratio=1025").err().unwrap().field, "ni_ratio");
    assert_eq!(by_spec("linux:stale_capacity=1").unwrap().name(), "linux");
    assert_eq!(by_spec("linux:stale_capacity=0").unwrap().name(), "linux:stale_capacity=0");
    assert_eq!(by_spec("linux:stale_capacity=2").err().unwrap().field, "stale_capacity");
    assert_eq!(by_spec("linux:softirq_lag=0.02ms").unwrap().name(), "linux");
    assert_eq!(by_spec("linux:softirq_lag=0ms").unwrap().name(), "linux:softirq_lag=0ms");
    assert_eq!(by_spec("linux:softirq_lag=2ms").err().unwrap().field, "softirq_lag");
    assert_eq!(by_spec("linux:rt_runtime=1200ms").err().unwrap().field, "rt_runtime");
    assert_eq!(by_spec("linux:latency=6ms").err().unwrap().field, "latency", "CFS's tunables are gone");
    assert!(by_spec("linux").unwrap().tick_driven());
    assert!(!by_spec("cfs").unwrap().tick_driven());
}

/// Four hogs at nice -5, 0, 0 and 5 on two CPUs: the load balancer evens the load averages
/// (PELT), so the nice -5 hog (weight 3121) ends up alone and the others (1024 + 1024 + 335)
/// share the other CPU — the 50/21/21/7 split the kernel gives (docs/validate.md).
#[test]
fn load_balancing_evens_the_weights_over_two_cpus() {
    let hog = |name: &str, nice: i32| TaskSpec { nice, ..TaskSpec::cpu(name, 0, 3_000 * MS) };
    let w = Workload { cpus: Some(2), tasks: vec![hog("n-5", -5), hog("n5", 5), hog("n0-a", 0), hog("n0-b", 0)] };
    let cfg = SimConfig { cpus: 2, tick: Some(4 * MS), horizon: Some(2_000 * MS), ..SimConfig::default() };
    let r = run(&w, "linux", cfg);
    let late: Vec<&schedlab_sim::engine::Slice> = r.slices.iter().filter(|s| s.start >= 1_000 * MS).collect();
    let cpu_of = |t: usize| -> Vec<usize> {
        let mut v: Vec<usize> = late.iter().filter(|s| s.task == t).map(|s| s.cpu).collect();
        v.dedup();
        v
    };
    let alone = cpu_of(0);
    assert_eq!(alone.len(), 1, "the nice -5 hog stays on one CPU: {alone:?}");
    for t in 1..4 {
        assert_eq!(cpu_of(t), vec![1 - alone[0]], "task {t} shares the other CPU");
    }
}

#[test]
fn a_released_lock_goes_to_the_waiter_of_highest_rt_priority() {
    use schedlab_sim::workload::LockUse;
    let locked = |mut t: TaskSpec| {
        t.locks = vec![LockUse { name: "L".into(), burst: 0 }];
        t
    };
    // Three CPUs: the holder (FIFO 50) takes L at 0 for 10 ms; FIFO 10 blocks on it at 1 ms,
    // FIFO 90 at 2 ms, each on a CPU of its own. A futex wakes by priority, not arrival: at 10 ms
    // the 90 takes L (done at 11 ms), then the 10 (done at 12 ms).
    let w = Workload {
        cpus: Some(3),
        tasks: vec![
            locked(class("fifo", 50, TaskSpec::cpu("holder", 0, 10 * MS))),
            locked(class("fifo", 10, TaskSpec::cpu("low", MS, MS))),
            locked(class("fifo", 90, TaskSpec::cpu("high", 2 * MS, MS))),
        ],
    };
    for inherit in [true, false] {
        let r = run(&w, "linux", SimConfig { cpus: 3, priority_inheritance: inherit, ..SimConfig::default() });
        let finish: Vec<u64> = r.tasks.iter().map(|t| t.finish.unwrap() / MS).collect();
        assert_eq!(finish, vec![10, 12, 11], "inheritance {inherit}: {:?}", runs(&r));
    }
    // Under `prio` a lower number is a higher priority: there the 10 is the more urgent.
    let r = run(&w, "prio", SimConfig { cpus: 3, ..SimConfig::default() });
    let finish: Vec<u64> = r.tasks.iter().map(|t| t.finish.unwrap() / MS).collect();
    assert_eq!(finish, vec![10, 11, 12]);
}

/// A task that existed before the run (a replayed trace's task: the workload gives its CPU) is
/// woken when it arrives, as a SIGCONT wakes it in the kernel: placed with a whole slice, not
/// the half slice (PLACE_DEADLINE_INITIAL) a forked task gets. One CPU, base slice 0.7 ms: a FIFO
/// task runs 0–10 ms; X (existed) and then Y (new) arrive at 5 ms, both at V (no lag), so
/// d(X) = V + 0.7 ms and d(Y) = V + 0.35 ms, and at 10 ms the earlier deadline, Y, runs first.
/// Were X placed as new too, the deadlines would tie and X, queued first, would run first.
#[test]
fn a_task_that_existed_before_the_run_is_woken_not_forked() {
    let rt = class("fifo", 50, TaskSpec::cpu("rt", 0, 10 * MS));
    let mut x = TaskSpec::cpu("X", 5 * MS, MS);
    x.start_cpu = Some(0);
    let y = TaskSpec::cpu("Y", 5 * MS, MS);
    let r = run(&one_cpu(vec![rt, x, y]), "linux", SimConfig::default());
    let first_fair = r.slices.iter().find(|s| s.task != 0).map(|s| (s.task, s.start));
    assert_eq!(first_fair, Some((2, 10 * MS)), "Y (new, half a slice) runs first: {:?}", runs(&r));
}

/// NI_RANDOM: a CPU going idle beside an overloaded one balances only as often as its recent
/// newidle balances succeeded. Two hogs start on CPU 0 and a 1 ms task on CPU 1; when it ends,
/// CPU 1 goes idle. Without NI_RANDOM (or at a high success ratio) its newidle balance pulls the
/// waiting hog at once; at ratio 0 (balances that kept failing) the die lets it through 2 times
/// in 1024, so here CPU 1 waits for CPU 0's ticks, whose softirq (20 µs after each) kicks it to
/// balance (NOHZ): there the hog waiting on CPU 0 has just run (the tick switched the two), is
/// cache-hot and stays until two balances have failed — the third, at 12 ms, moves it. Were the
/// balance at the tick itself (`softirq_lag=0ms`), it would find CPU 0 between its two hogs, take
/// the one that ran a tick ago, and move it at 4 ms.
#[test]
fn newidle_balancing_follows_its_success_ratio() {
    let placed = |name: &str, cpu: usize, burst: u64| {
        let mut t = TaskSpec::cpu(name, 0, burst);
        t.start_cpu = Some(cpu);
        t
    };
    let w = Workload {
        cpus: Some(2),
        tasks: vec![placed("h1", 0, 50 * MS), placed("h2", 0, 50 * MS), placed("short", 1, MS)],
    };
    let cfg = SimConfig { cpus: 2, tick: Some(4 * MS), horizon: Some(20 * MS), ..SimConfig::default() };
    let pulled_at = |spec: &str| {
        let r = run(&w, spec, cfg.clone());
        r.slices.iter().find(|s| s.cpu == 1 && s.task != 2).map(|s| s.start)
    };
    assert_eq!(pulled_at("linux:ni_random=0"), Some(MS), "without NI_RANDOM, pulled as CPU 1 goes idle");
    assert_eq!(pulled_at("linux:ni_ratio=1024"), Some(MS), "a ratio of 1024 lets every balance through");
    let lag = schedlab_sim::policies::linux::SOFTIRQ_LAG;
    assert_eq!(pulled_at("linux:ni_ratio=0"), Some(12 * MS + lag), "at ratio 0, moved at a tick instead");
    assert_eq!(pulled_at("linux:ni_ratio=0,softirq_lag=0ms"), Some(4 * MS), "with no softirq lag, at the first tick");
}

/// `t` pinned to `cpu` and starting there.
fn pinned(mut t: TaskSpec, cpu: usize) -> TaskSpec {
    t.affinity = Some(vec![cpu]);
    t.start_cpu = Some(cpu);
    t
}

/// A forked task starts on its parent's CPU when that CPU has spare capacity, even if it has
/// more tasks than a busy one (`sched_balance_find_dst_cpu()` compares group types first).
/// CPU 0 runs one hog (fully busy). On CPU 1 a parent that used 1 ms of the last 10 wakes at
/// 200 ms beside a light task that arrived just before, and forks 0.1 ms into its run: CPU 1 then
/// has two tasks and spare capacity. Counting tasks alone would send the child to the hog's CPU.
#[test]
fn a_forked_task_stays_beside_a_parent_whose_cpu_has_spare_capacity() {
    let hog = pinned(TaskSpec::cpu("hog", 0, 400 * MS), 0);
    let mut parent = pinned(TaskSpec::cpu("parent", 190 * MS, MS), 1);
    parent.bursts = vec![MS, 9 * MS, 2 * MS].into();
    parent.wakes = vec![schedlab_sim::workload::WakeUp { burst: 1, at: MS / 10, task: 3 }];
    let light = pinned(TaskSpec::cpu("light", 199 * MS + 900_000, 5 * MS), 1);
    let mut child = TaskSpec::cpu("child", 200 * MS, MS);
    child.forked_by = Some(1);
    let w = Workload { cpus: Some(2), tasks: vec![hog, parent, light, child] };
    let r = run(&w, "linux", SimConfig { cpus: 2, tick: Some(4 * MS), ..SimConfig::default() });
    let first = r.slices.iter().find(|s| s.task == 3).expect("the child ran");
    assert!(first.start >= 200 * MS, "it arrives at the fork, 200 ms in: {}", first.start);
    assert_eq!(first.cpu, 1, "the child starts beside its parent");
}

/// `util_est`: tasks that were there before the run keep the estimates the kernel had for them,
/// and a CPU's utilisation as placement reads it is the larger of its `util_avg` and the sum of
/// its runnable tasks' estimates. CPU 1 holds a parent and two hogs that just woke (no
/// `util_avg` yet); CPU 0 a launcher, running. The parent forks 0.1 ms in. With estimates of
/// 540 + 276 + 158 = 974 (what the kernel had for a traced case's three tasks), above
/// 1024 · 100 / 117 = 875, CPU 1 is overloaded and the child goes to CPU 0, which has spare
/// capacity; without them both CPUs have spare capacity and neither is idle, so it stays home.
/// CPU 0 runs a launcher; CPU 1 a parent (task 1) and two hogs (2, 3) that were there before
/// the run; the parent forks the child (task 4) 0.1 ms in, which starts on `child_cpu` if given.
fn fork_beside_two_hogs(child_cpu: Option<usize>) -> Workload {
    let existing = |name: &str, burst: u64| {
        let mut t = TaskSpec::cpu(name, 0, burst);
        t.start_cpu = Some(1);
        t
    };
    let launcher = pinned(TaskSpec::cpu("launcher", 0, 2 * MS), 0);
    let mut parent = existing("parent", 10 * MS);
    parent.wakes = vec![schedlab_sim::workload::WakeUp { burst: 0, at: MS / 10, task: 4 }];
    let mut child = TaskSpec::cpu("child", 0, MS);
    child.forked_by = Some(1);
    child.start_cpu = child_cpu;
    Workload {
        cpus: Some(2),
        tasks: vec![launcher, parent, existing("hog-a", 50 * MS), existing("hog-b", 50 * MS), child],
    }
}

#[test]
fn a_child_forked_beside_tasks_with_large_estimates_starts_on_the_other_cpu() {
    let w = fork_beside_two_hogs(None);
    let cfg = SimConfig { cpus: 2, tick: Some(4 * MS), horizon: Some(20 * MS), ..SimConfig::default() };
    let child_cpu = |estimates: Vec<(usize, u64)>| {
        let mut linux = schedlab_sim::policies::linux_by_spec("linux:cpus=2").unwrap().with_util_est(estimates);
        let r = simulate(&w, &mut linux, &cfg);
        r.slices.iter().find(|s| s.task == 4).expect("the child ran").cpu
    };
    assert_eq!(child_cpu(vec![(1, 540), (2, 276), (3, 158)]), 0, "overloaded by the estimates: the other CPU");
    assert_eq!(child_cpu(vec![]), 1, "without estimates: beside its parent");
    assert_eq!(child_cpu(vec![(1, 300), (2, 276), (3, 158)]), 1, "734 < 875: spare capacity, home");
}

/// A fork the workload gives a CPU (a replay starts it where the kernel did) starts there, and
/// the fork rule is still asked in the state at the fork: with the estimates above it would
/// have chosen CPU 0, and the kernel (the workload) chose CPU 1. The child is still a fork, not
/// a task that existed before the run.
#[test]
fn a_fork_given_its_cpu_starts_there_and_the_rule_is_asked_beside_it() {
    let w = fork_beside_two_hogs(Some(1));
    let cfg = SimConfig { cpus: 2, tick: Some(4 * MS), horizon: Some(20 * MS), ..SimConfig::default() };
    let mut linux = schedlab_sim::policies::linux_by_spec("linux:cpus=2").unwrap().with_util_est(vec![
        (1, 540),
        (2, 276),
        (3, 158),
    ]);
    let r = simulate(&w, &mut linux, &cfg);
    assert_eq!(r.slices.iter().find(|s| s.task == 4).expect("the child ran").cpu, 1);
    assert_eq!(linux.forks_checked(), [(4, 0, 1)], "the rule chose CPU 0; CPU 1 was given");
    let view = |start_cpu, waker_cpu| TaskView { start_cpu, waker_cpu, ..TaskView::new(4) };
    assert!(!view(Some(1), Some(1)).existed_before(), "a fork given its CPU is still new");
    assert!(view(Some(1), None).existed_before() && !view(None, None).existed_before());
}

/// The kernel's places, read beside a live run, set the replay's fair tasks against each other
/// once: two nice-0 hogs that were there before the run start at lag 0 and take 1.4 ms turns
/// (exact slices). A reading at 5 ms has the one the replay runs then (R) read at 4.5 ms, 0.5 ms
/// of running before, and the other (W) waiting 3 ms of virtual time ahead of where R is at
/// 5 ms: at 5 ms W is moved to 3 ms ahead of R (the weighted mean kept), so R runs on from there
/// until it has caught up — about 3 ms, more than two turns. A round in which the kernel ran the
/// task the replay has waiting sets nothing, and so does a round of a single task.
#[test]
fn the_kernels_places_set_the_fair_tasks_against_each_other_once() {
    use schedlab_sim::policies::linux::start_positions::{RunningRead, StartRound};
    let existing = |name: &str| {
        let mut t = TaskSpec::cpu(name, 0, 100 * MS);
        t.start_cpu = Some(0);
        t
    };
    let w = one_cpu(vec![existing("A"), existing("B")]);
    let cfg = SimConfig { horizon: Some(30 * MS), ..SimConfig::default() };
    let mut plain = schedlab_sim::policies::linux_by_spec("linux:cpus=1").unwrap();
    let turns = simulate(&w, &mut plain, &cfg);
    let running_at = |t: u64| turns.slices.iter().find(|s| s.start <= t && t < s.end).expect("a hog runs").task;
    let (r, w_) = (running_at(5 * MS), 1 - running_at(5 * MS));
    let (r2, w2) = (running_at(2 * MS), 1 - running_at(2 * MS));
    let read = |task, vruntime, updated_at| Some(RunningRead { task, vruntime, updated_at });
    let rounds = vec![
        // The kernel ran the one the replay has waiting.
        StartRound { at: 2 * MS, tasks: vec![(r2, 0)], running: read(w2, 0, 2 * MS) },
        StartRound { at: 3 * MS, tasks: vec![(w_, 0)], running: None },
        StartRound {
            at: 5 * MS,
            tasks: vec![(w_, 3 * MS as i64)],
            running: read(r, -(MS as i64) / 2, 4 * MS + MS / 2),
        },
        StartRound { at: 9 * MS, tasks: vec![(w_, 0)], running: read(r, -(20 * MS as i64), 9 * MS) },
    ];
    let mut linux = schedlab_sim::policies::linux_by_spec("linux:cpus=1").unwrap().with_start_positions(rounds);
    let set_run = simulate(&w, &mut linux, &cfg);
    let set = linux.start_positions_set();
    assert_eq!(set.len(), 1, "once: {set:?}");
    assert_eq!((set[0].0, set[0].1), (5 * MS, 2));
    // R's CPU time in 5–9 ms: the catch-up (about 3 ms) against half of it in 1.4 ms turns.
    let r_in = |res: &SimResult| -> u64 {
        res.slices.iter().filter(|s| s.task == r).map(|s| s.end.min(9 * MS).saturating_sub(s.start.max(5 * MS))).sum()
    };
    assert!(r_in(&set_run) >= 2_800_000, "R catches up: {} ns, {:?}", r_in(&set_run), runs(&set_run));
    assert!(r_in(&turns) <= 2_200_000, "without them, turns: {} ns, {:?}", r_in(&turns), runs(&turns));
}

/// A real-time child forked by a real-time parent of its priority starts where
/// `select_task_rq_rt()` puts it: the parent's CPU runs an RT task at least as high, so the
/// child goes to the CPU of the lowest RT priority, the one a fair hog runs on, and pre-empts
/// the hog at once. Placed as a new task (the idlest CPU: the parent's has no fair load) it
/// reached CPU 1 only at 8 ms, 3 ms late.
#[test]
fn a_real_time_child_leaves_its_real_time_parents_cpu() {
    let hog = pinned(TaskSpec::cpu("hog", 0, 100 * MS), 1);
    let mut parent = pinned(class("fifo", 50, TaskSpec::cpu("parent", 0, 20 * MS)), 0);
    parent.wakes = vec![schedlab_sim::workload::WakeUp { burst: 0, at: 5 * MS, task: 2 }];
    let mut child = class("fifo", 50, TaskSpec::cpu("child", 0, 2 * MS));
    child.forked_by = Some(1);
    let w = Workload { cpus: Some(2), tasks: vec![hog, parent, child] };
    let r = run(&w, "linux", SimConfig { cpus: 2, tick: Some(4 * MS), ..SimConfig::default() });
    let first = r.slices.iter().find(|s| s.task == 2).expect("the child ran");
    assert_eq!((first.cpu, first.start), (1, 5 * MS), "the child pre-empts the hog on CPU 1 at the fork");
}

/// The other side of the same rule: a child forked on a CPU that a hog keeps busy goes to the
/// idle CPU (spare capacity and an idle CPU beat an overloaded parent's CPU).
#[test]
fn a_forked_task_leaves_a_busy_parent_for_an_idle_cpu() {
    let hog = pinned(TaskSpec::cpu("hog", 0, 400 * MS), 1);
    let mut parent = pinned(TaskSpec::cpu("parent", 0, 300 * MS), 1);
    parent.wakes = vec![schedlab_sim::workload::WakeUp { burst: 0, at: 100 * MS, task: 2 }];
    let mut child = TaskSpec::cpu("child", 200 * MS, MS);
    child.forked_by = Some(1);
    let w = Workload { cpus: Some(2), tasks: vec![hog, parent, child] };
    let r = run(&w, "linux", SimConfig { cpus: 2, tick: Some(4 * MS), ..SimConfig::default() });
    let first = r.slices.iter().find(|s| s.task == 2).expect("the child ran");
    assert_eq!(first.cpu, 0, "the child starts on the idle CPU");
    assert!(r.tasks[2].arrival > 150 * MS, "forked once the parent had run 100 ms: {}", r.tasks[2].arrival);
}

/// A task held where it ran (`burst_cpus`: a replay's background task) runs each CPU burst on
/// that burst's CPU, wherever the policy would have woken it: alone on two idle CPUs, it would
/// wake where it last ran; held, it goes 1, 0, 1. The same under `linux` (its own queue per CPU)
/// and under the engine's per-CPU queues for a textbook policy.
#[test]
fn a_held_task_runs_each_burst_on_the_cpu_it_ran_on_live() {
    let mut t = TaskSpec::cpu("held", 0, MS);
    t.bursts = vec![MS, MS, MS, MS, MS].into();
    t.burst_cpus = vec![1, 0, 1];
    let w = Workload { cpus: Some(2), tasks: vec![t] };
    let cfg = SimConfig { cpus: 2, ..SimConfig::default() };
    // Per CPU burst (its index in `bursts` is twice its number), the CPUs its slices ran on.
    let cpus = |r: &SimResult| {
        let mut v: Vec<(u32, usize)> = r.slices.iter().map(|s| (s.burst / 2, s.cpu)).collect();
        v.dedup();
        v.into_iter().map(|(_, c)| c).collect::<Vec<_>>()
    };
    assert_eq!(cpus(&run(&w, "linux", cfg.clone())), [1, 0, 1]);
    let mut fcfs = vec![by_spec("fcfs").unwrap(), by_spec("fcfs").unwrap()];
    let r = schedlab_sim::engine::simulate_per_cpu(&w, &mut fcfs, &SimConfig { record_slices: true, ..cfg.clone() });
    assert_eq!(cpus(&r), [1, 0, 1]);
    // Unheld, the same task stays on one CPU throughout.
    let mut free = w.clone();
    free.tasks[0].burst_cpus.clear();
    let free_cpus = cpus(&run(&free, "linux", SimConfig { cpus: 2, ..SimConfig::default() }));
    assert!(free_cpus.windows(2).all(|p| p[0] == p[1]), "{free_cpus:?}");
}

/// A held task's blocked interval ends when its `block_ends` says (the live wake-up), not its
/// length after the burst before: behind a 10 ms task that runs first, its 1 ms burst ends at
/// 11 ms, and its 5 ms block, which ended at 20 ms live, ends there (at 16 ms by its length).
/// A block that would begin after its end lasts nothing.
#[test]
fn a_held_task_wakes_when_it_woke_live_however_late_it_ran() {
    let first = TaskSpec::cpu("first", 0, 10 * MS);
    let mut held = TaskSpec::cpu("held", 0, MS);
    held.bursts = vec![MS, 5 * MS, MS].into();
    let w = |ends: Vec<u64>| {
        let mut held = held.clone();
        held.block_ends = ends;
        one_cpu(vec![first.clone(), held])
    };
    let held_runs = |ends: Vec<u64>| -> Vec<(u64, u64)> {
        let r = run(&w(ends), "fcfs", SimConfig::default());
        runs(&r).into_iter().filter(|&(t, _, _)| t == 1).map(|(_, a, b)| (a, b)).collect()
    };
    assert_eq!(held_runs(vec![]), [(10, 11), (16, 17)]);
    assert_eq!(held_runs(vec![20 * MS]), [(10, 11), (20, 21)]);
    assert_eq!(held_runs(vec![5 * MS]), [(10, 12)]);
}

/// A held task that never sleeps between two bursts on different CPUs still moves: here each
/// job runs 3 ms on CPU 0, waits 1 ms, runs 3 ms on CPU 1, and the next job (every 5 ms) is
/// released while the last burst runs, so the job after starts at once — on CPU 0, leaving
/// CPU 1's queue as if it had slept. Beside it a hog on each CPU keeps both queues busy.
#[test]
fn a_held_task_moves_between_jobs_released_while_it_runs() {
    let mut held = TaskSpec::cpu("held", 0, 1);
    held.bursts = vec![3 * MS, MS, 3 * MS].into();
    (held.jobs, held.period) = (4, Some(5 * MS));
    held.burst_cpus = vec![0, 1];
    let hogs = [0, 1].map(|c| pinned(TaskSpec::cpu("hog", 0, 100 * MS), c));
    let w = Workload { cpus: Some(2), tasks: [vec![held], hogs.to_vec()].concat() };
    let cfg = SimConfig { cpus: 2, tick: Some(4 * MS), check_invariants: true, ..SimConfig::default() };
    let r = run(&w, "linux", cfg);
    assert_eq!(r.tasks[0].jobs_done, 4, "{:?}", runs(&r));
    for s in r.slices.iter().filter(|s| s.task == 0) {
        assert_eq!(s.cpu, [0, 1][s.burst as usize / 2], "{s:?}");
    }
}

/// A held task whose wake-up comes before its block (a read that finds data: the way a replayed
/// host task's burst can begin without a block) is not run on where it is: its next burst is
/// held on CPU 1, so it is woken there. W on CPU 1 writes at 0.2 ms while the reader runs its
/// first 1 ms burst on CPU 0; at 1 ms the reader goes on with its second burst, on CPU 1.
#[test]
fn a_held_task_woken_before_it_blocks_goes_on_where_its_next_burst_is_held() {
    let mut reader = TaskSpec::cpu("reader", 0, MS);
    reader.bursts = vec![MS, 0, MS].into();
    reader.until_woken = vec![0];
    reader.burst_cpus = vec![0, 1];
    let mut writer = pinned(TaskSpec::cpu("writer", 0, MS), 1);
    writer.wakes = vec![schedlab_sim::workload::WakeUp { burst: 0, at: MS / 5, task: 0 }];
    let w = Workload { cpus: Some(2), tasks: vec![reader, writer] };
    let r = run(&w, "linux", SimConfig { cpus: 2, check_invariants: true, ..SimConfig::default() });
    // Each burst's CPU and where it began (its slices merged).
    let mut reads: Vec<(u32, usize, u64)> = Vec::new();
    for s in r.slices.iter().filter(|s| s.task == 0) {
        if reads.last().is_none_or(|&(b, c, _)| (b, c) != (s.burst, s.cpu)) {
            reads.push((s.burst, s.cpu, s.start / (MS / 10)));
        }
    }
    assert_eq!(reads, [(0, 0, 0), (2, 1, 10)], "(burst, CPU, start in 0.1 ms)");
}

/// A real-time task pre-empted on its CPU by a higher real-time task is pushed to a CPU that
/// runs only fair work (`set_next_task_rt()` pushes what waits behind the task it picks); one
/// pre-empted by the stopper thread stays and runs on once the stopper is done
/// (`set_next_task_stop()` pushes nothing). A FIFO task of priority 40 runs 5 ms on CPU 0 from 0;
/// at 1 ms a task of priority 99 (class `fifo`, or `stop`) held on CPU 0 runs 0.1 ms; a hog
/// keeps CPU 1 busy.
#[test]
fn a_task_the_stopper_preempts_stays_where_a_higher_real_time_task_pushes_it() {
    let run_with = |preempter: &str| {
        let fifo = class("fifo", 40, TaskSpec::cpu("fifo", 0, 5 * MS));
        let mut fifo = pinned(fifo, 0);
        fifo.affinity = None;
        let mut high = class(preempter, 99, TaskSpec::cpu(preempter, MS, MS / 10));
        high.start_cpu = Some(0);
        high.burst_cpus = vec![0];
        let hog = pinned(TaskSpec::cpu("hog", 0, 20 * MS), 1);
        let w = Workload { cpus: Some(2), tasks: vec![fifo, high, hog] };
        let r =
            run(&w, "linux", SimConfig { cpus: 2, tick: Some(4 * MS), check_invariants: true, ..SimConfig::default() });
        let cpus: Vec<(usize, u64)> =
            r.slices.iter().filter(|s| s.task == 0).map(|s| (s.cpu, s.start / (MS / 10))).collect();
        cpus
    };
    // Pushed at 1 ms: the rest of its run (4 ms) on CPU 1, pre-empting the hog.
    assert_eq!(run_with("fifo"), [(0, 0), (1, 10)]);
    // Left on CPU 0: it runs again there at 1.1 ms.
    assert_eq!(run_with("stop"), [(0, 0), (0, 11)]);
}

/// With a tick, an RR slice is counted in ticks as the kernel counts it (`task_tick_rt()`): two
/// RR hogs released 0.1 ms after a tick take turns that end at the 25th tick after each start —
/// the first at 100 ms, where a slice spent in time would end at the first tick after 100.1 ms
/// (104 ms) — and a FIFO task that takes the CPU between two ticks (41–43 ms) costs the running
/// one no tick of its slice.
#[test]
fn rr_slices_are_counted_in_ticks() {
    let w = one_cpu(vec![
        class("rr", 20, TaskSpec::cpu("a", 100_000, 1000 * MS)),
        class("rr", 20, TaskSpec::cpu("b", 100_000, 1000 * MS)),
        class("fifo", 30, TaskSpec::cpu("intruder", 41 * MS, 2 * MS)),
    ]);
    let r = run(&w, "linux", SimConfig { horizon: Some(300 * MS), tick: Some(4 * MS), ..SimConfig::default() });
    let spans: Vec<(usize, u64, u64)> = r.slices.iter().map(|s| (s.task, s.start / 100_000, s.end / 100_000)).collect();
    assert_eq!(spans, vec![(0, 1, 410), (2, 410, 430), (0, 430, 1000), (1, 1000, 2000), (0, 2000, 3000)]);
}

/// A wake-up finds an idle CPU from the start (`select_idle_cpu()` with SIS_UTIL scans as many
/// CPUs as the domain's last balance allowed: all of them on the near-idle CPUs a run starts on).
/// A sleeper runs 0.5 ms alone on CPU 0 (so it leaves the queue on blocking: no lag to work off,
/// no delayed dequeue) and sleeps 2 ms; two hogs arrive on CPU 0 at 1 ms, CPU 1 idle. The sleeper
/// wakes on CPU 1 at once, before any balancing has run, instead of waiting behind the hogs.
#[test]
fn a_wake_up_before_the_first_balance_finds_the_idle_cpu() {
    let on0 = |mut t: TaskSpec| {
        t.start_cpu = Some(0);
        t
    };
    let mut sleeper = on0(TaskSpec::cpu("sleeper", 0, MS / 2));
    sleeper.bursts = vec![MS / 2, 2 * MS, MS / 2].into();
    let hogs = ["hog-a", "hog-b"].map(|n| on0(TaskSpec::cpu(n, MS, 100 * MS)));
    let w = Workload { cpus: Some(2), tasks: [vec![sleeper], hogs.to_vec()].concat() };
    let r = run(&w, "linux", SimConfig { cpus: 2, tick: Some(4 * MS), ..SimConfig::default() });
    let second = r.slices.iter().find(|s| s.task == 0 && s.burst == 2).expect("the sleeper ran again");
    assert_eq!(second.cpu, 1, "{:?}", runs(&r));
    assert!(second.start < 2 * MS + MS / 2 + MS / 10, "woken at 2.5 ms, ran at {}", second.start);
}

/// A start layout puts tasks on the CPUs it names at its time, once, whatever they were doing:
/// a sleeper runs 0.5 ms alone on CPU 0 and sleeps 3 ms, two hogs arrive there at 1 ms, and CPU 1
/// runs a third hog; at 2 ms the layout moves hog-a (running or waiting on CPU 0) and the
/// sleeper (blocked: it wakes from CPU 1 now), and a task blocked but still queued on CPU 0,
/// which wakes on CPU 1. A task already where the layout says stays.
#[test]
fn a_start_layout_moves_running_waiting_and_blocked_tasks_once() {
    use schedlab_sim::policies::linux::start_layout::StartLayout;
    let on = |mut t: TaskSpec, c: usize| {
        t.start_cpu = Some(c);
        t
    };
    let mut sleeper = on(TaskSpec::cpu("sleeper", 0, MS / 2), 0);
    sleeper.bursts = vec![MS / 2, 3 * MS, MS / 2].into();
    // CPU 0 takes it from behind hog-c when the sleeper sleeps at 0.5 ms; it runs there 1.2 ms
    // while the hogs wait from 1 ms, and blocks at 1.7 ms ahead of them in virtual time: still
    // queued (delayed) at 2 ms.
    let mut delayed = on(TaskSpec::cpu("delayed", 0, MS), 1);
    delayed.bursts = vec![6 * MS / 5, 3 * MS, MS / 2].into();
    let tasks = vec![
        sleeper,
        on(TaskSpec::cpu("hog-a", MS, 40 * MS), 0),
        on(TaskSpec::cpu("hog-b", MS, 40 * MS), 0),
        on(TaskSpec::cpu("hog-c", 0, 40 * MS), 1),
        delayed,
    ];
    let w = Workload { cpus: Some(2), tasks };
    let cfg = SimConfig { cpus: 2, tick: Some(4 * MS), record_slices: true, ..SimConfig::default() };
    let layout = StartLayout { at: 2 * MS, cpus: vec![(0, 1), (1, 1), (3, 1), (4, 1)] };
    let mut linux = schedlab_sim::policies::linux_by_spec("linux").unwrap().with_start_layout(layout);
    let r = simulate(&w, &mut linux, &cfg);
    let moves: Vec<(usize, usize, usize)> = linux.start_layout_moves().to_vec();
    assert_eq!(moves, vec![(0, 0, 1), (1, 0, 1), (4, 0, 1)], "all but hog-c moved: it was there");
    // hog-a's first slice after 2 ms is on CPU 1, and the sleeper's second burst too.
    let first_after = |task: usize, burst: u32| {
        r.slices.iter().find(|s| s.task == task && s.burst == burst && s.start >= 2 * MS).map(|s| s.cpu)
    };
    assert_eq!(first_after(1, 0), Some(1), "{:?}", runs(&r));
    assert_eq!(first_after(0, 2), Some(1), "{:?}", runs(&r));
    assert_eq!(first_after(4, 2), Some(1), "{:?}", runs(&r));
}

/// A real-time task running when the start layout is set moves when it next wakes: a FIFO task
/// runs 3 ms of every 10 ms on CPU 0 beside a fair hog on each CPU; the layout at 1 ms puts it on
/// CPU 1, and its next job (at 10 ms) runs there.
#[test]
fn a_running_real_time_task_takes_the_start_layout_at_its_next_wake_up() {
    use schedlab_sim::policies::linux::start_layout::StartLayout;
    let mut fifo = class("fifo", 50, TaskSpec::cpu("fifo", 0, 3 * MS));
    (fifo.jobs, fifo.period, fifo.start_cpu) = (3, Some(10 * MS), Some(0));
    let hogs = [0, 1].map(|c| pinned(TaskSpec::cpu("hog", 0, 40 * MS), c));
    let w = Workload { cpus: Some(2), tasks: [vec![fifo], hogs.to_vec()].concat() };
    let cfg = SimConfig { cpus: 2, tick: Some(4 * MS), record_slices: true, ..SimConfig::default() };
    let layout = StartLayout { at: MS, cpus: vec![(0, 1)] };
    let mut linux = schedlab_sim::policies::linux_by_spec("linux").unwrap().with_start_layout(layout);
    let r = simulate(&w, &mut linux, &cfg);
    assert_eq!(linux.start_layout_moves(), &[(0, 0, 1)]);
    let cpus: Vec<(u64, usize)> = r.slices.iter().filter(|s| s.task == 0).map(|s| (s.start / MS, s.cpu)).collect();
    assert_eq!(cpus.first(), Some(&(0, 0)), "the first job where it started: {cpus:?}");
    assert!(cpus.iter().filter(|(ms, _)| *ms >= 10).all(|&(_, c)| c == 1), "later jobs on CPU 1: {cpus:?}");
    assert!(cpus.iter().any(|(ms, _)| *ms >= 10), "{cpus:?}");
}
