//! Rows of the diagnosis commands (transactions, find-hanging,
//! compare-replicas): one struct per command that serializes to JSON with
//! schema-style names and gives its table cells; the three formats come
//! from here.

use std::io::{self, Write};

use serde::Serialize;

use super::table::{self, Column};
use super::{jsonl, Output};

/// A row of a command's output.
pub trait Record: Serialize {
    /// The table's cells, in the order of the header.
    fn cells(&self) -> Vec<String>;
}

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
    match format {
        Output::Table | Output::Wide => {
            table::write(out, columns, &mut |sink| {
                for r in rows {
                    sink(&r.cells());
                }
            })?;
        }
        Output::Json => {
            let doc = serde_json::json!({ name: rows });
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            out.write_all(b"\n")?;
        }
        Output::Jsonl => {
            let mut buf = Vec::new();
            for r in rows {
                jsonl::push_line(&mut buf, r)?;
            }
            jsonl::write_batch(out, &buf)?;
        }
    }
    out.flush()
}

/// An optional value's cell: the value, or `-`.
pub fn or_dash<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// A time as RFC 3339 with its age, e.g. `2026-11-30T08:10:37.146Z (2h5m ago)`;
/// `-` for an unknown time (0 or below).
pub fn when(ms: i64, now_ms: i64) -> String {
    match super::rfc3339(ms) {
        Some(t) => format!("{t} ({})", super::age(ms, now_ms)),
        None => "-".into(),
    }
}
