//! A sweep's rows: one per point, the point's coordinates then its metrics, in tidy columns
//! (snake_case, the unit in the name), and `rows.csv`, the file they stream into. The file is
//! the sweep's journal: a row is appended whole as its point finishes, so a sweep killed at any
//! instant leaves every finished point on disk and at most one torn last line, which `resume`
//! cuts off before the sweep goes on.

use super::grid::{Point, Source};
use anyhow::{bail, Context, Result};
use schedlab_report::tidy::TidyTable;
use schedlab_sim::engine::SimResult;
use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A metric column: its name and how it is read from a run.
pub struct Metric {
    pub name: &'static str,
    pub value: fn(&SimResult) -> f64,
}

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

/// Every metric a row holds, in column order.
pub const METRICS: &[Metric] = &[
    Metric { name: "tasks", value: |r| r.overall.tasks as f64 },
    Metric { name: "finished", value: |r| r.overall.finished as f64 },
    Metric { name: "makespan_ms", value: |r| ms(r.overall.makespan as f64) },
    Metric { name: "avg_turnaround_ms", value: |r| ms(r.overall.avg_turnaround) },
    Metric { name: "avg_waiting_ms", value: |r| ms(r.overall.avg_waiting) },
    Metric { name: "avg_response_ms", value: |r| ms(r.overall.avg_response) },
    Metric { name: "max_waiting_ms", value: |r| ms(r.overall.max_waiting as f64) },
    Metric { name: "throughput_per_s", value: |r| r.overall.throughput },
    Metric { name: "utilisation", value: |r| r.overall.utilisation },
    Metric { name: "context_switches", value: |r| r.overall.context_switches as f64 },
    Metric { name: "preemptions", value: |r| r.overall.preemptions as f64 },
    Metric { name: "quantum_expiries", value: |r| r.overall.quantum_expiries as f64 },
    Metric { name: "migrations", value: |r| r.overall.migrations as f64 },
    Metric { name: "deadline_misses", value: |r| r.overall.deadline_misses as f64 },
    Metric { name: "jain_cpu_per_weight", value: |r| r.overall.jain_cpu_per_weight },
    Metric { name: "share_error_max", value: |r| r.overall.share_error_max },
    Metric { name: "events", value: |r| r.events as f64 },
];

/// The coordinate columns before the metrics; the varied keys go between `workload` and `cpus`.
const HEAD: [&str; 3] = ["index", "policy", "workload"];
const TAIL: [&str; 4] = ["cpus", "switch_cost_ns", "seed", "load"];

/// The header of a grid whose varied keys are `vary`.
pub fn header(vary: &[String]) -> Vec<String> {
    HEAD.iter()
        .map(|s| s.to_string())
        .chain(vary.iter().cloned())
        .chain(TAIL.iter().map(|s| s.to_string()))
        .chain(METRICS.iter().map(|m| m.name.to_string()))
        .collect()
}

/// A number as a cell: whole numbers without a fraction, others in the shortest form that
/// reads back to the same value (so a row is a pure function of its point).
pub fn number(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 9e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// The row of `p` after its run `r`.
pub fn row(p: &Point, r: &SimResult) -> Vec<String> {
    let (workload, vary, seed) = match &p.source {
        Source::Generated { spec, vary, seed } => (spec.clone(), vary.clone(), seed.to_string()),
        Source::File { path, .. } => (path.clone(), vec![], String::new()),
    };
    let mut cells = vec![p.index.to_string(), p.policy.clone(), workload];
    cells.extend(vary);
    cells.extend([p.cpus.to_string(), p.switch_cost_ns.to_string(), seed, p.load.map(number).unwrap_or_default()]);
    cells.extend(METRICS.iter().map(|m| number((m.value)(r))));
    cells
}

/// `rows.csv`, open for appending.
#[derive(Debug)]
pub struct RowsFile {
    path: PathBuf,
    file: File,
    width: usize,
    /// The points whose rows are in the file.
    pub done: BTreeSet<usize>,
}

fn line(cells: &[String]) -> Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    w.write_record(cells)?;
    w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))
}

impl RowsFile {
    /// A new file with `header`; refuses to replace one that exists.
    pub fn create(path: &Path, header: &[String]) -> Result<RowsFile> {
        let mut file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(path)
            .with_context(|| format!("creating {}", path.display()))?;
        file.write_all(&line(header)?)?;
        Ok(RowsFile { path: path.to_path_buf(), file, width: header.len(), done: BTreeSet::new() })
    }

