//! Running a sweep's points on every core: a rayon pool of `jobs` threads simulates the points,
//! and the calling thread receives each row as it is done and hands it on (to the rows file, a
//! progress bar), so one writer alone touches the file. A writer that fails stops the pool
//! from starting new points.

use super::grid::{Grid, Point, Source};
use super::rows;
use crate::simstudy::compare::{self, TickChoice};
use anyhow::{Context, Result};
use rayon::prelude::*;
use schedlab_sim::engine::SimConfig;
use schedlab_sim::generate;
use schedlab_sim::workload::Workload;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// A grid ready to run: its points and the workload files it names, read once.
pub struct Plan {
    pub grid: Grid,
    pub points: Vec<Point>,
    pub files: Vec<Arc<Workload>>,
    tick: Option<u64>,
    horizon: Option<u64>,
}

impl Plan {
    /// Check and expand `grid`; `files` are its workload files, read, in its order.
    pub fn new(grid: Grid, files: Vec<Workload>) -> Result<Plan> {
        let fits = |i: usize, cpus: usize| -> Result<()> {
            files[i].check_cpus(cpus).with_context(|| format!("workload {} on {cpus} CPU(s)", grid.workloads[i]))
        };
        let points = grid.expand(&fits)?;
        Ok(Plan {
            tick: grid.tick_ns()?,
            horizon: grid.horizon_ns()?,
            grid,
            points,
            files: files.into_iter().map(Arc::new).collect(),
        })
    }

    /// The varied keys, in column order.
    pub fn vary_keys(&self) -> Vec<String> {
        self.grid.vary.keys().cloned().collect()
    }

    /// Simulate point `i` and return its row.
    pub fn run_point(&self, i: usize) -> Result<Vec<String>> {
        let p = &self.points[i];
        let generated;
        let w: &Workload = match &p.source {
            Source::Generated { spec, .. } => {
                generated = generate::by_spec(spec)?;
                &generated
            }
            Source::File { index, .. } => &self.files[*index],
        };
        let cfg = SimConfig {
            cpus: p.cpus,
            switch_cost: p.switch_cost_ns,
            horizon: self.horizon,
            record_slices: false,
            task_results: false,
            ..SimConfig::default()
        };
        let r = compare::run_all(
            w,
            std::slice::from_ref(&p.policy),
            &cfg,
            self.grid.per_cpu,
            TickChoice::ForLinux(self.tick),
        )?
        .pop()
        .expect("one policy, one result");
        Ok(rows::row(p, &r))
    }
}

/// How a batch of points went.
#[derive(Debug, Clone, Copy)]
pub struct Ran {
    pub points: usize,
    pub seconds: f64,
}

/// Run the points `todo` on `jobs` threads; `sink` gets each row as it is done (in the
/// order they finish), on the calling thread.
pub fn run(plan: &Plan, todo: &[usize], jobs: usize, mut sink: impl FnMut(Vec<String>) -> Result<()>) -> Result<Ran> {
    let pool =
        rayon::ThreadPoolBuilder::new().num_threads(jobs.max(1)).build().context("starting the worker threads")?;
    let stop = AtomicBool::new(false);
    let (tx, rx) = crossbeam_channel::bounded::<Result<Vec<String>>>(4 * jobs.max(1));
    let t0 = Instant::now();
    let mut written = 0;
    let mut failure = None;
    std::thread::scope(|s| {
        s.spawn(|| {
            pool.install(|| {
                todo.par_iter().with_max_len(1).for_each_with(tx, |tx, &i| {
                    if !stop.load(Ordering::Relaxed) {
                        let _ = tx.send(plan.run_point(i));
                    }
                })
            })
        });
        for row in rx {
            match row.and_then(&mut sink) {
                Ok(()) => written += 1,
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    failure.get_or_insert(e);
                }
            }
        }
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(Ran { points: written, seconds: t0.elapsed().as_secs_f64() }),
    }
}
