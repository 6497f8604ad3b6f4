//! Cross-checks against the peer implementation, the `kafka-protocol` crate
//! (0.18): random DescribeProducers requests and responses must encode to
//! the same bytes with both, and each must decode the other's bytes to the
//! same value. Also compares the error-code tables.
//!
//! The peer is only ever given valid encodings: it does not bound array
//! counts by the input, so hostile bytes can make it abort the process (see
//! `peer_aborts_on_a_nine_byte_response`, which shows this in a child process).

use std::collections::BTreeMap;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::describe_producers_request as pq;
use kafka_protocol::messages::describe_producers_response as pr;
use kafka_protocol::messages::{ProducerId, TopicName};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use proptest::prelude::*;

use kdp_wire::messages::{
    DescribeProducersRequest, DescribeProducersResponse, PartitionResponse, ProducerState,
    TopicRequest, TopicResponse,
};
mod common;
use common::{request, response};

use kdp_wire::{decode_exact, encode_to_vec, Message, TaggedField, TaggedFields};

// ---------------------------------------------------------------------------
// kdp <-> peer conversions

fn to_peer_tags(t: &TaggedFields) -> BTreeMap<i32, Bytes> {
    t.iter()
        .map(|f| {
            let tag = i32::try_from(f.tag).expect("the peer keys tags by i32");
            (tag, Bytes::from(f.data.clone()))
        })
        .collect()
}

fn from_peer_tags(t: &BTreeMap<i32, Bytes>) -> TaggedFields {
    TaggedFields::new(
        t.iter()
            .map(|(&tag, data)| TaggedField {
                tag: u32::try_from(tag).expect("non-negative tag"),
                data: data.to_vec(),
            })
            .collect(),
    )
}

fn sb(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_owned())
}

fn to_peer_request(
    m: &DescribeProducersRequest,
) -> kafka_protocol::messages::DescribeProducersRequest {
    let topics = m
        .topics
        .iter()
        .map(|t| {
            pq::TopicRequest::default()
                .with_name(TopicName(sb(&t.name)))
                .with_partition_indexes(t.partition_indexes.clone())
                .with_unknown_tagged_fields(to_peer_tags(&t.unknown_tagged_fields))
        })
        .collect();
    kafka_protocol::messages::DescribeProducersRequest::default()
        .with_topics(topics)
        .with_unknown_tagged_fields(to_peer_tags(&m.unknown_tagged_fields))
}

fn from_peer_request(
    m: &kafka_protocol::messages::DescribeProducersRequest,
) -> DescribeProducersRequest {
    DescribeProducersRequest {
        topics: m
            .topics
            .iter()
            .map(|t| TopicRequest {
                name: t.name.0.as_str().to_owned(),
                partition_indexes: t.partition_indexes.clone(),
                unknown_tagged_fields: from_peer_tags(&t.unknown_tagged_fields),
            })
            .collect(),
        unknown_tagged_fields: from_peer_tags(&m.unknown_tagged_fields),
    }
}

fn to_peer_producer(p: &ProducerState) -> pr::ProducerState {
    pr::ProducerState::default()
        .with_producer_id(ProducerId(p.producer_id))
        .with_producer_epoch(p.producer_epoch)
        .with_last_sequence(p.last_sequence)
        .with_last_timestamp(p.last_timestamp)
        .with_coordinator_epoch(p.coordinator_epoch)
        .with_current_txn_start_offset(p.current_txn_start_offset)
        .with_unknown_tagged_fields(to_peer_tags(&p.unknown_tagged_fields))
}

