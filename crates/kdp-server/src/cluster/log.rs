//! A partition's log as the mock serves it: record batches v2, each kept
//! encoded (as a broker keeps them on disk), with what Fetch needs to know
//! about each (offsets, producer, transaction markers) read once on append.

use kdp_wire::records::{
    Attributes, Batches, Compression, ControlType, Record, RecordBatch, TimestampType,
    DEFAULT_MAX_DECOMPRESSED,
};
use std::borrow::Cow;

/// One batch of a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogBatch {
    /// The first offset.
    pub base_offset: i64,
    /// The last offset.
    pub last_offset: i64,
    /// The producer id, or -1.
    pub producer_id: i64,
    /// Written by a transactional producer.
    pub transactional: bool,
    /// For a control batch, its marker's type.
    pub control: Option<ControlType>,
    /// The batch as served.
    pub bytes: Vec<u8>,
}

/// A transaction the log shows aborted: its producer, first offset and
/// the offset of its abort marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbortedTxn {
    /// The producer id.
    pub producer_id: i64,
    /// The transaction's first offset.
    pub first_offset: i64,
    /// The abort marker's offset.
    pub last_offset: i64,
}

/// Why a batch was not appended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppendError {
    /// No such topic or partition.
    #[error("no partition {partition} of topic {topic:?}")]
    UnknownPartition {
        /// The topic.
        topic: String,
        /// The partition.
        partition: i32,
    },
    /// The batch starts before the log's end.
    #[error("base offset {base_offset} is below the log end offset {log_end_offset}")]
    BehindLogEnd {
        /// The batch's base offset.
        base_offset: i64,
        /// Where the log ends.
        log_end_offset: i64,
    },
    /// The batch holds no record, or a LastOffsetDelta below its records.
    #[error("{0}")]
    Invalid(String),
}

/// A record to append with [`crate::cluster::Cluster::append_records`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SimpleRecord {
    /// The key, `None` for null.
    pub key: Option<Vec<u8>>,
    /// The value, `None` for null (a tombstone).
    pub value: Option<Vec<u8>>,
    /// The record's timestamp (ms since the epoch).
    pub timestamp_ms: i64,
}

/// The batches of one partition, in offset order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PartitionLog {
    /// The first offset still in the log (retention or deletion moved it).
    pub log_start_offset: i64,
    batches: Vec<LogBatch>,
}

impl PartitionLog {
    /// An empty log starting at `log_start_offset`.
    pub fn starting_at(log_start_offset: i64) -> Self {
        PartitionLog {
            log_start_offset,
            batches: Vec::new(),
        }
    }

    /// The batches.
    pub fn batches(&self) -> &[LogBatch] {
        &self.batches
    }

    /// The offset after the last batch (the log start when empty).
    pub fn end_offset(&self) -> i64 {
        self.batches
            .last()
            .map_or(self.log_start_offset, |b| b.last_offset.saturating_add(1))
    }

    /// Appends an encoded batch at `batch.base_offset` (at or after the
    /// log's end: a gap reads like a compacted stretch). Returns the
    /// batch's first and last offsets.
    pub fn append(&mut self, batch: &RecordBatch<'_>) -> Result<(i64, i64), AppendError> {
        let end = self.end_offset();
        if batch.base_offset < end {
            return Err(AppendError::BehindLogEnd {
                base_offset: batch.base_offset,
                log_end_offset: end,
            });
        }
        if batch.records.is_empty() {
            return Err(AppendError::Invalid(
                "a batch holds at least one record".into(),
            ));
        }
        let max_delta = batch
            .records
            .iter()
            .map(|r| r.offset_delta)
            .max()
            .unwrap_or(0);
        if batch.last_offset_delta < max_delta {
            return Err(AppendError::Invalid(format!(
                "LastOffsetDelta {} is below a record's offset delta {max_delta}",
                batch.last_offset_delta
            )));
        }
        let bytes = batch
            .encode()
            .map_err(|e| AppendError::Invalid(e.to_string()))?;
        let view = Batches::new(&bytes)
            .next()
            .and_then(Result::ok)
            .ok_or_else(|| AppendError::Invalid("the batch does not read back".into()))?;
        let control = view
            .control(DEFAULT_MAX_DECOMPRESSED)
            .map_err(|e| AppendError::Invalid(e.to_string()))?
            .map(|c| c.control_type);
        let h = *view.header();
        self.batches.push(LogBatch {
            base_offset: h.base_offset,
            last_offset: h.last_offset(),
            producer_id: h.producer_id,
            transactional: h.is_transactional(),
            control,
            bytes,
        });
        Ok((h.base_offset, h.last_offset()))
    }

