//! `schedlab sim convert`: a workload from one format into another — schedlab's JSON, YAML, or
//! rt-app's JSON — so a workload can be run by rt-app on a real machine, and an rt-app workload
//! simulated here.

use anyhow::{Context, Result};
use schedlab_os::usage::OrUsage;
use std::path::PathBuf;

/// Convert a workload between schedlab JSON, YAML and rt-app JSON.
///
/// The input's format is recognised (schedlab JSON, YAML by extension or first character,
/// rt-app JSON by its `tasks` object). What one format cannot express is refused by name,
/// never dropped: rt-app's memory, I/O, condition-variable and barrier events have no schedlab
/// model, and its mutexes map onto schedlab's locks only where one is held over a whole CPU
/// burst; schedlab's wake-ups between tasks have no rt-app form.
///
/// Examples:
///   schedlab sim convert --workload w.json --to rtapp -o w.rtapp.json && rt-app w.rtapp.json
///   schedlab sim convert --workload rt-app-example.json --to json -o w.json
///   schedlab sim convert --workload w.json --to yaml
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct ConvertArgs {
    /// The workload to convert (`-` = stdin).
    #[arg(long)]
    workload: PathBuf,
    /// The format to write.
    #[arg(long, value_enum)]
    to: Target,
    /// Write here instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE", value_parser = crate::paths::writable_file)]
    output: Option<PathBuf>,
}

/// A workload file format.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum Target {
    /// schedlab's JSON (times in ms).
    Json,
    /// schedlab's fields in YAML.
    Yaml,
    /// rt-app's JSON (times in µs).
    Rtapp,
}

pub fn run(a: ConvertArgs) -> Result<()> {
    let w = crate::workload_file::read(&a.workload)?;
    let text = match a.to {
        Target::Json => w.to_json_string() + "\n",
        Target::Yaml => w.to_yaml_string(),
        Target::Rtapp => schedlab_sim::rtapp::export(&w).context("as rt-app").or_usage()? + "\n",
    };
    match &a.output {
        Some(p) => std::fs::write(p, text).with_context(|| format!("writing {}", p.display())),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}
