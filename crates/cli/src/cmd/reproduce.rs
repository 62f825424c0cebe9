//! `schedlab reproduce`: run every registered seed experiment and summarise.

use crate::output;
use anyhow::bail;
use schedlab_lab::experiment::NoProgress;
use schedlab_lab::{registry, RunContext, Scale};
use schedlab_report::section::{Outcome, Section, Status, Table};
use std::path::PathBuf;

/// Arguments of `schedlab reproduce`.
#[derive(clap::Args)]
pub struct Args {
    /// Small scale for CI: minutes in all on a 2-core machine.
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// The seed documents' own scale (hours).
    #[arg(long)]
    full: bool,
    /// Run only these experiments (comma-separated registry names; see the summary table).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Root directory for results (each run writes `<out>/<experiment>/<UTC timestamp>/`).
    #[arg(long, default_value = "results")]
    out: PathBuf,
    /// Print one JSON document (every section) on stdout instead of tables.
    #[arg(long)]
    json: bool,
}

/// Run `schedlab reproduce`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let scale = if args.quick {
        Scale::Quick
    } else if args.full {
        Scale::Full
    } else {
        Scale::Default
    };
    let all = registry::all();
    let known: Vec<&str> = all.iter().map(|e| e.name()).collect();
    for name in &args.only {
        if !known.contains(&name.as_str()) {
            bail!("unknown experiment '{name}' in --only (known: {})", known.join(", "));
        }
    }
    let chosen: Vec<_> =
        all.iter().filter(|e| args.only.is_empty() || args.only.iter().any(|n| n == e.name())).collect();
    if chosen.is_empty() {
        bail!("no experiments are registered in this build");
    }
    schedlab_os::signals::install_stop_handler();
    let ctx = RunContext { scale, out_root: args.out.clone(), progress: &NoProgress };
    let mut sections: Vec<Section> = Vec::new();
    for e in chosen {
        if schedlab_os::signals::stop_requested() {
            break;
        }
        if !args.json {
            eprintln!("schedlab: running {} — {}", e.name(), e.title());
        }
        let section = match e.run(&ctx) {
            Ok(s) => s,
            Err(err) => {
                let mut s = Section::new(e.name(), e.seed(), e.title());
                s.status = Status::Failed(output::one_sentence(&err));
                s
            }
        };
        if !args.json {
            output::print_section(&section);
        }
        sections.push(section);
    }
    if args.json {
        return output::print_json(&serde_json::json!({ "sections": sections }));
    }
    println!("{}", schedlab_report::table::render(&summary(&sections)));
    Ok(())
}

fn summary(sections: &[Section]) -> Table {
    let mut t = Table::new("Summary", &["experiment", "seed", "status", "reproduced", "differs"]);
    for s in sections {
        let count = |o: Outcome| s.verdicts.iter().filter(|v| v.outcome == o).count().to_string();
        let status = match &s.status {
            Status::Completed => "completed".to_string(),
            Status::Unsupported(why) => format!("not run: {why}"),
            Status::Failed(why) => format!("failed: {why}"),
            Status::Interrupted => "interrupted".to_string(),
        };
        t.row(vec![s.experiment.clone(), s.seed.clone(), status, count(Outcome::Reproduced), count(Outcome::Differs)]);
    }
    t
}
