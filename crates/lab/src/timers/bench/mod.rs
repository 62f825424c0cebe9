//! `schedlab timers bench`: one workload through our wheel and heap and four peers —
//! bitwheel, hierarchical_hash_wheel_timer, tokio-util's `DelayQueue` and std's `BinaryHeap` —
//! in one run, at several numbers of pending timers (default 10^3, 10^4, 10^5, 10^6).
//!
//! The workload ([`workload`]): N timers with random deadlines in 1..=10,000 ms, all inserted
//! at t = 0, a random 10% cancelled, then the clock advanced to the end in 1 ms ticks. Every
//! implementation starts empty and must expire exactly N − cancelled timers. Each run is timed
//! in phases ([`phases`]): insert, cancel and expiry separately (building the empty structure
//! is reported but not counted), so the results give ns per insert, per cancel and per expiry
//! as well as Mops/s (inserts + cancels + expiries per second of timed work). Rounds are
//! interleaved between implementations; medians are reported, each phase on its own.
//!
//! Our queues are driven through the `TimerQueue` trait ([`ours`]); the peers as their docs
//! show ([`peers`], [`bitwheel_peer`]). [`report`] turns the results into a section whose goal
//! verdict is our wheel ≥ 1.0× the best peer's throughput at the largest size.

pub mod bitwheel_peer;
pub mod ours;
pub mod peers;
pub mod phases;
pub mod report;
pub mod workload;

use anyhow::bail;
use phases::{summarise, Phases};
use schedlab_timerq::heap::Heap;
use schedlab_timerq::wheel::Wheel;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use workload::Workload;

pub use report::section;

/// Parameters of the bench.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Params {
    /// Numbers of pending timers N, one workload each, run in this order.
    pub sizes: Vec<usize>,
    pub max_deadline_ms: u64,
    pub cancel_fraction: f64,
    pub rounds: usize,
    pub seed: u64,
}

/// The sizes run unless told otherwise: 10^3 … 10^6 timers.
pub const DEFAULT_SIZES: [usize; 4] = [1_000, 10_000, 100_000, 1_000_000];

impl Default for Params {
    fn default() -> Self {
        Params { sizes: DEFAULT_SIZES.to_vec(), max_deadline_ms: 10_000, cancel_fraction: 0.1, rounds: 3, seed: 0 }
    }
}

/// The implementations, in print order: ours, then the peers.
pub const IMPLEMENTATIONS: [&str; 6] = [
    "schedlab_wheel",
    "schedlab_heap",
    "bitwheel",
    "hierarchical_hash_wheel_timer",
    "tokio_delayqueue",
    "std_binaryheap",
];
/// Which of them are peers (not ours).
pub const PEERS: [&str; 4] = ["bitwheel", "hierarchical_hash_wheel_timer", "tokio_delayqueue", "std_binaryheap"];
/// The operations timed separately, as named in the results.
pub const OPERATIONS: [&str; 3] = ["insert", "cancel", "expiry"];

/// Run one implementation once on `w`, timing each phase.
pub fn run_one(name: &str, w: &Workload) -> anyhow::Result<Phases> {
    Ok(match name {
        "schedlab_wheel" => ours::drive(Wheel::new, w),
        "schedlab_heap" => ours::drive(Heap::new, w),
        "bitwheel" => bitwheel_peer::run(w)?,
        "hierarchical_hash_wheel_timer" => peers::hash_wheel(w)?,
        "tokio_delayqueue" => peers::tokio_delay_queue(w)?,
        "std_binaryheap" => peers::std_heap(w),
        _ => schedlab_os::bail_usage!("unknown implementation '{name}'"),
    })
}

/// Why `name` cannot run `w` as configured here, if it cannot (only bitwheel has a capacity).
fn not_runnable(name: &str, w: &Workload) -> Option<String> {
    match name {
        "bitwheel" => bitwheel_peer::slot_cap(w).err(),
        _ => None,
    }
}

/// How `name` was set up for `w`, for the results document.
fn config(name: &str, w: &Workload) -> Value {
    match name {
        "bitwheel" => bitwheel_peer::config(w),
        "hierarchical_hash_wheel_timer" => {
            json!({ "type": "wheels::cancellable::QuadWheelWithOverflow<IdOnlyTimerEntry<u32>>", "hasher": "fx-hash" })
        }
        "tokio_delayqueue" => {
            json!({ "type": "tokio_util::time::DelayQueue<u32>", "clock": "tokio paused time, advance(1 ms) per tick" })
        }
        "std_binaryheap" => {
            json!({ "type": "BinaryHeap<Reverse<(u64, u32)>>", "cancel": "lazy: a flag per timer, skipped when popped" })
        }
        "schedlab_wheel" => json!({ "type": "schedlab_timerq::wheel::Wheel<u32>" }),
        "schedlab_heap" => json!({ "type": "schedlab_timerq::heap::Heap<u32>" }),
        _ => Value::Null,
    }
}

/// A per-operation cost of a summarised implementation entry (`None` if not run or undefined).
fn ns_of(entry: &Value, op: &str) -> Option<f64> {
    entry[format!("ns_per_{op}")].as_f64()
}

