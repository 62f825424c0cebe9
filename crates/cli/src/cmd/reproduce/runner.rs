//! `schedlab reproduce`'s run loop: each experiment recorded in the database, run, written with
//! the run writer and recorded again when it ends; the report rewritten before each one; the
//! sections and the summary printed at the end.

use super::{not_run_entry, run_one, scale_word, status_word, tables, Args};
use crate::host::Host;
use crate::output;
use crate::progress::Reporter;
use anyhow::Context;
use schedlab_lab::{Experiment, Scale};
use schedlab_report::db::{Db, NewRun};
use schedlab_report::html::{self, NotRun, RunInfo};
use schedlab_report::section::{Section, Status};
use serde_json::{json, Value};

/// The run loop's state: what finished, what did not, and where it is all recorded.
pub struct Runner<'a> {
    pub db: Db,
    pub info: RunInfo,
    pub host: &'a Host,
    pub args: &'a Args,
    pub scale: Scale,
    pub sections: Vec<Section>,
    pub runs: Vec<Value>,
    pub not_run: Vec<NotRun>,
}

impl Runner<'_> {
    fn write_report(&self, not_run: &[NotRun]) -> anyhow::Result<()> {
        let page = html::render(&html::Report {
            info: self.info.clone(),
            sections: &self.sections,
            not_run,
            seed_numbers: schedlab_lab::seed_data::all(),
        });
        html::write(&self.args.report, &page)
    }

    /// Run each experiment in turn: record it, run it, write its run directory, record how it
    /// ended. The report is rewritten before each one, so a run killed outright still leaves a
    /// page saying what finished and what was running.
    pub fn run_all(&mut self, todo: &[&dyn Experiment]) -> anyhow::Result<()> {
        let pending = |from: usize, reason: &str| -> Vec<NotRun> {
            todo[from..].iter().map(|e| not_run_entry(*e, reason.to_string())).collect()
        };
        let progress =
            Reporter::new(&todo.iter().map(|e| (e.name().to_string(), e.estimate_s(self.scale))).collect::<Vec<_>>());
        for (i, e) in todo.iter().enumerate() {
            if schedlab_os::signals::stop_requested() {
                self.not_run.extend(pending(i, "interrupted before it started"));
                break;
            }
            let running = not_run_entry(
                *e,
                format!(
                    "running since {} when this report was written; if reproduce is no longer running, it was killed \
                     (see `schedlab results list`)",
                    schedlab_report::results::now_utc()
                ),
            );
            let rest = pending(i + 1, "pending: reproduce had not reached it yet");
            self.write_report(&[self.not_run.clone(), vec![running], rest].concat())?;
            let id = self.db.start(&self.new_run(*e), &self.host.provenance)?;
            let handle = progress.start(i, e.title());
            let keep = crate::unfinished::dir(&self.args.out, e.name());
            let mut section = run_one(*e, &self.host.context(self.scale, &handle, Some(keep.clone())));
            // A stop signal ends an experiment early, as a result or as an error on its way out
            // (a trial child killed mid-run): either way it was interrupted, not broken.
            if schedlab_os::signals::stop_requested() && matches!(section.status, Status::Completed | Status::Failed(_))
            {
                if let Status::Failed(why) = &section.status {
                    section.summary = format!("{} (stopped while: {why})", section.summary).trim().to_string();
                }
                section.status = Status::Interrupted;
            }
            // What the experiment kept as it went stays only where its results are not written.
            let completed = matches!(section.status, Status::Completed);
            if !completed {
                say_kept(&mut section, &keep);
            }
            match output::save(&mut section, &self.args.out, self.host) {
                Err(err) => {
                    section.status = Status::Failed(format!("writing its results: {}", output::one_sentence(&err)));
                    if completed {
                        say_kept(&mut section, &keep);
                    }
                }
                Ok(()) if completed => {
                    if let Err(err) = crate::unfinished::remove(&keep) {
                        add_to_summary(&mut section, &output::one_sentence(&err));
                    }
                }
                Ok(()) => {}
            }
            progress.finish(i, handle, status_word(&section.status));
            self.db
                .finish(id, &section)
                .with_context(|| format!("recording run {id} in {}", self.db.path().display()))?;
            self.runs.push(json!({ "id": id, "experiment": e.name(), "status": status_word(&section.status) }));
            self.sections.push(section);
        }
        progress.done();
        self.write_report(&self.not_run)
    }

    fn new_run(&self, e: &dyn Experiment) -> NewRun {
        NewRun {
            experiment: e.name().into(),
            seed: e.seed().into(),
            title: e.title().into(),
            scale: scale_word(self.scale).into(),
            shard: self.args.shard.map(|s| s.to_string()),
            parameters: json!({ "scale": scale_word(self.scale), "out": self.args.out }),
            started_utc: None,
        }
    }

    /// Every section and the summary for a person, or one JSON document.
    pub fn print(&self, db_path: &std::path::Path) -> anyhow::Result<()> {
        if self.args.json {
            return output::print_json(&json!({
                "report": self.args.report,
                "database": db_path,
                "scale": scale_word(self.scale),
                "shard": self.args.shard.map(|s| s.to_string()),
                "runs": self.runs,
                "not_run": self.not_run.iter().map(|n| json!({"experiment": n.experiment, "seed": n.seed, "reason": n.reason})).collect::<Vec<_>>(),
                "summary": tables::summary_by_kind(&self.sections),
                "sections": self.sections,
            }));
        }
        for s in &self.sections {
            output::print_section(s);
            println!();
        }
        println!("{}", schedlab_report::table::render(&tables::summary(&self.sections, &self.not_run)));
        println!("report:   {}", self.args.report.display());
        let db_flag = if db_path == std::path::Path::new(schedlab_report::db::DEFAULT_PATH) {
            String::new()
        } else {
            format!(" --db {}", db_path.display())
        };
        println!("database: {} (see `schedlab results list{db_flag}`)", db_path.display());
        Ok(())
    }
}

/// Say in the section where what the experiment made before it ended is (validate's recordings
/// replay from there), when it made any.
fn say_kept(section: &mut Section, keep: &std::path::Path) {
    if keep.exists() {
        add_to_summary(section, &format!("what it made before it ended is kept in {}", keep.display()));
    }
}

fn add_to_summary(section: &mut Section, what: &str) {
    section.summary = format!("{} ({what})", section.summary).trim().to_string();
}
