//! Tables as tidy data for pandas, R and spreadsheets: the printed table is for reading
//! ("8.3 [8.2–8.3]", "30.000*", "84%", "avg waiting ms"), its tidy form for computing.
//!
//! - Headers become snake_case with their unit: `avg waiting ms` → `avg_waiting_ms`,
//!   `CPU util %` → `cpu_util_pct`, `throughput /s` → `throughput_per_s`.
//! - Decorations go: the `*` that marks a best value, thousands separators, a trailing `%`
//!   (the header then says `_pct`), `×` (`_ratio`) or unit (`0.024 ms`: `_ms`); a column whose
//!   values are in different units gets a `_unit` column; dashes and `n/a` become empty cells.
//! - A column of values with intervals (`8.3 [8.2–8.3]`, `104 ± 12`) splits into the value and
//!   `_lo`/`_hi` or `_pm` columns; `A–B` ranges into `_lo`/`_hi`; a value with a remark
//!   (`81 (45% ✗)`) into the value and a `_note` text column; one column may mix these.
//! - A remark that is a measure (`err 45%`, `cv 0.27%`, `0.1 pp`), optionally with a mark
//!   (`✓`, `✗`, `~`), becomes a number column named by its words and unit (`status_err_pct`,
//!   `live_wrr_cv_pct`) and the mark's columns (below); other remarks stay words in a `_note`
//!   column.
//! - A column of pairs (`load live / model`: `1018 / 846`) splits into one column per side
//!   (`load_live`, `load_model`).
//! - A starred label (`cfs *`) loses its star to a `_starred` column of 1 and 0; a column of
//!   yes/no or true/false becomes 1 and 0.
//! - A verdict (`met`, `missed`, `inconclusive`) or its mark (`✓`, `✗`, `~`, `?`) becomes two
//!   columns: `_met` (1 met, 0 missed) and `_inconclusive` (1 inconclusive, 0 decided), both
//!   empty where there is no verdict (`not judged`, a live row); a `*` mark a `_starred` column.
//! - `not supported` in place of a number leaves the cell empty and says so in a `_supported`
//!   column (1 where a number is there, 0 where it is not supported), so an unsupported counter
//!   never reads as zero.
//! - A column whose cells are partly numbers and partly other words keeps the numbers and moves
//!   the words to a `_note` column.
//! - The table's key columns ([`crate::section::Table::keyed`]: those that name a row, such as
//!   policy, case, repeat) come first, in the order given: they are the rows' headers (pandas'
//!   `index_col`). A key that leaves a repeated label out (a task's name on its first row only)
//!   gets it on every row, so each row is named in full. Every other column keeps its place.
//!
//! So every column of a tidy table is either numbers (or empty) or labels, never both, and no
//! number hides in a label. A table whose labels all lead (declared keys, or labels printed
//! first) has only numbers and empty cells after them.

/// A table in tidy form: headers and rows of cells, numbers written plainly.
#[derive(Debug, Clone, Default, PartialEq)]
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
    const UNITS: [(&str, &str); 8] = [
        ("%", "pct"),
        ("×", "ratio"),
        (" ms", "ms"),
        (" µs", "us"),
        (" us", "us"),
        (" ns", "ns"),
        (" s", "s"),
        (" pp", "pp"),
    ];
    let (body, unit) =
        UNITS.iter().find_map(|(suffix, unit)| c.strip_suffix(suffix).map(|b| (b, *unit))).unwrap_or((c, ""));
    let plain: String = body.trim().replace(',', "").replace('−', "-");
    let plain = plain.strip_prefix('+').unwrap_or(&plain);
    plain.parse::<f64>().ok().filter(|v| v.is_finite()).map(|v| (v, unit))
}

