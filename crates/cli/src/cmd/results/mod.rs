//! `schedlab results`: the results database — list, show, compare, export and merge past
//! runs, and rebuild the HTML report from it (e.g. after merging shards).

mod export;
mod views;

use crate::host::{self, Host};
use crate::output;
use clap::Subcommand;
use schedlab_report::db::{Filter, RunStatus, DEFAULT_PATH};
use schedlab_report::html::{self, RunInfo};
use schedlab_report::section::Table;
use serde_json::{json, Value};
use std::path::PathBuf;
use views::{compare, list_table, show, summary_json};

const EXAMPLES: &str = "\
Every `schedlab reproduce` records each experiment it runs here: experiment, parameters, machine,
version and commit, status (running, completed, failed, unsupported, interrupted), the raw results
document and start/end times. A run whose process was killed is marked interrupted the next time the
database is opened.

Examples:
  schedlab results list                       every run, oldest first
  schedlab results list --experiment timers --limit 5
  schedlab results show 12                    one run: parameters, machine, tables, verdicts
  schedlab results compare 12 19              what changed between two runs (numeric leaves)
  schedlab results export 12 -o run12/        every table of run 12 as a tidy CSV file
  schedlab results export 12 --table 1 --format parquet -o t.parquet
  schedlab results export 12 --format leaves  every leaf of the results document as CSV
  schedlab results merge shard1/schedlab.db shard2/schedlab.db --db all.db
  schedlab results report --db all.db         rebuild report/index.html from the latest runs";

/// Arguments of `schedlab results`.
#[derive(clap::Args)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The results database (for `merge`: the one the others are merged into).
    #[arg(long, global = true, default_value = DEFAULT_PATH, value_name = "PATH")]
    db: PathBuf,
    /// Print one JSON document on stdout instead of tables.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List runs, oldest first.
    List {
        /// Only this experiment (registry name, e.g. timers).
        #[arg(long)]
        experiment: Option<String>,
        /// Only runs with this status: running, completed, failed, unsupported or interrupted.
        #[arg(long, value_parser = parse_status)]
        status: Option<RunStatus>,
        /// Only the most recent N runs (0 = all).
        #[arg(long, default_value_t = 0)]
        limit: usize,
    },
    /// Show one run: its parameters, machine, tables and verdicts.
    Show {
        /// Run id (see `results list`).
        id: i64,
    },
    /// Compare two runs: the parameters and text that changed, and the numeric leaves that differ,
    /// rows of arrays paired by name (policy, case, …) and changes of means judged against their
    /// 95% intervals.
    Compare {
        /// The first (older) run id.
        a: i64,
        /// The second run id; changes are B − A.
        b: i64,
        /// Also list the leaves that are equal.
        #[arg(long)]
        all: bool,
        /// Show at most N rows (0 = all).
        #[arg(long, default_value_t = 60)]
        limit: usize,
    },
    /// Export one run's tables, tidy (snake_case headers with units, plain numbers, labels as
    /// text), as CSV or Parquet — one file per table — or every leaf of its results document.
    Export {
        /// Run id.
        id: i64,
        /// csv or parquet: the tables; leaves: run, experiment, path, value per leaf of the
        /// results document (--json prints the whole run instead).
        #[arg(long, value_enum, default_value = "csv")]
        format: export::ExportFormat,
        /// Only the table with this number (1 = the first, as `results show` lists them).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        table: Option<u32>,
        /// Write here instead of stdout: a file for one table (or the leaves), a directory
        /// (created) for several tables, one file each.
        #[arg(long, short, value_name = "PATH")]
        output: Option<PathBuf>,
    },
    /// Merge other results databases (e.g. shards) into --db; runs already there are skipped.
    Merge {
        /// Databases to read (they are not changed).
        #[arg(required = true, value_name = "DB")]
        sources: Vec<PathBuf>,
    },
    /// Rebuild the HTML report from the latest finished run of each experiment.
    Report {
        /// Where to write it.
        #[arg(long, default_value = "report/index.html", value_name = "PATH")]
        html: PathBuf,
    },
}

