//! The properties the fuzz targets check, written once and shared by
//! `fuzz/fuzz_targets/*.rs` and the `fuzz_corpus` integration test.
//!
//! Each check takes arbitrary bytes and panics when a property breaks:
//!
//! - decoding never panics, and a rejection names an offset inside the input;
//! - the decoder is strict, so an accepted input is the one canonical
//!   encoding of its value: re-encoding gives the input back byte for byte,
//!   `encoded_len` predicts that size, and decoding the re-encoding gives an
//!   equal value;
//! - an accepted body also survives the JSON form unchanged.
//!
//! Each returns whether the input was accepted. Not part of the public API.

use std::fmt::Debug;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::api;
use crate::codec::Reader;
use crate::error::DecodeError;
use crate::frame;
use crate::header::RequestHeader;
use crate::message::{decode_exact, encode_to_vec, Message};
use crate::messages::{
    ApiVersionsRequest, ApiVersionsResponse, DescribeProducersRequest, DescribeProducersResponse,
    MetadataRequest, MetadataResponse,
};
use crate::version::Version;
use crate::view::Viewable;

/// A DescribeProducers v0 request body.
pub fn describe_producers_request(data: &[u8]) -> bool {
    body::<DescribeProducersRequest>(data, 0)
}

/// A DescribeProducers v0 response body.
pub fn describe_producers_response(data: &[u8]) -> bool {
    body::<DescribeProducersResponse>(data, 0)
}

/// ApiVersions and Metadata bodies, the messages a client decodes from any
/// broker it reaches and the mock decodes from any client. The first byte
/// picks the message and version (every version kdp supports); the rest is
/// the body.
pub fn api_versions_metadata(data: &[u8]) -> bool {
    let Some((&selector, rest)) = data.split_first() else {
        return false;
    };
    // ApiVersions 0-4 (5 versions) and Metadata 4-12 (9), request and response.
    let pick = selector % 28;
    let (is_request, index) = (pick < 14, pick % 14);
    let (metadata, version) = if index < 5 {
        (false, index as i16)
    } else {
        (true, 4 + (index - 5) as i16)
    };
    match (metadata, is_request) {
        (false, true) => wire_body::<ApiVersionsRequest>(rest, version),
        (false, false) => wire_body::<ApiVersionsResponse>(rest, version),
        (true, true) => wire_body::<MetadataRequest>(rest, version),
        (true, false) => wire_body::<MetadataResponse>(rest, version),
    }
}

/// A whole request frame: size, header (its version following from its api
/// key and version), then the body. DescribeProducers bodies are decoded;
/// other bodies are carried as opaque bytes.
pub fn request_frame(data: &[u8]) -> bool {
    let Some((header, header_version, rest)) = split_request_frame(data) else {
        return false;
    };
    let mut again = Vec::with_capacity(data.len());
    if header.request_api_key == api::DESCRIBE_PRODUCERS {
        let body = match decode_exact::<DescribeProducersRequest>(rest, header.request_api_version)
        {
            Ok(body) => body,
            Err(e) => {
                check_error(&e, rest.len());
                return false;
            }
        };
        assert_eq!(
            header_version, 2,
            "DescribeProducers uses request header v2"
        );
        frame::encode_request_frame(&mut again, &header, &body);
        assert_eq!(again, data, "request frame re-encoding differs");
        let (header2, body2) = frame::decode_request_frame::<DescribeProducersRequest>(&again)
            .unwrap_or_else(|e| panic!("re-encoded request frame rejected: {e}"));
        assert_eq!(header2, header);
        assert_eq!(body2, body);
        json::<DescribeProducersRequest>(&body);
    } else {
        let size = header.encoded_len(header_version) + rest.len();
        let size = i32::try_from(size).unwrap_or_else(|_| panic!("frame size {size}"));
        again.extend_from_slice(&size.to_be_bytes());
        header.encode(&mut again, header_version);
        again.extend_from_slice(rest);
        assert_eq!(again, data, "request frame re-encoding differs");
    }
    true
}

