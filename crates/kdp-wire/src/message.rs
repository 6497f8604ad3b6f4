//! The contract every message body implements, and whole-buffer helpers.

use bytes::BufMut;

use crate::codec::Reader;
use crate::error::{DecodeError, DecodeErrorKind};

/// A Kafka message body (request or response) of one API.
///
/// Encoders are infallible and size-exact: `encode` writes exactly
/// `encoded_len` bytes. Decoders are total: a value or an error.
pub trait Message: Sized {
    /// The schema name, e.g. `DescribeProducersResponse`.
    const NAME: &'static str;
    /// The API key (e.g. 61 for DescribeProducers).
    const API_KEY: i16;
    /// The lowest version the schema defines.
    const LOWEST_VERSION: i16;
    /// The highest version this crate implements.
    const HIGHEST_VERSION: i16;

    /// The exact number of bytes `encode` writes at `version`.
    fn encoded_len(&self, version: i16) -> usize;
    /// Writes the body at `version`; the caller chose a supported version.
    fn encode<B: BufMut>(&self, buf: &mut B, version: i16);
    /// Reads a body at `version`; errors name the field path and byte offset.
    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError>;

    /// How long the broker throttled the request this answers (ms), for
    /// responses whose schema has ThrottleTimeMs; 0 otherwise.
    fn throttle_time_ms(&self) -> i32 {
        0
    }

    /// Whether `version` is flexible (compact encodings, tagged fields).
    // Inline, so that a view made at a constant version knows it at compile
    // time in another crate too (without LTO): every length prefix and
    // element size of the view's walk branches on it.
    #[inline]
    fn is_flexible(version: i16) -> bool {
        crate::api::is_flexible(Self::API_KEY, version)
    }

    /// True only when `body` is one whole body at `version` (already
    /// checked against the schema's range) that the declared check accepts,
    /// with every array of fixed-size structs at a fixed stride: a fast
    /// check of a message's usual shape, in one pass. False says nothing
    /// more: the caller then runs the declared check, which names the error
    /// if there is one. Plumbing of [`crate::view`]; only hand-tuned codecs
    /// have one.
    fn accepts_fast(_body: &[u8], _version: i16) -> bool {
        false
    }

    /// Fails (at the reader's offset) if `version` is outside the schema's range.
    fn check_version(r: &Reader<'_>, version: i16) -> Result<(), DecodeError> {
        if (Self::LOWEST_VERSION..=Self::HIGHEST_VERSION).contains(&version) {
            Ok(())
        } else {
            Err(r.error(DecodeErrorKind::UnsupportedVersion {
                api: Self::NAME,
                version,
                min: Self::LOWEST_VERSION,
                max: Self::HIGHEST_VERSION,
            }))
        }
    }
}

/// A request, tied to the response type it gets back.
pub trait Request: Message {
    /// The body a broker answers with.
    type Response: Message;
}

/// Decodes a whole buffer as one message body; trailing bytes are an error.
pub fn decode_exact<M: Message>(bytes: &[u8], version: i16) -> Result<M, DecodeError> {
    let mut r = Reader::new(bytes);
    let m = M::decode(&mut r, version)?;
    r.finish()?;
    Ok(m)
}

/// Encodes a message body into a new, exactly sized vector.
pub fn encode_to_vec<M: Message>(m: &M, version: i16) -> Vec<u8> {
    let mut out = Vec::with_capacity(m.encoded_len(version));
    m.encode(&mut out, version);
    debug_assert_eq!(out.len(), m.encoded_len(version), "{}", M::NAME);
    out
}
