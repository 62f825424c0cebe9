//! The one run writer. Every experiment hands back a [`Section`]; [`RunDir::write`] lays it out
//! as `<root>/<experiment>/<UTC timestamp>/`:
//! - `results.json`: the envelope — [`ENVELOPE_KEYS`]: when, what, which schedlab built it
//!   (version, commit), on which machine, with which parameters, the experiment's raw results
//!   and its verdicts — so a run can be re-read without the code that made it;
//! - every table as `table<N>.csv` (tidy: see [`crate::tidy`]), every figure as its SVG file, and the section's extra data
//!   files (raw CSV rows, text layouts).
//!
//! What is recorded about the code and the machine arrives as a [`Provenance`], collected once
//! by the caller: this crate never reads the machine itself.

use crate::section::{DataFile, Section};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The top-level keys of every results.json, in order.
pub const ENVELOPE_KEYS: [&str; 9] =
    ["created_utc", "experiment", "schedlab", "machine", "parameters", "scale", "status", "results", "verdicts"];

/// Which code produced a result, and on which machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub version: String,
    /// The git commit the binary was built from (`-dirty` when the tree had changes).
    pub commit: String,
    /// The machine facts (kernel, CPUs, clocksource, RT throttling, …) as collected by the caller.
    pub machine: Value,
}

impl Provenance {
    /// This build's version and commit, with the caller's machine facts.
    pub fn new(machine: Value) -> Self {
        Provenance { version: crate::VERSION.into(), commit: crate::GIT_COMMIT.into(), machine }
    }

    /// `{"version", "commit"}`, as results.json and the database record it.
    pub fn schedlab(&self) -> Value {
        json!({ "version": self.version, "commit": self.commit })
    }
}

/// Now, as RFC 3339 UTC to the second (`2026-11-22T17:28:43Z`): the stamp of results and reports.
pub fn now_utc() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Now, as a run directory names it (`20261122T172843Z`).
pub fn dir_stamp() -> String {
    chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string()
}

/// The results document of a section: [`ENVELOPE_KEYS`] in order.
pub fn envelope(s: &Section, prov: &Provenance, created_utc: &str) -> Value {
    let mut doc = serde_json::Map::new();
    doc.insert("created_utc".into(), json!(created_utc));
    doc.insert("experiment".into(), json!(s.experiment));
    doc.insert("schedlab".into(), prov.schedlab());
    doc.insert("machine".into(), prov.machine.clone());
    doc.insert("parameters".into(), s.parameters.clone());
    // The scale against the seed's own (`reproduce` says it; null where nothing does).
    doc.insert("scale".into(), if s.scale.is_empty() { Value::Null } else { json!(s.scale) });
    doc.insert("status".into(), serde_json::to_value(&s.status).unwrap_or(Value::Null));
    doc.insert("results".into(), s.results.clone());
    doc.insert("verdicts".into(), serde_json::to_value(&s.verdicts).unwrap_or(Value::Null));
    Value::Object(doc)
}

/// One run's directory.
#[derive(Debug, Clone)]
pub struct RunDir {
    path: PathBuf,
}

impl RunDir {
    /// Write `section` as a new run under `root` (see the module documentation). Afterwards the
    /// section's `data` is the results document and its `results` are moved into it; its
    /// `run_dir` names the directory.
    pub fn write(root: &Path, section: &mut Section, prov: &Provenance) -> Result<RunDir> {
        let dir = RunDir::create(root, &section.experiment)?;
        let doc = envelope(section, prov, &now_utc());
        dir.write_text("results.json", &serde_json::to_string_pretty(&doc)?)?;
        for (i, t) in section.tables.iter().enumerate() {
            dir.write_text(&format!("table{}.csv", i + 1), &t.tidy().to_csv())?;
        }
        for f in &section.figures {
            dir.write_text(&f.file, &f.svg)?;
        }
        for f in &section.files {
            match f {
                DataFile::Csv { name, columns, rows } => {
                    dir.write_csv(name, columns, rows)?;
                }
                DataFile::Text { name, text } => {
                    dir.write_text(name, text)?;
                }
                DataFile::Bytes { name, bytes } => {
                    dir.write_bytes(name, bytes)?;
                }
            }
        }
        section.results = Value::Null;
        section.data = doc;
        section.run_dir = Some(dir.path.display().to_string());
        Ok(dir)
    }