/// Size prefix and header of a request frame, and the body bytes after it.
fn split_request_frame(data: &[u8]) -> Option<(RequestHeader, i16, &[u8])> {
    let mut outer = Reader::new(data);
    let mut r = match frame::frame_payload(&mut outer) {
        Ok(r) => r,
        Err(e) => {
            check_error(&e, data.len());
            return None;
        }
    };
    if let Err(e) = outer.finish() {
        check_error(&e, data.len());
        return None;
    }
    let (header, header_version) = match RequestHeader::decode_auto(&mut r) {
        Ok(h) => h,
        Err(e) => {
            check_error(&e, data.len());
            return None;
        }
    };
    let rest = r
        .take(r.remaining(), "body")
        .unwrap_or_else(|e| panic!("taking the remaining bytes failed: {e}"));
    Some((header, header_version, rest))
}

/// A body of `M` at `version` (the registry's per-API check).
pub fn body<M>(data: &[u8], version: i16) -> bool
where
    M: Message + PartialEq + Debug + Serialize + DeserializeOwned,
{
    let accepted = wire_body::<M>(data, version);
    if accepted {
        if let Ok(m) = decode_exact::<M>(data, version) {
            json(&m);
        }
    }
    accepted
}

/// The binary properties of one body: errors inside the input; accepted
/// input is canonical.
fn wire_body<M>(data: &[u8], version: i16) -> bool
where
    M: Message + PartialEq + Debug,
{
    let m = match decode_exact::<M>(data, version) {
        Ok(m) => m,
        Err(e) => {
            check_error(&e, data.len());
            return false;
        }
    };
    assert_eq!(
        m.encoded_len(version),
        data.len(),
        "{} encoded_len",
        M::NAME
    );
    let again = encode_to_vec(&m, version);
    assert_eq!(again, data, "{} re-encoding differs", M::NAME);
    let m2 = decode_exact::<M>(&again, version)
        .unwrap_or_else(|e| panic!("re-encoded {} rejected: {e}", M::NAME));
    assert_eq!(m2, m);
    true
}

/// The JSON form of an accepted value reads back to the same value.
fn json<M>(m: &M)
where
    M: PartialEq + Debug + Serialize + DeserializeOwned,
{
    let text = serde_json::to_string(m).unwrap_or_else(|e| panic!("to JSON: {e}"));
    let back: M = crate::json::from_str(&text).unwrap_or_else(|e| panic!("from JSON: {e}"));
    assert_eq!(&back, m, "JSON round trip");
}

/// A `__transaction_state` key (first byte even) or value (odd), version
/// prefix included, as the transaction coordinator writes them.
pub fn txn_log(data: &[u8]) -> bool {
    use crate::coordinator::txn_log::{TransactionLogKey, TransactionLogValue};
    let Some((&selector, rest)) = data.split_first() else {
        return false;
    };
    if selector & 1 == 0 {
        coordinator_record::<TransactionLogKey>(rest)
    } else {
        coordinator_record::<TransactionLogValue>(rest)
    }
}

fn coordinator_record<R>(data: &[u8]) -> bool
where
    R: crate::coordinator::CoordinatorRecord + PartialEq + Debug + Serialize + DeserializeOwned,
{
    use crate::coordinator::{decode_record, encode_record, record_len};
    let v = match decode_record::<R>(data) {
        Ok(v) => v,
        Err(e) => {
            check_error(&e, data.len());
            return false;
        }
    };
    assert_eq!(
        record_len(&v.record, v.version),
        data.len(),
        "{} length",
        R::NAME
    );
    assert_eq!(
        encode_record(&v.record, v.version),
        data,
        "{} re-encoding differs",
        R::NAME
    );
    json(&v.record);
    true
}

