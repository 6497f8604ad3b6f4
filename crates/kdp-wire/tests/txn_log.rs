//! `__transaction_state` records (TransactionLogKey, TransactionLogValue)
//! and the partition rule, against bytes and partitions that Kafka's own
//! classes made: `vectors/txn-log/kafka-<version>.json`, written by
//! `it/src/main/java/dev/kdp/it/TxnLogVectors.java` (Kafka's generated
//! message classes, `MessageUtil.toVersionPrefixedBytes`, `String.hashCode`
//! and `Utils.abs`) from Kafka 4.4.0 and 3.9.2 (`real_kafka_history.rs`
//! runs the class again and checks that the files are what it prints).
//! Then round trips of random records, every prefix of every vector, and
//! the strict decoder's errors.

use std::path::{Path, PathBuf};

use proptest::prelude::*;

use kdp_wire::coordinator::txn_log::{
    decode_entry, java_string_hash, key_transactional_id, partition_for, PartitionsSchema,
    TransactionLogKey, TransactionLogValue, TxnLogEntry,
};
use kdp_wire::coordinator::{decode_record, encode_record, record_len, CoordinatorRecord};
use kdp_wire::testgen::{Gen, Random};
use kdp_wire::{hex, DecodeErrorKind, TaggedField, TaggedFields, TxnState};

