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
    let mut doc = PrettyResponse::begin(w, m.throttle_time_ms);
    for t in &m.topics {
        doc.topic(&t.name)?;
        for p in &t.partitions {
            doc.partition(
                p.partition_index,
                p.error_code.0,
                p.error_message.as_deref(),
                &p.active_producers,
            )?;
        }
    }
    doc.finish()
}

/// One producer's fields as the document writes them, in its order:
/// `ProducerId`, `ProducerEpoch`, `LastSequence`, `LastTimestamp`,
/// `CoordinatorEpoch`, `CurrentTxnStartOffset`.
pub trait PrettyProducer {
    /// The six fields, in that order.
    fn fields(&self) -> [i64; 6];
}

impl PrettyProducer for crate::messages::ProducerState {
    #[inline]
    fn fields(&self) -> [i64; 6] {
        [
            self.producer_id,
            self.producer_epoch.into(),
            self.last_sequence.into(),
            self.last_timestamp,
            self.coordinator_epoch.into(),
            self.current_txn_start_offset,
        ]
    }
}

impl PrettyProducer for crate::messages::ProducerStateView<'_> {
    #[inline]
    fn fields(&self) -> [i64; 6] {
        [
            self.producer_id(),
            self.producer_epoch().into(),
            self.last_sequence().into(),
            self.last_timestamp(),
            self.coordinator_epoch().into(),
            self.current_txn_start_offset(),
        ]
    }
}

impl<T: PrettyProducer + ?Sized> PrettyProducer for &T {
    #[inline]
    fn fields(&self) -> [i64; 6] {
        (**self).fields()
    }
}

/// A DescribeProducers response written as pretty JSON piece by piece,
/// byte for byte what [`write_response_pretty`] writes of the same
/// response without unknown tagged fields: for a caller whose response is
/// not one value (answers merged from several responses' views).
pub struct PrettyResponse<'w, W: std::io::Write> {
    out: PrettyOut<'w, W>,
    /// Whether a topic has been begun.
    topics: bool,
    /// Whether the current topic has a partition.
    partitions: bool,
}

impl<'w, W: std::io::Write> PrettyResponse<'w, W> {
    /// The document's head; nothing is written to `w` until enough is
    /// buffered.
    pub fn begin(w: &'w mut W, throttle_time_ms: i32) -> Self {
        let mut out = PrettyOut {
            buf: Vec::with_capacity(FLUSH_AT + 4096),
            w,
        };
        out.raw(b"{\n  \"ThrottleTimeMs\": ");
        out.int(throttle_time_ms);
        out.raw(b",\n  \"Topics\": ");
        PrettyResponse {
            out,
            topics: false,
            partitions: false,
        }
    }

    /// Ends the topic begun, if any.
    fn end_topic(&mut self) {
        if !self.topics {
            return;
        }
        self.out
            .raw(if self.partitions { b"\n      ]" } else { b"[]" });
        self.out.raw(b"\n    }");
    }

    /// Begins topic `name`: the partitions after it are its own.
    pub fn topic(&mut self, name: &str) -> std::io::Result<()> {
        self.end_topic();
        self.out.raw(if self.topics {
            b",\n    {\n      \"Name\": "
        } else {
            b"[\n    {\n      \"Name\": "
        });
        self.topics = true;
        self.partitions = false;
        self.out.string(name)?;
        self.out.raw(b",\n      \"Partitions\": ");
        Ok(())
    }

    /// A partition of the topic begun, with its producers in the order
    /// given.
    pub fn partition<P: PrettyProducer>(
        &mut self,
        partition_index: i32,
        error_code: i16,
        error_message: Option<&str>,
        producers: impl IntoIterator<Item = P>,
    ) -> std::io::Result<()> {
        let out = &mut self.out;
        out.raw(if self.partitions {
            b",\n        {\n          \"PartitionIndex\": "
        } else {
            b"[\n        {\n          \"PartitionIndex\": "
        });
        self.partitions = true;
        out.int(partition_index);
        out.raw(b",\n          \"ErrorCode\": ");
        out.int(error_code);
        out.raw(b",\n          \"ErrorMessage\": ");
        match error_message {
            None => out.raw(b"null"),
            Some(s) => out.string(s)?,
        }
        out.raw(b",\n          \"ActiveProducers\": ");
        let mut any = false;
        for s in producers {
            out.raw(if any {
                b",\n            {\n              \"ProducerId\": "
            } else {
                b"[\n            {\n              \"ProducerId\": "
            });
            any = true;
            let [id, epoch, seq, ts, coord, txn] = s.fields();
            out.int(id);
            out.raw(b",\n              \"ProducerEpoch\": ");
            out.int(epoch);
            out.raw(b",\n              \"LastSequence\": ");
            out.int(seq);
            out.raw(b",\n              \"LastTimestamp\": ");
            out.int(ts);
            out.raw(b",\n              \"CoordinatorEpoch\": ");
            out.int(coord);
            out.raw(b",\n              \"CurrentTxnStartOffset\": ");
            out.int(txn);
            out.raw(b"\n            }");
            out.maybe_flush()?;
        }
        out.raw(if any { b"\n          ]" } else { b"[]" });
        out.raw(b"\n        }");
        Ok(())
    }

    /// Ends the document and writes what is buffered.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.end_topic();
        self.out.raw(if self.topics { b"\n  ]" } else { b"[]" });
        self.out.raw(b"\n}");
        self.out.flush()
    }
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