    /// The file a killed sweep left: its rows are kept, a torn last line is cut off (its point
    /// runs again), and the header must be `header`. Returns the file and how many bytes were
    /// cut.
    pub fn resume(path: &Path, header: &[String]) -> Result<(RowsFile, u64)> {
        let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
        let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let cut = (bytes.len() - whole) as u64;
        let table = parse(&bytes[..whole], path)?;
        if table.columns != header {
            bail!(
                "{}: its columns are not this grid's ({} against {}): resume with the grid it was started with",
                path.display(),
                table.columns.join(","),
                header.join(",")
            );
        }
        let mut done = BTreeSet::new();
        for r in &table.rows {
            let i: usize = r[0].parse().with_context(|| format!("{}: index '{}'", path.display(), r[0]))?;
            if !done.insert(i) {
                bail!("{}: point {i} appears twice", path.display());
            }
        }
        let file = OpenOptions::new().append(true).open(path)?;
        file.set_len(whole as u64).with_context(|| format!("cutting the torn line off {}", path.display()))?;
        Ok((RowsFile { path: path.to_path_buf(), file, width: header.len(), done }, cut))
    }

    /// Append one row, whole, in one write.
    pub fn append(&mut self, cells: &[String]) -> Result<()> {
        debug_assert_eq!(cells.len(), self.width);
        let index: usize = cells[0].parse()?;
        if !self.done.insert(index) {
            bail!("point {index} ran twice");
        }
        self.file.write_all(&line(cells)?).with_context(|| format!("writing {}", self.path.display()))
    }
}

/// Read a rows file (every line whole).
pub fn read(path: &Path) -> Result<TidyTable> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    parse(&bytes, path)
}

fn parse(bytes: &[u8], path: &Path) -> Result<TidyTable> {
    let mut r = csv::ReaderBuilder::new().has_headers(true).from_reader(bytes);
    let columns: Vec<String> =
        r.headers().with_context(|| format!("{}: header", path.display()))?.iter().map(String::from).collect();
    let mut rows = vec![];
    for (n, rec) in r.records().enumerate() {
        let rec = rec.with_context(|| format!("{}: row {}", path.display(), n + 1))?;
        rows.push(rec.iter().map(String::from).collect());
    }
    Ok(TidyTable { columns, rows })
}

/// The rows sorted by point number.
pub fn sorted(mut t: TidyTable) -> TidyTable {
    t.rows.sort_by_key(|r| r[0].parse::<usize>().unwrap_or(usize::MAX));
    t
}

/// Write `bytes` to `path` through a temporary file and a rename, so a reader never sees half.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(i: usize) -> Vec<String> {
        vec![i.to_string(), "fcfs".into(), "x, with a comma".into()]
    }

    #[test]
    fn a_torn_last_line_is_cut_and_its_point_runs_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.csv");
        let header: Vec<String> = ["index", "policy", "workload"].map(String::from).to_vec();
        let mut f = RowsFile::create(&path, &header).unwrap();
        f.append(&cells(0)).unwrap();
        f.append(&cells(2)).unwrap();
        assert!(f.append(&cells(2)).is_err(), "a point is written once");
        drop(f);
        assert!(RowsFile::create(&path, &header).is_err(), "an existing sweep is never replaced");
        // A kill in the middle of a write.
        let mut raw = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        raw.write_all(b"5,rr,\"half").unwrap();
        let (mut f, cut) = RowsFile::resume(&path, &header).unwrap();
        assert_eq!((cut, f.done.iter().copied().collect::<Vec<_>>()), (10, vec![0, 2]));
        f.append(&cells(5)).unwrap();
        let t = read(&path).unwrap();
        assert_eq!(t.rows.iter().map(|r| r[0].as_str()).collect::<Vec<_>>(), ["0", "2", "5"]);
        assert_eq!(t.rows[2][2], "x, with a comma");
        let other: Vec<String> = ["index", "policy"].map(String::from).to_vec();
        assert!(RowsFile::resume(&path, &other).unwrap_err().to_string().contains("columns"));
    }

    #[test]
    fn numbers_read_back_exactly() {
        assert_eq!(number(3.0), "3");
        assert_eq!(number(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(number(0.1 + 0.2).parse::<f64>().unwrap(), 0.1 + 0.2);
        assert_eq!(number(f64::NAN), "NaN");
    }
}
