//! The internal topics as the mock serves them, frame in, frame out: made
//! by the first FindCoordinator that needs them (answered
//! COORDINATOR_NOT_AVAILABLE, as a broker answers while it asks the
//! controller), then found; listed as internal by Metadata; and read like
//! any topic: ListOffsets, Fetch of the coordinator's own records,
//! DescribeProducers, each behind the file's ACLs. On a paused clock.

use std::sync::Arc;

use kdp_server::broker::{handle_request_as, Advertised, Shared};
use kdp_server::clock::ManualClock;
use kdp_server::cluster::Cluster;
use kdp_server::AllowAll;
use kdp_wire::coordinator::txn_log::{decode_entry, partition_for, TxnLogEntry};
use kdp_wire::frame::{decode_response_frame, request_frame_to_vec};
use kdp_wire::messages::find_coordinator::{KEY_TYPE_GROUP, KEY_TYPE_TRANSACTION};
use kdp_wire::messages::*;
use kdp_wire::records::{Batches, DEFAULT_MAX_DECOMPRESSED};
use kdp_wire::{ErrorCode, Request, RequestHeader, TxnState};

const NOW: i64 = 1_790_000_000_000;

/// Three brokers, one topic, no internal topic, transaction protocol v2;
/// `User:reader` may not read `__transaction_state`.
const CLUSTER: &str = r#"{
    "transaction_version": 2,
    "brokers": [{"id": 1}, {"id": 2}, {"id": 3}],
    "topics": [{"name": "orders", "partitions": [{"partition": 0, "leader": 1, "replicas": [1, 2, 3]}]}],
    "acls": {"principals": {"User:reader": {"topic_read_deny": ["__transaction_state"]}}}
}"#;

fn shared() -> Shared {
    let cluster = Cluster::from_json_at(
        CLUSTER,
        std::time::UNIX_EPOCH + std::time::Duration::from_millis(NOW as u64),
    )
    .unwrap();
    let advertised = (1..=3)
        .map(|id| Advertised {
            id,
            host: "127.0.0.1".into(),
            port: 9090 + id as u16,
        })
        .collect();
    Shared::new(cluster, advertised, Arc::new(AllowAll), 1 << 20)
        .with_clock(Arc::new(ManualClock::at(NOW)))
}

/// `req` at `version` to broker `broker` as `principal`, answered.
fn ask<R: Request>(s: &Shared, broker: i32, principal: &str, req: &R, version: i16) -> R::Response {
    let frame = request_frame_to_vec(
        &RequestHeader {
            request_api_key: R::API_KEY,
            request_api_version: version,
            correlation_id: 5,
            client_id: Some("internal-topics".into()),
            ..Default::default()
        },
        req,
    );
    let handled = handle_request_as(s, broker, &frame[4..], None, principal.into()).unwrap();
    decode_response_frame::<R::Response>(&handled.response, version)
        .unwrap()
        .1
}

fn find(s: &Shared, broker: i32, key_type: i8, keys: &[&str]) -> Vec<(ErrorCode, i32, i32)> {
    let req = FindCoordinatorRequest {
        key_type,
        coordinator_keys: keys.iter().map(|k| k.to_string()).collect(),
        ..Default::default()
    };
    ask(s, broker, "User:ANONYMOUS", &req, 4)
        .coordinators
        .into_iter()
        .map(|c| (c.error_code, c.node_id, c.port))
        .collect()
}

fn metadata(s: &Shared) -> MetadataResponse {
    ask(s, 2, "User:ANONYMOUS", &MetadataRequest::default(), 12)
}

#[test]
fn find_coordinator_makes_each_internal_topic_for_the_next_request() {
    let s = shared();
    let names = |m: &MetadataResponse| -> Vec<(String, bool, usize)> {
        m.topics
            .iter()
            .map(|t| {
                (
                    t.name.clone().unwrap_or_default(),
                    t.is_internal,
                    t.partitions.len(),
                )
            })
            .collect()
    };
    assert_eq!(names(&metadata(&s)), [("orders".into(), false, 1)]);
    // A batch of transactional ids: every key answers "not available".
    let ids = ["app-1", "app-2", "app-3"];
    let not_yet = vec![(ErrorCode::COORDINATOR_NOT_AVAILABLE, -1, -1); 3];
    assert_eq!(find(&s, 1, KEY_TYPE_TRANSACTION, &ids), not_yet);
    // The next request finds each id at the leader of its partition of 50
    // (partition p led by broker p % 3 + 1), at that broker's address.
    let expected: Vec<(ErrorCode, i32, i32)> = ids
        .iter()
        .map(|id| {
            let leader = partition_for(id, 50).unwrap() % 3 + 1;
            (ErrorCode::NONE, leader, 9090 + leader)
        })
        .collect();
    assert_eq!(find(&s, 3, KEY_TYPE_TRANSACTION, &ids), expected);
    // Groups are another topic: asked for by the first group lookup.
    assert_eq!(
        find(&s, 2, KEY_TYPE_GROUP, &["reports"]),
        [(ErrorCode::COORDINATOR_NOT_AVAILABLE, -1, -1)]
    );
    assert_eq!(
        find(&s, 2, KEY_TYPE_GROUP, &["reports"])[0].0,
        ErrorCode::NONE
    );
    assert_eq!(
        names(&metadata(&s)),
        [
            ("orders".into(), false, 1),
            ("__transaction_state".into(), true, 50),
            ("__consumer_offsets".into(), true, 50)
        ]
    );
    // Three replicas each, in sync.
    let m = metadata(&s);
    for t in &m.topics[1..] {
        assert!(t
            .partitions
            .iter()
            .all(|p| p.replica_nodes.len() == 3 && p.isr_nodes == p.replica_nodes));
    }
}

