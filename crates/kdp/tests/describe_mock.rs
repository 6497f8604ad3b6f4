//! `kdp describe` against `kdp mock-broker`: it returns exactly the state
//! the cluster file gives, for one partition, a topic, a follower and the
//! whole cluster. (The mock is kdp's own; the claims about Kafka's behaviour
//! are made against a real broker in real_kafka.rs.)

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

mod common;
mod mock_broker;
use mock_broker::MockBroker;

const KDP: &str = env!("CARGO_BIN_EXE_kdp");

struct Mock {
    _broker: MockBroker,
    bootstrap: String,
}

impl Mock {
    fn start() -> Mock {
        let file =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../kdp-server/tests/data/cluster.json");
        let broker = MockBroker::start(file, &[], Stdio::null());
        Mock {
            bootstrap: broker.bootstrap.clone(),
            _broker: broker,
        }
    }

    fn describe(&self, args: &[&str]) -> (i32, Value) {
        let mut kdp = Command::new(KDP);
        kdp.args([
            "describe",
            "--bootstrap-server",
            &self.bootstrap,
            "--output",
            "json",
        ])
        .args(["--timeout", "10s"])
        .args(args);
        let out = kdp.output().expect("run kdp describe");
        common::schema::check_command(&kdp, &out.stdout);
        let doc = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code().unwrap_or(-1), doc)
    }
}

fn partition<'a>(doc: &'a Value, topic: &str, index: i64) -> &'a Value {
    doc["Topics"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["Name"] == topic))
        .and_then(|t| t["Partitions"].as_array())
        .and_then(|ps| ps.iter().find(|p| p["PartitionIndex"] == index))
        .unwrap_or_else(|| panic!("{topic}-{index} missing from {doc}"))
}

fn partitions(doc: &Value) -> Vec<(String, i64)> {
    let mut out: Vec<(String, i64)> = doc["Topics"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| {
            let name = t["Name"].as_str().unwrap_or_default().to_string();
            t["Partitions"]
                .as_array()
                .into_iter()
                .flatten()
                .map(move |p| (name.clone(), p["PartitionIndex"].as_i64().unwrap_or(-9)))
        })
        .collect();
    out.sort();
    out
}

fn ok(index: i64, producers: Value) -> Value {
    json!({"PartitionIndex": index, "ErrorCode": 0, "ErrorMessage": null, "ActiveProducers": producers})
}

fn orders_3_on_leader() -> Value {
    ok(
        3,
        json!([
            {"ProducerId": 0, "ProducerEpoch": 12, "LastSequence": 0, "LastTimestamp": 0,
             "CoordinatorEpoch": 12, "CurrentTxnStartOffset": 150382},
            {"ProducerId": 2002, "ProducerEpoch": 3, "LastSequence": 99, "LastTimestamp": 1700000100000i64,
             "CoordinatorEpoch": 5, "CurrentTxnStartOffset": -1}
        ]),
    )
}

#[test]
fn one_partition_is_exactly_the_files_state() {
    let mock = Mock::start();
    let (code, doc) = mock.describe(&["--topic", "orders", "--partition", "3"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(partitions(&doc), vec![("orders".into(), 3)]);
    assert_eq!(*partition(&doc, "orders", 3), orders_3_on_leader());
    assert_eq!(doc["ThrottleTimeMs"], 0);
}

#[test]
fn a_topic_is_exactly_the_files_state() {
    let mock = Mock::start();
    let (code, doc) = mock.describe(&["--topic", "orders"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(
        partitions(&doc),
        (0..4)
            .map(|p| ("orders".to_string(), p))
            .collect::<Vec<_>>()
    );
    assert_eq!(*partition(&doc, "orders", 0), ok(0, json!([])));
    assert_eq!(
        *partition(&doc, "orders", 1),
        ok(
            1,
            json!([{"ProducerId": 1001, "ProducerEpoch": 0, "LastSequence": 4711,
                    "LastTimestamp": 1700000000000i64, "CoordinatorEpoch": -1,
                    "CurrentTxnStartOffset": -1}])
        )
    );
    // The leader (3) is online; only follower 2's log is offline.
    assert_eq!(*partition(&doc, "orders", 2), ok(2, json!([])));
    assert_eq!(*partition(&doc, "orders", 3), orders_3_on_leader());
}

#[test]
fn a_follower_answers_from_its_own_state() {
    let mock = Mock::start();
    let (code, doc) = mock.describe(&["--topic", "orders", "--partition", "3", "--broker-id", "3"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(
        *partition(&doc, "orders", 3),
        ok(
            3,
            json!([{"ProducerId": 0, "ProducerEpoch": 11, "LastSequence": 17,
                    "LastTimestamp": 1699999000000i64, "CoordinatorEpoch": 11,
                    "CurrentTxnStartOffset": 150001}])
        )
    );
    // Broker 2's log of orders-2 is offline: KAFKA_STORAGE_ERROR (56), no message.
    let (code, doc) = mock.describe(&["--topic", "orders", "--partition", "2", "--broker-id", "2"]);
    assert_eq!(code, 1, "{doc}");
    let p = partition(&doc, "orders", 2);
    assert_eq!(p["ErrorCode"], 56, "{p}");
    assert_eq!(p["ActiveProducers"], json!([]));
}

#[test]
fn the_whole_cluster_is_exactly_the_files_state() {
    let mock = Mock::start();
    let (code, doc) = mock.describe(&[]);
    let expected: Vec<(String, i64)> = [
        ("__transaction_state", 0),
        ("orders", 0),
        ("orders", 1),
        ("orders", 2),
        ("orders", 3),
        ("payments", 0),
        ("payments", 1),
        ("secret", 0),
    ]
    .iter()
    .map(|(t, p)| (t.to_string(), *p))
    .collect();
    assert_eq!(partitions(&doc), expected, "{doc}");
    assert_eq!(*partition(&doc, "orders", 3), orders_3_on_leader());
    assert_eq!(
        *partition(&doc, "payments", 0),
        ok(
            0,
            json!([{"ProducerId": 31337, "ProducerEpoch": 32767, "LastSequence": 2147483647,
                    "LastTimestamp": 1700000200000i64, "CoordinatorEpoch": 2147483647,
                    "CurrentTxnStartOffset": 9007199254740993i64}])
        )
    );
    assert_eq!(
        partition(&doc, "secret", 0)["ActiveProducers"][0]["ProducerId"],
        66
    );
    assert_eq!(*partition(&doc, "__transaction_state", 0), ok(0, json!([])));
    // payments-1 has no leader: an error row, so the exit status is 1.
    assert_ne!(partition(&doc, "payments", 1)["ErrorCode"], 0);
    assert_eq!(code, 1, "{doc}");
}

/// `--output json` is the seed's response shape: `kdp encode` takes it, and
/// `kdp decode` of those bytes gives the same document back.
#[test]
fn json_output_round_trips_through_encode_and_decode() {
    use std::io::Write;
    let mock = Mock::start();
    let (_, doc) = mock.describe(&[]);
    let pipe = |args: &[&str], input: &[u8]| {
        let mut child = Command::new(KDP)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run kdp");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input)
            .expect("write");
        let out = child.wait_with_output().expect("output");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let bytes = pipe(&["encode"], doc.to_string().as_bytes());
    let back: Value = serde_json::from_slice(&pipe(&["decode"], &bytes)).expect("JSON");
    assert_eq!(back, doc);
}