/// The peer with the highest Mops/s among `imps` (those that ran), and its Mops/s.
fn best_peer(imps: &Map<String, Value>) -> Option<(String, f64)> {
    PEERS.iter().filter_map(|&p| imps.get(p)?["mops"].as_f64().map(|m| (p.to_string(), m))).fold(
        None,
        |best: Option<(String, f64)>, (p, m)| match best {
            Some((_, bm)) if bm >= m => best,
            _ => Some((p, m)),
        },
    )
}

/// One size: run every implementation `p.rounds` times, interleaved; the size's document.
fn run_size(n: usize, p: &Params, progress: &dyn Fn(&str)) -> anyhow::Result<Value> {
    let w = Workload::new(n, p);
    let skip: Vec<Option<String>> = IMPLEMENTATIONS.iter().map(|name| not_runnable(name, &w)).collect();
    let mut rounds: Vec<Vec<Phases>> = vec![vec![]; IMPLEMENTATIONS.len()];
    for r in 0..p.rounds {
        for (i, name) in IMPLEMENTATIONS.iter().enumerate() {
            if skip[i].is_some() {
                continue;
            }
            progress(&format!("N = {n}, round {}/{}: {name}", r + 1, p.rounds));
            let ph = run_one(name, &w)?;
            if ph.expired != w.expected() {
                bail!("{name} expired {} of {n} timers, expected {}", ph.expired, w.expected());
            }
            rounds[i].push(ph);
        }
    }
    let mut imps = Map::new();
    for (i, name) in IMPLEMENTATIONS.iter().enumerate() {
        let mut entry = match &skip[i] {
            Some(why) => json!({ "not_run": why }),
            None => serde_json::to_value(summarise(&rounds[i], &w))?,
        };
        entry["peer"] = json!(PEERS.contains(name));
        entry["config"] = config(name, &w);
        imps.insert(name.to_string(), entry);
    }
    let Some((best, best_mops)) = best_peer(&imps) else { bail!("no peer could run N = {n}") };
    let mops = |name: &str| imps[name]["mops"].as_f64().unwrap_or(f64::NAN);
    let ours = &imps["schedlab_wheel"];
    let mut per_op = Map::new();
    for op in OPERATIONS {
        let our_ns = ns_of(ours, op);
        let fastest = PEERS
            .iter()
            .filter_map(|&peer| ns_of(&imps[peer], op).map(|ns| (peer, ns)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let best_ns = ns_of(&imps[&best], op);
        let ratio = |peer_ns: Option<f64>| match (peer_ns, our_ns) {
            (Some(p), Some(o)) if o > 0.0 => json!(p / o),
            _ => Value::Null,
        };
        per_op.insert(
            op.to_string(),
            json!({
                "schedlab_wheel_ns": our_ns,
                "best_peer_ns": best_ns,
                "wheel_vs_best_peer": ratio(best_ns),
                "fastest_peer": fastest.map(|f| f.0),
                "fastest_peer_ns": fastest.map(|f| f.1),
                "wheel_vs_fastest_peer": ratio(fastest.map(|f| f.1)),
            }),
        );
    }
    Ok(json!({
        "timers": n,
        "cancelled": w.cancelled(),
        "expired_per_run": w.expected(),
        "ops_per_run": w.ops(),
        "implementations": imps,
        "best_peer": best,
        "wheel_vs_best_peer": mops("schedlab_wheel") / best_mops,
        "heap_vs_best_peer": mops("schedlab_heap") / best_mops,
        "per_op": per_op,
    }))
}

/// Run the bench; returns the data part of the results document: `by_size` (one document per
/// size: `implementations.<name>` with `mops`, `ns_per_insert`, `ns_per_cancel`,
/// `ns_per_expiry`, …; `best_peer`, `wheel_vs_best_peer`, `per_op`), and the largest size's
/// fields again at the top level (`verdict_timers` says which size that is), which the goal
/// verdict judges.
pub fn run(p: &Params, progress: &dyn Fn(&str)) -> anyhow::Result<Value> {
    if p.sizes.is_empty() {
        schedlab_os::bail_usage!("no sizes given: name at least one number of timers");
    }
    if let Some(&n) = p.sizes.iter().find(|&&n| n == 0 || n > u32::MAX as usize) {
        schedlab_os::bail_usage!("a number of timers must be 1 … {}, got {n}", u32::MAX);
    }
    if p.rounds == 0 {
        schedlab_os::bail_usage!("rounds must be at least 1, got 0");
    }
    let by_size = p.sizes.iter().map(|&n| run_size(n, p, progress)).collect::<anyhow::Result<Vec<Value>>>()?;
    let largest = p.sizes.iter().copied().max().unwrap_or(0);
    let Some(at_verdict) = by_size.iter().find(|d| d["timers"].as_u64() == Some(largest as u64)) else {
        bail!("no results at N = {largest}");
    };
    let mut doc = at_verdict.as_object().cloned().unwrap_or_default();
    doc.insert("verdict_timers".into(), json!(largest));
    doc.insert("sizes".into(), json!(p.sizes));
    doc.insert("peers".into(), json!(PEERS));
    doc.insert("by_size".into(), Value::Array(by_size));
    Ok(Value::Object(doc))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Params {
        Params { sizes: vec![2_000, 20_000], max_deadline_ms: 300, rounds: 2, ..Params::default() }
    }

    #[test]
    fn the_peers_are_the_four_named_in_the_issue() {
        let mut peers = PEERS.to_vec();
        peers.sort_unstable();
        assert_eq!(peers, ["bitwheel", "hierarchical_hash_wheel_timer", "std_binaryheap", "tokio_delayqueue"]);
        assert!(PEERS.iter().all(|p| IMPLEMENTATIONS.contains(p)));
        assert_eq!(IMPLEMENTATIONS.len(), PEERS.len() + 2, "ours: the wheel and the heap");
    }

    #[test]
    fn every_implementation_expires_the_same_timers() {
        let doc = run(&small(), &|_| {}).unwrap();
        // 20,000 inserts, 2,000 cancels (10%) and 18,000 expiries (every deadline ≤ 300 ticks).
        assert_eq!((doc["expired_per_run"].as_u64(), doc["ops_per_run"].as_u64()), (Some(18_000), Some(40_000)));
        assert_eq!(doc["verdict_timers"].as_u64(), Some(20_000));
        for size in doc["by_size"].as_array().unwrap() {
            for name in IMPLEMENTATIONS {
                let e = &size["implementations"][name];
                assert!(e["not_run"].is_null(), "{name} ran at N = {}", size["timers"]);
                assert_eq!(e["round_s"].as_array().map(Vec::len), Some(2), "{name}: one time per round");
            }
        }
        let best = doc["best_peer"].as_str().unwrap();
        let mops = |n: &str| doc["implementations"][n]["mops"].as_f64().unwrap();
        assert!(PEERS.contains(&best) && PEERS.iter().all(|&peer| mops(peer) <= mops(best)), "{best} is the fastest");
    }

    #[test]
    fn every_phase_is_timed_at_every_size() {
        let doc = run(&small(), &|_| {}).unwrap();
        let sizes = doc["by_size"].as_array().unwrap();
        assert_eq!(sizes.iter().map(|s| s["timers"].as_u64().unwrap()).collect::<Vec<_>>(), [2_000, 20_000]);
        for size in sizes {
            for name in IMPLEMENTATIONS {
                let e = &size["implementations"][name];
                for op in OPERATIONS {
                    let ns = ns_of(e, op).unwrap_or(f64::NAN);
                    assert!(ns > 0.0 && ns.is_finite(), "{name} at N = {}: ns per {op} = {ns}", size["timers"]);
                }
                for round in e["rounds"].as_array().unwrap() {
                    for phase in ["insert_s", "cancel_s", "expiry_s"] {
                        assert!(round[phase].as_f64().unwrap() > 0.0, "{name}: {phase} in {round}");
                    }
                }
                assert!(e["mops"].as_f64().unwrap() > 0.0);
            }
            for op in OPERATIONS {
                assert!(size["per_op"][op]["wheel_vs_best_peer"].as_f64().unwrap() > 0.0, "{op}");
            }
        }
    }

    #[test]
    fn a_clock_stopped_halfway_expires_the_timers_due_by_then() {
        let mut w = Workload::new(5_000, &Params { max_deadline_ms: 300, ..Params::default() });
        w.ticks = 150;
        let cancelled = w.cancelled_mask();
        let live = |i: usize| !cancelled[i];
        let due = (0..w.deadlines.len()).filter(|&i| live(i) && w.deadlines[i] <= 150).count() as u64;
        assert!(due > 1_000 && due < w.expected(), "about half of the 4,500 live timers: {due}");
        for name in IMPLEMENTATIONS {
            let expired = run_one(name, &w).unwrap().expired;
            if name == "bitwheel" {
                // It fires a timer at the start of its slot (64 ms wide in gear 1), so by tick
                // 150 it has also fired the ones due 151..191 (slot 2 fires at 128).
                let fired = (0..w.deadlines.len())
                    .filter(|&i| live(i) && bitwheel_peer::fire_tick(w.deadlines[i]) <= 150)
                    .count() as u64;
                assert!(fired > due, "{fired} > {due}");
                assert_eq!(expired, fired, "{name}");
            } else {
                assert_eq!(expired, due, "{name}");
            }
        }
        assert!(run_one("no_such_queue", &w).unwrap_err().to_string().contains("unknown implementation"));
    }

    #[test]
    fn sizes_and_rounds_are_checked() {
        let bad = |p: Params| run(&p, &|_| {}).unwrap_err().to_string();
        assert!(bad(Params { sizes: vec![], ..small() }).contains("no sizes"));
        assert!(bad(Params { sizes: vec![10, 0], ..small() }).contains("got 0"));
        assert!(bad(Params { rounds: 0, ..small() }).contains("rounds"));
    }
}
