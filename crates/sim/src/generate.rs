//! Seeded workload generators, from a spec like the policies':
//! `poisson:n=1000,rate=100,mean=5ms,seed=1` — `n` tasks arriving as a Poisson process of `rate`
//! tasks per second, each with `bursts` CPU bursts (default 1) of exponential length with
//! mean `mean` ms, separated by exponential I/O waits of mean `io` ms (default 0 = CPU-only),
//! priorities uniform in `0..priorities` (default 1) and weights uniform in `1..=weights`
//! (default 1). Times are rounded to whole nanoseconds, CPU bursts to at least 1 µs.

use crate::policies::spec::{Params, SpecError};
use crate::workload::{Bursts, TaskSpec, Workload};
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
    let g = parse(spec)?;
    if g.n > max_tasks {
        let n = g.n;
        return Err(
            Params::parse(spec)?.error("n", format!("{n} tasks exceed the cap of {max_tasks} (see --max-tasks)"))
        );
    }
    Ok(g.generate())
}

/// A generator spec, read and checked but not yet run (parsing is cheap; generating `n` tasks
/// is not).
#[derive(Debug, Clone, PartialEq)]
pub struct PoissonSpec {
    pub n: usize,
    /// Arrivals per second.
    pub rate: f64,
    /// Mean CPU burst, ns.
    pub mean_ns: f64,
    pub seed: u64,
    /// CPU bursts per task.
    pub bursts: usize,
    /// Mean I/O wait between bursts, ns (0 = CPU-only).
    pub io_ns: f64,
    pub priorities: i32,
    pub weights: u32,
}

impl PoissonSpec {
    /// The workload the spec describes.
    pub fn generate(&self) -> Workload {
        poisson(self.n, self.rate, self.mean_ns, self.bursts, self.io_ns, self.priorities, self.weights, self.seed)
    }

    /// The offered load on `cpus` CPUs: CPU demand per second of arrivals over the CPUs
    /// (rate × mean burst × bursts per task / cpus); 1 saturates them.
    pub fn offered_load(&self, cpus: usize) -> f64 {
        self.rate * self.mean_ns * 1e-9 * self.bursts as f64 / cpus.max(1) as f64
    }
}

/// Read a generator spec without generating it.
pub fn parse(spec: &str) -> Result<PoissonSpec, SpecError> {
    let mut p = Params::parse(spec)?;
    match p.name.as_str() {
        "poisson" => {
            let g = PoissonSpec {
                n: p.uint("n", 1000, 1, 100_000_000)? as usize,
                rate: p.uint("rate", 100, 1, 1_000_000_000)? as f64,
                mean_ns: p.time("mean", 5.0)? as f64,
                seed: p.uint("seed", 1, 0, u64::MAX)?,
                bursts: p.uint("bursts", 1, 1, 10_000)? as usize,
                io_ns: p.time_opt("io")?.unwrap_or(0) as f64,
                priorities: p.uint("priorities", 1, 1, 1000)? as i32,
                weights: p.uint("weights", 1, 1, 1000)? as u32,
            };
            p.finish()?;
            Ok(g)
        }
        other => Err(p.error("generator", format!("unknown generator `{other}` (known: poisson)"))),
    }
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
            let mut b = Bursts::with_capacity(2 * bursts - 1);
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
        assert_eq!(by_spec_within("poisson:n=10", 9).unwrap_err().field, "n");
        let g = parse("poisson:n=10,rate=150,mean=4ms,bursts=2").unwrap();
        assert!((g.offered_load(2) - 0.6).abs() < 1e-12, "150/s × 4 ms × 2 bursts on 2 CPUs");
    }
}
