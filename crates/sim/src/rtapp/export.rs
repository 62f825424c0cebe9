//! schedlab workloads written as rt-app JSON.

use super::*;

/// A time as rt-app's whole µs; other times are refused, not rounded.
pub(super) fn to_us(t: &TaskSpec, field: &str, ns: Dur) -> Result<Node, RtAppError> {
    let err = |m: String| RtAppError::new(Some(&t.name), field, m);
    if !ns.is_multiple_of(US) {
        return Err(err(format!("{ns} ns is not a whole number of µs (rt-app's unit); refused rather than rounded")));
    }
    let us = i32::try_from(ns / US).map_err(|_| err(format!("{} µs does not fit rt-app's 32-bit times", ns / US)))?;
    Ok(Node::Int(us.into()))
}

/// Refuses what rt-app cannot express.
pub(super) fn check_exportable(t: &TaskSpec) -> Result<(), RtAppError> {
    let refuse = |field: &str, why: &str| Err(RtAppError::new(Some(&t.name), field, why));
    if !t.wakes.is_empty() || !t.until_woken.is_empty() {
        let field = if t.wakes.is_empty() { "until_woken" } else { "wakes" };
        return refuse(field, "wake-ups between tasks are not mapped onto rt-app events");
    }
    if !t.runtime_reads.is_empty() {
        return refuse("runtime_reads", "rt-app has no clock-reading event");
    }
    if t.start_cpu.is_some() {
        return refuse("start_cpu", "rt-app cannot choose the CPU a thread starts on");
    }
    if !t.burst_cpus.is_empty() {
        return refuse("burst_cpus", "per-burst CPUs are not mapped onto rt-app phases");
    }
    if !t.block_ends.is_empty() {
        return refuse("block_ends", "rt-app sleeps for lengths, not until given times");
    }
    if t.weight != 1 {
        return refuse("weight", "rt-app has no share weight (only nice, for SCHED_OTHER)");
    }
    if let Some(k) = (1..t.bursts.len()).step_by(2).find(|&k| t.bursts[k] == 0) {
        return refuse(&format!("bursts[{k}]"), "a zero-length blocked interval has no rt-app event");
    }
    Ok(())
}

/// `policy`, `priority` and `dl-*` of a task.
pub(super) fn sched_entries(t: &TaskSpec) -> Result<Vec<(&'static str, Node)>, RtAppError> {
    let refuse = |field: &str, why: String| Err(RtAppError::new(Some(&t.name), field, why));
    let policy = match t.class.as_deref() {
        None | Some("other") => Policy::Other,
        Some("idle") => Policy::Idle,
        Some("fifo") => Policy::Fifo,
        Some("rr") => Policy::Rr,
        Some("deadline") => Policy::Deadline,
        Some(c) => return refuse("class", format!("class \"{c}\" has no rt-app policy")),
    };
    let rt = matches!(policy, Policy::Fifo | Policy::Rr);
    if t.priority != 0 && !rt {
        return refuse(
            "priority",
            format!("rt-app has a priority only for SCHED_FIFO/SCHED_RR (class {})", policy.class()),
        );
    }
    if t.nice != 0 && policy != Policy::Other {
        return refuse("nice", format!("rt-app sets a nice only for SCHED_OTHER (class {})", policy.class()));
    }
    if t.deadline.is_some() && policy != Policy::Deadline {
        return refuse("deadline", "rt-app has a relative deadline only for SCHED_DEADLINE".into());
    }
    let mut out = vec![("policy", Node::Str(policy.rt_name().into()))];
    match policy {
        Policy::Other => out.push(("priority", Node::Int(t.nice.into()))),
        Policy::Fifo | Policy::Rr if !(1..=99).contains(&t.priority) => {
            return refuse("priority", format!("{}: a real-time priority is 1..=99", t.priority));
        }
        Policy::Fifo | Policy::Rr => out.push(("priority", Node::Int(t.priority.into()))),
        Policy::Idle => {}
        Policy::Deadline => {
            // The `linux` policy's defaults: deadline and period stand for each other, runtime = deadline.
            let (d, p) = (t.deadline.or(t.period), t.period.or(t.deadline));
            let (Some(d), Some(p)) = (d, p) else {
                return refuse("period", "a deadline task without a deadline or a period has no reservation".into());
            };
            out.push(("dl-runtime", to_us(t, "runtime", t.runtime.unwrap_or(d))?));
            out.push(("dl-period", to_us(t, "period", p)?));
            out.push(("dl-deadline", to_us(t, "deadline", d)?));
            return Ok(out);
        }
    }
    if let Some(r) = t.runtime {
        out.push(("dl-runtime", to_us(t, "runtime", r)?));
    }
    Ok(out)
}

