//! Strictness of the binary decoder, with exact expectations: the byte
//! offset, the field path and the wording of every error.

use kdp_wire::error::DecodeErrorKind;
use kdp_wire::messages::{
    DescribeProducersRequest, DescribeProducersResponse, PartitionResponse, ProducerState,
    TopicRequest, TopicResponse,
};
use kdp_wire::ErrorCode;
use kdp_wire::{decode_exact, encode_to_vec, DecodeError, Message, TaggedFields};

const SEED: &[u8] = include_bytes!("../../../vectors/seed-example.bin");

/// An unsigned varint, written independently of kdp's writer.
fn uv(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    out
}

/// A compact string: varint `len + 1`, then the bytes.
fn cs(s: &[u8]) -> Vec<u8> {
    let mut out = uv(s.len() as u64 + 1);
    out.extend_from_slice(s);
    out
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn response_err(bytes: &[u8]) -> DecodeError {
    decode_exact::<DescribeProducersResponse>(bytes, 0).unwrap_err()
}

fn request_err(bytes: &[u8]) -> DecodeError {
    decode_exact::<DescribeProducersRequest>(bytes, 0).unwrap_err()
}

/// One producer, 36 fixed bytes and an empty tag section.
fn producer_bytes(id: i64) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&7i32.to_be_bytes()); // ProducerEpoch
    out.extend_from_slice(&(-1i32).to_be_bytes()); // LastSequence
    out.extend_from_slice(&(-1i64).to_be_bytes()); // LastTimestamp
    out.extend_from_slice(&3i32.to_be_bytes()); // CoordinatorEpoch
    out.extend_from_slice(&(-1i64).to_be_bytes()); // CurrentTxnStartOffset
    out.push(0);
    out
}

/// A partition without error message or producers.
fn empty_partition(index: i32) -> Vec<u8> {
    cat(&[&index.to_be_bytes(), &[0, 0], &[0], &[1], &[0]])
}

fn rich_response() -> DescribeProducersResponse {
    let mut tags = TaggedFields::default();
    tags.insert(0, vec![1, 2, 3]);
    tags.insert(300, vec![0xab; 130]);
    DescribeProducersResponse {
        throttle_time_ms: 17,
        topics: vec![
            TopicResponse {
                name: "orders-é-🦀".into(),
                partitions: vec![
                    PartitionResponse {
                        partition_index: 0,
                        error_code: ErrorCode::NONE,
                        error_message: None,
                        active_producers: vec![
                            ProducerState {
                                producer_id: 1000,
                                producer_epoch: 2,
                                last_sequence: 41,
                                last_timestamp: 1_700_000_000_000,
                                coordinator_epoch: 9,
                                current_txn_start_offset: 150_382,
                                unknown_tagged_fields: tags.clone(),
                            },
                            ProducerState::default(),
                        ],
                        unknown_tagged_fields: TaggedFields::default(),
                    },
                    PartitionResponse {
                        partition_index: 1,
                        error_code: ErrorCode::TOPIC_AUTHORIZATION_FAILED,
                        error_message: Some("Topic authorization failed.".into()),
                        active_producers: vec![],
                        unknown_tagged_fields: tags.clone(),
                    },
                ],
                unknown_tagged_fields: TaggedFields::default(),
            },
            TopicResponse::default(),
        ],
        unknown_tagged_fields: tags,
    }
}

fn rich_request() -> DescribeProducersRequest {
    let mut tags = TaggedFields::default();
    tags.insert(5, vec![]);
    DescribeProducersRequest {
        topics: vec![
            TopicRequest {
                name: "orders".into(),
                partition_indexes: vec![0, 1, i32::MAX],
                unknown_tagged_fields: tags.clone(),
            },
            TopicRequest {
                name: String::new(),
                partition_indexes: vec![],
                unknown_tagged_fields: TaggedFields::default(),
            },
        ],
        unknown_tagged_fields: tags,
    }
}

fn is_truncation(kind: &DecodeErrorKind) -> bool {
    matches!(
        kind,
        DecodeErrorKind::Truncated { .. }
            | DecodeErrorKind::LengthExceedsInput { .. }
            | DecodeErrorKind::CountExceedsInput { .. }
    )
}

fn check_prefixes<M: Message + std::fmt::Debug>(bytes: &[u8]) {
    assert!(decode_exact::<M>(bytes, 0).is_ok());
    for n in 0..bytes.len() {
        let err = decode_exact::<M>(&bytes[..n], 0).unwrap_err();
        assert!(err.offset() <= n, "prefix {n}: {err}");
        assert!(is_truncation(err.kind()), "prefix {n}: {err}");
    }
}

