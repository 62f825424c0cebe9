//! The part of an event line all three text formats share: `<task> [CPU] <flags?> SECS.FRAC: <event>: <body>`.
//! tracefs and trace-cmd write the task as `comm-pid` (trace-cmd may prefix an instance name,
//! tracefs may add a `(tgid)` column and irq flags); perf script writes `comm pid[/tid]` and
//! prefixes the event with its system (`sched:sched_switch`). The body names the tasks an event
//! is about; the task column names the task that was running on the CPU when it was recorded
//! (the waker, for a wake-up given from task context), and tracefs's irq-flags column says
//! whether it was recorded in an interrupt.

/// An event line split into its parts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Head<'a> {
    pub cpu: usize,
    pub ts: u64,
    /// Event name without the system prefix.
    pub name: &'a str,
    /// `sched` of `sched:sched_switch` (perf script), when given.
    pub system: Option<&'a str>,
    pub body: &'a str,
    /// The task column's pid (thread id): the task current on the CPU.
    pub task: Option<i32>,
    /// From the irq-flags column (tracefs, `trace-cmd report -l`): recorded in a hard or soft
    /// interrupt or an NMI (true) or in task context (false). None without the column.
    pub irq: Option<bool>,
}

/// Why an event-looking line could not be split.
pub(crate) enum HeadError {
    /// No `SECS.FRAC: name:` anywhere: not an event line at all.
    NoEvent,
    /// An event name was found but the part before it has no `[CPU]`.
    NoCpu,
}

/// `SECS.FRAC` (1..=9 fraction digits) → ns.
pub(crate) fn parse_ts(s: &str) -> Option<u64> {
    let (secs, frac) = s.split_once('.')?;
    if secs.is_empty()
        || frac.is_empty()
        || frac.len() > 9
        || !(secs.bytes().chain(frac.bytes())).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let frac_ns: u64 = frac.parse::<u64>().ok()? * 10u64.pow(9 - frac.len() as u32);
    secs.parse::<u64>().ok()?.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// Split an event line. The event is the first `name:` that follows a `SECS.FRAC: ` token; a
/// syscall-entry event, which tracefs prints as `sys_NAME(ARGS)`, is named `sys_enter_NAME`
/// with the arguments as its body.
pub(crate) fn split(line: &str) -> Result<Head<'_>, HeadError> {
    for (i, _) in line.match_indices(": ") {
        let before = &line[..i];
        let tok_start = before.rfind(char::is_whitespace).map_or(0, |p| p + 1);
        let Some(ts) = parse_ts(&before[tok_start..]) else { continue };
        let after = line[i + 2..].trim_start();
        if let Some((name, body)) = syscall_entry(after) {
            let head = &before[..tok_start];
            let cpu = cpu_of(head).ok_or(HeadError::NoCpu)?;
            let (task, irq) = task_and_flags(head);
            return Ok(Head { cpu, ts, name, system: None, body, task, irq });
        }
        let tok_end = after.find(char::is_whitespace).unwrap_or(after.len());
        let Some(full) = after[..tok_end].strip_suffix(':') else { continue };
        if full.is_empty() || !full.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':') {
            continue;
        }
        let (system, name) = match full.rsplit_once(':') {
            Some((sys, name)) => (Some(sys), name),
            None => (None, full),
        };
        if name.is_empty() {
            continue;
        }
        let head = &before[..tok_start];
        let cpu = cpu_of(head).ok_or(HeadError::NoCpu)?;
        let (task, irq) = task_and_flags(head);
        return Ok(Head { cpu, ts, name, system, body: after[tok_end..].trim_start(), task, irq });
    }
    Err(HeadError::NoEvent)
}

