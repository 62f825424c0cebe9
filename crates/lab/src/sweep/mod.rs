//! `schedlab sim sweep`: a grid of simulator runs — policies × workloads × CPU counts × switch
//! costs × seeds — on every core, streamed row by row into a sweep directory:
//!
//! - `grid.json`: the grid, which shard of it this directory holds, and how many points the
//!   whole grid has (a resumed or merged sweep must match it);
//! - `rows.csv`: one row per point, appended as each finishes (the journal `--resume` reads),
//!   sorted by point number once every point of the shard is in;
//! - `rows.parquet`: the same rows, written when the shard is complete.
//!
//! A row is a pure function of its point (no wall times in it), so a sweep split into shards
//! and merged equals the same sweep run whole, row for row.

pub mod exec;
pub mod grid;
pub mod rows;
pub mod summary;

use anyhow::{bail, Context, Result};
use exec::{Plan, Ran};
use grid::Grid;
use rows::RowsFile;
use schedlab_report::shard::Shard;
use schedlab_report::tidy::TidyTable;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The sweep directory's description of itself (`grid.json`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    pub grid: Grid,
    /// `K/N`, or none for the whole grid.
    pub shard: Option<String>,
    /// Points in the whole grid.
    pub grid_points: usize,
    /// Points this directory holds when complete.
    pub shard_points: usize,
}

const MANIFEST: &str = "grid.json";
const ROWS: &str = "rows.csv";
const PARQUET: &str = "rows.parquet";

/// The point numbers shard `shard` takes: every N-th, starting at K − 1.
pub fn shard_points(total: usize, shard: Option<Shard>) -> Vec<usize> {
    match shard {
        None => (0..total).collect(),
        Some(s) => (s.k - 1..total).step_by(s.n).collect(),
    }
}

/// How a sweep went.
#[derive(Debug)]
pub struct Done {
    pub ran: Ran,
    /// Rows already in the directory when it resumed.
    pub kept: usize,
    /// Bytes of a torn last line cut off on resume.
    pub cut_bytes: u64,
    pub manifest: Manifest,
    /// Every row of the directory, sorted.
    pub rows: TidyTable,
    pub dir: PathBuf,
}

/// Run (or, with `resume`, go on with) the sweep of `plan` into `dir`; `progress(done, total)`
/// is called after every row.
pub fn run(
    plan: &Plan,
    dir: &Path,
    resume: bool,
    shard: Option<Shard>,
    jobs: usize,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Done> {
    let mine = shard_points(plan.points.len(), shard);
    let manifest = Manifest {
        grid: plan.grid.clone(),
        shard: shard.map(|s| s.to_string()),
        grid_points: plan.points.len(),
        shard_points: mine.len(),
    };
    let header = rows::header(&plan.vary_keys());
    let (mut file, cut) = if resume {
        let found =
            read_manifest(dir).with_context(|| format!("--resume: {} holds no sweep to resume", dir.display()))?;
        if found != manifest {
            bail!(
                "--resume: {} holds another sweep (its grid.json differs from this grid or shard): resume it with the grid \
                 it was started with, or give another --dir",
                dir.display()
            );
        }
        RowsFile::resume(&dir.join(ROWS), &header)?
    } else {
        if dir.join(MANIFEST).exists() || dir.join(ROWS).exists() {
            bail!("{} already holds a sweep: --resume to go on with it, or give another --dir", dir.display());
        }
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        rows::write_atomically(&dir.join(MANIFEST), serde_json::to_string_pretty(&manifest)?.as_bytes())?;
        (RowsFile::create(&dir.join(ROWS), &header)?, 0)
    };
    let mine_set: BTreeSet<usize> = mine.iter().copied().collect();
    if let Some(stray) = file.done.iter().find(|i| !mine_set.contains(i)) {
        bail!("{}: point {stray} is not in this shard", dir.join(ROWS).display());
    }
    let kept = file.done.len();
    let todo: Vec<usize> = mine.iter().copied().filter(|i| !file.done.contains(i)).collect();
    let total = mine.len();
    progress(kept, total);
    let ran = exec::run(plan, &todo, jobs, |row| {
        file.append(&row)?;
        progress(file.done.len(), total);
        Ok(())
    })?;
    drop(file);
    let rows = finish(dir, &manifest)?;
    Ok(Done { ran, kept, cut_bytes: cut, manifest, rows, dir: dir.to_path_buf() })
}

fn read_manifest(dir: &Path) -> Result<Manifest> {
    let path = dir.join(MANIFEST);
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))
}