/// A rejection points inside the input (or just past its end) and prints.
fn check_error(e: &DecodeError, len: usize) {
    assert!(e.offset() <= len, "offset {} beyond {len}: {e}", e.offset());
    let text = e.to_string();
    assert!(text.starts_with("at byte "), "{text}");
}

/// A check of one body at a version.
type BodyCheck = fn(&[u8], i16) -> bool;

/// The checks of one API of the registry: its versions, and the checks of
/// its request and response bodies, owned (`body`) and through the view
/// (`view_body`).
struct ApiChecks {
    lowest: i16,
    highest: i16,
    request: [BodyCheck; 2],
    response: [BodyCheck; 2],
}

/// Every API of the registry, in its order, with its checks.
macro_rules! api_checks {
    ($($name:ident: $key:ident, $req:ident, $resp:ident;)*) => {
        const API_CHECKS: &[ApiChecks] = &[$(ApiChecks {
            lowest: <crate::messages::$req as Message>::LOWEST_VERSION,
            highest: <crate::messages::$req as Message>::HIGHEST_VERSION,
            request: [body::<crate::messages::$req>, view_body::<crate::messages::$req>],
            response: [body::<crate::messages::$resp>, view_body::<crate::messages::$resp>],
        },)*];
    };
}

crate::registry::for_each_api!(api_checks);

/// The message two selector bytes pick, for `every_api` and `every_view`:
/// the first byte picks the API (in the registry's order), the second its
/// version and whether it is the request or the response; the rest is the
/// body. Returns whether the check accepted the body.
fn selected(data: &[u8], view: bool) -> bool {
    let [pick_api, pick_version, rest @ ..] = data else {
        return false;
    };
    let Some(api) = API_CHECKS.get(usize::from(*pick_api) % API_CHECKS.len().max(1)) else {
        return false;
    };
    let span = u16::try_from(api.highest - api.lowest + 1).unwrap_or(1);
    let offset = i16::try_from(u16::from(pick_version >> 1) % span.max(1)).unwrap_or(0);
    let version = api.lowest + offset;
    let [owned, viewed] = if pick_version & 1 == 0 {
        api.request
    } else {
        api.response
    };
    if view {
        viewed(rest, version)
    } else {
        owned(rest, version)
    }
}

/// Every message of the registry ([`crate::for_each_api!`]), at every
/// declared version (two selector bytes, then the body): strict decoding, canonical
/// re-encoding, the JSON form.
pub fn every_api(data: &[u8]) -> bool {
    selected(data, false)
}

/// Every message of the registry through its view ([`crate::view`]),
/// the input picked as in [`every_api`]: see [`view_body`].
pub fn every_view(data: &[u8]) -> bool {
    selected(data, true)
}

/// A body of `M` at `version` through its view: the view's check accepts
/// exactly what the owned decoder accepts and fails with the same error
/// (kind, offset, field path); an accepted body's view gives, accessor by
/// accessor, the decoder's value (`into_owned` and `Debug` call every
/// accessor of every nested view). A message's fast check
/// ([`Message::accepts_fast`]) accepts only what the declared check
/// accepts, and then finds every fixed-size struct at its stride, as the
/// declared check does.
pub fn view_body<M>(data: &[u8], version: i16) -> bool
where
    M: Message + Viewable + PartialEq + Debug,
{
    if (M::LOWEST_VERSION..=M::HIGHEST_VERSION).contains(&version) && M::accepts_fast(data, version)
    {
        assert_eq!(
            crate::view::check_exact_declared::<M>(data, version),
            Ok(true),
            "{} v{version}: the fast check accepted what the declared check refuses \
             or finds irregular",
            M::NAME
        );
    }
    let owned = decode_exact::<M>(data, version);
    let viewed = crate::view::view_exact::<M>(data, version);
    match (owned, viewed) {
        (Ok(m), Ok(view)) => {
            let from_view = M::owned(view, Version::of::<M>(version));
            assert_eq!(
                from_view,
                m,
                "{} v{version}: the view reads another value",
                M::NAME
            );
            assert!(!format!("{view:?}").is_empty());
            true
        }
        (Err(owned), Err(viewed)) => {
            check_error(&viewed, data.len());
            assert_eq!(
                viewed,
                owned,
                "{} v{version}: the view's check and the decoder fail differently",
                M::NAME
            );
            false
        }
        (Ok(_), Err(e)) => panic!("{} v{version}: decoded, but the view refused: {e}", M::NAME),
        (Err(e), Ok(_)) => panic!(
            "{} v{version}: the view accepted what the decoder refused: {e}",
            M::NAME
        ),
    }
}