    /// The transactions the log shows aborted, in marker order.
    pub fn aborted_transactions(&self) -> Vec<AbortedTxn> {
        let mut open: std::collections::HashMap<i64, i64> = Default::default();
        let mut out = Vec::new();
        for b in &self.batches {
            if !b.transactional {
                continue;
            }
            match b.control {
                None => {
                    open.entry(b.producer_id).or_insert(b.base_offset);
                }
                Some(t) => {
                    let first = open.remove(&b.producer_id);
                    if let (ControlType::Abort, Some(first_offset)) = (t, first) {
                        out.push(AbortedTxn {
                            producer_id: b.producer_id,
                            first_offset,
                            last_offset: b.last_offset,
                        });
                    }
                }
            }
        }
        out
    }

    /// The first offset of the earliest transaction the log shows open
    /// (no marker yet), which bounds the last stable offset.
    pub fn first_unstable_offset(&self) -> Option<i64> {
        let mut open: std::collections::HashMap<i64, i64> = Default::default();
        for b in &self.batches {
            if !b.transactional {
                continue;
            }
            match b.control {
                None => {
                    open.entry(b.producer_id).or_insert(b.base_offset);
                }
                Some(_) => {
                    open.remove(&b.producer_id);
                }
            }
        }
        open.into_values().min()
    }

    /// What a Fetch from `offset` returns: the batch holding it and those
    /// after, below `upper` (the high watermark, or the LSO for
    /// read_committed), within `max_bytes` bytes; the last batch may be cut
    /// short there, as a broker's slice of a segment is. With `min_one`,
    /// a first batch larger than `max_bytes` comes whole (KIP-74).
    pub fn read(&self, offset: i64, upper: i64, max_bytes: usize, min_one: bool) -> Vec<u8> {
        let start = self.batches.partition_point(|b| b.last_offset < offset);
        let mut out = Vec::new();
        for (i, b) in self.batches.iter().enumerate().skip(start) {
            if b.last_offset >= upper {
                break;
            }
            let room = max_bytes.saturating_sub(out.len());
            if b.bytes.len() <= room {
                out.extend_from_slice(&b.bytes);
            } else if i == start && min_one {
                out.extend_from_slice(&b.bytes);
                break;
            } else {
                out.extend_from_slice(b.bytes.get(..room).unwrap_or_default());
                break;
            }
        }
        out
    }
}

/// One uncompressed batch of `records`, no producer, at `base_offset`,
/// stamped with the leader's epoch as a leader stamps what it appends.
pub fn simple_batch(
    base_offset: i64,
    partition_leader_epoch: i32,
    records: &[SimpleRecord],
) -> RecordBatch<'_> {
    let base_timestamp = records.first().map_or(-1, |r| r.timestamp_ms);
    let max_timestamp = records.iter().map(|r| r.timestamp_ms).max().unwrap_or(-1);
    RecordBatch {
        base_offset,
        partition_leader_epoch,
        attributes: Attributes::new(
            Compression::None,
            TimestampType::CreateTime,
            false,
            false,
            false,
        ),
        last_offset_delta: i32::try_from(records.len().saturating_sub(1)).unwrap_or(i32::MAX),
        base_timestamp,
        max_timestamp,
        producer_id: -1,
        producer_epoch: -1,
        base_sequence: -1,
        records: records
            .iter()
            .enumerate()
            .map(|(i, r)| Record {
                timestamp_delta: r.timestamp_ms.saturating_sub(base_timestamp),
                offset_delta: i32::try_from(i).unwrap_or(i32::MAX),
                key: r.key.as_deref().map(Cow::Borrowed),
                value: r.value.as_deref().map(Cow::Borrowed),
                ..Record::default()
            })
            .collect(),
    }
}