    /// Create `<root>/<experiment>/<UTC timestamp>/` (a suffix keeps two runs in one second apart).
    fn create(root: &Path, experiment: &str) -> Result<Self> {
        let stamp = dir_stamp();
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

    /// A table in its tidy form (see [`crate::tidy`]): snake_case headers with units, plain
    /// numbers, composites split.
    fn write_csv(&self, name: &str, header: &[String], rows: &[Vec<String>]) -> Result<PathBuf> {
        self.write_text(name, &crate::tidy::tidy(header, rows).to_csv())
    }

    fn write_text(&self, name: &str, text: &str) -> Result<PathBuf> {
        self.write_bytes(name, text.as_bytes())
    }

    /// Write `bytes` as `name` in the run directory, making the subdirectory a name holds.
    fn write_bytes(&self, name: &str, bytes: &[u8]) -> Result<PathBuf> {
        let path = self.path.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::section::{Figure, Table, Verdict};

    fn prov() -> Provenance {
        Provenance::new(json!({"kernel": "6.18", "cpus_online": 2}))
    }

    #[test]
    fn a_section_is_written_with_the_envelope_tables_figures_and_files() {
        let root = tempfile::tempdir().unwrap();
        let mut s = Section::new("timers", "000", "t");
        s.parameters = json!({"n": 3});
        s.results = json!({"queues": {"delta": 1}});
        let mut t = Table::new("x", &["a", "b"]);
        t.row(vec!["1".into(), "2".into()]);
        s.tables.push(t);
        s.figures.push(Figure {
            title: "f".into(),
            file: "f.svg".into(),
            svg: "<svg/>".into(),
            caption: String::new(),
        });
        s.files.push(DataFile::text("raw.txt", "raw"));
        s.files.push(DataFile::csv("rows.csv", &["k"], vec![vec!["v".into()]]));
        s.files.push(DataFile::bytes("sub/blob.bin", vec![0, 255, 1]));
        s.verdicts.push(Verdict::seed_claim("claim", true, "detail"));
        let dir = RunDir::write(root.path(), &mut s, &prov()).unwrap();
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("results.json")).unwrap()).unwrap();
        let keys: Vec<&str> = doc.as_object().unwrap().keys().map(String::as_str).collect();
        let mut expected = ENVELOPE_KEYS.to_vec();
        expected.sort_unstable();
        let mut got = keys.clone();
        got.sort_unstable();
        assert_eq!(got, expected);
        assert_eq!(doc["parameters"]["n"], 3);
        assert_eq!(doc["results"]["queues"]["delta"], 1);
        assert_eq!(doc["machine"]["kernel"], "6.18");
        assert_eq!(doc["schedlab"]["version"], crate::VERSION);
        assert_eq!(doc["verdicts"][0]["claim"], "claim");
        assert_eq!(std::fs::read_to_string(dir.path().join("table1.csv")).unwrap(), "a,b\n1,2\n");
        assert_eq!(std::fs::read_to_string(dir.path().join("rows.csv")).unwrap(), "k\nv\n");
        assert_eq!(std::fs::read_to_string(dir.path().join("raw.txt")).unwrap(), "raw");
        assert_eq!(std::fs::read(dir.path().join("sub/blob.bin")).unwrap(), [0, 255, 1]);
        assert!(dir.path().join("f.svg").exists());
        assert_eq!(s.data, doc, "the section now carries its document");
        assert_eq!(s.results, Value::Null, "the raw results moved into the document");
        assert_eq!(s.run_dir.as_deref(), Some(dir.path().to_str().unwrap()));
        let again = RunDir::write(root.path(), &mut Section::new("timers", "000", "t"), &prov()).unwrap();
        assert_ne!(again.path(), dir.path(), "two runs in one second get two directories");
    }
}
