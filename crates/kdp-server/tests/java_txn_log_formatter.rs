//! Apache Kafka's own `TransactionLogMessageFormatter`
//! (org.apache.kafka.tools.consumer, run by the console consumer of
//! KDP_KAFKA_VERSION) reads the mock's `__transaction_state`: the records
//! the cluster file holds, then those the mock's coordinator wrote for an
//! InitProducerId of a new id, for the abort of a transaction that outlived
//! its timeout, and for a force-terminate (InitProducerId of an id whose
//! transaction is open: the fence, the abort, the retry's new epoch). Every
//! record it prints is checked field by field against what the mock did,
//! in the format of the generation: a Kafka 4.x cluster runs transaction
//! protocol v2 (`transaction.version` 2: values v1 with their tagged
//! fields), a 3.9 cluster protocol v1 (values v0).
//!
//! Needs the Kafka jars: run `scripts/test.sh` (KDP_IT_CLASSPATH,
//! KDP_IT_JAVA and KDP_IT_KAFKA_VERSION from the cluster's env), which runs
//! it with the tools of each Kafka generation. Without KDP_IT_CLASSPATH
//! the test fails rather than skips. The mock's clock is a manual one: the
//! timeout is reached by moving it, not by waiting.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use kdp_server::clock::ManualClock;
use kdp_server::cluster::Cluster;
use kdp_server::mock::{MockCluster, MockConfig};
use kdp_wire::coordinator::txn_log::{decode_entry, TxnLogEntry};
use kdp_wire::frame::{decode_response_frame, request_frame_to_vec};
use kdp_wire::messages::{InitProducerIdRequest, InitProducerIdResponse};
use kdp_wire::records::{Batches, DEFAULT_MAX_DECOMPRESSED};
use kdp_wire::{ErrorCode, Message, RequestHeader, TxnState};
use serde_json::Value;

const T0: i64 = 1_790_000_000_000;
const MINUTE: i64 = 60_000;

/// Three brokers; `__transaction_state` of one partition (every id's
/// records in one place), led by broker 1 at leader epoch 6, whose
/// coordinator scans for timed-out transactions every minute. "ft" has a
/// transaction open (its log: the InitProducerId and the transaction, with
/// the PreviousProducerId Kafka 4.x writes), and
/// so has "slow", which times out 10 s after the file's load.
fn cluster_json(transaction_version: i16) -> String {
    let client = if transaction_version >= 2 { 2 } else { 0 };
    let version = i16::from(transaction_version >= 1);
    format!(
        r#"{{
        "transaction_version": {transaction_version},
        "brokers": [{{"id": 1, "configs": {{"transaction.abort.timed.out.transaction.cleanup.interval.ms": "60000"}}}},
                    {{"id": 2}}, {{"id": 3}}],
        "topics": [
            {{"name": "orders", "partitions": [
                {{"partition": 0, "leader": 2, "replicas": [2, 3, 1], "high_watermark": 50,
                 "producers": [{{"ProducerId": 5002, "ProducerEpoch": 3, "CoordinatorEpoch": 6, "CurrentTxnStartOffset": 40}}]}},
                {{"partition": 1, "leader": 3, "replicas": [3, 1, 2], "high_watermark": 70,
                 "producers": [{{"ProducerId": 5002, "ProducerEpoch": 3, "CoordinatorEpoch": 6, "CurrentTxnStartOffset": 61}},
                              {{"ProducerId": 7001, "ProducerEpoch": 0, "CoordinatorEpoch": 6, "CurrentTxnStartOffset": 65}}]}}]}},
            {{"name": "__transaction_state", "partitions": [
                {{"partition": 0, "leader": 1, "leader_epoch": 6, "replicas": [1, 2, 3]}}]}}],
        "transactions": [
            {{"transactional_id": "ft", "producer_id": 5002, "producer_epoch": 3, "state": "Ongoing",
             "timeout_ms": 900000, "start_time": "now-20s", "last_update": "now-20s",
             "partitions": {{"orders": [0, 1]}},
             "log": [
                {{"time": "now-1m", "state": "Empty", "version": {version}, "previous_producer_id": 5002}},
                {{"time": "now-20s", "state": "Ongoing", "partitions": {{"orders": [0, 1]}},
                 "client_transaction_version": {client}, "version": {version}, "previous_producer_id": 5002}}]}},
            {{"transactional_id": "slow", "producer_id": 7001, "state": "Ongoing",
             "timeout_ms": 10000, "start_time": "now", "partitions": {{"orders": [1]}}}}]
    }}"#
    )
}

