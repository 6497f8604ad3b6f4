//! Headers and frames: request header v2 with its classic client_id, the
//! ApiVersions exception to response header v1, and the frame helpers.

use kdp_wire::api;
use kdp_wire::codec::Reader;
use kdp_wire::frame::{
    decode_request_frame, decode_response_frame, frame_payload, frame_size, request_frame_to_vec,
    response_frame_to_vec, DEFAULT_MAX_FRAME_SIZE,
};
use kdp_wire::messages::api_versions::ApiVersionsResponse;
use kdp_wire::messages::{DescribeProducersRequest, DescribeProducersResponse, TopicRequest};
use kdp_wire::ErrorCode;
use kdp_wire::{decode_exact, encode_to_vec, RequestHeader, ResponseHeader, TaggedFields};

const SEED: &[u8] = include_bytes!("../../../vectors/seed-example.bin");

fn header(client_id: Option<&str>) -> RequestHeader {
    RequestHeader {
        request_api_key: api::DESCRIBE_PRODUCERS,
        request_api_version: 0,
        correlation_id: 0x0102_0304,
        client_id: client_id.map(str::to_owned),
        unknown_tagged_fields: TaggedFields::default(),
    }
}

fn request() -> DescribeProducersRequest {
    DescribeProducersRequest {
        topics: vec![TopicRequest {
            name: "orders".into(),
            partition_indexes: vec![3],
            unknown_tagged_fields: TaggedFields::default(),
        }],
        unknown_tagged_fields: TaggedFields::default(),
    }
}

#[test]
fn request_header_v2_keeps_client_id_classic() {
    assert_eq!(api::request_header_version(api::DESCRIBE_PRODUCERS, 0), 2);
    let h = header(Some("kdp"));
    let mut bytes = Vec::new();
    h.encode(&mut bytes, 2);
    assert_eq!(
        bytes,
        [
            0, 61, // api key
            0, 0, // api version
            1, 2, 3, 4, // correlation id
            0, 3, b'k', b'd', b'p', // client_id: int16 length, not a varint
            0,    // tagged fields
        ]
    );
    assert_eq!(h.encoded_len(2), bytes.len());
    let mut r = Reader::new(&bytes);
    let (back, hv) = RequestHeader::decode_auto(&mut r).unwrap();
    assert_eq!(hv, 2);
    assert_eq!(back, h);
    r.finish().unwrap();

    // Null client_id: int16 -1.
    let h = header(None);
    let mut bytes = Vec::new();
    h.encode(&mut bytes, 2);
    assert_eq!(&bytes[8..], &[0xff, 0xff, 0]);
    let (back, _) = RequestHeader::decode_auto(&mut Reader::new(&bytes)).unwrap();
    assert_eq!(back.client_id, None);

    // An empty client_id is not null.
    let h = header(Some(""));
    let mut bytes = Vec::new();
    h.encode(&mut bytes, 2);
    assert_eq!(&bytes[8..], &[0, 0, 0]);
}

#[test]
fn a_compact_client_id_is_misread_and_rejected() {
    // What a diagram that shows client_id compact would produce: 04 "kdp".
    let bytes = [0, 61, 0, 0, 1, 2, 3, 4, 4, b'k', b'd', b'p', 0];
    let err = RequestHeader::decode_auto(&mut Reader::new(&bytes)).unwrap_err();
    // 0x046b = 1131 bytes claimed.
    assert_eq!(
        err.to_string(),
        "at byte 8 (ClientId): string length 1131 exceeds the 3 bytes left"
    );
    // Negative lengths other than -1 are malformed.
    let bytes = [0, 61, 0, 0, 1, 2, 3, 4, 0xff, 0xfe, 0];
    let err = RequestHeader::decode_auto(&mut Reader::new(&bytes)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at byte 8 (ClientId): string has negative length -2"
    );
}

#[test]
fn request_header_v1_has_no_tag_section() {
    // Metadata v8 is not flexible: header v1.
    let h = RequestHeader {
        request_api_key: api::METADATA,
        request_api_version: 8,
        correlation_id: 7,
        client_id: Some("c".into()),
        unknown_tagged_fields: TaggedFields::default(),
    };
    let mut bytes = Vec::new();
    h.encode(&mut bytes, 1);
    assert_eq!(bytes, [0, 3, 0, 8, 0, 0, 0, 7, 0, 1, b'c']);
    let mut r = Reader::new(&bytes);
    let (back, hv) = RequestHeader::decode_auto(&mut r).unwrap();
    assert_eq!((back, hv), (h, 1));
    r.finish().unwrap();
}

#[test]
fn api_versions_responses_use_header_v0() {
    for v in 0..=4 {
        assert_eq!(api::response_header_version(api::API_VERSIONS, v), 0);
    }
    assert_eq!(api::response_header_version(api::DESCRIBE_PRODUCERS, 0), 1);
    // Header v0 is the correlation id alone; v1 adds a tag section.
    let h = ResponseHeader {
        correlation_id: 9,
        unknown_tagged_fields: TaggedFields::default(),
    };
    let mut v0 = Vec::new();
    h.encode(&mut v0, 0);
    assert_eq!(v0, [0, 0, 0, 9]);
    let mut v1 = Vec::new();
    h.encode(&mut v1, 1);
    assert_eq!(v1, [0, 0, 0, 9, 0]);

    // A flexible ApiVersions v3 response frame: no tag byte after the
    // correlation id, the body (ErrorCode 35) starts at once.
    let body = ApiVersionsResponse {
        error_code: ErrorCode::UNSUPPORTED_VERSION,
        ..Default::default()
    };
    let frame = response_frame_to_vec(9, &body, 3);
    assert_eq!(&frame[4..10], &[0, 0, 0, 9, 0, 35]);
    let (hdr, back) = decode_response_frame::<ApiVersionsResponse>(&frame, 3).unwrap();
    assert_eq!(hdr.correlation_id, 9);
    assert_eq!(back, body);
}

