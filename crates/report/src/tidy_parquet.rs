//! A tidy table as an Apache Parquet file, for pandas, polars, DuckDB, R's arrow or Spark:
//! columns of whole numbers as optional INT64, other numeric columns as optional DOUBLE, label
//! columns as optional UTF-8 strings, empty cells as nulls, and the table's title and
//! provenance as the file's key–value metadata.

use crate::tidy::TidyTable;
use anyhow::{Context, Result};
use parquet::basic::{LogicalType, Repetition, Type as PhysicalType};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use std::sync::Arc;

/// What a tidy column holds. The tidy form guarantees a column is numbers or labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    /// Every non-empty cell a whole number.
    Integer,
    /// Every non-empty cell a number (a column of empty cells counts here).
    Number,
    Text,
}

/// The kind of each column of `t`.
pub fn column_kinds(t: &TidyTable) -> Vec<ColumnKind> {
    (0..t.columns.len())
        .map(|j| {
            let cells: Vec<&str> =
                t.rows.iter().map(|r| r.get(j).map_or("", String::as_str)).filter(|c| !c.is_empty()).collect();
            if cells.is_empty() {
                ColumnKind::Number
            } else if cells.iter().all(|c| c.parse::<i64>().is_ok()) {
                ColumnKind::Integer
            } else if cells.iter().all(|c| c.parse::<f64>().is_ok()) {
                ColumnKind::Number
            } else {
                ColumnKind::Text
            }
        })
        .collect()
}

/// `t` as the bytes of a Parquet file with `metadata` (e.g. `title`, `run`, `experiment`).
pub fn to_parquet(t: &TidyTable, metadata: &[(&str, String)]) -> Result<Vec<u8>> {
    let kinds = column_kinds(t);
    let mut fields = Vec::new();
    for (name, &kind) in t.columns.iter().zip(&kinds) {
        let field = match kind {
            ColumnKind::Integer => Type::primitive_type_builder(name, PhysicalType::INT64),
            ColumnKind::Number => Type::primitive_type_builder(name, PhysicalType::DOUBLE),
            ColumnKind::Text => Type::primitive_type_builder(name, PhysicalType::BYTE_ARRAY)
                .with_logical_type(Some(LogicalType::String)),
        };
        fields.push(Arc::new(field.with_repetition(Repetition::OPTIONAL).build()?));
    }
    let schema = Arc::new(Type::group_type_builder("table").with_fields(fields).build()?);
    let kv = metadata.iter().map(|(k, v)| KeyValue::new(k.to_string(), v.clone())).collect();
    let props = Arc::new(WriterProperties::builder().set_key_value_metadata(Some(kv)).build());
    let mut out = Vec::new();
    let mut writer = SerializedFileWriter::new(&mut out, schema, props)?;
    let mut group = writer.next_row_group()?;
    let mut j = 0;
    while let Some(mut col) = group.next_column()? {
        let cells: Vec<&str> = t.rows.iter().map(|r| r.get(j).map_or("", String::as_str)).collect();
        let levels: Vec<i16> = cells.iter().map(|c| i16::from(!c.is_empty())).collect();
        let present = cells.iter().filter(|c| !c.is_empty());
        match kinds[j] {
            ColumnKind::Integer => {
                let values: Vec<i64> = present.map(|c| c.parse().expect("an integer column")).collect();
                col.typed::<Int64Type>().write_batch(&values, Some(&levels), None)?;
            }
            ColumnKind::Number => {
                let values: Vec<f64> = present.map(|c| c.parse().expect("a numeric column")).collect();
                col.typed::<DoubleType>().write_batch(&values, Some(&levels), None)?;
            }
            ColumnKind::Text => {
                let values: Vec<ByteArray> = present.map(|c| ByteArray::from(*c)).collect();
                col.typed::<ByteArrayType>().write_batch(&values, Some(&levels), None)?;
            }
        }
        col.close()?;
        j += 1;
    }
    group.close()?;
    writer.close().context("finishing the Parquet file")?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    #[test]
    fn numbers_labels_and_empty_cells_come_back_typed() {
        let t = TidyTable {
            columns: vec!["policy".into(), "avg_waiting_ms".into(), "note".into(), "switches".into()],
            rows: vec![
                vec!["rr:quantum=4ms".into(), "8.25".into(), "".into(), "26".into()],
                vec!["fcfs".into(), "".into(), "not supported".into(), "-3".into()],
            ],
        };
        assert_eq!(column_kinds(&t), vec![ColumnKind::Text, ColumnKind::Number, ColumnKind::Text, ColumnKind::Integer]);
        let bytes = to_parquet(&t, &[("title", "Waiting".into())]).unwrap();
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), &bytes).unwrap();
        let reader = SerializedFileReader::new(std::fs::File::open(file.path()).unwrap()).unwrap();
        let kv = reader.metadata().file_metadata().key_value_metadata().unwrap();
        assert_eq!((kv[0].key.as_str(), kv[0].value.as_deref()), ("title", Some("Waiting")));
        let rows: Vec<Vec<(String, Field)>> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| r.unwrap().get_column_iter().map(|(n, f)| (n.clone(), f.clone())).collect())
            .collect();
        assert_eq!(
            rows,
            vec![
                vec![
                    ("policy".into(), Field::Str("rr:quantum=4ms".into())),
                    ("avg_waiting_ms".into(), Field::Double(8.25)),
                    ("note".into(), Field::Null),
                    ("switches".into(), Field::Long(26)),
                ],
                vec![
                    ("policy".into(), Field::Str("fcfs".into())),
                    ("avg_waiting_ms".into(), Field::Null),
                    ("note".into(), Field::Str("not supported".into())),
                    ("switches".into(), Field::Long(-3)),
                ],
            ]
        );
    }
}
