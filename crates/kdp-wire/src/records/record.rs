//! One record of a v2 batch: a length-prefixed body of varint fields.
//!
//! ```text
//! Length varint | Attributes int8 | TimestampDelta varlong | OffsetDelta varint
//! | KeyLength varint (-1 null) | Key | ValueLength varint (-1 null) | Value
//! | HeaderCount varint | [HeaderKeyLength varint | HeaderKey
//!                        | HeaderValueLength varint (-1 null) | HeaderValue]
//! ```
//!
//! Decoding is strict where Kafka's reader is (a body whose fields do not
//! fill its Length exactly, negative counts) and stricter where that keeps
//! re-encoding byte-exact (only -1 means null; varints in their shortest
//! form, as every Kafka writer puts them).

use std::borrow::Cow;

use bytes::BufMut;

use crate::codec::{varint32_len, varint64_len, PutWire, Reader};
use crate::error::{Context as _, DecodeError, DecodeErrorKind};

/// The smallest record: a one-byte Length and six one-byte fields.
pub const MIN_RECORD_SIZE: usize = 7;

/// A record header: a key (UTF-8 by convention, kept as bytes like Kafka's
/// reader does) and a nullable value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct RecordHeader<'a> {
    /// The header's key.
    pub key: Cow<'a, [u8]>,
    /// The header's value, `None` for null.
    pub value: Option<Cow<'a, [u8]>>,
}

/// One record, borrowing its key, value and headers from the records it
/// was read from (or owning them: `Record<'static>`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Record<'a> {
    /// Unused by Kafka; kept as stored.
    pub attributes: i8,
    /// The record's timestamp less the batch's BaseTimestamp.
    pub timestamp_delta: i64,
    /// The record's offset less the batch's BaseOffset.
    pub offset_delta: i32,
    /// The key, `None` for null.
    pub key: Option<Cow<'a, [u8]>>,
    /// The value, `None` for null (a tombstone).
    pub value: Option<Cow<'a, [u8]>>,
    /// The headers, in order.
    pub headers: Vec<RecordHeader<'a>>,
}

fn nullable_len(b: Option<&[u8]>) -> usize {
    match b {
        None => varint32_len(-1),
        Some(b) => varint32_len(wire_len_of(b)) + b.len(),
    }
}

/// A slice's length as the varint carries it (lengths past `i32::MAX`
/// cannot be encoded; such records cannot be built from Kafka data).
fn wire_len_of(b: &[u8]) -> i32 {
    i32::try_from(b.len()).unwrap_or(i32::MAX)
}

fn put_nullable<B: BufMut>(buf: &mut B, b: Option<&[u8]>) {
    match b {
        None => buf.put_varint32(-1),
        Some(b) => {
            buf.put_varint32(wire_len_of(b));
            buf.put_slice(b);
        }
    }
}

/// A varint length: -1 is null, other negatives are errors, and the bytes
/// must be there.
fn read_nullable<'a>(
    r: &mut Reader<'a>,
    what: &'static str,
) -> Result<Option<&'a [u8]>, DecodeError> {
    let start = r.offset();
    let len = r.varint32()?;
    match len {
        -1 => Ok(None),
        len if len < 0 => Err(DecodeError::new(
            start,
            DecodeErrorKind::NegativeLength {
                what,
                len: i64::from(len),
            },
        )),
        len => {
            let len = len as usize;
            if len > r.remaining() {
                return Err(DecodeError::new(
                    start,
                    DecodeErrorKind::LengthExceedsInput {
                        what,
                        len: len as u64,
                        left: r.remaining(),
                    },
                ));
            }
            r.take(len, what).map(Some)
        }
    }
}

impl<'a> RecordHeader<'a> {
    fn body_len(&self) -> usize {
        varint32_len(wire_len_of(&self.key)) + self.key.len() + nullable_len(self.value.as_deref())
    }

    fn read(r: &mut Reader<'a>) -> Result<RecordHeader<'a>, DecodeError> {
        let key = read_nullable(r, "header key").field("HeaderKey")?;
        let Some(key) = key else {
            // Kafka refuses a negative header key length, -1 included.
            return Err(DecodeError::new(
                r.offset(),
                DecodeErrorKind::UnexpectedNull { what: "header key" },
            )
            .in_field("HeaderKey"));
        };
        let value = read_nullable(r, "header value").field("HeaderValue")?;
        Ok(RecordHeader {
            key: Cow::Borrowed(key),
            value: value.map(Cow::Borrowed),
        })
    }

    /// The key as text, when it is UTF-8.
    pub fn key_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.key).ok()
    }

    /// The same header owning its bytes.
    pub fn into_owned(self) -> RecordHeader<'static> {
        RecordHeader {
            key: Cow::Owned(self.key.into_owned()),
            value: self.value.map(|v| Cow::Owned(v.into_owned())),
        }
    }
}

