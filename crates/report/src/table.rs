//! Plain-text tables for the terminal, rendered with comfy-table.

use crate::section::Table;
use comfy_table::{presets::UTF8_BORDERS_ONLY, CellAlignment, ContentArrangement};

/// Render a [`Table`] with its title above and note below; numbers are right-aligned.
pub fn render(t: &Table) -> String {
    let mut ct = comfy_table::Table::new();
    ct.load_preset(UTF8_BORDERS_ONLY).set_content_arrangement(ContentArrangement::Disabled);
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
    let mut out = String::new();
    if !t.title.is_empty() {
        out.push_str(&t.title);
        out.push('\n');
    }
    out.push_str(&ct.to_string());
    out.push('\n');
    if !t.note.is_empty() {
        out.push_str(&t.note);
        out.push('\n');
    }
    out
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
        let s = render(&t);
        assert!(s.starts_with("Queues\n"));
        assert!(s.contains("delta") && s.contains("10") && s.contains("ops summed"));
    }
}
