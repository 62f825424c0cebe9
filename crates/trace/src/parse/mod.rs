//! Parsers for the three text forms of scheduler traces: tracefs `trace`/`trace_pipe`,
//! `perf script` and `trace-cmd report`. Every line is accounted for in [`ParseStats`]: an
//! event, a known header or comment, a blank line, an event schedlab does not use (counted by
//! name), a malformed or truncated line (counted, first examples kept with line numbers), or a
//! lost-events marker. Nothing is dropped silently.

mod fields;
mod line;
pub mod perf;
pub mod trace_cmd;
pub mod tracefs;

use crate::event::{Event, KNOWN_EVENTS};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Which text format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// The tracefs `trace` or `trace_pipe` file.
    Tracefs,
    /// `perf script` output of `perf record -e 'sched:*'` / `perf sched record`.
    Perf,
    /// `trace-cmd report` output.
    TraceCmd,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "tracefs" => Ok(Format::Tracefs),
            "perf" | "perf-script" => Ok(Format::Perf),
            "trace-cmd" | "trace_cmd" => Ok(Format::TraceCmd),
            _ => Err(format!("unknown trace format '{s}' (tracefs, perf, trace-cmd)")),
        }
    }
}

/// How many malformed lines are kept as examples.
pub const MAX_EXAMPLES: usize = 8;

/// A line that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BadLine {
    /// 1-based.
    pub line: usize,
    pub text: String,
    pub why: String,
}

/// A lost-events marker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lost {
    pub line: usize,
    pub cpu: Option<usize>,
    /// Events lost, when the marker says.
    pub count: Option<u64>,
}

/// What a parse saw. `lines` = `events` + `headers` + `blank` + Σ`unknown_events` +
/// `malformed` + `lost.len()`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ParseStats {
    pub lines: usize,
    /// Lines turned into events.
    pub events: usize,
    /// Events by tracepoint name.
    pub by_kind: BTreeMap<String, usize>,
    /// Known header and comment lines.
    pub headers: usize,
    pub blank: usize,
    /// Well-formed lines of events schedlab does not use, by name (`sched_stat_runtime`, …).
    pub unknown_events: BTreeMap<String, usize>,
    pub malformed: usize,
    /// The first [`MAX_EXAMPLES`] malformed lines.
    pub malformed_examples: Vec<BadLine>,
    pub lost: Vec<Lost>,
    /// CPU count when a header gives it (`#P:2`, `cpus=2`).
    pub cpus: Option<usize>,
}

impl ParseStats {
    /// Events lost according to the markers (markers without a count add nothing).
    pub fn lost_events(&self) -> u64 {
        self.lost.iter().filter_map(|l| l.count).sum()
    }

    fn bad(&mut self, line: usize, text: &str, why: impl Into<String>) {
        self.malformed += 1;
        if self.malformed_examples.len() < MAX_EXAMPLES {
            self.malformed_examples.push(BadLine { line, text: text.to_string(), why: why.into() });
        }
    }
}

/// A parsed trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parsed {
    pub format: Format,
    /// In file order (each file is in time order; see [`crate::timeline`] for ties).
    pub events: Vec<Event>,
    pub stats: ParseStats,
}

/// What a format says about a line that is not an event.
pub(crate) enum Other {
    Header,
    /// A header that gives the CPU count.
    Cpus(usize),
    Lost {
        cpu: Option<usize>,
        count: Option<u64>,
    },
}

/// Guess the format from the first lines: trace-cmd's `cpus=` header, tracefs's `# tracer:`,
/// perf's `system:event` names, trace-cmd's compact sched_switch bodies; tracefs otherwise.
pub fn detect(text: &str) -> Format {
    for l in text.lines().take(500) {
        let t = l.trim();
        if t.starts_with("cpus=") || t.starts_with("version = ") {
            return Format::TraceCmd;
        }
        if t.starts_with("# tracer:") {
            return Format::Tracefs;
        }
        if let Ok(h) = line::split(l) {
            if h.system.is_some() {
                return Format::Perf;
            }
            if h.name == "sched_switch" {
                return if h.body.starts_with("prev_comm=") { Format::Tracefs } else { Format::TraceCmd };
            }
        }
    }
    Format::Tracefs
}

/// Parse `text` in `format`, or the detected one when `None`.
pub fn parse(text: &str, format: Option<Format>) -> Parsed {
    let format = format.unwrap_or_else(|| detect(text));
    let other: fn(&str) -> Option<Other> = match format {
        Format::Tracefs => tracefs::other_line,
        Format::Perf => perf::other_line,
        Format::TraceCmd => trace_cmd::other_line,
    };
    let mut stats = ParseStats::default();
    let mut events = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let n = i + 1;
        stats.lines += 1;
        if l.trim().is_empty() {
            stats.blank += 1;
            continue;
        }
        match other(l) {
            Some(Other::Header) => {
                stats.headers += 1;
                continue;
            }
            Some(Other::Cpus(c)) => {
                stats.headers += 1;
                stats.cpus = Some(c);
                continue;
            }
            Some(Other::Lost { cpu, count }) => {
                stats.lost.push(Lost { line: n, cpu, count });
                continue;
            }
            None => {}
        }
        let head = match line::split(l) {
            Ok(h) => h,
            Err(line::HeadError::NoEvent) => {
                stats.bad(n, l, "no `SECS.FRAC: event:` (not an event line, or truncated)");
                continue;
            }
            Err(line::HeadError::NoCpu) => {
                stats.bad(n, l, "no [CPU] column before the time");
                continue;
            }
        };
        if !KNOWN_EVENTS.contains(&head.name) {
            *stats.unknown_events.entry(head.name.to_string()).or_default() += 1;
            continue;
        }
        match fields::parse_body(head.name, head.body) {
            Some(kind) => {
                stats.events += 1;
                *stats.by_kind.entry(head.name.to_string()).or_default() += 1;
                events.push(Event { ts: head.ts, cpu: head.cpu, line: n, kind, task: head.task, irq: head.irq });
            }
            None => stats.bad(n, l, format!("{} fields do not parse (truncated?)", head.name)),
        }
    }
    Parsed { format, events, stats }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_name() {
        assert_eq!("perf".parse::<Format>(), Ok(Format::Perf));
        assert_eq!("trace-cmd".parse::<Format>(), Ok(Format::TraceCmd));
        assert!("ftrace".parse::<Format>().is_err());
    }

    #[test]
    fn detection() {
        assert_eq!(detect("# tracer: nop\n"), Format::Tracefs);
        assert_eq!(detect("cpus=2\n"), Format::TraceCmd);
        assert_eq!(
            detect("  sh  7 [001]   1.5: sched:sched_waking: comm=a pid=1 prio=1 target_cpu=000\n"),
            Format::Perf
        );
        assert_eq!(detect("  sh-7 [001]   1.5: sched_switch: a:1 [120] S ==> b:2 [120]\n"), Format::TraceCmd);
        assert_eq!(
            detect("  sh-7 [001] d..2.  1.5: sched_switch: prev_comm=a prev_pid=1 prev_prio=1 prev_state=S ==> next_comm=b next_pid=0 next_prio=1\n"),
            Format::Tracefs
        );
        assert_eq!(detect(""), Format::Tracefs);
    }
}
