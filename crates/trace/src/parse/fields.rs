//! Event bodies, the text after `sched_xxx: `, into [`EventKind`]s. Two spellings exist:
//! the kernel's `key=value` print format (tracefs, perf script, most of trace-cmd report) and
//! libtraceevent's compact plugin form that trace-cmd (and perf, with the plugin) prints for
//! sched_switch and sched_wakeup[_new]: `comm:pid [prio] S ==> comm:pid [prio]`, `comm:pid [prio] CPU:001`.
//!
//! Comm names may contain spaces, `=`, `:` and brackets, so values are found by the keys
//! around them, trying each possible end of a free-text value until the rest fits.

use crate::event::{EventKind, Pid, Switch, Wake};

/// How a value is delimited and checked.
#[derive(Clone, Copy)]
enum Val {
    /// Free text (a comm or a file name): may contain spaces; never the last field.
    Text,
    /// An integer, up to the next space.
    Int,
    /// A word without spaces.
    Word,
}

/// Match `body` against `spec` (literal key prefixes with value kinds), returning the values
/// and the unmatched tail (empty, or extra ` key=value` fields a newer kernel may add).
fn match_fields<'a>(body: &'a str, spec: &[(&str, Val)]) -> Option<(Vec<&'a str>, &'a str)> {
    let mut out = Vec::with_capacity(spec.len());
    let rest = go(body, spec, &mut out)?;
    Some((out, rest))
}

fn go<'a>(s: &'a str, spec: &[(&str, Val)], out: &mut Vec<&'a str>) -> Option<&'a str> {
    let Some(&(key, kind)) = spec.first() else {
        return (s.is_empty() || s.starts_with(' ')).then_some(s);
    };
    let s = s.strip_prefix(key)?;
    match kind {
        Val::Int | Val::Word => {
            let end = s.find(' ').unwrap_or(s.len());
            let v = &s[..end];
            if v.is_empty() || matches!(kind, Val::Int) && v.parse::<i64>().is_err() {
                return None;
            }
            out.push(v);
            go(&s[end..], &spec[1..], out)
        }
        Val::Text => {
            let next_key = spec.get(1).expect("a text value is followed by a key").0;
            let n = out.len();
            for (i, _) in s.match_indices(next_key) {
                out.truncate(n);
                out.push(&s[..i]);
                if let Some(rest) = go(&s[i..], &spec[1..], out) {
                    return Some(rest);
                }
            }
            out.truncate(n);
            None
        }
    }
}

/// The value of ` key=` among extra trailing fields.
fn extra<'a>(tail: &'a str, key: &str) -> Option<&'a str> {
    tail.split(' ').find_map(|f| f.strip_prefix(key)?.strip_prefix('='))
}

fn int<T: std::str::FromStr>(s: &str) -> Option<T> {
    s.parse().ok()
}

const SWITCH: &[(&str, Val)] = &[
    ("prev_comm=", Val::Text),
    (" prev_pid=", Val::Int),
    (" prev_prio=", Val::Int),
    (" prev_state=", Val::Word),
    (" ==> next_comm=", Val::Text),
    (" next_pid=", Val::Int),
    (" next_prio=", Val::Int),
];
const WAKE: &[(&str, Val)] = &[("comm=", Val::Text), (" pid=", Val::Int), (" prio=", Val::Int)];
const FORK: &[(&str, Val)] =
    &[("comm=", Val::Text), (" pid=", Val::Int), (" child_comm=", Val::Text), (" child_pid=", Val::Int)];
const EXEC: &[(&str, Val)] = &[("filename=", Val::Text), (" pid=", Val::Int), (" old_pid=", Val::Int)];
const MIGRATE: &[(&str, Val)] = &[
    ("comm=", Val::Text),
    (" pid=", Val::Int),
    (" prio=", Val::Int),
    (" orig_cpu=", Val::Int),
    (" dest_cpu=", Val::Int),
];