#[test]
fn the_coordinators_records_are_read_like_any_topic() {
    let s = shared();
    assert_eq!(
        find(&s, 1, KEY_TYPE_TRANSACTION, &["app-1"])[0].0,
        ErrorCode::COORDINATOR_NOT_AVAILABLE
    );
    let (code, coordinator, _) = find(&s, 1, KEY_TYPE_TRANSACTION, &["app-1"])[0];
    assert_eq!(code, ErrorCode::NONE);
    let init = InitProducerIdRequest {
        transactional_id: Some("app-1".into()),
        transaction_timeout_ms: 60_000,
        producer_id: -1,
        producer_epoch: -1,
        ..Default::default()
    };
    let r = ask(&s, coordinator, "User:ANONYMOUS", &init, 5);
    assert_eq!((r.error_code, r.producer_epoch), (ErrorCode::NONE, 0));
    let partition = partition_for("app-1", 50).unwrap();
    // ListOffsets: the record is the partition's only one.
    let offset = |timestamp: i64| {
        let list = ListOffsetsRequest {
            replica_id: -1,
            topics: vec![ListOffsetsTopic {
                name: "__transaction_state".into(),
                partitions: vec![ListOffsetsPartition {
                    partition_index: partition,
                    timestamp,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let p = &ask(&s, coordinator, "User:ANONYMOUS", &list, 9).topics[0].partitions[0];
        (p.error_code, p.offset)
    };
    // earliest, latest
    assert_eq!(offset(-2), (ErrorCode::NONE, 0));
    assert_eq!(offset(-1), (ErrorCode::NONE, 1));
    // Fetch: the coordinator's record, as the formatter would read it.
    let fetch = |principal: &str| {
        let req = FetchRequest {
            max_bytes: 1 << 20,
            topics: vec![FetchTopic {
                topic: "__transaction_state".into(),
                partitions: vec![FetchPartition {
                    partition,
                    fetch_offset: 0,
                    partition_max_bytes: 1 << 20,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        ask(&s, coordinator, principal, &req, 12).responses[0].partitions[0].clone()
    };
    let p = fetch("User:ANONYMOUS");
    assert_eq!((p.error_code, p.high_watermark), (ErrorCode::NONE, 1));
    let bytes = p.records.unwrap();
    let batch = Batches::new(&bytes).next().unwrap().unwrap();
    assert_eq!(batch.header().producer_id, -1, "not a producer's write");
    let records = batch.records(DEFAULT_MAX_DECOMPRESSED).unwrap();
    assert_eq!(records.len(), 1);
    let r = &records[0];
    let TxnLogEntry::State {
        transactional_id,
        value,
        ..
    } = decode_entry(r.key.as_deref().unwrap(), r.value.as_deref()).unwrap()
    else {
        panic!("a state");
    };
    assert_eq!(transactional_id, "app-1");
    assert_eq!(value.version, 1, "transaction.version 2 writes v1");
    assert_eq!(value.record.state(), Some(TxnState::Empty));
    assert_eq!(value.record.producer_id, r_pid(&s, "app-1"));
    assert_eq!(batch.header().base_timestamp, NOW);
    // READ denied: the file's ACLs apply to the internal topic too.
    assert_eq!(
        fetch("User:reader").error_code,
        ErrorCode::TOPIC_AUTHORIZATION_FAILED
    );
    // DescribeProducers: the coordinator writes without a producer id.
    let describe = DescribeProducersRequest {
        topics: vec![TopicRequest {
            name: "__transaction_state".into(),
            partition_indexes: vec![partition],
            ..Default::default()
        }],
        ..Default::default()
    };
    let answer = |principal: &str| {
        ask(&s, coordinator, principal, &describe, 0).topics[0].partitions[0].clone()
    };
    let p = answer("User:ANONYMOUS");
    assert_eq!(p.error_code, ErrorCode::NONE);
    assert!(p.active_producers.is_empty());
    assert_eq!(
        answer("User:reader").error_code,
        ErrorCode::TOPIC_AUTHORIZATION_FAILED
    );
}

/// The producer id the coordinator holds for `id`.
fn r_pid(s: &Shared, id: &str) -> i64 {
    s.read().transaction(id).unwrap().producer_id
}
