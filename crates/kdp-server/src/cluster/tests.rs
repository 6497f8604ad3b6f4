//! The cluster file's parsing and checks.
#![allow(unused_imports)]

use std::time::{Duration, UNIX_EPOCH};

use kdp_wire::Uuid;

use super::file::*;
use super::timestamp::Timestamp;
use super::validate::*;
use super::*;

const NOW: i64 = 1_700_000_000_000;

fn at_now(text: &str) -> Result<Cluster, ClusterError> {
    Cluster::from_json_at(text, UNIX_EPOCH + Duration::from_millis(NOW as u64))
}

const SMALL: &str = r#"{
    "brokers": [{"id": 1}, {"id": 2, "host": "localhost", "rack": "b"}, {"id": 3}],
    "topics": [{
        "name": "orders",
        "partitions": [
            {"partition": 1, "leader": 2, "replicas": [2, 3, 1], "offline_replicas": [3],
             "producers": [{"ProducerId": 7, "ProducerEpoch": 2, "LastTimestamp": "now-90s"}],
             "replica_producers": {"1": [{"ProducerId": 7, "ProducerEpoch": 1}]}},
            {"partition": 0, "leader": 1, "replicas": [1, 2]}
        ]
    }, {"name": "__transaction_state", "partitions": [{"partition": 0, "leader": -1, "replicas": [1]}]}]
}"#;

#[test]
fn parses_with_defaults_and_overrides() {
    let c = at_now(SMALL).unwrap();
    assert_eq!(c.controller_id, 1);
    assert_eq!(c.cluster_id, "kdp-mock-cluster");
    let t = c.topic("orders").unwrap();
    assert!(!t.internal);
    assert!(c.topic("__transaction_state").unwrap().internal);
    assert_eq!(t.partitions[0].index, 0);
    let p = &t.partitions[1];
    assert_eq!(p.isr, vec![2, 1], "isr defaults to the online replicas");
    let on2 = p.producers_on(2);
    assert_eq!(on2.len(), 1);
    assert_eq!(on2[0].producer_epoch, 2);
    assert_eq!(on2[0].last_timestamp, NOW - 90_000);
    assert_eq!(on2[0].last_sequence, -1);
    assert_eq!(on2[0].current_txn_start_offset, -1);
    assert_eq!(on2[0].coordinator_epoch, 0);
    assert_eq!(p.producers_on(1)[0].producer_epoch, 1);
    assert_eq!(p.producers_on(1)[0].last_timestamp, -1);
    assert_ne!(t.topic_id, Uuid::ZERO);
    assert_eq!(t.topic_id, derived_topic_id("orders"));
    assert_eq!(c.partition("orders", 2), None);
    assert_eq!(c.partition("orders", -1), None);
}

fn err(text: &str) -> ClusterError {
    at_now(text).unwrap_err()
}

#[test]
fn parse_errors_name_the_path() {
    let e = err(
        r#"{"brokers": [{"id": 1}], "topics": [{"name": "a", "partitions": [
        {"partition": 0, "leader": 1, "replicas": [1], "producers": [{"ProducerId": 1, "Epoch": 3}]}]}]}"#,
    );
    assert_eq!(e.path, "topics[0].partitions[0].producers[0].Epoch");
    assert!(e.message.contains("Epoch"), "{e}");

    let e = err(
        r#"{"brokers": [{"id": 1}], "topics": [{"name": "a", "partitions": [
        {"partition": 0, "leader": 1, "replicas": [1], "producers": [{"ProducerId": 1, "LastTimestamp": "yesterday"}]}]}]}"#,
    );
    assert_eq!(e.path, "topics[0].partitions[0].producers[0].LastTimestamp");

    let e = err(r#"{"brokers": [{"id": 1}]} {}"#);
    assert_eq!(e.path, ".");
}

