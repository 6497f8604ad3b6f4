//! Rows of the diagnosis commands (transactions, find-hanging,
//! compare-replicas): one struct per command that serializes to JSON with
//! schema-style names and gives its table cells; the three formats come
//! from here.
//!
//! Every format streams: rows are serialized straight into one large buffer
//! in front of `out` (no `serde_json::Value` tree in between, so keys keep
//! the struct's declaration order, which is the table's), and `out` sees
//! one write per buffer, not one per line or token.

use std::cell::RefCell;
use std::io::{self, BufWriter, Write};

use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;

use super::format::{Output, BUFFER};
use super::table::{self, Cell, Column};

/// A row of a command's output.
pub trait Record: Serialize {
    /// The table's cells, in the order of the header, each styled from
    /// what the row holds (a plain `String` converts with `.into()`).
    fn cells(&self) -> Vec<Cell>;
}

/// Rows handed over one by one, in order: `each(sink)` calls `sink` with
/// every row. A table calls it twice (widths, then text), so rows made on
/// the fly (`kdp lag` judges each committed offset as it prints it) are
/// never all held.
pub type Each<'a, R> = dyn FnMut(&mut dyn FnMut(&R)) + 'a;

/// Writes `rows` as `format`: an aligned table of `columns` (fitted to the
/// screen, see [`table`]), one JSON document (`{"<name>": [rows]}`), or one
/// JSON object per line.
pub fn write<R: Record>(
    out: &mut dyn Write,
    format: Output,
    name: &str,
    columns: &[Column],
    rows: &[R],
) -> io::Result<()> {
    write_each(out, format, name, columns, &mut |sink| {
        rows.iter().for_each(&mut *sink);
    })
}

/// [`write()`] from rows handed over by `each`, none of them held: the same
/// bytes as [`write()`] of the same rows in the same order.
pub fn write_each<R: Record>(
    out: &mut dyn Write,
    format: Output,
    name: &str,
    columns: &[Column],
    each: &mut Each<'_, R>,
) -> io::Result<()> {
    let mut buf = BufWriter::with_capacity(BUFFER, out);
    match format {
        Output::Table | Output::Wide => {
            table::write(&mut buf, columns, &mut |sink| {
                each(&mut |r| sink(&r.cells()));
            })?;
        }
        Output::Json => {
            let mut ser = serde_json::Serializer::pretty(&mut buf);
            let rows = Streamed(RefCell::new(each));
            Document { name, rows: &rows }.serialize(&mut ser)?;
            buf.write_all(b"\n")?;
        }
        Output::Jsonl => {
            let mut failed = None;
            each(&mut |r| {
                if failed.is_none() {
                    let line = serde_json::to_writer(&mut buf, r)
                        .map_err(io::Error::from)
                        .and_then(|()| buf.write_all(b"\n"));
                    failed = line.err();
                }
            });
            if let Some(e) = failed {
                return Err(e);
            }
        }
    }
    buf.flush()
}

/// `{"<name>": rows}`, serialized from the borrowed rows.
struct Document<'a, T: ?Sized> {
    name: &'a str,
    rows: &'a T,
}

impl<T: Serialize + ?Sized> Serialize for Document<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry(self.name, self.rows)?;
        map.end()
    }
}

/// A JSON array of the rows an [`Each`] hands over, serialized as they
/// come (a `RefCell`: `Serialize` borrows, the rows' source is `FnMut`).
struct Streamed<'a, 'b, R>(RefCell<&'b mut Each<'a, R>>);

impl<R: Serialize> Serialize for Streamed<'_, '_, R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // no length up front: serde_json writes the same bytes as for a
        // slice, `[]` when empty
        let mut seq = s.serialize_seq(None)?;
        let mut failed = None;
        (self.0.borrow_mut())(&mut |r| {
            if failed.is_none() {
                failed = seq.serialize_element(r).err();
            }
        });
        match failed {
            Some(e) => Err(e),
            None => seq.end(),
        }
    }
}

