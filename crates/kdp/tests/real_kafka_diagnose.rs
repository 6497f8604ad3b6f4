//! The diagnosis commands against a real cluster of either generation
//! (Kafka 3.9: transaction protocol v1; 4.x: v2), with Kafka's own
//! TransactionsCommand as the oracle. Run with scripts/test.sh.

mod common;

use common::*;
use serde_json::Value;

fn i(v: &Value, k: &str) -> i64 {
    v[k].as_i64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

/// `kdp <cmd...> --output json` on the test cluster: exit status and the
/// document's rows under `key`.
fn kdp_json(env: &Env, cmd: &[&str], args: &[&str], key: &str) -> (i32, Vec<Value>) {
    let (code, doc) = kdp_doc(env, cmd, args);
    (code, doc[key].as_array().cloned().unwrap_or_default())
}

/// kdp's whole `--output json` document.
fn kdp_doc(env: &Env, cmd: &[&str], args: &[&str]) -> (i32, Value) {
    let mut all: Vec<&str> = cmd.to_vec();
    all.extend(["--bootstrap-server", &env.bootstrap, "--timeout", "40s"]);
    all.extend(args);
    all.extend(["--output", "json"]);
    let r = kdp(&all);
    let doc: Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("{e}: {:?} {}", r.stdout, r.stderr));
    (r.code, doc)
}

/// A producer killed inside a transaction with a long timeout: its open
/// transaction shows with its transactional id and the records it blocks,
/// and it is not hanging while the coordinator tracks it, even at a zero
/// timeout; Kafka's find-hanging agrees (prints nothing).
#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn a_tracked_open_transaction_is_never_hanging_and_shows_what_it_blocks() {
    let env = env();
    let topic = unique("kdp-dg-open");
    create_topic(&env, &topic, 1);
    let tid = unique("kdp-dg-open-tx");
    let open = open_txn(&env, &topic, 0, &tid, 5);
    let pid = i(&open, "producerId");

    let (code, rows) = kdp_json(
        &env,
        &["find-hanging"],
        &["--topic", &topic, "--max-transaction-timeout", "0", "--all"],
        "Transactions",
    );
    assert_eq!(code, 0, "nothing hangs: {rows:?}");
    assert_eq!(rows.len(), 1, "{rows:?}");
    let r = &rows[0];
    assert_eq!(r["Verdict"], "ok");
    assert_eq!(r["ProducerId"], pid);
    assert_eq!(r["TransactionalId"], tid.as_str());
    assert_eq!(r["CoordinatorState"], "Ongoing");
    assert_eq!(
        r["BlockedRecords"], 5,
        "all five open records are above the LSO"
    );
    assert_eq!(r["StartOffset"], i(&open, "baseOffset"));
    assert_eq!(r["KafkaSaysHanging"], false);

    let k = transactions_command(
        &env,
        &[
            "find-hanging",
            "--topic",
            &topic,
            "--max-transaction-timeout",
            "0",
        ],
    );
    assert_eq!(k.code, 0, "{}", k.stderr);
    assert!(
        parse_tool_table(&k.stdout).is_empty(),
        "Kafka agrees: {}",
        k.stdout
    );

    // the whole cluster, the brokers' own timeout (an hour here): no row
    let (code, rows) = kdp_json(&env, &["find-hanging"], &[], "Transactions");
    assert_eq!((code, rows.len()), (0, 0), "{rows:?}");
}