/// What the formatter should print of one record: the transactional id,
/// then the value's fields (`None`: a tombstone; there is none here).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Expected {
    id: &'static str,
    state: TxnState,
    producer_id: i64,
    previous_producer_id: i64,
    epoch: i16,
    timeout_ms: i32,
    partitions: Option<Vec<(&'static str, Vec<i32>)>>,
    start_ms: i64,
    update_ms: i64,
    client_version: i16,
}

/// InitProducerId for `id` with producer id and epoch -1 (what
/// `kdp force-terminate` and `Admin.fenceProducers` send), at `broker`.
fn init_producer_id(addr: &str, id: &str, timeout_ms: i32) -> InitProducerIdResponse {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let req = InitProducerIdRequest {
        transactional_id: Some(id.into()),
        transaction_timeout_ms: timeout_ms,
        producer_id: -1,
        producer_epoch: -1,
        ..Default::default()
    };
    let frame = request_frame_to_vec(
        &RequestHeader {
            request_api_key: InitProducerIdRequest::API_KEY,
            request_api_version: 4,
            correlation_id: 1,
            client_id: Some("formatter-test".into()),
            ..Default::default()
        },
        &req,
    );
    s.write_all(&frame).unwrap();
    let mut size = [0u8; 4];
    s.read_exact(&mut size).unwrap();
    let mut whole = size.to_vec();
    whole.resize(4 + u32::from_be_bytes(size) as usize, 0);
    s.read_exact(&mut whole[4..]).unwrap();
    decode_response_frame::<InitProducerIdResponse>(&whole, 4)
        .unwrap()
        .1
}

