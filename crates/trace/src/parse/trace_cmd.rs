//! `trace-cmd report` text: a `cpus=N` first line (and `version = N` in some versions),
//! `CPU N is empty` lines, lost-events markers, and event lines like tracefs's without the
//! irq flags (unless `-l`), each prefixed with the buffer instance name when recorded with
//! `-B`. sched_switch and sched_wakeup[_new] bodies come in libtraceevent's compact form.

use super::{line, Other};

/// Classify a line that is not an event: a header/comment or a lost-events marker.
pub(crate) fn other_line(l: &str) -> Option<Other> {
    let t = l.trim();
    if let Some(n) = t.strip_prefix("cpus=") {
        return n.trim().parse().ok().map(Other::Cpus);
    }
    if t.starts_with('#') || t.starts_with("version = ") || (t.contains("CPU ") && t.ends_with(" is empty")) {
        return Some(Other::Header);
    }
    line::lost_marker(t).map(|(cpu, count)| Other::Lost { cpu, count })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_and_markers() {
        assert!(matches!(other_line("cpus=2"), Some(Other::Cpus(2))));
        assert!(matches!(other_line("version = 6"), Some(Other::Header)));
        assert!(matches!(other_line("CPU 1 is empty"), Some(Other::Header)));
        assert!(matches!(other_line("inst: CPU 0 is empty"), Some(Other::Header)));
        assert!(matches!(other_line("CPU:0 [LOST 9 EVENTS]"), Some(Other::Lost { cpu: Some(0), count: Some(9) })));
        assert!(other_line("  sh-1  [000]  1.000001: sched_switch: a:1 [120] S ==> b:0 [120]").is_none());
    }
}
