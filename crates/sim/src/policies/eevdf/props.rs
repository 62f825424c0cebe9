//! Properties of the run queue over random sequences of arrivals, wake-ups, runs, slice ends,
//! pre-emptions, blocks and exits on one CPU, each with a negative control: a deliberately
//! broken variant of the model (`rq::Broken`) that the property must catch.
//!
//! 1. The weighted lag sums to zero: with `V` from the queue's running sums and each `v_i` from
//!    its entity, `Σ w_i·(V − v_i)` over the entities on the queue lies in `(−W, 0]`
//!    (W = Σ w_i): `V = ⌊Σ w_i v_i / W⌋` rounds down by less than one, i.e. by less than `W` in
//!    the weighted sum. Control: `update_curr()` that forgets the sums (SumsNotUpdated).
//! 2. No pick is ineligible: the picked entity's vruntime is at most the average of the
//!    entities on the queue at that moment (`Σ w·v ≥ v·W`), unless it is the only one. In 6.18
//!    even RUN_TO_PARITY's protected current task must be eligible to be kept
//!    (`pick_eevdf()` drops an ineligible `curr` first). Control: eligibility inverted.
//! 3. Lag is kept over a sleep and clamped: a task that leaves saves `|vlag| ≤
//!    calc_delta_fair(max_slice + TICK_NSEC)`, and when it is placed again beside others its
//!    lag right after placement is the saved one within 2 ns (the inflation and the new
//!    average each round by less than 1). Control: placement without the (W + w)/W inflation.

use super::arith::Sums;
use super::rq::{Broken, FairRq, Features, State};
use crate::policy::{EnqueueReason as Why, TaskView};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

const TASKS: usize = 5;

#[derive(Debug, Clone)]
enum Op {
    /// Wake task i (or create it), with a nice value used when it is created.
    Wake(usize, i32),
    /// Let the running task run `dt` ns, then: 0 slice end, 1 pre-empted, 2 blocks, 3 exits.
    Run(u64, u8),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        (0..TASKS, -8i32..8).prop_map(|(i, n)| Op::Wake(i, n)),
        (1u64..3_000_000, 0u8..4).prop_map(|(dt, what)| Op::Run(dt, what)),
    ];
    prop::collection::vec(op, 1..120)
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Host {
    New,
    Asleep,
    Queued,
    Running,
    Gone,
}

/// What a property checks after every step.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Prop {
    LagSum,
    EligiblePicks,
    LagKept,
}

/// Drive a run queue through `ops` the way the engine does on one CPU; check `prop`.
fn check(ops: &[Op], broken: Broken, prop: Prop) -> Result<(), String> {
    let mut rq = FairRq::new(Features::default());
    rq.broken = broken;
    rq.trace = Some(Vec::new());
    let mut host = [Host::New; TASKS];
    let mut nice = [0i32; TASKS];
    let mut now = 0u64;
    let mut running: Option<usize> = None;
    let view = |i: usize, nice: i32| TaskView { nice, ..TaskView::new(i) };
    let tick_nsec = rq.f.tick_nsec;
    for op in ops {
        match *op {
            Op::Wake(i, n) => {
                if !matches!(host[i], Host::New | Host::Asleep) {
                    continue;
                }
                if host[i] == Host::New {
                    nice[i] = n;
                }
                let why = if host[i] == Host::New { Why::New } else { Why::Woken };
                let saved = rq.e(i).vlag;
                let others = rq.nr_queued() > 0 && !rq.e(i).delayed;
                rq.enqueue(&view(i, nice[i]), why, now);
                host[i] = Host::Queued;
                if prop == Prop::LagKept && why == Why::Woken && others && rq.e(i).state == State::Queued {
                    let lag = rq.avg_vruntime() - rq.e(i).vruntime;
                    if (lag - saved).abs() > 2 {
                        return Err(format!("task {i} saved lag {saved}, has {lag} after placement"));
                    }
                }
                if let Some(r) = running {
                    if rq.preempts(i, r, now) {
                        rq.charge(r, now);
                        rq.enqueue(&view(r, nice[r]), Why::Preempted, now);
                        host[r] = Host::Queued;
                        running = None;
                    }
                }
            }
            Op::Run(dt, what) => {
                let Some(r) = running else { continue };
                now += dt;
                rq.charge(r, now);
                running = None;
                match what {
                    0 | 1 => {
                        let why = if what == 0 { Why::SliceExpired } else { Why::Preempted };
                        rq.enqueue(&view(r, nice[r]), why, now);
                        host[r] = Host::Queued;
                    }
                    2 => {
                        rq.blocked(r, now);
                        host[r] = Host::Asleep;
                        let e = rq.e(r);
                        if prop == Prop::LagKept && e.state == State::Off {
                            let limit = e.load.vdelta(max_slice(&rq) + tick_nsec) as i64;
                            if e.vlag.abs() > limit {
                                return Err(format!("task {r} left with lag {} beyond {limit}", e.vlag));
                            }
                        }
                    }
                    _ => {
                        rq.exit(r);
                        host[r] = Host::Gone;
                    }
                }
            }
        }
        if running.is_none() {
            if let Some(p) = rq.pick(0, now) {
                if host[p.task] != Host::Queued {
                    return Err(format!("picked task {} that is {:?}", p.task, host[p.task]));
                }
                host[p.task] = Host::Running;
                running = Some(p.task);
            }
        }
        match prop {
            Prop::LagSum => lag_sum(&mut rq)?,
            Prop::EligiblePicks => eligible_picks(&mut rq)?,
            Prop::LagKept => {}
        }
    }
    Ok(())
}

