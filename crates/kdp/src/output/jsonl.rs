//! JSON lines: one compact JSON object per line, for `jq` and log pipelines.

use std::io::{self, Write};

use serde::Serialize;

/// Writes `value` to `buf` as one line, serialized straight into it (give
/// it a buffered writer: a line is several small writes).
pub fn push_line<W: Write + ?Sized, T: Serialize + ?Sized>(
    buf: &mut W,
    value: &T,
) -> io::Result<()> {
    serde_json::to_writer(&mut *buf, value)?;
    buf.write_all(b"\n")
}
