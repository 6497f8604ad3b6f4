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
use serde_json::ser::{Formatter, PrettyFormatter};

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

/// Rows written as they come, across calls: a read in waves (`kdp lag`)
/// hands its rows over wave by wave, between requests, so no callback of
/// [`write_each`] can drive it. JSON and JSON lines are the same bytes as
/// [`write()`] of the same rows; a table is laid out by its first part
/// that has rows and widened by later ones ([`table::Parts`]), so one part
/// is [`write()`]'s table too.
pub struct Stream<'a> {
    buf: BufWriter<&'a mut dyn Write>,
    mode: Mode<'a>,
    rows: usize,
    failed: Option<io::Error>,
}

enum Mode<'a> {
    Json,
    Jsonl,
    Table(table::Parts<'a>),
}

impl<'a> Stream<'a> {
    /// Starts the document (JSON), nothing (JSON lines) or a table of
    /// `columns` laid out by the command line; a table refuses an unknown
    /// `--columns` name here, before any row is read.
    pub fn begin(
        out: &'a mut dyn Write,
        format: Output,
        name: &str,
        columns: &'a [Column],
    ) -> io::Result<Stream<'a>> {
        let mode = match format {
            Output::Json => Mode::Json,
            Output::Jsonl => Mode::Jsonl,
            Output::Table | Output::Wide => {
                Mode::Table(table::Parts::new(columns, table::layout())?)
            }
        };
        let mut s = Stream {
            buf: BufWriter::with_capacity(BUFFER, out),
            mode,
            rows: 0,
            failed: None,
        };
        if let Mode::Json = s.mode {
            // serde_json's pretty layout of `{"<name>": [...]}`
            let head = serde_json::to_string(name)
                .map_err(io::Error::from)
                .and_then(|key| write!(s.buf, "{{\n  {key}: ["));
            s.failed = head.err();
        }
        Ok(s)
    }

    /// Writes the rows `each` hands over (nothing more once a write
    /// failed); a table calls it twice, for its widths and then its text.
    /// Returns how many rows it handed over.
    pub fn part<R: Record>(&mut self, each: &mut Each<'_, R>) -> usize {
        let before = self.rows;
        if self.failed.is_some() {
            return 0;
        }
        if let Mode::Table(parts) = &mut self.mode {
            let written = parts.write(&mut self.buf, &mut |sink| {
                each(&mut |r| sink(&r.cells()));
            });
            match written {
                Ok(n) => self.rows += n,
                Err(e) => self.failed = Some(e),
            }
        } else {
            each(&mut |r| self.row(r));
        }
        self.rows - before
    }

    /// Writes one row of JSON or JSON lines.
    fn row<R: Serialize>(&mut self, r: &R) {
        if self.failed.is_some() {
            return;
        }
        let written = match self.mode {
            Mode::Json => self.element(r),
            _ => serde_json::to_writer(&mut self.buf, r)
                .map_err(io::Error::from)
                .and_then(|()| self.buf.write_all(b"\n")),
        };
        self.rows += 1;
        self.failed = written.err();
    }

    /// An array element at depth two, in serde_json's pretty layout.
    fn element<R: Serialize>(&mut self, r: &R) -> io::Result<()> {
        let sep: &[u8] = if self.rows == 0 {
            b"\n    "
        } else {
            b",\n    "
        };
        self.buf.write_all(sep)?;
        // serde_json's own pretty layout, its depth raised to the
        // element's (two: the document's object, then its array) by
        // opening both into a sink: no row is formatted twice
        let mut deeper = PrettyFormatter::new();
        deeper.begin_object(&mut io::sink())?;
        deeper.begin_array(&mut io::sink())?;
        r.serialize(&mut serde_json::Serializer::with_formatter(
            &mut self.buf,
            deeper,
        ))?;
        Ok(())
    }

    /// Drops what is buffered unwritten (a command that fails before its
    /// first row prints no half document).
    pub fn abandon(self) {
        drop(self.buf.into_parts());
    }

    /// Ends the document and flushes; the first write error, if any.
    pub fn finish(mut self) -> io::Result<()> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        if let Mode::Json = self.mode {
            let tail: &[u8] = if self.rows == 0 {
                b"]\n}\n"
            } else {
                b"\n  ]\n}\n"
            };
            self.buf.write_all(tail)?;
        }
        self.buf.flush()
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

    /// The document written at once, and a stream written row by row, are
    /// serde_json's own pretty document (and lines), for any number of
    /// rows, nested values and escapes included.
    #[test]
    fn a_stream_writes_the_same_bytes_as_the_rows_at_once() {
        #[derive(Serialize)]
        struct Nested {
            row: Row,
            list: Vec<Option<i64>>,
            empty: Vec<i64>,
            text: &'static str,
        }
        impl Record for Nested {
            fn cells(&self) -> Vec<Cell> {
                Vec::new()
            }
        }
        for n in [0, 1, 2, 5] {
            let nested: Vec<Nested> = rows(n)
                .into_iter()
                .map(|row| Nested {
                    row,
                    list: vec![Some(1), None],
                    empty: Vec::new(),
                    text: "a\nb \"c\"",
                })
                .collect();
            // serde_json's own layout of the whole document, and its lines
            let document = std::collections::BTreeMap::from([("Lag \"x\"", &nested)]);
            let json = serde_json::to_string_pretty(&document).unwrap() + "\n";
            let jsonl: String = nested
                .iter()
                .map(|r| serde_json::to_string(r).unwrap() + "\n")
                .collect();
            for (format, whole) in [(Output::Json, json), (Output::Jsonl, jsonl)] {
                let mut at_once = Vec::new();
                write(&mut at_once, format, "Lag \"x\"", COLUMNS, &nested).unwrap();
                assert_eq!(
                    String::from_utf8(at_once).unwrap(),
                    whole,
                    "{n} rows as {format:?}"
                );
                let mut streamed = Vec::new();
                let mut s = Stream::begin(&mut streamed, format, "Lag \"x\"", COLUMNS).unwrap();
                // in parts: one row each, as waves hand them over
                for r in &nested {
                    assert_eq!(s.part(&mut |sink| sink(r)), 1);
                }
                s.finish().unwrap();
                assert_eq!(
                    String::from_utf8(streamed).unwrap(),
                    whole,
                    "{n} rows as {format:?}"
                );
            }
        }
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
