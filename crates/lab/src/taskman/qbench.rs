//! The task-queue benchmark: nanoseconds per empty task, submitted from the reserved CPU and
//! run by workers on the other cores, for the seed's mutex FCFS queue, our stealing queue and two
//! peers measured in the same run — rayon's `ThreadPool::spawn` and a pool fed by a crossbeam
//! channel. All pools get the same worker CPUs and SCHED_OTHER, so only the queue differs.
//!
//! One repetition: submit N tasks back to back, wait until all ran; ns/task = elapsed / N.

use super::config::ManagerConfig;
use super::manager::Manager;
use super::queue::QueueKind;
use anyhow::{bail, Context, Result};
use schedlab_os::affinity::{set_affinity, AffinityGuard};
use schedlab_os::sched::LinuxPolicy;
use schedlab_os::topology::Topology;
use schedlab_report::stats::MeanCi;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// How much to measure.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct QueueBenchParams {
    pub tasks: usize,
    pub reps: usize,
}

/// One queue's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QueueRow {
    pub queue: String,
    pub ns_per_task: MeanCi,
    /// The mutex FCFS queue's ns/task divided by this one's (> 1 = faster than the seed's queue).
    pub speedup_vs_mutex: f64,
}

/// The result: rows plus where the work ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QueueBench {
    pub params: QueueBenchParams,
    pub workers: usize,
    pub worker_cpus: Vec<usize>,
    pub rows: Vec<QueueRow>,
}

/// Run all four queues, interleaved repetition by repetition, on this machine's topology.
pub fn run(p: QueueBenchParams) -> Result<QueueBench> {
    run_on(p, &Topology::read()?)
}

/// Run all four queues on the given topology (its first core submits, the others work).
pub fn run_on(p: QueueBenchParams, topo: &Topology) -> Result<QueueBench> {
    if p.tasks == 0 || p.reps == 0 {
        schedlab_os::bail_usage!("invalid queue benchmark size: tasks={} reps={} (both must be ≥ 1)", p.tasks, p.reps);
    }
    let cpus = topo.worker_cpus();
    if cpus.is_empty() {
        bail!("the queue benchmark needs a second core: the first is reserved for the submitting thread");
    }
    let _pin = AffinityGuard::pin(0, &topo.reserved_core()).context("pinning the submitter")?;
    let names = ["mutex-fifo (seed)", "stealing (ours)", "rayon::spawn (peer)", "crossbeam channel (peer)"];
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
    for _ in 0..p.reps {
        if schedlab_os::signals::stop_requested() {
            break;
        }
        samples[0].push(ours(QueueKind::MutexFifo, p.tasks, topo)?);
        samples[1].push(ours(QueueKind::Stealing, p.tasks, topo)?);
        samples[2].push(rayon_pool(p.tasks, &cpus)?);
        samples[3].push(channel_pool(p.tasks, &cpus));
    }
    Ok(QueueBench { params: p, workers: cpus.len(), worker_cpus: cpus, rows: rows(&names, &samples) })
}

/// One row per queue: its mean ns/task and the first (mutex) queue's mean divided by it.
fn rows(names: &[&str], samples: &[Vec<f64>]) -> Vec<QueueRow> {
    let base = MeanCi::of(&samples[0]).mean;
    names
        .iter()
        .zip(samples)
        .map(|(n, s)| {
            let m = MeanCi::of(s);
            QueueRow {
                queue: n.to_string(),
                ns_per_task: m,
                speedup_vs_mutex: if m.mean > 0.0 { base / m.mean } else { 0.0 },
            }
        })
        .collect()
}

