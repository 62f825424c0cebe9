//! `schedlab reproduce --quick` runs every registered experiment, and every results.json it
//! writes has the same envelope: the keys of [`schedlab_report::results::ENVELOPE_KEYS`], the
//! run's experiment name, this build's version and commit, the machine facts, parameters and
//! results. As root (CI) every experiment must complete; elsewhere the live ones may come back
//! unsupported, and then write no run directory.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn results_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            results_files(&p, found);
        } else if p.file_name().is_some_and(|n| n == "results.json") {
            found.push(p);
        }
    }
}

#[test]
fn every_experiment_writes_the_same_envelope() {
    let root = schedlab_os::root_for_test("running every live experiment");
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .current_dir(dir.path())
        .args(["reproduce", "--quick", "--json", "--out", "runs", "--report", "report.html"])
        .output()
        .unwrap();
    assert!(out.status.success(), "reproduce --quick failed: {}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let sections = doc["sections"].as_array().unwrap();
    let registered = schedlab_lab::registry::all();
    assert_eq!(sections.len(), registered.len(), "every registered experiment ran");
    let mut expected: Vec<&str> = schedlab_report::results::ENVELOPE_KEYS.to_vec();
    expected.sort_unstable();
    let mut written = Vec::new();
    results_files(&dir.path().join("runs"), &mut written);
    for s in sections {
        let name = s["experiment"].as_str().unwrap();
        let state = s["status"]["state"].as_str().unwrap();
        if root {
            assert_eq!(state, "completed", "{name}: {}", s["status"]);
        }
        if state != "completed" {
            continue;
        }
        let run_dir = PathBuf::from(s["run_dir"].as_str().unwrap_or_else(|| panic!("{name} has no run directory")));
        let path = dir.path().join(&run_dir).join("results.json");
        assert!(
            written.iter().any(|w| w.ends_with(run_dir.join("results.json"))),
            "{name}: {} not written",
            path.display()
        );
        let file: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let mut keys: Vec<&str> = file.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, expected, "{name}: envelope keys");
        assert_eq!(file["experiment"], name);
        assert_eq!(file["schedlab"]["version"], env!("CARGO_PKG_VERSION"));
        assert!(file["schedlab"]["commit"].as_str().is_some_and(|c| !c.is_empty()), "{name}: commit");
        assert!(file["machine"]["kernel"].is_string() && file["machine"]["cpus_online"].as_u64() > Some(0), "{name}");
        assert!(!file["parameters"].is_null(), "{name}: parameters");
        assert!(file["results"].is_object(), "{name}: results");
        assert_eq!(file["status"]["state"], "completed", "{name}");
        // The document on stdout's section is the same document.
        assert_eq!(s["data"], file, "{name}: the section's document is results.json");
    }
    assert_eq!(written.len(), sections.iter().filter(|s| s["status"]["state"] == "completed").count());
    every_csv_is_tidy(&dir.path().join("runs"));
}

/// Python's csv module (no pandas) reads every CSV the run wrote. Headers are snake_case. The
/// leading columns of words are the rows' headers (pandas' `index_col`: a table's declared keys,
/// or labels printed first), and every cell after them parses as a number or is empty — a column
/// of words anywhere else (a remark, a unit, a verdict written out) fails, since the tidy form
/// moves only declared keys. No row header is a number in disguise (`30.000*`, `84%`,
/// `err 0.1 pp ✓`, `1018 / 846`), a mark, a verdict or a remark.
fn every_csv_is_tidy(runs: &Path) {
    const CHECK: &str = r#"
import csv, glob, re, sys
bad, files, numeric, labels = [], 0, 0, 0
def is_num(v):
    try:
        float(v)
        return True
    except ValueError:
        return False
for path in glob.glob(sys.argv[1] + "/**/*.csv", recursive=True):
    files += 1
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    if any(len(r) != len(header) for r in body):
        bad.append(f"{path}: a row is not as wide as the header")
        continue
    is_label = [any(r[j] != "" and not is_num(r[j]) for r in body) for j in range(len(header))]
    index = is_label.index(False) if False in is_label else len(header)
    for j, h in enumerate(header):
        if not re.fullmatch(r"[a-z0-9_]+", h):
            bad.append(f"{path}: header {h!r} is not snake_case")
        cells = [r[j] for r in body if r[j] != ""]
        if j >= index:
            words = [c for c in cells if not is_num(c)]
            if words:
                bad.append(f"{path}: column {h!r} after the row headers {header[:index]} holds words {words[:3]}")
            else:
                numeric += 1
            continue
        labels += 1
        if h == "note" or h.endswith(("_note", "_mark", "_unit", "_met", "_inconclusive", "_supported", "_starred")):
            bad.append(f"{path}: column {h!r} is a remark or a value's part, not a row header: {cells[:3]}")
        # A label must not be a number in disguise: `30.000*`, `84%`, `8.3 [8.2–8.3]`, `104 ± 12`,
        # a measure with its unit or mark (`err 0.1 pp ✓`, `cv 0.27%`, `45% ✗`), a pair
        # (`1018 / 846`), a mark, a verdict or a truth value.
        num = r"[-+−]?[0-9][0-9.,]*"
        disguises = [
            num + r"\s*([*%×]|\[.*\]|± ?[0-9.]+)",
            r"([A-Za-z]+ )*" + num + r"(%|×| ?(pp|ms|µs|us|ns|s))?( [✓✗~?*])?",
            num + r" / " + num,
            r".+ \*",  # a starred label: the star is a column of its own
            r"[✓✗~?]",
            r"(?i)met|missed|inconclusive|not supported|true|false|yes|no",
        ]
        disguised = [c for c in cells if any(re.fullmatch(d, c) for d in disguises)]
        if disguised:
            bad.append(f"{path}: column {h!r} holds numbers, marks or verdicts written as text: {disguised[:3]}")
print(f"{files} files, {numeric} numeric columns, {labels} label columns")
for b in bad:
    print("BAD", b)
sys.exit(1 if bad or files == 0 else 0)
"#;
    let out = Command::new("python3").arg("-c").arg(CHECK).arg(runs).output().expect("python3");
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    assert!(out.status.success(), "CSV files that are not tidy:\n{text}{}", String::from_utf8_lossy(&out.stderr));
}