#[test]
fn every_strict_prefix_is_rejected() {
    check_prefixes::<DescribeProducersResponse>(SEED);
    check_prefixes::<DescribeProducersResponse>(&encode_to_vec(&rich_response(), 0));
    check_prefixes::<DescribeProducersResponse>(&encode_to_vec(
        &DescribeProducersResponse::default(),
        0,
    ));
    check_prefixes::<DescribeProducersRequest>(&encode_to_vec(&rich_request(), 0));
    check_prefixes::<DescribeProducersRequest>(&encode_to_vec(
        &DescribeProducersRequest::default(),
        0,
    ));
}

#[test]
fn a_truncated_producer_names_its_field() {
    // Cut the seed inside the producer: the count check fails first, as the
    // one producer cannot fit in what is left.
    let err = response_err(&SEED[..30]);
    assert_eq!(
        err.to_string(),
        "at byte 20 (Topics[0].Partitions[0].ActiveProducers): array count 1 needs at least \
         37 bytes but only 9 are left"
    );
    // Two producers pass the count check (74 bytes), but the first one's
    // tag section takes 33 bytes (69 in all), so the second is cut in LastTimestamp.
    let mut first = producer_bytes(1);
    first.pop();
    first.extend_from_slice(&[1, 0, 30]);
    first.extend_from_slice(&[0; 30]);
    let bytes = cat(&[
        &[0, 0, 0, 0],
        &[2],
        &cs(b"t"),
        &[2],
        &[0, 0, 0, 0, 0, 0, 0],
        &[3],
        &first,
        &producer_bytes(2)[..20],
    ]);
    let err = response_err(&bytes);
    assert_eq!(
        err.to_string(),
        "at byte 101 (Topics[0].Partitions[0].ActiveProducers[1].LastTimestamp): int64 needs \
         8 bytes but only 4 are left"
    );
}

#[test]
fn trailing_bytes_are_rejected() {
    for extra in [&[0u8][..], &[0, 0, 0], &[0xff]] {
        let bytes = cat(&[SEED, extra]);
        let err = response_err(&bytes);
        assert_eq!(
            err.to_string(),
            format!(
                "at byte 61: {} trailing bytes after the end of the message",
                extra.len()
            )
        );
    }
    let mut req = encode_to_vec(&rich_request(), 0);
    req.push(0);
    assert_eq!(request_err(&req).offset(), req.len() - 1);
}

#[test]
fn huge_array_count_is_rejected_before_allocating() {
    // Topics count 2^31 - 2 (compact varint 2^31 - 1), then 3 bytes.
    let bytes = cat(&[&[0, 0, 0, 0], &uv((1 << 31) - 1), &[0, 0, 0]]);
    assert_eq!(bytes.len(), 12);
    let err = response_err(&bytes);
    assert_eq!(err.offset(), 4);
    assert_eq!(err.path(), "Topics");
    assert_eq!(
        err.to_string(),
        "at byte 4 (Topics): array count 2147483646 needs at least 6442450938 bytes \
         but only 3 are left"
    );
    // The same deeper down: ActiveProducers with room for one producer only.
    let bytes = cat(&[
        &[0, 0, 0, 0],
        &[2],
        &cs(b"t"),
        &[2],
        &[0, 0, 0, 0, 0, 0, 0],
        &uv(3),
        &producer_bytes(1),
        &[0, 0, 0],
    ]);
    let err = response_err(&bytes);
    assert_eq!(
        err.to_string(),
        "at byte 15 (Topics[0].Partitions[0].ActiveProducers): array count 2 needs at least \
         74 bytes but only 40 are left"
    );
    // Request PartitionIndexes: 4 bytes an element.
    let bytes = cat(&[&[2], &cs(b"t"), &uv(4), &[0; 9]]);
    let err = request_err(&bytes);
    assert_eq!(
        err.to_string(),
        "at byte 3 (Topics[0].PartitionIndexes): array count 3 needs at least 12 bytes \
         but only 9 are left"
    );
}

