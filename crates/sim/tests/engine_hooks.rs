//! The engine's hooks for kernel-like policies: a scheduler tick that delays slice expiries to
//! tick boundaries, `Policy::blocked` where a task blocks, and policy timers (`next_timer`,
//! `timer`, `preempt_current`, `throttled`).

use schedlab_sim::engine::{simulate, SimConfig, WakeDelays};
use schedlab_sim::policies::{by_spec, RoundRobin};
use schedlab_sim::workload::{BurstPoint, LockUse, TaskSpec, WakeUp, Workload};
use schedlab_sim::{CpuId, Dur, EnqueueReason, Pick, Policy, TaskId, TaskView, Time};
use std::collections::VecDeque;

const MS: u64 = 1_000_000;

fn hogs(n: usize, burst: u64) -> Workload {
    Workload { cpus: Some(1), tasks: (0..n).map(|i| TaskSpec::cpu(&format!("h{i}"), 0, burst)).collect() }
}

#[test]
fn a_tick_delays_slice_expiry_to_the_next_boundary_but_not_a_burst_end() {
    // rr with a 1 ms quantum and a 4 ms tick: the expired quantum is noticed at 4, 8, ... ms.
    let w = hogs(2, 10 * MS);
    let r = simulate(&w, &mut RoundRobin::new(MS), &SimConfig { tick: Some(4 * MS), ..SimConfig::default() });
    let spans: Vec<(TaskId, u64, u64)> = r.slices.iter().map(|s| (s.task, s.start / MS, s.end / MS)).collect();
    // h0 0-4, h1 4-8, h0 8-12, h1 12-16, h0 16-18 (burst ends mid-tick: at once), h1 18-20.
    assert_eq!(spans, vec![(0, 0, 4), (1, 4, 8), (0, 8, 12), (1, 12, 16), (0, 16, 18), (1, 18, 20)]);
    // Without a tick the quantum is exact.
    let r = simulate(&w, &mut RoundRobin::new(MS), &SimConfig::default());
    assert_eq!(r.slices[0].end, MS);
    assert_eq!(r.slices.len(), 20);
    // A slice that expires exactly on a boundary stops there.
    let r = simulate(&w, &mut RoundRobin::new(4 * MS), &SimConfig { tick: Some(2 * MS), ..SimConfig::default() });
    assert_eq!(r.slices[0].end, 4 * MS);
}

#[test]
fn a_read_of_its_cpu_clock_ends_an_expired_slice_before_the_tick() {
    // rr, 1 ms quantum, 4 ms tick: h0 reads its CPU clock 2.5 ms and 3 ms into its burst; its
    // slice expired at 1 ms, so the kernel acts at the first read (2.5 ms), not the tick (4 ms).
    let mut w = hogs(2, 10 * MS);
    w.tasks[0].runtime_reads = vec![BurstPoint { burst: 0, at: 5 * MS / 2 }, BurstPoint { burst: 0, at: 3 * MS }];
    let r = simulate(&w, &mut RoundRobin::new(MS), &SimConfig { tick: Some(4 * MS), ..SimConfig::default() });
    let spans: Vec<(TaskId, u64, u64)> =
        r.slices.iter().map(|s| (s.task, s.start / 100_000, s.end / 100_000)).collect();
    // h0 0–2.5 (its read), h1 2.5–4 (no reads: the tick after its expiry at 3.5), h0 4–8 (its
    // slice expires at 5 with 3.5 ms done; its last read, at 3 ms, is behind it: the tick).
    assert_eq!(spans[..3], [(0, 0, 25), (1, 25, 40), (0, 40, 80)]);
    // A read before the slice expires changes nothing; without a tick reads do not matter.
    let mut early = hogs(2, 10 * MS);
    early.tasks[0].runtime_reads = vec![BurstPoint { burst: 0, at: MS / 2 }];
    let r = simulate(&early, &mut RoundRobin::new(MS), &SimConfig { tick: Some(4 * MS), ..SimConfig::default() });
    assert_eq!(r.slices[0].end, 4 * MS);
    let r = simulate(&w, &mut RoundRobin::new(MS), &SimConfig::default());
    assert_eq!(r.slices[0].end, MS);
}