fn parse_status(s: &str) -> Result<RunStatus, String> {
    RunStatus::parse(s)
        .ok_or_else(|| format!("'{s}' is not a status: use running, completed, failed, unsupported or interrupted"))
}

/// Run `schedlab results`.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.command {
        Cmd::List { experiment, status, limit } => {
            let db = host::open_existing_db(&args.db)?;
            let runs = db.list(&Filter { experiment, status, limit })?;
            if args.json {
                let rows: Vec<Value> = runs.iter().map(summary_json).collect();
                return output::print_json(&json!({ "database": args.db, "runs": rows }));
            }
            println!("{}", schedlab_report::table::render(&list_table(&runs)));
            if runs.is_empty() {
                println!("(no runs recorded in {})", args.db.display());
            }
            Ok(())
        }
        Cmd::Show { id } => {
            let db = host::open_existing_db(&args.db)?;
            let run = db.get(id)?;
            if args.json {
                return output::print_json(&serde_json::to_value(&run)?);
            }
            show(&run);
            Ok(())
        }
        Cmd::Compare { a, b, all, limit } => {
            let db = host::open_existing_db(&args.db)?;
            let (ra, rb) = (db.get(a)?, db.get(b)?);
            compare(&ra, &rb, all, limit, args.json)
        }
        Cmd::Export { id, format, table, output } => {
            let db = host::open_existing_db(&args.db)?;
            let run = db.get(id)?;
            if args.json {
                let text = serde_json::to_string_pretty(&run)? + "\n";
                return export::write_out(output.as_deref(), text.as_bytes(), false);
            }
            export::export(&run, format, table.map(|n| n as usize), output.as_deref())
        }
        Cmd::Merge { sources } => {
            for s in &sources {
                if !s.is_file() {
                    schedlab_os::bail_usage!("cannot merge {}: no such file", s.display());
                }
            }
            let created = !args.db.exists();
            let mut db = host::open_db(&args.db)?;
            let mut t =
                Table::new(format!("Merged into {}", args.db.display()), &["source", "added", "already present"]);
            let mut rows = Vec::new();
            for s in &sources {
                let m = match db.merge_from(s) {
                    Ok(m) => m,
                    Err(e) if created => {
                        // A database this command created holds nothing the user had: leave no
                        // empty file behind to be mistaken for a merge.
                        drop(db);
                        remove_database(&args.db);
                        return Err(e);
                    }
                    Err(e) => return Err(e),
                };
                t.row(vec![s.display().to_string(), m.added.to_string(), m.already_present.to_string()]);
                rows.push(json!({ "source": s, "added": m.added, "already_present": m.already_present }));
            }
            let total = db.list(&Filter::default())?.len();
            if args.json {
                return output::print_json(&json!({ "database": args.db, "merged": rows, "runs": total }));
            }
            println!("{}", schedlab_report::table::render(&t.with_note(format!("{total} runs in all"))));
            Ok(())
        }
        Cmd::Report { html: path } => {
            let db = host::open_existing_db(&args.db)?;
            let latest = db.latest_sections()?;
            let sections: Vec<_> = latest.iter().map(|(_, s)| s.clone()).collect();
            let scales: std::collections::BTreeSet<_> = latest.iter().map(|(r, _)| r.scale.clone()).collect();
            let info = RunInfo::new(
                &Host::collect().provenance,
                scales.into_iter().collect::<Vec<_>>().join(", "),
                None,
                Some(args.db.display().to_string()),
            );
            let page = html::render(&html::Report {
                info,
                sections: &sections,
                not_run: &[],
                seed_numbers: schedlab_lab::seed_data::all(),
            });
            html::write(&path, &page)?;
            if args.json {
                let ids: Vec<i64> = latest.iter().map(|(r, _)| r.id).collect();
                return output::print_json(&json!({ "report": path, "runs": ids }));
            }
            println!("report: {} ({} experiments from {})", path.display(), sections.len(), args.db.display());
            Ok(())
        }
    }
}

/// Remove an SQLite database file and the journal files SQLite keeps beside it.
fn remove_database(path: &std::path::Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}
