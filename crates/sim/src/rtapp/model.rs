//! rt-app's threads, phases, events and timers as parsed: what the document says, before it is mapped onto schedlab's workload; and the parser that builds them, refusing what schedlab cannot model.

use super::*;

/// rt-app's scheduling policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Policy {
    Other,
    Idle,
    Fifo,
    Rr,
    Deadline,
}

impl Policy {
    const ALL: [(Policy, &'static str, &'static str); 5] = [
        (Policy::Other, "SCHED_OTHER", "other"),
        (Policy::Idle, "SCHED_IDLE", "idle"),
        (Policy::Fifo, "SCHED_FIFO", "fifo"),
        (Policy::Rr, "SCHED_RR", "rr"),
        (Policy::Deadline, "SCHED_DEADLINE", "deadline"),
    ];

    pub(super) fn parse(node: &Node, at: At) -> Result<Policy, RtAppError> {
        let name = string(node, at)?;
        Self::ALL.iter().find(|(_, rt, _)| *rt == name).map(|(p, _, _)| *p).ok_or_else(|| {
            at.err(format!("unknown policy \"{name}\" (SCHED_OTHER, SCHED_IDLE, SCHED_FIFO, SCHED_RR, SCHED_DEADLINE)"))
        })
    }

    pub(super) fn rt_name(self) -> &'static str {
        Self::ALL.iter().find(|(p, _, _)| *p == self).map(|(_, rt, _)| *rt).unwrap_or_default()
    }

    pub(super) fn class(self) -> &'static str {
        Self::ALL.iter().find(|(p, _, _)| *p == self).map(|(_, _, c)| *c).unwrap_or_default()
    }
}

/// The `global` object's keys that matter.
pub(super) struct Global {
    /// `duration` in ns when positive (rt-app kills the threads then); None = no limit.
    pub(super) duration: Option<Time>,
    pub(super) default_policy: Policy,
}

/// A task's scheduling parameters, in schedlab's terms.
#[derive(Debug, Clone)]
pub(super) struct Sched {
    pub(super) policy: Policy,
    /// RT priority (fifo/rr), else 0.
    pub(super) priority: i32,
    pub(super) nice: i32,
    pub(super) runtime: Option<Dur>,
    pub(super) deadline: Option<Dur>,
    pub(super) period: Option<Dur>,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Timer {
    pub(super) reference: String,
    pub(super) period: Dur,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Event {
    /// `run` or `runtime`.
    Cpu(Dur),
    Sleep(Dur),
    Timer(Timer),
    /// `lock` / `unlock` of a named mutex.
    Lock(String),
    Unlock(String),
}

/// One phase: a body of events run `repeat` times.
#[derive(Debug, Clone)]
pub(super) struct Phase {
    /// Key path prefix for messages (`phases.light.`), empty for a body written in the task.
    pub(super) path: String,
    pub(super) repeat: Loop,
    /// (key, event) in order.
    pub(super) events: Vec<(String, Event)>,
}

/// One rt-app task (a thread object).
#[derive(Debug, Clone)]
pub(super) struct Thread {
    pub(super) key: String,
    pub(super) instances: u32,
    pub(super) delay: Dur,
    pub(super) sched: Sched,
    pub(super) cpus: Option<Vec<CpuId>>,
    /// How many times the phases run in turn.
    pub(super) repeat: Loop,
    pub(super) phases: Vec<Phase>,
}

impl Thread {
    pub(super) fn at<'a>(&'a self, key: &'a str) -> At<'a> {
        At { task: Some(&self.key), key }
    }

    pub(super) fn timers(&self) -> impl Iterator<Item = (String, &Timer)> + '_ {
        self.phases.iter().flat_map(|p| {
            p.events.iter().filter_map(move |(k, e)| match e {
                Event::Timer(t) => Some((format!("{}{k}", p.path), t)),
                _ => None,
            })
        })
    }

    /// How many times a body runs in all: thread loops × the phases' loops.
    pub(super) fn repetitions(&self) -> Loop {
        let per_round = self.phases.iter().try_fold(0u64, |sum, p| match p.repeat {
            Loop::Times(n) => Some(sum.saturating_add(n)),
            Loop::Forever => None,
        });
        match (per_round, self.repeat) {
            (Some(n), Loop::Times(m)) => Loop::Times(n.saturating_mul(m)),
            _ => Loop::Forever,
        }
    }
}

/// rt-app's event names; a key is an event when it starts with one (rt-app's `obj_is_event`).
pub(super) const EVENTS: [&str; 17] = [
    "runtime", "run", "sleep", "timer", "mem", "iorun", "lock", "unlock", "wait", "signal", "broad", "sync", "barrier",
    "suspend", "resume", "yield", "fork",
];

pub(super) fn event_name(key: &str) -> Option<&'static str> {
    EVENTS.iter().find(|e| key.starts_with(**e)).copied()
}

