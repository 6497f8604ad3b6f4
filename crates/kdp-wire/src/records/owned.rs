//! [`RecordBatch`]: a whole batch as values, to build batches (the mock
//! serves them, tests round-trip them) and to hold a decoded one. The
//! encoder computes BatchLength, RecordCount and the CRC; it allocates
//! exactly what it writes.

use bytes::BufMut;

use super::attributes::{Attributes, Compression};
use super::batch::Batch;
use super::compression::{self, CompressError};
use super::error::BatchError;
use super::header::{
    BatchHeader, ATTRIBUTES_OFFSET, BATCH_HEADER_SIZE, CRC_OFFSET, LOG_OVERHEAD, MAGIC_V2,
};
use super::record::Record;

/// A v2 batch as values. The fields the encoder computes (BatchLength,
/// Magic, CRC, RecordCount) are not here.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecordBatch<'a> {
    /// The offset of the first record.
    pub base_offset: i64,
    /// The leader epoch that appended it.
    pub partition_leader_epoch: i32,
    /// Compression (the encoder compresses with it), timestamp type, flags.
    pub attributes: Attributes,
    /// The last record's offset less BaseOffset (Kafka's writers: the last
    /// record's OffsetDelta; compaction may leave it past the last record).
    pub last_offset_delta: i32,
    /// The first record's timestamp.
    pub base_timestamp: i64,
    /// The largest timestamp.
    pub max_timestamp: i64,
    /// The producer id, or -1.
    pub producer_id: i64,
    /// The producer epoch, or -1.
    pub producer_epoch: i16,
    /// The first record's sequence, or -1.
    pub base_sequence: i32,
    /// The records.
    pub records: Vec<Record<'a>>,
}

impl RecordBatch<'_> {
    /// A decoded batch as values (its CRC checked, its records decompressed
    /// into at most `limit` bytes).
    pub fn from_batch(batch: &Batch<'_>, limit: usize) -> Result<RecordBatch<'static>, BatchError> {
        let h = batch.header();
        Ok(RecordBatch {
            base_offset: h.base_offset,
            partition_leader_epoch: h.partition_leader_epoch,
            attributes: h.attributes,
            last_offset_delta: h.last_offset_delta,
            base_timestamp: h.base_timestamp,
            max_timestamp: h.max_timestamp,
            producer_id: h.producer_id,
            producer_epoch: h.producer_epoch,
            base_sequence: h.base_sequence,
            records: batch.records(limit)?,
        })
    }

    /// The size of the records before compression.
    pub fn records_len(&self) -> usize {
        self.records.iter().map(Record::wire_len).sum()
    }

    fn header(&self, records_len: usize) -> BatchHeader {
        let size = BATCH_HEADER_SIZE + records_len;
        BatchHeader {
            base_offset: self.base_offset,
            batch_length: i32::try_from(size - LOG_OVERHEAD).unwrap_or(i32::MAX),
            partition_leader_epoch: self.partition_leader_epoch,
            magic: MAGIC_V2,
            crc: 0,
            attributes: self.attributes,
            last_offset_delta: self.last_offset_delta,
            base_timestamp: self.base_timestamp,
            max_timestamp: self.max_timestamp,
            producer_id: self.producer_id,
            producer_epoch: self.producer_epoch,
            base_sequence: self.base_sequence,
            record_count: i32::try_from(self.records.len()).unwrap_or(i32::MAX),
        }
    }

    /// The batch's bytes, compressed with the attributes' codec (an id
    /// Kafka does not define leaves the records as they are).
    pub fn encode(&self) -> Result<Vec<u8>, CompressError> {
        let mut out = Vec::new();
        self.encode_into(&mut out)?;
        Ok(out)
    }

    /// Appends the batch's bytes to `out`, reserving exactly their size.
    pub fn encode_into(&self, out: &mut Vec<u8>) -> Result<(), CompressError> {
        let records_len = self.records_len();
        let codec = self.attributes.compression().unwrap_or(Compression::None);
        let start = out.len();
        if codec == Compression::None {
            out.reserve_exact(BATCH_HEADER_SIZE + records_len);
            self.header(records_len).put(out);
            for record in &self.records {
                record.put(out);
            }
        } else {
            let mut plain = Vec::with_capacity(records_len);
            for record in &self.records {
                record.put(&mut plain);
            }
            let compressed = compression::compress(codec, &plain)?;
            out.reserve_exact(BATCH_HEADER_SIZE + compressed.len());
            self.header(compressed.len()).put(out);
            out.put_slice(&compressed);
        }
        let crc = crc32c::crc32c(out.get(start + ATTRIBUTES_OFFSET..).unwrap_or_default());
        if let Some(slot) = out.get_mut(start + CRC_OFFSET..start + ATTRIBUTES_OFFSET) {
            slot.copy_from_slice(&crc.to_be_bytes());
        }
        Ok(())
    }
}