/// Parse the body of the known event `name`; `None` when it does not fit (a malformed line).
pub(crate) fn parse_body(name: &str, body: &str) -> Option<EventKind> {
    let body = body.trim();
    match name {
        "sched_switch" => switch_kv(body).or_else(|| switch_compact(body)).map(EventKind::Switch),
        "sched_wakeup" => wake(body).map(EventKind::Wakeup),
        "sched_wakeup_new" => wake(body).map(EventKind::WakeupNew),
        "sched_waking" => wake(body).map(EventKind::Waking),
        "sched_process_fork" => {
            let (v, _) = match_fields(body, FORK)?;
            Some(EventKind::Fork {
                parent_comm: v[0].into(),
                parent_pid: int(v[1])?,
                child_comm: v[2].into(),
                child_pid: int(v[3])?,
            })
        }
        "sched_process_exec" => {
            let (v, _) = match_fields(body, EXEC)?;
            Some(EventKind::Exec { filename: v[0].into(), pid: int(v[1])?, old_pid: int(v[2])? })
        }
        "sched_process_exit" => {
            // `group_dead=` (Linux ≥ 6.16) and anything newer is an extra field.
            let (v, _) = match_fields(body, &[("comm=", Val::Text), (" pid=", Val::Int), (" prio=", Val::Int)])?;
            Some(EventKind::Exit { comm: v[0].into(), pid: int(v[1])?, prio: int(v[2])? })
        }
        "sched_migrate_task" => {
            let (v, _) = match_fields(body, MIGRATE)?;
            Some(EventKind::Migrate {
                comm: v[0].into(),
                pid: int(v[1])?,
                prio: int(v[2])?,
                orig_cpu: int(v[3])?,
                dest_cpu: int(v[4])?,
            })
        }
        "sys_enter_clock_gettime" => clock_read(body),
        _ => None,
    }
}

/// `which_clock: 0x00000003, tp: 0x7ffd…` (tracefs, perf) or `which_clock=3 tp=…`.
fn clock_read(body: &str) -> Option<EventKind> {
    let v = body.strip_prefix("which_clock:").or_else(|| body.strip_prefix("which_clock="))?;
    let v = v.trim_start().split([',', ' ']).next()?;
    let which_clock = match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok()?,
        None => v.parse().ok()?,
    };
    Some(EventKind::ClockRead { which_clock })
}

fn switch_kv(body: &str) -> Option<Switch> {
    let (v, _) = match_fields(body, SWITCH)?;
    Some(Switch {
        prev_comm: v[0].into(),
        prev_pid: int(v[1])?,
        prev_prio: int(v[2])?,
        prev_state: v[3].into(),
        next_comm: v[4].into(),
        next_pid: int(v[5])?,
        next_prio: int(v[6])?,
    })
}

/// `comm:pid [prio]` (the compact form's task), from the right: the comm may contain `:`.
fn compact_task(s: &str) -> Option<(String, Pid, i32)> {
    let (who, prio) = s.strip_suffix(']')?.rsplit_once(" [")?;
    let (comm, pid) = who.rsplit_once(':')?;
    Some((comm.to_string(), int(pid)?, int(prio.trim())?))
}

/// `prev:pid [prio] STATE ==> next:pid [prio]`.
fn switch_compact(body: &str) -> Option<Switch> {
    body.match_indices(" ==> ").find_map(|(i, sep)| {
        let (left, right) = (&body[..i], &body[i + sep.len()..]);
        let (task, state) = left.rsplit_once(' ')?;
        let (prev_comm, prev_pid, prev_prio) = compact_task(task)?;
        let (next_comm, next_pid, next_prio) = compact_task(right)?;
        (!state.is_empty()).then(|| Switch {
            prev_comm,
            prev_pid,
            prev_prio,
            prev_state: state.into(),
            next_comm,
            next_pid,
            next_prio,
        })
    })
}

