//! rt-app threads mapped onto schedlab tasks: periodic jobs, unrolled bodies, instances.

use super::lock_spans::LockSpans;
use super::*;
use crate::workload::{LockUse, RareFields};

/// A body's events with zero-length ones dropped and adjacent runs (sleeps) merged.
pub(super) fn normalized(events: &[(String, Event)]) -> Vec<(&str, Event)> {
    let mut out: Vec<(&str, Event)> = Vec::new();
    for (k, e) in events {
        match (out.last_mut(), e) {
            (_, Event::Cpu(0) | Event::Sleep(0)) => {}
            (Some((_, Event::Cpu(a))), Event::Cpu(b)) | (Some((_, Event::Sleep(a))), Event::Sleep(b)) => *a += b,
            _ => out.push((k, e.clone())),
        }
    }
    out
}

/// A periodic job: a body of runs and sleeps starting with a run (locks around whole runs), then
/// one timer.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Job {
    pub(super) bursts: Vec<Dur>,
    pub(super) locks: Vec<LockUse>,
    pub(super) timer: Timer,
}

/// The phase's body as a periodic job; anything else with a timer is refused naming the timer.
pub(super) fn job_of(t: &Thread, phase: &Phase) -> Result<Job, RtAppError> {
    let events = normalized(&phase.events);
    let timers: Vec<&str> = events.iter().filter(|(_, e)| matches!(e, Event::Timer(_))).map(|(k, _)| *k).collect();
    let Some(&first_timer) = timers.first() else {
        let msg = "another phase has a timer and this one has none: every job of a periodic task ends at its timer";
        return Err(RtAppError::new(Some(&t.key), format!("{}timer", phase.path), msg));
    };
    let key = format!("{}{first_timer}", phase.path);
    let shape = "a timer is mapped only as the last event of a body of runs and sleeps that starts with a run";
    if timers.len() > 1 {
        return Err(t.at(&key).err(format!("{} timers in one body: {shape}", timers.len())));
    }
    let Some(((_, Event::Timer(timer)), body)) = events.split_last() else {
        return Err(t.at(&key).err(shape));
    };
    let mut s = Stream::new(0, None);
    for (k, e) in body {
        s.push(t, &phase.path, k, e)?;
    }
    let (lead, bursts, locks) = s.finish(t)?;
    if lead > 0 || bursts.len() % 2 == 0 {
        return Err(t.at(&key).err(shape));
    }
    Ok(Job { bursts, locks, timer: timer.clone() })
}

/// How many periodic jobs run: the loop count, cut to the releases before `global.duration`.
pub(super) fn job_count(t: &Thread, period: Dur, duration: Option<Time>) -> Result<u32, RtAppError> {
    let released = duration.map(|d| d.saturating_sub(t.delay).div_ceil(period));
    let jobs = match (t.repetitions(), released) {
        (Loop::Times(n), None) => n,
        (Loop::Times(n), Some(r)) => n.min(r),
        (Loop::Forever, Some(r)) => r,
        (Loop::Forever, None) => {
            return Err(t.at("loop").err("loop -1 (until the end) needs a positive global.duration"));
        }
    };
    if jobs == 0 {
        return Err(t.at("delay").err("the task starts no job before global.duration"));
    }
    u32::try_from(jobs).map_err(|_| t.at("loop").err(format!("{jobs} jobs is too many")))
}

/// A task whose bodies are one periodic job: a periodic TaskSpec.
pub(super) fn periodic_spec(t: &Thread, duration: Option<Time>) -> Result<TaskSpec, RtAppError> {
    let jobs: Vec<Job> = t.phases.iter().map(|phase| job_of(t, phase)).collect::<Result<_, _>>()?;
    for (phase, job) in t.phases.iter().zip(&jobs) {
        let key = format!("{}timer", phase.path);
        if job.timer != jobs[0].timer {
            let msg = "phases with different timers: a periodic task has one timer (splitting it into tasks would not be exact)";
            return Err(t.at(&key).err(msg));
        }
        let length: Dur = job.bursts.iter().sum();
        if length > job.timer.period {
            let msg =
                format!("the body ({} µs) is longer than the timer period ({} µs)", length / US, job.timer.period / US);
            return Err(t.at(&key).err(msg));
        }
    }
    let alike = jobs.iter().all(|j| *j == jobs[0]);
    let Job { bursts, locks, timer } = jobs[0].clone();
    if t.sched.policy == Policy::Deadline && t.sched.period != Some(timer.period) {
        return Err(t.at("dl-period").err(format!(
            "the timer period ({} µs) differs from dl-period ({} µs): schedlab has one period per task",
            timer.period / US,
            t.sched.period.unwrap_or(0) / US
        )));
    }
    let count = job_count(t, timer.period, duration)?;
    let mut spec = base_spec(t);
    if !alike {
        spec.job_phases = super::job_phases::job_phases(t, &jobs, count)?;
    }
    (spec.bursts, spec.locks, spec.period, spec.jobs) = (bursts.into(), locks, Some(timer.period), count);
    Ok(spec)
}