fn to_peer_response(
    m: &DescribeProducersResponse,
) -> kafka_protocol::messages::DescribeProducersResponse {
    let topics = m
        .topics
        .iter()
        .map(|t| {
            let partitions = t
                .partitions
                .iter()
                .map(|p| {
                    pr::PartitionResponse::default()
                        .with_partition_index(p.partition_index)
                        .with_error_code(p.error_code.0)
                        .with_error_message(p.error_message.as_deref().map(sb))
                        .with_active_producers(
                            p.active_producers.iter().map(to_peer_producer).collect(),
                        )
                        .with_unknown_tagged_fields(to_peer_tags(&p.unknown_tagged_fields))
                })
                .collect();
            pr::TopicResponse::default()
                .with_name(TopicName(sb(&t.name)))
                .with_partitions(partitions)
                .with_unknown_tagged_fields(to_peer_tags(&t.unknown_tagged_fields))
        })
        .collect();
    kafka_protocol::messages::DescribeProducersResponse::default()
        .with_throttle_time_ms(m.throttle_time_ms)
        .with_topics(topics)
        .with_unknown_tagged_fields(to_peer_tags(&m.unknown_tagged_fields))
}

fn from_peer_response(
    m: &kafka_protocol::messages::DescribeProducersResponse,
) -> DescribeProducersResponse {
    DescribeProducersResponse {
        throttle_time_ms: m.throttle_time_ms,
        topics: m
            .topics
            .iter()
            .map(|t| TopicResponse {
                name: t.name.0.as_str().to_owned(),
                partitions: t
                    .partitions
                    .iter()
                    .map(|p| PartitionResponse {
                        partition_index: p.partition_index,
                        error_code: kdp_wire::ErrorCode(p.error_code),
                        error_message: p.error_message.as_ref().map(|s| s.as_str().to_owned()),
                        active_producers: p
                            .active_producers
                            .iter()
                            .map(|s| ProducerState {
                                producer_id: s.producer_id.0,
                                producer_epoch: s.producer_epoch,
                                last_sequence: s.last_sequence,
                                last_timestamp: s.last_timestamp,
                                coordinator_epoch: s.coordinator_epoch,
                                current_txn_start_offset: s.current_txn_start_offset,
                                unknown_tagged_fields: from_peer_tags(&s.unknown_tagged_fields),
                            })
                            .collect(),
                        unknown_tagged_fields: from_peer_tags(&p.unknown_tagged_fields),
                    })
                    .collect(),
                unknown_tagged_fields: from_peer_tags(&t.unknown_tagged_fields),
            })
            .collect(),
        unknown_tagged_fields: from_peer_tags(&m.unknown_tagged_fields),
    }
}

fn peer_encode<T: Encodable>(m: &T) -> Vec<u8> {
    let size = m.compute_size(0).expect("peer compute_size");
    let mut buf = BytesMut::with_capacity(size);
    m.encode(&mut buf, 0).expect("peer encode");
    assert_eq!(buf.len(), size, "peer compute_size vs encode");
    buf.to_vec()
}

fn peer_decode<T: Decodable>(bytes: &[u8]) -> T {
    let mut buf = Bytes::copy_from_slice(bytes);
    let m = T::decode(&mut buf, 0).expect("peer decode");
    assert!(buf.is_empty(), "peer left {} bytes", buf.len());
    m
}

// ---------------------------------------------------------------------------
// Properties

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn request_matches_peer(m in request()) {
        let ours = encode_to_vec(&m, 0);
        prop_assert_eq!(ours.len(), m.encoded_len(0));
        let peer = to_peer_request(&m);
        let theirs = peer_encode(&peer);
        prop_assert_eq!(&ours, &theirs, "encodings differ");
        // The peer reads our bytes, we read the peer's.
        let peer_read: kafka_protocol::messages::DescribeProducersRequest = peer_decode(&ours);
        prop_assert_eq!(&peer_read, &peer);
        prop_assert_eq!(from_peer_request(&peer_read), m.clone());
        let ours_read: DescribeProducersRequest = decode_exact(&theirs, 0).unwrap();
        prop_assert_eq!(ours_read, m);
    }

    #[test]
    fn response_matches_peer(m in response()) {
        let ours = encode_to_vec(&m, 0);
        prop_assert_eq!(ours.len(), m.encoded_len(0));
        let peer = to_peer_response(&m);
        let theirs = peer_encode(&peer);
        prop_assert_eq!(&ours, &theirs, "encodings differ");
        let peer_read: kafka_protocol::messages::DescribeProducersResponse = peer_decode(&ours);
        prop_assert_eq!(&peer_read, &peer);
        prop_assert_eq!(from_peer_response(&peer_read), m.clone());
        let ours_read: DescribeProducersResponse = decode_exact(&theirs, 0).unwrap();
        prop_assert_eq!(ours_read, m);
    }
}