#[test]
fn semantic_errors_name_the_path() {
    let cases = [
        (r#"{"brokers": []}"#, "brokers"),
        (r#"{"brokers": [{"id": 1}, {"id": 1}]}"#, "brokers[1].id"),
        (
            r#"{"brokers": [{"id": 1}], "controller_id": 4}"#,
            "controller_id",
        ),
        (
            r#"{"brokers": [{"id": 1}], "topics": [{"name": "a b", "partitions": [{"partition": 0, "leader": 1, "replicas": [1]}]}]}"#,
            "topics[0].name",
        ),
        (
            r#"{"brokers": [{"id": 1}], "topics": [{"name": "a", "partitions": [{"partition": 1, "leader": 1, "replicas": [1]}]}]}"#,
            "topics[0].partitions[0].partition",
        ),
        (
            r#"{"brokers": [{"id": 1}, {"id": 2}], "topics": [{"name": "a", "partitions": [{"partition": 0, "leader": 2, "replicas": [1]}]}]}"#,
            "topics[0].partitions[0].leader",
        ),
        (
            r#"{"brokers": [{"id": 1}], "topics": [{"name": "a", "partitions": [{"partition": 0, "leader": 1, "replicas": [1, 5]}]}]}"#,
            "topics[0].partitions[0].replicas[1]",
        ),
        (
            r#"{"brokers": [{"id": 1}, {"id": 2}], "topics": [{"name": "a", "partitions": [{"partition": 0, "leader": 1, "replicas": [1], "isr": [2]}]}]}"#,
            "topics[0].partitions[0].isr[0]",
        ),
        (
            r#"{"brokers": [{"id": 1}, {"id": 2}], "topics": [{"name": "a", "partitions": [{"partition": 0, "leader": 1, "replicas": [1], "replica_producers": {"2": []}}]}]}"#,
            "topics[0].partitions[0].replica_producers.2",
        ),
        (
            r#"{"brokers": [{"id": 1}], "topics": [{"name": "a", "partitions": [{"partition": 0, "leader": 1, "replicas": [1], "producers": [{"ProducerId": 3}, {"ProducerId": 3}]}]}]}"#,
            "topics[0].partitions[0].producers[1].ProducerId",
        ),
        (
            r#"{"brokers": [{"id": 1}], "topics": [{"name": "a", "partitions": [{"partition": 0, "leader": 1, "replicas": [1]}]}, {"name": "a", "partitions": [{"partition": 0, "leader": 1, "replicas": [1]}]}]}"#,
            "topics[1].name",
        ),
    ];
    for (text, path) in cases {
        assert_eq!(err(text).path, path, "{text}");
    }
}

const TXN_BASE: &str = r#""brokers": [{"id": 1}, {"id": 2}], "topics": [
    {"name": "a", "partitions": [{"partition": 0, "leader": 1, "replicas": [1, 2]}]},
    {"name": "__transaction_state", "partitions": [
        {"partition": 0, "leader": 1, "replicas": [1]}, {"partition": 1, "leader": 2, "replicas": [2]}]}]"#;

#[test]
fn transaction_errors_name_the_path() {
    let cases = [
        (
            r#""transactions": [{"transactional_id": "", "producer_id": 1, "state": "Empty"}]"#,
            "transactions[0].transactional_id",
        ),
        (
            r#""transactions": [{"transactional_id": "x", "producer_id": 1, "state": "Running"}]"#,
            "transactions[0].state",
        ),
        (
            r#""transactions": [{"transactional_id": "x", "producer_id": 1, "state": "Empty", "producer_epoch": 40000}]"#,
            "transactions[0].producer_epoch",
        ),
        (
            r#""transactions": [{"transactional_id": "x", "producer_id": 1, "state": "Empty", "timeout_ms": 0}]"#,
            "transactions[0].timeout_ms",
        ),
        (
            r#""transactions": [{"transactional_id": "x", "producer_id": 1, "state": "Empty", "coordinator": 9}]"#,
            "transactions[0].coordinator",
        ),
        (
            r#""transactions": [{"transactional_id": "x", "producer_id": 1, "state": "Ongoing", "partitions": {"b": [0]}}]"#,
            "transactions[0].partitions.b",
        ),
        (
            r#""transactions": [{"transactional_id": "x", "producer_id": 1, "state": "Ongoing", "partitions": {"a": [0, 1]}}]"#,
            "transactions[0].partitions.a[1]",
        ),
        (
            r#""transactions": [{"transactional_id": "x", "producer_id": 1, "state": "Empty"}, {"transactional_id": "x", "producer_id": 2, "state": "Empty"}]"#,
            "transactions[1].transactional_id",
        ),
        (
            r#""acls": {"transactional_id_describe_deny": ["a*b"]}"#,
            "acls.transactional_id_describe_deny[0]",
        ),
        (
            r#""acls": {"cluster_deny": ["READ"]}"#,
            "acls.cluster_deny[0]",
        ),
        (r#""acls": {"topic_deny": []}"#, "acls.topic_deny"),
        (
            r#""acls": {"topic_read_deny": ["a*b"]}"#,
            "acls.topic_read_deny[0]",
        ),
        (
            r#""acls": {"principals": {"alice": {}}}"#,
            "acls.principals.alice",
        ),
        (
            r#""acls": {"principals": {"User:a": {"topic_describe_deny": ["x*y"]}}}"#,
            "acls.principals.User:a.topic_describe_deny[0]",
        ),
        (
            r#""acls": {"principals": {"User:a": {"principals": {"User:b": {}}}}}"#,
            "acls.principals.User:a.principals.User:b",
        ),
        (
            r#""sasl": {"users": [{"name": "", "password": "p"}]}"#,
            "sasl.users[0].name",
        ),
        (
            r#""sasl": {"users": [{"name": "a", "password": "p"}, {"name": "a", "password": "q"}]}"#,
            "sasl.users[1].name",
        ),
        (
            r#""sasl": {"users": [{"name": "a", "password": ""}]}"#,
            "sasl.users[0].password",
        ),
        (
            r#""sasl": {"users": [{"name": "a", "password": "p", "mechanisms": ["GSSAPI"]}]}"#,
            "sasl.users[0].mechanisms[0]",
        ),
        (
            r#""sasl": {"users": [{"name": "a", "password": "p", "mechanisms": []}]}"#,
            "sasl.users[0].mechanisms",
        ),
        (
            r#""sasl": {"users": [{"name": "a", "password": "p", "iterations": 100}]}"#,
            "sasl.users[0].iterations",
        ),
        (
            r#""sasl": {"users": [{"name": "a", "pasword": "p"}]}"#,
            "sasl.users[0].pasword",
        ),
    ];
    for (extra, path) in cases {
        let text = format!("{{{TXN_BASE}, {extra}}}");
        assert_eq!(err(&text).path, path, "{text}");
    }
    // Without __transaction_state, a transaction needs its coordinator.
    let e = err(
        r#"{"brokers": [{"id": 1}], "transactions": [{"transactional_id": "x", "producer_id": 1, "state": "Empty"}]}"#,
    );
    assert_eq!(e.path, "transactions[0].coordinator");
    let e = err(r#"{"brokers": [{"id": 1, "configs": {"transaction.max.timeout.ms": "15m"}}]}"#);
    assert_eq!(e.path, "brokers[0].configs.transaction.max.timeout.ms");
    // The internal topics' settings: a number in Kafka's range (partition
    // counts up to the mock's bound).
    for (key, value, says) in [
        ("offsets.topic.num.partitions", "0", "0 is not in 1..=10000"),
        (
            "offsets.topic.num.partitions",
            "10001",
            "10001 is not in 1..=10000",
        ),
        (
            "offsets.topic.replication.factor",
            "three",
            "\"three\" is not a number",
        ),
        (
            "transaction.state.log.num.partitions",
            "-1",
            "-1 is not in 1..=10000",
        ),
        (
            "transaction.state.log.replication.factor",
            "32768",
            "32768 is not in 1..=32767",
        ),
    ] {
        let e = err(&format!(
            r#"{{"brokers": [{{"id": 1}}, {{"id": 2, "configs": {{"{key}": "{value}"}}}}]}}"#
        ));
        assert_eq!(e.path, format!("brokers[1].configs.{key}"));
        assert!(e.message.starts_with(says), "{e}");
    }
    let c = at_now(
        r#"{"brokers": [{"id": 1, "configs": {"transaction.state.log.num.partitions": "10000",
            "transaction.state.log.replication.factor": "1"}}]}"#,
    )
    .unwrap();
    assert_eq!(
        c.internal_topic_settings(TRANSACTION_STATE_TOPIC, 1),
        Some((10_000, 1))
    );
}

