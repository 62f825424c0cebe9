//! `schedlab results export`: a stored run's tables come out tidy, as CSV and as Parquet that
//! the reference reader (pyarrow) loads with the same rows, numbers typed as numbers, labels as
//! strings and the table's title in the file's metadata. pyarrow is installed by
//! scripts/setup.sh; without it the Parquet half fails on CI and is skipped elsewhere.

mod common;

use std::path::Path;
use std::process::{Command, Output};

fn schedlab(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab")).current_dir(dir).args(args).output().unwrap()
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = schedlab(dir, args);
    assert!(out.status.success(), "schedlab {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn tables_export_as_tidy_csv_and_parquet_with_the_same_rows() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(d, &["sim", "run", "--generate", "poisson:n=30,seed=5", "--policy", "rr:quantum=4ms", "--policy", "fcfs"]);
    let db = ["--db", "results/schedlab.db"];
    // One table: to stdout as CSV, with the policy labels kept and every other cell a number.
    let csv = ok(d, &[&["results", "export", "1"][..], &db].concat());
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[..3], ["policy", "avg_waiting_ms", "avg_turnaround_ms"], "{csv}");
    let rows: Vec<Vec<String>> = lines.map(|l| l.split(',').map(String::from).collect()).collect();
    assert_eq!(rows.iter().map(|r| r[0].as_str()).collect::<Vec<_>>(), ["rr:quantum=4ms", "fcfs"]);
    for r in &rows {
        for c in &r[1..] {
            assert!(c.is_empty() || c.parse::<f64>().is_ok(), "{c:?} is not a number: {csv}");
        }
    }
    // Into a directory: one file per table, named by experiment, number and title.
    let written = ok(d, &[&["results", "export", "1", "--format", "parquet", "-o", "pq/"][..], &db].concat());
    let files: Vec<&str> = written.lines().collect();
    assert_eq!(files.len(), 1, "{written}");
    assert!(files[0].starts_with("pq/sim-run_01_policies_side_by_side") && files[0].ends_with(".parquet"));
    // A table that does not exist is a usage error that names the tables there are.
    let out = schedlab(d, &[&["results", "export", "1", "--table", "7"][..], &db].concat());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("1: Policies side by side"));

    if !common::pyarrow::require("reading exported Parquet with pyarrow") {
        return;
    }
    const READ: &str = r#"
import csv, io, json, sys
import pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
print(json.dumps({
    "types": {f.name: str(f.type) for f in t.schema},
    "title": t.schema.metadata[b"title"].decode(),
    "rows": t.to_pylist(),
}))
"#;
    let out = Command::new("python3").args(["-c", READ]).arg(d.join(files[0])).output().unwrap();
    assert!(out.status.success(), "pyarrow: {}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["title"], "Policies side by side (* = best in column)");
    assert_eq!(doc["types"]["policy"], "string");
    assert_eq!(doc["types"]["avg_waiting_ms"], "double");
    assert_eq!(doc["types"]["ctx_switches"], "int64");
    let back = doc["rows"].as_array().unwrap();
    assert_eq!(back.len(), rows.len());
    for (row, parquet_row) in rows.iter().zip(back) {
        for (name, cell) in header.iter().zip(row) {
            let v = &parquet_row[*name];
            match cell.parse::<f64>() {
                Ok(x) => assert_eq!(v.as_f64(), Some(x), "{name}: CSV {cell}, Parquet {v}"),
                Err(_) if cell.is_empty() => assert!(v.is_null(), "{name}: empty in CSV, {v} in Parquet"),
                Err(_) => assert_eq!(v.as_str(), Some(cell.as_str()), "{name}"),
            }
        }
    }
}
