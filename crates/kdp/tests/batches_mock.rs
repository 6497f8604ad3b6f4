//! `kdp batches` against the demo cluster's inventory-1 (served by
//! `kdp mock-broker`): each producer's sequence judged, the duplicate and
//! the gap found with exit status 4, a producer filter, a start offset,
//! and the JSON checked against docs/schemas/batches.schema.json.

use std::process::{Command, Stdio};

use serde_json::Value;

mod common;
mod mock_broker;

use mock_broker::MockBroker;

const KDP: &str = env!("CARGO_BIN_EXE_kdp");

fn demo() -> (MockBroker, std::path::PathBuf) {
    let out = Command::new(KDP)
        .args(["demo", "--print-cluster-file"])
        .output()
        .expect("kdp demo --print-cluster-file");
    // one directory per call: the tests run in parallel, and a shared file
    // could be truncated by one while the other's mock reads it
    static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "kdp-batches-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("cluster.json");
    std::fs::write(&file, &out.stdout).unwrap();
    (MockBroker::start(&file, &[], Stdio::null()), dir)
}

fn batches(bootstrap: &str, extra: &[&str]) -> (Option<i32>, String, String) {
    let mut args = vec![
        "batches",
        "--bootstrap-server",
        bootstrap,
        "--topic",
        "inventory",
        "--partition",
        "1",
    ];
    args.extend(extra);
    let out = Command::new(KDP).args(&args).output().expect("run kdp");
    let stdout = String::from_utf8(out.stdout).unwrap();
    if common::schema::output_format(&args).is_some() {
        common::schema::check(&args, &stdout);
    }
    (
        out.status.code(),
        stdout,
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn the_demo_partition_shows_its_duplicate_and_its_gap() {
    let (broker, dir) = demo();
    let (code, stdout, stderr) = batches(&broker.bootstrap, &["--output", "json"]);
    assert_eq!(code, Some(4), "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let rows = doc["Batches"].as_array().unwrap();
    let col = |name: &str| -> Vec<Value> { rows.iter().map(|r| r[name].clone()).collect() };
    assert_eq!(
        col("BaseOffset"),
        [2000, 2100, 2200, 2250, 2300, 2350, 2375, 2378, 2379, 2429].map(Value::from)
    );
    let verdicts: Vec<Option<&str>> = rows.iter().map(|r| r["Sequence"].as_str()).collect();
    assert_eq!(
        verdicts,
        [
            Some("first"),
            Some("in-sequence"),
            Some("in-sequence"),
            Some("in-sequence"),
            Some("duplicate"),
            Some("in-sequence"),
            Some("first"),
            None,
            Some("gap"),
            None
        ]
    );
    assert_eq!(rows[4]["BrokerRule"], "duplicate");
    assert_eq!(rows[8]["BrokerRule"], "OutOfOrderSequence");
    assert_eq!(
        rows[8]["Note"],
        "sequence gap: expected 923, found 948 (25 missing)"
    );
    assert_eq!(rows[7]["Control"], "COMMIT");
    assert_eq!(rows[7]["CoordinatorEpoch"], 4);
    assert_eq!(
        col("Compression")[..5],
        ["lz4", "lz4", "lz4", "zstd", "zstd"].map(Value::from)
    );
    assert!(rows.iter().all(|r| r["CrcValid"] == true));
    assert!(rows.iter().all(|r| r["MaxTime"].is_string()));
    assert!(stderr.contains("producer 9101: 7 batches"), "{stderr}");

    // Only producer 9103: in order, exit 0.
    let (code, stdout, _) = batches(
        &broker.bootstrap,
        &["--producer-id", "9103", "--output", "jsonl"],
    );
    assert_eq!(code, Some(0));
    assert_eq!(stdout.lines().count(), 2);

    // From an offset inside the duplicate: it is the first 9101 batch
    // read, so it is judged by nothing; the gap is still found.
    let (code, stdout, _) = batches(
        &broker.bootstrap,
        &["--from-offset", "2310", "--output", "jsonl"],
    );
    assert_eq!(code, Some(4));
    let first: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(
        (first["BaseOffset"].as_i64(), first["Sequence"].as_str()),
        (Some(2300), Some("first"))
    );

    // The last 3 batches hold only one of 9101's: nothing to compare it
    // with, so no problem; the last 5 hold the batch before the gap.
    let (code, _, _) = batches(&broker.bootstrap, &["--last", "3"]);
    assert_eq!(code, Some(0));
    let (code, stdout, _) = batches(&broker.bootstrap, &["--last", "5"]);
    assert_eq!(code, Some(4));
    assert!(
        stdout.contains("gap: sequence gap: expected 923"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_offset_outside_the_log_is_refused() {
    let (broker, dir) = demo();
    let (code, _, stderr) = batches(&broker.bootstrap, &["--from-offset", "10"]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("log start 2000"), "{stderr}");
    let _ = std::fs::remove_dir_all(dir);
}
