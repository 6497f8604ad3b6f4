//! The 61 bytes that open every v2 batch, read and written in one place.
//!
//! ```text
//! BaseOffset int64 | BatchLength int32 | PartitionLeaderEpoch int32 | Magic int8
//! | CRC uint32 | Attributes int16 | LastOffsetDelta int32 | BaseTimestamp int64
//! | MaxTimestamp int64 | ProducerId int64 | ProducerEpoch int16
//! | BaseSequence int32 | RecordCount int32 | records...
//! ```
//!
//! BatchLength counts the bytes after it; the CRC-32C covers everything
//! from Attributes to the batch's end.

use bytes::BufMut;

use super::attributes::{Attributes, Compression, TimestampType};
use crate::codec::Reader;
use crate::error::{Context as _, DecodeError};

/// BaseOffset and BatchLength: the framing every batch (and every legacy
/// message set entry) starts with.
pub const LOG_OVERHEAD: usize = 12;
/// Bytes up to and including Magic, which tells the format.
pub const HEADER_SIZE_UP_TO_MAGIC: usize = 17;
/// The whole v2 header: the size of a batch without records.
pub const BATCH_HEADER_SIZE: usize = 61;
/// Where Magic sits in a batch.
pub const MAGIC_OFFSET: usize = 16;
/// Where the CRC sits in a batch.
pub const CRC_OFFSET: usize = 17;
/// Where the CRC-covered bytes start (Attributes).
pub const ATTRIBUTES_OFFSET: usize = 21;
/// The magic of record batches v2, the only format Kafka 4 reads.
pub const MAGIC_V2: i8 = 2;
/// The base sequence, producer id and epoch of a batch without an
/// idempotent producer.
pub const NO_SEQUENCE: i32 = -1;
/// See [`NO_SEQUENCE`].
pub const NO_PRODUCER_ID: i64 = -1;
/// See [`NO_SEQUENCE`].
pub const NO_PRODUCER_EPOCH: i16 = -1;
/// A timestamp that was not set.
pub const NO_TIMESTAMP: i64 = -1;

/// The header of a v2 batch, field by field as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchHeader {
    /// The offset of the first record.
    pub base_offset: i64,
    /// The bytes after this field (the batch's size less 12).
    pub batch_length: i32,
    /// The leader epoch of the leader that appended the batch.
    pub partition_leader_epoch: i32,
    /// The format: 2.
    pub magic: i8,
    /// The stored CRC-32C of Attributes to the end.
    pub crc: u32,
    /// Compression, timestamp type and flags.
    pub attributes: Attributes,
    /// The last record's offset less BaseOffset.
    pub last_offset_delta: i32,
    /// The first record's timestamp (or the delete horizon, see
    /// [`Attributes::has_delete_horizon`]).
    pub base_timestamp: i64,
    /// The largest record timestamp (the append time under LogAppendTime).
    pub max_timestamp: i64,
    /// The producer id, or -1.
    pub producer_id: i64,
    /// The producer epoch, or -1.
    pub producer_epoch: i16,
    /// The first record's sequence, or -1.
    pub base_sequence: i32,
    /// How many records follow (after decompression).
    pub record_count: i32,
}

impl BatchHeader {
    /// Reads the 61 header bytes, each error naming its field.
    pub fn read(r: &mut Reader<'_>) -> Result<BatchHeader, DecodeError> {
        Ok(BatchHeader {
            base_offset: r.i64().field("BaseOffset")?,
            batch_length: r.i32().field("BatchLength")?,
            partition_leader_epoch: r.i32().field("PartitionLeaderEpoch")?,
            magic: r.i8().field("Magic")?,
            crc: r.u32().field("CRC")?,
            attributes: Attributes(r.i16().field("Attributes")?),
            last_offset_delta: r.i32().field("LastOffsetDelta")?,
            base_timestamp: r.i64().field("BaseTimestamp")?,
            max_timestamp: r.i64().field("MaxTimestamp")?,
            producer_id: r.i64().field("ProducerId")?,
            producer_epoch: r.i16().field("ProducerEpoch")?,
            base_sequence: r.i32().field("BaseSequence")?,
            record_count: r.i32().field("RecordCount")?,
        })
    }