#[test]
fn offsets_default_and_are_checked() {
    let c = at_now(
        r#"{"brokers": [{"id": 1}, {"id": 2}], "topics": [{"name": "a", "partitions": [
            {"partition": 0, "leader": 1, "replicas": [1, 2],
             "producers": [{"ProducerId": 1, "CurrentTxnStartOffset": 40}, {"ProducerId": 2, "CurrentTxnStartOffset": 30}],
             "replica_producers": {"2": [{"ProducerId": 1, "CurrentTxnStartOffset": 70}]}},
            {"partition": 1, "leader": 2, "replicas": [2], "high_watermark": 9}]}]}"#,
    )
    .unwrap();
    let p = c.partition("a", 0).unwrap();
    // One past the largest open transaction start on any replica; the
    // LSO is the leader's earliest.
    assert_eq!((p.high_watermark, p.last_stable_offset()), (71, 30));
    let p = c.partition("a", 1).unwrap();
    assert_eq!((p.high_watermark, p.last_stable_offset()), (9, 9));
    let e = err(
        r#"{"brokers": [{"id": 1}], "topics": [{"name": "a", "partitions": [
            {"partition": 0, "leader": 1, "replicas": [1], "high_watermark": 40,
             "producers": [{"ProducerId": 1, "CurrentTxnStartOffset": 40}]}]}]}"#,
    );
    assert_eq!(e.path, "topics[0].partitions[0].high_watermark");
    let e = err(
        r#"{"brokers": [{"id": 1}], "topics": [{"name": "a", "partitions": [
            {"partition": 0, "leader": 1, "replicas": [1], "high_watermark": 4, "last_stable_offset": 5}]}]}"#,
    );
    assert_eq!(e.path, "topics[0].partitions[0].last_stable_offset");
}

