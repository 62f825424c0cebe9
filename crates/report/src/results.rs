//! The results layout shared by every experiment:
//! `<root>/<experiment>/<UTC timestamp>/results.json` plus CSV tables and SVG figures.
//!
//! `results.json` always holds `experiment`, `created_utc`, `schedlab` (version, commit),
//! `machine` (see [`schedlab_os::machine::MachineFacts`]), `parameters` and the experiment's own
//! data, so a run can be re-read without the code that made it.

use anyhow::{Context, Result};
use schedlab_os::machine::MachineFacts;
use serde::Serialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Version and commit of the code that produced a result.
pub fn provenance() -> Value {
    json!({ "version": crate::VERSION, "commit": crate::GIT_COMMIT })
}

/// Now, as RFC 3339 UTC to the second (`2026-11-22T17:28:43Z`): the stamp of results and reports.
pub fn now_utc() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The standard envelope of a results document.
pub fn envelope(experiment: &str, parameters: &impl Serialize, data: Value) -> Value {
    let mut doc = json!({
        "experiment": experiment,
        "created_utc": now_utc(),
        "schedlab": provenance(),
        "machine": MachineFacts::collect(),
        "parameters": parameters,
    });
    if let (Some(obj), Value::Object(extra)) = (doc.as_object_mut(), data) {
        for (k, v) in extra {
            obj.insert(k, v);
        }
    }
    doc
}

/// One run's directory.
#[derive(Debug, Clone)]
pub struct RunDir {
    path: PathBuf,
}

impl RunDir {
    /// Create `<root>/<experiment>/<UTC timestamp>/` (a suffix keeps two runs in one second apart).
    pub fn create(root: &Path, experiment: &str) -> Result<Self> {
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
        let base = root.join(experiment);
        let mut path = base.join(&stamp);
        let mut n = 1;
        while path.exists() {
            n += 1;
            path = base.join(format!("{stamp}-{n}"));
        }
        std::fs::create_dir_all(&path).with_context(|| format!("creating results directory {}", path.display()))?;
        Ok(RunDir { path })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write `results.json` (pretty-printed).
    pub fn write_json(&self, doc: &Value) -> Result<PathBuf> {
        self.write_text("results.json", &serde_json::to_string_pretty(doc)?)
    }

    /// Write a CSV table: a header row and rows of cells.
    pub fn write_csv(&self, name: &str, header: &[&str], rows: &[Vec<String>]) -> Result<PathBuf> {
        let path = self.path.join(name);
        let mut w = csv::Writer::from_path(&path).with_context(|| format!("writing {}", path.display()))?;
        w.write_record(header)?;
        for row in rows {
            w.write_record(row)?;
        }
        w.flush()?;
        Ok(path)
    }

    /// Write a figure or any other text file.
    pub fn write_text(&self, name: &str, text: &str) -> Result<PathBuf> {
        let path = self.path.join(name);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_dirs_are_distinct_and_hold_files() {
        let root = tempfile::tempdir().unwrap();
        let a = RunDir::create(root.path(), "timers").unwrap();
        let b = RunDir::create(root.path(), "timers").unwrap();
        assert_ne!(a.path(), b.path());
        let doc = envelope("timers", &json!({"n": 3}), json!({"queues": {}}));
        assert_eq!(doc["parameters"]["n"], 3);
        assert!(doc["machine"]["kernel"].is_string());
        assert!(doc["queues"].is_object());
        let p = a.write_json(&doc).unwrap();
        let back: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        assert_eq!(back["experiment"], "timers");
        let csv = a.write_csv("t.csv", &["a", "b"], &[vec!["1".into(), "2".into()]]).unwrap();
        assert_eq!(std::fs::read_to_string(csv).unwrap(), "a,b\n1,2\n");
    }
}