#[test]
fn varints_longer_than_allowed_are_rejected() {
    // 5 bytes with a 5th byte above 0x0f: more than 32 bits.
    for fifth in [0x10u8, 0x1f, 0x7f] {
        let bytes = cat(&[&[0, 0, 0, 0], &[0xff, 0xff, 0xff, 0xff, fifth], &[0; 8]]);
        let err = response_err(&bytes);
        assert_eq!(
            err.to_string(),
            "at byte 4 (Topics): unsigned varint32 is longer than 5 bytes"
        );
    }
    // 6 bytes (continuation bit on the 5th).
    let bytes = cat(&[
        &[0, 0, 0, 0],
        &[0x81, 0x80, 0x80, 0x80, 0x80, 0x00],
        &[0; 4],
    ]);
    let err = response_err(&bytes);
    assert_eq!(
        err.to_string(),
        "at byte 4 (Topics): unsigned varint32 is longer than 5 bytes"
    );
    // The largest 5-byte value is fine as a varint (then too big a length).
    let bytes = cat(&[&[0, 0, 0, 0], &[0xff, 0xff, 0xff, 0xff, 0x0f]]);
    assert!(matches!(
        response_err(&bytes).kind(),
        DecodeErrorKind::NegativeLength { .. }
    ));
}

#[test]
fn varints_not_in_shortest_form_are_rejected() {
    // Topics count 0 written as 80 00: would re-encode as 00.
    for (overlong, len) in [
        (&[0x80, 0x00][..], 2),
        (&[0x81, 0x80, 0x00], 3),
        (&[0x81, 0x80, 0x80, 0x80, 0x00], 5),
    ] {
        let bytes = cat(&[&[0, 0, 0, 0], overlong, &[0]]);
        let err = response_err(&bytes);
        assert_eq!(
            err.to_string(),
            format!(
                "at byte 4 (Topics): unsigned varint32 is not in its shortest form \
                 ({len} bytes, last one 0x00)"
            )
        );
    }
    // An empty tag section written as 80 00.
    let bytes = cat(&[&[0, 0, 0, 0], &[1], &[0x80, 0x00]]);
    let err = response_err(&bytes);
    assert_eq!(err.offset(), 5);
    assert_eq!(err.path(), "TaggedFields");
    // Minimal multi-byte varints are accepted: a 127-byte name (varint 128).
    let name = vec![b'x'; 127];
    let bytes = cat(&[&[2], &cs(&name), &[1], &[0], &[0]]);
    assert_eq!(&bytes[1..3], &[0x80, 0x01]);
    let req: DescribeProducersRequest = decode_exact(&bytes, 0).unwrap();
    assert_eq!(req.topics[0].name.len(), 127);
    assert_eq!(encode_to_vec(&req, 0), bytes);
}

#[test]
fn compact_lengths_of_2_pow_31_or_more_are_rejected() {
    // Java would read these as negative ints. String (name) ...
    for (n, len) in [((1u64 << 31) + 1, -(1i64 << 31)), (u64::from(u32::MAX), -2)] {
        let bytes = cat(&[&[2], &uv(n), &[0; 16]]);
        let err = request_err(&bytes);
        assert_eq!(
            err.to_string(),
            format!("at byte 1 (Topics[0].Name): string has negative length {len}")
        );
    }
    // ... and array.
    let bytes = cat(&[&[2], &cs(b"t"), &uv((1 << 31) + 1), &[0; 16]]);
    let err = request_err(&bytes);
    assert_eq!(
        err.to_string(),
        "at byte 3 (Topics[0].PartitionIndexes): array has negative length -2147483648"
    );
    // 2^31 - 1 (length 2^31 - 2) is a length, just too long for the input.
    let bytes = cat(&[&[2], &uv((1 << 31) - 1), &[0; 16]]);
    let err = request_err(&bytes);
    assert_eq!(
        err.to_string(),
        "at byte 1 (Topics[0].Name): string length 2147483646 exceeds the 16 bytes left"
    );
}

#[test]
fn compact_length_of_2_pow_31_minus_1_is_reported_as_read() {
    // The prefix 2^31 means length 2^31 - 1 = i32::MAX: a length Java accepts
    // (then finds too long), not a negative one.
    let bytes = cat(&[&[2], &uv(1 << 31), &[0; 16]]);
    assert_eq!(
        request_err(&bytes).to_string(),
        "at byte 1 (Topics[0].Name): string length 2147483647 exceeds the 16 bytes left"
    );
    let bytes = cat(&[&[2], &cs(b"t"), &uv(1 << 31), &[0; 16]]);
    assert_eq!(
        request_err(&bytes).to_string(),
        "at byte 3 (Topics[0].PartitionIndexes): array count 2147483647 needs at least \
         8589934588 bytes but only 16 are left"
    );
}