#[test]
fn transactions_are_placed_by_kafkas_rule_or_the_file() {
    let text = format!(
        r#"{{{TXN_BASE}, "transactions": [
            {{"transactional_id": "hello", "producer_id": 1, "state": "Ongoing", "start_time": "now-5m", "partitions": {{"a": [0]}}}},
            {{"transactional_id": "y", "producer_id": 2, "state": "Empty", "coordinator": 1}}]}}"#
    );
    let c = at_now(&text).unwrap();
    // "hello".hashCode() = 99162322, even: partition 0 of 2, led by 1.
    assert_eq!(c.transaction_coordinator("hello"), Some(1));
    // "a".hashCode() = 97, odd: partition 1, led by 2 (no entry needed).
    assert_eq!(c.transaction_coordinator("a"), Some(2));
    // "y".hashCode() = 121 would give partition 1 (broker 2); the file says 1.
    assert_eq!(c.transaction_coordinator("y"), Some(1));
    let t = c.transaction("hello").unwrap();
    assert_eq!(t.start_time_ms, NOW - 300_000);
    assert_eq!((t.timeout_ms, t.producer_epoch), (60_000, 0));
    assert!(t.has_partition("a", 0));
    let mut c = c;
    assert_eq!(c.allocate_producer_id(), 1000);
}

#[test]
fn the_documented_example_parses() {
    let doc = include_str!("../../../../docs/CLUSTER_FILE.md");
    let start = doc.find("```json\n").unwrap() + "```json\n".len();
    let len = doc[start..].find("```").unwrap();
    let c = at_now(&doc[start..start + len]).unwrap();
    assert_eq!(
        c.partition("orders", 0).unwrap().producers_on(3)[0].producer_epoch,
        11
    );
    assert_eq!(c.partition("orders", 1).unwrap().isr, vec![2, 1]);
}

