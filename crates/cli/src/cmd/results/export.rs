//! `schedlab results export`: a stored run's tables as tidy CSV or Parquet files (one file per
//! table), or every leaf of its results document as one CSV.

use schedlab_report::db::Run;
use schedlab_report::leaves;
use schedlab_report::section::Table;
use schedlab_report::tidy::TidyTable;
use std::io::{IsTerminal, Write};
use std::path::Path;

/// What `results export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// Each table, tidy, as CSV (snake_case headers with units, plain numbers).
    Csv,
    /// Each table, tidy, as Parquet (whole numbers INT64, other numbers DOUBLE, labels UTF-8,
    /// empty cells null).
    Parquet,
    /// Every leaf of the results document: run, experiment, path, value.
    Leaves,
}

impl ExportFormat {
    fn extension(self) -> &'static str {
        match self {
            ExportFormat::Parquet => "parquet",
            _ => "csv",
        }
    }
}

/// Export `run`'s tables (`table`: only the one with this number, 1 = first) or leaves to
/// `output` (a file for one table or the leaves; a directory — one that exists or a path ending
/// in `/` — for one file per table) or stdout.
pub fn export(run: &Run, format: ExportFormat, table: Option<usize>, output: Option<&Path>) -> anyhow::Result<()> {
    if format == ExportFormat::Leaves {
        return write_out(output, leaves::to_csv(run.id, &run.experiment, &run.data).as_bytes(), false);
    }
    let tables = chosen_tables(run, table)?;
    let into_dir = output.is_some_and(|p| p.is_dir() || p.as_os_str().to_string_lossy().ends_with('/'));
    if tables.len() == 1 && !into_dir {
        let (_, t) = tables[0];
        return write_out(output, &encode(run, t, format)?, format == ExportFormat::Parquet);
    }
    let Some(dir) = output else {
        if format == ExportFormat::Csv {
            // Several CSV tables on stdout: each after a `# title` line, as `--format csv` prints.
            let text = crate::output::tables_as_csv(tables.iter().map(|(_, t)| *t));
            return write_out(None, text.as_bytes(), false);
        }
        schedlab_os::bail_usage!(
            "run {} has {} tables: give --output DIR for one Parquet file each, or --table N for one ({})",
            run.id,
            tables.len(),
            titles(run)
        );
    };
    std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("creating {}: {e}", dir.display()))?;
    for (n, t) in tables {
        let path = dir.join(format!("{}_{n:02}_{}.{}", run.experiment, slug(&t.title), format.extension()));
        std::fs::write(&path, encode(run, t, format)?)
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
        println!("{}", path.display());
    }
    Ok(())
}

/// Every table of `run` with its number (1 = first).
fn numbered_tables(run: &Run) -> Vec<(usize, &Table)> {
    run.section.iter().flat_map(|s| s.tables.iter()).enumerate().map(|(i, t)| (i + 1, t)).collect()
}

/// The tables asked for, each with its number.
fn chosen_tables(run: &Run, table: Option<usize>) -> anyhow::Result<Vec<(usize, &Table)>> {
    let all = numbered_tables(run);
    if all.is_empty() {
        anyhow::bail!(
            "run {} has no tables (status {}); `--format leaves` exports its results document",
            run.id,
            run.status.as_str()
        );
    }
    match table {
        None => Ok(all),
        Some(n) => match all.into_iter().find(|(i, _)| *i == n) {
            Some(t) => Ok(vec![t]),
            None => schedlab_os::bail_usage!("--table {n}: run {} has tables {}", run.id, titles(run)),
        },
    }
}

fn titles(run: &Run) -> String {
    let names: Vec<String> = numbered_tables(run).iter().map(|(n, t)| format!("{n}: {}", t.title)).collect();
    names.join("; ")
}

fn encode(run: &Run, t: &Table, format: ExportFormat) -> anyhow::Result<Vec<u8>> {
    let tidy_table: TidyTable = t.tidy();
    Ok(match format {
        ExportFormat::Parquet => schedlab_report::tidy_parquet::to_parquet(
            &tidy_table,
            &[
                ("title", t.title.clone()),
                ("run", run.id.to_string()),
                ("run_uid", run.uid.clone()),
                ("experiment", run.experiment.clone()),
                ("schedlab", format!("{} ({})", run.version, run.commit)),
            ],
        )?,
        _ => tidy_table.to_csv().into_bytes(),
    })
}

/// Write `bytes` to `output`, or to stdout — unless they are binary and stdout is a terminal.
pub fn write_out(output: Option<&Path>, bytes: &[u8], binary: bool) -> anyhow::Result<()> {
    match output {
        Some(p) => std::fs::write(p, bytes).map_err(|e| anyhow::anyhow!("writing {}: {e}", p.display())),
        None => {
            let mut out = std::io::stdout().lock();
            if binary && out.is_terminal() {
                schedlab_os::bail_usage!("Parquet is binary: give --output FILE or redirect stdout");
            }
            out.write_all(bytes)?;
            Ok(out.flush()?)
        }
    }
}

/// A table title as a file-name part: lower-case words joined by `_`, at most 48 characters.
fn slug(title: &str) -> String {
    let s = schedlab_report::tidy::snake(title);
    let cut: String = s.chars().take(48).collect();
    cut.trim_end_matches('_').to_string()
}