/// `comm=… pid=… prio=… target_cpu=…` (older kernels also had `success=1`), or the compact
/// `comm:pid [prio] CPU:001` (with `success=1` before `CPU:` in older plugins).
fn wake(body: &str) -> Option<Wake> {
    if let Some((v, tail)) = match_fields(body, WAKE) {
        let target_cpu = match extra(tail, "target_cpu") {
            Some(c) => Some(int(c)?),
            None => None,
        };
        return Some(Wake { comm: v[0].into(), pid: int(v[1])?, prio: int(v[2])?, target_cpu });
    }
    let (task, cpu) = match body.rsplit_once(" CPU:") {
        Some((t, c)) => (t, Some(int(c)?)),
        None => (body, None),
    };
    let task = task.strip_suffix(" success=1").unwrap_or(task);
    let (comm, pid, prio) = compact_task(task)?;
    Some(Wake { comm, pid, prio, target_cpu: cpu })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comm_with_keys_spaces_and_brackets() {
        let b = "prev_comm=a pid=3 [x] prev_pid=7 prev_prio=120 prev_state=S ==> next_comm=b ==> c next_pid=0 next_prio=120";
        let Some(EventKind::Switch(s)) = parse_body("sched_switch", b) else { panic!() };
        assert_eq!(s.prev_comm, "a pid=3 [x]");
        assert_eq!((s.prev_pid, s.prev_prio, s.prev_state.as_str()), (7, 120, "S"));
        assert_eq!((s.next_comm.as_str(), s.next_pid, s.next_prio), ("b ==> c", 0, 120));
        let Some(EventKind::Wakeup(w)) = parse_body("sched_wakeup", "comm=x y pid=2 prio=120 target_cpu=001") else {
            panic!()
        };
        assert_eq!((w.comm.as_str(), w.pid, w.prio, w.target_cpu), ("x y", 2, 120, Some(1)));
    }

    #[test]
    fn compact_forms() {
        let Some(EventKind::Switch(s)) = parse_body("sched_switch", "kworker/0:1:12 [120] R+ ==> a:b:3 [98]") else {
            panic!()
        };
        assert_eq!((s.prev_comm.as_str(), s.prev_pid, s.prev_state.as_str()), ("kworker/0:1", 12, "R+"));
        assert_eq!((s.next_comm.as_str(), s.next_pid, s.next_prio), ("a:b", 3, 98));
        let Some(EventKind::WakeupNew(w)) = parse_body("sched_wakeup_new", "sh:7336 [120] CPU:001") else { panic!() };
        assert_eq!((w.comm.as_str(), w.pid, w.prio, w.target_cpu), ("sh", 7336, 120, Some(1)));
        let Some(EventKind::Wakeup(w)) = parse_body("sched_wakeup", "sh:7 [120] success=1 CPU:000") else { panic!() };
        assert_eq!((w.pid, w.target_cpu), (7, Some(0)));
    }

    #[test]
    fn clock_reads() {
        let e = parse_body("sys_enter_clock_gettime", "which_clock: 0x00000003, tp: 0x7ffd3a1c0d40");
        assert_eq!(e, Some(EventKind::ClockRead { which_clock: 3 }));
        assert_eq!(
            parse_body("sys_enter_clock_gettime", "which_clock=2 tp=0"),
            Some(EventKind::ClockRead { which_clock: 2 })
        );
        assert!(parse_body("sys_enter_clock_gettime", "tp: 0x1").is_none());
    }

    #[test]
    fn extra_trailing_fields_are_tolerated_and_garbage_is_not() {
        let e = parse_body("sched_process_exit", "comm=ls pid=5 prio=120 group_dead=true").unwrap();
        assert_eq!(e, EventKind::Exit { comm: "ls".into(), pid: 5, prio: 120 });
        assert!(parse_body(
            "sched_switch",
            "prev_comm=a prev_pid=x prev_prio=1 prev_state=S ==> next_comm=b next_pid=1 next_prio=1"
        )
        .is_none());
        assert!(parse_body(
            "sched_switch",
            "prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=b next_pid="
        )
        .is_none());
        assert!(parse_body("sched_wakeup", "comm=a pid=1").is_none());
        assert!(parse_body("sched_process_exec", "filename=/bin/ls pid=1 old_pid=one").is_none());
    }
}
