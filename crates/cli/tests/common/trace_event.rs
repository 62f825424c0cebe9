//! A checker for the Chrome Trace Event format, written from the format's description and
//! independent of the writer it checks (`schedlab_report::trace_event`).

use serde_json::Value;

/// Whether `doc` follows the Trace Event format as Perfetto and chrome://tracing read it:
/// every event has `ph`, `pid`, `tid` and `name`; timed events a numeric `ts`, monotonic within
/// their track; complete events a `dur` ≥ 0; every `B` is closed by an `E` on its track; every
/// track with events is named. Returns the first breach.
pub fn check_format(doc: &Value) -> Result<(), String> {
    let events = doc["traceEvents"].as_array().ok_or("no traceEvents array")?;
    let mut last_ts: std::collections::HashMap<(u64, u64), f64> = Default::default();
    let mut open: std::collections::HashMap<(u64, u64), Vec<String>> = Default::default();
    let mut named = std::collections::HashSet::new();
    let mut used = std::collections::HashSet::new();
    for (i, e) in events.iter().enumerate() {
        let ph = e["ph"].as_str().ok_or(format!("event {i} has no ph: {e}"))?;
        let track = (
            e["pid"].as_u64().ok_or(format!("event {i}: no pid"))?,
            e["tid"].as_u64().ok_or(format!("event {i}: no tid"))?,
        );
        let name = e["name"].as_str().ok_or(format!("event {i}: no name"))?;
        if ph == "M" {
            if name == "thread_name" {
                named.insert(track);
            }
            continue;
        }
        let ts = e["ts"].as_f64().ok_or(format!("event {i}: no numeric ts"))?;
        let prev = last_ts.insert(track, ts).unwrap_or(f64::MIN);
        if ts < prev {
            return Err(format!("event {i}: ts {ts} before {prev} on track {track:?}"));
        }
        used.insert(track);
        match ph {
            "X" => {
                let dur = e["dur"].as_f64().ok_or(format!("event {i}: complete event without dur"))?;
                if dur < 0.0 {
                    return Err(format!("event {i}: negative dur"));
                }
            }
            "B" => open.entry(track).or_default().push(name.to_string()),
            "E" => {
                open.entry(track).or_default().pop().ok_or(format!("event {i}: E without B"))?;
            }
            "i" | "I" => {}
            other => return Err(format!("event {i}: phase {other} not expected here")),
        }
    }
    if let Some((t, names)) = open.iter().find(|(_, v)| !v.is_empty()) {
        return Err(format!("track {t:?}: B never closed: {names:?}"));
    }
    if let Some(t) = used.difference(&named).next() {
        return Err(format!("track {t:?} has events but no thread_name"));
    }
    Ok(())
}