#[test]
fn null_where_the_schema_forbids_it() {
    let err = request_err(&[2, 0, 1, 0, 0]);
    assert_eq!(
        err.to_string(),
        "at byte 1 (Topics[0].Name): string is null, which the schema does not allow here"
    );
    let err = request_err(&[0, 0]);
    assert_eq!(
        err.to_string(),
        "at byte 0 (Topics): array is null, which the schema does not allow here"
    );
    let err = request_err(&[2, 2, b't', 0, 0, 0]);
    assert_eq!(
        err.to_string(),
        "at byte 3 (Topics[0].PartitionIndexes): array is null, which the schema does not \
         allow here"
    );
    let bytes = cat(&[
        &[0, 0, 0, 0],
        &[2],
        &cs(b"t"),
        &[2],
        &[0, 0, 0, 0, 0, 0, 0],
        &[0],
    ]);
    let err = response_err(&cat(&[&bytes, &[0, 0, 0]]));
    assert_eq!(
        err.to_string(),
        "at byte 15 (Topics[0].Partitions[0].ActiveProducers): array is null, which the \
         schema does not allow here"
    );
    // ErrorMessage may be null (0) and may be empty (1): both round-trip.
    for msg in [0u8, 1] {
        let bytes = cat(&[
            &[0, 0, 0, 0],
            &[2],
            &cs(b"t"),
            &[2],
            &[0, 0, 0, 0, 0, 0, msg],
            &[1, 0, 0, 0],
        ]);
        let r: DescribeProducersResponse = decode_exact(&bytes, 0).unwrap();
        let m = &r.topics[0].partitions[0].error_message;
        assert_eq!(m.as_deref(), if msg == 0 { None } else { Some("") });
        assert_eq!(encode_to_vec(&r, 0), bytes);
    }
}

#[test]
fn invalid_utf8_names_the_bad_byte() {
    let cases: &[(&[u8], usize)] = &[
        (b"\xff", 0),
        (b"ab\x80cd", 2),
        (b"abc\xc0\x80", 3),          // overlong NUL
        (b"a\xed\xa0\x80", 1),        // UTF-16 surrogate
        (b"\xf4\x90\x80\x80", 0),     // above U+10FFFF
        (b"ok\xe2\x82", 2),           // cut short at the end of the string
        (b"\xf0\x9f\xa6\x80\xff", 4), // valid crab, then junk
    ];
    for &(name, bad) in cases {
        let bytes = cat(&[&[2], &cs(name), &[1, 0, 0]]);
        let err = request_err(&bytes);
        // The string's data starts at byte 2 (count, then 1-byte length).
        assert_eq!(
            err.to_string(),
            format!(
                "at byte {} (Topics[0].Name): string is not valid UTF-8 (bad byte at string \
                 offset {bad})",
                2 + bad
            ),
            "{name:x?}"
        );
    }
    // In a response, deeper down.
    let bytes = cat(&[
        &[0, 0, 0, 0],
        &[2],
        &cs(b"t"),
        &[2],
        &[0, 0, 0, 1, 0, 3],
        &cs(b"bad \xfe"),
        &[1, 0, 0, 0],
    ]);
    let err = response_err(&bytes);
    assert_eq!(err.offset(), 15 + 4);
    assert_eq!(err.path(), "Topics[0].Partitions[0].ErrorMessage");
}

#[test]
fn the_example_from_the_issue() {
    // Partitions 0 and 1 are fine; partition 2's ErrorMessage claims 70000
    // bytes and 12 are left.
    let mut bytes = cat(&[&[0, 0, 0, 0], &[2], &cs(b"orders"), &[4]]);
    bytes.extend(empty_partition(0));
    bytes.extend(empty_partition(1));
    bytes.extend_from_slice(&2i32.to_be_bytes());
    bytes.extend_from_slice(&0i16.to_be_bytes());
    let at = bytes.len();
    bytes.extend(uv(70_000 + 1));
    bytes.extend_from_slice(&[b'x'; 12]);
    let err = response_err(&bytes);
    assert_eq!(at, 37);
    assert_eq!(
        err.to_string(),
        "at byte 37 (Topics[0].Partitions[2].ErrorMessage): string length 70000 exceeds the \
         12 bytes left"
    );
    assert_eq!(err.offset(), at);
    assert_eq!(err.path(), "Topics[0].Partitions[2].ErrorMessage");
    assert_eq!(
        err.kind(),
        &DecodeErrorKind::LengthExceedsInput {
            what: "string",
            len: 70_000,
            left: 12
        }
    );
}

