//! `kdp mock-broker` as a Kafka broker's coordinators behave, through the
//! CLI: a cluster file without `__consumer_offsets` or `__transaction_state`
//! gets them as a broker makes them (the first FindCoordinator asks for the
//! topic and answers COORDINATOR_NOT_AVAILABLE, the next finds the
//! coordinator), so `find-hanging` and `blocked` answer as on the demo; and
//! the transaction coordinator writes its own `__transaction_state`, so
//! `kdp history` shows what `force-terminate` did, with the causes real
//! Kafka's records give (real_kafka_history.rs checks those on a broker),
//! and nothing of what `kdp abort` did (WriteTxnMarkers changes partitions,
//! never the coordinator: `KafkaApis.handleWriteTxnMarkersRequest` appends
//! the markers to the partitions' logs only).

use std::io::{Read, Write};
use std::net::TcpStream;

use kdp_wire::frame::{decode_response_frame, request_frame_to_vec};
use kdp_wire::messages::{MetadataRequest, MetadataResponse};
use kdp_wire::{Message, RequestHeader};
use serde_json::{json, Value};

mod common;
mod mock_broker;
use mock_broker::Served;

/// The demo's cluster file.
fn demo_doc() -> Value {
    mock_broker::demo_doc(&[])
}

/// `kdp mock-broker` serving `doc`.
fn serve(doc: &Value) -> Served {
    Served::start(doc)
}

/// The topics the first broker's Metadata lists: (name, internal,
/// partitions), asked over the wire.
fn topics(m: &Served) -> Vec<(String, bool, usize)> {
    let addr = m.bootstrap().split(',').next().unwrap();
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let req = MetadataRequest::default();
    let frame = request_frame_to_vec(
        &RequestHeader {
            request_api_key: MetadataRequest::API_KEY,
            request_api_version: 12,
            correlation_id: 1,
            client_id: Some("mock-coordinator-test".into()),
            ..Default::default()
        },
        &req,
    );
    s.write_all(&frame).unwrap();
    let mut size = [0u8; 4];
    s.read_exact(&mut size).unwrap();
    let mut body = vec![0u8; u32::from_be_bytes(size) as usize];
    s.read_exact(&mut body).unwrap();
    let mut whole = size.to_vec();
    whole.extend(body);
    let (_, resp) = decode_response_frame::<MetadataResponse>(&whole, 12).unwrap();
    resp.topics
        .into_iter()
        .map(|t| {
            (
                t.name.unwrap_or_default(),
                t.is_internal,
                t.partitions.len(),
            )
        })
        .collect()
}

fn has(m: &Served, topic: &str) -> Option<(bool, usize)> {
    topics(m)
        .into_iter()
        .find(|t| t.0 == topic)
        .map(|t| (t.1, t.2))
}

/// Java's `String.hashCode`, for Kafka's `abs(hashCode) % partitions`.
fn java_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(i32::from(u)))
}

/// The demo without its internal topics: each transaction names the
/// coordinator the demo's 3-partition `__transaction_state` gave it, its
/// log (which needs the topic) and orders-app's `__consumer_offsets`
/// partition go.
fn demo_without_internal_topics() -> Value {
    let mut doc = demo_doc();
    doc["topics"]
        .as_array_mut()
        .unwrap()
        .retain(|t| t["name"] != "__consumer_offsets" && t["name"] != "__transaction_state");
    for t in doc["transactions"].as_array_mut().unwrap() {
        let id = t["transactional_id"].as_str().unwrap();
        // partition p of the demo's topic is led by broker p + 1
        let coordinator = java_hash(id).unsigned_abs() % 3 + 1;
        t["coordinator"] = json!(coordinator);
        let t = t.as_object_mut().unwrap();
        t.remove("log");
        if let Some(p) = t.get_mut("partitions").and_then(Value::as_object_mut) {
            p.remove("__consumer_offsets");
        }
    }
    doc
}

/// The stable columns of `find-hanging`'s rows.
fn hanging(doc: &Value) -> Vec<(String, i64, i64, String, Value)> {
    let mut rows: Vec<_> = doc["Transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["Topic"].as_str().unwrap().to_string(),
                r["Partition"].as_i64().unwrap(),
                r["ProducerId"].as_i64().unwrap(),
                r["Verdict"].to_string(),
                r["BlockedGroups"].clone(),
            )
        })
        .collect();
    rows.sort_by(|a, b| (&a.0, a.1, a.2).cmp(&(&b.0, b.1, b.2)));
    rows
}

