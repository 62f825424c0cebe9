//! Seeded workload generators, from a spec like the policies':
//! `poisson:n=1000,rate=100,mean=5ms,seed=1` — `n` tasks arriving as a Poisson process of `rate`
//! tasks per second, each with `bursts` CPU bursts (default 1) of exponential length with
//! mean `mean` ms, separated by exponential I/O waits of mean `io` ms (default 0 = CPU-only),
//! priorities uniform in `0..priorities` (default 1) and weights uniform in `1..=weights`
//! (default 1). Times are rounded to whole nanoseconds, CPU bursts to at least 1 µs.

use crate::policies::spec::{Params, SpecError};
use crate::workload::{TaskSpec, Workload};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};

/// Build a workload from a generator spec.
pub fn by_spec(spec: &str) -> Result<Workload, SpecError> {
    by_spec_within(spec, usize::MAX)
}

/// Build a workload from a generator spec, refusing more than `max_tasks` tasks before any is
/// generated.
pub fn by_spec_within(spec: &str, max_tasks: usize) -> Result<Workload, SpecError> {
    let mut p = Params::parse(spec)?;
    let w = match p.name.as_str() {
        "poisson" => {
            let n = p.uint("n", 1000, 1, 100_000_000)? as usize;
            if n > max_tasks {
                return Err(p.error("n", format!("{n} tasks exceed the cap of {max_tasks} (see --max-tasks)")));
            }
            let rate = p.uint("rate", 100, 1, 1_000_000_000)? as f64;
            let mean = p.time("mean", 5.0)? as f64;
            let seed = p.uint("seed", 1, 0, u64::MAX)?;
            let bursts = p.uint("bursts", 1, 1, 10_000)? as usize;
            let io = p.time_opt("io")?.unwrap_or(0) as f64;
            let prios = p.uint("priorities", 1, 1, 1000)? as i32;
            let weights = p.uint("weights", 1, 1, 1000)? as u32;
            p.finish()?;
            poisson(n, rate, mean, bursts, io, prios, weights, seed)
        }
        other => return Err(p.error("generator", format!("unknown generator `{other}` (known: poisson)"))),
    };
    Ok(w)
}

/// `n` tasks, Poisson arrivals at `rate`/s, exponential CPU bursts of mean `mean_ns`.
#[allow(clippy::too_many_arguments)]
pub fn poisson(
    n: usize,
    rate: f64,
    mean_ns: f64,
    bursts: usize,
    io_ns: f64,
    prios: i32,
    weights: u32,
    seed: u64,
) -> Workload {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let gap = Exp::new(rate / 1e9).expect("rate > 0");
    let cpu = Exp::new(1.0 / mean_ns).expect("mean > 0");
    let io = (io_ns > 0.0).then(|| Exp::new(1.0 / io_ns).expect("io > 0"));
    let mut t = 0.0f64;
    let tasks = (0..n)
        .map(|i| {
            t += gap.sample(&mut rng);
            let mut b = Vec::with_capacity(2 * bursts - 1);
            for k in 0..bursts {
                if k > 0 {
                    b.push(io.map_or(0, |d| d.sample(&mut rng).round() as u64));
                }
                b.push((cpu.sample(&mut rng).round() as u64).max(1_000));
            }
            TaskSpec {
                name: format!("T{i}").into(),
                arrival: t.round() as u64,
                bursts: b,
                priority: rng.gen_range(0..prios),
                weight: rng.gen_range(1..=weights),
                jobs: 1,
                ..Default::default()
            }
        })
        .collect();
    Workload { cpus: None, tasks }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_and_shaped() {
        let a = by_spec("poisson:n=2000,rate=100,mean=5ms,seed=7").unwrap();
        let b = by_spec("poisson:n=2000,rate=100,mean=5ms,seed=7").unwrap();
        assert_eq!(a, b);
        let span = a.tasks.last().unwrap().arrival as f64 / 1e9;
        assert!((span - 20.0).abs() < 2.0, "2000 arrivals at 100/s span ~20 s, got {span}");
        let mean = a.tasks.iter().map(|t| t.bursts[0] as f64).sum::<f64>() / 2000.0 / 1e6;
        assert!((mean - 5.0).abs() < 0.5, "mean burst {mean} ms");
        assert!(by_spec("poisson:n=10,bursts=3,io=2ms").unwrap().tasks.iter().all(|t| t.bursts.len() == 5));
        assert_eq!(by_spec("poisson:n=0").unwrap_err().field, "n");
        assert_eq!(by_spec("poisson:zz=1").unwrap_err().field, "zz");
        assert_eq!(by_spec("weibull").unwrap_err().field, "generator");
    }
}