/// The names of the locks held over each burst of `t` (in the order taken; none over a sleep).
pub(super) fn locks_by_burst(t: &TaskSpec) -> Vec<Vec<&str>> {
    let mut by = vec![Vec::new(); t.bursts.len()];
    for l in &t.locks {
        by[2 * l.burst].push(l.name.as_str());
    }
    by
}

/// Run/sleep events for bursts (CPU first), each run inside the `lock`s and `unlock`s of the
/// mutexes held over it (`locks`: [`locks_by_burst`] of `t`), plus an optional timer; keys are
/// numbered when a kind repeats (rt-app matches `run0`, `run1` as runs).
pub(super) fn event_entries(
    t: &TaskSpec,
    bursts: &[(usize, Dur)],
    locks: &[Vec<&str>],
    timer: Option<Dur>,
) -> Result<Vec<(String, Node)>, RtAppError> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    let mut totals: HashMap<&str, usize> = HashMap::new();
    let mut events: Vec<(&str, Node)> = Vec::new();
    for (i, &(k, d)) in bursts.iter().enumerate() {
        let kind = if i % 2 == 0 { "run" } else { "sleep" };
        let held = &locks[k];
        events.extend(held.iter().map(|&m| ("lock", Node::Str(m.into()))));
        events.push((kind, to_us(t, &format!("bursts[{k}]"), d)?));
        events.extend(held.iter().rev().map(|&m| ("unlock", Node::Str(m.into()))));
    }
    for (kind, _) in &events {
        *totals.entry(kind).or_default() += 1;
    }
    let mut out = Vec::new();
    for (kind, node) in events {
        let n = counts.entry(kind).or_default();
        let key = if totals[kind] > 1 { format!("{kind}{n}") } else { kind.to_string() };
        *n += 1;
        out.push((key, node));
    }
    if let Some(p) = timer {
        let timer = Node::obj(vec![("ref", Node::Str("unique".into())), ("period", to_us(t, "period", p)?)]);
        out.push(("timer".to_string(), timer));
    }
    Ok(out)
}

/// Bursts grouped into phases: runs of equal (CPU, blocked) pairs, locks included, then the
/// last CPU burst. Each group is (loop count, [(burst index, length)]).
pub(super) fn burst_groups(bursts: &[Dur], locks: &[Vec<&str>]) -> Vec<(u64, Vec<(usize, Dur)>)> {
    let last = bursts.len() - 1;
    let mut groups: Vec<(u64, Vec<(usize, Dur)>)> = Vec::new();
    let same = |a: &[(usize, Dur)], b: &[(usize, Dur)]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.1 == y.1 && locks[x.0] == locks[y.0])
    };
    for k in (0..last).step_by(2) {
        let pair = vec![(k, bursts[k]), (k + 1, bursts[k + 1])];
        match groups.last_mut() {
            Some((n, body)) if same(body, &pair) => *n += 1,
            _ => groups.push((1, pair)),
        }
    }
    groups.push((1, vec![(last, bursts[last])]));
    groups
}

/// `loop` = `jobs` over one periodic job's `bursts` (`locks`: [`locks_by_burst`] of them) and a
/// timer of period `p`; a job longer than its period is refused, naming `key`.
fn periodic_body(
    t: &TaskSpec,
    bursts: &[Dur],
    locks: &[Vec<&str>],
    jobs: u32,
    p: Dur,
    key: &str,
) -> Result<Vec<(String, Node)>, RtAppError> {
    if bursts.iter().sum::<Dur>() > p {
        let msg = "a job longer than its period: rt-app's timer would not keep the period";
        return Err(RtAppError::new(Some(&t.name), key, msg));
    }
    let indexed: Vec<(usize, Dur)> = bursts.iter().copied().enumerate().collect();
    let mut out = vec![("loop".to_string(), Node::Int(jobs.into()))];
    out.extend(event_entries(t, &indexed, locks, Some(p))?);
    Ok(out)
}

/// Bodies (each with its `loop`) as the phases `p0`, `p1`, … of a task that runs them once.
fn as_phases(bodies: Vec<Vec<(String, Node)>>) -> Vec<(String, Node)> {
    let phases = bodies.into_iter().enumerate().map(|(i, b)| (format!("p{i}"), Node::Obj(b))).collect();
    // With "phases", a task's own loop defaults to -1 (for ever): say 1.
    vec![("loop".to_string(), Node::Int(1)), ("phases".to_string(), Node::Obj(phases))]
}

