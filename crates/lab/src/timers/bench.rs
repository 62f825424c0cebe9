//! `schedlab timers bench`: one workload through our wheel, our heap and two peers, in one
//! run. The workload: N timers (default 1M) with random deadlines in 1..=10,000 ms, all
//! inserted at t = 0, a random 10% cancelled, then the clock advanced to the end in 1 ms ticks.
//!
//! Peers:
//! - `std::collections::BinaryHeap` used directly, with *lazy* cancellation (a cancelled flag
//!   per timer, skipped when popped) — the usual way to use it, and cheaper than true removal;
//! - tokio-util's `DelayQueue`, driven in a current-thread runtime with *paused* time
//!   (`tokio::time::advance(1 ms)` per tick, then `poll_expired` until it is pending), so it
//!   does the same work without 10 s of real waiting; its own wheel has 1 ms resolution.
//!
//! Every implementation starts empty, and each must expire exactly N − cancelled timers.
//! Mops/s counts inserts + cancels + expiries. Rounds are interleaved; the median is reported.

use anyhow::{bail, Context};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schedlab_report::section::{DataFile, Section, Table, Verdict};
use schedlab_timerq::heap::Heap;
use schedlab_timerq::wheel::Wheel;
use schedlab_timerq::TimerQueue;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::future::poll_fn;
use std::task::Poll;
use std::time::{Duration, Instant};

/// Parameters of the bench.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Params {
    pub timers: usize,
    pub max_deadline_ms: u64,
    pub cancel_fraction: f64,
    pub rounds: usize,
    pub seed: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params { timers: 1_000_000, max_deadline_ms: 10_000, cancel_fraction: 0.1, rounds: 3, seed: 0 }
    }
}

/// The implementations, in print order.
pub const IMPLEMENTATIONS: [&str; 4] = ["schedlab_wheel", "schedlab_heap", "std_binaryheap", "tokio_delayqueue"];
/// Which of them are peers (not ours).
pub const PEERS: [&str; 2] = ["std_binaryheap", "tokio_delayqueue"];

struct Workload {
    deadlines: Vec<u64>,
    cancels: Vec<u32>,
    ticks: u64,
}

impl Workload {
    fn new(p: &Params) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(p.seed);
        let deadlines: Vec<u64> = (0..p.timers).map(|_| rng.gen_range(1..=p.max_deadline_ms)).collect();
        let mut ids: Vec<u32> = (0..p.timers as u32).collect();
        ids.shuffle(&mut rng);
        ids.truncate((p.timers as f64 * p.cancel_fraction).round() as usize);
        Workload { deadlines, cancels: ids, ticks: p.max_deadline_ms }
    }
    fn ops(&self) -> u64 {
        // inserts + cancels + expiries
        self.deadlines.len() as u64 + self.cancels.len() as u64 + self.expected()
    }
    fn expected(&self) -> u64 {
        (self.deadlines.len() - self.cancels.len()) as u64
    }
}

fn ours<Q: TimerQueue<u32>>(mut q: Q, w: &Workload) -> u64 {
    let handles: Vec<_> = w.deadlines.iter().enumerate().map(|(i, &d)| q.insert(d, i as u32)).collect();
    for &c in &w.cancels {
        q.cancel(handles[c as usize]);
    }
    let mut out = Vec::with_capacity(1024);
    let mut n = 0;
    for _ in 0..w.ticks {
        q.tick(&mut out);
        n += out.len() as u64;
        out.clear();
    }
    n
}

fn std_heap(w: &Workload) -> u64 {
    let mut heap = BinaryHeap::new();
    for (i, &d) in w.deadlines.iter().enumerate() {
        heap.push(Reverse((d, i as u32)));
    }
    let mut cancelled = vec![false; w.deadlines.len()];
    for &c in &w.cancels {
        cancelled[c as usize] = true;
    }
    let mut n = 0;
    for now in 1..=w.ticks {
        while let Some(&Reverse((d, id))) = heap.peek() {
            if d > now {
                break;
            }
            heap.pop();
            if !cancelled[id as usize] {
                n += 1;
            }
        }
    }
    n
}

fn tokio_delay_queue(w: &Workload) -> anyhow::Result<u64> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .context("building a tokio runtime")?;
    Ok(rt.block_on(async {
        let mut dq = tokio_util::time::DelayQueue::new();
        let keys: Vec<_> =
            w.deadlines.iter().enumerate().map(|(i, &d)| dq.insert(i as u32, Duration::from_millis(d))).collect();
        for &c in &w.cancels {
            dq.remove(&keys[c as usize]);
        }
        let mut n = 0;
        for _ in 0..w.ticks {
            tokio::time::advance(Duration::from_millis(1)).await;
            while let Poll::Ready(Some(_)) = poll_fn(|cx| Poll::Ready(dq.poll_expired(cx))).await {
                n += 1;
            }
        }
        n
    }))
}

fn run_one(name: &str, w: &Workload) -> anyhow::Result<(f64, u64)> {
    let start = Instant::now();
    let expired = match name {
        "schedlab_wheel" => ours(Wheel::new(), w),
        "schedlab_heap" => ours(Heap::new(), w),
        "std_binaryheap" => std_heap(w),
        "tokio_delayqueue" => tokio_delay_queue(w)?,
        _ => schedlab_os::bail_usage!("unknown implementation '{name}'"),
    };
    Ok((start.elapsed().as_secs_f64(), expired))
}

