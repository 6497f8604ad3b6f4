//! [`Batch`]: one v2 batch, borrowed from the records it was read from.
//! Its header is read at once; the CRC, the decompression and the records
//! are asked for, so that listing batches costs no decompression.

use std::borrow::Cow;

use super::attributes::Compression;
use super::compression::{self, DecompressError};
use super::control::ControlRecord;
use super::error::{BatchError, BatchErrorKind};
use super::header::{BatchHeader, ATTRIBUTES_OFFSET, BATCH_HEADER_SIZE, MAGIC_V2};
use super::record::{Record, MIN_RECORD_SIZE};
use crate::codec::Reader;
use crate::error::{Context as _, DecodeError, DecodeErrorKind};

/// Where RecordCount sits in a batch.
const RECORD_COUNT_OFFSET: usize = 57;

/// One whole v2 batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batch<'a> {
    position: usize,
    header: BatchHeader,
    bytes: &'a [u8],
}

impl<'a> Batch<'a> {
    /// A batch from exactly its bytes (BatchLength + 12 of them), found at
    /// byte `position` of the records it came from.
    pub fn parse(bytes: &'a [u8], position: usize) -> Result<Batch<'a>, BatchError> {
        let base_offset = bytes.first_chunk::<8>().map(|b| i64::from_be_bytes(*b));
        let error = |kind| BatchError::new(position, base_offset, kind);
        if bytes.len() < BATCH_HEADER_SIZE {
            return Err(error(BatchErrorKind::BatchTooSmall { size: bytes.len() }));
        }
        let mut r = Reader::with_base(bytes, position);
        let header = BatchHeader::read(&mut r).map_err(|e| {
            error(BatchErrorKind::Records {
                decompressed: false,
                error: e,
            })
        })?;
        if header.magic != MAGIC_V2 {
            return Err(error(BatchErrorKind::InvalidMagic {
                magic: header.magic,
            }));
        }
        Ok(Batch {
            position,
            header,
            bytes,
        })
    }

    fn error(&self, kind: BatchErrorKind) -> BatchError {
        BatchError::new(self.position, Some(self.header.base_offset), kind)
    }

    /// The header, as stored.
    pub fn header(&self) -> &BatchHeader {
        &self.header
    }

    /// The byte offset of the batch in the records it was read from.
    pub fn position(&self) -> usize {
        self.position
    }

    /// The batch's bytes, header included.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The batch's size in bytes.
    pub fn size(&self) -> usize {
        self.bytes.len()
    }

    /// The records as stored (compressed or not), after the header.
    pub fn records_section(&self) -> &'a [u8] {
        self.bytes.get(BATCH_HEADER_SIZE..).unwrap_or_default()
    }

    /// The CRC-32C of Attributes to the end, to compare with the stored one.
    pub fn computed_crc(&self) -> u32 {
        crc32c::crc32c(self.bytes.get(ATTRIBUTES_OFFSET..).unwrap_or_default())
    }

    /// Whether the stored CRC matches the bytes.
    pub fn crc_valid(&self) -> bool {
        self.computed_crc() == self.header.crc
    }

    /// Fails, naming the batch's byte offset, when the CRC does not match.
    pub fn verify_crc(&self) -> Result<(), BatchError> {
        let computed = self.computed_crc();
        if computed == self.header.crc {
            Ok(())
        } else {
            Err(self.error(BatchErrorKind::CrcMismatch {
                stored: self.header.crc,
                computed,
            }))
        }
    }

    /// The codec, or an error for an id Kafka does not define.
    pub fn compression(&self) -> Result<Compression, BatchError> {
        self.header.compression().ok_or_else(|| {
            self.error(BatchErrorKind::UnknownCompression {
                id: self.header.attributes.compression_id(),
            })
        })
    }