/// Why schedlab does not take an rt-app event.
pub(super) fn why_not(event: &str) -> &'static str {
    match event {
        "mem" | "iorun" => "memory and I/O load are not modelled",
        "wait" | "signal" | "broad" | "sync" => "condition variables are not modelled",
        "barrier" => "barriers are not modelled",
        "suspend" | "resume" => "suspend/resume between threads is not mapped",
        "yield" => "sched_yield is not modelled",
        "fork" => "threads created at run time are not modelled",
        _ => "not supported here",
    }
}

/// The refusal of a key schedlab does not take: an unsupported event, a known key, or an
/// unknown one.
pub(super) fn refusal(key: &str) -> String {
    if let Some(event) = event_name(key) {
        return format!("event \"{event}\" is not supported: {}", why_not(event));
    }
    let why = match key {
        "util_min" | "util_max" => "utilization clamping is not modelled",
        "taskgroup" => "task groups are not modelled",
        "nodes_membind" => "NUMA memory binding is not modelled",
        "period" | "deadline" => "legacy key: write dl-period / dl-deadline",
        _ => return "unknown key".to_string(),
    };
    format!("not supported: {why}")
}

/// One event of a body, or the refusal of a key that is not one schedlab takes.
pub(super) fn parse_event(key: &str, value: &Node, at: At) -> Result<Event, RtAppError> {
    match event_name(key) {
        Some("run" | "runtime") => Ok(Event::Cpu(micros(value, at)?)),
        Some("sleep") => Ok(Event::Sleep(micros(value, at)?)),
        Some("timer") => parse_timer(value, at),
        Some("lock") => Ok(Event::Lock(mutex_name(value, at)?)),
        Some("unlock") => Ok(Event::Unlock(mutex_name(value, at)?)),
        _ => Err(at.err(refusal(key))),
    }
}

/// The mutex a `lock` or `unlock` names (rt-app creates it on first use).
fn mutex_name(value: &Node, at: At) -> Result<String, RtAppError> {
    let name = string(value, at)?;
    if name.is_empty() {
        return Err(at.err("a mutex needs a name"));
    }
    Ok(name)
}

pub(super) fn parse_timer(value: &Node, at: At) -> Result<Event, RtAppError> {
    // rt-app's defaults: ref "unknown", period 0, mode "relative".
    let mut timer = Timer { reference: "unknown".into(), period: 0 };
    for (k, v) in entries(value, at)? {
        let key = format!("{}.{k}", at.key);
        let at = At { task: at.task, key: &key };
        match k.as_str() {
            "ref" => timer.reference = string(v, at)?,
            "period" => timer.period = micros(v, at)?,
            "mode" => match string(v, at)?.as_str() {
                "relative" | "absolute" => {}
                m => return Err(at.err(format!("unknown timer mode \"{m}\" (relative, absolute)"))),
            },
            _ => return Err(at.err("unknown timer key")),
        }
    }
    if timer.period == 0 {
        return Err(at.err("a timer needs a period > 0"));
    }
    Ok(Event::Timer(timer))
}

pub(super) fn parse_global(node: Option<&Node>) -> Result<Global, RtAppError> {
    const IGNORED: [&str; 11] = [
        "calibration",
        "logdir",
        "log_basename",
        "log_size",
        "ftrace",
        "gnuplot",
        "pi_enabled",
        "lock_pages",
        "io_device",
        "mem_buffer_size",
        "cumulative_slack",
    ];
    let mut g = Global { duration: None, default_policy: Policy::Other };
    let Some(node) = node else { return Ok(g) };
    for (k, v) in entries(node, At { task: None, key: "global" })? {
        let key = format!("global.{k}");
        let at = At { task: None, key: &key };
        match k.as_str() {
            "duration" => g.duration = Some(int(v, at)?).filter(|&s| s > 0).map(|s| s as Time * SEC),
            "default_policy" => g.default_policy = Policy::parse(v, at)?,
            k if IGNORED.contains(&k) => {}
            _ => return Err(at.err("unknown key")),
        }
    }
    Ok(g)
}

