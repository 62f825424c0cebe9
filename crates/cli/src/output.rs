//! How commands speak: a human view of a report section (tables, verdicts, where the files
//! are) or one JSON document on stdout with `--json`, and errors as one sentence.

use schedlab_report::section::{Outcome, Section, Status};
use serde_json::Value;

/// Print a section for a person: title, summary, tables, verdicts and the run directory.
pub fn print_section(s: &Section) {
    println!("== {} (seed {}) ==", s.title, s.seed);
    if !s.summary.is_empty() {
        println!("{}\n", s.summary);
    }
    match &s.status {
        Status::Completed => {}
        Status::Unsupported(why) => println!("not run here: {why}\n"),
        Status::Failed(why) => println!("FAILED: {why}\n"),
        Status::Interrupted => println!("interrupted before the end\n"),
    }
    for t in &s.tables {
        println!("{}", schedlab_report::table::render(t));
    }
    for v in &s.verdicts {
        let mark = match v.outcome {
            Outcome::Reproduced => "reproduced",
            Outcome::Differs => "DIFFERS",
            Outcome::NotMeasured => "not measured",
        };
        println!("[{mark}] {} — {}", v.claim, v.detail);
    }
    if let Some(dir) = &s.run_dir {
        println!("\nresults: {dir}");
    }
}

/// Print one JSON document on stdout.
pub fn print_json(doc: &Value) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(doc)?);
    Ok(())
}

/// Print a section as a person or as JSON (its data document) depending on `json`.
pub fn emit(s: &Section, json: bool) -> anyhow::Result<()> {
    if json {
        print_json(&s.data)
    } else {
        print_section(s);
        Ok(())
    }
}

/// An error chain as one sentence: "what failed: why: deeper cause".
pub fn one_sentence(e: &anyhow::Error) -> String {
    e.chain().map(|c| c.to_string()).collect::<Vec<_>>().join(": ")
}
