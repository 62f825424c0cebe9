//! Tables as tidy data for pandas, R and spreadsheets: the printed table is for reading
//! ("8.3 [8.2–8.3]", "30.000*", "84%", "avg waiting ms"), its tidy form for computing.
//!
//! - Headers become snake_case with their unit: `avg waiting ms` → `avg_waiting_ms`,
//!   `CPU util %` → `cpu_util_pct`, `throughput /s` → `throughput_per_s`.
//! - Decorations go: the `*` that marks a best value, thousands separators, a trailing `%`
//!   (the header then says `_pct`) or `×` (`_ratio`); dashes and `n/a` become empty cells.
//! - A column of values with intervals (`8.3 [8.2–8.3]`, `104 ± 12`) splits into the value and
//!   `_lo`/`_hi` or `_pm` columns; `A–B` ranges into `_lo`/`_hi`; a value with a remark
//!   (`81 (45% ✗)`) into the value and a `_note` text column.
//! - A column whose cells are partly numbers and partly words (`not supported`) keeps the
//!   numbers and moves the words to a `_note` column.
//!
//! So every column of a tidy table is either numbers (or empty) or labels, never both.

/// A table in tidy form: headers and rows of cells, numbers written plainly.
#[derive(Debug, Clone, PartialEq)]
pub struct TidyTable {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl TidyTable {
    /// The table as CSV text: the header row, then the rows.
    pub fn to_csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        // Writing to memory cannot fail; the cells are plain strings.
        let _ = w.write_record(&self.columns);
        for r in &self.rows {
            let _ = w.write_record(r);
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}

/// `avg waiting ms` → `avg_waiting_ms`; `%` → `pct`, `/` → `per`, `×` → `x`, `µs` → `us`,
/// Greek letters spelled out; plain ASCII only, so a header is a valid identifier everywhere.
pub fn snake(header: &str) -> String {
    let mut s = String::new();
    for ch in header.trim().chars() {
        let piece: String = match ch {
            '%' => "_pct_".into(),
            '/' => "_per_".into(),
            '×' => "_x_".into(),
            '#' => "_n_".into(),
            '−' | '-' => "_minus_".into(),
            '+' => "_plus_".into(),
            'µ' | 'μ' => "u".into(),
            'Δ' | 'δ' => "_delta_".into(),
            'Γ' | 'γ' => "_gamma_".into(),
            'σ' => "_sigma_".into(),
            'λ' => "_lambda_".into(),
            c if c.is_ascii_alphanumeric() => c.to_ascii_lowercase().to_string(),
            _ => "_".into(),
        };
        s.push_str(&piece);
    }
    let parts: Vec<&str> = s.split('_').filter(|p| !p.is_empty()).collect();
    let joined = parts.join("_");
    if joined.is_empty() {
        "column".into()
    } else {
        joined
    }
}

/// A cell read as a number: the number and the unit suffix it carried (`%`, `×`), or None.
fn number(cell: &str) -> Option<(f64, &'static str)> {
    let c = cell.trim().trim_end_matches('*').trim();
    let (body, unit) = if let Some(b) = c.strip_suffix('%') {
        (b, "pct")
    } else if let Some(b) = c.strip_suffix('×') {
        (b, "ratio")
    } else {
        (c, "")
    };
    let plain: String = body.trim().replace(',', "").replace('−', "-");
    let plain = plain.strip_prefix('+').unwrap_or(&plain);
    plain.parse::<f64>().ok().filter(|v| v.is_finite()).map(|v| (v, unit))
}

fn is_empty_mark(cell: &str) -> bool {
    matches!(cell.trim(), "" | "-" | "–" | "—" | "n/a" | "N/A")
}

/// How one column is written out.
#[derive(Debug, Clone, PartialEq)]
enum Shape {
    /// Every non-empty cell is a number (with this unit suffix, if any).
    Number(&'static str),
    /// `v [lo–hi]`.
    Interval,
    /// `v ± e`.
    PlusMinus,
    /// `lo–hi`.
    Range,
    /// `v (remark)` in some cells; plain numbers or words in the others.
    Remarked,
    /// Numbers and words: the words go to a note column.
    Mixed,
    /// Labels.
    Text,
}

fn interval(cell: &str) -> Option<(String, String, String)> {
    let (v, rest) = cell.split_once('[')?;
    let (lo, hi) = rest.strip_suffix(']')?.split_once('–')?;
    Some((v.trim().into(), lo.trim().into(), hi.trim().into()))
}

fn plus_minus(cell: &str) -> Option<(String, String)> {
    let (v, e) = cell.split_once('±')?;
    Some((v.trim().into(), e.trim().into()))
}

fn range(cell: &str) -> Option<(String, String)> {
    let (lo, hi) = cell.split_once('–')?;
    (number(lo).is_some() && number(hi).is_some()).then(|| (lo.trim().into(), hi.trim().into()))
}

fn remarked(cell: &str) -> Option<(String, String)> {
    let (v, rest) = cell.split_once(" (")?;
    let note = rest.strip_suffix(')')?;
    number(v).map(|_| (v.trim().into(), note.trim().into()))
}

fn shape_of(cells: &[&str]) -> Shape {
    let cells: Vec<&str> = cells.iter().copied().filter(|c| !is_empty_mark(c)).collect();
    if cells.is_empty() {
        return Shape::Number("");
    }
    let all = |f: &dyn Fn(&str) -> bool| cells.iter().all(|c| f(c));
    let nums: Vec<Option<(f64, &str)>> = cells.iter().map(|c| number(c)).collect();
    if nums.iter().all(Option::is_some) {
        let units: Vec<&str> = nums.iter().flatten().map(|n| n.1).collect();
        let unit = units[0];
        if units.iter().all(|u| *u == unit) {
            return Shape::Number(unit);
        }
    }
    let num = |s: &str| number(s).is_some();
    if all(&|c| interval(c).is_some_and(|(v, lo, hi)| num(&v) && num(&lo) && num(&hi))) {
        return Shape::Interval;
    }
    if all(&|c| plus_minus(c).is_some_and(|(v, e)| num(&v) && num(&e))) {
        return Shape::PlusMinus;
    }
    if all(&|c| range(c).is_some()) {
        return Shape::Range;
    }
    if cells.iter().any(|c| remarked(c).is_some()) {
        return Shape::Remarked;
    }
    if nums.iter().any(Option::is_some) {
        Shape::Mixed
    } else {
        Shape::Text
    }
}

/// A number as its plain text (no unit, no decoration); empty for an empty mark.
fn plain(cell: &str) -> String {
    if is_empty_mark(cell) {
        return String::new();
    }
    number(cell).map(|(v, _)| format!("{v}")).unwrap_or_default()
}

/// The tidy form of a printed table.
pub fn tidy(columns: &[String], rows: &[Vec<String>]) -> TidyTable {
    let mut out_cols: Vec<String> = Vec::new();
    let mut out_rows: Vec<Vec<String>> = vec![Vec::new(); rows.len()];
    for (j, header) in columns.iter().enumerate() {
        let cells: Vec<&str> = rows.iter().map(|r| r.get(j).map_or("", String::as_str)).collect();
        let name = snake(header);
        let shape = shape_of(&cells);
        let mut push = |col: String, f: &dyn Fn(&str) -> String| {
            out_cols.push(col);
            for (r, c) in out_rows.iter_mut().zip(&cells) {
                r.push(if is_empty_mark(c) { String::new() } else { f(c) });
            }
        };
        match shape {
            Shape::Number(unit) => {
                let col = if unit.is_empty() || name.ends_with(unit) { name } else { format!("{name}_{unit}") };
                push(col, &plain);
            }
            Shape::Interval => {
                let part =
                    |i: usize| move |c: &str| interval(c).map(|t| plain([&t.0, &t.1, &t.2][i])).unwrap_or_default();
                push(name.clone(), &part(0));
                push(format!("{name}_lo"), &part(1));
                push(format!("{name}_hi"), &part(2));
            }
            Shape::PlusMinus => {
                push(name.clone(), &|c| plus_minus(c).map(|t| plain(&t.0)).unwrap_or_default());
                push(format!("{name}_pm"), &|c| plus_minus(c).map(|t| plain(&t.1)).unwrap_or_default());
            }
            Shape::Range => {
                push(format!("{name}_lo"), &|c| range(c).map(|t| plain(&t.0)).unwrap_or_default());
                push(format!("{name}_hi"), &|c| range(c).map(|t| plain(&t.1)).unwrap_or_default());
            }
            Shape::Remarked => {
                push(name.clone(), &|c| remarked(c).map_or_else(|| plain(c), |t| plain(&t.0)));
                push(format!("{name}_note"), &|c| match remarked(c) {
                    Some(t) => t.1,
                    None if number(c).is_some() => String::new(),
                    None => c.trim().to_string(),
                });
            }
            Shape::Mixed => {
                push(name.clone(), &plain);
                push(format!("{name}_note"), &|c| {
                    if number(c).is_some() {
                        String::new()
                    } else {
                        c.trim().to_string()
                    }
                });
            }
            Shape::Text => push(name, &|c| c.trim().to_string()),
        }
    }
    TidyTable { columns: unique(out_cols), rows: out_rows }
}

/// Headers made unique (`x`, `x_2`, …): a tidy file is read by name.
fn unique(cols: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashMap::new();
    cols.into_iter()
        .map(|c| {
            let n = seen.entry(c.clone()).or_insert(0);
            *n += 1;
            if *n == 1 {
                c
            } else {
                format!("{c}_{n}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(cols: &[&str], rows: &[&[&str]]) -> TidyTable {
        let cols: Vec<String> = cols.iter().map(|c| c.to_string()).collect();
        let rows: Vec<Vec<String>> = rows.iter().map(|r| r.iter().map(|c| c.to_string()).collect()).collect();
        tidy(&cols, &rows)
    }

    #[test]
    fn headers_are_snake_case_with_their_unit() {
        assert_eq!(snake("avg waiting ms"), "avg_waiting_ms");
        assert_eq!(snake("CPU util %"), "cpu_util_pct");
        assert_eq!(snake("throughput /s"), "throughput_per_s");
        assert_eq!(snake("Jain cpu/weight"), "jain_cpu_per_weight");
        assert_eq!(snake("B − A"), "b_minus_a");
        assert_eq!(snake("late p50 µs"), "late_p50_us");
        assert_eq!(snake("Γ (Σx)"), "gamma_x");
    }

    #[test]
    fn decorations_go_and_composites_split() {
        let x = t(
            &["policy", "avg waiting ms", "share", "speed", "CI", "ratio", "status", "spread"],
            &[
                &["rr", "30.000*", "84%", "1,234", "8.3 [8.2–8.3]", "0.65×", "81 (45% ✗)", "104 ± 12.02"],
                &["fcfs", "—", "16%", "-", "9 [8–10]", "2×", "not run", "3 ± 1"],
            ],
        );
        assert_eq!(
            x.columns,
            [
                "policy",
                "avg_waiting_ms",
                "share_pct",
                "speed",
                "ci",
                "ci_lo",
                "ci_hi",
                "ratio",
                "status",
                "status_note",
                "spread",
                "spread_pm"
            ]
        );
        assert_eq!(x.rows[0], ["rr", "30", "84", "1234", "8.3", "8.2", "8.3", "0.65", "81", "45% ✗", "104", "12.02"]);
        assert_eq!(x.rows[1], ["fcfs", "", "16", "", "9", "8", "10", "2", "", "not run", "3", "1"]);
    }

    #[test]
    fn every_column_is_numbers_or_labels_never_both() {
        let x = t(&["counter", "value"], &[&["cycles", "not supported"], &["task-clock", "12.5"]]);
        assert_eq!(x.columns, ["counter", "value", "value_note"]);
        assert_eq!(x.rows[0], ["cycles", "", "not supported"]);
        assert_eq!(x.rows[1], ["task-clock", "12.5", ""]);
        let r = t(&["fold"], &[&["1.000–1.000"]]);
        assert_eq!(
            (r.columns.clone(), r.rows[0].clone()),
            (vec!["fold_lo".to_string(), "fold_hi".into()], vec!["1".to_string(), "1".into()])
        );
    }
}