/// The console consumer with Kafka's formatter on `__transaction_state-0`,
/// from the start, `count` records: the JSON objects it printed.
fn formatter(
    java: &str,
    classpath: &str,
    version: &str,
    bootstrap: &str,
    count: usize,
) -> Vec<Value> {
    let out = Command::new(java)
        .args(["-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", classpath])
        .arg("org.apache.kafka.tools.consumer.ConsoleConsumer")
        .args(["--bootstrap-server", bootstrap])
        .args(["--topic", "__transaction_state", "--partition", "0"])
        .args(["--offset", "earliest"])
        .args([
            "--formatter",
            "org.apache.kafka.tools.consumer.TransactionLogMessageFormatter",
        ])
        // 4.x renamed the flag (the old one warns on stdout)
        .arg(if version.starts_with("3.") {
            "--consumer-property"
        } else {
            "--command-property"
        })
        .arg("exclude.internal.topics=false")
        .args(["--max-messages", &count.to_string()])
        // a bound, not a timing requirement: the records are there
        .args(["--timeout-ms", "60000"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {java}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "the console consumer failed:\n{stdout}\n{stderr}"
    );
    // the records, whatever the tool prints before them (4.x prints them
    // one after the other without a separator)
    let json = stdout.find('{').map_or("", |i| &stdout[i..]);
    let records: Vec<Value> = serde_json::Deserializer::from_str(json)
        .into_iter::<Value>()
        .map(|v| v.unwrap_or_else(|e| panic!("formatter output: {e}\n{stdout}\n{stderr}")))
        .collect();
    assert!(
        stderr.contains(&format!("Processed a total of {count} messages")),
        "{stderr}"
    );
    records
}

/// Kafka's TransactionState by id (3.9's formatter prints the id, 4.x the
/// name).
fn state_of(v: &Value) -> TxnState {
    match v {
        Value::String(s) => TxnState::from_name(s).unwrap_or_else(|| panic!("state {s}")),
        Value::Number(n) => TxnState::from_id(n.as_i64().unwrap() as i8).expect("state id"),
        other => panic!("transactionStatus {other}"),
    }
}

fn check(printed: &Value, want: &Expected, value_version: i64) {
    let key = &printed["key"];
    // 4.x calls the key's version its record type
    let key_version = key.get("version").or_else(|| key.get("type"));
    assert_eq!(key_version, Some(&Value::from(0)), "{printed}");
    assert_eq!(key["data"]["transactionalId"], want.id, "{printed}");
    assert_eq!(printed["value"]["version"], value_version, "{printed}");
    let d = &printed["value"]["data"];
    let int = |name: &str, default: i64| d.get(name).map_or(default, |v| v.as_i64().expect(name));
    assert_eq!(int("producerId", i64::MIN), want.producer_id, "{printed}");
    assert_eq!(
        int("producerEpoch", i64::MIN),
        i64::from(want.epoch),
        "{printed}"
    );
    assert_eq!(
        int("transactionTimeoutMs", i64::MIN),
        i64::from(want.timeout_ms),
        "{printed}"
    );
    assert_eq!(state_of(&d["transactionStatus"]), want.state, "{printed}");
    assert_eq!(
        int("transactionLastUpdateTimestampMs", i64::MIN),
        want.update_ms,
        "{printed}"
    );
    assert_eq!(
        int("transactionStartTimestampMs", i64::MIN),
        want.start_ms,
        "{printed}"
    );
    let partitions = d["transactionPartitions"].as_array().map(|ts| {
        ts.iter()
            .map(|t| {
                let ids: Vec<i32> = t["partitionIds"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p.as_i64().unwrap() as i32)
                    .collect();
                (t["topic"].as_str().unwrap().to_string(), ids)
            })
            .collect::<Vec<_>>()
    });
    let want_partitions = want.partitions.as_ref().map(|ps| {
        ps.iter()
            .map(|(t, ids)| (t.to_string(), ids.clone()))
            .collect::<Vec<_>>()
    });
    assert_eq!(partitions, want_partitions, "{printed}");
    // Tagged fields (value v1): printed when not their default; v0 has none.
    let v1 = value_version >= 1;
    assert_eq!(
        int("previousProducerId", -1),
        if v1 { want.previous_producer_id } else { -1 },
        "{printed}"
    );
    assert_eq!(int("nextProducerId", -1), -1, "{printed}");
    assert_eq!(int("nextProducerEpoch", -1), -1, "{printed}");
    assert_eq!(
        int("clientTransactionVersion", 0),
        if v1 {
            i64::from(want.client_version)
        } else {
            0
        },
        "{printed}"
    );
}

#[test]
#[ignore = "needs the Kafka jars: run scripts/test.sh"]
fn kafkas_formatter_reads_what_the_mocks_coordinator_wrote() {
    let classpath = std::env::var("KDP_IT_CLASSPATH").unwrap_or_else(|_| {
        panic!(
            "KDP_IT_CLASSPATH is not set: this test needs the Kafka jars; run scripts/test.sh \
             (or set KDP_IT_CLASSPATH to it/target/kafka-VERSION/lib/*)"
        )
    });
    let java = std::env::var("KDP_IT_JAVA").unwrap_or_else(|_| "java".into());
    let version = std::env::var("KDP_IT_KAFKA_VERSION")
        .expect("KDP_IT_KAFKA_VERSION: the Kafka version of KDP_IT_CLASSPATH (cluster.env)");
    // the generation's transaction protocol
    let tv: i16 = if version.starts_with("3.") { 0 } else { 2 };
    let client = if tv >= 2 { 2 } else { 0 };
    let value_version = i64::from(tv >= 1);

    let clock = Arc::new(ManualClock::at(T0));
    let cluster = Cluster::from_json_at(
        &cluster_json(tv),
        std::time::UNIX_EPOCH + Duration::from_millis(T0 as u64),
    )
    .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let config = MockConfig {
        port: 0,
        idle_timeout: Duration::from_secs(120),
        clock: clock.clone(),
        ..MockConfig::default()
    };
    let mock = rt.block_on(MockCluster::start(cluster, config)).unwrap();
    let coordinator = mock.broker_addr(1).unwrap().to_string();

    // At T0 (the first request: broker 1's scans start, every minute): a
    // new transactional id.
    let fresh = init_producer_id(&coordinator, "fresh", 45_000);
    assert_eq!(
        (fresh.error_code, fresh.producer_epoch),
        (ErrorCode::NONE, 0)
    );
    // A minute and a second later: the scan due at T0 + 1 min aborts
    // "slow" (10 s timeout), then "ft" is force-terminated: fenced and
    // aborted, and the retry gets the epoch after.
    clock.advance(Duration::from_millis(61_000));
    let fence = init_producer_id(&coordinator, "ft", 30_000);
    assert_eq!(fence.error_code, ErrorCode::CONCURRENT_TRANSACTIONS);
    let retry = init_producer_id(&coordinator, "ft", 30_000);
    assert_eq!(
        (retry.error_code, retry.producer_id, retry.producer_epoch),
        (ErrorCode::NONE, 5002, 5)
    );

    let orders = || Some(vec![("orders", vec![0, 1])]);
    let e =
        |id, state, (pid, epoch), timeout_ms, partitions, (start_ms, update_ms), client_version| {
            Expected {
                id,
                state,
                producer_id: pid,
                previous_producer_id: pid,
                epoch,
                timeout_ms,
                partitions,
                start_ms,
                update_ms,
                client_version,
            }
        };
    let scan = T0 + MINUTE;
    let fenced_at = T0 + 61_000;
    let expected = [
        // the file's log of "ft" (its default timeout: the transaction's)
        e(
            "ft",
            TxnState::Empty,
            (5002, 3),
            900_000,
            None,
            (-1, T0 - MINUTE),
            0,
        ),
        e(
            "ft",
            TxnState::Ongoing,
            (5002, 3),
            900_000,
            orders(),
            (T0 - 20_000, T0 - 20_000),
            client,
        ),
        // InitProducerId of a new id: epoch 0 of a new producer id
        e(
            "fresh",
            TxnState::Empty,
            (fresh.producer_id, 0),
            45_000,
            None,
            (-1, T0),
            0,
        ),
        // the coordinator's abort of "slow", at the scan after its deadline
        e(
            "slow",
            TxnState::PrepareAbort,
            (7001, 1),
            10_000,
            Some(vec![("orders", vec![1])]),
            (T0, scan),
            client,
        ),
        e(
            "slow",
            TxnState::CompleteAbort,
            (7001, 1),
            10_000,
            Some(vec![]),
            (T0, scan),
            client,
        ),
        // force-terminate: the fence's abort one epoch up, its completion,
        // the retry's epoch with the request's timeout
        e(
            "ft",
            TxnState::PrepareAbort,
            (5002, 4),
            900_000,
            orders(),
            (T0 - 20_000, fenced_at),
            client,
        ),
        e(
            "ft",
            TxnState::CompleteAbort,
            (5002, 4),
            900_000,
            Some(vec![]),
            (T0 - 20_000, fenced_at),
            client,
        ),
        e(
            "ft",
            TxnState::Empty,
            (5002, 5),
            30_000,
            None,
            (-1, fenced_at),
            client,
        ),
    ];
    let printed = formatter(
        &java,
        &classpath,
        &version,
        &mock.bootstrap(),
        expected.len(),
    );
    assert_eq!(printed.len(), expected.len(), "{printed:#?}");
    for (p, want) in printed.iter().zip(&expected) {
        check(p, want, value_version);
    }
    // The partition holds exactly these records, kdp-wire reads the same
    // (nothing printed was made up, nothing written was skipped).
    let c = mock.cluster();
    let log = c.partition("__transaction_state", 0).unwrap();
    assert_eq!(log.high_watermark, expected.len() as i64);
    let mut read = Vec::new();
    for b in log.log.batches() {
        let batch = Batches::new(&b.bytes).next().unwrap().unwrap();
        for r in batch.records(DEFAULT_MAX_DECOMPRESSED).unwrap() {
            let TxnLogEntry::State {
                transactional_id,
                value,
                ..
            } = decode_entry(r.key.as_deref().unwrap(), r.value.as_deref()).unwrap()
            else {
                panic!("no tombstone here");
            };
            read.push((
                transactional_id,
                value.record.state().unwrap(),
                value.record.producer_epoch,
            ));
        }
    }
    let want: Vec<(String, TxnState, i16)> = expected
        .iter()
        .map(|e| (e.id.to_string(), e.state, e.epoch))
        .collect();
    assert_eq!(read, want);
    rt.block_on(mock.shutdown());
}