/// The `[NNN]` CPU column: the last or next-to-last token (irq flags may follow it), with a
/// task column before it.
fn cpu_of(head: &str) -> Option<usize> {
    let toks: Vec<&str> = head.split_whitespace().collect();
    let n = toks.len();
    for back in 1..=2.min(n) {
        let t = toks[n - back];
        if let Some(num) = t.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
            // Something (the task) must come before the CPU.
            return (n - back > 0 && !num.is_empty() && num.bytes().all(|b| b.is_ascii_digit()))
                .then(|| num.parse().ok())
                .flatten();
        }
    }
    None
}

/// `sys_clock_gettime(which_clock: 3, tp: 0x…)` → (`sys_enter_clock_gettime`, the arguments);
/// other syscall entries keep their printed name (`sys_read`: an event schedlab does not use).
fn syscall_entry(after: &str) -> Option<(&str, &str)> {
    let (call, rest) = after.split_once('(')?;
    if !call.starts_with("sys_") || !call.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    let name = if call == "sys_clock_gettime" { "sys_enter_clock_gettime" } else { call };
    Some((name, rest.trim_end().strip_suffix(')')?))
}

/// The task column's pid and the irq context, from the part of a line before its time:
/// `comm-pid [(tgid)] [CPU] [flags]` (tracefs, trace-cmd) or `comm pid[/tid] [CPU]` (perf).
fn task_and_flags(head: &str) -> (Option<i32>, Option<bool>) {
    let toks: Vec<&str> = head.split_whitespace().collect();
    let Some(c) = toks.iter().rposition(|t| t.starts_with('[') && t.ends_with(']') && t.len() > 2) else {
        return (None, None);
    };
    let irq = toks.get(c + 1).and_then(|f| irq_flag(f));
    // The task is the last token before the CPU that is not the `(tgid)` column.
    let mut k = c;
    while k > 0 && (toks[k - 1].ends_with(')') || toks[k - 1].starts_with('(')) {
        k -= 1;
    }
    let task = k.checked_sub(1).and_then(|k| {
        let t = toks[k];
        let pid = match t.rsplit_once('-') {
            Some((_, p)) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => p,
            // perf: `pid` or `pid/tid`.
            _ => t.rsplit('/').next().unwrap_or(t),
        };
        pid.parse().ok()
    });
    (task, irq)
}

/// The irq-flags column (`d.h2.`, `dNs1.`, `....`): its third character is `h`/`H` (hard
/// interrupt), `s` (softirq), `z`/`Z` (NMI) or `.` (task context). None if it is not the column.
fn irq_flag(f: &str) -> Option<bool> {
    let b = f.as_bytes();
    if !(4..=6).contains(&b.len()) || !b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'.') {
        return None;
    }
    Some(matches!(b[2], b'h' | b'H' | b's' | b'z' | b'Z'))
}