/// The scheduling keys of a task (`policy`, `priority`, `dl-*`) in schedlab's terms.
pub(super) fn parse_sched(task: &str, keys: &[(&str, &Node)], default: Policy) -> Result<Sched, RtAppError> {
    let get = |name: &str| keys.iter().find(|(k, _)| *k == name).map(|&(_, v)| v);
    let at = |key: &'static str| At { task: Some(task), key };
    let policy = get("policy").map(|v| Policy::parse(v, at("policy"))).transpose()?.unwrap_or(default);
    let priority = get("priority").map(|v| int(v, at("priority"))).transpose()?;
    let dl = |name: &'static str| get(name).map(|v| micros(v, at(name))).transpose();
    let (runtime, period, deadline) = (dl("dl-runtime")?.filter(|&r| r > 0), dl("dl-period")?, dl("dl-deadline")?);
    let mut s = Sched { policy, priority: 0, nice: 0, runtime, deadline: None, period: None };
    if policy != Policy::Deadline {
        if let Some(key) = ["dl-period", "dl-deadline"].into_iter().find(|k| get(k).is_some()) {
            return Err(
                at(key).err(format!("only SCHED_DEADLINE has a period and a deadline (policy {})", policy.rt_name()))
            );
        }
    }
    match policy {
        Policy::Other => {
            let nice = priority.unwrap_or(0);
            if !(-20..=19).contains(&nice) {
                return Err(at("priority").err(format!("{nice}: SCHED_OTHER's priority is a nice value, -20..=19")));
            }
            s.nice = nice as i32;
        }
        Policy::Idle | Policy::Deadline => {
            if let Some(p) = priority.filter(|&p| p != 0) {
                return Err(at("priority").err(format!("{p}: rt-app applies no priority to {}", policy.rt_name())));
            }
        }
        Policy::Fifo | Policy::Rr => {
            let rt = priority.unwrap_or(10);
            if !(1..=99).contains(&rt) {
                return Err(at("priority").err(format!("{rt}: a real-time priority is 1..=99")));
            }
            if get("dl-runtime").is_some() {
                return Err(at("dl-runtime").err(format!("{} has no runtime", policy.rt_name())));
            }
            s.priority = rt as i32;
        }
    }
    if policy == Policy::Deadline {
        let Some(r) = runtime else {
            return Err(at("dl-runtime").err("SCHED_DEADLINE needs a dl-runtime > 0"));
        };
        let p = period.unwrap_or(r);
        let d = deadline.unwrap_or(p);
        if !(r <= d && d <= p) {
            return Err(at("dl-deadline").err("SCHED_DEADLINE needs dl-runtime ≤ dl-deadline ≤ dl-period"));
        }
        (s.period, s.deadline) = (Some(p), Some(d));
    }
    Ok(s)
}

pub(super) fn parse_cpus(node: &Node, at: At) -> Result<Vec<CpuId>, RtAppError> {
    let Node::Arr(items) = node else {
        return Err(at.err(format!("must be an array of CPU numbers, got {}", node.kind())));
    };
    let mut cpus: Vec<CpuId> = Vec::new();
    for item in items {
        let c = int(item, at)?;
        if c < 0 {
            return Err(at.err(format!("negative CPU {c}")));
        }
        if !cpus.contains(&(c as CpuId)) {
            cpus.push(c as CpuId);
        }
    }
    if cpus.is_empty() {
        return Err(at.err("no CPU: the task could run nowhere"));
    }
    Ok(cpus)
}

pub(super) fn parse_phase(task: &str, name: &str, node: &Node) -> Result<Phase, RtAppError> {
    let path = format!("phases.{name}.");
    let mut phase = Phase { path: path.clone(), repeat: Loop::Times(1), events: Vec::new() };
    for (k, v) in entries(node, At { task: Some(task), key: &format!("phases.{name}") })? {
        let key = format!("{path}{k}");
        let at = At { task: Some(task), key: &key };
        match k.as_str() {
            "loop" => phase.repeat = Loop::parse(v, at)?,
            "policy" | "priority" | "dl-runtime" | "dl-period" | "dl-deadline" | "cpus" => {
                return Err(at.err("per-phase scheduling parameters and affinity are not supported"));
            }
            _ => phase.events.push((k.clone(), parse_event(k, v, at)?)),
        }
    }
    if phase.events.is_empty() {
        return Err(RtAppError::new(Some(task), format!("phases.{name}"), "no events"));
    }
    Ok(phase)
}

