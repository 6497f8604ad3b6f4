//! `kdp describe` against a real three-broker Apache Kafka cluster of either
//! generation (Kafka 3.9: transaction protocol v1; the newest 4.x: v2)
//! (scripts/kafka-cluster.sh), with producer state made by real Java
//! producers (it/ Scenario) and Kafka's own `kafka-transactions.sh
//! describe-producers` (TransactionsCommand) as the oracle.
//!
//! Run with scripts/test.sh, or start the cluster, source
//! target/kafka-it/cluster.env and `cargo test -p kdp --test real_kafka -- --include-ignored`.
//! Without the cluster the tests fail; they never skip.

mod common;

use common::*;
use kdp_wire::ErrorCode;
use std::collections::BTreeMap;

fn kdp_describe(env: &Env, extra: &[&str]) -> Run {
    let mut args = vec![
        "describe",
        "--bootstrap-server",
        &env.bootstrap,
        "--timeout",
        "30s",
    ];
    args.extend_from_slice(extra);
    kdp(&args)
}

fn sorted(mut rows: Vec<ProducerRow>) -> Vec<ProducerRow> {
    rows.sort_by_key(|r| r.producer_id);
    rows
}

/// One partition, leader: idempotent and committed-transactional producers on
/// partition 0, an open transaction on partition 1. kdp must report exactly
/// the ids, epochs and sequences the producers made (as the Scenario saw them
/// and it/README.md explains) and agree with TransactionsCommand on every field.
#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn one_partition_matches_producers_and_kafka_tool() {
    let env = env();
    let topic = unique("kdp-one");
    create_topic(&env, &topic, 2);
    let idem = scenario(
        &env,
        "idempotent",
        &["--topic", &topic, "--partition", "0", "--records", "5"],
    );
    let tid_c = unique("kdp-tx-c");
    let commit = scenario(
        &env,
        "txn-commit",
        &[
            "--topic",
            &topic,
            "--partition",
            "0",
            "--records",
            "4",
            "--transactional-id",
            &tid_c,
        ],
    );
    let tid_o = unique("kdp-tx-o");
    let open = open_txn(&env, &topic, 1, &tid_o, 3);

    // what the producers did (it/README.md, per transaction protocol)
    let idem_row = scenario_row(&idem);
    assert_eq!((idem_row.producer_epoch, idem_row.last_sequence), (0, 4));
    assert_eq!(idem_row.current_txn_start_offset, -1);
    let commit_row = scenario_row(&commit);
    if env.txn_version == 1 {
        assert_eq!(
            (commit_row.producer_epoch, commit_row.last_sequence),
            (0, 3),
            "v1: the commit keeps the epoch and the sequence"
        );
    } else {
        assert_eq!(
            (commit_row.producer_epoch, commit_row.last_sequence),
            (1, -1),
            "v2: EndTxn bumped the epoch"
        );
    }
    let open_row = scenario_row(&open);
    assert_eq!((open_row.producer_epoch, open_row.last_sequence), (0, 2));
    assert_eq!(
        open_row.current_txn_start_offset,
        open["baseOffset"].as_i64().unwrap()
    );

    for (partition, want) in [(0, sorted(vec![idem_row, commit_row])), (1, vec![open_row])] {
        let p = partition.to_string();
        // --output json, read back with kdp-wire's strict JSON reader
        let r = kdp_describe(
            &env,
            &["--topic", &topic, "--partition", &p, "--output", "json"],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        let doc = parse_json_doc(&r.stdout);
        assert_eq!(doc.topics.len(), 1);
        assert_eq!(doc.topics[0].partitions.len(), 1);
        let got = json_partition(&doc, &topic, partition);
        assert_eq!(got, want, "kdp vs the producers on {topic}-{partition}");

        // Kafka's own tool, asking the leader
        let kafka = kafka_describe_producers(&env, &topic, partition, None);
        assert_eq!(
            got, kafka,
            "kdp vs TransactionsCommand on {topic}-{partition}"
        );

        // --output jsonl: the same, flat, with the leader and an RFC 3339 timestamp
        let r = kdp_describe(
            &env,
            &["--topic", &topic, "--partition", &p, "--output", "jsonl"],
        );
        assert_eq!(r.code, 0);
        let lines = parse_jsonl(&r.stdout);
        assert_eq!(sorted(lines.iter().map(jsonl_row).collect()), want);
        let leader = idem["leader"].as_i64().unwrap();
        for l in &lines {
            assert_eq!(l["Topic"], topic.as_str());
            assert_eq!(l["Partition"], partition);
            let ts = l["LastTimestampRfc3339"].as_str().unwrap();
            assert!(
                ts.ends_with('Z') && ts.len() == "2026-11-29T12:00:00.123Z".len(),
                "{ts}"
            );
            if partition == 0 {
                assert_eq!(
                    l["BrokerId"].as_i64(),
                    Some(leader),
                    "partition 0's leader answers"
                );
            }
        }

        // --output table: a row per producer with its id and epoch
        let r = kdp_describe(&env, &["--topic", &topic, "--partition", &p]);
        assert_eq!(r.code, 0);
        let header = r.stdout.lines().next().unwrap();
        assert!(
            header.starts_with("Topic") && header.contains("CurrentTxnStartOffset"),
            "{}",
            r.stdout
        );
        for w in &want {
            let row = r
                .stdout
                .lines()
                .find(|l| l.split_whitespace().nth(3) == Some(&w.producer_id.to_string()))
                .unwrap_or_else(|| panic!("no row for producer {}:\n{}", w.producer_id, r.stdout));
            let cells: Vec<&str> = row.split_whitespace().collect();
            assert_eq!(cells[0], topic);
            assert_eq!(cells[4], w.producer_epoch.to_string());
            assert_eq!(cells[5], w.last_sequence.to_string());
            let start = if w.current_txn_start_offset < 0 {
                "-".to_string()
            } else {
                w.current_txn_start_offset.to_string()
            };
            assert_eq!(cells.last().copied(), Some(start.as_str()), "{row}");
        }
    }
}