#[test]
fn tagged_fields_must_ascend() {
    // Top-level section of an empty request: tags 1 then 0.
    let err = request_err(&[1, 2, 1, 1, 0xaa, 0, 0]);
    assert_eq!(
        err.to_string(),
        "at byte 5 (TaggedFields[1]): tag 0 does not come after tag 1 (tags must ascend)"
    );
    // Duplicate tag.
    let err = request_err(&[1, 2, 7, 0, 7, 0]);
    assert_eq!(
        err.to_string(),
        "at byte 4 (TaggedFields[1]): tag 7 does not come after tag 7 (tags must ascend)"
    );
    // Inside a producer.
    let mut p = producer_bytes(1);
    p.pop();
    p.extend_from_slice(&[2, 3, 0, 3, 0]);
    let bytes = cat(&[
        &[0, 0, 0, 0],
        &[2],
        &cs(b"t"),
        &[2],
        &[0, 0, 0, 0, 0, 0, 0],
        &[2],
        &p,
        &[0, 0, 0],
    ]);
    let err = response_err(&bytes);
    assert_eq!(
        err.path(),
        "Topics[0].Partitions[0].ActiveProducers[0].TaggedFields[1]"
    );
    assert_eq!(err.offset(), 16 + 36 + 3);
    // A size beyond the input.
    let err = request_err(&[1, 1, 4, 5, 0]);
    assert_eq!(
        err.to_string(),
        "at byte 3 (TaggedFields[0].Size): tagged field length 5 exceeds the 1 bytes left"
    );
    // A count the input cannot hold (each field takes at least 2 bytes).
    let err = request_err(&[1, 3, 0, 0, 1, 0]);
    assert_eq!(
        err.to_string(),
        "at byte 1 (TaggedFields): array count 3 needs at least 6 bytes but only 4 are left"
    );
}

#[test]
fn unknown_tagged_fields_round_trip_byte_exactly() {
    // Tags at every level: 0, 1 and 2^32 - 1 (a 5-byte tag), sizes 0, 3
    // and 200 (a 2-byte size).
    let big = vec![0x5a; 200];
    let top_tags = cat(&[
        &[3],
        &[0, 0],
        &[1, 3, 1, 2, 3],
        &uv(u64::from(u32::MAX)),
        &uv(200),
        &big,
    ]);
    let one_tag = [1u8, 9, 2, 0xbe, 0xef];
    let mut producer = producer_bytes(42);
    producer.pop();
    producer.extend_from_slice(&one_tag);
    let bytes = cat(&[
        &[0, 0, 0, 5],
        &[2],
        &cs(b"t"),
        &[2],
        &[0, 0, 0, 0, 0, 0, 0],
        &[2],
        &producer,
        &one_tag, // partition
        &one_tag, // topic
        &top_tags,
    ]);
    let r: DescribeProducersResponse = decode_exact(&bytes, 0).unwrap();
    let tags: Vec<(u32, usize)> = r
        .unknown_tagged_fields
        .iter()
        .map(|f| (f.tag, f.data.len()))
        .collect();
    assert_eq!(tags, [(0, 0), (1, 3), (u32::MAX, 200)]);
    let p = &r.topics[0].partitions[0];
    assert_eq!(p.unknown_tagged_fields.get(9), Some(&[0xbe, 0xef][..]));
    assert_eq!(
        p.active_producers[0].unknown_tagged_fields.get(9),
        Some(&[0xbe, 0xef][..])
    );
    assert_eq!(r.topics[0].unknown_tagged_fields.len(), 1);
    assert_eq!(r.encoded_len(0), bytes.len());
    assert_eq!(encode_to_vec(&r, 0), bytes);
}

#[test]
fn versions_other_than_0_are_rejected() {
    for v in [-1i16, 1, i16::MAX] {
        let err = decode_exact::<DescribeProducersResponse>(SEED, v).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "at byte 0: DescribeProducersResponse version {v} is not supported \
                 (supported: 0 to 0)"
            )
        );
        assert!(decode_exact::<DescribeProducersRequest>(&[1, 0], v).is_err());
    }
}

#[test]
fn producer_epoch_is_an_int32() {
    // Seed: ProducerEpoch 12 sits in 4 bytes right after the 8-byte id.
    assert_eq!(&SEED[29..33], &[0, 0, 0, 12]);
    let mut bytes = SEED.to_vec();
    bytes[29..33].copy_from_slice(&70_000i32.to_be_bytes());
    let r: DescribeProducersResponse = decode_exact(&bytes, 0).unwrap();
    assert_eq!(
        r.topics[0].partitions[0].active_producers[0].producer_epoch,
        70_000
    );
}
