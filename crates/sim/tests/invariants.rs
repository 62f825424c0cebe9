//! Property tests over random workloads, for every policy, with one global queue and with
//! per-CPU queues, with and without a scheduler tick: no task runs before its (job's) release or
//! during its I/O; a CPU runs one task at a time and a task runs on one CPU at a time; every CPU
//! burst is served exactly; no CPU idles while a runnable task allowed on it waits, unless the
//! policy holds that task back on purpose (`Policy::throttled`: a deadline task out of runtime);
//! and the host keeps the policy call protocol (see `protocol`). Some tasks wait for wake-ups
//! from others (given partway through their bursts): a burst after such a wait starts no earlier
//! than the wake-up that ends it. Some are forked by an earlier task: they arrive where their
//! parent reaches the fork, never before, and the fork ends none of their waits.

mod protocol;

use proptest::prelude::*;
use protocol::Checked;
use schedlab_sim::engine::{simulate, simulate_per_cpu, SimConfig, SimResult};
use schedlab_sim::metrics;
use schedlab_sim::policies::{by_spec, CATALOGUE};
use schedlab_sim::workload::{BurstPoint, JobPhase, LockUse, RareFields, TaskSpec, WakeUp, Workload};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

const US: u64 = 1_000;

fn task_strategy(cpus: usize) -> impl Strategy<Value = TaskSpec> {
    (
        0u64..40_000,
        prop::collection::vec((1u64..15_000, 0u64..8_000), 1..4),
        0i32..5,
        1u32..6,
        -5i32..6,
        prop::option::of(1u64..60_000),
        prop::option::weighted(0.2, (10_000u64..40_000, 2u32..4)),
        prop::option::weighted(0.3, prop::collection::btree_set(0..cpus, 1..=cpus)),
        prop::option::weighted(0.2, 0usize..2),
        prop::sample::select(vec![
            None,
            Some("0"),
            Some("1"),
            Some("fifo"),
            Some("rr"),
            Some("deadline"),
            Some("realtime"),
            Some("batch"),
            Some("idle"),
        ]),
        prop::option::weighted(0.3, 50u64..20_000),
        prop::bool::weighted(0.5),
    )
        .prop_map(
            move |(arr, bursts, prio, weight, nice, deadline, periodic, aff, lock, class, runtime, phased)| {
                let mut b = vec![];
                for (i, (cpu, io)) in bursts.iter().enumerate() {
                    if i > 0 {
                        b.push(io * US / 1_000 * 1_000);
                    }
                    b.push(*cpu * US);
                }
                let (period, jobs) = match periodic {
                    Some((p, j)) => (Some(p * US), j),
                    None => (None, 1),
                };
                let n_cpu = b.len().div_ceil(2);
                let b_first: schedlab_sim::workload::Bursts = b.clone().into();
                // Some tasks allowed on several CPUs are held instead: each burst on one of them.
                let held = phased && aff.as_ref().is_some_and(|a| a.len() > 1);
                let burst_cpus: Vec<usize> = match (&aff, held) {
                    (Some(a), true) => a.iter().copied().cycle().skip(arr as usize % a.len()).take(n_cpu).collect(),
                    _ => Vec::new(),
                };
                let aff = aff.filter(|_| !held);
                // A held task of one job wakes when it did "live": here where each block would end
                // if it ran at once, which a busy model passes and an idle one does not reach.
                let block_ends: Vec<u64> = if held && jobs == 1 {
                    let mut at = arr * US;
                    b.iter()
                        .enumerate()
                        .filter_map(|(k, &d)| {
                            at += d;
                            (k % 2 == 1).then_some(at)
                        })
                        .collect()
                } else {
                    Vec::new()
                };
                TaskSpec {
                    name: "".into(),
                    arrival: arr * US,
                    bursts: b.into(),
                    priority: prio,
                    weight,
                    nice,
                    jobs,
                    ..TaskSpec::default()
                }
                .with(RareFields {
                    deadline: deadline.map(|d| d * US),
                    period,
                    runtime: runtime.map(|r| r * US),
                    affinity: aff.map(|s| s.into_iter().collect()),
                    class: class.map(str::to_string),
                    locks: lock
                        .map(|l| vec![LockUse { name: format!("L{l}"), burst: l.min(n_cpu - 1) }])
                        .unwrap_or_default(),
                    wakes: Vec::new(),
                    until_woken: Vec::new(),
                    runtime_reads: Vec::new(),
                    start_cpu: None,
                    burst_cpus,
                    block_ends,
                    forked_by: None,
                    // A periodic task without locks: its first job as drawn, the rest reversed.
                    job_phases: if phased && jobs > 1 && lock.is_none() {
                        let first = JobPhase { jobs: 1, bursts: b_first.clone() };
                        vec![first, JobPhase { jobs: jobs - 1, bursts: b_first.iter().rev().copied().collect() }]
                    } else {
                        vec![]
                    },
                })
            },
        )
}