pub(super) fn parse_thread(key: &str, node: &Node, global: &Global) -> Result<Thread, RtAppError> {
    let at = |k: &'static str| At { task: Some(key), key: k };
    let (mut instances, mut delay, mut repeat, mut phases_node, mut cpus) = (1, 0, None, None, None);
    let mut sched_keys = Vec::new();
    let mut events = Vec::new();
    for (k, v) in entries(node, at(""))? {
        match k.as_str() {
            "instance" => {
                let n = int(v, at("instance"))?;
                instances = u32::try_from(n).map_err(|_| at("instance").err(format!("{n}: must be ≥ 0")))?;
            }
            "delay" => delay = micros(v, at("delay"))?,
            "loop" => repeat = Some(Loop::parse(v, at("loop"))?),
            "phases" => phases_node = Some(v),
            "cpus" => cpus = Some(parse_cpus(v, at("cpus"))?),
            "policy" | "priority" | "dl-runtime" | "dl-period" | "dl-deadline" => sched_keys.push((k.as_str(), v)),
            _ => events.push((k.clone(), parse_event(k, v, At { task: Some(key), key: k })?)),
        }
    }
    let legacy_runtime =
        events.iter().any(|(k, _)| k == "runtime") && !sched_keys.iter().any(|(k, _)| *k == "dl-runtime");
    if phases_node.is_none() && legacy_runtime {
        return Err(at("runtime").err(
            "rt-app also reads a task-level \"runtime\" as the legacy dl-runtime: name the event runtime0 or give dl-runtime",
        ));
    }
    let sched = parse_sched(key, &sched_keys, global.default_policy)?;
    let (phases, repeat) = match phases_node {
        Some(p) => (parse_phases(key, p, &events)?, repeat.unwrap_or(Loop::Forever)),
        None if events.is_empty() => return Err(at("").err("no events")),
        // Without "phases" the task is its one phase: "loop" counts it (default: for ever).
        None => (vec![Phase { path: String::new(), repeat: repeat.unwrap_or(Loop::Forever), events }], Loop::Times(1)),
    };
    Ok(Thread { key: key.to_string(), instances, delay, sched, cpus, repeat, phases })
}

/// A task's `phases`, in order; events written beside them are refused (rt-app ignores them).
pub(super) fn parse_phases(task: &str, node: &Node, beside: &[(String, Event)]) -> Result<Vec<Phase>, RtAppError> {
    if let Some((k, _)) = beside.first() {
        return Err(At { task: Some(task), key: k }.err("rt-app ignores events beside \"phases\"; put them in a phase"));
    }
    let at = At { task: Some(task), key: "phases" };
    let phases = entries(node, at)?.iter().map(|(n, v)| parse_phase(task, n, v)).collect::<Result<Vec<_>, _>>()?;
    if phases.is_empty() {
        return Err(at.err("no phases"));
    }
    Ok(phases)
}

/// rt-app's legacy `resources` section declares mutexes (which `lock` also creates on first
/// use) and other resources; only mutexes are taken.
fn check_resources(node: &Node) -> Result<(), RtAppError> {
    for (name, v) in entries(node, At { task: None, key: "resources" })? {
        let key = format!("resources.{name}");
        let at = At { task: None, key: &key };
        for (k, v) in entries(v, at)? {
            let key = format!("{key}.{k}");
            let at = At { task: None, key: &key };
            if k != "type" {
                return Err(at.err("unknown key"));
            }
            let kind = string(v, at)?;
            if kind != "mutex" {
                return Err(at.err(format!("resource type \"{kind}\" is not supported (only mutexes are)")));
            }
        }
    }
    Ok(())
}

pub(super) fn parse_root(root: &Node) -> Result<(Global, Vec<Thread>), RtAppError> {
    let (mut tasks, mut global) = (None, None);
    for (k, v) in entries(root, At { task: None, key: "" })? {
        match k.as_str() {
            "tasks" => tasks = Some(v),
            "global" => global = Some(v),
            "resources" => check_resources(v)?,
            _ => return Err(RtAppError::new(None, k, "unknown key")),
        }
    }
    let global = parse_global(global)?;
    let tasks = tasks.ok_or_else(|| RtAppError::new(None, "tasks", "missing"))?;
    let threads = entries(tasks, At { task: None, key: "tasks" })?
        .iter()
        .map(|(k, v)| parse_thread(k, v, &global))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((global, threads))
}