/// `CPU:N [LOST M EVENTS]` (tracefs, trace-cmd) or `CPU:N [M EVENTS DROPPED]`, possibly after
/// an instance prefix: the CPU and the count.
pub(crate) fn lost_marker(line: &str) -> Option<(Option<usize>, Option<u64>)> {
    let (left, right) = line.split_once('[')?;
    let right = right.trim_end().strip_suffix(']')?;
    let count = if let Some(r) = right.strip_prefix("LOST ") {
        r.strip_suffix(" EVENTS")?
    } else {
        right.strip_suffix(" EVENTS DROPPED")?
    };
    let cpu = left.trim_end().rsplit_once("CPU:").and_then(|(_, c)| c.trim().parse().ok());
    Some((cpu, count.trim().parse().ok()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(line: &str) -> Head<'_> {
        split(line).unwrap_or_else(|_| panic!("no split: {line}"))
    }

    #[test]
    fn times_to_ns() {
        assert_eq!(parse_ts("5.123456"), Some(5_123_456_000));
        assert_eq!(parse_ts("5.123456789"), Some(5_123_456_789));
        assert_eq!(parse_ts("0.5"), Some(500_000_000));
        assert_eq!(parse_ts("5."), None);
        assert_eq!(parse_ts("5.1234567890"), None);
        assert_eq!(parse_ts("x.1"), None);
    }

    #[test]
    fn heads_of_every_format() {
        let h = ok("  bash-1234  [001] d..2.  5.123456: sched_switch: prev_comm=bash");
        assert_eq!((h.cpu, h.ts, h.name, h.system, h.body), (1, 5_123_456_000, "sched_switch", None, "prev_comm=bash"));
        let h = ok("  a b: 1.5: x-7 (   7) [000]    629.546676: sched_wakeup: comm=x");
        assert_eq!((h.cpu, h.ts, h.name), (0, 629_546_676_000, "sched_wakeup"));
        let h = ok("  sh  7099 [001]   593.446645:   sched:sched_wakeup_new: comm=sh pid=7101");
        assert_eq!((h.cpu, h.name, h.system, h.body), (1, "sched_wakeup_new", Some("sched"), "comm=sh pid=7101"));
        let h = ok("inst-1:   sh-7335  [001]   625.646181: sched_wakeup_new:     sh:7336 [120] CPU:001");
        assert_eq!((h.cpu, h.name, h.body), (1, "sched_wakeup_new", "sh:7336 [120] CPU:001"));
        assert!(matches!(split("  bash-1234  5.123456: sched_switch: x"), Err(HeadError::NoCpu)));
        assert!(matches!(split("  bash-1234  [001] d..2.  5.12"), Err(HeadError::NoEvent)));
        assert!(matches!(split("# tracer: nop"), Err(HeadError::NoEvent)));
        assert!(matches!(split("  bash-1234  [001] d..2.  5.12"), Err(HeadError::NoEvent)));
    }

    #[test]
    fn syscall_entries_in_tracefs_form() {
        let h = ok(
            "        schedlab-2647    [001] .....  7826.781571: sys_clock_gettime(which_clock: 3, tp: 0x7fff4bc87a60)",
        );
        assert_eq!(
            (h.name, h.body, h.task, h.cpu),
            ("sys_enter_clock_gettime", "which_clock: 3, tp: 0x7fff4bc87a60", Some(2647), 1)
        );
        assert_eq!(ok("  x-1 [000] ..... 1.5: sys_read(fd: 3)").name, "sys_read");
    }

    #[test]
    fn the_current_task_and_the_irq_context() {
        let h = ok("            pong-26783   [001] d..2.  6219.577856: sched_waking: comm=schedlab pid=26781");
        assert_eq!((h.task, h.irq), (Some(26783), Some(false)));
        let h = ok("          <idle>-0       [000] d.h3.  6237.029507: sched_waking: comm=schedlab pid=1");
        assert_eq!((h.task, h.irq), (Some(0), Some(true)));
        let h = ok("   memfd:sealed-91-1470  [000] dNs1.  1.5: sched_waking: comm=x pid=2");
        assert_eq!((h.task, h.irq), (Some(1470), Some(true)));
        let h = ok("  a b: 1.5: x-7 (   7) [000]    629.546676: sched_wakeup: comm=x");
        assert_eq!((h.task, h.irq), (Some(7), None));
        let h = ok("  sh  7099/7100 [001]   593.446645:   sched:sched_wakeup_new: comm=sh pid=7101");
        assert_eq!((h.task, h.irq), (Some(7100), None));
        let h = ok("inst-1:   sh-7335  [001]   625.646181: sched_wakeup_new:     sh:7336 [120] CPU:001");
        assert_eq!((h.task, h.irq), (Some(7335), None));
    }

    #[test]
    fn lost_markers() {
        assert_eq!(lost_marker("CPU:1 [LOST 123 EVENTS]"), Some((Some(1), Some(123))));
        assert_eq!(lost_marker("inst: CPU:0 [7 EVENTS DROPPED]"), Some((Some(0), Some(7))));
        assert_eq!(lost_marker("  bash-1 [001] 1.0: sched_switch: x"), None);
    }
}