/// A Fetch body: the first byte picks the version (4-18) and whether it
/// is the request or the response; the rest is the body. The records of
/// an accepted response also go through [`record_batches`].
pub fn fetch(data: &[u8]) -> bool {
    use crate::messages::{FetchRequest, FetchResponse};
    let Some((&selector, rest)) = data.split_first() else {
        return false;
    };
    let span = FetchRequest::HIGHEST_VERSION - FetchRequest::LOWEST_VERSION + 1;
    let version = FetchRequest::LOWEST_VERSION + i16::from(selector >> 1) % span;
    if selector & 1 == 0 {
        return body::<FetchRequest>(rest, version);
    }
    if !body::<FetchResponse>(rest, version) {
        return false;
    }
    if let Ok(response) = decode_exact::<FetchResponse>(rest, version) {
        for topic in &response.responses {
            for partition in &topic.partitions {
                if let Some(records) = &partition.records {
                    record_batches(records);
                }
            }
        }
    }
    true
}

/// A records blob (what a Fetch response's Records holds): framing never
/// panics and every error points inside the blob; a batch re-writes its
/// own header; a batch whose records decode re-encodes to the same values
/// (to the same bytes when uncompressed, the encoder being canonical).
/// Decompression is bounded at 1 MiB. Accepted when every batch and its
/// records decode.
pub fn record_batches(data: &[u8]) -> bool {
    use crate::records::{Batches, RecordBatch};
    const LIMIT: usize = 1 << 20;
    let mut batches = Batches::new(data);
    let mut all_ok = true;
    for item in &mut batches {
        let batch = match item {
            Ok(batch) => batch,
            Err(e) => {
                assert!(e.position < data.len(), "{e}");
                assert!(e.to_string().starts_with("batch at byte "), "{e}");
                all_ok = false;
                continue;
            }
        };
        assert!(batch.position() + batch.size() <= data.len());
        let mut header = Vec::new();
        batch.header().put(&mut header);
        assert_eq!(Some(&header[..]), batch.bytes().get(..header.len()));
        let _ = batch.control(LIMIT);
        let records = match batch.records(LIMIT) {
            Ok(records) => records,
            Err(e) => {
                assert_eq!(e.position, batch.position(), "{e}");
                all_ok = false;
                continue;
            }
        };
        assert!(batch.crc_valid());
        let owned = RecordBatch::from_batch(&batch, LIMIT)
            .unwrap_or_else(|e| panic!("records read once, not twice: {e}"));
        assert_eq!(owned.records, records);
        let again = owned
            .encode()
            .unwrap_or_else(|e| panic!("re-encoding failed: {e}"));
        if batch.header().compression() == Some(crate::records::Compression::None) {
            assert_eq!(again, batch.bytes(), "uncompressed re-encoding differs");
        }
        let reread = Batches::new(&again)
            .next()
            .and_then(Result::ok)
            .map(|b| RecordBatch::from_batch(&b, usize::MAX));
        match reread {
            Some(Ok(back)) => assert_eq!(back, owned, "re-encoded batch reads differently"),
            other => panic!("re-encoded batch rejected: {other:?}"),
        }
    }
    if let Some(p) = batches.partial() {
        assert_eq!(p.position + p.available, data.len());
    }
    all_ok
}