/// Pseudo-random numbers below `n` from `seed` (xorshift): the wake-ups and forks a proptest
/// seed gives are reproducible.
fn below(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut x = seed | 1;
    move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n.max(1)
    }
}

/// Let some blocked intervals wait for wake-ups from tasks earlier in the list (so no task waits
/// for one that waits for it: every wait is woken in the end), one wake-up per wait, at random
/// points of the waker's bursts. Single-job tasks only (a wait is counted per job).
fn add_wakes(tasks: &mut [TaskSpec], seed: u64) {
    let mut next = below(seed);
    for i in 1..tasks.len() {
        let n_io = tasks[i].bursts.len() / 2;
        for io in 0..n_io {
            let wakers: Vec<usize> = (0..i).filter(|&j| tasks[j].jobs == 1).collect();
            if tasks[i].jobs != 1 || wakers.is_empty() || next(2) == 0 {
                continue;
            }
            let j = wakers[next(wakers.len() as u64) as usize];
            let burst = next(tasks[j].bursts.len().div_ceil(2) as u64) as usize;
            let at = next(tasks[j].bursts[2 * burst] + 1);
            tasks[i].until_woken.push(io);
            tasks[j].wakes.push(WakeUp { burst, at, task: i });
            tasks[j].wakes.sort_by_key(|w| (w.burst, w.at));
        }
        // Reads of its CPU clock here and there (points where an expired slice ends); not in a
        // task whose jobs differ (a point names a burst of every job).
        if !tasks[i].job_phases.is_empty() {
            continue;
        }
        for b in 0..tasks[i].bursts.len().div_ceil(2) {
            for _ in 0..next(3) {
                let at = next(tasks[i].bursts[2 * b] + 1);
                tasks[i].runtime_reads.push(BurstPoint { burst: b, at });
            }
        }
        tasks[i].runtime_reads.sort_by_key(|p| (p.burst, p.at));
    }
}

/// Let some single-job tasks be forked by an earlier single-job task (so no fork cycle), at a
/// random point of the parent's bursts no later than any other wake-up it gives the child: the
/// parent's first wake-up naming the child is its fork.
fn add_forks(tasks: &mut [TaskSpec], seed: u64) {
    let mut next = below(seed.rotate_left(29));
    for i in 1..tasks.len() {
        let parents: Vec<usize> = (0..i).filter(|&j| tasks[j].jobs == 1 && tasks[j].period.is_none()).collect();
        let forkable = tasks[i].jobs == 1 && tasks[i].period.is_none() && tasks[i].job_phases.is_empty();
        if !forkable || parents.is_empty() || next(3) != 0 {
            continue;
        }
        let j = parents[next(parents.len() as u64) as usize];
        let burst = next(tasks[j].bursts.len().div_ceil(2) as u64) as usize;
        let at = next(tasks[j].bursts[2 * burst] + 1);
        let earliest = tasks[j].wakes.iter().filter(|w| w.task == i).map(|w| (w.burst, w.at)).min();
        let (burst, at) = earliest.map_or((burst, at), |e| e.min((burst, at)));
        // Before any wake-up at the same point: the first entry naming the child is the fork.
        let pos = tasks[j].wakes.iter().position(|w| (w.burst, w.at) >= (burst, at)).unwrap_or(tasks[j].wakes.len());
        tasks[j].wakes.insert(pos, WakeUp { burst, at, task: i });
        tasks[i].forked_by = Some(j);
    }
}