#[test]
fn request_frames_round_trip() {
    let h = header(Some("kdp"));
    let body = request();
    let frame = request_frame_to_vec(&h, &body);
    let body_bytes = encode_to_vec(&body, 0);
    let size = i32::from_be_bytes(frame[..4].try_into().unwrap()) as usize;
    assert_eq!(size, frame.len() - 4);
    assert_eq!(
        &frame[4..18],
        &[0, 61, 0, 0, 1, 2, 3, 4, 0, 3, b'k', b'd', b'p', 0]
    );
    assert_eq!(&frame[18..], &body_bytes[..]);
    let (h2, b2) = decode_request_frame::<DescribeProducersRequest>(&frame).unwrap();
    assert_eq!(h2, h);
    assert_eq!(b2, body);
}

#[test]
fn response_frames_round_trip() {
    let body: DescribeProducersResponse = decode_exact(SEED, 0).unwrap();
    let frame = response_frame_to_vec(0x0a0b_0c0d, &body, 0);
    assert_eq!(frame.len(), 4 + 4 + 1 + SEED.len());
    assert_eq!(&frame[..4], &((4 + 1 + SEED.len()) as i32).to_be_bytes());
    assert_eq!(&frame[4..9], &[0x0a, 0x0b, 0x0c, 0x0d, 0]);
    assert_eq!(&frame[9..], SEED);
    let (hdr, back) = decode_response_frame::<DescribeProducersResponse>(&frame, 0).unwrap();
    assert_eq!(hdr.correlation_id, 0x0a0b_0c0d);
    assert_eq!(back, body);
}

#[test]
fn frame_size_prefix_checks() {
    assert_eq!(frame_size(42i32.to_be_bytes(), 100).unwrap(), 42);
    assert_eq!(frame_size(0i32.to_be_bytes(), 100).unwrap(), 0);
    let err = frame_size((-1i32).to_be_bytes(), 100).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at byte 0 (Size): frame size -1 is invalid (negative)"
    );
    let err = frame_size(i32::MIN.to_be_bytes(), DEFAULT_MAX_FRAME_SIZE).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at byte 0 (Size): frame size -2147483648 is invalid (negative)"
    );
    let err = frame_size(101i32.to_be_bytes(), 100).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at byte 0 (Size): frame size 101 is invalid (above the maximum frame size)"
    );
}

#[test]
fn frame_payload_checks() {
    let err = frame_payload(&mut Reader::new(&[0xff, 0xff, 0xff, 0xfe, 1, 2])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at byte 0 (Size): frame size -2 is invalid (negative)"
    );
    let err = frame_payload(&mut Reader::new(&[0, 0, 0, 10, 1, 2, 3])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at byte 0 (Size): frame length 10 exceeds the 3 bytes left"
    );
    let err = frame_payload(&mut Reader::new(&[0, 0, 1])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at byte 0 (Size): int32 needs 4 bytes but only 3 are left"
    );
    // The payload reader counts offsets from the frame's first byte.
    let bytes = [0, 0, 0, 2, 7, 8, 9];
    let mut outer = Reader::new(&bytes);
    let mut inner = frame_payload(&mut outer).unwrap();
    assert_eq!(inner.offset(), 4);
    assert_eq!(inner.remaining(), 2);
    assert_eq!(outer.remaining(), 1);
    inner.i8().unwrap();
    assert_eq!(inner.i16().unwrap_err().offset(), 5);
}

#[test]
fn request_frame_errors() {
    let h = header(Some("kdp"));
    let frame = request_frame_to_vec(&h, &request());

    // Bytes after the frame.
    let mut more = frame.clone();
    more.push(0);
    let err = decode_request_frame::<DescribeProducersRequest>(&more).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "at byte {}: 1 trailing bytes after the end of the message",
            frame.len()
        )
    );

    // Bytes after the body, inside the frame.
    let mut inner = frame.clone();
    inner.push(0);
    let size = (inner.len() - 4) as i32;
    inner[..4].copy_from_slice(&size.to_be_bytes());
    let err = decode_request_frame::<DescribeProducersRequest>(&inner).unwrap_err();
    assert_eq!(err.offset(), frame.len());
    assert!(err
        .to_string()
        .ends_with("1 trailing bytes after the end of the message"));

    // Another API's header.
    let mut other = frame.clone();
    other[4..6].copy_from_slice(&api::METADATA.to_be_bytes());
    other[6..8].copy_from_slice(&12i16.to_be_bytes());
    let err = decode_request_frame::<DescribeProducersRequest>(&other).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at byte 4 (Header.RequestApiKey): api key 3 does not match the expected 61"
    );

    // An unsupported DescribeProducers version.
    let mut v1 = frame.clone();
    v1[6..8].copy_from_slice(&1i16.to_be_bytes());
    let err = decode_request_frame::<DescribeProducersRequest>(&v1).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at byte 18: DescribeProducersRequest version 1 is not supported (supported: 0 to 0)"
    );

    // Errors inside the body carry absolute offsets.
    let mut bad = frame.clone();
    bad[18] = 0; // Topics: null
    let err = decode_request_frame::<DescribeProducersRequest>(&bad).unwrap_err();
    assert_eq!(
        err.to_string(),
        "at byte 18 (Topics): array is null, which the schema does not allow here"
    );

    // Every strict prefix fails.
    for n in 0..frame.len() {
        assert!(decode_request_frame::<DescribeProducersRequest>(&frame[..n]).is_err());
    }
}