/// `kdp transactions list` and `describe` print what Kafka's tool prints,
/// field by field.
#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn transactions_list_and_describe_agree_with_kafka_transactions() {
    let env = env();
    let topic = unique("kdp-dg-list");
    create_topic(&env, &topic, 1);
    let tid = unique("kdp-dg-list-tx");
    open_txn(&env, &topic, 0, &tid, 2);

    let r = kdp(&[
        "transactions",
        "--bootstrap-server",
        &env.bootstrap,
        "list",
        "--output",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).expect("json");
    let ours: Vec<(String, String, String, String)> = doc["Transactions"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r["TransactionalId"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                r["Coordinator"].to_string(),
                r["ProducerId"].to_string(),
                r["TransactionState"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    let k = transactions_command(&env, &["list"]);
    assert_eq!(k.code, 0, "{}", k.stderr);
    let mut theirs: Vec<(String, String, String, String)> = parse_tool_table(&k.stdout)
        .into_iter()
        .map(|m| {
            (
                m["TransactionalId"].clone(),
                m["Coordinator"].clone(),
                m["ProducerId"].clone(),
                m["TransactionState"].clone(),
            )
        })
        .collect();
    theirs.sort();
    // Other tests' transactions may change state between the two listings;
    // this test's own id must be in both, identically.
    let mine =
        |rows: &[(String, String, String, String)]| rows.iter().find(|r| r.0 == tid).cloned();
    assert!(mine(&ours).is_some(), "{ours:?}");
    assert_eq!(mine(&ours), mine(&theirs));

    let r = kdp(&[
        "transactions",
        "--bootstrap-server",
        &env.bootstrap,
        "describe",
        "--transactional-id",
        &tid,
        "--output",
        "json",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).expect("json");
    let ours = &doc["Transactions"][0];
    let theirs = kafka_describe_transaction(&env, &tid);
    assert_eq!(ours["CoordinatorId"].to_string(), theirs["CoordinatorId"]);
    assert_eq!(ours["ProducerId"].to_string(), theirs["ProducerId"]);
    assert_eq!(ours["ProducerEpoch"].to_string(), theirs["ProducerEpoch"]);
    assert_eq!(
        ours["TransactionState"],
        theirs["TransactionState"].as_str()
    );
    assert_eq!(
        ours["TransactionTimeoutMs"].to_string(),
        theirs["TransactionTimeoutMs"]
    );
    assert_eq!(
        ours["CurrentTransactionStartTimeMs"].to_string(),
        theirs["CurrentTransactionStartTimeMs"]
    );
    assert_eq!(
        ours["TopicPartitions"],
        serde_json::json!([format!("{topic}-0")])
    );
    assert_eq!(theirs["TopicPartitions"], format!("{topic}-0"));
}

/// A healthy producer that committed one transaction to one partition and
/// its next to another is flagged nowhere, on either generation (under v2
/// the first partition keeps an older epoch, which proves nothing); on
/// Kafka 3.9 the last writes of a fenced instance are flagged `fenced`.
#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn flags_healthy_producers_never_and_fenced_instances_on_both_generations() {
    let env = env();
    let topic = unique("kdp-dg-flags");
    create_topic(&env, &topic, 4);
    let healthy = unique("kdp-dg-healthy");
    let two = scenario(
        &env,
        "txn-two-partitions",
        &[
            "--topic",
            &topic,
            "--partition-a",
            "0",
            "--partition-b",
            "1",
            "--records",
            "3",
            "--transactional-id",
            &healthy,
        ],
    );
    let healthy_pid = i(&two, "producerId");
    let fenced = unique("kdp-dg-fenced");
    let f = scenario(
        &env,
        "fence-after-write",
        &[
            "--topic",
            &topic,
            "--partition-a",
            "2",
            "--partition-b",
            "3",
            "--records",
            "2",
            "--transactional-id",
            &fenced,
        ],
    );
    let fenced_pid = i(&f, "producerId");

    let (code, doc) = kdp_doc(
        &env,
        &["describe"],
        &["--topic", &topic, "--with-transactions"],
    );
    let rows = describe_rows(&doc);
    assert_eq!(code, 0);
    let flags = |partition: i64, pid: i64| -> Vec<String> {
        let r = rows
            .iter()
            .find(|r| r["Partition"] == partition && r["ProducerId"] == pid)
            .unwrap_or_else(|| panic!("partition {partition} producer {pid}: {rows:?}"));
        r["Flags"]
            .as_array()
            .expect("flags")
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    };
    assert!(flags(0, healthy_pid).is_empty(), "{rows:?}");
    assert!(flags(1, healthy_pid).is_empty(), "{rows:?}");
    assert!(
        flags(3, fenced_pid).is_empty(),
        "the new instance: {rows:?}"
    );
    // the transaction log proves it on both generations (real_kafka_history.rs
    // checks the log record behind it)
    assert_eq!(flags(2, fenced_pid), ["fenced"], "{rows:?}");
    for r in &rows {
        if r["TransactionalId"] == healthy.as_str() {
            assert_eq!(r["Flags"], serde_json::json!([]), "{r}");
        }
    }
}

/// Replicas of a healthy cluster agree; Kafka's find-hanging by broker and
/// kdp's agree on a cluster with nothing hanging.
#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn compare_replicas_and_find_hanging_by_broker_on_a_healthy_cluster() {
    let env = env();
    let topic = unique("kdp-dg-rep");
    create_topic(&env, &topic, 2);
    scenario(
        &env,
        "idempotent",
        &["--topic", &topic, "--partition", "0", "--records", "5"],
    );
    // a follower may lag for a moment after the write: ask again if so
    let mut last = (0, vec![]);
    for _ in 0..20 {
        last = kdp_json(
            &env,
            &["compare-replicas"],
            &["--topic", &topic],
            "Differences",
        );
        if last.0 == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    assert_eq!(last, (0, vec![]));

    let (code, rows) = kdp_json(
        &env,
        &["find-hanging"],
        &["--broker-id", "2"],
        "Transactions",
    );
    assert_eq!((code, rows.len()), (0, 0), "{rows:?}");
    let k = transactions_command(&env, &["find-hanging", "--broker-id", "2"]);
    assert_eq!(k.code, 0, "{}", k.stderr);
    assert!(parse_tool_table(&k.stdout).is_empty(), "{}", k.stdout);
}