/// A workload, its CPUs, a context-switch cost and a scheduler tick (None = exact slice ends).
fn workload_strategy() -> impl Strategy<Value = (Workload, usize, u64, Option<u64>)> {
    (1usize..4, prop::sample::select(vec![0u64, 0, 50 * US]), prop::sample::select(vec![None, None, Some(1_000 * US)]))
        .prop_flat_map(|(cpus, cost, tick)| {
            (
                prop::collection::vec(task_strategy(cpus), 1..9),
                Just(cpus),
                Just(cost),
                Just(tick),
                prop::option::weighted(0.5, any::<u64>()),
            )
        })
        .prop_map(|(mut tasks, cpus, cost, tick, wakes)| {
            for (i, t) in tasks.iter_mut().enumerate() {
                t.name = format!("T{i}").into();
            }
            if let Some(seed) = wakes {
                add_wakes(&mut tasks, seed);
                add_forks(&mut tasks, seed);
            }
            (Workload { cpus: Some(cpus), tasks }, cpus, cost, tick)
        })
}

/// When each task's wake-ups came, in order: the time its waker had run `at` into the burst;
/// and when each forked task was forked (its parent's first wake-up naming it, apart).
type WakeTimes = (HashMap<usize, Vec<u64>>, HashMap<usize, u64>);

fn wake_times(w: &Workload, r: &SimResult) -> Result<WakeTimes, String> {
    let mut out: HashMap<usize, Vec<u64>> = HashMap::new();
    let mut forks: HashMap<usize, u64> = HashMap::new();
    for (i, t) in w.tasks.iter().enumerate() {
        let mut forked: Vec<usize> = Vec::new();
        for wk in &t.wakes {
            let mut runs: Vec<(u64, u64)> = r
                .slices
                .iter()
                .filter(|s| s.task == i && s.job == 0 && s.burst as usize == 2 * wk.burst)
                .map(|s| (s.start, s.end))
                .collect();
            runs.sort();
            let (mut done, mut at) = (0, None);
            for (a, b) in runs {
                if done + (b - a) >= wk.at {
                    at = Some(a + (wk.at - done));
                    break;
                }
                done += b - a;
            }
            let at = at.ok_or_else(|| format!("{} never reached its wake-up {wk:?}", t.name))?;
            if w.tasks[wk.task].forked_by == Some(i) && !forked.contains(&wk.task) {
                forked.push(wk.task);
                forks.insert(wk.task, at);
            } else {
                out.entry(wk.task).or_default().push(at);
            }
        }
    }
    for v in out.values_mut() {
        v.sort();
    }
    Ok((out, forks))
}