/// Run the bench; returns the data part of the results document (`implementations`,
/// `wheel_vs_best_peer`, ...).
pub fn run(p: &Params, progress: &dyn Fn(&str)) -> anyhow::Result<Value> {
    if p.timers == 0 {
        schedlab_os::bail_usage!("timers must be at least 1, got 0");
    }
    if p.rounds == 0 {
        schedlab_os::bail_usage!("rounds must be at least 1, got 0");
    }
    let w = Workload::new(p);
    let mut secs: Vec<Vec<f64>> = vec![vec![]; IMPLEMENTATIONS.len()];
    for r in 0..p.rounds {
        for (i, name) in IMPLEMENTATIONS.iter().enumerate() {
            progress(&format!("round {}/{}: {name}", r + 1, p.rounds));
            let (s, expired) = run_one(name, &w)?;
            if expired != w.expected() {
                bail!("{name} expired {expired} timers, expected {}", w.expected());
            }
            secs[i].push(s);
        }
    }
    let mut imps = serde_json::Map::new();
    let mut mops_of = vec![];
    for (i, name) in IMPLEMENTATIONS.iter().enumerate() {
        let median = schedlab_report::stats::percentile(&secs[i], 50.0);
        let mops = w.ops() as f64 / median / 1e6;
        mops_of.push((*name, mops));
        imps.insert(
            name.to_string(),
            json!({ "mops": mops, "median_s": median, "round_s": secs[i], "peer": PEERS.contains(name) }),
        );
    }
    let (best_peer, best_mops) =
        mops_of
            .iter()
            .filter(|(n, _)| PEERS.contains(n))
            .fold(("", 0.0), |acc, &(n, m)| if m > acc.1 { (n, m) } else { acc });
    let wheel = mops_of[0].1;
    let heap = mops_of[1].1;
    Ok(json!({
        "implementations": imps,
        "best_peer": best_peer,
        "wheel_vs_best_peer": wheel / best_mops,
        "heap_vs_best_peer": heap / best_mops,
        "ops_per_run": w.ops(),
        "expired_per_run": w.expected(),
    }))
}

/// `schedlab timers bench` as a section: Mops/s of every implementation and our ratio to the
/// best peer, measured in the same run.
pub fn section(p: &Params, data: Value) -> Section {
    let mut t = Table::new(
        format!(
            "{} timers, deadlines 1..10,000 ms, 10% cancelled, 1 ms ticks (median of {} rounds)",
            p.timers, p.rounds
        ),
        &["implementation", "Mops/s", "median s", "ours/best peer"],
    );
    let best = data["best_peer"].as_str().unwrap_or("");
    let best_mops = data["implementations"][best]["mops"].as_f64().unwrap_or(f64::NAN);
    let mut rows = vec![];
    for name in IMPLEMENTATIONS {
        let e = &data["implementations"][name];
        let mops = e["mops"].as_f64().unwrap_or(0.0);
        let ratio = if PEERS.contains(&name) { "peer".to_string() } else { format!("{:.2}×", mops / best_mops) };
        let row = vec![
            name.to_string(),
            format!("{mops:.2}"),
            format!("{:.3}", e["median_s"].as_f64().unwrap_or(0.0)),
            ratio,
        ];
        t.row(row.clone());
        rows.push(row);
    }
    let ratio = data["wheel_vs_best_peer"].as_f64().unwrap_or(f64::NAN);
    let mut s = Section::new("timers-bench", "000", "Timer queues beside peers");
    s.summary = format!(
        "Mops/s counts inserts + cancels + expiries. Best peer: {best}. Our wheel: {ratio:.2}× the best peer. \
         DelayQueue runs on tokio's paused clock (advance 1 ms per tick), so no real time is waited."
    );
    s.tables.push(t);
    s.files.push(DataFile::csv("bench.csv", &["implementation", "mops", "median_s", "ratio"], rows));
    s.verdicts.push(Verdict::goal(
        "Our wheel at least 1.0× the best peer",
        ratio >= 1.0,
        format!("wheel_vs_best_peer = {ratio:.2}"),
    ));
    s.parameters = serde_json::to_value(p).unwrap_or_default();
    s.results = data;
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_implementation_expires_the_same_timers() {
        let p = Params { timers: 20_000, max_deadline_ms: 300, rounds: 2, ..Params::default() };
        let doc = run(&p, &|_| {}).unwrap();
        // 20,000 inserts, 2,000 cancels (10%) and 18,000 expiries (every deadline ≤ 300 ticks).
        assert_eq!((doc["expired_per_run"].as_u64(), doc["ops_per_run"].as_u64()), (Some(18_000), Some(40_000)));
        for name in IMPLEMENTATIONS {
            let rounds = doc["implementations"][name]["round_s"].as_array().unwrap();
            assert_eq!(rounds.len(), 2, "{name}: one time per round");
        }
        let best = doc["best_peer"].as_str().unwrap();
        let mops = |n: &str| doc["implementations"][n]["mops"].as_f64().unwrap();
        assert!(
            PEERS.contains(&best) && PEERS.iter().all(|&peer| mops(peer) <= mops(best)),
            "{best} is the fastest peer"
        );
    }

    #[test]
    fn a_clock_stopped_halfway_expires_exactly_the_timers_due_by_then() {
        let mut w = Workload::new(&Params { timers: 5_000, max_deadline_ms: 300, ..Params::default() });
        w.ticks = 150;
        let due = (0..w.deadlines.len()).filter(|&i| w.deadlines[i] <= 150 && !w.cancels.contains(&(i as u32))).count()
            as u64;
        assert!(due > 1_000 && due < w.expected(), "about half of the 4,500 live timers: {due}");
        for name in IMPLEMENTATIONS {
            assert_eq!(run_one(name, &w).unwrap().1, due, "{name}");
        }
        assert!(run_one("no_such_queue", &w).unwrap_err().to_string().contains("unknown implementation"));
    }
}
