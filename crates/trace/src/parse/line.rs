//! The part of an event line all three text formats share: `<task> [CPU] <flags?> SECS.FRAC: <event>: <body>`.
//! tracefs and trace-cmd write the task as `comm-pid` (trace-cmd may prefix an instance name,
//! tracefs may add a `(tgid)` column and irq flags); perf script writes `comm pid[/tid]` and
//! prefixes the event with its system (`sched:sched_switch`). Only the CPU, the time, the
//! event name and the body are used: the body names the tasks.

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

/// Split an event line. The event is the first `name:` that follows a `SECS.FRAC: ` token.
pub(crate) fn split(line: &str) -> Result<Head<'_>, HeadError> {
    for (i, _) in line.match_indices(": ") {
        let before = &line[..i];
        let tok_start = before.rfind(char::is_whitespace).map_or(0, |p| p + 1);
        let Some(ts) = parse_ts(&before[tok_start..]) else { continue };
        let after = line[i + 2..].trim_start();
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
        let cpu = cpu_of(&before[..tok_start]).ok_or(HeadError::NoCpu)?;
        return Ok(Head { cpu, ts, name, system, body: after[tok_end..].trim_start() });
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
        assert!(matches!(split("# tracer: nop"), Err(HeadError::NoEvent)));
        assert!(matches!(split("  bash-1234  [001] d..2.  5.12"), Err(HeadError::NoEvent)));
    }

    #[test]
    fn lost_markers() {
        assert_eq!(lost_marker("CPU:1 [LOST 123 EVENTS]"), Some((Some(1), Some(123))));
        assert_eq!(lost_marker("inst: CPU:0 [7 EVENTS DROPPED]"), Some((Some(0), Some(7))));
        assert_eq!(lost_marker("  bash-1 [001] 1.0: sched_switch: x"), None);
    }
}
