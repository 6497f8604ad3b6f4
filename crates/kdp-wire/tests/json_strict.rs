//! Strictness of the JSON form (`kdp_wire::json::from_str`): schema
//! defaults for missing defaulted fields, errors naming the field path for
//! everything else.

use kdp_wire::json::{self, JsonError};
use kdp_wire::messages::{DescribeProducersRequest, DescribeProducersResponse, ProducerState};
use kdp_wire::{decode_exact, encode_to_vec};

const SEED_JSON: &str = include_str!("../../../vectors/seed-example.json");
const SEED_BIN: &[u8] = include_bytes!("../../../vectors/seed-example.bin");

/// A response with one producer whose fields are `producer` (JSON members).
fn with_producer(producer: &str) -> String {
    format!(
        r#"{{"ThrottleTimeMs": 0, "Topics": [{{"Name": "t", "Partitions": [{{
            "PartitionIndex": 0, "ErrorCode": 0, "ActiveProducers": [{{{producer}}}]}}]}}]}}"#
    )
}

fn response(text: &str) -> Result<DescribeProducersResponse, JsonError> {
    json::from_str(text)
}

#[test]
fn missing_defaulted_fields_take_the_schema_default() {
    let r = response(&with_producer(
        r#""ProducerId": 5, "ProducerEpoch": 1, "CoordinatorEpoch": 2"#,
    ))
    .unwrap();
    let p = &r.topics[0].partitions[0];
    assert_eq!(p.error_message, None);
    assert_eq!(
        p.active_producers[0],
        ProducerState {
            producer_id: 5,
            producer_epoch: 1,
            coordinator_epoch: 2,
            last_sequence: -1,
            last_timestamp: -1,
            current_txn_start_offset: -1,
            ..ProducerState::default()
        }
    );
    // Missing and explicit defaults encode alike.
    let explicit = response(&with_producer(
        r#""ProducerId": 5, "ProducerEpoch": 1, "CoordinatorEpoch": 2, "LastSequence": -1,
           "LastTimestamp": -1, "CurrentTxnStartOffset": -1"#,
    ))
    .unwrap();
    assert_eq!(encode_to_vec(&r, 0), encode_to_vec(&explicit, 0));
}

#[test]
fn missing_required_fields_name_the_path() {
    let err = response(r#"{"Topics": []}"#).unwrap_err();
    assert_eq!(err.path, ".");
    assert_eq!(
        err.to_string(),
        ".: missing field `ThrottleTimeMs` at line 1 column 14"
    );

    let err = response(&with_producer(
        r#""ProducerEpoch": 1, "CoordinatorEpoch": 2"#,
    ))
    .unwrap_err();
    assert_eq!(err.path, "Topics[0].Partitions[0].ActiveProducers[0]");
    assert!(
        err.message.starts_with("missing field `ProducerId`"),
        "{err}"
    );

    for field in ["Name", "Partitions"] {
        let text = r#"{"ThrottleTimeMs": 0, "Topics": [{"Name": "t", "Partitions": []}]}"#
            .replace(&format!(r#""{field}": "#), r#""Other": "#);
        let err = response(&text).unwrap_err();
        assert_eq!(err.path, "Topics[0].Other", "{err}");
    }
    let text = r#"{"ThrottleTimeMs": 0, "Topics": [{"Partitions": []}]}"#;
    let err = response(text).unwrap_err();
    assert_eq!(err.path, "Topics[0]");
    assert!(err.message.starts_with("missing field `Name`"), "{err}");
}

#[test]
fn unknown_fields_name_the_path() {
    let err = response(r#"{"ThrottleTimeMs": 0, "Topics": [], "Extra": 1}"#).unwrap_err();
    assert_eq!(err.path, "Extra");
    assert!(err.message.starts_with("unknown field `Extra`"), "{err}");

    let err = response(&with_producer(
        r#""ProducerId": 5, "ProducerEpoch": 1, "CoordinatorEpoch": 2, "producerId": 6"#,
    ))
    .unwrap_err();
    assert_eq!(
        err.path,
        "Topics[0].Partitions[0].ActiveProducers[0].producerId"
    );
    assert!(
        err.message.starts_with("unknown field `producerId`"),
        "{err}"
    );

    let err = json::from_str::<DescribeProducersRequest>(
        r#"{"Topics": [{"Name": "t", "PartitionIndexes": [1], "Partitions": [2]}]}"#,
    )
    .unwrap_err();
    assert_eq!(err.path, "Topics[0].Partitions");
}

#[test]
fn out_of_range_numbers_name_the_path() {
    let text = r#"{"ThrottleTimeMs": 0, "Topics": [{"Name": "t", "Partitions": [{
        "PartitionIndex": 0, "ErrorCode": 70000, "ActiveProducers": []}]}]}"#;
    let err = response(text).unwrap_err();
    assert_eq!(err.path, "Topics[0].Partitions[0].ErrorCode");
    assert!(
        err.message
            .starts_with("invalid value: integer `70000`, expected i16"),
        "{err}"
    );

    let err = response(&with_producer(
        r#""ProducerId": 5, "ProducerEpoch": 2147483648, "CoordinatorEpoch": 2"#,
    ))
    .unwrap_err();
    assert_eq!(
        err.path,
        "Topics[0].Partitions[0].ActiveProducers[0].ProducerEpoch"
    );

    let err = response(&with_producer(
        r#""ProducerId": 9223372036854775808, "ProducerEpoch": 1, "CoordinatorEpoch": 2"#,
    ))
    .unwrap_err();
    assert_eq!(
        err.path,
        "Topics[0].Partitions[0].ActiveProducers[0].ProducerId"
    );

    let err = response(&with_producer(
        r#""ProducerId": 1.5, "ProducerEpoch": 1, "CoordinatorEpoch": 2"#,
    ))
    .unwrap_err();
    assert_eq!(
        err.path,
        "Topics[0].Partitions[0].ActiveProducers[0].ProducerId"
    );

    // The extremes themselves are fine.
    let r = response(&with_producer(
        r#""ProducerId": -9223372036854775808, "ProducerEpoch": 2147483647,
           "CoordinatorEpoch": -2147483648"#,
    ))
    .unwrap();
    assert_eq!(
        r.topics[0].partitions[0].active_producers[0].producer_id,
        i64::MIN
    );
}