/// The stable columns of `blocked`'s rows.
fn blocked(doc: &Value) -> Vec<(String, i64, String, String)> {
    let mut rows: Vec<_> = doc["Blocked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["Topic"].as_str().unwrap().to_string(),
                r["Partition"].as_i64().unwrap(),
                r["Group"].as_str().unwrap_or("-").to_string(),
                r["Verdict"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn without_internal_topics_find_hanging_and_blocked_answer_as_on_the_demo() {
    let demo = serve(&demo_doc());
    let bare = serve(&demo_without_internal_topics());
    // The file's groups and transactions live in the internal topics: the
    // mock made both, with Kafka's 50 partitions (three brokers hold the
    // 3 replicas).
    assert_eq!(has(&bare, "__consumer_offsets"), Some((true, 50)));
    assert_eq!(has(&bare, "__transaction_state"), Some((true, 50)));
    for (cmd, exit) in [("find-hanging", 4), ("blocked", 4)] {
        let (code, want, stderr) = demo.json(&[cmd], &[]);
        assert_eq!(code, exit, "{cmd} on the demo: {stderr}");
        let (code, got, stderr) = bare.json(&[cmd], &[]);
        assert_eq!(code, exit, "{cmd} without internal topics: {stderr}");
        if cmd == "find-hanging" {
            assert_eq!(hanging(&got), hanging(&want));
            // payments-0's hanging transaction holds payments-ledger back
            assert!(hanging(&got)
                .iter()
                .any(|r| r.0 == "payments" && r.2 == 7003 && r.4 == json!(["payments-ledger"])));
        } else {
            // the demo's orders-app also writes __consumer_offsets-1, which
            // the file without the topic cannot hold
            let mut want = blocked(&want);
            want.retain(|r| r.0 != "__consumer_offsets");
            assert_eq!(blocked(&got), want);
            assert!(blocked(&got).contains(&(
                "payments".to_string(),
                0,
                "payments-ledger".to_string(),
                "blocked".to_string()
            )));
        }
    }
}

#[test]
fn the_first_group_lookup_makes_consumer_offsets() {
    // A fresh cluster: no group, no transaction, no internal topic; a
    // producer's transaction on t-0 that no coordinator knows.
    let doc = json!({
        "brokers": [{"id": 1}, {"id": 2}, {"id": 3}],
        "topics": [{"name": "t", "partitions": [
            {"partition": 0, "leader": 1, "replicas": [1, 2, 3], "high_watermark": 120,
             "producers": [{"ProducerId": 77, "LastTimestamp": "now-2h",
                            "CurrentTxnStartOffset": 100}]}]}]
    });
    let m = serve(&doc);
    assert_eq!(topics(&m), [("t".to_string(), false, 1)]);
    // blocked: its group lookups asked for the topic (a broker makes it at
    // the first FindCoordinator of a group and answers "not available"
    // then, the coordinator next); the pinned partition is listed, no
    // group reads it, and every broker answered: nothing blocked, exit 0
    let (code, doc, stderr) = m.json(&["blocked"], &[]);
    assert_eq!(code, 0, "{doc}\n{stderr}");
    let rows = doc["Blocked"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{doc}");
    assert_eq!(
        (
            rows[0]["Topic"].clone(),
            rows[0]["HeldBack"].clone(),
            rows[0]["Group"].clone()
        ),
        (json!("t"), json!(20), Value::Null)
    );
    assert_eq!(has(&m, "__consumer_offsets"), Some((true, 50)));
    // find-hanging: the open transaction nobody coordinates, in its
    // usual answer
    let (code, doc, stderr) = m.json(&["find-hanging"], &[]);
    assert_eq!(code, 4, "{stderr}");
    let rows = doc["Transactions"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{doc}");
    assert_eq!(
        (rows[0]["Topic"].clone(), rows[0]["ProducerId"].clone()),
        (json!("t"), json!(77))
    );
    assert_eq!(rows[0]["StartOffset"], 100);
}

/// orders-app (producer 5002, Ongoing at epoch 3) with its log: the
/// InitProducerId and the transaction that is open, written by a client of
/// `client_version`.
fn demo_with_orders_log(transaction_version: i64) -> Value {
    let mut doc = demo_doc();
    doc["transaction_version"] = json!(transaction_version);
    let client = if transaction_version >= 2 { 2 } else { 0 };
    let t = doc["transactions"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["transactional_id"] == "orders-app")
        .unwrap();
    t["log"] = json!([
        {"time": "now-1m", "state": "Empty", "producer_epoch": 3,
         "version": if transaction_version >= 1 { 1 } else { 0 }},
        {"time": "now-12s", "state": "Ongoing", "producer_epoch": 3,
         "partitions": {"orders": [1, 2], "__consumer_offsets": [1]},
         "client_transaction_version": client,
         "version": if transaction_version >= 1 { 1 } else { 0 }}
    ]);
    doc
}

fn changes(doc: &Value) -> Vec<Value> {
    doc["Histories"][0]["Changes"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn force_terminate_then_history_shows_the_fence_and_abort_says_nothing_new() {
    // Protocol v1 (Kafka 3.9: no transaction.version) and v2 (4.x).
    for (tv, abort_cause, client) in [(0, "fencing-abort", 0), (2, "abort", 2)] {
        let m = serve(&demo_with_orders_log(tv));
        let history = || {
            let (code, doc, stderr) = m.json(&["history"], &["--transactional-id", "orders-app"]);
            assert_eq!(code, 0, "{stderr}");
            changes(&doc)
        };
        let before = history();
        assert_eq!(before.len(), 2, "{before:#?}");

        // kdp abort: markers on orders-1, the coordinator untouched
        let (code, stdout, stderr) = m.run(
            &["abort"],
            &[
                "--topic",
                "orders",
                "--partition",
                "1",
                "--start-offset",
                "88213",
                "--yes",
            ],
        );
        assert_eq!(code, 0, "{stdout}\n{stderr}");
        assert_eq!(
            history(),
            before,
            "an admin abort writes no coordinator record"
        );
        let (_, d, _) = m.json(
            &["transactions", "describe"],
            &["--transactional-id", "orders-app"],
        );
        assert!(d.to_string().contains("\"Ongoing\""), "{d}");

        // force-terminate: the fence (PrepareAbort one epoch up), the
        // markers' completion, and the retry's new epoch
        let (code, stdout, stderr) = m.run(
            &["force-terminate"],
            &["--transactional-id", "orders-app", "--yes"],
        );
        assert_eq!(code, 0, "{stdout}\n{stderr}");
        let after = history();
        let seen: Vec<(String, i64, Option<String>, bool)> = after
            .iter()
            .map(|c| {
                (
                    c["TransactionState"].as_str().unwrap().to_string(),
                    c["ProducerEpoch"].as_i64().unwrap(),
                    c["Cause"].as_str().map(String::from),
                    c["InstanceChange"] == true,
                )
            })
            .collect();
        let cause = |s: &str| Some(s.to_string());
        assert_eq!(
            seen,
            [
                ("Empty".into(), 3, cause("init-producer-id"), false),
                ("Ongoing".into(), 3, None, false),
                ("PrepareAbort".into(), 4, cause(abort_cause), false),
                ("CompleteAbort".into(), 4, None, false),
                ("Empty".into(), 5, cause("admin-fence"), true),
            ],
            "transaction.version {tv}: {after:#?}"
        );
        // each record as the generation writes it
        let version = if tv >= 1 { 1 } else { 0 };
        for c in &after[2..] {
            assert_eq!(c["ValueVersion"], version, "{c}");
            assert_eq!(c["ClientTransactionVersion"], client, "{c}");
            assert_eq!(c["ProducerId"], 5002, "{c}");
            assert_eq!(
                c["PreviousProducerId"],
                if version == 1 { 5002 } else { -1 },
                "{c}"
            );
            assert_eq!(c["TimestampMs"], c["TransactionLastUpdateTimeMs"], "{c}");
        }
        assert_eq!(
            after[2]["TopicPartitions"],
            json!(["__consumer_offsets-1", "orders-1", "orders-2"])
        );
        assert_eq!(after[3]["TopicPartitions"], json!([]));
        // kdp's fence asks with its request timeout, not the client's 60 s
        assert_ne!(
            after[4]["TransactionTimeoutMs"],
            after[3]["TransactionTimeoutMs"]
        );
        // after what the file held, at the next offsets
        let offsets: Vec<i64> = after
            .iter()
            .map(|c| c["Offset"].as_i64().unwrap())
            .collect();
        let first = offsets[0];
        assert_eq!(offsets, (first..first + 5).collect::<Vec<_>>());
    }
}