/// Check every invariant on a finished run; Err says which and where.
fn check(w: &Workload, r: &SimResult) -> Result<(), String> {
    if r.idle_violations != 0 {
        return Err(format!("{} instants with an idle CPU while an allowed task waited", r.idle_violations));
    }
    let mut served: HashMap<(usize, u32, u32), u64> = HashMap::new();
    let mut first: HashMap<(usize, u32, u32), u64> = HashMap::new();
    let mut last: HashMap<(usize, u32, u32), u64> = HashMap::new();
    for s in &r.slices {
        let t = &w.tasks[s.task];
        if s.end <= s.start {
            return Err(format!("empty slice {s:?}"));
        }
        let release = t.arrival + s.job as u64 * t.period.unwrap_or(0);
        let release = if t.forked_by.is_some() { r.tasks[s.task].arrival } else { release };
        if s.start < release {
            return Err(format!("{} ran at {} before its release {}", t.name, s.start, release));
        }
        if let Some(a) = t.cpus_of_burst(s.burst as usize / 2) {
            if !a.contains(&s.cpu) {
                return Err(format!("{} ran on CPU {} outside its affinity (burst {})", t.name, s.cpu, s.burst));
            }
        }
        *served.entry((s.task, s.job, s.burst)).or_default() += s.end - s.start;
        let f = first.entry((s.task, s.job, s.burst)).or_insert(s.start);
        *f = (*f).min(s.start);
        let l = last.entry((s.task, s.job, s.burst)).or_insert(s.end);
        *l = (*l).max(s.end);
    }
    let (wakes, forks) = wake_times(w, r)?;
    for (i, t) in w.tasks.iter().enumerate() {
        if r.tasks[i].finish.is_none() {
            return Err(format!("{} never finished", t.name));
        }
        if t.forked_by.is_some() && forks.get(&i) != Some(&r.tasks[i].arrival) {
            return Err(format!("{} arrived at {}, forked at {:?}", t.name, r.tasks[i].arrival, forks.get(&i)));
        }
        for job in 0..t.jobs {
            let bursts = t.job_bursts(job);
            for b in (0..bursts.len()).step_by(2) {
                let got = served.get(&(i, job, b as u32)).copied().unwrap_or(0);
                if got != bursts[b] {
                    return Err(format!("{} job {job} burst {b}: served {got}, wanted {}", t.name, bursts[b]));
                }
                if b >= 2 {
                    let io = b / 2 - 1;
                    let io_end = match t.until_woken.iter().position(|&k| k == io) {
                        // The n-th wait is ended by the n-th wake-up, or ran on through it.
                        Some(n) => {
                            let woken = wakes.get(&i).and_then(|v| v.get(n)).copied();
                            let woken = woken.ok_or_else(|| format!("{} wait {n}: no wake-up", t.name))?;
                            woken.max(last[&(i, job, b as u32 - 2)])
                        }
                        None => {
                            let began = last[&(i, job, b as u32 - 2)];
                            began + t.block_length(io, began, bursts[b - 1])
                        }
                    };
                    if first[&(i, job, b as u32)] < io_end {
                        return Err(format!("{} job {job} ran burst {b} during its I/O (before {io_end})", t.name));
                    }
                }
            }
        }
    }
    // One task per CPU at a time, and one CPU per task at a time.
    let mut by_cpu: HashMap<usize, Vec<(u64, u64)>> = HashMap::new();
    let mut by_task: HashMap<usize, Vec<(u64, u64)>> = HashMap::new();
    for s in &r.slices {
        by_cpu.entry(s.cpu).or_default().push((s.start, s.end));
        by_task.entry(s.task).or_default().push((s.start, s.end));
    }
    for (what, map) in [("CPU", by_cpu), ("task", by_task)] {
        for (k, mut v) in map {
            v.sort();
            if let Some(p) = v.windows(2).find(|p| p[1].0 < p[0].1) {
                return Err(format!("{what} {k}: overlapping runs {:?} and {:?}", p[0], p[1]));
            }
        }
    }
    Ok(())
}

fn specs() -> Vec<String> {
    let mut v: Vec<String> = CATALOGUE.iter().map(|(s, _, _)| s.to_string()).collect();
    v.push("mlq:queues=rr/quantum=2ms+srtf+fcfs".into());
    v.push("prio-preempt:aging=5ms,quantum=3ms".into());
    v.push("mlfq:levels=4,quantum=1ms,boost=20ms".into());
    v.push("rr:quantum=0.5ms".into());
    v.push("eevdf:run_to_parity=0,delay_dequeue=0,place_lag=0,place_deadline_initial=0".into());
    v.push("eevdf:preempt_short=0,delay_zero=0,place_rel_deadline=0,wakeup_preemption=0,base_slice=0.3ms".into());
    v.push("mlq:queues=eevdf+rr".into());
    // Short RT windows and RR slices, so that throttling happens within these short workloads.
    v.push("linux:rt_runtime=20ms,rt_period=30ms,rr_quantum=2ms,run_to_parity=0".into());
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_policy_keeps_the_invariants((w, cpus, cost, tick) in workload_strategy()) {
        for spec in specs() {
            let cfg = SimConfig { cpus, switch_cost: cost, tick, check_invariants: true, ..SimConfig::default() };
            let calls = Arc::new(Mutex::new(Vec::new()));
            let mut p = Checked::new(by_spec(&spec).unwrap(), calls.clone());
            let r = simulate(&w, &mut p, &cfg);
            prop_assert!(check(&w, &r).is_ok(), "{spec} (global, {cpus} CPUs): {}", check(&w, &r).unwrap_err());
            prop_assert!(calls.lock().unwrap().is_empty(), "{spec} (global): protocol {:?}", calls.lock().unwrap());
            prop_assert!(p.leftovers().is_empty(), "{spec} (global): left in the queue {:?}", p.leftovers());
            // The engine's running totals agree with the metrics of its own per-task records, and
            // a run without per-task records computes the same overall metrics.
            prop_assert_eq!(&r.overall, &metrics::overall(&r.tasks, cpus, r.overall.makespan));
            let mut p = by_spec(&spec).unwrap();
            let totals = simulate(&w, p.as_mut(), &SimConfig { task_results: false, ..cfg.clone() });
            prop_assert!(totals.tasks.is_empty());
            prop_assert_eq!((&totals.overall, totals.events), (&r.overall, r.events));
            let mut per: Vec<Box<dyn schedlab_sim::Policy>> =
                (0..cpus).map(|_| Box::new(Checked::new(by_spec(&spec).unwrap(), calls.clone())) as _).collect();
            let r = simulate_per_cpu(&w, &mut per, &cfg);
            prop_assert!(check(&w, &r).is_ok(), "{spec} (per-CPU, {cpus} CPUs): {}", check(&w, &r).unwrap_err());
            prop_assert!(calls.lock().unwrap().is_empty(), "{spec} (per-CPU): protocol {:?}", calls.lock().unwrap());
        }
    }
}

