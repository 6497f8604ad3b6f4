//! The error-code and API-key tables cross-checked against the `kafka-protocol` crate, an
//! independent transcription of Kafka's `Errors.java` and message schemas. Wherever both define
//! an entry they must agree, except for the differences listed here, each with its reason.
//! (kafka-protocol keeps Kafka's messages only as doc comments, so messages are not compared.)

use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::ApiKey as KpApiKey;
use kdp_wire::api::{self, ApiKey};
use kdp_wire::error_code::{ErrorCode, ERRORS};

/// `NOT_LEADER_OR_FOLLOWER` as `NotLeaderOrFollower`, kafka-protocol's variant name.
fn camel(name: &str) -> String {
    name.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next().map_or(String::new(), |first| {
                first.to_string() + &c.as_str().to_ascii_lowercase()
            })
        })
        .collect()
}

/// Retriable flags where kdp follows Kafka's exception hierarchy and kafka-protocol does not:
/// `ConcurrentTransactionsException extends RetriableException` in Kafka.
const RETRIABLE_DIFFERS: &[ErrorCode] = &[ErrorCode::CONCURRENT_TRANSACTIONS];

#[test]
fn error_codes_agree_with_kafka_protocol() {
    let mut compared = 0;
    for e in ERRORS.iter().filter(|e| e.code != ErrorCode::NONE) {
        let Some(theirs) = ResponseError::try_from_code(e.code.0) else {
            panic!("{} has no error in kafka-protocol", e.name);
        };
        if let ResponseError::Unknown(_) = theirs {
            continue; // newer than the crate
        }
        compared += 1;
        assert_eq!(theirs.code(), e.code.0);
        assert_eq!(theirs.to_string(), camel(e.name), "name of {}", e.code);
        assert_eq!(
            theirs.is_retriable() != e.retriable,
            RETRIABLE_DIFFERS.contains(&e.code),
            "retriable flag of {}",
            e.name
        );
        // The typed view says the same as the row.
        let code = e.code;
        assert_eq!(code.is_retriable(), e.retriable);
        assert_eq!(code.name(), Some(e.name));
    }
    assert!(compared > 120, "only {compared} codes compared");
    // Codes neither side defines stay unknown on both.
    for code in [-2, 134, 1000, i16::MAX] {
        assert!(ErrorCode(code).info().is_none());
        assert_eq!(
            ResponseError::try_from_code(code),
            Some(ResponseError::Unknown(code))
        );
    }
}

/// Keys Kafka renamed after kdp's table was written: 74 became `ListConfigResources` in Kafka
/// 4.1 (KIP-1142); kdp keeps the name its table was built with.
const NAME_DIFFERS: &[(i16, &str)] = &[(api::LIST_CLIENT_METRICS_RESOURCES, "ListConfigResources")];

#[test]
fn api_keys_agree_with_kafka_protocol() {
    let mut compared = 0;
    for theirs in KpApiKey::iter() {
        let key = theirs as i16;
        let Some(ours) = api::info(key) else {
            continue; // newer than kdp's table
        };
        compared += 1;
        let theirs_name = format!("{theirs:?}");
        match NAME_DIFFERS.iter().find(|(k, _)| *k == key) {
            Some((_, renamed)) => assert_eq!(theirs_name, *renamed),
            None => assert_eq!(theirs_name, ours.name, "name of key {key}"),
        }
        assert_eq!(ApiKey(key).name(), Some(ours.name));
        let range = theirs.valid_versions();
        for version in range.min..=range.max {
            let flexible = theirs.request_header_version(version) >= 2;
            assert_eq!(
                api::is_flexible(key, version),
                flexible,
                "{} v{version}",
                ours.name
            );
            assert_eq!(ApiKey(key).is_flexible(version), flexible);
        }
    }
    assert!(compared > 80, "only {compared} keys compared");
}
