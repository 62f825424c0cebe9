//! Reading a workload file the user names — schedlab's JSON, the same in YAML (a .yaml/.yml
//! file, or text that does not start with `{`), or an rt-app JSON file (its `tasks` is an
//! object, schedlab's a list) — with every failure a usage error naming the file.

use anyhow::{Context, Result};
use schedlab_os::usage::OrUsage;
use schedlab_sim::workload::Workload;
use std::io::Read;
use std::path::Path;

/// The workload at `path` (`-` = stdin).
pub fn read(path: &Path) -> Result<Workload> {
    let (text, name) = if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).context("reading the workload from stdin").or_usage()?;
        (text, "from stdin".to_string())
    } else {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading workload {}", path.display())).or_usage()?;
        (text, path.display().to_string())
    };
    let yaml = match path.extension().and_then(|e| e.to_str()) {
        Some("yaml" | "yml") => true,
        Some(_) => false,
        None => !text.trim_start().starts_with(['{', '/']),
    };
    if !yaml && is_rt_app(&text) {
        return Ok(schedlab_sim::rtapp::import(&text).with_context(|| format!("rt-app workload {name}")).or_usage()?);
    }
    Ok(Workload::from_text(&text, yaml).with_context(|| format!("workload {name}")).or_usage()?)
}

/// Whether JSON text is an rt-app document: its `"tasks"` holds an object (schedlab's a list).
pub fn is_rt_app(text: &str) -> bool {
    text.split("\"tasks\"")
        .skip(1)
        .any(|after| after.trim_start().trim_start_matches(':').trim_start().starts_with('{'))
}