    /// Writes the 61 header bytes as they are (the CRC included).
    pub fn put<B: BufMut>(&self, buf: &mut B) {
        buf.put_i64(self.base_offset);
        buf.put_i32(self.batch_length);
        buf.put_i32(self.partition_leader_epoch);
        buf.put_i8(self.magic);
        buf.put_u32(self.crc);
        buf.put_i16(self.attributes.0);
        buf.put_i32(self.last_offset_delta);
        buf.put_i64(self.base_timestamp);
        buf.put_i64(self.max_timestamp);
        buf.put_i64(self.producer_id);
        buf.put_i16(self.producer_epoch);
        buf.put_i32(self.base_sequence);
        buf.put_i32(self.record_count);
    }

    /// The batch's whole size in bytes (BatchLength + 12), as declared.
    pub fn size_in_bytes(&self) -> i64 {
        i64::from(self.batch_length) + LOG_OVERHEAD as i64
    }

    /// The last record's offset: BaseOffset + LastOffsetDelta.
    pub fn last_offset(&self) -> i64 {
        self.base_offset
            .saturating_add(i64::from(self.last_offset_delta))
    }

    /// The offset after the batch.
    pub fn next_offset(&self) -> i64 {
        self.last_offset().saturating_add(1)
    }

    /// The last record's sequence, wrapping past `i32::MAX` to 0 as Kafka's
    /// `DefaultRecordBatch.incrementSequence` does; -1 without a sequence.
    pub fn last_sequence(&self) -> i32 {
        if self.base_sequence == NO_SEQUENCE {
            return NO_SEQUENCE;
        }
        increment_sequence(self.base_sequence, self.last_offset_delta)
    }

    /// The codec, or `None` for an id Kafka does not define.
    pub fn compression(&self) -> Option<Compression> {
        self.attributes.compression()
    }

    /// See [`Attributes::timestamp_type`].
    pub fn timestamp_type(&self) -> TimestampType {
        self.attributes.timestamp_type()
    }

    /// See [`Attributes::is_transactional`].
    pub fn is_transactional(&self) -> bool {
        self.attributes.is_transactional()
    }

    /// See [`Attributes::is_control`].
    pub fn is_control(&self) -> bool {
        self.attributes.is_control()
    }

    /// The delete horizon (ms since the epoch) when the cleaner set one.
    pub fn delete_horizon_ms(&self) -> Option<i64> {
        self.attributes
            .has_delete_horizon()
            .then_some(self.base_timestamp)
    }

    /// Whether an idempotent or transactional producer wrote the batch.
    pub fn has_producer_id(&self) -> bool {
        self.producer_id != NO_PRODUCER_ID
    }
}

/// `sequence + increment`, wrapping past `i32::MAX` to 0 (Kafka's
/// `DefaultRecordBatch.incrementSequence`).
/// Java's int arithmetic wraps, and so does this, so that hostile values
/// give Java's answer rather than a panic.
pub fn increment_sequence(sequence: i32, increment: i32) -> i32 {
    if sequence > i32::MAX.wrapping_sub(increment) {
        increment
            .wrapping_sub(i32::MAX.wrapping_sub(sequence))
            .wrapping_sub(1)
    } else {
        sequence.wrapping_add(increment)
    }
}

/// `sequence - decrement`, wrapping below 0 to `i32::MAX` (Kafka's
/// `DefaultRecordBatch.decrementSequence`).
pub fn decrement_sequence(sequence: i32, decrement: i32) -> i32 {
    if sequence < decrement {
        i32::MAX
            .wrapping_sub(decrement.wrapping_sub(sequence))
            .wrapping_add(1)
    } else {
        sequence.wrapping_sub(decrement)
    }
}