fn is_empty_mark(cell: &str) -> bool {
    matches!(cell.trim(), "" | "-" | "–" | "—" | "n/a" | "N/A")
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

/// A remark that is a measure: `err 0.1 pp ✓`, `cv 0.27%`, `45% ✗`, or only a mark (`none ✗`,
/// `– ~`: no value).
#[derive(Debug, Clone, PartialEq)]
struct Measure {
    /// What it measures and its unit, as a column suffix (`err_pp`, `cv_pct`, `remark_pct`);
    /// None for a mark alone.
    name: Option<String>,
    value: Option<String>,
    mark: Option<String>,
}

const MARKS: [&str; 5] = ["✓", "✗", "~", "?", "*"];

fn measure(note: &str) -> Option<Measure> {
    let toks: Vec<&str> = note.split_whitespace().collect();
    let (mark, toks) = match toks.split_last() {
        Some((last, rest)) if MARKS.contains(last) => (Some(last.to_string()), rest),
        _ => (None, &toks[..]),
    };
    if mark.is_some() && matches!(toks, [] | ["none"] | ["–"] | ["-"]) {
        return Some(Measure { name: None, value: None, mark });
    }
    let words = toks.iter().take_while(|t| t.chars().all(char::is_alphabetic)).count();
    let (label, rest) = toks.split_at(words);
    let (value, mut unit) = match rest.first().map(|t| number(t)) {
        Some(Some((v, u))) => (format!("{v}"), u.to_string()),
        _ => return None,
    };
    match &rest[1..] {
        [] => {}
        [u] if unit.is_empty() && matches!(*u, "pp" | "ms" | "us" | "µs" | "ns" | "s") => unit = snake(u),
        _ => return None,
    }
    let what = if label.is_empty() { "remark".to_string() } else { snake(&label.join(" ")) };
    let name = if unit.is_empty() { what } else { format!("{what}_{unit}") };
    Some(Measure { name: Some(name), value: Some(value), mark })
}

/// A pair of numbers `a / b`.
fn pair(cell: &str) -> Option<(String, String)> {
    let (a, b) = cell.split_once(" / ")?;
    let (a, b) = (number(a)?, number(b)?);
    Some((format!("{}", a.0), format!("{}", b.0)))
}

/// The two columns a pair header names: `load live / model` → `load_live`, `load_model`.
fn pair_names(header: &str) -> Option<(String, String)> {
    let (left, right) = header.split_once('/')?;
    let left_words: Vec<&str> = left.split_whitespace().collect();
    let (_, prefix) = left_words.split_last()?;
    let right = format!("{} {}", prefix.join(" "), right.trim());
    Some((snake(left), snake(&right)))
}

/// A printed cell taken apart: its value, interval or ± error, and the words beside them.
#[derive(Debug, Default)]
struct Parts {
    value: Option<String>,
    /// The value's unit suffix (`pct`, `ratio`), if it had one.
    unit: &'static str,
    lo: Option<String>,
    hi: Option<String>,
    pm: Option<String>,
    note: Option<String>,
    /// The note read as a measure, when it is one ([`measure`]).
    measure: Option<Measure>,
}

/// The parts of a cell: `v`, `v [lo–hi]`, `v ± e` or `lo–hi`, each optionally followed by a
/// remark in parentheses (`81 (45% ✗)`); anything else is words, kept whole as the note.
fn parts(cell: &str) -> Parts {
    let c = cell.trim();
    let remarked = c.split_once(" (").and_then(|(v, rest)| Some((v, rest.strip_suffix(')')?)));
    let mut p = match remarked.and_then(|(v, note)| Some((value_parts(v)?, note))) {
        Some((p, note)) => Parts { note: Some(note.trim().to_string()), ..p },
        None => value_parts(c).unwrap_or_else(|| Parts { note: Some(c.to_string()), ..Parts::default() }),
    };
    p.measure = p.note.as_deref().and_then(measure);
    p
}

fn value_parts(c: &str) -> Option<Parts> {
    let num = |s: &str| number(s).map(|(v, unit)| (format!("{v}"), unit));
    if let Some((value, unit)) = num(c) {
        return Some(Parts { value: Some(value), unit, ..Parts::default() });
    }
    if let Some((v, lo, hi)) = interval(c) {
        let ((value, unit), (lo, _), (hi, _)) = (num(&v)?, num(&lo)?, num(&hi)?);
        return Some(Parts { value: Some(value), unit, lo: Some(lo), hi: Some(hi), ..Parts::default() });
    }
    if let Some((v, e)) = plus_minus(c) {
        let ((value, unit), (pm, _)) = (num(&v)?, num(&e)?);
        return Some(Parts { value: Some(value), unit, pm: Some(pm), ..Parts::default() });
    }
    let (lo, hi) = range(c)?;
    Some(Parts { lo: Some(num(&lo)?.0), hi: Some(num(&hi)?.0), ..Parts::default() })
}

/// The tidy form of a printed table without keys: see [`tidy_keyed`].
pub fn tidy(columns: &[String], rows: &[Vec<String>]) -> TidyTable {
    tidy_keyed(columns, rows, &[])
}

/// The tidy form of a printed table whose columns named in `keys` name its rows. Each column
/// becomes its values (named with their unit, `_unit` if they differ), then `_lo`/`_hi` if any
/// cell had an interval or range, `_pm` if any had a ± error, a measured remark's column, the
/// mark's `_met`/`_inconclusive` or `_starred`, `_note` if any had other words beside a number,
/// and `_supported` if any said `not supported`; a column of words only stays text. The key
/// columns then move to the front.
pub fn tidy_keyed(columns: &[String], rows: &[Vec<String>], keys: &[String]) -> TidyTable {
    let mut out_cols: Vec<String> = Vec::new();
    let mut out_rows: Vec<Vec<String>> = vec![Vec::new(); rows.len()];
    // Where each printed column's tidy columns begin.
    let mut starts: Vec<usize> = Vec::with_capacity(columns.len() + 1);
    for (j, header) in columns.iter().enumerate() {
        starts.push(out_cols.len());
        let printed: Vec<String> = rows.iter().map(|r| r.get(j).cloned().unwrap_or_default()).collect();
        let printed = if keys.contains(header) { filled_down(printed) } else { printed };
        let cells: Vec<&str> = printed.iter().map(String::as_str).collect();
        let name = snake(header);
        let pairs: Vec<Option<(String, String)>> = cells.iter().map(|c| pair(c)).collect();
        let all_pairs = cells.iter().zip(&pairs).all(|(c, p)| p.is_some() || is_empty_mark(c));
        if let (Some((a, b)), true) = (pair_names(header), all_pairs && pairs.iter().any(Option::is_some)) {
            out_cols.extend([a, b]);
            for (r, p) in out_rows.iter_mut().zip(pairs) {
                let (a, b) = p.unwrap_or_default();
                r.extend([a, b]);
            }
            continue;
        }
        let unsupported: Vec<bool> = cells.iter().map(|c| c.trim().eq_ignore_ascii_case("not supported")).collect();
        let parsed: Vec<Option<Parts>> =
            cells.iter().zip(&unsupported).map(|(c, u)| (!is_empty_mark(c) && !u).then(|| parts(c))).collect();
        let present: Vec<&Parts> = parsed.iter().flatten().collect();
        let any = |f: &dyn Fn(&Parts) -> bool| present.iter().any(|p| f(p));
        let mut push = |col: String, f: &dyn Fn(&Parts) -> Option<String>| {
            out_cols.push(col);
            for (r, p) in out_rows.iter_mut().zip(&parsed) {
                r.push(p.as_ref().and_then(f).unwrap_or_default());
            }
        };
        let numeric = any(&|p| p.value.is_some() || p.lo.is_some());
        let truth = |p: &Parts| match p.note.as_deref().map(str::to_ascii_lowercase).as_deref() {
            Some("true" | "yes") => Some("1"),
            Some("false" | "no") => Some("0"),
            _ => None,
        };
        if !numeric && !present.is_empty() && present.iter().all(|p| truth(p).is_some()) {
            push(name, &|p| truth(p).map(str::to_string));
            continue;
        }
        let verdict = |p: &Parts| p.note.as_deref().and_then(verdict_word);
        if !numeric && !present.is_empty() && present.iter().all(|p| verdict(p).is_some()) {
            push_verdict(&mut push, &name, &verdict);
            continue;
        }
        // A column of marks alone (`✓`, `none ✗`) is verdicts, not labels.
        let marks_only = present.iter().all(|p| p.measure.as_ref().is_some_and(|m| m.name.is_none()));
        if !numeric && !present.is_empty() && !marks_only {
            // A starred label (`cfs *`, the table's note says what the star marks): the label, and
            // 1 or 0 in a `_starred` column.
            let starred = |p: &Parts| p.note.as_deref().and_then(|n| n.strip_suffix(" *")).map(str::to_string);
            push(name.clone(), &|p| starred(p).or_else(|| p.note.clone()));
            if any(&|p| starred(p).is_some()) {
                push(format!("{name}_starred"), &|p| Some(if starred(p).is_some() { "1" } else { "0" }.to_string()));
            }
            continue;
        }
        if any(&|p| p.value.is_some()) || present.is_empty() {
            let units: Vec<&str> = present.iter().filter(|p| p.value.is_some()).map(|p| p.unit).collect();
            let one_unit = units.first().copied().filter(|u| units.iter().all(|x| x == u));
            let unit = one_unit.unwrap_or("");
            let col = if unit.is_empty() || name.ends_with(unit) { name.clone() } else { format!("{name}_{unit}") };
            push(col, &|p| p.value.clone());
            // Values in different units: each row says its own.
            if one_unit.is_none() && !units.is_empty() {
                push(format!("{name}_unit"), &|p| p.value.as_ref().map(|_| p.unit.to_string()));
            }
        }
        if any(&|p| p.lo.is_some()) {
            push(format!("{name}_lo"), &|p| p.lo.clone());
            push(format!("{name}_hi"), &|p| p.hi.clone());
        }
        if any(&|p| p.pm.is_some()) {
            push(format!("{name}_pm"), &|p| p.pm.clone());
        }
        // Remarks that are one measure (all of the same name) become numbers and marks.
        let mut names = present.iter().filter_map(|p| p.measure.as_ref()?.name.as_ref());
        let one_name = names.next().filter(|first| names.all(|n| n == *first)).cloned();
        let measured = |p: &Parts| p.measure.clone().filter(|m| m.name.is_none() || m.name == one_name);
        if let Some(m) = &one_name {
            push(format!("{name}_{m}"), &|p| measured(p).and_then(|m| m.value));
        }
        let mark = |p: &Parts| measured(p).and_then(|m| m.mark).and_then(|m| verdict_mark(&m));
        if present.iter().any(|p| mark(p).is_some()) {
            push_verdict(&mut push, &name, &mark);
        }
        let mark = |p: &Parts| measured(p).and_then(|m| m.mark);
        if present.iter().any(|p| mark(p).is_some_and(|m| m == "*")) {
            push(format!("{name}_starred"), &|p| Some(if mark(p).as_deref() == Some("*") { "1" } else { "0" }.into()));
        }
        if any(&|p| p.note.is_some() && measured(p).is_none()) {
            push(format!("{name}_note"), &|p| p.note.clone().filter(|_| measured(p).is_none()));
        }
        if unsupported.iter().any(|u| *u) {
            // 1 where a number was read, 0 where the cell said it is not supported.
            out_cols.push(format!("{name}_supported"));
            for ((r, p), u) in out_rows.iter_mut().zip(&parsed).zip(&unsupported) {
                let read = p.as_ref().is_some_and(|p| p.value.is_some());
                r.push(
                    if *u {
                        "0"
                    } else if read {
                        "1"
                    } else {
                        ""
                    }
                    .to_string(),
                );
            }
        }
    }
    starts.push(out_cols.len());
    let key_first: Vec<usize> = keys.iter().filter_map(|k| columns.iter().position(|c| c == k)).collect();
    let order: Vec<usize> = key_first
        .iter()
        .chain((0..columns.len()).filter(|j| !key_first.contains(j)).collect::<Vec<_>>().iter())
        .flat_map(|&j| starts[j]..starts[j + 1])
        .collect();
    TidyTable {
        columns: unique(order.iter().map(|&k| out_cols[k].clone()).collect()),
        rows: out_rows.iter().map(|r| order.iter().map(|&k| r[k].clone()).collect()).collect(),
    }
}

/// A key column with a left-out repeated label filled in: a column of labels (no cell a number)
/// whose blank cells follow a label.
fn filled_down(cells: Vec<String>) -> Vec<String> {
    let labels = cells.iter().all(|c| c.trim().is_empty() || number(c).is_none() && !is_empty_mark(c));
    if !labels || cells.first().is_none_or(|c| c.trim().is_empty()) {
        return cells;
    }
    let mut last = String::new();
    cells
        .into_iter()
        .map(|c| {
            if !c.trim().is_empty() {
                last = c;
            }
            last.clone()
        })
        .collect()
}

/// A verdict, from a word or a mark.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Verdict {
    Met,
    Missed,
    Inconclusive,
    /// A verdict word that says there is none (`not judged`).
    None,
}

