//! StreamsGroupDescribe (API 89) against Kafka's own encoding: the
//! `kafka-protocol` crate does not know the API, so the vectors under
//! `vectors/streams-group-describe/` were written by Kafka 4.4.0's
//! generated classes (`it/`'s `StreamsGroupVectors`). kdp decodes them to
//! the values that program set, re-encodes them to the same bytes, views
//! them alike, and refuses every strict prefix.

use kdp_wire::messages::*;
use kdp_wire::nullable_struct::NullableStruct;
use kdp_wire::view::view_exact;
use kdp_wire::{decode_exact, encode_to_vec, DecodeErrorKind, ErrorCode};

fn vector(field: &str) -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../vectors/streams-group-describe/kafka-4.4.0.json"
    );
    let text = std::fs::read_to_string(path).expect("vector file");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    kdp_wire::hex::decode(doc[field].as_str().expect(field)).expect("hex")
}

fn same_bytes_and_prefixes<M>(bytes: &[u8]) -> M
where
    M: kdp_wire::Message + kdp_wire::view::Viewable + PartialEq + std::fmt::Debug,
{
    let m: M = decode_exact(bytes, 0).expect("kdp decodes Kafka's bytes");
    assert_eq!(encode_to_vec(&m, 0), bytes, "re-encoded");
    let view = view_exact::<M>(bytes, 0).expect("view");
    assert_eq!(M::owned(view, kdp_wire::wire::Version::of::<M>(0)), m);
    for n in 0..bytes.len() {
        assert!(decode_exact::<M>(&bytes[..n], 0).is_err(), "prefix {n}");
        assert!(view_exact::<M>(&bytes[..n], 0).is_err(), "view prefix {n}");
    }
    m
}

#[test]
fn request_matches_kafka() {
    let m: StreamsGroupDescribeRequest = same_bytes_and_prefixes(&vector("request_v0"));
    assert_eq!(m.group_ids, ["orders-app", "gone"]);
    assert!(m.include_authorized_operations);
}

#[test]
fn response_matches_kafka() {
    let m: StreamsGroupDescribeResponse = same_bytes_and_prefixes(&vector("response_v0"));
    let [group, gone] = &m.groups[..] else {
        panic!("two groups: {m:?}")
    };
    assert_eq!(group.group_id, "orders-app");
    assert_eq!(group.group_state, "Stable");
    assert_eq!(group.authorized_operations, 1234);
    let topology = group.topology.as_ref().expect("topology present");
    let subs = topology.subtopologies.as_ref().expect("subtopologies");
    assert_eq!(subs[0].source_topics, ["orders"]);
    assert_eq!(subs[0].state_changelog_topics[0].replication_factor, 3);
    let [live, other] = &group.members[..] else {
        panic!("two members")
    };
    assert_eq!(live.process_id, "5f1c2b7e-9a4d-4c3e-8b6f-0123456789ab");
    assert_eq!(live.rack_id.as_deref(), Some("r1"));
    let endpoint = live.user_endpoint.as_ref().expect("endpoint");
    assert_eq!((endpoint.host.as_str(), endpoint.port), ("app-1", 65535));
    assert_eq!(live.task_offsets[0].offset, 42);
    assert_eq!(live.assignment.active_tasks[0].partitions, [0, 1]);
    assert_eq!(live.assignment.standby_tasks[0].partitions, [2]);
    assert_eq!(live.target_assignment.active_tasks[0].partitions, [0, 1, 2]);
    assert!(!live.is_classic);
    assert_eq!(other.instance_id.as_deref(), Some("static-2"));
    assert_eq!(other.user_endpoint, NullableStruct(None));
    assert!(other.is_classic);
    assert_eq!(gone.error_code, ErrorCode(69));
    assert_eq!(gone.error_message.as_deref(), Some("Group gone not found."));
    assert_eq!(gone.topology, NullableStruct(None));
}

/// A nullable struct's presence byte is -1 or 1; anything else is refused
/// at that byte, with the field named, by the decoder and the view alike.
#[test]
fn presence_byte_other_than_minus_one_or_one_is_refused() {
    let mut bytes = vector("response_v0");
    let m: StreamsGroupDescribeResponse = decode_exact(&bytes, 0).unwrap();
    // The first group's topology marker: after throttle (4), the groups
    // count (1), error code (2), null message (1), id, state and two epochs.
    let g = &m.groups[0];
    let at = 4 + 1 + 2 + 1 + (1 + g.group_id.len()) + (1 + g.group_state.len()) + 4 + 4;
    assert_eq!(bytes[at], 1);
    for bad in [0u8, 2, 0x80] {
        bytes[at] = bad;
        let err = decode_exact::<StreamsGroupDescribeResponse>(&bytes, 0).unwrap_err();
        assert_eq!(err.offset(), at, "{err}");
        assert!(
            matches!(err.kind(), DecodeErrorKind::InvalidStructMarker { .. }),
            "{err}"
        );
        assert!(err.to_string().contains("Topology"), "{err}");
        let view_err = view_exact::<StreamsGroupDescribeResponse>(&bytes, 0).unwrap_err();
        assert_eq!(view_err, err);
    }
}
