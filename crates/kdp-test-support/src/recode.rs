//! Changing an answer after kdp-server built it: every error code set to
//! one value ([`crate::Fault::Error`]), or a typed edit a test makes
//! ([`crate::StallCluster::edit`]). Both decode the response frame, change
//! the message, and encode it again at the same version.

use kdp_wire::frame::{decode_response_frame, response_frame_to_vec};
use kdp_wire::{ErrorCode, Message, Reader, Request, RequestHeader};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// A type-erased edit: broker, request payload (header and body), response
/// frame in; the new response frame out (`None`: the frame did not decode
/// as the API's, left as it was).
pub(crate) type EditFn = dyn Fn(i32, &[u8], &[u8]) -> Option<Vec<u8>> + Send + Sync;

/// Wraps a typed edit of `R`'s answers.
pub(crate) fn typed_edit<R, F>(f: F) -> Box<EditFn>
where
    R: Request + 'static,
    F: Fn(i32, &R, &mut R::Response) + Send + Sync + 'static,
{
    Box::new(move |broker, request, response| {
        let (header, req) = decode_request::<R>(request)?;
        let version = header.request_api_version;
        let (rh, mut resp) = decode_response_frame::<R::Response>(response, version).ok()?;
        f(broker, &req, &mut resp);
        Some(response_frame_to_vec(rh.correlation_id, &resp, version))
    })
}

/// `payload` with its size prefixed: a frame.
pub(crate) fn prefixed(payload: &[u8]) -> Vec<u8> {
    let size = i32::try_from(payload.len()).unwrap_or(i32::MAX);
    let mut frame = Vec::with_capacity(payload.len() + 4);
    frame.extend_from_slice(&size.to_be_bytes());
    frame.extend_from_slice(payload);
    frame
}

/// The header and body of a request payload (the bytes after the size prefix).
pub(crate) fn decode_request<R: Request>(payload: &[u8]) -> Option<(RequestHeader, R)> {
    let mut r = Reader::new(payload);
    let (header, _) = RequestHeader::decode_auto(&mut r).ok()?;
    if header.request_api_key != R::API_KEY {
        return None;
    }
    let body = R::decode(&mut r, header.request_api_version).ok()?;
    r.finish().ok()?;
    Some((header, body))
}

/// The response frame with every `ErrorCode` field set to `code`; `None`
/// if the API is not one kdp-wire declares or the frame does not decode.
pub(crate) fn with_error_code(
    api_key: i16,
    version: i16,
    response: &[u8],
    code: ErrorCode,
) -> Option<Vec<u8>> {
    macro_rules! dispatch {
        ($($name:ident: $key:ident, $req:ident, $resp:ident;)*) => {
            match api_key {
                $(kdp_wire::api::$key => recode::<kdp_wire::messages::$resp>(response, version, code),)*
                _ => None,
            }
        };
    }
    kdp_wire::for_each_api!(dispatch)
}

/// Through the message's JSON form, which names every field as the schema
/// does, so one walk finds every `ErrorCode` of any message.
fn recode<M>(response: &[u8], version: i16, code: ErrorCode) -> Option<Vec<u8>>
where
    M: Message + Serialize + DeserializeOwned,
{
    let (header, body) = decode_response_frame::<M>(response, version).ok()?;
    let mut json = serde_json::to_value(&body).ok()?;
    set_error_codes(&mut json, code);
    let body: M = serde_json::from_value(json).ok()?;
    Some(response_frame_to_vec(header.correlation_id, &body, version))
}

fn set_error_codes(v: &mut Value, code: ErrorCode) {
    match v {
        Value::Object(fields) => {
            for (name, field) in fields.iter_mut() {
                if name == "ErrorCode" {
                    *field = Value::from(code.0);
                } else {
                    set_error_codes(field, code);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| set_error_codes(i, code)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every API kdp-wire declares, at every version: the answer goes
    /// through the JSON form and back, so an error fault never falls back
    /// to closing the connection.
    #[test]
    fn every_declared_response_takes_an_error_code_at_every_version() {
        macro_rules! check {
            ($($name:ident: $key:ident, $req:ident, $resp:ident;)*) => {$({
                type M = kdp_wire::messages::$resp;
                for v in M::LOWEST_VERSION..=M::HIGHEST_VERSION {
                    let frame = response_frame_to_vec(7, &M::default(), v);
                    let out = with_error_code(kdp_wire::api::$key, v, &frame, ErrorCode(42));
                    assert!(out.is_some(), "{} v{v}", stringify!($name));
                }
            })*};
        }
        kdp_wire::for_each_api!(check);
    }

    #[test]
    fn nested_error_codes_are_all_set() {
        use kdp_wire::messages::{DescribeProducersResponse, PartitionResponse, TopicResponse};
        let resp = DescribeProducersResponse {
            topics: vec![TopicResponse {
                name: "t".into(),
                partitions: vec![PartitionResponse::default(), PartitionResponse::default()],
                ..Default::default()
            }],
            ..Default::default()
        };
        let frame = response_frame_to_vec(7, &resp, 0);
        let out =
            with_error_code(kdp_wire::api::DESCRIBE_PRODUCERS, 0, &frame, ErrorCode(42)).unwrap();
        let (h, got) = decode_response_frame::<DescribeProducersResponse>(&out, 0).unwrap();
        assert_eq!(h.correlation_id, 7);
        let codes: Vec<ErrorCode> = got.topics[0]
            .partitions
            .iter()
            .map(|p| p.error_code)
            .collect();
        assert_eq!(codes, [ErrorCode(42); 2]);
    }
}