#[test]
fn timestamps() {
    assert_eq!(Timestamp::parse("now").unwrap().resolve(NOW), NOW);
    assert_eq!(
        Timestamp::parse("now-2h 5m").unwrap().resolve(NOW),
        NOW - (2 * 3600 + 5 * 60) * 1000
    );
    assert_eq!(
        Timestamp::parse("1970-01-01T00:00:01Z")
            .unwrap()
            .resolve(NOW),
        1000
    );
    assert!(Timestamp::parse("soon").is_err());
}

#[test]
fn topic_name_rules_match_kafka() {
    assert!(validate_topic_name("orders.v1_x-y").is_ok());
    assert_eq!(
        validate_topic_name("").unwrap_err(),
        "Topic name is invalid: the empty string is not allowed"
    );
    assert_eq!(
        validate_topic_name("..").unwrap_err(),
        "Topic name is invalid: '..' is not allowed"
    );
    assert!(validate_topic_name(&"a".repeat(249)).is_ok());
    assert!(validate_topic_name(&"a".repeat(250))
        .unwrap_err()
        .contains("longer than the max allowed length 249"));
    assert_eq!(
        validate_topic_name("a/b").unwrap_err(),
        "Topic name is invalid: 'a/b' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    );
}

#[test]
fn users_and_principal_rules() {
    let c = Cluster::from_json(
        r#"{"brokers": [{"id": 1}],
            "sasl": {"users": [
                {"name": "alice", "password": "alice-pw"},
                {"name": "bob", "password": "bob-pw", "mechanisms": ["SCRAM-SHA-512"], "iterations": 8192}
            ]},
            "acls": {"transactional_id_describe_allow": ["app-*"],
                     "principals": {"User:bob": {"topic_read_deny": ["payroll"]}}}}"#,
    )
    .unwrap();
    assert!(c.users.is_enabled());
    let alice = c.users.get("alice").unwrap();
    assert!(alice.plain_password_matches(b"alice-pw"));
    let bob = c.users.get("bob").unwrap();
    assert!(!bob.plain_password_matches(b"bob-pw"));
    assert_eq!(
        bob.scram(kdp_scram::Mechanism::Sha512).unwrap().iterations,
        8192
    );
    assert!(!format!("{c:?}").contains("-pw"));
    use crate::acls::{TopicOperation, TxnIdOperation};
    assert!(!c
        .acls
        .allows_topic("User:bob", TopicOperation::Read, "payroll"));
    assert!(c
        .acls
        .allows_topic("User:alice", TopicOperation::Read, "payroll"));
    assert!(!c
        .acls
        .allows_transactional_id("User:alice", TxnIdOperation::Describe, "x"));
    assert!(c
        .acls
        .allows_transactional_id("User:bob", TxnIdOperation::Describe, "x"));
    // A password of the wrong type is refused without being quoted.
    let e = Cluster::from_json(
        r#"{"brokers": [{"id": 1}], "sasl": {"users": [{"name": "a", "password": 918273645}]}}"#,
    )
    .unwrap_err();
    assert_eq!(e.path, "sasl.users[0].password");
    assert!(!e.to_string().contains("918273645"), "{e}");
}

