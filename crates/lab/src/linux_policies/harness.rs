//! The live harness: the safety set-up of a run and one case from spawn to the last reap.
//!
//! Safety on a small machine (think of 2 cores shared with other work):
//! - Children are pinned to `--cpus`, by default every CPU but 0; the harness pins itself to
//!   the CPUs the children do not get. A SCHED_FIFO child can then never take the CPU the
//!   harness needs to reap it or kill it.
//! - From release to the last reap the harness runs SCHED_FIFO one level above the children
//!   (`--priority` + 1), so it also wins when `--cpus` includes its own CPU. It is back at its
//!   old policy (a [`SchedGuard`]) before the next case spawns, so children never inherit it.
//! - RT throttling must be on (`sched_rt_runtime_us` < period): even a runaway RT child leaves
//!   5% of its CPU to everything else.
//! - Every case is bounded by `--timeout` (spawning included): on expiry, or on Ctrl-C /
//!   SIGTERM, every child is killed and reaped ([`Batch`] also does it when dropped).

use super::case::{CaseFrame, CaseResult, ChildOutcome};
use super::params::{Params, WorkloadKind};
use super::trace::{self, SwitchEvent};
use anyhow::{bail, Context};
use schedlab_os::affinity::{self, AffinityGuard};
use schedlab_os::child::{Batch, ChildSpec, Output, ProcessHeadroom};
use schedlab_os::process::Signal;
use schedlab_os::rusage::ExitStatus;
use schedlab_os::sched::{self, LinuxPolicy, SchedGuard, SchedParams};
use schedlab_os::tracefs::Instance;
use schedlab_os::{signals, OsError};
use std::time::{Duration, Instant};

/// A prepared run: the harness is pinned and the machine has been checked.
pub struct Harness {
    /// CPUs the harness itself runs on (empty = not pinned: it shares the children's CPUs).
    pub harness_cpus: Vec<usize>,
    /// Facts and decisions worth recording with the results.
    pub notes: Vec<String>,
    _pin: Option<AffinityGuard>,
    can_raise_self: bool,
}

/// What a case produced besides its numbers.
pub struct CaseRun {
    pub result: CaseResult,
    /// sched_switch events from release to the last reap, when tracing, and the raw trace.
    pub trace: Option<(Vec<SwitchEvent>, String)>,
    /// Pids of the case's children (to tell them apart in a trace).
    pub pids: Vec<i32>,
    pub release_ns: u64,
}

/// Refuse RT policies early without the privilege to use them, with one clear sentence.
fn probe_realtime(policies: &[LinuxPolicy]) -> anyhow::Result<()> {
    let rt: Vec<String> = policies.iter().filter(|p| p.is_realtime()).map(|p| p.kernel_name().to_string()).collect();
    if rt.is_empty() {
        return Ok(());
    }
    match SchedGuard::apply(0, &SchedParams::new(LinuxPolicy::Fifo, 1)) {
        Ok(guard) => {
            drop(guard);
            Ok(())
        }
        Err(OsError::Permission { .. }) => bail!(
            "real-time policies ({}) need root or CAP_SYS_NICE: run with sudo, or leave them out of --policy \
             (other, batch and idle need no privilege)",
            rt.join(", ")
        ),
        Err(e) => Err(e).context("checking that real-time policies can be set"),
    }
}

impl Harness {
    /// Check the machine for `params` and pin the harness away from the children.
    pub fn prepare(params: &Params) -> anyhow::Result<Self> {
        let mut notes = Vec::new();
        if params.needs_realtime() {
            let t = sched::require_rt_throttling()?;
            notes.push(format!("RT throttling on: {} us of every {} us", t.runtime_us, t.period_us));
            probe_realtime(&params.policies)?;
        }
        if sched::autogroup_enabled() {
            notes.push(
                "autogroup is on: SCHED_OTHER/BATCH children share one group's CPU share with other sessions".into(),
            );
        }
        let largest = params.procs.iter().copied().max().unwrap_or(0) as u64;
        ProcessHeadroom::read().check(largest)?;
        let allowed = affinity::allowed_cpus()?;
        let mut child_cpus: Vec<usize> = params.cpus.clone();
        if params.policies.contains(&LinuxPolicy::Deadline) {
            child_cpus.extend(params.child_cpus(LinuxPolicy::Deadline));
        }
        let harness_cpus: Vec<usize> = allowed.iter().copied().filter(|c| !child_cpus.contains(c)).collect();
        let pin = if harness_cpus.is_empty() {
            notes.push(format!(
                "the harness shares CPUs {} with the children; it relies on running SCHED_FIFO above them",
                affinity::format_cpu_list(&allowed)
            ));
            None
        } else {
            notes.push(format!(
                "children on CPUs {}, harness on CPUs {}",
                affinity::format_cpu_list(&params.cpus),
                affinity::format_cpu_list(&harness_cpus)
            ));
            Some(AffinityGuard::pin(0, &harness_cpus)?)
        };
        let can_raise_self = schedlab_os::is_root();
        if !can_raise_self {
            notes.push("not root: the harness stays SCHED_OTHER (children are not real-time either)".into());
        }
        Ok(Harness { harness_cpus, notes, _pin: pin, can_raise_self })
    }