#[test]
fn a_wake_up_onto_an_idle_cpu_waits_for_it_and_a_pre_empting_one_lets_the_victim_run_on() {
    const US: u64 = 1_000;
    let cfg = SimConfig {
        wake: WakeDelays { idle: (10 * US).into(), preempt: (7 * US).into(), ..WakeDelays::default() },
        ..SimConfig::default()
    };
    // Alone: it wakes at 3 ms onto its idle CPU and starts 10 µs later; its first start (an
    // arrival, not a wake-up) pays nothing.
    let mut sleeper = TaskSpec::cpu("sleeper", 0, MS);
    sleeper.bursts = vec![MS, 2 * MS, MS].into();
    let w = Workload { cpus: Some(1), tasks: vec![sleeper.clone()] };
    let r = simulate(&w, &mut RoundRobin::new(4 * MS), &cfg);
    let starts: Vec<u64> = r.slices.iter().map(|s| s.start).collect();
    assert_eq!(starts, vec![0, 3 * MS + 10 * US]);
    // Beside a hog of lower priority under pre-emptive priority: the wake-up at 3 ms pre-empts
    // the hog, which runs on for 7 µs (the interrupt's time is its time); the sleeper starts then.
    sleeper.priority = 0;
    let mut hog = TaskSpec::cpu("hog", 0, 20 * MS);
    hog.priority = 5;
    let w = Workload { cpus: Some(1), tasks: vec![sleeper, hog] };
    let mut prio = by_spec("prio-preempt").unwrap();
    let r = simulate(&w, prio.as_mut(), &cfg);
    let second = r.slices.iter().filter(|s| s.task == 0).nth(1).expect("a second run");
    assert_eq!(second.start, 3 * MS + 7 * US);
    let hog_first = r.slices.iter().find(|s| s.task == 1).unwrap();
    assert_eq!((hog_first.start, hog_first.end), (MS, 3 * MS + 7 * US), "no dead time: the hog ran on");
    assert_eq!(r.tasks[1].preemptions, 1);
    // Without delays (the default) it starts at the wake-up.
    let r = simulate(&w, by_spec("prio-preempt").unwrap().as_mut(), &SimConfig::default());
    assert_eq!(r.slices.iter().filter(|s| s.task == 0).nth(1).unwrap().start, 3 * MS);
    // A task of a real-time class takes the RT delay when one is given; others keep `preempt`.
    let rt_cfg = SimConfig { wake: WakeDelays { preempt_rt: Some((9 * US).into()), ..cfg.wake }, ..cfg.clone() };
    let r = simulate(&w, by_spec("prio-preempt").unwrap().as_mut(), &rt_cfg);
    assert_eq!(r.slices.iter().filter(|s| s.task == 0).nth(1).unwrap().start, 3 * MS + 7 * US);
    let mut rt = w.clone();
    rt.tasks[0].class = Some("fifo".into());
    let r = simulate(&rt, by_spec("prio-preempt").unwrap().as_mut(), &rt_cfg);
    assert_eq!(r.slices.iter().filter(|s| s.task == 0).nth(1).unwrap().start, 3 * MS + 9 * US);
}

/// A ping-pong pair: `ping` runs 1 ms, wakes `pong` at the end of the burst and waits to be
/// woken; `pong` answers the same way. Bursts in ms.
fn ping_pong() -> Workload {
    let mut ping = TaskSpec::cpu("ping", 0, MS);
    ping.bursts = vec![MS, 0, MS, 0, MS].into();
    ping.until_woken = vec![0, 1];
    ping.wakes = (0..3).map(|b| WakeUp { burst: b, at: MS, task: 1 }).collect();
    let mut pong = TaskSpec::cpu("pong", 0, MS);
    pong.bursts = vec![10_000, 0, MS, 0, MS, 0, MS].into();
    pong.until_woken = vec![0, 1, 2];
    pong.wakes = vec![WakeUp { burst: 1, at: MS, task: 0 }, WakeUp { burst: 2, at: MS, task: 0 }];
    Workload { cpus: Some(1), tasks: vec![ping, pong] }
}

