//! The group messages at the bytes where their versions differ: filters
//! that appear from a version on, null topics allowed only from v2, and
//! OffsetFetch's one-group and many-group shapes.

use kdp_wire::messages::*;
use kdp_wire::{decode_exact, encode_to_vec, ErrorCode};

#[test]
fn list_groups_filters_appear_with_their_versions() {
    let req = ListGroupsRequest {
        states_filter: vec!["Empty".into()],
        types_filter: vec!["consumer".into()],
        ..Default::default()
    };
    // v3: flexible, no filters: only the tag section.
    assert_eq!(encode_to_vec(&req, 3), [0]);
    assert_eq!(encode_to_vec(&req, 4), b"\x02\x06Empty\x00");
    assert_eq!(encode_to_vec(&req, 5), b"\x02\x06Empty\x02\x09consumer\x00");
    assert_eq!(encode_to_vec(&req, 0), b"");
    let back: ListGroupsRequest = decode_exact(b"\x02\x06Empty\x00", 4).unwrap();
    assert_eq!(back.states_filter, vec!["Empty"]);
    assert!(back.types_filter.is_empty());
}

#[test]
fn offset_fetch_null_topics_only_from_v2() {
    let null_topics = b"\x00\x01g\xff\xff\xff\xff";
    assert!(decode_exact::<OffsetFetchRequest>(null_topics, 1).is_err());
    let all: OffsetFetchRequest = decode_exact(null_topics, 2).unwrap();
    assert_eq!(all.group_id, "g");
    assert_eq!(all.topics, None);
}

#[test]
fn offset_fetch_v8_batches_groups() {
    let req = OffsetFetchRequest {
        groups: vec![
            OffsetFetchRequestGroup {
                group_id: "a".into(),
                topics: None,
                ..Default::default()
            },
            OffsetFetchRequestGroup {
                group_id: "b".into(),
                topics: Some(vec![OffsetFetchRequestTopics {
                    name: "t".into(),
                    partition_indexes: vec![3],
                    ..Default::default()
                }]),
                ..Default::default()
            },
        ],
        require_stable: true,
        ..Default::default()
    };
    let bytes = encode_to_vec(&req, 8);
    assert_eq!(
        bytes,
        [
            3, // two groups
            2, b'a', 0, 0, // "a", null topics, tags
            2, b'b', 2, 2, b't', 2, 0, 0, 0, 3, 0, 0, // "b", [t: [3]]
            1, 0 // require stable, tags
        ]
    );
    assert_eq!(decode_exact::<OffsetFetchRequest>(&bytes, 8).unwrap(), req);
    // v9 adds the member id (null) and epoch (-1) to each group.
    let v9 = encode_to_vec(&req, 9);
    assert_eq!(&v9[1..8], &[2, b'a', 0, 0xff, 0xff, 0xff, 0xff]);

    let resp = OffsetFetchResponse {
        groups: vec![OffsetFetchResponseGroup {
            group_id: "a".into(),
            error_code: ErrorCode::NOT_COORDINATOR,
            ..Default::default()
        }],
        ..Default::default()
    };
    // Throttle, one group: "a", no topics, NOT_COORDINATOR (16), tags.
    assert_eq!(
        encode_to_vec(&resp, 8),
        [0, 0, 0, 0, 2, 2, b'a', 1, 0, 16, 0, 0]
    );
}