/// The largest slice on the queue, for the lag limit (every slice here is the base slice).
fn max_slice(rq: &FairRq) -> u64 {
    rq.f.base_slice
}

fn lag_sum(rq: &mut FairRq) -> Result<(), String> {
    let on_rq = rq.on_rq();
    if on_rq.is_empty() {
        return Ok(());
    }
    let v_avg = rq.avg_vruntime() as i128;
    let w: i128 = on_rq.iter().map(|&(_, w, _)| w as i128).sum();
    let sum: i128 = on_rq.iter().map(|&(_, wi, vi)| wi as i128 * (v_avg - vi as i128)).sum();
    if sum > 0 || sum <= -w {
        return Err(format!("Σ w(V − v) = {sum} outside (−{w}, 0] for V = {v_avg} and {on_rq:?}"));
    }
    Ok(())
}

fn eligible_picks(rq: &mut FairRq) -> Result<(), String> {
    for rec in rq.trace.as_mut().expect("tracing").drain(..) {
        let mut s = Sums::default();
        for &(w, v) in &rec.on_rq {
            s.add(w, v);
        }
        if !rec.single && !s.eligible(rec.picked_vruntime) {
            return Err(format!(
                "picked {} (v {}) while ineligible among {:?}",
                rec.picked, rec.picked_vruntime, rec.on_rq
            ));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn the_weighted_lag_sums_to_zero(ops in ops()) {
        check(&ops, Broken::No, Prop::LagSum).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn no_task_is_picked_while_ineligible(ops in ops()) {
        check(&ops, Broken::No, Prop::EligiblePicks).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn lag_is_kept_over_a_sleep_and_clamped(ops in ops()) {
        check(&ops, Broken::No, Prop::LagKept).map_err(TestCaseError::fail)?;
    }
}

/// Run `prop` on a broken model over random cases: it must fail on some.
fn caught(broken: Broken, prop: Prop) -> String {
    let mut runner = TestRunner::new(Config { cases: 512, failure_persistence: None, ..Config::default() });
    match runner.run(&ops(), |ops| check(&ops, broken, prop).map_err(TestCaseError::fail)) {
        Ok(()) => panic!("{prop:?} did not catch {broken:?}"),
        Err(e) => {
            eprintln!("{prop:?} caught {broken:?}: {e}");
            e.to_string()
        }
    }
}

#[test]
fn negative_control_sums_not_updated_breaks_the_lag_sum() {
    assert!(caught(Broken::SumsNotUpdated, Prop::LagSum).contains("outside"));
}

#[test]
fn negative_control_inverted_eligibility_picks_ineligible_tasks() {
    assert!(caught(Broken::InvertedEligibility, Prop::EligiblePicks).contains("ineligible"));
}

#[test]
fn negative_control_placement_without_inflation_loses_lag() {
    assert!(caught(Broken::NoLagInflation, Prop::LagKept).contains("after placement"));
}
