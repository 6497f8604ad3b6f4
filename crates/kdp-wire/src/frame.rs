//! Framing: every request and response travels as an int32 size (excluding
//! itself) followed by a header and a body. This module knows nothing of
//! bodies; it splits and builds frames.

use bytes::BufMut;

use crate::api;
use crate::codec::Reader;
use crate::error::{Context, DecodeError, DecodeErrorKind};
use crate::header::{RequestHeader, ResponseHeader};
use crate::message::{Message, Request};

#[cfg(feature = "tokio")]
pub mod io;
mod reader;
mod size;
pub use reader::FrameReader;
pub use size::{frame_size, DEFAULT_MAX_FRAME_SIZE};

/// Reads the size prefix of a whole frame held in `buf` and returns a reader
/// over exactly its payload (offsets still counted from the size's first byte).
pub fn frame_payload<'a>(r: &mut Reader<'a>) -> Result<Reader<'a>, DecodeError> {
    let start = r.offset();
    let size = r.i32().field("Size")?;
    if size < 0 {
        return Err(DecodeError::new(
            start,
            DecodeErrorKind::InvalidFrameSize {
                size: i64::from(size),
                reason: "negative",
            },
        )
        .in_field("Size"));
    }
    let size = size as usize;
    if size > r.remaining() {
        return Err(DecodeError::new(
            start,
            DecodeErrorKind::LengthExceedsInput {
                what: "frame",
                len: size as u64,
                left: r.remaining(),
            },
        )
        .in_field("Size"));
    }
    r.sub_reader(size, "frame")
}

/// Appends a whole request frame: size, header (of the version the API
/// version calls for), body.
pub fn encode_request_frame<R: Request, B: BufMut>(buf: &mut B, header: &RequestHeader, body: &R) {
    let version = header.request_api_version;
    let hv = api::request_header_version(R::API_KEY, version);
    let size = header.encoded_len(hv) + body.encoded_len(version);
    buf.put_i32(size as i32);
    header.encode(buf, hv);
    body.encode(buf, version);
}

/// Appends a whole response frame.
pub fn encode_response_frame<M: Message, B: BufMut>(
    buf: &mut B,
    correlation_id: i32,
    body: &M,
    version: i16,
) {
    let hv = api::response_header_version(M::API_KEY, version);
    let header = ResponseHeader {
        correlation_id,
        ..Default::default()
    };
    let size = header.encoded_len(hv) + body.encoded_len(version);
    buf.put_i32(size as i32);
    header.encode(buf, hv);
    body.encode(buf, version);
}

/// A request frame as a vector.
pub fn request_frame_to_vec<R: Request>(header: &RequestHeader, body: &R) -> Vec<u8> {
    let mut out = Vec::new();
    encode_request_frame(&mut out, header, body);
    out
}

/// A response frame as a vector.
pub fn response_frame_to_vec<M: Message>(correlation_id: i32, body: &M, version: i16) -> Vec<u8> {
    let mut out = Vec::new();
    encode_response_frame(&mut out, correlation_id, body, version);
    out
}

/// Decodes a whole request frame (size, header, body) of a known request
/// type; the header's api key must match.
pub fn decode_request_frame<R: Request>(bytes: &[u8]) -> Result<(RequestHeader, R), DecodeError> {
    let mut outer = Reader::new(bytes);
    let mut r = frame_payload(&mut outer)?;
    outer.finish()?;
    let key_offset = r.offset();
    let (header, _) = RequestHeader::decode_auto(&mut r).field("Header")?;
    if header.request_api_key != R::API_KEY {
        return Err(DecodeError::new(
            key_offset,
            DecodeErrorKind::ApiKeyMismatch {
                expected: R::API_KEY,
                found: header.request_api_key,
            },
        )
        .in_field("RequestApiKey")
        .in_field("Header"));
    }
    let body = R::decode(&mut r, header.request_api_version)?;
    r.finish()?;
    Ok((header, body))
}

/// Decodes a whole response frame of a known message type and version.
pub fn decode_response_frame<M: Message>(
    bytes: &[u8],
    version: i16,
) -> Result<(ResponseHeader, M), DecodeError> {
    let mut outer = Reader::new(bytes);
    let mut r = frame_payload(&mut outer)?;
    outer.finish()?;
    let header = ResponseHeader::decode(&mut r, api::response_header_version(M::API_KEY, version))
        .field("Header")?;
    let body = M::decode(&mut r, version)?;
    r.finish()?;
    Ok((header, body))
}
