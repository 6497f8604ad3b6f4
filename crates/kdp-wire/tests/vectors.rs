//! Golden vectors under `vectors/`: each `NAME.bin` has a `NAME.json`; the
//! JSON encodes to exactly the bytes, the bytes decode to exactly the JSON
//! (in kdp's own JSON shape), and the peer (`kafka-protocol` 0.18) reads the
//! bytes to the same values and writes the same bytes. Files whose name
//! contains `request` are DescribeProducers requests, the rest responses.
//!
//! `generated_vectors_are_on_disk` checks (and with `KDP_WRITE_VECTORS=1`
//! writes) the vectors kdp added to the seed's.

use std::fs;
use std::path::{Path, PathBuf};

use bytes::{Bytes, BytesMut};
use kafka_protocol::protocol::{Decodable, Encodable};
use kdp_wire::ErrorCode;
use serde::de::DeserializeOwned;
use serde::Serialize;

use kdp_wire::messages::{
    DescribeProducersRequest, DescribeProducersResponse, PartitionResponse, ProducerState,
    TopicRequest, TopicResponse,
};
use kdp_wire::{decode_exact, encode_to_vec, json, Message, TaggedFields};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vectors")
}

fn check<M, P>(name: &str, bin: &[u8], text: &str)
where
    M: Message + PartialEq + std::fmt::Debug + Serialize + DeserializeOwned,
    P: Decodable + Encodable,
{
    let from_json: M = json::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let from_bin: M = decode_exact(bin, 0).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(from_bin, from_json, "{name}");
    assert_eq!(encode_to_vec(&from_json, 0), bin, "{name}");
    // The JSON is in kdp's own shape (what `kdp decode` prints).
    let ours = serde_json::to_value(&from_bin).unwrap();
    let theirs: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(ours, theirs, "{name}");
    // The peer agrees on the bytes.
    let mut buf = Bytes::copy_from_slice(bin);
    let peer = P::decode(&mut buf, 0).unwrap_or_else(|e| panic!("{name}: peer: {e}"));
    assert!(buf.is_empty(), "{name}: peer left {} bytes", buf.len());
    let mut out = BytesMut::new();
    peer.encode(&mut out, 0).unwrap();
    assert_eq!(&out[..], bin, "{name}: peer re-encoding");
}

#[test]
fn every_vector_matches_its_json_and_the_peer() {
    let mut checked = 0;
    for entry in fs::read_dir(dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "bin") {
            continue;
        }
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let bin = fs::read(&path).unwrap();
        let text = fs::read_to_string(path.with_extension("json"))
            .unwrap_or_else(|e| panic!("{name}.json: {e}"));
        if name.contains("request") {
            check::<DescribeProducersRequest, kafka_protocol::messages::DescribeProducersRequest>(
                &name, &bin, &text,
            );
        } else {
            check::<DescribeProducersResponse, kafka_protocol::messages::DescribeProducersResponse>(
                &name, &bin, &text,
            );
        }
        checked += 1;
    }
    assert!(checked >= 4, "only {checked} vectors");
}

// ---------------------------------------------------------------------------
// The vectors kdp added.

fn tags(pairs: &[(u32, &[u8])]) -> TaggedFields {
    let mut t = TaggedFields::default();
    for &(tag, data) in pairs {
        t.insert(tag, data.to_vec());
    }
    t
}

fn request() -> DescribeProducersRequest {
    DescribeProducersRequest {
        topics: vec![
            TopicRequest {
                name: "orders".into(),
                partition_indexes: vec![0, 1, 2],
                unknown_tagged_fields: TaggedFields::default(),
            },
            TopicRequest {
                name: "payments".into(),
                partition_indexes: vec![7],
                unknown_tagged_fields: TaggedFields::default(),
            },
        ],
        unknown_tagged_fields: TaggedFields::default(),
    }
}