/// The generator covers what the invariants are about: wake-ups between tasks and forks (a
/// child arriving at its parent's first wake-up naming it).
#[test]
fn the_generator_makes_wake_ups_and_forks() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut woken, mut forked) = (0, 0);
    for _ in 0..200 {
        let (w, ..) = proptest::strategy::ValueTree::current(&workload_strategy().new_tree(&mut runner).unwrap());
        woken += usize::from(w.tasks.iter().any(|t| !t.until_woken.is_empty()));
        forked += usize::from(
            w.tasks
                .iter()
                .enumerate()
                .any(|(i, t)| t.forked_by.is_some_and(|p| p < i && w.tasks[p].wakes.iter().any(|k| k.task == i))),
        );
    }
    assert!(woken >= 20 && forked >= 20, "{woken} of 200 workloads with wake-ups, {forked} with forks");
}

/// One CPU, tasks of one CPU burst (some of none, some with a deadline), arrivals in id order
/// or not: what the engine runs in its plain form.
fn plain_workload_strategy() -> impl Strategy<Value = Workload> {
    let task = (0u64..40_000, 0u64..15_000, 0i32..5, 0u32..6, -5i32..6, prop::option::weighted(0.2, 1u64..20_000));
    (prop::collection::vec(task, 1..40), any::<bool>()).prop_map(|(tasks, sorted)| {
        let mut tasks: Vec<TaskSpec> = tasks
            .into_iter()
            .enumerate()
            .map(|(i, (arr, burst, priority, weight, nice, deadline))| {
                let mut t =
                    TaskSpec { priority, weight, nice, ..TaskSpec::cpu(&format!("T{i}"), arr * US, burst * US) };
                if let Some(d) = deadline {
                    t.deadline = Some(d * US);
                }
                t
            })
            .collect();
        if sorted {
            tasks.sort_by_key(|t| t.arrival);
        }
        Workload { cpus: Some(1), tasks }
    })
}

