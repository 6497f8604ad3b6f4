//! JSON in the seed's shape. Reading is strict: unknown fields, missing
//! fields without a schema default, and out-of-range numbers are errors that
//! name the field path.

use serde::de::DeserializeOwned;

/// A JSON input that does not fit the schema.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct JsonError {
    /// The field path, e.g. `Topics[0].Partitions[1].ErrorCode` (`.` for the root).
    pub path: String,
    /// What the JSON reader objected to.
    pub message: String,
}

/// Parses `text` into a message, naming the failing field path.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, JsonError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value: T = serde_path_to_error::deserialize(&mut de).map_err(|e| JsonError {
        path: e.path().to_string(),
        message: e.inner().to_string(),
    })?;
    // Like the binary decoder, refuse anything after the document.
    de.end().map_err(|e| JsonError {
        path: ".".into(),
        message: e.to_string(),
    })?;
    Ok(value)
}

/// Writes a DescribeProducers response as pretty JSON, byte for byte what
/// `serde_json::to_writer_pretty` writes, several times faster: the shape
/// has a fixed depth, so every key and its indentation is a constant.
/// A response carrying unknown tagged fields takes the serde path.
pub fn write_response_pretty<W: std::io::Write>(
    w: &mut W,
    m: &crate::messages::DescribeProducersResponse,
) -> std::io::Result<()> {
    if has_unknown_tags(m) {
        serde_json::to_writer_pretty(&mut *w, m)?;
        return Ok(());
    }
    let mut out = PrettyOut {
        buf: Vec::with_capacity(FLUSH_AT + 4096),
        w,
    };
    out.raw(b"{\n  \"ThrottleTimeMs\": ");
    out.int(m.throttle_time_ms);
    out.raw(b",\n  \"Topics\": ");
    if m.topics.is_empty() {
        out.raw(b"[]");
    } else {
        out.raw(b"[");
        for (ti, t) in m.topics.iter().enumerate() {
            out.raw(if ti == 0 {
                b"\n    {\n      \"Name\": "
            } else {
                b",\n    {\n      \"Name\": "
            });
            out.string(&t.name)?;
            out.raw(b",\n      \"Partitions\": ");
            if t.partitions.is_empty() {
                out.raw(b"[]");
            } else {
                out.raw(b"[");
                for (pi, p) in t.partitions.iter().enumerate() {
                    out.raw(if pi == 0 {
                        b"\n        {\n          \"PartitionIndex\": "
                    } else {
                        b",\n        {\n          \"PartitionIndex\": "
                    });
                    out.int(p.partition_index);
                    out.raw(b",\n          \"ErrorCode\": ");
                    out.int(p.error_code.0);
                    out.raw(b",\n          \"ErrorMessage\": ");
                    match &p.error_message {
                        None => out.raw(b"null"),
                        Some(s) => out.string(s)?,
                    }
                    out.raw(b",\n          \"ActiveProducers\": ");
                    if p.active_producers.is_empty() {
                        out.raw(b"[]");
                    } else {
                        out.raw(b"[");
                        for (si, s) in p.active_producers.iter().enumerate() {
                            out.raw(if si == 0 {
                                b"\n            {\n              \"ProducerId\": "
                            } else {
                                b",\n            {\n              \"ProducerId\": "
                            });
                            out.int(s.producer_id);
                            out.raw(b",\n              \"ProducerEpoch\": ");
                            out.int(s.producer_epoch);
                            out.raw(b",\n              \"LastSequence\": ");
                            out.int(s.last_sequence);
                            out.raw(b",\n              \"LastTimestamp\": ");
                            out.int(s.last_timestamp);
                            out.raw(b",\n              \"CoordinatorEpoch\": ");
                            out.int(s.coordinator_epoch);
                            out.raw(b",\n              \"CurrentTxnStartOffset\": ");
                            out.int(s.current_txn_start_offset);
                            out.raw(b"\n            }");
                            out.maybe_flush()?;
                        }
                        out.raw(b"\n          ]");
                    }
                    out.raw(b"\n        }");
                }
                out.raw(b"\n      ]");
            }
            out.raw(b"\n    }");
        }
        out.raw(b"\n  ]");
    }
    out.raw(b"\n}");
    out.flush()
}

const FLUSH_AT: usize = 1 << 16;

fn has_unknown_tags(m: &crate::messages::DescribeProducersResponse) -> bool {
    !m.unknown_tagged_fields.is_empty()
        || m.topics.iter().any(|t| {
            !t.unknown_tagged_fields.is_empty()
                || t.partitions.iter().any(|p| {
                    !p.unknown_tagged_fields.is_empty()
                        || p.active_producers
                            .iter()
                            .any(|s| !s.unknown_tagged_fields.is_empty())
                })
        })
}

struct PrettyOut<'w, W: std::io::Write> {
    buf: Vec<u8>,
    w: &'w mut W,
}

impl<W: std::io::Write> PrettyOut<'_, W> {
    #[inline]
    fn raw(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    #[inline]
    fn int<I: itoa::Integer>(&mut self, v: I) {
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
    }

    /// Strings go through serde_json so that escaping is exactly its own.
    fn string(&mut self, s: &str) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.buf, s).map_err(std::io::Error::from)
    }

    #[inline]
    fn maybe_flush(&mut self) -> std::io::Result<()> {
        if self.buf.len() >= FLUSH_AT {
            self.w.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.w.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }
}