#[test]
fn tasks_wake_each_other_and_a_wake_up_that_comes_early_is_kept() {
    let w = ping_pong();
    let r = simulate(&w, by_spec("fcfs").unwrap().as_mut(), &SimConfig::default());
    let us = |t: u64| t / 1_000;
    let runs: Vec<(TaskId, u64, u64)> = r.slices.iter().map(|s| (s.task, us(s.start), us(s.end))).collect();
    // ping 0–1000 µs wakes pong, which has not run yet: the wake-up is kept, so after its first
    // 10 µs pong runs straight on into its next burst (no block, no switch), wakes ping at its
    // end and waits; and so on.
    assert_eq!(
        runs,
        vec![
            (0, 0, 1000),
            (1, 1000, 1010),
            (1, 1010, 2010),
            (0, 2010, 3010),
            (1, 3010, 4010),
            (0, 4010, 5010),
            (1, 5010, 6010)
        ]
    );
    assert_eq!(r.tasks[1].context_switches, 3, "running on through a kept wake-up is not a switch");
    assert_eq!(r.tasks[0].finish, Some(5010 * 1_000));
    assert_eq!(r.tasks[1].finish, Some(6010 * 1_000));
    let waits: Vec<(TaskId, u64, u64)> =
        r.blocked.iter().filter(|b| b.what == "wait").map(|b| (b.task, us(b.start), us(b.end))).collect();
    assert_eq!(waits, vec![(0, 1000, 2010), (1, 2010, 3010), (0, 3010, 4010), (1, 4010, 5010)]);
}

#[test]
fn a_wake_up_partway_through_a_burst_pre_empts_after_the_wakers_delay() {
    const US: u64 = 1_000;
    // A low-priority task wakes a high-priority one 2 ms into its 10 ms burst; the woken task
    // pre-empts it 5 µs later (the waker's return from its system call) and runs 1 ms.
    let mut waker = TaskSpec::cpu("waker", 0, 10 * MS);
    waker.priority = 5;
    waker.wakes = vec![WakeUp { burst: 0, at: 2 * MS, task: 1 }];
    let mut woken = TaskSpec::cpu("woken", 0, MS);
    woken.bursts = vec![1, 0, MS].into();
    woken.until_woken = vec![0];
    let w = Workload { cpus: Some(1), tasks: vec![waker, woken] };
    let cfg = SimConfig {
        wake: WakeDelays { task_preempt: (5 * US).into(), ..WakeDelays::default() },
        ..SimConfig::default()
    };
    let r = simulate(&w, by_spec("prio-preempt").unwrap().as_mut(), &cfg);
    let runs: Vec<(TaskId, u64, u64)> = r.slices.iter().map(|s| (s.task, s.start, s.end)).collect();
    // The woken task's first 1 ns burst runs first (it has the higher priority).
    assert_eq!(runs[0], (1, 0, 1));
    assert_eq!(runs[1], (0, 1, 2 * MS + 1 + 5 * US));
    assert_eq!(runs[2], (1, 2 * MS + 1 + 5 * US, 3 * MS + 1 + 5 * US));
    assert_eq!(r.tasks[0].cpu, 10 * MS, "the waker gets all its CPU time");
    // On two CPUs the woken task starts on the idle one after the remote delay instead.
    let w2 = Workload { cpus: Some(2), ..w };
    let cfg = SimConfig {
        cpus: 2,
        wake: WakeDelays { remote_idle: (50 * US).into(), ..WakeDelays::default() },
        ..SimConfig::default()
    };
    let r = simulate(&w2, by_spec("prio-preempt").unwrap().as_mut(), &cfg);
    let second = r.slices.iter().filter(|s| s.task == 1).nth(1).unwrap();
    assert_eq!(second.start, 2 * MS + 50 * US);
    assert_ne!(second.cpu, r.slices.iter().find(|s| s.task == 0).unwrap().cpu);
}

/// Records what the engine tells it; round robin underneath.
struct Recorder {
    rr: RoundRobin,
    log: Vec<String>,
    tick: Option<Option<Dur>>,
}