    /// The records' bytes, decompressed into at most `limit` bytes (see
    /// [`compression`](mod@super::compression) for the memory bound), ready to
    /// be read with [`RecordsData::iter`]. Does not check the CRC.
    pub fn records_data(&self, limit: usize) -> Result<RecordsData<'a>, BatchError> {
        let codec = self.compression()?;
        if self.header.record_count < 0 {
            return Err(self.error(BatchErrorKind::NegativeRecordCount {
                count: self.header.record_count,
            }));
        }
        let section = self.records_section();
        // Kafka decompresses nothing for a count of 0 (a stored section is
        // still read, so bytes after no records are an error).
        let data = if self.header.record_count == 0 && codec != Compression::None {
            Cow::Borrowed(&[][..])
        } else {
            compression::decompress(codec, section, limit).map_err(|e| {
                self.error(match e {
                    DecompressError::TooLarge { limit } => {
                        BatchErrorKind::DecompressedTooLarge { codec, limit }
                    }
                    DecompressError::Invalid(reason) => {
                        BatchErrorKind::Decompression { codec, reason }
                    }
                })
            })?
        };
        Ok(RecordsData {
            data,
            decompressed: codec != Compression::None,
            base: if codec == Compression::None {
                self.position + BATCH_HEADER_SIZE
            } else {
                0
            },
            count: self.header.record_count as usize,
            position: self.position,
            base_offset: self.header.base_offset,
        })
    }

    /// Every record, owned, after checking the CRC as Kafka's consumer does
    /// (`check.crcs`), decompressing into at most `limit` bytes.
    pub fn records(&self, limit: usize) -> Result<Vec<Record<'static>>, BatchError> {
        self.verify_crc()?;
        let data = self.records_data(limit)?;
        data.check_count()?;
        let mut out = Vec::with_capacity(data.count);
        for record in data.iter() {
            out.push(record?.into_owned());
        }
        Ok(out)
    }

    /// The control record of a control batch (`None` for a data batch):
    /// the first record, parsed, with the CRC checked first.
    pub fn control(&self, limit: usize) -> Result<Option<ControlRecord>, BatchError> {
        if !self.header.is_control() {
            return Ok(None);
        }
        self.verify_crc()?;
        let data = self.records_data(limit)?;
        let Some(first) = data.iter().next() else {
            return Err(self.error(BatchErrorKind::InvalidControlRecord {
                reason: "the control batch holds no record",
            }));
        };
        let record = first?;
        ControlRecord::parse(&record)
            .map(Some)
            .map_err(|reason| self.error(BatchErrorKind::InvalidControlRecord { reason }))
    }
}

/// A batch's records, decompressed (or borrowed when stored uncompressed).
#[derive(Debug, Clone)]
pub struct RecordsData<'a> {
    data: Cow<'a, [u8]>,
    decompressed: bool,
    base: usize,
    count: usize,
    position: usize,
    base_offset: i64,
}

impl<'a> RecordsData<'a> {
    /// The bytes the records are read from.
    pub fn bytes(&self) -> &[u8] {
        &self.data
    }

    /// Whether the bytes were decompressed.
    pub fn is_decompressed(&self) -> bool {
        self.decompressed
    }

    /// The record count of the header.
    pub fn count(&self) -> usize {
        self.count
    }

    fn error(&self, error: DecodeError) -> BatchError {
        BatchError::new(
            self.position,
            Some(self.base_offset),
            BatchErrorKind::Records {
                decompressed: self.decompressed,
                error,
            },
        )
    }

    /// Fails when the header's RecordCount cannot fit the bytes (each
    /// record takes at least 7), before anything is allocated for it.
    pub fn check_count(&self) -> Result<(), BatchError> {
        let needed = (self.count as u64).saturating_mul(MIN_RECORD_SIZE as u64);
        if needed > self.data.len() as u64 {
            return Err(self.error(
                DecodeError::new(
                    self.position + RECORD_COUNT_OFFSET,
                    DecodeErrorKind::CountExceedsInput {
                        what: "records",
                        count: self.count as u64,
                        needed,
                        left: self.data.len(),
                    },
                )
                .in_field("RecordCount"),
            ));
        }
        Ok(())
    }

    /// The records, one at a time: RecordCount of them, then an error if
    /// bytes are left over (Kafka: "records still remaining").
    pub fn iter(&self) -> RecordIter<'_> {
        RecordIter {
            reader: Reader::with_base(&self.data, self.base),
            data: self,
            index: 0,
            done: false,
        }
    }
}

/// Reads the records of a [`RecordsData`].
#[derive(Debug)]
pub struct RecordIter<'b> {
    reader: Reader<'b>,
    data: &'b RecordsData<'b>,
    index: usize,
    done: bool,
}

impl<'b> Iterator for RecordIter<'b> {
    type Item = Result<Record<'b>, BatchError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.index == self.data.count {
            self.done = true;
            return match self.reader.finish() {
                Ok(()) => None,
                Err(e) => Some(Err(self.data.error(e.in_field("Records")))),
            };
        }
        let index = self.index;
        self.index += 1;
        let result = Record::read(&mut self.reader)
            .map_err(|e| e.at_index(index))
            .field("Records")
            .map_err(|e| self.data.error(e));
        if result.is_err() {
            self.done = true;
        }
        Some(result)
    }
}