#[test]
fn seed_vector_matches_peer() {
    let bin: &[u8] = include_bytes!("../../../vectors/seed-example.bin");
    let peer: kafka_protocol::messages::DescribeProducersResponse = peer_decode(bin);
    let ours: DescribeProducersResponse = decode_exact(bin, 0).unwrap();
    assert_eq!(from_peer_response(&peer), ours);
    assert_eq!(peer_encode(&peer), bin);
}

/// Every error code kdp knows has the peer's name (modulo case) and, but for
/// one known case, its retriable flag.
#[test]
fn error_codes_match_peer() {
    use kafka_protocol::ResponseError;
    let mut unknown_to_peer = Vec::new();
    let mut retriable_differs = Vec::new();
    for info in kdp_wire::error_code::ERRORS {
        let Some(peer) = ResponseError::try_from_code(info.code.0) else {
            assert_eq!(
                info.code,
                kdp_wire::ErrorCode::NONE,
                "only NONE maps to no error"
            );
            assert_eq!(info.name, "NONE");
            continue;
        };
        if let ResponseError::Unknown(_) = peer {
            unknown_to_peer.push(info.code.0);
            continue;
        }
        let camel: String = info
            .name
            .split('_')
            .map(|w| {
                let mut c = w.chars();
                match c.next() {
                    Some(f) => f.to_ascii_uppercase().to_string() + &c.as_str().to_lowercase(),
                    None => String::new(),
                }
            })
            .collect();
        assert_eq!(peer.to_string(), camel, "code {}", info.code);
        if peer.is_retriable() != info.retriable {
            retriable_differs.push(info.code.0);
        }
    }
    assert!(unknown_to_peer.is_empty(), "peer lacks {unknown_to_peer:?}");
    // CONCURRENT_TRANSACTIONS (51): Apache Kafka's ConcurrentTransactionsException
    // extends RetriableException, so kdp's table marks it retriable; the peer
    // does not. Kept visible here so that any other drift fails.
    assert_eq!(retriable_differs, vec![51i16]);
}

// ---------------------------------------------------------------------------
// The peer aborts on a 9-byte input (PROTOCOL.md). Shown in a child process:
// this test binary re-runs itself with only the child test selected.

const CHILD_ENV: &str = "KDP_PEER_ABORT_CHILD";

/// ThrottleTimeMs 0, then a Topics count of 2^32 - 2 (varint ff ff ff ff 0f).
const NINE_BYTES: [u8; 9] = [0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f];

#[test]
fn peer_abort_child() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return; // Only meaningful when spawned by the test below.
    }
    let mut buf = Bytes::from_static(&NINE_BYTES);
    let r = kafka_protocol::messages::DescribeProducersResponse::decode(&mut buf, 0);
    // Not reached when the peer aborts.
    println!("peer returned: {:?}", r.map(|_| ()));
}

#[test]
fn peer_aborts_on_a_nine_byte_response() {
    // kdp rejects the same bytes, naming the count and what it would need.
    let err = decode_exact::<DescribeProducersResponse>(&NINE_BYTES, 0).unwrap_err();
    // (Java reads the compact length 2^32 - 1 as the int -1, i.e. length -2.)
    assert_eq!(
        err.to_string(),
        "at byte 4 (Topics): array has negative length -2"
    );

    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "peer_abort_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success(),
        "the peer did not abort: {stdout}\n{stderr}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        // SIGABRT from `handle_alloc_error`, not a test failure (exit code 101).
        assert_eq!(out.status.signal(), Some(6), "{:?}: {stderr}", out.status);
    }
    assert!(stderr.contains("memory allocation of"), "{stderr}");
    assert!(!stdout.contains("peer returned"), "{stdout}");
}