/// Bursts built along rt-app's nominal clock: events start in turn, none after the duration.
pub(super) struct Stream {
    now: Time,
    end: Option<Time>,
    /// Sleep before the first run (it delays the arrival).
    lead: Dur,
    bursts: Vec<Dur>,
    events: u64,
    locks: LockSpans,
    /// `global.duration` came before the body ended.
    cut: bool,
}

impl Stream {
    /// A burst list whose first event starts at `start`; none starts at or after `end`.
    pub(super) fn new(start: Time, end: Option<Time>) -> Self {
        Stream { now: start, end, lead: 0, bursts: Vec::new(), events: 0, locks: LockSpans::default(), cut: false }
    }

    /// Adds one event (`path` and `key` name it in errors); false once `global.duration` has
    /// passed (rt-app starts no more events).
    pub(super) fn push(&mut self, t: &Thread, path: &str, key: &str, event: &Event) -> Result<bool, RtAppError> {
        let key = || format!("{path}{key}");
        if self.end.is_some_and(|end| self.now >= end) {
            self.cut = true;
            return Ok(false);
        }
        self.events += 1;
        if self.events > MAX_EVENTS {
            return Err(t.at("loop").err(format!("the task unrolls to more than {MAX_EVENTS} events")));
        }
        let in_cpu_burst = self.bursts.len() % 2 == 1;
        let (cpu, d) = match event {
            Event::Cpu(d) => (true, *d),
            Event::Sleep(d) => (false, *d),
            Event::Lock(name) => {
                self.locks.lock(t, &key(), name, self.bursts.len(), in_cpu_burst)?;
                return Ok(true);
            }
            Event::Unlock(name) => {
                self.locks.unlock(t, &key(), name, self.bursts.len())?;
                return Ok(true);
            }
            Event::Timer(_) => unreachable!("a timer ends a periodic body and is not pushed"),
        };
        match (cpu, d) {
            (_, 0) => {}
            (true, _) => self.locks.before_run(t, &key, in_cpu_burst)?,
            (false, _) => self.locks.before_sleep(t, &key)?,
        }
        self.now = self.now.saturating_add(d);
        match (self.bursts.len(), d) {
            (_, 0) => {}
            (0, _) if !cpu => self.lead += d,
            (n, _) if (n % 2 == 1) == cpu => *self.bursts.last_mut().expect("n > 0") += d,
            _ => self.bursts.push(d),
        }
        Ok(true)
    }

    /// The lead sleep, the bursts and the locks over them.
    pub(super) fn finish(self, t: &Thread) -> Result<(Dur, Vec<Dur>, Vec<LockUse>), RtAppError> {
        let locks = self.locks.finish(t, self.bursts.len(), self.cut)?;
        Ok((self.lead, self.bursts, locks))
    }
}

/// A task without a timer: its loops and phases unrolled into one burst list.
pub(super) fn unrolled_spec(t: &Thread, duration: Option<Time>) -> Result<TaskSpec, RtAppError> {
    if t.repetitions() == Loop::Forever && duration.is_none() {
        return Err(t.at("loop").err("loop -1 (until the end) needs a positive global.duration"));
    }
    let mut s = Stream::new(t.delay, duration);
    'all: for _ in 0..t.repeat.count() {
        for phase in &t.phases {
            for _ in 0..phase.repeat.count() {
                for (key, event) in &phase.events {
                    if !s.push(t, &phase.path, key, event)? {
                        break 'all;
                    }
                }
            }
        }
    }
    let (lead, mut bursts, locks) = s.finish(t)?;
    if bursts.len().is_multiple_of(2) {
        bursts.pop(); // A final sleep only delays the thread's exit.
    }
    if bursts.is_empty() {
        return Err(t.at("run").err("the task runs no CPU time (before global.duration)"));
    }
    let mut spec = base_spec(t);
    spec.arrival += lead;
    (spec.bursts, spec.locks) = (bursts.into(), locks);
    if t.sched.policy == Policy::Deadline {
        spec.period = t.sched.period;
    }
    Ok(spec)
}

