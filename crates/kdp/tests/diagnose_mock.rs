//! The diagnosis commands against the demo cluster served by
//! `kdp mock-broker`: the cases a healthy modern broker will not produce
//! (a coordinator that forgot a transaction, a partition missing from one,
//! a transaction stuck in prepare, ids hidden by ACLs, a diverged follower,
//! a fenced instance). Kafka's own tool against the same mock is in
//! kdp-server's java_tool.rs; the claims about a real broker are in
//! real_kafka_diagnose.rs.

use std::process::Command;

use serde_json::Value;

mod common;
mod mock_broker;
use mock_broker::Served;

const KDP: &str = env!("CARGO_BIN_EXE_kdp");

/// `kdp CMD ARGS --output json` on `mock`: the exit status and the rows
/// under `key`.
fn json_rows(mock: &Served, cmd: &[&str], args: &[&str], key: &str) -> (i32, Vec<Value>) {
    let (code, doc, _) = mock.json(cmd, args);
    let rows = doc
        .get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_else(|| panic!("no {key} in {doc}"));
    (code, rows)
}

fn verdicts(rows: &[Value]) -> Vec<(String, i64, String, String)> {
    let mut v: Vec<_> = rows
        .iter()
        .map(|r| {
            (
                r["Topic"].as_str().unwrap_or_default().to_string(),
                r["Partition"].as_i64().unwrap_or(-1),
                r["Verdict"].as_str().unwrap_or_default().to_string(),
                r["Reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

/// The demo's principal may describe only some prefixes: an unlisted
/// producer could be hidden, so kdp says unknown where Kafka's rule says
/// hanging; the partition missing from its transaction hangs; the
/// PrepareCommit long past its timeout is stuck (Kafka's rule misses it).
#[test]
fn find_hanging_on_the_demo_gives_every_verdict_with_its_reason() {
    let mock = Served::demo(&[], |_| {});
    let (code, rows) = json_rows(&mock, &["find-hanging"], &[], "Transactions");
    assert_eq!(code, 4, "something hangs: exit 4");
    let unknown = "unknown: not authorized to describe the transactional id";
    assert_eq!(
        verdicts(&rows),
        vec![
            (
                "ledger".into(),
                0,
                "hanging".into(),
                "hanging: the partition is not in the coordinator's transaction".into()
            ),
            (
                "ledger".into(),
                2,
                "stuck".into(),
                "stuck: PrepareCommit for longer than the timeout, markers not written".into()
            ),
            ("ledger".into(), 3, "unknown".into(), unknown.into()),
            ("orders".into(), 3, "unknown".into(), unknown.into()),
            ("payments".into(), 0, "unknown".into(), unknown.into()),
        ]
    );
    for r in &rows {
        let kafka = r["KafkaSaysHanging"].as_bool();
        match r["Verdict"].as_str() {
            Some("stuck") => assert_eq!(kafka, Some(false), "{r}"),
            _ => assert_eq!(kafka, Some(true), "{r}"),
        }
    }
    let ledger0 = rows
        .iter()
        .find(|r| r["Topic"] == "ledger" && r["Partition"] == 0)
        .expect("ledger-0");
    assert_eq!(ledger0["TransactionalId"], "ledger-writer");
    assert_eq!(ledger0["BlockedRecords"], 80, "HW 5200 - LSO 5120");
    assert_eq!(ledger0["StartOffset"], 5120);
}

/// With every id describable (no ACLs), an unlisted producer id proves the
/// coordinator has no transaction for it: hanging, as Kafka says.
#[test]
fn find_hanging_without_acls_reports_forgotten_transactions_as_hanging() {
    let mock = Served::demo(&[], |doc| {
        if let Some(o) = doc.as_object_mut() {
            o.remove("acls");
        }
    });
    let (code, rows) = json_rows(
        &mock,
        &["find-hanging"],
        &["--topic", "payments", "--topic", "ledger"],
        "Transactions",
    );
    assert_eq!(code, 4);
    let v = verdicts(&rows);
    assert!(
        v.contains(&(
            "payments".into(),
            0,
            "hanging".into(),
            "hanging: the coordinator has no transaction for this producer".into()
        )),
        "{v:?}"
    );
    // secret-payroll is describable now: listed, tracked, not hanging.
    assert!(
        !v.iter().any(|(t, p, _, _)| t == "ledger" && *p == 3),
        "{v:?}"
    );
}

/// orders-3's producer has LastTimestamp 0: no age, so even with every id
/// describable and no coordinator knowing it, it is unknown (exit 1), as
/// the exporter counts it (`unknown_timestamp`), never hanging (exit 4).
#[test]
fn find_hanging_calls_an_open_transaction_without_a_timestamp_unknown() {
    let mock = Served::demo(&[], |doc| {
        if let Some(o) = doc.as_object_mut() {
            o.remove("acls");
        }
    });
    let (code, rows) = json_rows(
        &mock,
        &["find-hanging"],
        &["--topic", "orders"],
        "Transactions",
    );
    assert_eq!(
        verdicts(&rows),
        vec![(
            "orders".into(),
            3,
            "unknown".into(),
            "unknown: the producer's LastTimestamp is unknown, so its age cannot be told".into()
        )]
    );
    assert_eq!(rows[0]["KafkaSaysHanging"], true, "{rows:?}");
    assert_eq!(code, 1, "unknown, not found: exit 1");
}

/// A partition named on the command line narrows the search; an open
/// transaction younger than the timeout is no candidate; nothing found is
/// exit 0 with an empty document.
#[test]
fn find_hanging_scope_and_threshold() {
    let mock = Served::demo(&[], |_| {});
    let (code, rows) = json_rows(
        &mock,
        &["find-hanging"],
        &["--topic", "ledger", "--partition", "0"],
        "Transactions",
    );
    assert_eq!(code, 4);
    assert_eq!(rows.len(), 1);
    // payments-2's open transaction is seconds old: not a candidate at the
    // cluster's 15-minute timeout.
    let (code, rows) = json_rows(
        &mock,
        &["find-hanging"],
        &["--topic", "payments", "--partition", "2"],
        "Transactions",
    );
    assert_eq!((code, rows.len()), (0, 0));
    // ...but a candidate at 0, where the coordinator still tracks it.
    let (code, rows) = json_rows(
        &mock,
        &["find-hanging"],
        &[
            "--topic",
            "payments",
            "--partition",
            "2",
            "--max-transaction-timeout",
            "0",
            "--all",
        ],
        "Transactions",
    );
    assert_eq!(code, 0, "{rows:?}");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["Verdict"], "ok");
}

#[test]
fn transactions_list_and_describe_hide_what_acls_hide() {
    let mock = Served::demo(&[], |_| {});
    let out = Command::new(KDP)
        .args([
            "transactions",
            "--bootstrap-server",
            mock.bootstrap(),
            "list",
            "--output",
            "json",
        ])
        .output()
        .expect("kdp transactions list");
    assert_eq!(out.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let ids: Vec<&str> = doc["Transactions"]
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["TransactionalId"].as_str())
        .collect();
    assert_eq!(
        ids,
        [
            "billing-app",
            "inventory-sync",
            "ledger-writer",
            "orders-app",
            "payments-app"
        ],
        "secret-payroll is hidden"
    );
    let out = Command::new(KDP)
        .args([
            "transactions",
            "--bootstrap-server",
            mock.bootstrap(),
            "describe",
        ])
        .args([
            "--transactional-id",
            "ledger-writer",
            "--transactional-id",
            "secret-payroll",
            "--output",
            "json",
        ])
        .output()
        .expect("kdp transactions describe");
    assert_eq!(out.status.code(), Some(1), "one id failed");
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("secret-payroll: TRANSACTIONAL_ID_AUTHORIZATION_FAILED"));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let rows = doc["Transactions"].as_array().expect("rows");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["TransactionState"], "Ongoing");
    assert_eq!(rows[0]["TopicPartitions"], serde_json::json!(["ledger-1"]));
    assert_eq!(rows[0]["CoordinatorId"], 3);
}

/// `--min-duration` filters on the start time, so the listing shows it:
/// the same start as `describe` gives, with its RFC 3339 form and age.
#[test]
fn transactions_list_carries_the_start_time_describe_gives() {
    let mock = Served::demo(&[], |_| {});
    let (code, listed) = json_rows(&mock, &["transactions"], &["list"], "Transactions");
    assert_eq!(code, 0, "{listed:?}");
    let (code, described) = json_rows(
        &mock,
        &["transactions"],
        &["describe", "--transactional-id", "ledger-writer"],
        "Transactions",
    );
    assert_eq!(code, 0);
    let row = listed
        .iter()
        .find(|r| r["TransactionalId"] == "ledger-writer")
        .expect("ledger-writer listed");
    let start = row["CurrentTransactionStartTimeMs"]
        .as_i64()
        .expect("a start time");
    assert_eq!(
        Some(start),
        described[0]["CurrentTransactionStartTimeMs"].as_i64()
    );
    assert_eq!(
        row["CurrentTransactionStartTime"],
        described[0]["CurrentTransactionStartTime"]
    );
    assert!(row["TransactionDurationMs"]
        .as_i64()
        .is_some_and(|d| d >= 0));
    for r in &listed {
        assert!(
            r["CurrentTransactionStartTimeMs"].is_i64(),
            "every demo transaction has a start: {r}"
        );
    }
}

#[test]
fn describe_with_transactions_flags_only_what_the_data_proves() {
    let mock = Served::demo(&[], |_| {});
    let (code, stdout, stderr) = mock.run(&["describe"], &["--with-transactions", "-o", "json"]);
    assert_eq!(code, 0, "{stderr}");
    // describe's own document, each producer with the transaction fields added
    let doc: Value = serde_json::from_str(&stdout).expect("json");
    assert!(doc["ThrottleTimeMs"].is_i64(), "{doc}");
    let rows = common::describe_rows(&doc);
    let flags = |topic: &str, partition: i64, pid: i64| -> Vec<String> {
        let r = rows
            .iter()
            .find(|r| r["Topic"] == topic && r["Partition"] == partition && r["ProducerId"] == pid)
            .unwrap_or_else(|| panic!("{topic}-{partition} {pid}"));
        r["Flags"]
            .as_array()
            .expect("flags")
            .iter()
            .filter_map(|f| f.as_str().map(str::to_string))
            .collect()
    };
    // The demo cluster runs transaction protocol v1: an older epoch than
    // the coordinator's for the same producer id is a fenced instance.
    assert_eq!(flags("ledger", 4, 8004), ["fenced"]);
    assert_eq!(flags("orders", 4, 5002), ["fenced"]);
    assert_eq!(flags("inventory", 0, 9102), ["idle"]);
    assert_eq!(flags("ledger", 2, 8002), ["open-too-long"]);
    // Healthy transactional producers are never flagged.
    for (t, p, pid) in [
        ("orders", 1, 5002),
        ("payments", 0, 7004),
        ("ledger", 1, 8001),
    ] {
        assert!(flags(t, p, pid).is_empty(), "{t}-{p} {pid}");
    }
    let ledger1 = rows
        .iter()
        .find(|r| r["Topic"] == "ledger" && r["Partition"] == 1)
        .expect("ledger-1");
    assert_eq!(ledger1["TransactionalId"], "ledger-writer");
    assert_eq!(ledger1["TransactionState"], "Ongoing");
}

/// Every replica asked: the demo's follower that lost a producer and kept
/// an older sequence, and the one with an older epoch and transaction.
#[test]
fn compare_replicas_shows_the_diverged_followers_field_by_field() {
    let mock = Served::demo(&[], |_| {});
    let (code, rows) = json_rows(
        &mock,
        &["compare-replicas"],
        &["--topic", "inventory", "--topic", "orders"],
        "Differences",
    );
    assert_eq!(code, 4);
    let fields: Vec<(String, i64, i64, String)> = rows
        .iter()
        .map(|r| {
            (
                r["Topic"].as_str().unwrap_or_default().to_string(),
                r["Partition"].as_i64().unwrap_or(-1),
                r["ProducerId"].as_i64().unwrap_or(-1),
                r["Field"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert!(
        fields.contains(&("inventory".into(), 0, 9102, "ActiveProducers".into())),
        "{fields:?}"
    );
    assert!(
        fields.contains(&("inventory".into(), 0, 9101, "LastSequence".into())),
        "{fields:?}"
    );
    assert!(
        fields.contains(&("orders".into(), 2, 5002, "ProducerEpoch".into())),
        "{fields:?}"
    );
    let seq = rows
        .iter()
        .find(|r| r["Topic"] == "inventory" && r["Field"] == "LastSequence")
        .expect("row");
    assert_eq!(seq["Values"]["1"], "1019");
    assert_eq!(seq["Values"]["3"], "1022");
    // Agreeing replicas: exit 0, nothing printed.
    let (code, rows) = json_rows(
        &mock,
        &["compare-replicas"],
        &["--topic", "ledger"],
        "Differences",
    );
    assert_eq!((code, rows.len()), (0, 0));
}

/// A broker the cluster does not have is bad input, answered with the
/// brokers it does have: never "no hanging transaction in 0 partitions".
#[test]
fn a_broker_id_the_cluster_lacks_is_refused_with_the_brokers_it_has() {
    let mock = Served::demo(&[], |_| {});
    for cmd in [
        &["find-hanging"][..],
        &["describe"],
        &["describe", "--with-transactions"],
    ] {
        let (code, stdout, stderr) = mock.run(cmd, &["--broker-id", "9"]);
        assert_eq!(code, 2, "{cmd:?}: {stdout}\n{stderr}");
        assert!(
            stderr.contains("broker 9 is not in the cluster; its brokers are 1, 2, 3"),
            "{cmd:?}: {stderr}"
        );
        assert!(!stderr.contains("no hanging"), "{cmd:?}: {stderr}");
    }
}

/// A state Kafka does not have is refused before anything is asked, with
/// the states it does have; an empty listing is never the answer.
#[test]
fn transactions_list_with_a_state_kafka_lacks_is_refused() {
    let mock = Served::demo(&[], |_| {});
    let (code, stdout, stderr) = mock.run(&["transactions"], &["list", "--state", "bogus"]);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("\"bogus\""), "{stderr}");
    assert!(stderr.contains("PrepareEpochFence"), "{stderr}");
    // Kafka's names are case-sensitive, as the broker matches them
    let (code, _, stderr) = mock.run(&["transactions"], &["list", "--state", "ongoing"]);
    assert_eq!(code, 2, "{stderr}");
    let (code, _, stderr) = mock.run(&["transactions"], &["list", "--state", "Ongoing"]);
    assert_eq!(code, 0, "{stderr}");
}

/// payments-2's replica on broker 3 has an offline log (KAFKA_STORAGE_ERROR):
/// the replicas that answered agree, but that is not "all replicas agree".
#[test]
fn compare_replicas_never_says_all_agree_after_a_replica_failed() {
    let mock = Served::demo(&[], |_| {});
    let (code, stdout, stderr) = mock.run(&["compare-replicas"], &["--topic", "payments"]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(stderr.contains("KAFKA_STORAGE_ERROR"), "{stderr}");
    assert!(!stderr.contains("all replicas agree"), "{stderr}");
    assert!(stderr.contains("not checked"), "{stderr}");
    // a partition whose replicas all answer still gets the plain verdict
    let (code, _, stderr) = mock.run(
        &["compare-replicas"],
        &["--topic", "payments", "--partition", "1"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("all replicas agree on 1 partitions"),
        "{stderr}"
    );
}

/// Nothing described is nothing checked: a selection that matches no
/// partition, or whose every partition failed, is never all clear.
#[test]
fn find_hanging_over_nothing_is_never_all_clear() {
    let mock = Served::demo(&[], |_| {});
    let (code, _, stderr) = mock.run(&["find-hanging"], &["--topic", "no-such-topic"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("nothing was checked"), "{stderr}");
    assert!(!stderr.contains("no hanging"), "{stderr}");
    let (code, _, stderr) = mock.run(&["compare-replicas"], &["--topic", "no-such-topic"]);
    assert_ne!(code, 0, "{stderr}");
    assert!(!stderr.contains("agree"), "{stderr}");
}
