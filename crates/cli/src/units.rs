//! Parsing human-readable durations ("10ms", "1.5s") and sizes ("5MiB") for clap arguments,
//! with errors that name the offending value; and de-duplicating list arguments.

use std::time::Duration;

/// A positive duration such as `10ms`, `250us`, `1.5s` (a bare number is rejected: say the unit).
pub fn positive_duration(s: &str) -> Result<Duration, String> {
    let d = duration(s)?;
    if d.is_zero() {
        return Err(format!("'{s}' must be greater than zero"));
    }
    Ok(d)
}

/// The longest duration any argument takes: a live run or a simulated span of a day is already
/// far past what a laboratory run is for, and the bound keeps `1e99s` an error, not a panic.
pub const LONGEST: Duration = Duration::from_secs(24 * 3600);

/// A duration such as `10ms`, `1.5s`, `0s`, at most [`LONGEST`]. Negative and longer values are
/// rejected with the value named.
pub fn duration(s: &str) -> Result<Duration, String> {
    let d = unbounded_duration(s)?;
    if d > LONGEST {
        return Err(format!("'{s}' is longer than the longest duration schedlab takes (24h)"));
    }
    Ok(d)
}

fn unbounded_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(format!("'{s}' is negative; durations must be positive, e.g. 10ms"));
    }
    if let Some((num, unit)) = split_number(t) {
        let scale = match unit {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            "" => return Err(format!("'{s}' has no unit; write e.g. 10ms, 250us or 2s")),
            _ => return humantime::parse_duration(t).map_err(|e| format!("'{s}' is not a duration ({e})")),
        };
        // An overflowing or infinite number is past any bound: the caller says so.
        return Ok(Duration::try_from_secs_f64(num * scale).unwrap_or(Duration::MAX));
    }
    humantime::parse_duration(t).map_err(|e| format!("'{s}' is not a duration like 10ms or 1.5s ({e})"))
}

/// A time window `FROM..TO` such as `10ms..60ms` (FROM may be empty: from 0); TO must be
/// after FROM.
pub fn window(s: &str) -> Result<(Duration, Duration), String> {
    let (from, to) = s.split_once("..").ok_or_else(|| format!("'{s}' is not a window like 10ms..60ms"))?;
    let from = if from.trim().is_empty() { Duration::ZERO } else { duration(from)? };
    let to = duration(to)?;
    if to <= from {
        return Err(format!("'{s}': the end must come after the start"));
    }
    Ok((from, to))
}

/// A size such as `5MiB`, `64KiB`, `4096` (bytes), `1GB`.
pub fn size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, unit) = split_number(t).ok_or_else(|| format!("'{s}' is not a size like 5MiB or 4096"))?;
    if num < 0.0 {
        return Err(format!("'{s}' is negative"));
    }
    let scale = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "kib" => 1024.0,
        "m" | "mb" => 1e6,
        "mib" => 1024.0 * 1024.0,
        "g" | "gb" => 1e9,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("'{s}' has an unknown unit '{unit}' (use B, KiB, MiB, GiB, kB, MB, GB)")),
    };
    Ok((num * scale).round() as u64)
}

/// A list argument with repeats removed, first occurrences kept in order
/// (`--queues delta,control,delta` runs delta once).
pub fn unique<T: PartialEq>(v: Vec<T>) -> Vec<T> {
    let mut out = Vec::new();
    for x in v {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

fn split_number(t: &str) -> Option<(f64, &str)> {
    let end =
        t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-' || c == '+')).unwrap_or(t.len());
    // "e" could start a unit name; only treat it as an exponent when digits follow.
    let (mut num, mut unit) = t.split_at(end);
    if num.ends_with('e') {
        num = &t[..end - 1];
        unit = &t[end - 1..];
    }
    num.parse::<f64>().ok().map(|n| (n, unit.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration("10ms").unwrap(), Duration::from_millis(10));
        assert_eq!(duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(duration("250us").unwrap(), Duration::from_micros(250));
        assert!(duration("-1ms").unwrap_err().contains("-1ms"));
        assert!(duration("10").unwrap_err().contains("no unit"));
        assert!(positive_duration("0ms").unwrap_err().contains("0ms"));
        assert!(duration("fast").is_err());
        assert_eq!(duration("24h").unwrap(), LONGEST);
        for huge in ["1e99s", "1e400s", "25h", "2days", "86400.001s"] {
            assert!(duration(huge).unwrap_err().contains("longer than"), "{huge}");
        }
    }

    #[test]
    fn unique_keeps_first_occurrences_in_order() {
        assert_eq!(unique(vec![3, 1, 3, 2, 1]), vec![3, 1, 2]);
    }

    #[test]
    fn sizes() {
        assert_eq!(size("5MiB").unwrap(), 5 * 1024 * 1024);
        assert_eq!(size("4096").unwrap(), 4096);
        assert_eq!(size("1kB").unwrap(), 1000);
        assert!(size("3 parsecs").is_err());
    }
}
