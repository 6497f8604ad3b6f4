//! ApiVersions and Metadata against the `kafka-protocol` crate: what kdp
//! encodes, the peer decodes and re-encodes to the same bytes, at every
//! version kdp supports; and kdp decodes it back to the same value.

use bytes::{Bytes, BytesMut};
use kafka_protocol::protocol::{Decodable, Encodable};
use kdp_wire::messages::*;
use kdp_wire::ErrorCode;
use kdp_wire::{decode_exact, encode_to_vec, Message, TaggedFields, Uuid};

fn peer_round_trip<P: Encodable + Decodable>(bytes: &[u8], version: i16) -> Vec<u8> {
    let mut input = Bytes::copy_from_slice(bytes);
    let value = P::decode(&mut input, version).expect("peer decodes kdp's bytes");
    assert!(input.is_empty(), "peer left bytes unread");
    let mut out = BytesMut::new();
    value.encode(&mut out, version).expect("peer encodes");
    out.to_vec()
}

fn check<M, P>(m: &M, versions: std::ops::RangeInclusive<i16>)
where
    M: Message + PartialEq + std::fmt::Debug,
    P: Encodable + Decodable,
{
    for v in versions {
        let ours = encode_to_vec(m, v);
        assert_eq!(ours.len(), m.encoded_len(v), "{} v{v} length", M::NAME);
        assert_eq!(
            peer_round_trip::<P>(&ours, v),
            ours,
            "{} v{v} bytes",
            M::NAME
        );
        let back: M = decode_exact(&ours, v).unwrap();
        let again = encode_to_vec(&back, v);
        assert_eq!(again, ours, "{} v{v} re-encode", M::NAME);
        for n in 0..ours.len() {
            assert!(
                decode_exact::<M>(&ours[..n], v).is_err(),
                "{} v{v} prefix {n}",
                M::NAME
            );
        }
    }
}

#[test]
fn api_versions_request_matches_peer() {
    let m = ApiVersionsRequest {
        client_software_name: "kdp".into(),
        client_software_version: "0.1.0".into(),
        unknown_tagged_fields: TaggedFields::default(),
    };
    check::<_, kafka_protocol::messages::ApiVersionsRequest>(&m, 3..=4);
    check::<_, kafka_protocol::messages::ApiVersionsRequest>(&ApiVersionsRequest::default(), 0..=2);
}

#[test]
fn api_versions_response_matches_peer() {
    let m = ApiVersionsResponse {
        error_code: ErrorCode::NONE,
        api_keys: vec![
            ApiVersion::new(kdp_wire::api::METADATA, 0, 12),
            ApiVersion::new(kdp_wire::api::API_VERSIONS, 0, 4),
            ApiVersion::new(kdp_wire::api::DESCRIBE_PRODUCERS, 0, 0),
        ],
        throttle_time_ms: 0,
        unknown_tagged_fields: TaggedFields::default(),
    };
    check::<_, kafka_protocol::messages::ApiVersionsResponse>(&m, 1..=4);
    let v0 = ApiVersionsResponse {
        throttle_time_ms: 0,
        ..m
    };
    check::<_, kafka_protocol::messages::ApiVersionsResponse>(&v0, 0..=0);
}

fn sample_metadata_response(version: i16) -> MetadataResponse {
    MetadataResponse {
        throttle_time_ms: 7,
        brokers: vec![
            MetadataResponseBroker {
                node_id: 1,
                host: "127.0.0.1".into(),
                port: 9092,
                rack: Some("r1".into()),
                unknown_tagged_fields: TaggedFields::default(),
            },
            MetadataResponseBroker {
                node_id: 2,
                host: "broker-2.example".into(),
                port: 9093,
                rack: None,
                unknown_tagged_fields: TaggedFields::default(),
            },
        ],
        cluster_id: Some("kdp-test".into()),
        controller_id: 1,
        topics: vec![MetadataResponseTopic {
            error_code: ErrorCode::NONE,
            name: Some("orders".into()),
            topic_id: if version >= 10 {
                Uuid([7; 16])
            } else {
                Uuid::ZERO
            },
            is_internal: false,
            partitions: vec![MetadataResponsePartition {
                error_code: ErrorCode::NONE,
                partition_index: 3,
                leader_id: 2,
                leader_epoch: if version >= 7 { 5 } else { -1 },
                replica_nodes: vec![2, 1],
                isr_nodes: vec![2],
                offline_replicas: if version >= 5 { vec![1] } else { vec![] },
                unknown_tagged_fields: TaggedFields::default(),
            }],
            topic_authorized_operations: if version >= 8 { 0x0f } else { i32::MIN },
            unknown_tagged_fields: TaggedFields::default(),
        }],
        cluster_authorized_operations: if (8..=10).contains(&version) {
            3
        } else {
            i32::MIN
        },
        unknown_tagged_fields: TaggedFields::default(),
    }
}

#[test]
fn metadata_response_matches_peer() {
    for v in 4..=12 {
        check::<_, kafka_protocol::messages::MetadataResponse>(&sample_metadata_response(v), v..=v);
    }
}

#[test]
fn metadata_request_matches_peer() {
    for v in 4..=12 {
        let all = MetadataRequest {
            topics: None,
            allow_auto_topic_creation: false,
            ..Default::default()
        };
        check::<_, kafka_protocol::messages::MetadataRequest>(&all, v..=v);
        let some = MetadataRequest {
            topics: Some(vec![MetadataRequestTopic {
                topic_id: Uuid::ZERO,
                name: Some("orders".into()),
                unknown_tagged_fields: TaggedFields::default(),
            }]),
            allow_auto_topic_creation: false,
            include_cluster_authorized_operations: false,
            include_topic_authorized_operations: v >= 8,
            unknown_tagged_fields: TaggedFields::default(),
        };
        check::<_, kafka_protocol::messages::MetadataRequest>(&some, v..=v);
    }
}
