//! `kdp batches` against a real Apache Kafka cluster, checked batch by
//! batch against Kafka's own `kafka-dump-log.sh --print-data-log`
//! (`DumpLogSegments` of the cluster's version, run on the
//! leader's segment files, which this test can read because
//! scripts/kafka-cluster.sh started the brokers under target/kafka-it):
//! base offset, last offset, producer id, epoch, base sequence, CRC valid,
//! compression, transactional and control flags, record count, size, for
//! topics written by real Java producers with each codec, idempotent and
//! transactional (commits and an abort). Needs the cluster: run through
//! scripts/test.sh (both generations).

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::{env, kdp, scenario, unique, Env};
use serde_json::Value;

/// One batch line of DumpLogSegments: `key: value` pairs.
fn dump_batches(
    env: &Env,
    topic: &str,
    partition: i32,
    leader: i32,
) -> Vec<BTreeMap<String, String>> {
    let dir = PathBuf::from(&env.state_dir)
        .join(format!("node{leader}"))
        .join("data")
        .join(format!("{topic}-{partition}"));
    let mut segments: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    segments.sort();
    let mut args = vec![
        "-cp".to_string(),
        env.classpath.clone(),
        // kafka-dump-log.sh's class: Scala in core up to 3.9, Java in
        // kafka-tools since it moved there.
        if env.kafka_version.starts_with("3.") {
            "kafka.tools.DumpLogSegments".into()
        } else {
            "org.apache.kafka.tools.DumpLogSegments".into()
        },
        "--print-data-log".into(),
        "--files".into(),
    ];
    args.push(
        segments
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(","),
    );
    let r = common::run(
        Command::new(&env.java).args(&args),
        Duration::from_secs(120),
    );
    assert_eq!(r.code, 0, "DumpLogSegments failed:\n{}", r.stderr);
    r.stdout
        .lines()
        .filter(|l| l.starts_with("baseOffset:"))
        .map(|l| {
            // "baseOffset: 0 lastOffset: 9 count: 10 ... isvalid: true"
            let words: Vec<&str> = l.split_whitespace().collect();
            let mut m = BTreeMap::new();
            let mut i = 0;
            while i + 1 < words.len() {
                if let Some(key) = words[i].strip_suffix(':') {
                    m.insert(key.to_string(), words[i + 1].to_string());
                    i += 2;
                } else {
                    i += 1;
                }
            }
            m
        })
        .collect()
}

fn leader_of(created: &Value) -> i32 {
    created["partitions"][0]["leader"].as_i64().expect("leader") as i32
}

/// kdp's row and Kafka's line for the same batch agree on every field
/// both print.
fn same(kdp_row: &Value, kafka: &BTreeMap<String, String>) {
    let k = |f: &str| {
        kafka
            .get(f)
            .unwrap_or_else(|| panic!("dump line without {f}: {kafka:?}"))
    };
    let n = |f: &str| {
        k(f).parse::<i64>()
            .unwrap_or_else(|_| panic!("{f}: {}", k(f)))
    };
    let ctx = format!("kdp {kdp_row} vs kafka-dump-log {kafka:?}");
    assert_eq!(
        kdp_row["BaseOffset"].as_i64(),
        Some(n("baseOffset")),
        "{ctx}"
    );
    assert_eq!(
        kdp_row["LastOffset"].as_i64(),
        Some(n("lastOffset")),
        "{ctx}"
    );
    assert_eq!(
        kdp_row["ProducerId"].as_i64(),
        Some(n("producerId")),
        "{ctx}"
    );
    assert_eq!(
        kdp_row["ProducerEpoch"].as_i64(),
        Some(n("producerEpoch")),
        "{ctx}"
    );
    assert_eq!(
        kdp_row["BaseSequence"].as_i64(),
        Some(n("baseSequence")),
        "{ctx}"
    );
    assert_eq!(
        kdp_row["LastSequence"].as_i64(),
        Some(n("lastSequence")),
        "{ctx}"
    );
    assert_eq!(kdp_row["Records"].as_i64(), Some(n("count")), "{ctx}");
    assert_eq!(kdp_row["Size"].as_i64(), Some(n("size")), "{ctx}");
    assert_eq!(kdp_row["Crc"].as_i64(), Some(n("crc")), "{ctx}");
    assert_eq!(
        kdp_row["CrcValid"].as_bool(),
        Some(k("isvalid") == "true"),
        "{ctx}"
    );
    assert_eq!(
        kdp_row["Compression"].as_str(),
        Some(k("compresscodec").as_str()),
        "{ctx}"
    );
    assert_eq!(
        kdp_row["Transactional"].as_bool(),
        Some(k("isTransactional") == "true"),
        "{ctx}"
    );
    assert_eq!(
        kdp_row["Control"].is_string(),
        k("isControl") == "true",
        "{ctx}"
    );
    assert_eq!(
        kdp_row["PartitionLeaderEpoch"].as_i64(),
        Some(n("partitionLeaderEpoch")),
        "{ctx}"
    );
    // DumpLogSegments prints the batch's MaxTimestamp under its type's name.
    assert_eq!(
        kdp_row["MaxTimestamp"].as_i64(),
        Some(n("CreateTime")),
        "{ctx}"
    );
}

