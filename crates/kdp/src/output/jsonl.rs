//! JSON lines: one compact JSON object per line, for `jq` and log pipelines.

use std::io::{self, Write};

use serde::Serialize;

/// Appends `value` to `buf` as one line.
pub fn push_line<T: Serialize + ?Sized>(buf: &mut Vec<u8>, value: &T) -> serde_json::Result<()> {
    serde_json::to_writer(&mut *buf, value)?;
    buf.push(b'\n');
    Ok(())
}

/// Writes a batch of lines and flushes, so a consumer sees each batch as it
/// arrives rather than when the command ends.
pub fn write_batch(out: &mut dyn Write, buf: &[u8]) -> io::Result<()> {
    out.write_all(buf).and_then(|()| out.flush())
}
