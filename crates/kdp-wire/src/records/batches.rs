//! [`Batches`]: the batches of a records blob (a Fetch response's
//! RecordSet, a log segment), framed the way Kafka's consumer frames them.
//!
//! A broker answers a Fetch with whole batches up to its byte limits and
//! may cut the last one short; Kafka's consumer stops at such a tail
//! without an error, and so does this iterator, which then tells how many
//! bytes were left ([`Batches::partial`]).

use super::batch::Batch;
use super::error::{BatchError, BatchErrorKind};
use super::header::{HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, MAGIC_OFFSET, MAGIC_V2};

/// The smallest BatchLength of any format: a magic v0 message
/// (`LegacyRecord.RECORD_OVERHEAD_V0`).
const MIN_LENGTH: i32 = 14;

/// The unread tail of a blob that ends inside a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartialBatch {
    /// The byte offset where the partial batch starts.
    pub position: usize,
    /// How many of its bytes were there.
    pub available: usize,
    /// Its whole size, when its length field was there.
    pub size: Option<usize>,
    /// Its BaseOffset, when its first 8 bytes were there.
    pub base_offset: Option<i64>,
}

/// The batches of a records blob, in order. Yields an error for a batch it
/// cannot read: after a legacy (magic 0 or 1) or too-short batch, whose
/// framing still holds, it goes on with the next; after a length or magic
/// that breaks the framing it stops.
#[derive(Debug, Clone)]
pub struct Batches<'a> {
    buf: &'a [u8],
    pos: usize,
    partial: Option<PartialBatch>,
    stopped: bool,
}

impl<'a> Batches<'a> {
    /// The batches of `records`.
    pub fn new(records: &'a [u8]) -> Self {
        Batches {
            buf: records,
            pos: 0,
            partial: None,
            stopped: false,
        }
    }

    /// The partial batch the blob ended with, once the iterator has
    /// reached it; `None` when the blob ended on a batch boundary.
    pub fn partial(&self) -> Option<PartialBatch> {
        self.partial
    }

    /// The byte offset of the next batch.
    pub fn position(&self) -> usize {
        self.pos
    }

    fn be<const N: usize>(&self, at: usize) -> Option<[u8; N]> {
        self.buf.get(self.pos + at..)?.first_chunk::<N>().copied()
    }

    fn stop_partial(&mut self, size: Option<usize>) -> Option<Result<Batch<'a>, BatchError>> {
        let available = self.buf.len() - self.pos;
        self.partial = Some(PartialBatch {
            position: self.pos,
            available,
            size,
            base_offset: self.be::<8>(0).map(i64::from_be_bytes),
        });
        self.stopped = true;
        None
    }
}

impl<'a> Iterator for Batches<'a> {
    type Item = Result<Batch<'a>, BatchError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.stopped {
            return None;
        }
        let position = self.pos;
        let remaining = self.buf.len().saturating_sub(position);
        if remaining == 0 {
            self.stopped = true;
            return None;
        }
        let (Some(offset), Some(length)) = (self.be::<8>(0), self.be::<4>(8)) else {
            return self.stop_partial(None);
        };
        let base_offset = Some(i64::from_be_bytes(offset));
        let length = i32::from_be_bytes(length);
        let error = |kind| Some(Err(BatchError::new(position, base_offset, kind)));
        if length < MIN_LENGTH {
            self.stopped = true;
            return error(BatchErrorKind::LengthTooSmall { length });
        }
        let size = length as usize + LOG_OVERHEAD;
        if remaining < HEADER_SIZE_UP_TO_MAGIC {
            return self.stop_partial(Some(size));
        }
        let magic = self.be::<1>(MAGIC_OFFSET).map_or(0, i8::from_be_bytes);
        if !(0..=MAGIC_V2).contains(&magic) {
            self.stopped = true;
            return error(BatchErrorKind::InvalidMagic { magic });
        }
        let Some(bytes) = self.buf.get(position..position + size) else {
            return self.stop_partial(Some(size));
        };
        self.pos += size;
        if magic < MAGIC_V2 {
            return error(BatchErrorKind::LegacyMagic { magic });
        }
        Some(Batch::parse(bytes, position))
    }
}
