//! tracefs `trace` / `trace_pipe` text: the `# tracer:` header block (whose
//! `entries-in-buffer/entries-written: N/M   #P:2` line gives the CPU count),
//! `##### CPU N buffer started ####` lines and `CPU:N [LOST M EVENTS]` markers around
//! `comm-pid [(tgid)] [CPU] [irq flags] SECS.USECS: event: fields` lines.

use super::{line, Other};

/// Classify a line that is not an event: a header/comment or a lost-events marker.
pub(crate) fn other_line(l: &str) -> Option<Other> {
    let t = l.trim_start();
    if let Some(c) = t.strip_prefix('#') {
        if let Some((_, p)) = c.rsplit_once("#P:") {
            if let Ok(n) = p.trim().parse() {
                return Some(Other::Cpus(n));
            }
        }
        return Some(Other::Header);
    }
    line::lost_marker(t).map(|(cpu, count)| Other::Lost { cpu, count })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_and_markers() {
        assert!(matches!(other_line("# tracer: nop"), Some(Other::Header)));
        assert!(matches!(other_line("##### CPU 1 buffer started ####"), Some(Other::Header)));
        assert!(matches!(other_line("# entries-in-buffer/entries-written: 73/73   #P:2"), Some(Other::Cpus(2))));
        assert!(matches!(other_line("CPU:1 [LOST 5 EVENTS]"), Some(Other::Lost { cpu: Some(1), count: Some(5) })));
        assert!(other_line("  sh-1 [000] d..2. 1.000001: sched_switch: prev_comm=a").is_none());
    }
}