/// An optional value's cell: the value, or `-`.
pub fn or_dash<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// A time as RFC 3339 with its age, e.g. `2026-11-30T08:10:37.146Z (2h5m ago)`;
/// `-` for an unknown time (0 or below).
pub fn when(ms: i64, now_ms: i64) -> String {
    match super::format::Rfc3339::at(ms) {
        Some(t) => format!("{t} ({})", super::format::age(ms, now_ms)),
        None => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fields deliberately not in alphabetical order, as a table's are.
    #[derive(Serialize)]
    #[serde(rename_all = "PascalCase")]
    struct Row {
        topic: &'static str,
        partition: i32,
        producer_id: i64,
        age: Option<i64>,
    }

    impl Record for Row {
        fn cells(&self) -> Vec<Cell> {
            vec![
                self.topic.into(),
                self.partition.to_string().into(),
                self.producer_id.to_string().into(),
                or_dash(self.age).into(),
            ]
        }
    }

    const COLUMNS: &[Column] = &[
        Column::new("Topic", 0),
        Column::new("Partition", 0),
        Column::new("ProducerId", 0),
        Column::new("Age", 0),
    ];

    fn rows(n: usize) -> Vec<Row> {
        (0..n)
            .map(|i| Row {
                topic: "orders",
                partition: i as i32,
                producer_id: 1000 + i as i64,
                age: (i % 2 == 0).then_some(5),
            })
            .collect()
    }

    fn written(format: Output, rows: &[Row]) -> String {
        let mut out = Vec::new();
        write(&mut out, format, "Transactions", COLUMNS, rows).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Keys come in declaration order (the table's), not alphabetically as
    /// a `serde_json::Value` tree would sort them; the document keeps its
    /// shape and its pretty layout.
    #[test]
    fn json_keys_keep_the_declaration_order() {
        let text = written(Output::Json, &rows(2));
        let expected = r#"{
  "Transactions": [
    {
      "Topic": "orders",
      "Partition": 0,
      "ProducerId": 1000,
      "Age": 5
    },
    {
      "Topic": "orders",
      "Partition": 1,
      "ProducerId": 1001,
      "Age": null
    }
  ]
}
"#;
        assert_eq!(text, expected);
        assert_eq!(written(Output::Json, &[]), "{\n  \"Transactions\": []\n}\n");
    }

    #[test]
    fn json_lines_keep_the_declaration_order() {
        assert_eq!(
            written(Output::Jsonl, &rows(2)),
            "{\"Topic\":\"orders\",\"Partition\":0,\"ProducerId\":1000,\"Age\":5}\n\
             {\"Topic\":\"orders\",\"Partition\":1,\"ProducerId\":1001,\"Age\":null}\n"
        );
    }

    /// A sink that counts the `write` calls it gets.
    #[derive(Default)]
    struct Counting {
        writes: usize,
        bytes: usize,
        flushes: usize,
    }

    impl Write for Counting {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.writes += 1;
            self.bytes += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            self.flushes += 1;
            Ok(())
        }
    }

    /// 10,000 rows reach the sink in a write per buffer, in every format:
    /// the old writer gave pretty JSON a write per token and the table a
    /// write per row.
    #[test]
    fn one_write_per_buffer_not_per_row() {
        let rows = rows(10_000);
        for format in [Output::Json, Output::Jsonl, Output::Table] {
            let mut sink = Counting::default();
            write(&mut sink, format, "Transactions", COLUMNS, &rows).unwrap();
            assert!(sink.bytes > 2 * BUFFER, "{format:?}: {} bytes", sink.bytes);
            assert!(
                sink.writes <= sink.bytes / (BUFFER / 2) + 2,
                "{format:?}: {} writes for {} bytes",
                sink.writes,
                sink.bytes
            );
            assert!(sink.flushes >= 1, "{format:?}: never flushed");
        }
    }
}
