//! Plain-text tables for the terminal, rendered with comfy-table, fitted to its width: the
//! width is `COLUMNS` when set, else the terminal's when stdout is one, else unbounded (a pipe
//! or file gets whole lines, one row per line). Too wide a table first wraps its cells; when
//! even that cannot fit (too many columns), each row is printed as a block of `column: value`
//! lines instead.

use crate::section::Table;
use comfy_table::{presets::UTF8_BORDERS_ONLY, CellAlignment, ContentArrangement};

/// Narrowest a column may wrap to before the table is transposed instead.
const MIN_COLUMN: usize = 8;

/// Render a [`Table`] with its title above and note below, to the output's width.
pub fn render(t: &Table) -> String {
    render_to(t, output_width())
}

/// The width to fit: `COLUMNS`, else the terminal's, else none.
pub fn output_width() -> Option<usize> {
    if let Some(c) = std::env::var("COLUMNS").ok().and_then(|v| v.trim().parse::<usize>().ok()).filter(|&c| c > 0) {
        return Some(c);
    }
    let probe = comfy_table::Table::new();
    if probe.is_tty() {
        probe.width().map(usize::from)
    } else {
        None
    }
}

/// Render to `width` columns (None: as wide as the content).
pub fn render_to(t: &Table, width: Option<usize>) -> String {
    let body = match width {
        None => grid(t, None),
        Some(w) if t.columns.len() * (MIN_COLUMN + 3) + 1 > w => {
            let whole = grid(t, None);
            if widest(&whole) <= w {
                whole
            } else {
                records(t, w)
            }
        }
        Some(w) => grid(t, Some(w)),
    };
    let mut out = String::new();
    if !t.title.is_empty() {
        out.push_str(&wrap(&t.title, width));
        out.push('\n');
    }
    out.push_str(&body);
    out.push('\n');
    if !t.note.is_empty() {
        out.push_str(&wrap(&t.note, width));
        out.push('\n');
    }
    out
}

/// The bordered grid; with a width, cells wrap to fit it.
fn grid(t: &Table, width: Option<usize>) -> String {
    let mut ct = comfy_table::Table::new();
    ct.load_preset(UTF8_BORDERS_ONLY);
    match width {
        Some(w) => {
            ct.set_content_arrangement(ContentArrangement::Dynamic).set_width(w.min(u16::MAX as usize) as u16);
        }
        None => {
            ct.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    ct.set_header(&t.columns);
    for row in &t.rows {
        ct.add_row(row.iter().map(|c| {
            let cell = comfy_table::Cell::new(c);
            if looks_numeric(c) {
                cell.set_alignment(CellAlignment::Right)
            } else {
                cell
            }
        }));
    }
    ct.to_string()
}

/// One block per row: `column: value` lines, the values wrapped to `width`.
fn records(t: &Table, width: usize) -> String {
    let key_width = t.columns.iter().map(|c| c.chars().count()).max().unwrap_or(0);
    let mut blocks = Vec::new();
    for (i, row) in t.rows.iter().enumerate() {
        let mut block = format!("── row {} of {} ──", i + 1, t.rows.len());
        for (c, v) in t.columns.iter().zip(row) {
            let indent = key_width + 2;
            let value = wrap(v, Some(width.saturating_sub(indent).max(MIN_COLUMN)));
            let mut lines = value.lines();
            block.push_str(&format!("\n{c:>key_width$}: {}", lines.next().unwrap_or("")));
            for l in lines {
                block.push_str(&format!("\n{:indent$}{l}", ""));
            }
        }
        blocks.push(block);
    }
    blocks.join("\n")
}

/// Word-wrap prose to the output's width (see [`output_width`]).
pub fn fit_text(text: &str) -> String {
    wrap(text, output_width())
}

/// Word-wrap `text` to `width` columns (words longer than a line stay whole).
fn wrap(text: &str, width: Option<usize>) -> String {
    let Some(w) = width else {
        return text.to_string();
    };
    let mut out: Vec<String> = Vec::new();
    for para in text.lines() {
        let mut line = String::new();
        for word in para.split(' ') {
            if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > w {
                out.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        out.push(line);
    }
    out.join("\n")
}

fn widest(s: &str) -> usize {
    s.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

fn looks_numeric(s: &str) -> bool {
    let s = s.trim().trim_end_matches(['%', '×', 'x', '*']);
    !s.is_empty() && s.parse::<f64>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_title_rows_and_note() {
        let mut t = Table::new("Queues", &["queue", "ops"]);
        t.row(vec!["delta".into(), "10".into()]);
        let t = t.with_note("ops summed over ticks");
        let s = render_to(&t, None);
        assert!(s.starts_with("Queues\n"));
        assert!(s.contains("delta") && s.contains("10") && s.contains("ops summed"));
    }

    fn wide() -> Table {
        let cols: Vec<String> = (0..14).map(|i| format!("metric number {i}")).collect();
        let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
        let mut t = Table::new("A wide table whose title is longer than a narrow terminal is wide", &cols);
        t.row((0..14).map(|i| format!("{}.125", i * 1000)).collect());
        t.row((0..14).map(|i| format!("value {i} with words")).collect());
        t.with_note("a note that also runs on for longer than the forty columns of a narrow terminal")
    }

    #[test]
    fn every_line_fits_the_width_by_wrapping_or_by_records() {
        let t = wide();
        for w in [40, 80, 120, 200] {
            let s = render_to(&t, Some(w));
            assert!(widest(&s) <= w, "width {w}: a line of {} columns:\n{s}", widest(&s));
            assert!(s.contains("13000.125") && s.matches("words").count() >= 14, "width {w} lost a value:\n{s}");
        }
        assert!(render_to(&t, Some(80)).contains("── row 2 of 2 ──"), "14 columns in 80: one block per row");
        let mut narrow = Table::new("", &["policy", "avg waiting ms"]);
        narrow.row(vec!["a policy with a long name that wraps".into(), "12.5".into()]);
        let s = render_to(&narrow, Some(30));
        assert!(widest(&s) <= 30 && !s.contains("── row"), "two columns wrap in place:\n{s}");
        assert!(widest(&render_to(&t, None)) > 200, "a pipe gets whole lines");
    }
}