fn vectors(version: &str) -> serde_json::Value {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../vectors/txn-log")
        .join(format!("kafka-{version}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn parts(list: &[(&str, &[i32])]) -> Option<Vec<PartitionsSchema>> {
    Some(
        list.iter()
            .map(|(t, ids)| PartitionsSchema {
                topic: (*t).to_string(),
                partition_ids: ids.to_vec(),
                ..Default::default()
            })
            .collect(),
    )
}

/// The values TxnLogVectors.java encodes, by name (the same table).
fn expected(name: &str) -> (i16, TransactionLogValue) {
    let two = || parts(&[("orders", &[0, 3]), ("payments", &[7])]);
    let v = |version,
             producer_id,
             previous_producer_id,
             next_producer_id,
             producer_epoch,
             next_producer_epoch,
             transaction_timeout_ms,
             transaction_status,
             transaction_partitions,
             transaction_last_update_timestamp_ms,
             transaction_start_timestamp_ms,
             client_transaction_version| {
        (
            version,
            TransactionLogValue {
                producer_id,
                previous_producer_id,
                next_producer_id,
                producer_epoch,
                next_producer_epoch,
                transaction_timeout_ms,
                transaction_status,
                transaction_partitions,
                transaction_last_update_timestamp_ms,
                transaction_start_timestamp_ms,
                client_transaction_version,
                unknown_tagged_fields: TaggedFields::default(),
            },
        )
    };
    match name {
        "v0-empty" => v(0, 1000, -1, -1, 0, -1, 60000, 0, None, 1796287460449, -1, 0),
        "v0-ongoing" => v(
            0,
            1000,
            -1,
            -1,
            5,
            -1,
            60000,
            1,
            two(),
            1796287461078,
            1796287461078,
            0,
        ),
        "v0-complete-commit" => v(
            0,
            i64::MAX,
            -1,
            -1,
            i16::MAX,
            -1,
            i32::MAX,
            4,
            Some(Vec::new()),
            1796287461395,
            1796287461078,
            0,
        ),
        "v1-empty-defaults" => v(1, 0, -1, -1, 0, -1, 3600000, 0, None, 1796287460449, -1, 0),
        "v1-empty-4x" => v(
            1,
            1001,
            1001,
            -1,
            2,
            -1,
            30000,
            0,
            None,
            1796287530427,
            -1,
            2,
        ),
        "v1-prepare-commit-tv2" => v(
            1,
            1000,
            1000,
            -1,
            1,
            -1,
            3600000,
            2,
            two(),
            1796287477174,
            1796287477113,
            2,
        ),
        "v1-rollover" => v(
            1,
            4000,
            4000,
            5001,
            i16::MAX,
            0,
            60000,
            2,
            two(),
            1796287477174,
            1796287477113,
            2,
        ),
        "v1-prepare-abort-timeout" => v(
            1,
            2,
            2,
            -1,
            1,
            -1,
            2000,
            3,
            parts(&[("t", &[2])]),
            1796287497157,
            1796287488127,
            2,
        ),
        "v1-unicode-topic" => v(
            1,
            7,
            -1,
            -1,
            3,
            -1,
            60000,
            5,
            parts(&[("zahlungen-€-😀", &[])]),
            1,
            0,
            0,
        ),
        other => panic!("no expected value for vector {other}"),
    }
}

#[test]
fn values_are_kafkas_bytes_field_by_field() {
    for (kafka, count) in [("4.4.0", 9), ("3.9.2", 5)] {
        let doc = vectors(kafka);
        let values = doc["values"].as_array().unwrap();
        assert_eq!(values.len(), count, "{kafka}");
        for item in values {
            let name = item["name"].as_str().unwrap();
            let bytes = hex::decode(item["hex"].as_str().unwrap()).unwrap();
            let (version, value) = expected(name);
            let decoded = decode_record::<TransactionLogValue>(&bytes)
                .unwrap_or_else(|e| panic!("{kafka} {name}: {e}"));
            assert_eq!(decoded.version, version, "{kafka} {name}");
            assert_eq!(decoded.record, value, "{kafka} {name}");
            assert_eq!(encode_record(&value, version), bytes, "{kafka} {name}");
            assert_eq!(record_len(&value, version), bytes.len(), "{kafka} {name}");
        }
    }
}

#[test]
fn states_are_kafkas_ids() {
    let (_, v) = expected("v1-prepare-abort-timeout");
    assert_eq!(v.state(), Some(TxnState::PrepareAbort));
    let (_, v) = expected("v0-complete-commit");
    assert_eq!(v.state(), Some(TxnState::CompleteCommit));
    let (_, v) = expected("v0-ongoing");
    assert_eq!(
        v.partitions().collect::<Vec<_>>(),
        [("orders", 0), ("orders", 3), ("payments", 7)]
    );
}

#[test]
fn keys_are_kafkas_bytes() {
    for kafka in ["4.4.0", "3.9.2"] {
        let doc = vectors(kafka);
        let keys = doc["keys"].as_array().unwrap();
        assert!(keys.len() >= 8);
        for item in keys {
            let id = item["id"].as_str().unwrap();
            let bytes = hex::decode(item["hex"].as_str().unwrap()).unwrap();
            let key = TransactionLogKey {
                transactional_id: id.to_string(),
                ..Default::default()
            };
            assert_eq!(encode_record(&key, 0), bytes, "{kafka} {id:?}");
            let decoded = decode_record::<TransactionLogKey>(&bytes).unwrap();
            assert_eq!((decoded.version, decoded.record), (0, key));
            assert_eq!(key_transactional_id(&bytes).unwrap(), id);
        }
    }
}

#[test]
fn partitions_are_javas_hash_rule() {
    let mut checked = 0;
    for kafka in ["4.4.0", "3.9.2"] {
        let doc = vectors(kafka);
        for item in doc["partitions"].as_array().unwrap() {
            let id = item["id"].as_str().unwrap();
            let hash = item["hashCode"].as_i64().unwrap();
            assert_eq!(i64::from(java_string_hash(id)), hash, "{id:?}");
            for (count, partition) in item["partitions"].as_object().unwrap() {
                let count: i32 = count.parse().unwrap();
                assert_eq!(
                    partition_for(id, count).map(i64::from),
                    partition.as_i64(),
                    "{id:?} of {count}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 200, "{checked}");
    // Integer.MIN_VALUE's absolute value is 0 in Kafka's Utils.abs.
    assert_eq!(java_string_hash("polygenelubricants"), i32::MIN);
    assert_eq!(partition_for("polygenelubricants", 50), Some(0));
    assert_eq!(partition_for("tx", 0), None);
    assert_eq!(partition_for("tx", -3), None);
}

/// Values whose fields carry edge values, in `version`.
fn random_value(seed: u64, version: i16) -> TransactionLogValue {
    let mut g = Gen::new(seed);
    TransactionLogValue::random(&mut g, TransactionLogValue::wire_version(version), false)
}

proptest! {
    #[test]
    fn random_values_round_trip(seed in any::<u64>(), version in 0i16..=1) {
        let value = random_value(seed, version);
        let bytes = encode_record(&value, version);
        prop_assert_eq!(bytes.len(), record_len(&value, version));
        let back = decode_record::<TransactionLogValue>(&bytes).unwrap();
        prop_assert_eq!(back.version, version);
        prop_assert_eq!(&back.record, &value);
        // The JSON form reads back to the same value.
        let json = serde_json::to_string(&value).unwrap();
        let from_json: TransactionLogValue = kdp_wire::json::from_str(&json).unwrap();
        prop_assert_eq!(from_json, value);
    }

    #[test]
    fn random_keys_round_trip(seed in any::<u64>()) {
        let mut g = Gen::new(seed);
        let key = TransactionLogKey::random(&mut g, TransactionLogKey::wire_version(0), false);
        let bytes = encode_record(&key, 0);
        prop_assert_eq!(decode_record::<TransactionLogKey>(&bytes).unwrap().record, key);
    }

    #[test]
    fn hostile_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..96)) {
        // Whatever decodes re-encodes to the same bytes.
        if let Ok(v) = decode_record::<TransactionLogValue>(&bytes) {
            prop_assert_eq!(v.to_bytes(), bytes.clone());
        }
        if let Ok(k) = decode_record::<TransactionLogKey>(&bytes) {
            prop_assert_eq!(k.to_bytes(), bytes.clone());
        }
        let _ = decode_entry(&bytes, Some(&bytes));
    }
}

#[test]
fn every_prefix_of_every_vector_is_an_error_within_it() {
    let doc = vectors("4.4.0");
    let mut vectors: Vec<Vec<u8>> = doc["values"]
        .as_array()
        .unwrap()
        .iter()
        .chain(doc["keys"].as_array().unwrap())
        .map(|v| hex::decode(v["hex"].as_str().unwrap()).unwrap())
        .collect();
    vectors.push(encode_record(&random_value(7, 1), 1));
    for bytes in &vectors {
        let is_key = decode_record::<TransactionLogKey>(bytes).is_ok();
        for cut in 0..bytes.len() {
            let prefix = &bytes[..cut];
            let err = if is_key {
                decode_record::<TransactionLogKey>(prefix).unwrap_err()
            } else {
                decode_record::<TransactionLogValue>(prefix).unwrap_err()
            };
            assert!(err.offset() <= cut, "cut {cut}: {err}");
            assert!(
                !err.path().is_empty() || cut >= 2,
                "cut {cut}: no field named: {err}"
            );
        }
    }
}

#[test]
fn errors_name_the_field_and_byte() {
    let (_, value) = expected("v1-prepare-commit-tv2");
    let bytes = encode_record(&value, 1);

    // A version this schema does not have.
    let mut v2 = bytes.clone();
    v2[1] = 2;
    let err = decode_record::<TransactionLogValue>(&v2).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            DecodeErrorKind::UnsupportedVersion { version: 2, .. }
        ),
        "{err}"
    );
    assert_eq!(err.path(), "Version");

    // Trailing bytes.
    let mut long = bytes.clone();
    long.push(0);
    let err = decode_record::<TransactionLogValue>(&long).unwrap_err();
    assert_eq!(err.offset(), bytes.len());
    assert!(matches!(
        err.kind(),
        DecodeErrorKind::TrailingBytes { count: 1 }
    ));

    // Cut inside the topic name: the path names it.
    let err = decode_record::<TransactionLogValue>(&bytes[..24]).unwrap_err();
    assert_eq!(err.path(), "TransactionPartitions[0].Topic", "{err}");

    // A known tag whose size holds more than its value: int64 in 9 bytes.
    let mut with_fat_tag = value.clone();
    with_fat_tag.previous_producer_id = -1;
    with_fat_tag.client_transaction_version = 0;
    let mut fat = encode_record(&with_fat_tag, 1);
    // The tag section is empty (one zero byte) at the end; replace it.
    assert_eq!(fat.pop(), Some(0));
    let section_at = fat.len();
    fat.extend([1, 0, 9]);
    fat.extend(1000i64.to_be_bytes());
    fat.push(0xff);
    let err = decode_record::<TransactionLogValue>(&fat).unwrap_err();
    assert!(
        matches!(
            err.kind(),
            DecodeErrorKind::TaggedFieldNotConsumed { tag: 0, left: 1 }
        ),
        "{err}"
    );
    assert_eq!(err.offset(), section_at + 3 + 8);
    assert_eq!(err.path(), "TaggedFields[0]");

    // A known tag cut short names the field.
    let mut short = encode_record(&with_fat_tag, 1);
    short.pop();
    short.extend([1, 0, 4]);
    short.extend([0, 0, 0, 1]);
    let err = decode_record::<TransactionLogValue>(&short).unwrap_err();
    assert_eq!(err.path(), "TaggedFields[0].PreviousProducerId", "{err}");
}

#[test]
fn unknown_tags_and_explicit_defaults_survive_a_round_trip() {
    let (_, mut value) = expected("v1-rollover");
    value.unknown_tagged_fields = TaggedFields::new(vec![
        TaggedField {
            tag: 2, // ClientTransactionVersion, but hidden by the declared field
            data: vec![0, 9],
        },
        TaggedField {
            tag: 9,
            data: vec![1, 2, 3],
        },
    ]);
    let bytes = encode_record(&value, 1);
    let back = decode_record::<TransactionLogValue>(&bytes).unwrap().record;
    assert_eq!(
        back.client_transaction_version, 2,
        "the declared field wins"
    );
    assert_eq!(back.unknown_tagged_fields.get(9), Some(&[1u8, 2, 3][..]));
    assert_eq!(back.unknown_tagged_fields.get(2), None);

    // A declared tag sent with its default value (Kafka never writes one):
    // the field reads as the default and the bytes are kept raw, so the
    // re-encoding is the same.
    let (_, plain) = expected("v1-empty-defaults");
    let mut bytes = encode_record(&plain, 1);
    assert_eq!(bytes.pop(), Some(0));
    bytes.extend([1, 1, 8]);
    bytes.extend((-1i64).to_be_bytes());
    let back = decode_record::<TransactionLogValue>(&bytes).unwrap();
    assert_eq!(back.record.next_producer_id, -1);
    assert_eq!(back.record.unknown_tagged_fields.len(), 1);
    assert_eq!(back.to_bytes(), bytes);

    // Version 0 has no tag section: tagged fields are not written there.
    let (_, four) = expected("v1-empty-4x");
    let v0 = encode_record(&four, 0);
    let back = decode_record::<TransactionLogValue>(&v0).unwrap().record;
    assert_eq!(
        (back.previous_producer_id, back.client_transaction_version),
        (-1, 0)
    );
}

#[test]
fn entries_are_states_or_tombstones() {
    let key = encode_record(
        &TransactionLogKey {
            transactional_id: "ledger-4".into(),
            ..Default::default()
        },
        0,
    );
    let (_, value) = expected("v1-empty-4x");
    let bytes = encode_record(&value, 1);
    match decode_entry(&key, Some(&bytes)).unwrap() {
        TxnLogEntry::State {
            transactional_id,
            value: v,
            ..
        } => {
            assert_eq!(transactional_id, "ledger-4");
            assert_eq!((v.version, v.record), (1, value));
        }
        other => panic!("{other:?}"),
    }
    let tomb = decode_entry(&key, None).unwrap();
    assert_eq!(tomb.transactional_id(), "ledger-4");
    assert!(matches!(tomb, TxnLogEntry::Tombstone { .. }));
    // A bad value names the part.
    let err = decode_entry(&key, Some(&bytes[..5])).unwrap_err();
    assert!(err.path().starts_with("Value."), "{err}");
    let err = decode_entry(&key[..3], None).unwrap_err();
    assert!(err.path().starts_with("Key."), "{err}");
}
