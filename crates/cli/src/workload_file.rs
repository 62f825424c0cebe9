//! Reading a workload file the user names: JSON or YAML (by the file's extension; from stdin,
//! `-`, by its first character), with every failure a usage error naming the file.

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
        None => !text.trim_start().starts_with('{'),
    };
    Ok(Workload::from_text(&text, yaml).with_context(|| format!("workload {name}")).or_usage()?)
}