/// `loop` and the events (or `phases`) of a task.
pub(super) fn body_entries(t: &TaskSpec) -> Result<Vec<(String, Node)>, RtAppError> {
    let locks = locks_by_burst(t);
    let single_reservation = t.class.as_deref() == Some("deadline") && t.jobs == 1;
    if let (Some(p), false) = (t.period, t.job_phases.is_empty()) {
        // A phased task holds no locks (the workload refuses them beside phases).
        let bodies = t.job_phases.iter().enumerate().map(|(i, ph)| {
            periodic_body(t, &ph.bursts, &vec![vec![]; ph.bursts.len()], ph.jobs, p, &format!("phases[{i}]"))
        });
        return Ok(as_phases(bodies.collect::<Result<_, _>>()?));
    }
    if let Some(p) = t.period.filter(|_| !single_reservation) {
        return periodic_body(t, &t.bursts, &locks, t.jobs, p, "period");
    }
    let groups = burst_groups(&t.bursts, &locks);
    let mut bodies = Vec::with_capacity(groups.len());
    for (n, body) in &groups {
        let mut phase = vec![("loop".to_string(), Node::Int(*n as i64))];
        phase.extend(event_entries(t, body, &locks, None)?);
        bodies.push(phase);
    }
    Ok(if bodies.len() == 1 { bodies.pop().expect("one body") } else { as_phases(bodies) })
}

/// One rt-app task object.
pub(super) fn task_object(t: &TaskSpec, instances: usize) -> Result<Node, RtAppError> {
    check_exportable(t)?;
    let mut out: Vec<(String, Node)> = Vec::new();
    if instances > 1 {
        out.push(("instance".into(), Node::Int(instances as i64)));
    }
    out.extend(sched_entries(t)?.into_iter().map(|(k, v)| (k.to_string(), v)));
    if t.arrival > 0 {
        out.push(("delay".into(), to_us(t, "arrival", t.arrival)?));
    }
    if let Some(a) = &t.affinity {
        out.push(("cpus".into(), Node::Arr(a.iter().map(|&c| Node::Int(c as i64)).collect())));
    }
    out.extend(body_entries(t)?);
    Ok(Node::Obj(out))
}

/// How many tasks from `i` on are the instances `base-0`, `base-1`, … of one rt-app task: alike
/// but for their names, `base` naming no task. 1 when they are not.
pub(super) fn instance_run(tasks: &[TaskSpec], i: usize, names: &HashSet<&str>) -> (String, usize) {
    let own = (tasks[i].name.to_string(), 1);
    let Some(base) = tasks[i].name.strip_suffix("-0").filter(|b| !names.contains(b)) else { return own };
    let alike = |t: &TaskSpec| TaskSpec { name: tasks[i].name.clone(), ..t.clone() } == tasks[i];
    let n = tasks[i..].iter().enumerate().take_while(|(n, t)| *t.name == format!("{base}-{n}") && alike(t)).count();
    if n < 2 {
        return own;
    }
    (base.to_string(), n)
}

/// Writes a workload as an rt-app JSON document (times in µs): one rt-app task per task, or per
/// group of instances; see the module documentation for what is refused.
pub fn export(w: &Workload) -> Result<String, RtAppError> {
    let names: HashSet<&str> = w.tasks.iter().map(|t| &*t.name).collect();
    let mut tasks = Vec::new();
    let mut i = 0;
    while i < w.tasks.len() {
        let (key, n) = instance_run(&w.tasks, i, &names);
        tasks.push((key, task_object(&w.tasks[i], n)?));
        i += n;
    }
    let mut global = vec![
        ("duration", Node::Int(-1)),
        ("calibration", Node::Str("CPU0".into())),
        ("default_policy", Node::Str("SCHED_OTHER".into())),
    ];
    if w.tasks.iter().any(|t| !t.locks.is_empty()) {
        // schedlab's runs inherit priorities through locks unless told not to; rt-app's do not.
        global.push(("pi_enabled", Node::Bool(true)));
    }
    let global = Node::obj(global);
    let root = Node::obj(vec![("tasks", Node::Obj(tasks)), ("global", global)]);
    Ok(serde_json::to_string_pretty(&root).expect("an rt-app document serializes") + "\n")
}