/// Sort the rows file and write the Parquet copy; returns the rows.
fn finish(dir: &Path, manifest: &Manifest) -> Result<TidyTable> {
    let rows = rows::sorted(rows::read(&dir.join(ROWS))?);
    if rows.rows.len() != manifest.shard_points {
        bail!("{}: {} rows for {} points", dir.join(ROWS).display(), rows.rows.len(), manifest.shard_points);
    }
    rows::write_atomically(&dir.join(ROWS), rows.to_csv().as_bytes())?;
    let meta =
        [("grid", serde_json::to_string(&manifest.grid)?), ("shard", manifest.shard.clone().unwrap_or_default())];
    let parquet = schedlab_report::tidy_parquet::to_parquet(&rows, &meta)?;
    rows::write_atomically(&dir.join(PARQUET), &parquet)?;
    Ok(rows)
}

/// Merge the complete shards in `shards` into `out`: the same grid, every point exactly once.
pub fn merge(shards: &[PathBuf], out: &Path) -> Result<(Manifest, TidyTable)> {
    let Some(first) = shards.first() else { bail!("--merge: name the shard directories") };
    let base = read_manifest(first)?;
    let mut all = TidyTable::default();
    let mut seen = BTreeSet::new();
    for dir in shards {
        let m = read_manifest(dir)?;
        if m.grid != base.grid || m.grid_points != base.grid_points {
            bail!("{} is a shard of another grid than {}", dir.display(), first.display());
        }
        let t = rows::read(&dir.join(ROWS))?;
        if t.rows.len() != m.shard_points {
            bail!("{} is incomplete ({} of {} points): --resume it first", dir.display(), t.rows.len(), m.shard_points);
        }
        if all.columns.is_empty() {
            all.columns = t.columns.clone();
        } else if all.columns != t.columns {
            bail!("{}: its columns differ from {}", dir.display(), first.display());
        }
        for r in t.rows {
            let i: usize = r[0].parse().with_context(|| format!("{}: index '{}'", dir.display(), r[0]))?;
            if !seen.insert(i) {
                bail!("point {i} is in two shards (the last: {})", dir.display());
            }
            all.rows.push(r);
        }
    }
    if seen.len() != base.grid_points {
        bail!("the shards hold {} of the grid's {} points: a shard is missing", seen.len(), base.grid_points);
    }
    if out.join(MANIFEST).exists() || out.join(ROWS).exists() {
        bail!("{} already holds a sweep: give another --dir", out.display());
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let manifest = Manifest { shard: None, shard_points: base.grid_points, ..base };
    rows::write_atomically(&out.join(MANIFEST), serde_json::to_string_pretty(&manifest)?.as_bytes())?;
    let rows = rows::sorted(all);
    rows::write_atomically(&out.join(ROWS), rows.to_csv().as_bytes())?;
    let rows = finish(out, &manifest)?;
    Ok((manifest, rows))
}

/// Throughput with one job and with `jobs`, on the same points, each run's rows compared:
/// (one job, `jobs` jobs, whether the rows are identical).
pub fn measure_scaling(plan: &Plan, points: &[usize], jobs: usize) -> Result<(Ran, Ran, bool)> {
    let rows_of = |jobs: usize| -> Result<(Ran, Vec<Vec<String>>)> {
        let mut rows = vec![];
        let ran = exec::run(plan, points, jobs, |r| {
            rows.push(r);
            Ok(())
        })?;
        rows.sort_by_key(|r| r[0].parse::<usize>().unwrap_or(usize::MAX));
        Ok((ran, rows))
    };
    let (one, a) = rows_of(1)?;
    let (many, b) = rows_of(jobs)?;
    Ok((one, many, a == b))
}

#[cfg(test)]
mod tests;