    /// The harness's own policy from release to the last reap.
    fn harness_sched(params: &Params) -> SchedParams {
        SchedParams::new(LinuxPolicy::Fifo, (params.priority + 1).clamp(1, 99))
    }

    /// Run one case: spawn `procs` children of `workload` under `policy`, hold them at the
    /// gate, release, reap every one (or kill them all at the timeout or on a stop signal).
    pub fn run_case(
        &self,
        params: &Params,
        procs: usize,
        policy: LinuxPolicy,
        workload: WorkloadKind,
        trace: Option<&Instance>,
    ) -> anyhow::Result<CaseRun> {
        let sched_params = params.child_sched(policy, procs);
        let cpus = params.child_cpus(policy);
        let spec = ChildSpec::new(&params.program)
            .args(params.workload_args(workload))
            .sched(sched_params)
            .cpus(&cpus)
            .stdout(Output::Null);
        let start = Instant::now();
        let deadline = start + params.timeout;
        let mut batch = Batch::new(spec)?;
        for i in 0..procs {
            if signals::stop_requested() {
                bail!("stopped by a signal while spawning ({i} of {procs} children were killed and reaped)");
            }
            if Instant::now() > deadline {
                bail!("spawning {procs} children took longer than --timeout {:?} (only {i} spawned)", params.timeout);
            }
            batch.spawn_one()?;
        }
        batch.wait_ready(deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(100)))?;
        let spawn_s = start.elapsed().as_secs_f64();
        let pids = batch.pids().to_vec();

        let raised = if self.can_raise_self { Some(SchedGuard::apply(0, &Self::harness_sched(params))?) } else { None };
        if let Some(t) = trace {
            t.clear()?;
            t.on(true)?;
        }
        let release_ns = batch.release();
        let mut exits = Vec::with_capacity(procs);
        let (mut timed_out, mut interrupted) = (false, false);
        loop {
            exits.extend(batch.reap_ready()?.into_iter().map(|e| (e, false)));
            if batch.live() == 0 {
                break;
            }
            if signals::stop_requested() {
                interrupted = true;
            } else if Instant::now() >= deadline {
                timed_out = true;
            }
            if interrupted || timed_out {
                exits.extend(batch.kill_and_reap().into_iter().map(|e| (e, true)));
                break;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            batch.wait_exit(left.min(Duration::from_millis(20)));
        }
        let end_ns = exits.iter().map(|(e, _)| e.at_ns).max().unwrap_or(release_ns);
        let events = match trace {
            Some(t) => {
                t.on(false)?;
                let text = t.read_text()?;
                Some((trace::switches(&text), text))
            }
            None => None,
        };
        drop(raised);
        if let Some(f) = batch.failures().first() {
            return Err(f.to_error(batch.spec())).context(format!("{policy} {workload} case with {procs} processes"));
        }
        let children: Vec<ChildOutcome> = exits
            .iter()
            .map(|(e, killed)| {
                let by_us =
                    *killed && matches!(e.reaped.status, ExitStatus::Signaled(s) if s == Signal::SIGKILL as i32);
                ChildOutcome {
                    usage: e.reaped.usage,
                    success: e.reaped.status.success(),
                    killed: by_us,
                    turnaround_s: e.at_ns.saturating_sub(release_ns) as f64 / 1e9,
                }
            })
            .collect();
        let frame = CaseFrame {
            policy,
            workload,
            procs,
            cpus,
            priority: sched_params.priority,
            deadline_runtime_ns: (policy == LinuxPolicy::Deadline).then_some(sched_params.runtime_ns),
            spawn_s,
            wall_s: end_ns.saturating_sub(release_ns) as f64 / 1e9,
            timed_out,
            interrupted,
        };
        Ok(CaseRun { result: CaseResult::from_children(frame, &children), trace: events, pids, release_ns })
    }
}