/// What a plain run may ask besides its workload: a switch cost, a horizon, per-task results.
fn plain_config_strategy() -> impl Strategy<Value = SimConfig> {
    (prop::sample::select(vec![0u64, 1, 300 * US]), prop::option::weighted(0.3, 0u64..300_000), any::<bool>()).prop_map(
        |(switch_cost, horizon, task_results)| SimConfig {
            switch_cost,
            horizon: horizon.map(|h| h * US),
            task_results,
            record_slices: false,
            ..SimConfig::default()
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Plain runs of policies that never pre-empt take the plain engine unless invariants are
    /// checked; both engines must give the same result, field for field.
    #[test]
    fn the_plain_engine_agrees_with_the_general_one(w in plain_workload_strategy(), cfg in plain_config_strategy()) {
        for spec in specs() {
            let plain = simulate(&w, by_spec(&spec).unwrap().as_mut(), &cfg);
            let general_cfg = SimConfig { check_invariants: true, ..cfg.clone() };
            let general = simulate(&w, by_spec(&spec).unwrap().as_mut(), &general_cfg);
            prop_assert_eq!(&plain, &general, "{}", spec);
        }
    }
}

#[test]
fn a_broken_run_is_caught() {
    // The checker itself must fail on a wrong result: shorten one slice.
    let w = Workload { cpus: Some(1), tasks: vec![TaskSpec::cpu("a", 0, 5_000_000)] };
    let mut p = by_spec("fcfs").unwrap();
    let mut r = simulate(&w, p.as_mut(), &SimConfig::default());
    assert!(check(&w, &r).is_ok());
    r.slices[0].end -= 1;
    assert!(check(&w, &r).unwrap_err().contains("served"));
}

/// A policy that never runs anything: the idle check must notice.
struct Lazy(Vec<usize>);

impl schedlab_sim::Policy for Lazy {
    fn name(&self) -> String {
        "lazy".into()
    }
    fn enqueue(&mut self, t: &schedlab_sim::TaskView, _: schedlab_sim::EnqueueReason, _: u64) {
        self.0.push(t.id);
    }
    fn dequeue(&mut self, _: usize) {}
    fn pick_next(&mut self, _: usize, _: u64) -> Option<schedlab_sim::Pick> {
        None
    }
    fn charge(&mut self, _: usize, _: u64, _: u64) {}
    fn queued(&self) -> usize {
        self.0.len()
    }
}

#[test]
fn an_idling_policy_is_caught() {
    let w = Workload { cpus: Some(1), tasks: vec![TaskSpec::cpu("a", 0, 5_000_000)] };
    let r = simulate(&w, &mut Lazy(vec![]), &SimConfig { check_invariants: true, ..SimConfig::default() });
    assert!(r.idle_violations > 0);
    assert!(check(&w, &r).is_err());
}

#[test]
fn the_protocol_check_catches_a_host_that_breaks_the_protocol() {
    // The negative control for `Checked`: a host that keeps the protocol leaves no violation;
    // each broken call sequence below leaves one that names the offending call.
    use schedlab_sim::{EnqueueReason::New, Policy, TaskView};
    type Steps = fn(&mut Checked);
    let kept: Steps = |p| {
        p.enqueue(&TaskView::new(0), New, 0);
        let pick = p.pick_next(0, 0).unwrap();
        p.charge(pick.task, 5, 5);
        p.task_exit(0);
    };
    let broken: [(&str, Steps); 6] = [
        ("enqueue", |p| (0..2).for_each(|_| p.enqueue(&TaskView::new(0), New, 0))),
        ("enqueue", |p| {
            p.enqueue(&TaskView::new(0), New, 0);
            p.pick_next(0, 0);
            p.enqueue(&TaskView::new(0), New, 1); // re-queued without the charge
        }),
        ("charge", |p| p.charge(0, 5, 5)),
        ("blocked", |p| {
            p.enqueue(&TaskView::new(0), New, 0);
            p.blocked(0, 1);
        }),
        ("task_exit", |p| {
            p.enqueue(&TaskView::new(0), New, 0);
            p.task_exit(0);
        }),
        ("prio_changed", |p| {
            p.enqueue(&TaskView::new(0), New, 0);
            p.prio_changed(&TaskView::new(0), 1);
        }),
    ];
    let calls = Arc::new(Mutex::new(Vec::new()));
    let mut p = Checked::new(by_spec("fcfs").unwrap(), calls.clone());
    kept(&mut p);
    assert!(calls.lock().unwrap().is_empty() && p.leftovers().is_empty(), "{:?}", calls.lock().unwrap());
    for (call, steps) in broken {
        let calls = Arc::new(Mutex::new(Vec::new()));
        steps(&mut Checked::new(by_spec("fcfs").unwrap(), calls.clone()));
        let seen = calls.lock().unwrap();
        assert!(seen.iter().any(|v| v.starts_with(call)), "{call}: {seen:?}");
    }
    let mut left = Checked::new(by_spec("fcfs").unwrap(), calls.clone());
    left.enqueue(&TaskView::new(3), New, 0);
    assert_eq!(left.leftovers(), vec![(3, "Queued".to_string())], "a task the host never ran is left over");
}