impl Policy for Recorder {
    fn name(&self) -> String {
        "recorder".into()
    }
    fn enqueue(&mut self, t: &TaskView, why: EnqueueReason, now: Time) {
        self.log.push(format!("enqueue {} {why:?} {}", t.id, now / MS));
        self.rr.enqueue(t, why, now);
    }
    fn dequeue(&mut self, t: TaskId) {
        self.rr.dequeue(t);
    }
    fn pick_next(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
        self.rr.pick_next(cpu, now)
    }
    fn charge(&mut self, t: TaskId, ran: Dur, now: Time) {
        self.rr.charge(t, ran, now);
    }
    fn queued(&self) -> usize {
        self.rr.queued()
    }
    fn blocked(&mut self, t: TaskId, now: Time) {
        self.log.push(format!("blocked {t} {}", now / MS));
    }
    fn task_exit(&mut self, t: TaskId) {
        self.log.push(format!("exit {t}"));
    }
    fn set_tick(&mut self, tick: Option<Dur>) {
        self.tick = Some(tick);
    }
}

#[test]
fn blocked_is_called_for_io_and_the_end_of_a_periodic_job_not_for_an_exit() {
    let w = Workload {
        cpus: Some(1),
        tasks: vec![
            // CPU 2, I/O 3, CPU 1: blocks at 2, wakes at 5.
            TaskSpec { bursts: vec![2 * MS, 3 * MS, MS].into(), ..TaskSpec::cpu("io", 0, 0) },
            // Two jobs of 1 ms, period 10: sleeps after the first job, released again at 10.
            {
                let mut t = TaskSpec { jobs: 2, ..TaskSpec::cpu("periodic", 0, MS) };
                t.period = Some(10 * MS);
                t
            },
        ],
    };
    let mut p = Recorder { rr: RoundRobin::new(100 * MS), log: vec![], tick: None };
    simulate(&w, &mut p, &SimConfig { tick: Some(MS), ..SimConfig::default() });
    assert_eq!(p.tick, Some(Some(MS)), "the tick is announced before the run");
    let blocks: Vec<&str> = p.log.iter().filter(|l| l.starts_with("blocked")).map(|l| l.as_str()).collect();
    assert_eq!(blocks, vec!["blocked 0 2", "blocked 1 3"], "{:?}", p.log);
    assert!(p.log.iter().any(|l| l == "enqueue 0 Woken 5"), "{:?}", p.log);
    assert!(p.log.iter().any(|l| l == "enqueue 1 Woken 10"), "{:?}", p.log);
    assert_eq!(p.log.iter().filter(|l| l.starts_with("exit")).count(), 2);
}

#[test]
fn a_lock_wait_blocks() {
    // prio-preempt: the waiter (priority 0) pre-empts the holder at 1 ms, is picked, finds L
    // held and blocks on it.
    let lock = vec![LockUse { name: "L".into(), burst: 0 }];
    let w = Workload {
        cpus: Some(1),
        tasks: vec![
            {
                let mut t = TaskSpec { priority: 2, ..TaskSpec::cpu("holder", 0, 4 * MS) };
                t.locks = lock.clone();
                t
            },
            {
                let mut t = TaskSpec { priority: 0, ..TaskSpec::cpu("waiter", MS, MS) };
                t.locks = lock;
                t
            },
        ],
    };
    struct Blocks(Box<dyn Policy>, Vec<(TaskId, Time)>);
    impl Policy for Blocks {
        fn name(&self) -> String {
            self.0.name()
        }
        fn enqueue(&mut self, t: &TaskView, why: EnqueueReason, now: Time) {
            self.0.enqueue(t, why, now)
        }
        fn dequeue(&mut self, t: TaskId) {
            self.0.dequeue(t)
        }
        fn pick_next(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
            self.0.pick_next(cpu, now)
        }
        fn charge(&mut self, t: TaskId, ran: Dur, now: Time) {
            self.0.charge(t, ran, now)
        }
        fn preempts(&self, w: TaskId, r: TaskId, now: Time) -> bool {
            self.0.preempts(w, r, now)
        }
        fn queued(&self) -> usize {
            self.0.queued()
        }
        fn requeue(&mut self, t: &TaskView, now: Time) {
            self.0.requeue(t, now)
        }
        fn prio_changed(&mut self, t: &TaskView, now: Time) {
            self.0.prio_changed(t, now)
        }
        fn blocked(&mut self, t: TaskId, now: Time) {
            self.1.push((t, now));
        }
    }
    let mut p = Blocks(by_spec("prio-preempt").unwrap(), vec![]);
    simulate(&w, &mut p, &SimConfig::default());
    assert_eq!(p.1, vec![(1, MS)]);
}

