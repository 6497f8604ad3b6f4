//! `kdp producers` against clusters served by `kdp mock-broker`: the
//! expiry forecast around its boundaries, epochs at the margin and at
//! 32767, transactional-id prefixes of several shapes, and a broker that
//! does not answer.

use std::process::{Command, Stdio};

use serde_json::{json, Value};

mod common;
mod mock_broker;
use mock_broker::MockBroker;

const KDP: &str = env!("CARGO_BIN_EXE_kdp");

struct Mock {
    _broker: MockBroker,
    bootstrap: String,
    dir: std::path::PathBuf,
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn mock(doc: &Value) -> Mock {
    let dir = std::env::temp_dir().join(format!(
        "kdp-producers-mock-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("cluster.json");
    std::fs::write(&file, serde_json::to_vec(doc).expect("JSON")).expect("write cluster");
    let broker = MockBroker::start(&file, &[], Stdio::null());
    Mock {
        bootstrap: broker.bootstrap.clone(),
        _broker: broker,
        dir,
    }
}

impl Mock {
    /// `kdp producers --output json <args>`: exit status, document, stderr.
    fn producers(&self, args: &[&str]) -> (i32, Value, String) {
        let mut kdp = Command::new(KDP);
        kdp.args(["producers", "--bootstrap-server", &self.bootstrap])
            .args(["--timeout", "10s", "--output", "json"])
            .args(args);
        let out = kdp.output().expect("run kdp");
        common::schema::check_command(&kdp, &out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let doc = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("JSON ({e}); stderr: {stderr}"));
        (out.status.code().unwrap_or(-1), doc, stderr)
    }
}

fn producer(id: i64, epoch: i32, idle: &str, coordinator_epoch: i32) -> Value {
    json!({"ProducerId": id, "ProducerEpoch": epoch, "LastSequence": 3,
           "LastTimestamp": idle, "CoordinatorEpoch": coordinator_epoch})
}

/// Two brokers (1 expires ids after an hour, 2 after Kafka's default day),
/// one partition replicated on both, `producers` on each replica.
fn cluster(producers: Vec<Value>, transactions: Vec<Value>) -> Value {
    json!({
        "cluster_id": "kdp-producers-test",
        "controller_id": 1,
        "brokers": [
            {"id": 1, "configs": {"producer.id.expiration.ms": "3600000"}},
            {"id": 2}
        ],
        "topics": [{"name": "t", "partitions": [
            {"partition": 0, "leader": 1, "leader_epoch": 1, "replicas": [1, 2],
             "producers": producers}
        ]}],
        "transactions": transactions
    })
}

fn broker(doc: &Value, id: i64) -> &Value {
    doc["Brokers"]
        .as_array()
        .expect("brokers")
        .iter()
        .find(|b| b["Broker"] == id)
        .unwrap_or_else(|| panic!("broker {id} in {doc}"))
}

#[test]
fn expiry_forecast_per_broker_setting() {
    let m = mock(&cluster(
        vec![
            producer(1, 0, "now-50m", -1), // 1: within the hour; 2: within the day
            producer(2, 0, "now-2h", -1),  // 1: past; 2: within the day
            producer(3, 0, "now-23h 50m", 0), // 1: past; 2: within the hour
            producer(4, 0, "now-25h", -1), // past on both
        ],
        vec![],
    ));
    let (code, doc, stderr) = m.producers(&[]);
    assert_eq!(code, 0, "{stderr}");
    let b1 = broker(&doc, 1);
    assert_eq!(b1["ProducerIds"], 4);
    assert_eq!(
        (b1["Transactional"].clone(), b1["Idempotent"].clone()),
        (json!(1), json!(3))
    );
    assert_eq!(b1["ExpirationMs"], 3_600_000);
    assert_eq!(b1["ExpiringWithinHour"], 1);
    assert_eq!(b1["ExpiringWithinDay"], 1);
    assert_eq!(b1["PastExpiration"], 3);
    let b2 = broker(&doc, 2);
    assert_eq!(b2["ExpirationMs"], 86_400_000);
    assert_eq!(b2["ExpiringWithinHour"], 1);
    assert_eq!(b2["ExpiringWithinDay"], 3);
    assert_eq!(b2["PastExpiration"], 1);
    assert_eq!(doc["TotalProducerIds"], 8, "one per replica and producer");
    assert_eq!(doc["Partial"], false);
    // the threshold: 4 per broker is not above 4, but above 3
    assert_eq!(m.producers(&["--max-producer-ids-per-broker", "4"]).0, 0);
    let (code, _, stderr) = m.producers(&["--max-producer-ids-per-broker", "3"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("broker 1 holds 4 producer ids"), "{stderr}");
}

#[test]
fn epochs_at_the_margin_and_at_the_end() {
    let m = mock(&cluster(
        vec![
            producer(10, 32767, "now-1m", 2),
            producer(11, 32767 - 1000, "now-1m", 2),
            producer(12, 32767 - 1001, "now-1m", 2),
        ],
        vec![
            json!({"transactional_id": "etl-7", "producer_id": 10, "producer_epoch": 32767,
                    "state": "CompleteCommit", "timeout_ms": 60000, "start_time": "now-1m",
                    "coordinator": 1}),
        ],
    ));
    let (code, doc, stderr) = m.producers(&[]);
    assert_eq!(code, 4, "an epoch within the margin is a finding: {stderr}");
    let near = doc["EpochsNearExhaustion"].as_array().expect("epochs");
    let got: Vec<(i64, i64)> = near
        .iter()
        .map(|n| {
            (
                n["ProducerId"].as_i64().unwrap(),
                n["EpochsLeft"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, vec![(10, 0), (11, 1000)]);
    assert_eq!(near[0]["TransactionalId"], "etl-7");
    assert_eq!(near[1]["TransactionalId"], Value::Null);
    assert_eq!(doc["Topics"][0]["MaxEpoch"], 32767);
    assert_eq!(doc["Topics"][0]["NearExhaustion"], 2);
    let (code, doc, _) = m.producers(&["--epoch-margin", "0"]);
    assert_eq!(code, 4);
    assert_eq!(
        doc["EpochsNearExhaustion"].as_array().map(Vec::len),
        Some(1)
    );
}

#[test]
fn prefixes_of_counters_uuids_and_plain_ids() {
    let txn = |id: &str, pid: i64| {
        json!({"transactional_id": id, "producer_id": pid, "producer_epoch": 0,
               "state": "CompleteCommit", "timeout_ms": 60000, "start_time": "now-1m",
                    "coordinator": 1})
    };
    let m = mock(&cluster(
        vec![producer(1, 0, "now-1m", 0)],
        vec![
            txn("flink-sink-0-41", 1),
            txn("flink-sink-0-42", 2),
            txn("flink-sink-1-42", 3),
            txn("fn-1b4e28ba-2fa1-11d2-883f-0016d3cca427", 4),
            txn("fn-6f1c0a33-9b2d-4e55-a1c0-5d8e7f9a0b12", 5),
            txn("billing", 6),
        ],
    ));
    let (code, doc, stderr) = m.producers(&[]);
    assert_eq!(code, 0, "{stderr}");
    let prefixes: Vec<(String, String, i64)> = doc["Prefixes"]
        .as_array()
        .expect("prefixes")
        .iter()
        .map(|p| {
            (
                p["Prefix"].as_str().unwrap().to_string(),
                p["Tail"].as_str().unwrap().to_string(),
                p["TransactionalIds"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        prefixes,
        vec![
            ("flink-sink".into(), "counter".into(), 3),
            ("fn".into(), "uuid".into(), 2),
            ("billing".into(), "none".into(), 1),
        ]
    );
    let table = Command::new(KDP)
        .args([
            "producers",
            "--bootstrap-server",
            &m.bootstrap,
            "--timeout",
            "10s",
        ])
        .output()
        .expect("run kdp");
    let text = String::from_utf8_lossy(&table.stdout);
    let row = text
        .lines()
        .find(|l| l.starts_with("flink-sink "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("counter") && row.ends_with("yes"), "{row}");
}

#[test]
fn a_broker_that_does_not_answer_makes_the_totals_partial() {
    let mut doc = cluster(vec![producer(1, 0, "now-1m", -1)], vec![]);
    // broker 2 advertises a host nobody can reach
    doc["brokers"][1]["host"] = json!("nowhere.invalid");
    let m = mock(&doc);
    let (code, out, stderr) = m.producers(&[]);
    assert_eq!(code, 1, "partial answers never exit 0: {stderr}");
    assert_eq!(out["Partial"], true);
    assert_eq!(broker(&out, 2)["Answered"], false);
    assert_eq!(broker(&out, 1)["ProducerIds"], 1);
    // and the table says so in the broker's row
    let table = Command::new(KDP)
        .args([
            "producers",
            "--bootstrap-server",
            &m.bootstrap,
            "--timeout",
            "10s",
        ])
        .output()
        .expect("run kdp");
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("Producer ids per broker (partial)"), "{text}");
    let row = text
        .lines()
        .find(|l| l.starts_with("2 "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("no answer"), "{row}");
    // t has a replica on broker 2: its count is a lower bound, and says so
    assert_eq!(out["Topics"][0]["Partial"], true, "{out}");
    let row = text
        .lines()
        .find(|l| l.starts_with("t "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(row.contains("1 (partial)"), "{row}");
}

/// The forecast one minute either side of each boundary, on a broker
/// expiring ids after a day (broker 2): a minute's margin, so the time
/// between loading the mock and the scan cannot move an id across one.
#[test]
fn expiry_forecast_a_minute_either_side_of_each_boundary() {
    let m = mock(&cluster(
        vec![
            producer(1, 0, "now-22h 59m", -1), // 1h 1m left: within the day only
            producer(2, 0, "now-23h 1m", -1),  // 59m left: within the hour
            producer(3, 0, "now-23h 59m", -1), // 1m left: within the hour
            producer(4, 0, "now-1d 1m", -1),   // past
            producer(5, 0, "now-1m", -1),      // 23h 59m left: within the day
            json!({"ProducerId": 6, "LastTimestamp": "now-2d", "CurrentTxnStartOffset": 4,
                   "CoordinatorEpoch": 0}), // open: does not expire
            json!({"ProducerId": 7}),          // no timestamp: unknown
        ],
        vec![],
    ));
    let (code, doc, stderr) = m.producers(&[]);
    assert_eq!(code, 0, "{stderr}");
    let b2 = broker(&doc, 2);
    assert_eq!(b2["ProducerIds"], 7);
    assert_eq!(b2["ExpiringWithinHour"], 2, "{b2}");
    assert_eq!(b2["ExpiringWithinDay"], 4, "{b2}");
    assert_eq!(b2["PastExpiration"], 1, "{b2}");
    // broker 1 expires after an hour: 5 within it, 1 to 4 past, 6 open
    let b1 = broker(&doc, 1);
    assert_eq!(
        (
            b1["ExpiringWithinHour"].clone(),
            b1["PastExpiration"].clone()
        ),
        (json!(1), json!(4)),
        "{b1}"
    );
}

/// A cluster file's churning generator makes ids while the mock runs:
/// two scans a second apart count them as new on the broker, and a rate
/// threshold below it exits 4.
#[test]
fn a_generators_new_ids_are_churn_between_two_scans() {
    let doc = json!({
        "brokers": [{"id": 1}],
        "topics": [{"name": "sink", "partitions": [
            {"partition": 0, "leader": 1, "replicas": [1]},
            {"partition": 1, "leader": 1, "replicas": [1]}]}],
        "producer_generators": [{"topic": "sink", "every": "100ms", "start": "now-1m",
                                 "transactional_id": "flink-{n}", "coordinator": 1},
                                {"topic": "sink", "count": 2}]
    });
    let m = mock(&doc);
    let (code, out, stderr) = m.producers(&["--interval", "1s", "--max-new-per-second", "0.5"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("broker 1 gained"), "{stderr}");
    let new: i64 = out["Churn"]
        .as_array()
        .expect("churn")
        .iter()
        .map(|c| c["New"].as_i64().unwrap_or(0))
        .sum();
    // at least one second between the scans: at least 9 made in it
    assert!(new >= 9, "{out}");
    let b1 = broker(&out, 1);
    // the steady pair on both partitions, and the minute's churn
    assert!(b1["ProducerIds"].as_i64().unwrap() >= 4 + 600, "{b1}");
    let flink = out["Prefixes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["Prefix"] == "flink")
        .cloned()
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(flink["Tail"], "counter");
}

/// `kdp demo --producers`: broker 2 under pressure (above the demo's
/// threshold, exit 4), the others not; settlement-writer near the end of
/// its epochs with a measured rate; the Flink-like prefix one id per task.
#[test]
fn demo_producers_shows_a_broker_under_pressure_and_an_epoch_near_its_end() {
    let mut kdp = Command::new(KDP);
    kdp.args(["demo", "--producers", "--output", "json"]);
    let out = kdp.output().expect("run kdp demo");
    common::schema::check_command(&kdp, &out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("broker 2 holds"), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let ids = |b: i64| broker(&doc, b)["ProducerIds"].as_i64().unwrap();
    assert!(ids(2) > 1000, "{doc}");
    assert!(ids(1) < 1000 && ids(3) < 1000, "{doc}");
    let near = &doc["EpochsNearExhaustion"][0];
    assert_eq!(near["TransactionalId"], "settlement-writer", "{doc}");
    assert!(near["EpochsLeft"].as_i64().unwrap() < 1000);
    assert!(near["EpochsPerHour"].as_f64().is_some(), "{near}");
    let flink = &doc["Prefixes"][0];
    assert_eq!(
        (flink["Prefix"].clone(), flink["Tail"].clone()),
        (json!("ingest-flink"), json!("counter"))
    );
    let help = Command::new(KDP)
        .args(["demo", "--help"])
        .output()
        .expect("kdp demo --help");
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("--producers"), "{help}");
    assert!(help.contains("broker 2"), "{help}");
}

#[test]
fn since_counts_new_ids_per_second() {
    let m = mock(&cluster(vec![producer(1, 0, "now-1m", -1)], vec![]));
    let (_, mut before, _) = m.producers(&[]);
    // a scan ten seconds earlier that held another id instead
    let at = before["ScannedAtMs"].as_i64().unwrap() - 10_000;
    before["ScannedAtMs"] = json!(at);
    before["Held"]["1"]["t"] = json!([99]);
    let file = m.dir.join("before.json");
    std::fs::write(&file, serde_json::to_vec(&before).unwrap()).unwrap();
    let path = file.to_str().unwrap();
    let (code, doc, stderr) = m.producers(&["--since", path]);
    assert_eq!(code, 0, "{stderr}");
    let c = doc["Churn"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["Broker"] == 1)
        .cloned()
        .expect("broker 1 churn");
    assert_eq!((c["New"].clone(), c["Gone"].clone()), (json!(1), json!(1)));
    let r = c["NewPerSecond"].as_f64().unwrap();
    assert!(r > 0.0 && r <= 0.1, "{r}");
    let (code, _, stderr) = m.producers(&["--since", path, "--max-new-per-second", "0.01"]);
    assert_eq!(code, 4, "{stderr}");
    // not a report of this command: usage error
    std::fs::write(&file, b"{}").unwrap();
    let out = Command::new(KDP)
        .args([
            "producers",
            "--bootstrap-server",
            &m.bootstrap,
            "--since",
            path,
        ])
        .output()
        .expect("run kdp");
    assert_eq!(out.status.code(), Some(2));
}

/// A transaction its coordinator has been fencing for longer than its
/// timeout is listed with its start, and exits 4; one fencing for less
/// than its timeout is not.
#[test]
fn a_fence_past_its_timeout_is_listed_and_exits_4() {
    let fence = |id: &str, pid: i64, start: &str| {
        json!({"transactional_id": id, "producer_id": pid, "producer_epoch": 3,
               "state": "PrepareEpochFence", "timeout_ms": 60000, "start_time": start,
               "partitions": {"t": [0]}, "coordinator": 1})
    };
    let m = mock(&cluster(
        vec![producer(1, 3, "now-1m", 0), producer(2, 3, "now-1m", 0)],
        vec![
            fence("stuck-fence", 1, "now-2h"),
            fence("fresh-fence", 2, "now-10s"),
        ],
    ));
    let (code, doc, stderr) = m.producers(&[]);
    assert_eq!(code, 4, "{stderr}");
    let fences = doc["EpochFencesPastTimeout"].as_array().expect("fences");
    assert_eq!(fences.len(), 1, "{fences:?}");
    assert_eq!(fences[0]["TransactionalId"], "stuck-fence");
    assert_eq!(fences[0]["TransactionTimeoutMs"], 60000);
    assert!(fences[0]["TransactionStartTimeMs"].is_i64());
    assert!(
        stderr.contains("stuck-fence (producer id 1) has been in PrepareEpochFence"),
        "{stderr}"
    );
}

/// `--interval` scans twice: churn and rates are computed between the two
/// scans (nothing changes on the mock: no churn, exit 0), and
/// `--max-new-per-second` without a baseline is bad usage.
#[test]
fn interval_scans_twice_and_a_rate_threshold_needs_a_baseline() {
    let m = mock(&cluster(vec![producer(1, 0, "now-1m", -1)], vec![]));
    let (code, doc, stderr) = m.producers(&["--interval", "200ms", "--max-new-per-second", "1"]);
    assert_eq!(code, 0, "{stderr}");
    let churn = doc["Churn"]
        .as_array()
        .expect("churn between the two scans");
    assert_eq!(churn.len(), 2, "one row per broker and topic: {doc}");
    assert!(
        churn.iter().all(|c| c["New"] == 0 && c["Gone"] == 0),
        "{doc}"
    );
    let out = Command::new(KDP)
        .args(["producers", "--bootstrap-server", &m.bootstrap])
        .args(["--max-new-per-second", "1"])
        .output()
        .expect("run kdp");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("needs --since FILE or --interval"),
        "{stderr}"
    );
}
