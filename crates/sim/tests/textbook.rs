//! Textbook examples (Silberschatz, *Operating System Concepts*, ch. 5) come out exactly.

use schedlab_sim::engine::{simulate, SimConfig, SimResult};
use schedlab_sim::policies::by_spec;
use schedlab_sim::workload::{TaskSpec, Workload};

const MS: u64 = 1_000_000;

fn wl(tasks: &[(&str, u64, u64, i32)]) -> Workload {
    Workload {
        cpus: Some(1),
        tasks: tasks.iter().map(|&(n, a, b, p)| TaskSpec { priority: p, ..TaskSpec::cpu(n, a * MS, b * MS) }).collect(),
    }
}

fn run(w: &Workload, spec: &str) -> SimResult {
    let mut p = by_spec(spec).unwrap();
    simulate(w, p.as_mut(), &SimConfig::default())
}

fn waits(r: &SimResult) -> Vec<f64> {
    r.tasks.iter().map(|t| t.waiting as f64 / MS as f64).collect()
}

fn avg_wait_ms(r: &SimResult) -> f64 {
    r.overall.avg_waiting / MS as f64
}

/// P1 = 24, P2 = 3, P3 = 3, all at time 0.
fn classic() -> Workload {
    wl(&[("P1", 0, 24, 0), ("P2", 0, 3, 0), ("P3", 0, 3, 0)])
}

#[test]
fn fcfs_classic_average_waiting_is_17() {
    let r = run(&classic(), "fcfs");
    assert_eq!(waits(&r), vec![0.0, 24.0, 27.0]);
    assert_eq!(avg_wait_ms(&r), 17.0);
    assert_eq!(r.tasks[0].finish, Some(24 * MS));
}

#[test]
fn rr_quantum_4_classic_average_waiting_is_5_66() {
    let r = run(&classic(), "rr:quantum=4");
    assert_eq!(waits(&r), vec![6.0, 4.0, 7.0]);
    assert!((avg_wait_ms(&r) - 17.0 / 3.0).abs() < 1e-9);
    assert_eq!(r.tasks.iter().map(|t| t.finish.unwrap() / MS).collect::<Vec<_>>(), vec![30, 7, 10]);
}