/// FIFO queue that keeps task 1 off the CPU until 5 ms (a throttled task), then lets it
/// displace whatever runs: a timer at 5 ms.
struct Gate {
    q: VecDeque<TaskId>,
    open_at: Time,
    open: bool,
    fired: Vec<Time>,
}

impl Policy for Gate {
    fn name(&self) -> String {
        "gate".into()
    }
    fn enqueue(&mut self, t: &TaskView, _: EnqueueReason, _: Time) {
        self.q.push_back(t.id);
    }
    fn dequeue(&mut self, t: TaskId) {
        self.q.retain(|&x| x != t);
    }
    fn pick_next(&mut self, _: CpuId, _: Time) -> Option<Pick> {
        let pos = self.q.iter().position(|&t| t != 1 || self.open)?;
        let task = self.q.remove(pos)?;
        Some(Pick { task, slice: None })
    }
    fn charge(&mut self, _: TaskId, _: Dur, _: Time) {}
    fn queued(&self) -> usize {
        self.q.len()
    }
    fn next_timer(&self) -> Option<Time> {
        (!self.open).then_some(self.open_at)
    }
    fn timer(&mut self, now: Time) {
        self.fired.push(now);
        self.open = true;
    }
    fn preempt_current(&mut self, running: TaskId, _: Time) -> bool {
        running != 1 && self.q.contains(&1)
    }
    fn throttled(&self, t: TaskId) -> bool {
        t == 1 && !self.open
    }
}

#[test]
fn a_policy_timer_fires_once_picks_for_idle_cpus_and_preempts_running_ones() {
    // Task 1 alone: the CPU idles until the gate opens at 5 ms (no idle violation: throttled).
    let w = Workload { cpus: Some(1), tasks: vec![TaskSpec::cpu("other", 50 * MS, MS), TaskSpec::cpu("gated", 0, MS)] };
    let mut g = Gate { q: VecDeque::new(), open_at: 5 * MS, open: false, fired: vec![] };
    let r = simulate(&w, &mut g, &SimConfig { check_invariants: true, ..SimConfig::default() });
    assert_eq!(g.fired, vec![5 * MS]);
    assert_eq!(r.tasks[1].finish, Some(6 * MS));
    assert_eq!(r.idle_violations, 0, "a throttled task may wait on an idle CPU");
    // Task 0 runs from 0; at 5 ms the timer pre-empts it for task 1.
    let w = Workload { cpus: Some(1), tasks: vec![TaskSpec::cpu("other", 0, 10 * MS), TaskSpec::cpu("gated", 0, MS)] };
    let mut g = Gate { q: VecDeque::new(), open_at: 5 * MS, open: false, fired: vec![] };
    let r = simulate(&w, &mut g, &SimConfig::default());
    assert_eq!(r.tasks[1].finish, Some(6 * MS));
    assert_eq!(r.tasks[0].preemptions, 1);
    assert_eq!(r.tasks[0].finish, Some(11 * MS));
    // The work-conservation check does count an idle CPU beside a task the policy does not
    // call throttled.
    struct Unsaid(Gate);
    impl Policy for Unsaid {
        fn name(&self) -> String {
            "unsaid".into()
        }
        fn enqueue(&mut self, t: &TaskView, why: EnqueueReason, now: Time) {
            self.0.enqueue(t, why, now)
        }
        fn dequeue(&mut self, t: TaskId) {
            self.0.dequeue(t)
        }
        fn pick_next(&mut self, cpu: CpuId, now: Time) -> Option<Pick> {
            self.0.pick_next(cpu, now)
        }
        fn charge(&mut self, _: TaskId, _: Dur, _: Time) {}
        fn queued(&self) -> usize {
            self.0.queued()
        }
        fn next_timer(&self) -> Option<Time> {
            self.0.next_timer()
        }
        fn timer(&mut self, now: Time) {
            self.0.timer(now)
        }
    }
    // Task 1 waits behind the gate while the CPU idles from 1 ms (task 0 done) to 5 ms.
    let w = Workload { cpus: Some(1), tasks: vec![TaskSpec::cpu("x", 0, MS), TaskSpec::cpu("gated", 0, MS)] };
    let mut u = Unsaid(Gate { q: VecDeque::new(), open_at: 5 * MS, open: false, fired: vec![] });
    let r = simulate(&w, &mut u, &SimConfig { check_invariants: true, ..SimConfig::default() });
    assert_eq!(r.tasks[1].finish, Some(6 * MS));
    assert!(r.idle_violations > 0);
}

