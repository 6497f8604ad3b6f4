//! [`CoordinatorRecord`]: a key or a value of an internal topic, and its
//! encoding after its int16 version.

use crate::codec::Reader;
use crate::error::{Context, DecodeError, DecodeErrorKind};
use crate::testgen::Random;
use crate::wire::{Version, Wire};

/// A versioned coordinator record (a key or a value of an internal topic).
pub trait CoordinatorRecord: Wire + Random {
    /// The schema name, e.g. `TransactionLogValue`.
    const NAME: &'static str;
    /// The lowest version the schema defines.
    const LOWEST_VERSION: i16;
    /// The highest version this crate knows.
    const HIGHEST_VERSION: i16;
    /// Whether `version` is flexible (compact encodings, tagged fields).
    fn is_flexible(version: i16) -> bool;

    /// The wire version of `version`.
    fn wire_version(version: i16) -> Version {
        Version {
            version,
            flexible: Self::is_flexible(version),
        }
    }
}

/// A record and the version it was written in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned<R> {
    /// The int16 version the record starts with.
    pub version: i16,
    /// The record.
    pub record: R,
}

/// Decodes a whole key or value: its int16 version, then the record in
/// that version. A version outside the schema's range, trailing bytes and
/// every malformed field are errors naming the byte offset and field.
pub fn decode_record<R: CoordinatorRecord>(bytes: &[u8]) -> Result<Versioned<R>, DecodeError> {
    let mut r = Reader::new(bytes);
    let version = r.i16().field("Version")?;
    if !(R::LOWEST_VERSION..=R::HIGHEST_VERSION).contains(&version) {
        return Err(DecodeError::new(
            0,
            DecodeErrorKind::UnsupportedVersion {
                api: R::NAME,
                version,
                min: R::LOWEST_VERSION,
                max: R::HIGHEST_VERSION,
            },
        )
        .in_field("Version"));
    }
    let record = R::read(&mut r, R::wire_version(version))?;
    r.finish()?;
    Ok(Versioned { version, record })
}

/// The exact size [`encode_record`] writes.
pub fn record_len<R: CoordinatorRecord>(record: &R, version: i16) -> usize {
    2 + record.wire_len(R::wire_version(version))
}

/// Encodes `record` in `version` (which the caller chose within the
/// schema's range), version prefix first, as Kafka's
/// `MessageUtil.toVersionPrefixedBytes` does.
pub fn encode_record<R: CoordinatorRecord>(record: &R, version: i16) -> Vec<u8> {
    use bytes::BufMut;
    let mut out = Vec::with_capacity(record_len(record, version));
    out.put_i16(version);
    record.put(&mut out, R::wire_version(version));
    debug_assert_eq!(out.len(), record_len(record, version), "{}", R::NAME);
    out
}