impl<'a> Record<'a> {
    /// The body's size (what Length says).
    pub fn body_len(&self) -> usize {
        1 + varint64_len(self.timestamp_delta)
            + varint32_len(self.offset_delta)
            + nullable_len(self.key.as_deref())
            + nullable_len(self.value.as_deref())
            + varint32_len(i32::try_from(self.headers.len()).unwrap_or(i32::MAX))
            + self
                .headers
                .iter()
                .map(RecordHeader::body_len)
                .sum::<usize>()
    }

    /// The exact size `put` writes: Length and the body.
    pub fn wire_len(&self) -> usize {
        let body = self.body_len();
        varint32_len(i32::try_from(body).unwrap_or(i32::MAX)) + body
    }

    /// Writes the record; infallible, exactly [`Record::wire_len`] bytes.
    pub fn put<B: BufMut>(&self, buf: &mut B) {
        buf.put_varint32(i32::try_from(self.body_len()).unwrap_or(i32::MAX));
        buf.put_i8(self.attributes);
        buf.put_varint64(self.timestamp_delta);
        buf.put_varint32(self.offset_delta);
        put_nullable(buf, self.key.as_deref());
        put_nullable(buf, self.value.as_deref());
        buf.put_varint32(i32::try_from(self.headers.len()).unwrap_or(i32::MAX));
        for h in &self.headers {
            buf.put_varint32(wire_len_of(&h.key));
            buf.put_slice(&h.key);
            put_nullable(buf, h.value.as_deref());
        }
    }

    /// Reads one record; errors name the field and the byte.
    pub fn read(r: &mut Reader<'a>) -> Result<Record<'a>, DecodeError> {
        let start = r.offset();
        let len = r.varint32().field("Length")?;
        if len < 0 {
            return Err(DecodeError::new(
                start,
                DecodeErrorKind::NegativeLength {
                    what: "record",
                    len: i64::from(len),
                },
            )
            .in_field("Length"));
        }
        let mut body = r.sub_reader(len as usize, "record").field("Length")?;
        let attributes = body.i8().field("Attributes")?;
        let timestamp_delta = body.varint64().field("TimestampDelta")?;
        let offset_delta = body.varint32().field("OffsetDelta")?;
        let key = read_nullable(&mut body, "key").field("Key")?;
        let value = read_nullable(&mut body, "value").field("Value")?;
        let count_at = body.offset();
        let count = body.varint32().field("Headers")?;
        // A header takes at least two bytes: its two lengths.
        if count < 0 || (count as u64).saturating_mul(2) > body.remaining() as u64 {
            let kind = if count < 0 {
                DecodeErrorKind::NegativeLength {
                    what: "headers",
                    len: i64::from(count),
                }
            } else {
                DecodeErrorKind::CountExceedsInput {
                    what: "headers",
                    count: count as u64,
                    needed: (count as u64).saturating_mul(2),
                    left: body.remaining(),
                }
            };
            return Err(DecodeError::new(count_at, kind).in_field("Headers"));
        }
        let headers = body
            .elements(count as usize, RecordHeader::read)
            .field("Headers")?;
        // Kafka: "expected to read Length bytes in record payload".
        body.finish()?;
        Ok(Record {
            attributes,
            timestamp_delta,
            offset_delta,
            key: key.map(Cow::Borrowed),
            value: value.map(Cow::Borrowed),
            headers,
        })
    }

    /// The same record owning its bytes.
    pub fn into_owned(self) -> Record<'static> {
        Record {
            attributes: self.attributes,
            timestamp_delta: self.timestamp_delta,
            offset_delta: self.offset_delta,
            key: self.key.map(|k| Cow::Owned(k.into_owned())),
            value: self.value.map(|v| Cow::Owned(v.into_owned())),
            headers: self
                .headers
                .into_iter()
                .map(RecordHeader::into_owned)
                .collect(),
        }
    }
}
