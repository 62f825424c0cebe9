//! How commands speak: every command that produces results writes them with the one run writer
//! ([`RunDir::write`]) and then prints either a human view of the section (tables, verdicts,
//! where the files are) or, with `--json`, the results document on stdout — the same document
//! as results.json. Errors become one sentence.

use crate::host::Host;
use anyhow::Result;
use schedlab_report::db::NewRun;
use schedlab_report::results::{self, RunDir};
use schedlab_report::section::{Outcome, Section, Status};
use schedlab_report::table::fit_text;
use serde_json::Value;
use std::path::PathBuf;

/// How results are printed on stdout.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Format {
    /// Tables, verdicts and where the files are, for people.
    #[default]
    Table,
    /// The results document (what results.json holds).
    Json,
    /// Every table in tidy CSV (snake_case headers with units, plain numbers), each after a
    /// `# title` line, a blank line between tables.
    Csv,
    /// One JSON object per table row: `table` (its title) and the tidy columns, numbers as
    /// numbers.
    Jsonl,
}

/// The output options every result-producing command takes.
#[derive(clap::Args, Clone, Debug)]
pub struct OutputArgs {
    /// The same as --format json.
    #[arg(long)]
    pub json: bool,
    /// How to print the results: table, json, csv or jsonl.
    #[arg(long, value_enum, default_value_t = Format::Table, conflicts_with = "json")]
    pub format: Format,
    /// Root directory for results: each run writes `<out>/<experiment>/<UTC timestamp>/` and
    /// records itself in `<out>/schedlab.db` (see `schedlab results`).
    #[arg(long, default_value = "results", value_name = "DIR", value_parser = crate::paths::writable_dir)]
    pub out: PathBuf,
    /// No run directory and no database row: the results are only printed (with --json, the
    /// document results.json would hold); files named by other options are still written.
    #[arg(long)]
    pub no_save: bool,
}

impl OutputArgs {
    /// The format asked for (`--json` is `--format json`).
    pub fn format(&self) -> Format {
        if self.json {
            Format::Json
        } else {
            self.format
        }
    }

    /// Whether stdout is for people (and may carry notes such as where a file went).
    pub fn for_people(&self) -> bool {
        self.format() == Format::Table
    }
}

/// Write the section's run directory when it has results (otherwise only build its document),
/// so `s.data` is the results document and `s.run_dir` says where it is.
pub fn save(s: &mut Section, out: &std::path::Path, host: &Host) -> Result<()> {
    if s.has_results() {
        RunDir::write(out, s, &host.provenance)?;
    } else {
        s.data = results::envelope(s, &host.provenance, &results::now_utc());
    }
    Ok(())
}

/// Save and record the run, or with `--no-save` only build its document.
pub fn store(s: &mut Section, o: &OutputArgs, host: &Host) -> Result<()> {
    if o.no_save {
        s.data = results::envelope(s, &host.provenance, &results::now_utc());
        Ok(())
    } else {
        save(s, &o.out, host)?;
        record(s, &o.out, host)
    }
}

/// Store the run, then print it in the format asked for.
pub fn emit(mut s: Section, o: &OutputArgs, host: &Host) -> Result<Section> {
    store(&mut s, o, host)?;
    print_as(&s, o.format(), print_section)?;
    Ok(s)
}

/// Print the section in `format`; `people` prints the table form.
pub fn print_as(s: &Section, format: Format, people: impl FnOnce(&Section)) -> Result<()> {
    match format {
        Format::Table => people(s),
        Format::Json => print_json(&s.data)?,
        Format::Csv => print!("{}", tables_as_csv(&s.tables)),
        Format::Jsonl => print!("{}", tables_as_jsonl(s)?),
    }
    Ok(())
}

/// Every table, tidy, as CSV after a `# title` line; a blank line between tables.
pub fn tables_as_csv<'a>(tables: impl IntoIterator<Item = &'a schedlab_report::section::Table>) -> String {
    let mut out = String::new();
    for (i, t) in tables.into_iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!("# {}\n", t.title));
        out.push_str(&t.tidy().to_csv());
    }
    out
}

/// One JSON object per row of every table, tidy, numbers as numbers.
fn tables_as_jsonl(s: &Section) -> Result<String> {
    let mut out = String::new();
    for t in &s.tables {
        let tidy = t.tidy();
        for r in &tidy.rows {
            let mut obj = serde_json::Map::new();
            obj.insert("table".into(), Value::String(t.title.clone()));
            for (c, v) in tidy.columns.iter().zip(r) {
                let value = match v.parse::<f64>() {
                    _ if v.is_empty() => Value::Null,
                    Ok(x) => serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number),
                    Err(_) => Value::String(v.clone()),
                };
                obj.insert(c.clone(), value);
            }
            out.push_str(&serde_json::to_string(&Value::Object(obj))?);
            out.push('\n');
        }
    }
    Ok(out)
}

/// When this command started, for the database row written when it ends.
static STARTED: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Note the command's start (called first thing in `main`).
pub fn mark_start() {
    let _ = STARTED.set(schedlab_report::db::now_utc());
}

/// Record a finished command's run in `<out>/schedlab.db`, as `reproduce` records each of its
/// experiments, so `schedlab results list` sees every run that wrote a directory.
fn record(s: &Section, out: &std::path::Path, host: &Host) -> Result<()> {
    let path = out.join("schedlab.db");
    let mut db = crate::host::open_db(&path)?;
    let run = NewRun {
        experiment: s.experiment.clone(),
        seed: s.seed.clone(),
        title: s.title.clone(),
        scale: "default".into(),
        shard: None,
        parameters: s.parameters.clone(),
        started_utc: STARTED.get().cloned(),
    };
    let id = db.start(&run, &host.provenance)?;
    db.finish(id, s).map_err(|e| e.context(format!("recording the run in {}", path.display())))
}

/// Print a section for a person: title, summary, tables, verdicts and the run directory.
pub fn print_section(s: &Section) {
    println!("== {} (seed {}) ==", s.title, s.seed);
    if !s.summary.is_empty() {
        println!("{}\n", fit_text(&s.summary));
    }
    if !s.scale.is_empty() {
        println!("{}\n", fit_text(&format!("Scale: {}.", s.scale)));
    }
    match &s.status {
        Status::Completed => {}
        Status::Unsupported(why) => println!("{}\n", fit_text(&format!("not run here: {why}"))),
        Status::Failed(why) => println!("{}\n", fit_text(&format!("FAILED: {why}"))),
        Status::Interrupted => println!("interrupted before the end\n"),
    }
    for t in &s.tables {
        println!("{}", schedlab_report::table::render(t));
    }
    for v in &s.verdicts {
        let mark = match v.outcome {
            Outcome::Differs => "DIFFERS",
            Outcome::NotMet => "NOT MET",
            o => o.word(),
        };
        let kind = v.kind.word().replace('_', " ");
        println!("{}", fit_text(&format!("[{mark}] ({kind}) {} — {}", v.claim, v.detail)));
    }
    if let Some(dir) = &s.run_dir {
        println!("\nresults: {dir}");
    }
}

/// Print one JSON document on stdout.
pub fn print_json(doc: &Value) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(doc)?);
    Ok(())
}

/// An error chain as one sentence: "what failed: why: deeper cause".
pub fn one_sentence(e: &anyhow::Error) -> String {
    e.chain().map(|c| c.to_string()).collect::<Vec<_>>().join(": ")
}