/// `--broker-id` on the leader and on each follower: every replica answers
/// from its own producer state; kdp and TransactionsCommand --broker-id agree.
#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn broker_id_followers_match_kafka_tool() {
    let env = env();
    let topic = unique("kdp-follower");
    let created = create_topic(&env, &topic, 1);
    let idem = scenario(
        &env,
        "idempotent",
        &["--topic", &topic, "--partition", "0", "--records", "3"],
    );
    let tid = unique("kdp-tx-f");
    let open = open_txn(&env, &topic, 0, &tid, 2);
    let want = sorted(vec![scenario_row(&idem), scenario_row(&open)]);
    let leader = created["partitions"][0]["leader"].as_i64().unwrap() as i32;
    let replicas: Vec<i32> = created["partitions"][0]["replicas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap() as i32)
        .collect();
    assert_eq!(replicas.len(), 3);
    assert!(replicas.iter().any(|r| *r != leader));
    for b in replicas {
        let id = b.to_string();
        let r = kdp_describe(
            &env,
            &[
                "--topic",
                &topic,
                "--partition",
                "0",
                "--broker-id",
                &id,
                "--output",
                "jsonl",
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        let lines = parse_jsonl(&r.stdout);
        for l in &lines {
            assert_eq!(
                l["BrokerId"].as_i64(),
                Some(b as i64),
                "the asked broker answers"
            );
        }
        let got = sorted(lines.iter().map(jsonl_row).collect());
        assert_eq!(got, want, "broker {b} (leader {leader}) vs the producers");
        let kafka = kafka_describe_producers(&env, &topic, 0, Some(b));
        assert_eq!(
            got, kafka,
            "broker {b} (leader {leader}): kdp vs TransactionsCommand --broker-id"
        );

        // the table names the column after the asked broker
        let r = kdp_describe(
            &env,
            &["--topic", &topic, "--partition", "0", "--broker-id", &id],
        );
        assert_eq!(r.code, 0);
        assert!(
            r.stdout.lines().next().unwrap().contains("Broker"),
            "{}",
            r.stdout
        );
    }
    // a broker id the cluster does not have: bad input, refused at once
    // naming the brokers it has (nothing was asked, so no rows)
    let r = kdp_describe(
        &env,
        &[
            "--topic",
            &topic,
            "--partition",
            "0",
            "--broker-id",
            "42",
            "--output",
            "jsonl",
        ],
    );
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr
            .contains("broker 42 is not in the cluster; its brokers are 1, 2, 3"),
        "{}",
        r.stderr
    );
}

/// A whole topic, several topics with --partition, and the whole cluster
/// (internal topics included) report exactly the producers made.
#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn topic_several_topics_and_whole_cluster() {
    let env = env();
    let topic = unique("kdp-topic");
    let other = unique("kdp-other");
    create_topic(&env, &topic, 3);
    create_topic(&env, &other, 2);
    let p0 = scenario(
        &env,
        "idempotent",
        &["--topic", &topic, "--partition", "0", "--records", "7"],
    );
    let p2 = scenario(
        &env,
        "idempotent",
        &["--topic", &topic, "--partition", "2", "--records", "1"],
    );
    let tid = unique("kdp-tx-t");
    scenario(
        &env,
        "txn-commit",
        &[
            "--topic",
            &topic,
            "--partition",
            "1",
            "--records",
            "2",
            "--transactional-id",
            &tid,
        ],
    );
    // fence after a completed transaction (it/README.md): v2: committed at epoch 1, data at 2,
    // marker at 3; v1: committed at 0, the new instance's InitProducerId bumps to 1, no more
    let fenced = scenario(
        &env,
        "fence",
        &[
            "--topic",
            &topic,
            "--partition",
            "1",
            "--records",
            "2",
            "--transactional-id",
            &tid,
        ],
    );
    let want_epoch = if env.txn_version == 1 { 1 } else { 3 };
    assert_eq!(scenario_row(&fenced).producer_epoch, want_epoch);
    let o1 = scenario(
        &env,
        "idempotent",
        &["--topic", &other, "--partition", "1", "--records", "2"],
    );

    let mut want: BTreeMap<(String, i32), Vec<ProducerRow>> = BTreeMap::new();
    want.insert((topic.clone(), 0), vec![scenario_row(&p0)]);
    want.insert((topic.clone(), 1), vec![scenario_row(&fenced)]);
    want.insert((topic.clone(), 2), vec![scenario_row(&p2)]);

    // the whole topic, jsonl
    let r = kdp_describe(
        &env,
        &["--topic", &topic, "--output", "jsonl", "--show-empty"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut got: BTreeMap<(String, i32), Vec<ProducerRow>> = BTreeMap::new();
    for l in parse_jsonl(&r.stdout) {
        assert!(l.get("ErrorCode").is_none(), "{l}");
        assert!(
            l.get("ActiveProducers").is_none(),
            "every partition has a producer: {l}"
        );
        let key = (
            l["Topic"].as_str().unwrap().to_string(),
            l["Partition"].as_i64().unwrap() as i32,
        );
        got.entry(key).or_default().push(jsonl_row(&l));
    }
    assert_eq!(got, want);
    // the Kafka tool agrees on partition 1 (the fenced transactional id)
    assert_eq!(
        got[&(topic.clone(), 1)],
        kafka_describe_producers(&env, &topic, 1, None)
    );

    // two topics, --partition applies to each
    let r = kdp_describe(
        &env,
        &[
            "--topic",
            &topic,
            "--topic",
            &other,
            "--partition",
            "1",
            "--output",
            "json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc = parse_json_doc(&r.stdout);
    let names: Vec<&str> = doc.topics.iter().map(|t| t.name.as_str()).collect();
    let mut expect_names = vec![topic.as_str(), other.as_str()];
    expect_names.sort();
    assert_eq!(names, expect_names);
    assert!(doc
        .topics
        .iter()
        .all(|t| t.partitions.len() == 1 && t.partitions[0].partition_index == 1));
    assert_eq!(json_partition(&doc, &topic, 1), want[&(topic.clone(), 1)]);
    assert_eq!(json_partition(&doc, &other, 1), vec![scenario_row(&o1)]);

    // the whole cluster, json: our topics exactly, and the internal topics' partitions
    let r = kdp_describe(&env, &["--output", "json"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stderr, r.stdout);
    let doc = parse_json_doc(&r.stdout);
    for ((t, p), rows) in &want {
        assert_eq!(
            &json_partition(&doc, t, *p),
            rows,
            "{t}-{p} in the whole-cluster scan"
        );
    }
    assert_eq!(json_partition(&doc, &other, 0), vec![]);
    assert_eq!(json_partition(&doc, &other, 1), vec![scenario_row(&o1)]);
    for internal in ["__consumer_offsets", "__transaction_state"] {
        let t = doc
            .topics
            .iter()
            .find(|t| t.name == internal)
            .unwrap_or_else(|| panic!("{internal} missing"));
        let idx: Vec<i32> = t.partitions.iter().map(|p| p.partition_index).collect();
        assert_eq!(
            idx,
            (0..5).collect::<Vec<_>>(),
            "{internal}: 5 partitions (kafka-cluster.sh)"
        );
    }
    for t in &doc.topics {
        for p in &t.partitions {
            assert_eq!(
                p.error_code,
                ErrorCode::NONE,
                "{}-{}: {:?}",
                t.name,
                p.partition_index,
                p.error_message
            );
        }
    }

    // whole cluster as a table and as jsonl agree on our producers
    let r = kdp_describe(&env, &["--output", "jsonl"]);
    assert_eq!(r.code, 0);
    let mut from_jsonl: BTreeMap<(String, i32), Vec<ProducerRow>> = BTreeMap::new();
    for l in parse_jsonl(&r.stdout) {
        let key = (
            l["Topic"].as_str().unwrap().to_string(),
            l["Partition"].as_i64().unwrap() as i32,
        );
        if key.0 == topic {
            from_jsonl.entry(key).or_default().push(jsonl_row(&l));
        }
    }
    assert_eq!(from_jsonl, want);
    let r = kdp_describe(&env, &[]);
    assert_eq!(r.code, 0);
    let ours = r
        .stdout
        .lines()
        .filter(|l| l.starts_with(&format!("{topic} ")))
        .count();
    assert_eq!(
        ours, 3,
        "one table row per producer of {topic}:\n{}",
        r.stdout
    );
}

/// Unknown topics and partitions are error rows (exit 1), reported at once,
/// and the partitions that exist are still described.
#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn unknown_topic_and_partition_are_error_rows() {
    let env = env();
    let topic = unique("kdp-known");
    let missing = unique("kdp-missing");
    create_topic(&env, &topic, 2);
    let idem = scenario(
        &env,
        "idempotent",
        &["--topic", &topic, "--partition", "1", "--records", "2"],
    );

    // an unknown partition of a known topic
    let r = kdp_describe(
        &env,
        &["--topic", &topic, "--partition", "1,7", "--output", "jsonl"],
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.elapsed.as_secs() < 10,
        "reported, not retried until the timeout: {:?}",
        r.elapsed
    );
    let lines = parse_jsonl(&r.stdout);
    let err: Vec<_> = lines
        .iter()
        .filter(|l| l.get("ErrorCode").is_some())
        .collect();
    assert_eq!(err.len(), 1, "{}", r.stdout);
    assert_eq!(err[0]["Partition"], 7);
    assert_eq!(err[0]["ErrorCode"], 3);
    assert_eq!(err[0]["ErrorName"], "UNKNOWN_TOPIC_OR_PARTITION");
    let ok: Vec<_> = lines
        .iter()
        .filter(|l| l.get("ProducerId").is_some())
        .map(jsonl_row)
        .collect();
    assert_eq!(ok, vec![scenario_row(&idem)]);
    assert!(
        r.stderr
            .contains("kdp: 1 of 2 partitions could not be described"),
        "{}",
        r.stderr
    );

    // an unknown topic next to a known one, json
    let r = kdp_describe(
        &env,
        &["--topic", &missing, "--topic", &topic, "--output", "json"],
    );
    assert_eq!(r.code, 1);
    let doc = parse_json_doc(&r.stdout);
    let m = doc
        .topics
        .iter()
        .find(|t| t.name == missing)
        .expect("missing topic reported");
    assert_eq!(m.partitions.len(), 1);
    assert_eq!(m.partitions[0].partition_index, -1, "whole-topic error row");
    assert_eq!(
        m.partitions[0].error_code,
        ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
    );
    assert!(m.partitions[0]
        .error_message
        .as_deref()
        .unwrap()
        .contains("does not exist"));
    assert_eq!(json_partition(&doc, &topic, 1), vec![scenario_row(&idem)]);
    assert_eq!(json_partition(&doc, &topic, 0), vec![]);

    // the table shows the error's name and message
    let r = kdp_describe(&env, &["--topic", &missing, "--partition", "0"]);
    assert_eq!(r.code, 1);
    let row = r
        .stdout
        .lines()
        .find(|l| l.starts_with(&missing))
        .expect("an error row");
    assert!(row.contains("UNKNOWN_TOPIC_OR_PARTITION"), "{row}");
}

/// A bootstrap address where nothing listens: exit 3, within the timeout.
#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn unreachable_bootstrap_exits_3() {
    let _env = env();
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let addr = format!("127.0.0.1:{port}");
    let r = kdp(&["describe", "--bootstrap-server", &addr, "--timeout", "5s"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(r.elapsed.as_secs_f64() < 6.0, "{:?}", r.elapsed);
    assert!(
        r.stderr.starts_with("kdp: cannot reach the cluster"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.is_empty());
}