/// Our manager on the same topology as the peers, one worker per worker CPU.
fn ours(kind: QueueKind, n: usize, topo: &Topology) -> Result<f64> {
    let cfg = ManagerConfig {
        workers: Some(topo.worker_cpus().len()),
        policy: LinuxPolicy::Other,
        steer_irqs: false,
        queue: kind,
        ..Default::default()
    };
    let m = Manager::<()>::start_on(&cfg, topo)?;
    let t0 = Instant::now();
    for _ in 0..n {
        m.submit(|_| ());
    }
    m.wait(None);
    let ns = t0.elapsed().as_nanos() as f64 / n as f64;
    m.shutdown()?;
    Ok(ns)
}

fn rayon_pool(n: usize, cpus: &[usize]) -> Result<f64> {
    let pin: Vec<usize> = cpus.to_vec();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(cpus.len())
        .start_handler(move |i| {
            let _ = set_affinity(0, &[pin[i % pin.len()]]);
        })
        .build()
        .context("building the rayon pool")?;
    let done = Arc::new(AtomicUsize::new(0));
    let t0 = Instant::now();
    for _ in 0..n {
        let d = done.clone();
        pool.spawn(move || {
            d.fetch_add(1, Ordering::Release);
        });
    }
    wait_count(&done, n);
    Ok(t0.elapsed().as_nanos() as f64 / n as f64)
}

fn channel_pool(n: usize, cpus: &[usize]) -> f64 {
    type Job = Box<dyn FnOnce() + Send>;
    let (tx, rx) = crossbeam_channel::unbounded::<Job>();
    let handles: Vec<_> = cpus
        .iter()
        .map(|&cpu| {
            let rx = rx.clone();
            std::thread::spawn(move || {
                let _ = set_affinity(0, &[cpu]);
                while let Ok(job) = rx.recv() {
                    job();
                }
            })
        })
        .collect();
    let done = Arc::new(AtomicUsize::new(0));
    let t0 = Instant::now();
    for _ in 0..n {
        let d = done.clone();
        let _ = tx.send(Box::new(move || {
            d.fetch_add(1, Ordering::Release);
        }));
    }
    wait_count(&done, n);
    let ns = t0.elapsed().as_nanos() as f64 / n as f64;
    drop(tx);
    for h in handles {
        let _ = h.join();
    }
    ns
}

fn wait_count(done: &AtomicUsize, n: usize) {
    while done.load(Ordering::Acquire) < n {
        std::thread::yield_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_queue_runs_all_tasks() {
        let Some(topo) = crate::taskman::manager::tests::worker_topology("the queue benchmark test") else {
            return;
        };
        let r = run_on(QueueBenchParams { tasks: 2_000, reps: 2 }, &topo).unwrap();
        assert_eq!(
            r.rows.iter().map(|row| row.queue.as_str()).collect::<Vec<_>>()[..2],
            ["mutex-fifo (seed)", "stealing (ours)"]
        );
        assert_eq!((r.workers, r.worker_cpus.clone()), (topo.worker_cpus().len(), topo.worker_cpus()));
        for row in &r.rows {
            assert_eq!(row.ns_per_task.n, 2, "{}: one sample per repetition", row.queue);
            // An empty task costs well under a millisecond on any queue; zero would mean nothing ran.
            assert!(row.ns_per_task.mean > 0.0 && row.ns_per_task.mean < 1e6, "{}: {:?}", row.queue, row.ns_per_task);
        }
    }

    #[test]
    fn speedup_is_the_mutex_queues_time_over_each_queues_time() {
        let samples = vec![vec![100.0, 300.0], vec![50.0], vec![400.0, 400.0], vec![]];
        let r = rows(&["mutex", "fast", "slow", "empty"], &samples);
        let speedups: Vec<f64> = r.iter().map(|row| row.speedup_vs_mutex).collect();
        assert_eq!(speedups, vec![1.0, 4.0, 0.5, 0.0], "200/200, 200/50, 200/400, no samples");
        assert_eq!(r[1].ns_per_task.mean, 50.0);
    }

    #[test]
    fn zero_tasks_rejected() {
        assert!(run(QueueBenchParams { tasks: 0, reps: 1 }).unwrap_err().to_string().contains("tasks=0"));
    }
}