/// What a broker answers for a mix of cases: producers with and without an
/// open transaction, a partition this broker does not host, a topic the
/// client may not read (with Kafka's message), and an unknown topic.
fn response_errors() -> DescribeProducersResponse {
    let message = |code: ErrorCode| code.message().map(str::to_owned);
    let error = |index, code, msg| PartitionResponse {
        partition_index: index,
        error_code: code,
        error_message: msg,
        active_producers: vec![],
        unknown_tagged_fields: TaggedFields::default(),
    };
    DescribeProducersResponse {
        throttle_time_ms: 0,
        topics: vec![
            TopicResponse {
                name: "orders".into(),
                partitions: vec![
                    PartitionResponse {
                        partition_index: 0,
                        error_code: ErrorCode::NONE,
                        error_message: None,
                        active_producers: vec![
                            ProducerState {
                                producer_id: 4001,
                                producer_epoch: 0,
                                last_sequence: 9,
                                last_timestamp: 1_764_412_800_000,
                                coordinator_epoch: 3,
                                current_txn_start_offset: 1_024,
                                unknown_tagged_fields: TaggedFields::default(),
                            },
                            ProducerState {
                                producer_id: 4002,
                                producer_epoch: 70_000,
                                last_sequence: 2_147_483_647,
                                last_timestamp: 1_764_412_860_123,
                                coordinator_epoch: -1,
                                current_txn_start_offset: -1,
                                unknown_tagged_fields: TaggedFields::default(),
                            },
                        ],
                        unknown_tagged_fields: TaggedFields::default(),
                    },
                    error(1, ErrorCode::NOT_LEADER_OR_FOLLOWER, None),
                ],
                unknown_tagged_fields: TaggedFields::default(),
            },
            TopicResponse {
                name: "secret".into(),
                partitions: vec![error(
                    0,
                    ErrorCode::TOPIC_AUTHORIZATION_FAILED,
                    message(ErrorCode::TOPIC_AUTHORIZATION_FAILED),
                )],
                unknown_tagged_fields: TaggedFields::default(),
            },
            TopicResponse {
                name: "nope".into(),
                partitions: vec![error(
                    5,
                    ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                    message(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION),
                )],
                unknown_tagged_fields: TaggedFields::default(),
            },
        ],
        unknown_tagged_fields: TaggedFields::default(),
    }
}

/// Unknown tagged fields at every level, as a later Kafka might send: a
/// decoder must keep them and re-encode them in ascending tag order.
fn response_tagged() -> DescribeProducersResponse {
    DescribeProducersResponse {
        throttle_time_ms: 12,
        topics: vec![TopicResponse {
            name: "ørders-🦀".into(),
            partitions: vec![PartitionResponse {
                partition_index: 3,
                error_code: ErrorCode::NONE,
                error_message: Some(String::new()),
                active_producers: vec![ProducerState {
                    unknown_tagged_fields: tags(&[(0, b"\x01"), (5, b"")]),
                    ..ProducerState::default()
                }],
                unknown_tagged_fields: tags(&[(1, b"kdp")]),
            }],
            unknown_tagged_fields: tags(&[(200, &[0xab; 130])]),
        }],
        unknown_tagged_fields: tags(&[(0, b""), (1_000_000, b"\xff\x00")]),
    }
}

/// The vectors kdp added are exactly what this file generates. With
/// `KDP_WRITE_VECTORS=1` they are (re)written first, each through a
/// temporary file and a rename so that tests reading them concurrently never
/// see a half-written file.
#[test]
fn generated_vectors_are_on_disk() {
    fn check_or_write<M: Message + Serialize>(name: &str, m: &M) {
        let bin = encode_to_vec(m, 0);
        let text = serde_json::to_string_pretty(m).unwrap() + "\n";
        for (ext, data) in [("bin", bin.as_slice()), ("json", text.as_bytes())] {
            let path = dir().join(format!("{name}.{ext}"));
            if std::env::var_os("KDP_WRITE_VECTORS").is_some() {
                let tmp = dir().join(format!(".{name}.{ext}.tmp"));
                fs::write(&tmp, data).unwrap();
                fs::rename(&tmp, &path).unwrap();
            }
            let on_disk = fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(
                on_disk,
                data,
                "{} is stale: run with KDP_WRITE_VECTORS=1",
                path.display()
            );
        }
    }
    check_or_write("describe-producers-request", &request());
    check_or_write("describe-producers-response-errors", &response_errors());
    check_or_write("describe-producers-response-tagged", &response_tagged());
}
