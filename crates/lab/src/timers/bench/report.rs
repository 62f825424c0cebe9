//! The bench as a report section: one long table (size × implementation: ns per insert, per
//! cancel, per expiry, Mops/s, ours/best peer), the per-operation comparison at the largest
//! size, and the goal verdict — our wheel ≥ 1.0× the best peer's throughput there — with a
//! note naming each operation our wheel loses and why, from the winning peer's design.

use super::{Params, IMPLEMENTATIONS, OPERATIONS, PEERS};
use schedlab_report::section::{DataFile, Section, Table, Verdict};
use serde_json::Value;

/// Why `peer` can beat our wheel (64-slot levels that cascade, lazy cancel) at `op`, from its design.
pub fn why(peer: &str, op: &str) -> &'static str {
    match (peer, op) {
        ("bitwheel", "insert") => {
            "bitwheel files a timer into a slot array allocated up front (setup, untimed): a free-list pop and a \
             list link, no allocation and no handle generation"
        }
        ("bitwheel", "cancel") => {
            "bitwheel unlinks the entry from its slot's intrusive list in place, with no handle check beyond the \
             deadline"
        }
        ("bitwheel", "expiry") => {
            "bitwheel never cascades: a timer stays in the slot it was filed in and fires when that slot comes up \
             (up to 63 ms early in gear 1, 4,095 ms in gear 2), so no entry is ever moved, while our wheel re-files \
             each far timer once per level so that it fires on its deadline's tick"
        }
        ("hierarchical_hash_wheel_timer", "cancel") => {
            "hierarchical_hash_wheel_timer's cancel only removes the id from a hash map; the wheel's entry is \
             dropped when its slot comes up, in the expiry phase"
        }
        ("hierarchical_hash_wheel_timer", "insert") => {
            "hierarchical_hash_wheel_timer appends to one of 256 slot lists of its first two byte wheels (plus an \
             Rc and a hash-map entry)"
        }
        ("hierarchical_hash_wheel_timer", _) => {
            "hierarchical_hash_wheel_timer's wheels have 256 slots, so 10,000 ms spans two levels and a far timer \
             is moved once before it fires, where our 64-slot levels move it twice"
        }
        ("std_binaryheap", "cancel") => {
            "std's BinaryHeap is cancelled lazily: a flag is set and the entry is popped and skipped in the expiry \
             phase"
        }
        ("std_binaryheap", "insert") => {
            "std's BinaryHeap pushes onto one contiguous array and, with random deadlines, sifts up only a level \
             or two on average"
        }
        ("std_binaryheap", _) => "std's BinaryHeap pops from one contiguous array, with no ticks to walk",
        ("tokio_delayqueue", "insert") => {
            "DelayQueue links the entry at the head of its slot's intrusive list, so slot lists never grow"
        }
        ("tokio_delayqueue", "cancel") => {
            "DelayQueue unlinks the entry from its slot's doubly-linked list and frees its slab slot at once"
        }
        ("tokio_delayqueue", _) => "DelayQueue is a 64-slot hierarchical wheel like ours, with 6 levels",
        _ => "",
    }
}

fn ns_cell(v: &Value) -> String {
    v.as_f64().map(|ns| if ns >= 100.0 { format!("{ns:.0}") } else { format!("{ns:.1}") }).unwrap_or("n/a".into())
}

/// The operations our wheel loses at one size's document against the best peer overall:
/// `(op, our ns, peer ns)`.
pub fn losing_ops(size: &Value) -> Vec<(&'static str, f64, f64)> {
    OPERATIONS
        .into_iter()
        .filter_map(|op| {
            let c = &size["per_op"][op];
            let (ours, peer) = (c["schedlab_wheel_ns"].as_f64()?, c["best_peer_ns"].as_f64()?);
            (ours > peer).then_some((op, ours, peer))
        })
        .collect()
}