#[test]
#[ignore = "needs a real Kafka cluster (scripts/test.sh)"]
fn batches_equal_kafka_dump_log_for_every_codec_idempotent_and_transactional() {
    let env = env();
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
        let topic = unique(&format!("batches-{codec}"));
        let created = common::create_topic_rf(&env, &topic, 1, 1);
        let leader = leader_of(&created);
        let base = [
            "--topic",
            &topic,
            "--partition",
            "0",
            "--compression",
            codec,
        ];
        let mut idem = base.to_vec();
        idem.extend(["--batches", "3", "--records", "40"]);
        scenario(&env, "write-batches", &idem);
        let tid = unique(&format!("batches-txn-{codec}"));
        let mut txn = base.to_vec();
        txn.extend([
            "--batches",
            "2",
            "--records",
            "25",
            "--transactional-id",
            &tid,
        ]);
        scenario(&env, "write-batches", &txn);

        let r = kdp(&[
            "batches",
            "--bootstrap-server",
            &env.bootstrap,
            "--topic",
            &topic,
            "--partition",
            "0",
            "--from-offset",
            "0",
            "--output",
            "json",
        ]);
        assert_eq!(r.code, 0, "{codec}: {}", r.stderr);
        let doc: Value = serde_json::from_str(&r.stdout).unwrap();
        let rows = doc["Batches"].as_array().unwrap().clone();
        let dumped = dump_batches(&env, &topic, 0, leader);
        // 3 idempotent batches; 2 committed transactions and an aborted
        // one, each a data batch and its marker.
        assert_eq!(rows.len(), 9, "{codec}: {rows:?}");
        assert_eq!(dumped.len(), rows.len(), "{codec}: {dumped:?}");
        for (row, line) in rows.iter().zip(&dumped) {
            same(row, line);
        }
        let markers: Vec<(&str, bool)> = rows
            .iter()
            .filter_map(|r| {
                r["Control"]
                    .as_str()
                    .map(|c| (c, r["Compression"] == "none"))
            })
            .collect();
        assert_eq!(
            markers,
            [("COMMIT", true), ("COMMIT", true), ("ABORT", true)],
            "{codec}"
        );
        let data_codecs: Vec<&str> = rows
            .iter()
            .filter(|r| r["Control"].is_null())
            .map(|r| r["Compression"].as_str().unwrap())
            .collect();
        assert!(
            data_codecs.iter().all(|c| *c == codec),
            "{codec}: {data_codecs:?}"
        );
        // Every sequence in order: a real producer's.
        assert!(
            rows.iter().all(|r| matches!(
                r["Sequence"].as_str(),
                None | Some("first" | "in-sequence" | "new-epoch")
            )),
            "{codec}: {rows:?}"
        );

        // The last two batches by walking back: the same as the dump's.
        let r = kdp(&[
            "batches",
            "--bootstrap-server",
            &env.bootstrap,
            "--topic",
            &topic,
            "--partition",
            "0",
            "--last",
            "2",
            "--output",
            "jsonl",
        ]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let last: Vec<Value> = common::parse_jsonl(&r.stdout);
        assert_eq!(last.len(), 2);
        for (row, line) in last.iter().zip(&dumped[dumped.len() - 2..]) {
            same(row, line);
        }
    }
}