impl Verdict {
    /// The `_met` cell: 1, 0, or empty without a decision.
    fn met(self) -> Option<&'static str> {
        match self {
            Verdict::Met => Some("1"),
            Verdict::Missed => Some("0"),
            Verdict::Inconclusive | Verdict::None => None,
        }
    }

    /// The `_inconclusive` cell: 1, 0, or empty without a verdict.
    fn inconclusive(self) -> Option<&'static str> {
        match self {
            Verdict::Inconclusive => Some("1"),
            Verdict::Met | Verdict::Missed => Some("0"),
            Verdict::None => None,
        }
    }
}

/// `✓` met, `✗` missed, `~` and `?` inconclusive; None for another mark (`*`).
/// The `<name>_met` and `<name>_inconclusive` columns of a column of verdicts.
fn push_verdict(
    push: &mut impl FnMut(String, &dyn Fn(&Parts) -> Option<String>),
    name: &str,
    verdict: &dyn Fn(&Parts) -> Option<Verdict>,
) {
    push(format!("{name}_met"), &|p| verdict(p).and_then(Verdict::met).map(str::to_string));
    push(format!("{name}_inconclusive"), &|p| verdict(p).and_then(Verdict::inconclusive).map(str::to_string));
}

fn verdict_mark(mark: &str) -> Option<Verdict> {
    match mark {
        "✓" => Some(Verdict::Met),
        "✗" => Some(Verdict::Missed),
        "~" | "?" => Some(Verdict::Inconclusive),
        _ => None,
    }
}