#[test]
fn a_forked_task_arrives_where_its_parent_reaches_the_fork_not_at_its_recorded_time() {
    const US: u64 = 1_000;
    // A hog arrives first on one CPU and holds it for 3 ms, so the parent, arriving at 0 too,
    // starts only at 3 ms under fcfs; 1 ms into its burst it forks the child. The child's
    // recorded arrival (1 ms, when the parent forked it in the run it came from) is not when it
    // comes: it comes at 4 ms, and its response and turnaround count from there.
    let hog = TaskSpec::cpu("hog", 0, 3 * MS);
    let mut parent = TaskSpec::cpu("parent", 0, 2 * MS);
    parent.wakes = vec![WakeUp { burst: 0, at: MS, task: 2 }];
    let mut child = TaskSpec::cpu("child", MS, 500 * US);
    child.forked_by = Some(1);
    let w = Workload { cpus: Some(1), tasks: vec![hog, parent, child] };
    let r = simulate(&w, by_spec("fcfs").unwrap().as_mut(), &SimConfig::default());
    let child = &r.tasks[2];
    assert_eq!(child.arrival, 4 * MS);
    // fcfs: the parent runs its burst out (to 5 ms), then the child.
    assert_eq!(child.response, Some(MS));
    assert_eq!(child.finish, Some(5 * MS + 500 * US));
    // Without the parent's wake-up it would never arrive; the file check refuses that, and a
    // workload built in code simply leaves it unstarted.
    let mut orphan = w.clone();
    orphan.tasks[1].wakes.clear();
    let r = simulate(&orphan, by_spec("fcfs").unwrap().as_mut(), &SimConfig::default());
    assert_eq!((r.tasks[2].cpu, r.tasks[2].finish), (0, None));
}

#[test]
fn a_wake_up_before_the_fork_is_kept_for_the_childs_first_wait_not_taken_as_its_fork() {
    const US: u64 = 1_000;
    // fcfs, one CPU: hog 0–3 ms; `early` 3–3.1 ms wakes the child, which does not exist yet;
    // the parent 3.1–5.1 ms forks it 1 ms in (4.1 ms). The child arrives then, not at 3.1 ms,
    // runs 5.1–5.6 ms, and its wait for a wake-up finds early's, kept: it runs on to 5.8 ms.
    let hog = TaskSpec::cpu("hog", 0, 3 * MS);
    let mut early = TaskSpec::cpu("early", 0, 100 * US);
    early.wakes = vec![WakeUp { burst: 0, at: 100 * US, task: 3 }];
    let mut parent = TaskSpec::cpu("parent", 0, 2 * MS);
    parent.wakes = vec![WakeUp { burst: 0, at: MS, task: 3 }];
    let mut child = TaskSpec::cpu("child", MS, 0);
    child.bursts = vec![500 * US, 0, 200 * US].into();
    child.until_woken = vec![0];
    child.forked_by = Some(2);
    let w = Workload { cpus: Some(1), tasks: vec![hog, early, parent, child] };
    let r = simulate(&w, by_spec("fcfs").unwrap().as_mut(), &SimConfig::default());
    let child = &r.tasks[3];
    assert_eq!(child.arrival, 4 * MS + 100 * US);
    assert_eq!(child.finish, Some(5 * MS + 800 * US));
    assert_eq!(child.context_switches, 1, "the kept wake-up: it runs on without blocking");
}