#[test]
fn group_errors_name_the_path() {
    let base = r#"{"brokers": [{"id": 1}], "topics": [{"name": "a", "partitions": [{"partition": 0, "leader": 1, "replicas": [1]}]}], "groups": GROUPS}"#;
    let cases = [
        (r#"[{"group_id": ""}]"#, "groups[0].group_id"),
        (
            r#"[{"group_id": "g"}, {"group_id": "g"}]"#,
            "groups[1].group_id",
        ),
        (r#"[{"group_id": "g", "type": "stream"}]"#, "groups[0].type"),
        (
            r#"[{"group_id": "g", "type": "streams", "members": [{"member_id": "m"}]}]"#,
            "groups[0].members[0].process_id",
        ),
        (
            r#"[{"group_id": "g", "type": "share", "state": "Assigning", "members": [{"member_id": "m"}]}]"#,
            "groups[0].state",
        ),
        (
            r#"[{"group_id": "g", "type": "consumer", "state": "PreparingRebalance", "members": [{"member_id": "m"}]}]"#,
            "groups[0].state",
        ),
        (r#"[{"group_id": "g", "state": "Dead"}]"#, "groups[0].state"),
        (
            r#"[{"group_id": "g", "state": "Empty", "members": [{"member_id": "m"}]}]"#,
            "groups[0].state",
        ),
        (
            r#"[{"group_id": "g", "state": "Stable"}]"#,
            "groups[0].members",
        ),
        (
            r#"[{"group_id": "g", "members": [{"member_id": "m"}, {"member_id": "m"}]}]"#,
            "groups[0].members[1].member_id",
        ),
        (
            r#"[{"group_id": "g", "members": [{"member_id": "m", "assignment": {"a": [1]}}]}]"#,
            "groups[0].members[0].assignment.a[0]",
        ),
        (
            r#"[{"group_id": "g", "offsets": {"b": {"0": 1}}}]"#,
            "groups[0].offsets.b.0",
        ),
        (
            r#"[{"group_id": "g", "offsets": {"a": {"0": -1}}}]"#,
            "groups[0].offsets.a.0",
        ),
        (r#"[{"group_id": "g", "color": "red"}]"#, "groups[0]"),
    ];
    for (groups, path) in cases {
        let err = Cluster::from_json(&base.replace("GROUPS", groups)).unwrap_err();
        assert!(err.path.starts_with(path), "{groups}: {err}");
    }
    let ok = Cluster::from_json(&base.replace(
        "GROUPS",
        r#"[{"group_id": "g", "members": [{"member_id": "m", "assignment": {"a": [0]}}], "offsets": {"a": {"0": 7}}}]"#,
    ))
    .unwrap();
    let g = ok.group("g").unwrap();
    assert_eq!(g.state, crate::group::GroupState::Stable);
    assert_eq!(
        (g.committed("a", 0), g.protocol.as_str()),
        (Some(7), "range")
    );
}

#[test]
fn groups_and_transactions_bring_their_internal_topic() {
    // Three brokers: both topics made at load with the controller's
    // settings (broker 2: 6 partitions of 2 replicas for the groups).
    let c = at_now(
        r#"{"controller_id": 2, "brokers": [{"id": 1}, {"id": 2, "configs": {
                "offsets.topic.num.partitions": "6", "offsets.topic.replication.factor": "2"}}, {"id": 3}],
            "transactions": [{"transactional_id": "x", "producer_id": 1, "state": "Empty", "coordinator": 1},
                             {"transactional_id": "y", "producer_id": 2, "state": "Empty"}],
            "groups": [{"group_id": "g"}]}"#,
    )
    .unwrap();
    let offsets = c.topic(GROUP_METADATA_TOPIC).expect("__consumer_offsets");
    assert!(offsets.internal);
    assert_eq!(offsets.partitions.len(), 6);
    assert!(offsets.partitions.iter().all(|p| p.replicas.len() == 2));
    assert_eq!(
        c.topic(TRANSACTION_STATE_TOPIC).unwrap().partitions.len(),
        50
    );
    // "g".hashCode() = 103, % 6 = 1: led by broker 2.
    assert_eq!(c.group_coordinator("g"), Some(2));
    // Without a coordinator of its own, "y" is placed by the hash rule on
    // the topic just made: "y".hashCode() = 121, % 50 = 21, led by broker 1.
    assert_eq!(c.transaction_coordinator("y"), Some(1));
    // Nothing asks for them: not made.
    let c = at_now(r#"{"brokers": [{"id": 1}, {"id": 2}, {"id": 3}]}"#).unwrap();
    assert!(c.topic(GROUP_METADATA_TOPIC).is_none() && c.topic(TRANSACTION_STATE_TOPIC).is_none());
    // One broker cannot hold 3 replicas: the group has no coordinator.
    let c = at_now(r#"{"brokers": [{"id": 1}], "groups": [{"group_id": "g"}]}"#).unwrap();
    assert!(c.topic(GROUP_METADATA_TOPIC).is_none());
    assert_eq!(c.group_coordinator("g"), None);
}
