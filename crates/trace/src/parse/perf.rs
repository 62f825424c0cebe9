//! `perf script` text of sched tracepoints: `comm pid[/tid] [CPU] SECS.USECS: sched:event: fields`
//! (`--ns` gives nanoseconds), `#` header lines (with `--header`), and `PERF_RECORD_LOST`
//! lines (only with `--show-lost-events`; otherwise perf reports lost chunks on stderr, which
//! this parser never sees — check `perf script`'s warnings when recording under load).

use super::Other;

/// Classify a line that is not an event: a header/comment or a lost-records line.
pub(crate) fn other_line(l: &str) -> Option<Other> {
    let t = l.trim();
    if t.starts_with('#') {
        return Some(Other::Header);
    }
    if t.contains("PERF_RECORD_LOST") {
        // The count is the last number on the line.
        let count = t.split(|c: char| !c.is_ascii_digit()).rfind(|s| !s.is_empty()).and_then(|s| s.parse().ok());
        return Some(Other::Lost { cpu: None, count });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_and_markers() {
        assert!(matches!(other_line("# ========"), Some(Other::Header)));
        assert!(matches!(
            other_line("  perf 0 [000] 0.0: PERF_RECORD_LOST lost: 17"),
            Some(Other::Lost { cpu: None, count: Some(17) })
        ));
        assert!(other_line("  sh  7 [001]   1.5: sched:sched_waking: comm=a pid=1 prio=1 target_cpu=000").is_none());
    }
}