/// The fields every task of the thread has: arrival, scheduling, affinity.
pub(super) fn base_spec(t: &Thread) -> TaskSpec {
    let s = &t.sched;
    let spec = TaskSpec {
        name: t.key.as_str().into(),
        arrival: t.delay,
        weight: 1,
        jobs: 1,
        priority: s.priority,
        nice: s.nice,
        ..TaskSpec::default()
    };
    spec.with(RareFields {
        runtime: s.runtime,
        deadline: s.deadline,
        class: Some(s.policy.class().to_string()),
        affinity: t.cpus.clone(),
        ..RareFields::default()
    })
}

/// The thread's tasks: one per instance.
pub(super) fn thread_tasks(t: &Thread, duration: Option<Time>) -> Result<Vec<TaskSpec>, RtAppError> {
    if t.instances == 0 {
        return Ok(Vec::new());
    }
    let spec = if t.timers().next().is_some() { periodic_spec(t, duration)? } else { unrolled_spec(t, duration)? };
    if t.instances == 1 {
        return Ok(vec![spec]);
    }
    Ok((0..t.instances).map(|i| TaskSpec { name: format!("{}-{i}", t.key).into(), ..spec.clone() }).collect())
}

/// Timers whose `ref` does not start with "unique" are one timer for every thread naming them
/// (rt-app's global resources): such a timer drives no single periodic task.
pub(super) fn check_shared_timers(threads: &[Thread]) -> Result<(), RtAppError> {
    let mut users: HashMap<&str, u32> = HashMap::new();
    for t in threads {
        let refs: HashSet<&str> =
            t.timers().map(|(_, tm)| tm.reference.as_str()).filter(|r| !r.starts_with("unique")).collect();
        for r in refs {
            *users.entry(r).or_default() += t.instances;
        }
    }
    for t in threads {
        if let Some((key, tm)) = t.timers().find(|(_, tm)| users.get(tm.reference.as_str()).is_some_and(|&n| n > 1)) {
            return Err(t.at(&key).err(format!(
                "timer \"{}\" is shared by several threads (name it \"unique…\" for one per thread): not mapped",
                tm.reference
            )));
        }
    }
    Ok(())
}

/// Checks the workload as a workload file would be, naming the task at fault.
pub(super) fn validated(w: Workload) -> Result<Workload, RtAppError> {
    let mut seen: HashSet<&str> = HashSet::new();
    if let Some(t) = w.tasks.iter().find(|t| !seen.insert(&*t.name)) {
        return Err(RtAppError::new(Some(&t.name), "instance", "two threads would have this name"));
    }
    Workload::from_json_str(&w.to_json_string()).map_err(|e| {
        let task = e
            .field
            .strip_prefix("tasks[")
            .and_then(|rest| rest.split(']').next())
            .and_then(|i| i.parse::<usize>().ok())
            .and_then(|i| w.tasks.get(i))
            .map(|t| t.name.to_string());
        RtAppError { task, key: e.field, message: e.message }
    })
}

/// Reads an rt-app JSON document (comments and trailing commas allowed) as a workload; see the
/// module documentation for what maps to what and what is refused.
pub fn import(text: &str) -> Result<Workload, RtAppError> {
    let (global, threads) = parse_root(&parse_document(text)?)?;
    check_shared_timers(&threads)?;
    let mut tasks = Vec::new();
    for t in &threads {
        tasks.extend(thread_tasks(t, global.duration)?);
    }
    if tasks.is_empty() {
        return Err(RtAppError::new(None, "tasks", "no thread is created (every instance is 0)"));
    }
    validated(Workload { cpus: None, tasks })
}