#[test]
fn wrong_types_and_nulls_name_the_path() {
    let err = response(r#"{"ThrottleTimeMs": "0", "Topics": []}"#).unwrap_err();
    assert_eq!(err.path, "ThrottleTimeMs");
    let err = response(r#"{"ThrottleTimeMs": 0, "Topics": null}"#).unwrap_err();
    assert_eq!(err.path, "Topics");
    let err = response(r#"{"ThrottleTimeMs": 0, "Topics": [{"Name": null, "Partitions": []}]}"#)
        .unwrap_err();
    assert_eq!(err.path, "Topics[0].Name");
}

#[test]
fn trailing_content_is_rejected() {
    let err = response(r#"{"ThrottleTimeMs": 0, "Topics": []} {}"#).unwrap_err();
    assert_eq!(err.path, ".");
    assert!(err.message.contains("trailing"), "{err}");
    assert!(response(r#"{"ThrottleTimeMs": 0, "Topics": []}  "#).is_ok());
}

#[test]
fn tagged_fields_in_json() {
    let text = r#"{"ThrottleTimeMs": 0, "Topics": [],
        "UnknownTaggedFields": [{"Tag": 3, "Data": "0a0B"}, {"Tag": 1, "Data": ""}]}"#;
    let r = response(text).unwrap();
    let bin = encode_to_vec(&r, 0);
    // Sorted by tag on the wire: count 2, tag 1 size 0, tag 3 size 2.
    assert_eq!(bin, [0, 0, 0, 0, 1, 2, 1, 0, 3, 2, 0x0a, 0x0b]);
    assert_eq!(
        decode_exact::<DescribeProducersResponse>(&bin, 0).unwrap(),
        r
    );

    let dup = r#"{"ThrottleTimeMs": 0, "Topics": [],
        "UnknownTaggedFields": [{"Tag": 3, "Data": ""}, {"Tag": 3, "Data": "00"}]}"#;
    let err = response(dup).unwrap_err();
    assert_eq!(err.path, "UnknownTaggedFields");
    assert!(err.message.contains("duplicate tag"), "{err}");

    let bad_hex = r#"{"ThrottleTimeMs": 0, "Topics": [],
        "UnknownTaggedFields": [{"Tag": 3, "Data": "0g"}]}"#;
    assert_eq!(response(bad_hex).unwrap_err().path, "UnknownTaggedFields");
}

#[test]
fn seed_json_and_bytes_agree() {
    let r = response(SEED_JSON).unwrap();
    assert_eq!(encode_to_vec(&r, 0), SEED_BIN);
    let text = serde_json::to_string(&r).unwrap();
    assert_eq!(response(&text).unwrap(), r);
}
