//! What can be wrong with a batch, and where: every error names the byte
//! offset of the batch in the records it was read from, and its base
//! offset when the batch got that far.

use std::fmt;

use super::attributes::Compression;
use crate::error::DecodeError;

/// A batch that cannot be read, or whose records cannot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchError {
    /// The byte offset of the batch's first byte in the records blob.
    pub position: usize,
    /// The batch's BaseOffset, when its first 8 bytes were there.
    pub base_offset: Option<i64>,
    /// What is wrong.
    pub kind: BatchErrorKind,
}

/// Why a batch or its records cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BatchErrorKind {
    /// BatchLength below the smallest entry of any format (14 bytes, a
    /// magic v0 message); nothing after it can be framed. Kafka's
    /// consumer raises CorruptRecordException here.
    #[error("batch length {length} is below the 14-byte minimum of any record format")]
    LengthTooSmall {
        /// BatchLength as stored.
        length: i32,
    },
    /// A magic outside 0-2; nothing after it can be trusted.
    #[error("magic {magic} is not a record format Kafka defines (0, 1 or 2)")]
    InvalidMagic {
        /// The magic byte.
        magic: i8,
    },
    /// A message set of the legacy formats (magic 0 or 1, before Kafka
    /// 0.11), which Kafka 4 no longer reads or writes (KIP-724). Its
    /// framing is the same, so the batches after it are still read.
    #[error("magic {magic}: a legacy message set (format v{magic}, before Kafka 0.11), which kdp does not decode")]
    LegacyMagic {
        /// 0 or 1.
        magic: i8,
    },
    /// A v2 batch shorter than its own 61-byte header.
    #[error("batch of {size} bytes is shorter than the 61-byte v2 header")]
    BatchTooSmall {
        /// The batch's size (BatchLength + 12).
        size: usize,
    },
    /// The stored CRC-32C does not match the bytes.
    #[error("CRC-32C mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    CrcMismatch {
        /// The CRC in the header.
        stored: u32,
        /// The CRC of Attributes to the end of the batch.
        computed: u32,
    },
    /// Attribute bits 0-2 hold a codec id Kafka does not define (5-7).
    #[error("compression id {id} is not one Kafka defines (0-4)")]
    UnknownCompression {
        /// The id.
        id: u8,
    },
    /// RecordCount is negative.
    #[error("record count {count} is negative")]
    NegativeRecordCount {
        /// RecordCount as stored.
        count: i32,
    },
    /// The codec refused the compressed records.
    #[error("{codec} decompression failed: {reason}")]
    Decompression {
        /// The batch's codec.
        codec: Compression,
        /// What the codec said.
        reason: String,
    },
    /// The records decompress to more than the caller's limit; stopped
    /// there, before anything larger was allocated.
    #[error("{codec} records decompress to more than the {limit}-byte limit")]
    DecompressedTooLarge {
        /// The batch's codec.
        codec: Compression,
        /// The limit in bytes.
        limit: usize,
    },
    /// A record does not decode. Offsets are in the records blob for an
    /// uncompressed batch, in the decompressed records otherwise.
    #[error("{}{error}", if *decompressed { "in the decompressed records, " } else { "" })]
    Records {
        /// Whether the offsets count in the decompressed bytes.
        decompressed: bool,
        /// Where and what, with the field path (e.g. `Records[2].Value`).
        error: DecodeError,
    },
    /// A control batch whose record is not a control record.
    #[error("control record: {reason}")]
    InvalidControlRecord {
        /// What is wrong with it.
        reason: &'static str,
    },
}

impl BatchError {
    /// An error of the batch at `position`.
    pub fn new(position: usize, base_offset: Option<i64>, kind: BatchErrorKind) -> Self {
        BatchError {
            position,
            base_offset,
            kind,
        }
    }
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "batch at byte {}", self.position)?;
        if let Some(base) = self.base_offset {
            write!(f, " (base offset {base})")?;
        }
        write!(f, ": {}", self.kind)
    }
}

impl std::error::Error for BatchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            BatchErrorKind::Records { error, .. } => Some(error),
            _ => None,
        }
    }
}
