//! Record batches v2 (magic 2), the format of every record Kafka 0.11+
//! stores and serves: what a Fetch response's RecordSet holds.
//!
//! - [`header`]: the 61-byte batch header ([`BatchHeader`]) and the
//!   sequence arithmetic of Kafka's `DefaultRecordBatch`;
//! - [`attributes`]: compression, timestamp type, transactional, control
//!   and delete-horizon bits;
//! - [`batches`]: [`Batches`], the batches of a blob, framed as Kafka's
//!   consumer frames them (a partial last batch ends the blob quietly);
//! - [`batch`]: [`Batch`], one batch borrowed from the blob, its CRC-32C,
//!   and its records decompressed and read on demand;
//! - [`record`]: [`Record`] and [`RecordHeader`], varint fields;
//! - [`control`]: [`ControlRecord`], commit and abort markers with their
//!   coordinator epoch;
//! - [`compression`]: gzip, snappy (xerial framing), lz4, zstd, bounded;
//! - [`owned`]: [`RecordBatch`], a batch as values, and its encoder;
//! - [`error`]: [`BatchError`], naming the batch's byte offset.
//!
//! # Read the batches of a Fetch response's records
//!
//! ```
//! use kdp_wire::records::{Attributes, Batches, Compression, Record, RecordBatch, TimestampType};
//! use kdp_wire::records::compression::DEFAULT_MAX_DECOMPRESSED;
//! use std::borrow::Cow;
//!
//! // Two batches of an idempotent producer, the second zstd-compressed.
//! let batch = |base_offset, base_sequence, compression| RecordBatch {
//!     base_offset,
//!     attributes: Attributes::new(compression, TimestampType::CreateTime, false, false, false),
//!     last_offset_delta: 1,
//!     base_timestamp: 1_764_400_000_000,
//!     max_timestamp: 1_764_400_000_005,
//!     producer_id: 4000,
//!     producer_epoch: 0,
//!     base_sequence,
//!     records: (0..2)
//!         .map(|i| Record {
//!             offset_delta: i,
//!             value: Some(Cow::Borrowed(b"hello")),
//!             ..Record::default()
//!         })
//!         .collect(),
//!     ..RecordBatch::default()
//! };
//! let mut blob = batch(0, 0, Compression::None).encode()?;
//! blob.extend(batch(2, 2, Compression::Zstd).encode()?);
//! // A fetch may end inside a batch: not an error.
//! let third = batch(4, 4, Compression::Gzip).encode()?;
//! blob.extend_from_slice(&third[..20]);
//!
//! let mut batches = Batches::new(&blob);
//! let mut sequences = Vec::new();
//! for batch in &mut batches {
//!     let batch = batch?;
//!     let h = batch.header();
//!     assert!(batch.crc_valid());
//!     sequences.push((h.base_offset, h.last_offset(), h.base_sequence, h.last_sequence()));
//!     let records = batch.records(DEFAULT_MAX_DECOMPRESSED)?;
//!     assert_eq!(records[1].value.as_deref(), Some(&b"hello"[..]));
//! }
//! assert_eq!(sequences, [(0, 1, 0, 1), (2, 3, 2, 3)]);
//! assert_eq!(batches.partial().map(|p| p.available), Some(20));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod attributes;
pub mod batch;
pub mod batches;
pub mod compression;
pub mod control;
pub mod error;
pub mod header;
pub mod owned;
pub mod record;

pub use attributes::{Attributes, Compression, TimestampType};
pub use batch::{Batch, RecordIter, RecordsData};
pub use batches::{Batches, PartialBatch};
pub use compression::{DecompressError, DEFAULT_MAX_DECOMPRESSED};
pub use control::{ControlRecord, ControlType, EndTxnMarker};
pub use error::{BatchError, BatchErrorKind};
pub use header::{BatchHeader, BATCH_HEADER_SIZE};
pub use owned::RecordBatch;
pub use record::{Record, RecordHeader};