/// Where our wheel loses at the verdict size and why, in words (empty if it loses nowhere).
pub fn losing_note(data: &Value) -> String {
    let best = data["best_peer"].as_str().unwrap_or("");
    let n = data["verdict_timers"].as_u64().unwrap_or(0);
    let parts: Vec<String> = losing_ops(data)
        .into_iter()
        .map(|(op, ours, peer)| format!("{op} ({ours:.1} ns vs {peer:.1} ns: {})", why(best, op)))
        .collect();
    if parts.is_empty() {
        return String::new();
    }
    format!("At N = {n} our wheel loses to {best} on {}.", parts.join("; "))
}

/// `schedlab timers bench` as a section.
pub fn section(p: &Params, data: Value) -> Section {
    let sizes = data["by_size"].as_array().cloned().unwrap_or_default();
    let mut t = Table::new(
        format!(
            "ns per operation by pending timers N (deadlines 1..{} ms, {:.0}% cancelled, 1 ms ticks; median of {} rounds)",
            p.max_deadline_ms,
            p.cancel_fraction * 100.0,
            p.rounds
        ),
        &["timers", "implementation", "ns/insert", "ns/cancel", "ns/expiry", "Mops/s", "ours/best peer"],
    )
    .with_note(
        "ns/expiry is the whole expiry phase (every 1 ms tick, cascades, lazily cancelled entries skipped) over \
         the timers that expired, so at small N it is mostly the cost of ticking. Mops/s counts inserts + cancels \
         + expiries over the three phases; building the empty structure is not counted (bitwheel preallocates its \
         slots there). ours/best peer is our Mops/s over the best peer's at that N.",
    );
    let mut rows = vec![];
    for size in &sizes {
        let n = size["timers"].as_u64().unwrap_or(0);
        let best = size["best_peer"].as_str().unwrap_or("");
        let best_mops = size["implementations"][best]["mops"].as_f64().unwrap_or(f64::NAN);
        for name in IMPLEMENTATIONS {
            let e = &size["implementations"][name];
            let mops = e["mops"].as_f64();
            let ratio = match (PEERS.contains(&name), mops) {
                (_, None) => "not run".to_string(),
                (true, _) if name == best => "best peer".to_string(),
                (true, _) => "peer".to_string(),
                (false, Some(m)) => format!("{:.2}×", m / best_mops),
            };
            let cells = vec![
                n.to_string(),
                name.to_string(),
                ns_cell(&e["ns_per_insert"]),
                ns_cell(&e["ns_per_cancel"]),
                ns_cell(&e["ns_per_expiry"]),
                mops.map(|m| format!("{m:.2}")).unwrap_or("n/a".into()),
                ratio.clone(),
            ];
            t.row(cells);
            rows.push(vec![
                n.to_string(),
                name.to_string(),
                PEERS.contains(&name).to_string(),
                e["ns_per_insert"].as_f64().map(|v| v.to_string()).unwrap_or_default(),
                e["ns_per_cancel"].as_f64().map(|v| v.to_string()).unwrap_or_default(),
                e["ns_per_expiry"].as_f64().map(|v| v.to_string()).unwrap_or_default(),
                mops.map(|v| v.to_string()).unwrap_or_default(),
                e["median_s"].as_f64().map(|v| v.to_string()).unwrap_or_default(),
                e["median_setup_s"].as_f64().map(|v| v.to_string()).unwrap_or_default(),
                if PEERS.contains(&name) {
                    String::new()
                } else {
                    mops.map(|m| (m / best_mops).to_string()).unwrap_or_default()
                },
            ]);
        }
    }
    let n = data["verdict_timers"].as_u64().unwrap_or(0);
    let best = data["best_peer"].as_str().unwrap_or("").to_string();
    let mut per_op = Table::new(
        format!("Per operation at N = {n}: our wheel beside the best peer ({best}) and the fastest peer at each"),
        &[
            "operation",
            "our wheel ns",
            "best peer ns",
            "ours vs best peer",
            "fastest peer",
            "its ns",
            "ours vs fastest",
        ],
    )
    .with_note("ours vs X = X's ns over ours: above 1× our wheel is faster at that operation.");
    for op in OPERATIONS {
        let c = &data["per_op"][op];
        let x = |v: &Value| v.as_f64().map(|r| format!("{r:.2}×")).unwrap_or("n/a".into());
        per_op.row(vec![
            op.to_string(),
            ns_cell(&c["schedlab_wheel_ns"]),
            ns_cell(&c["best_peer_ns"]),
            x(&c["wheel_vs_best_peer"]),
            c["fastest_peer"].as_str().unwrap_or("n/a").to_string(),
            ns_cell(&c["fastest_peer_ns"]),
            x(&c["wheel_vs_fastest_peer"]),
        ]);
    }
    let ratio = data["wheel_vs_best_peer"].as_f64().unwrap_or(f64::NAN);
    let note = losing_note(&data);
    let bw = &data["implementations"]["bitwheel"]["config"];
    let bitwheel = match bw["not_run"].as_str() {
        Some(why) => format!("bitwheel did not run at N = {n}: {why}."),
        None => format!(
            "bitwheel at N = {n}: SLOT_CAP {} for a densest slot of {}, {:.0} MB preallocated; it fired {} of the \
             timers early (by up to {} ms), as its design does.",
            bw["slot_cap"],
            bw["densest_slot"],
            bw["preallocated_mb"].as_f64().unwrap_or(0.0),
            bw["fired_early"],
            bw["max_early_ms"]
        ),
    };
    let mut s = Section::new("timers-bench", "000", "Timer queues beside peers");
    s.summary = format!(
        "Each N: N timers inserted at t = 0, {:.0}% cancelled, the clock advanced in 1 ms ticks; insert, cancel and \
         expiry timed apart, medians of interleaved rounds. Best peer at N = {n}: {best}; our wheel: {ratio:.2}× \
         its throughput. DelayQueue runs on tokio's paused clock. {bitwheel}{}{note}",
        p.cancel_fraction * 100.0,
        if note.is_empty() { "" } else { " " },
    );
    s.tables.push(t);
    s.tables.push(per_op);
    s.files.push(DataFile::csv(
        "bench.csv",
        &[
            "timers",
            "implementation",
            "peer",
            "ns_per_insert",
            "ns_per_cancel",
            "ns_per_expiry",
            "mops",
            "median_s",
            "setup_s",
            "ratio",
        ],
        rows,
    ));
    let losing: Vec<&str> = losing_ops(&data).into_iter().map(|l| l.0).collect();
    s.verdicts.push(Verdict::goal(
        format!("Our wheel at least 1.0× the best of the four peers at N = {n}"),
        ratio >= 1.0,
        format!(
            "wheel_vs_best_peer = {ratio:.2} (best peer: {best}){}",
            if losing.is_empty() { String::new() } else { format!("; slower at {}", losing.join(", ")) }
        ),
    ));
    s.parameters = serde_json::to_value(p).unwrap_or_default();
    s.results = data;
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timers::bench::run;

    #[test]
    fn the_section_has_a_row_per_size_and_implementation_and_a_goal_verdict() {
        let p = Params { sizes: vec![1_000, 3_000], max_deadline_ms: 200, rounds: 1, ..Params::default() };
        let s = section(&p, run(&p, &|_| {}).unwrap());
        assert_eq!(s.tables[0].rows.len(), 2 * IMPLEMENTATIONS.len());
        assert_eq!(s.tables[1].rows.len(), OPERATIONS.len());
        let v = &s.verdicts[0];
        assert!(v.claim.contains("N = 3000"), "{}", v.claim);
        assert!(v.detail.starts_with("wheel_vs_best_peer = "), "{}", v.detail);
        // Whatever the numbers, every operation our wheel loses is named with its reason.
        for (op, _, _) in losing_ops(&s.results) {
            assert!(s.summary.contains(&format!("{op} (")), "{op} missing from: {}", s.summary);
        }
    }

    #[test]
    fn every_peer_and_operation_has_a_reason() {
        for peer in PEERS {
            for op in OPERATIONS {
                assert!(!why(peer, op).is_empty(), "{peer} {op}");
            }
        }
    }
}