/// A verdict word; None for other words.
fn verdict_word(word: &str) -> Option<Verdict> {
    match word.trim().to_ascii_lowercase().as_str() {
        "met" => Some(Verdict::Met),
        "missed" => Some(Verdict::Missed),
        "inconclusive" => Some(Verdict::Inconclusive),
        "not judged" => Some(Verdict::None),
        _ => None,
    }
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
                "status_remark_pct",
                "status_met",
                "status_inconclusive",
                "status_note",
                "spread",
                "spread_pm"
            ]
        );
        assert_eq!(
            x.rows[0],
            ["rr", "30", "84", "1234", "8.3", "8.2", "8.3", "0.65", "81", "45", "0", "0", "", "104", "12.02"]
        );
        assert_eq!(x.rows[1], ["fcfs", "", "16", "", "9", "8", "10", "2", "", "", "", "", "not run", "3", "1"]);
    }

    #[test]
    fn intervals_and_remarks_mix_in_one_column() {
        // validate's tables: a live row (mean and range over repeats) above a model row (mean,
        // error and mark).
        let x = t(
            &["CPU share %"],
            &[&["26.5 [26.4–26.6]"], &["26.4 (err 0.1 pp ✓)"], &["–"], &["none ✗"], &["26.0 (err 0.5 pp ~)"]],
        );
        assert_eq!(
            x.columns,
            [
                "cpu_share_pct",
                "cpu_share_pct_lo",
                "cpu_share_pct_hi",
                "cpu_share_pct_err_pp",
                "cpu_share_pct_met",
                "cpu_share_pct_inconclusive"
            ]
        );
        assert_eq!(x.rows[0], ["26.5", "26.4", "26.6", "", "", ""]);
        assert_eq!(x.rows[1], ["26.4", "", "", "0.1", "1", "0"]);
        assert_eq!(x.rows[2], ["", "", "", "", "", ""]);
        assert_eq!(x.rows[3], ["", "", "", "", "0", "0"]);
        // Inconclusive: no decision, said so.
        assert_eq!(x.rows[4], ["26", "", "", "0.5", "", "1"]);
        // A column of marks alone is verdicts too, not labels.
        let y = t(&["fit"], &[&["✓"], &["none ✗"], &["?"]]);
        assert_eq!(y.columns, ["fit_met", "fit_inconclusive"]);
        assert_eq!(y.rows, [["1", "0"], ["0", "0"], ["", "1"]]);
    }

    #[test]
    fn measured_remarks_become_numbers_and_other_remarks_stay_words() {
        let x = t(&["live WRR"], &[&["0.25 (cv 0.27%)"], &["0.5 (cv 1.02%)"], &["0.1 (two runs)"]]);
        assert_eq!(x.columns, ["live_wrr", "live_wrr_cv_pct", "live_wrr_note"]);
        assert_eq!(x.rows[0], ["0.25", "0.27", ""]);
        assert_eq!(x.rows[2], ["0.1", "", "two runs"]);
        // Measures of different names in one column stay words: no column would name them.
        let y = t(&["v"], &[&["1 (cv 2%)"], &["1 (err 3 ms)"]]);
        assert_eq!(y.columns, ["v", "v_note"]);
        assert_eq!(y.rows[1], ["1", "err 3 ms"]);
        assert_eq!(measure("err 0.1 pp ✓").and_then(|m| m.name), Some("err_pp".to_string()));
        assert_eq!(measure("45 widgets"), None);
    }

    #[test]
    fn units_go_to_the_header_or_to_a_unit_column() {
        let x = t(&["latency"], &[&["0.024 ms"], &["1.5 ms"]]);
        assert_eq!((x.columns.clone(), x.rows[0].clone()), (vec!["latency_ms".to_string()], vec!["0.024".to_string()]));
        let y = t(&["measure", "value"], &[&["slice error", "0.120 ms"], &["stretch", "0.4%"], &["runs", "3"]]);
        assert_eq!(y.columns, ["measure", "value", "value_unit"]);
        assert_eq!(y.rows, [["slice error", "0.12", "ms"], ["stretch", "0.4", "pct"], ["runs", "3", ""]]);
    }

    #[test]
    fn a_starred_label_keeps_its_star_in_a_column_of_its_own() {
        let x = t(&["model", "p50 ms"], &[&["fcfs", "382.9"], &["cfs *", "750.4"], &["–", "1"]]);
        assert_eq!(x.columns, ["model", "model_starred", "p50_ms"]);
        assert_eq!(x.rows, [["fcfs", "0", "382.9"], ["cfs", "1", "750.4"], ["", "", "1"]]);
    }

    #[test]
    fn yes_and_no_become_one_and_zero() {
        let x = t(
            &["exact", "timed out", "verdict"],
            &[&["yes", "false", "met"], &["no", "True", "no"], &["–", "", "yes"]],
        );
        // A column mixing verdicts and other words stays words.
        assert_eq!(x.columns, ["exact", "timed_out", "verdict"]);
        assert_eq!(x.rows, [["1", "0", "met"], ["0", "1", "no"], ["", "", "yes"]]);
    }

    #[test]
    fn pairs_split_into_a_column_per_side() {
        let x = t(&["task", "load live / model"], &[&["hog", "1018 / 846"], &["sleeper", "–"]]);
        assert_eq!(x.columns, ["task", "load_live", "load_model"]);
        assert_eq!(x.rows, [["hog", "1018", "846"], ["sleeper", "", ""]]);
        // Not every cell a pair: the column is read as it is.
        let y = t(&["a / b"], &[&["1 / 2"], &["3"]]);
        assert_eq!(y.columns, ["a_per_b", "a_per_b_note"]);
    }

    #[test]
    fn every_column_is_numbers_or_labels_never_both() {
        let x = t(&["counter", "value"], &[&["cycles", "not supported"], &["task-clock", "12.5"], &["faults", "–"]]);
        assert_eq!(x.columns, ["counter", "value", "value_supported"]);
        assert_eq!(x.rows[0], ["cycles", "", "0"]);
        assert_eq!(x.rows[1], ["task-clock", "12.5", "1"]);
        assert_eq!(x.rows[2], ["faults", "", ""]);
        // A counter that no CPU supports is still a column of (empty) numbers, not of words.
        let none = t(&["event", "d1t"], &[&["branches", "not supported"], &["cycles", "Not supported"]]);
        assert_eq!(none.columns, ["event", "d1t", "d1t_supported"]);
        assert_eq!(none.rows[1], ["cycles", "", "0"]);
        // Other words beside numbers are a note; `_supported` says 1 only where a number is.
        let other = t(&["counter", "value"], &[&["cycles", "busy"], &["task-clock", "12.5"], &["x", "not supported"]]);
        assert_eq!(other.columns, ["counter", "value", "value_note", "value_supported"]);
        assert_eq!(other.rows[0], ["cycles", "", "busy", ""]);
        assert_eq!(other.rows[2], ["x", "", "", "0"]);
        let r = t(&["fold"], &[&["1.000–1.000"]]);
        assert_eq!(
            (r.columns.clone(), r.rows[0].clone()),
            (vec!["fold_lo".to_string(), "fold_hi".into()], vec!["1".to_string(), "1".into()])
        );
    }

    #[test]
    fn keys_lead_in_their_order_and_name_every_row() {
        let cols: Vec<String> = ["share %", "task", "run by", "repeat", "verdict"].map(String::from).to_vec();
        let rows: Vec<Vec<String>> = [
            ["50", "hog", "live", "1", "met"],
            ["49", "", "linux", "1", "missed"],
            ["48", "", "cfs", "2", "inconclusive"],
            ["10", "sleeper", "live", "1", "not judged"],
        ]
        .iter()
        .map(|r| r.map(String::from).to_vec())
        .collect();
        let keys: Vec<String> = ["task", "run by", "repeat"].map(String::from).to_vec();
        let x = tidy_keyed(&cols, &rows, &keys);
        assert_eq!(x.columns, ["task", "run_by", "repeat", "share_pct", "verdict_met", "verdict_inconclusive"]);
        assert_eq!(
            x.rows,
            [
                ["hog", "live", "1", "50", "1", "0"],
                ["hog", "linux", "1", "49", "0", "0"],
                ["hog", "cfs", "2", "48", "", "1"],
                ["sleeper", "live", "1", "10", "", ""]
            ]
        );
        // Without keys nothing moves and a blank label stays blank: a column of words after a
        // number is where it was printed.
        let y = tidy(&cols, &rows);
        assert_eq!(y.columns[..3], ["share_pct", "task", "run_by"]);
        assert_eq!(y.rows[1][1], "");
    }
}
