//! `kdp history` and the log-backed `fenced` verdict of `describe
//! --with-transactions` against `kdp mock-broker` serving the demo cluster,
//! whose `inventory-sync` has a transaction log in `__transaction_state`
//! (cluster file `transactions[].log`, served by Fetch). The claims about a
//! real broker are in real_kafka_history.rs.

use std::process::{Command, Stdio};

use serde_json::{json, Value};

mod common;
mod mock_broker;
use mock_broker::Served;

const KDP: &str = env!("CARGO_BIN_EXE_kdp");

/// The demo cluster with `edit` applied to its JSON.
fn demo(edit: impl FnOnce(&mut Value)) -> Served {
    Served::demo(&[], edit)
}

/// The demo's `transactions[]` entry of `id`.
fn transaction<'a>(doc: &'a mut Value, id: &str) -> &'a mut Value {
    doc["transactions"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["transactional_id"] == id)
        .unwrap_or_else(|| panic!("{id} not in the demo"))
}

/// The `__transaction_state` partition entry of the demo.
fn txn_state_partition(doc: &mut Value, partition: i64) -> &mut Value {
    doc["topics"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["name"] == "__transaction_state")
        .unwrap()["partitions"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|p| p["partition"] == partition)
        .unwrap()
}

#[test]
fn the_demo_history_shows_the_new_instance_and_where_the_log_starts() {
    let m = demo(|_| {});
    let (code, stdout, stderr) = m.run(
        &["history"],
        &["--transactional-id", "inventory-sync", "-o", "json"],
    );
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let h = &doc["Histories"][0];
    assert_eq!(h["Partition"], 2, "Kafka's hash rule: abs(hashCode) % 3");
    assert_eq!(h["Reach"]["LogStartOffset"], 4218);
    assert_eq!(h["Reach"]["Beginning"], "partial");
    assert_eq!(h["Reach"]["Complete"], true);
    let changes = h["Changes"].as_array().unwrap();
    let states: Vec<&str> = changes
        .iter()
        .map(|c| c["TransactionState"].as_str().unwrap())
        .collect();
    assert_eq!(
        states,
        [
            "Empty",
            "Ongoing",
            "PrepareCommit",
            "CompleteCommit",
            "Empty",
            "Ongoing",
            "PrepareCommit",
            "CompleteCommit"
        ]
    );
    let offsets: Vec<i64> = changes
        .iter()
        .map(|c| c["Offset"].as_i64().unwrap())
        .collect();
    assert_eq!(offsets, (4218..4226).collect::<Vec<_>>());
    // the one instance change: the second InitProducerId, at epoch 7
    let new: Vec<&Value> = changes
        .iter()
        .filter(|c| c["InstanceChange"] == true)
        .collect();
    assert_eq!(new.len(), 1, "{changes:#?}");
    assert_eq!(new[0]["Offset"], 4222);
    assert_eq!(new[0]["Cause"], "init-producer-id");
    assert_eq!(
        (
            new[0]["FromProducerEpoch"].clone(),
            new[0]["ProducerEpoch"].clone()
        ),
        (json!(6), json!(7))
    );
    assert_eq!(new[0]["Instance"], 2);
    // the first record is an InitProducerId, not claimed as the id's creation
    assert_eq!(changes[0]["Cause"], "init-producer-id");
    assert_eq!(changes[0]["InstanceChange"], false);
    assert_eq!(changes[1]["PartitionsAdded"], json!(["ledger-4"]));
    assert_eq!(changes[5]["PartitionsAdded"], json!(["inventory-2"]));
    for c in changes {
        assert!(
            c["Timestamp"].as_str().is_some_and(|t| t.ends_with('Z')),
            "{c}"
        );
        assert_eq!(c["TimestampMs"], c["TransactionLastUpdateTimeMs"], "{c}");
    }
    assert!(
        stderr.contains("earlier changes may be missing")
            && stderr.contains("the log starts at offset 4218"),
        "{stderr}"
    );

    // the table marks the instance change; jsonl has one line per change
    let (code, table, _) = m.run(&["history"], &["--transactional-id", "inventory-sync"]);
    assert_eq!(code, 0);
    let marked: Vec<&str> = table.lines().filter(|l| l.contains(" NEW ")).collect();
    assert_eq!(marked.len(), 1, "{table}");
    assert!(marked[0].contains("init-producer-id"), "{table}");
    let (code, jsonl, _) = m.run(
        &["history"],
        &["--transactional-id", "inventory-sync", "-o", "jsonl"],
    );
    assert_eq!(code, 0);
    assert_eq!(jsonl.lines().count(), 8, "{jsonl}");
}

#[test]
fn a_log_from_offset_zero_is_whole_and_since_reads_later_changes_only() {
    let m = demo(|d| {
        txn_state_partition(d, 2)
            .as_object_mut()
            .unwrap()
            .remove("log_start_offset");
    });
    let (code, stdout, stderr) = m.run(
        &["history"],
        &["--transactional-id", "inventory-sync", "-o", "json"],
    );
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["Histories"][0]["Reach"]["Beginning"], "whole");
    assert!(
        stderr.contains("this is the id's whole history"),
        "{stderr}"
    );
    // --since 10m: the second instance's changes only (6 and 4 minutes ago)
    let (code, stdout, stderr) = m.run(
        &["history"],
        &[
            "--transactional-id",
            "inventory-sync",
            "--since",
            "10m",
            "-o",
            "json",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let h = &doc["Histories"][0];
    assert_eq!(h["Reach"]["Beginning"], "since");
    let epochs: Vec<i64> = h["Changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["ProducerEpoch"].as_i64().unwrap())
        .collect();
    assert_eq!(epochs, [7, 7, 7, 7]);
    assert!(stderr.contains("earlier changes were not read"), "{stderr}");
}

#[test]
fn an_id_with_no_record_and_a_refused_read_are_not_all_clear() {
    // no record of the id: exit 1, said on stderr
    let m = demo(|_| {});
    let (code, stdout, stderr) = m.run(
        &["history"],
        &["--transactional-id", "never-ran", "-o", "json"],
    );
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(stderr.contains("never-ran: no record of it"), "{stderr}");
    // READ denied on the internal topic: the ACL to add, exit 1
    let m = demo(|d| {
        d["acls"]["topic_read_deny"] = json!(["__transaction_state"]);
    });
    let (code, stdout, stderr) = m.run(
        &["history"],
        &["--transactional-id", "inventory-sync", "-o", "json"],
    );
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let want = "--operation Read --topic __transaction_state";
    assert!(stderr.contains(want), "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let err = doc["Histories"][0]["Error"].as_str().unwrap_or_default();
    assert!(
        err.contains("TOPIC_AUTHORIZATION_FAILED") && err.contains(want),
        "{doc}"
    );
    let (code, jsonl, _) = m.run(
        &["history"],
        &["--transactional-id", "inventory-sync", "-o", "jsonl"],
    );
    assert_eq!(code, 1);
    assert_eq!(jsonl.lines().count(), 1, "an error line: {jsonl}");
}

/// The fence verdict of each demo producer, from `describe --with-transactions -o json`.
fn fenced(m: &Served, topics: &[&str]) -> (i32, Vec<Value>, String) {
    let mut args = vec!["--with-transactions", "-o", "json"];
    for t in topics {
        args.extend(["--topic", t]);
    }
    let (code, stdout, stderr) = m.run(&["describe"], &args);
    let doc: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    (code, common::describe_rows(&doc), stderr)
}

fn row<'a>(rows: &'a [Value], topic: &str, partition: i64, pid: i64) -> &'a Value {
    rows.iter()
        .find(|r| r["Topic"] == topic && r["Partition"] == partition && r["ProducerId"] == pid)
        .unwrap_or_else(|| panic!("{topic}-{partition} {pid} not in {rows:#?}"))
}

#[test]
fn describe_flags_the_fenced_instance_from_the_log_and_says_so() {
    let m = demo(|_| {});
    let (code, rows, stderr) = fenced(&m, &["ledger", "inventory"]);
    assert_eq!(code, 0, "{stderr}");
    let old = row(&rows, "ledger", 4, 8004);
    assert_eq!(old["Flags"], json!(["fenced"]));
    assert_eq!(old["Fenced"]["Verdict"], "fenced");
    assert_eq!(old["Fenced"]["Source"], "log");
    let detail = old["Fenced"]["Detail"].as_str().unwrap();
    assert!(
        detail.contains("init-producer-id at offset 4222"),
        "{detail}"
    );
    let new = row(&rows, "inventory", 2, 8004);
    assert_eq!(new["Flags"], json!([]));
    assert_eq!(
        new["Fenced"],
        json!({"Verdict": "not-fenced", "Source": "log", "Detail": null})
    );
    // idempotent producers get no verdict
    assert_eq!(row(&rows, "inventory", 0, 9101)["Fenced"], Value::Null);
    // the table says where the flag came from
    let (_, table, stderr) = m.run(&["describe"], &["--with-transactions", "--topic", "ledger"]);
    let line = table
        .lines()
        .find(|l| l.starts_with("ledger") && l.contains(" 8004 "))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(
        // FencedFrom, then the owner (`-` without an open transaction)
        line.contains("fenced") && line.split_whitespace().rev().nth(1) == Some("log"),
        "{line}"
    );
    assert!(
        stderr.contains(
            "note: ledger-4 producer 8004: fenced: the transaction log shows init-producer-id"
        ),
        "{stderr}"
    );
}

#[test]
fn under_protocol_v2_a_log_that_cannot_be_read_leaves_fenced_unknown_and_exit_1() {
    // v2 and the log readable: the log decides, as under v1
    let m = demo(|d| d["transaction_version"] = json!(2));
    let (code, rows, stderr) = fenced(&m, &["ledger"]);
    assert!(
        stderr.contains("transaction protocol v2") || code != 0 || !rows.is_empty(),
        "{stderr}"
    );
    assert_eq!(row(&rows, "ledger", 4, 8004)["Fenced"]["Source"], "log");
    assert_eq!(row(&rows, "ledger", 4, 8004)["Flags"], json!(["fenced"]));
    // ledger-writer has no log: under v2 the epochs prove nothing, so its
    // verdict is unknown and the exit status says the check is incomplete
    let w = row(&rows, "ledger", 1, 8001);
    assert_eq!(w["Fenced"]["Verdict"], "unknown", "{w}");
    assert_eq!(code, 1, "{stderr}");

    // v2 and READ denied on __transaction_state: no guess, the reason, exit 1
    let m = demo(|d| {
        d["transaction_version"] = json!(2);
        d["acls"]["topic_read_deny"] = json!(["__transaction_state"]);
    });
    let (code, rows, stderr) = fenced(&m, &["ledger"]);
    assert_eq!(code, 1, "{stderr}");
    let old = row(&rows, "ledger", 4, 8004);
    assert_eq!(old["Flags"], json!([]), "not guessed: {old}");
    assert_eq!(old["Fenced"]["Verdict"], "unknown");
    assert_eq!(old["Fenced"]["Source"], Value::Null);
    assert!(
        old["Fenced"]["Detail"]
            .as_str()
            .is_some_and(|d| d.contains("--operation Read --topic __transaction_state")),
        "{old}"
    );
    assert!(stderr.contains("fenced not checked"), "{stderr}");

    // v1 and READ denied: the epochs still prove it (and say so)
    let m = demo(|d| {
        d["acls"]["topic_read_deny"] = json!(["__transaction_state"]);
    });
    let (code, rows, stderr) = fenced(&m, &["ledger"]);
    assert_eq!(code, 0, "{stderr}");
    let old = row(&rows, "ledger", 4, 8004);
    assert_eq!(old["Flags"], json!(["fenced"]));
    assert_eq!(old["Fenced"]["Source"], "epochs");
}

#[test]
fn a_log_that_does_not_end_in_the_coordinators_entry_is_refused() {
    let out = {
        let mut doc: Value = serde_json::from_slice(
            &Command::new(KDP)
                .args(["demo", "--print-cluster-file"])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap();
        let t = transaction(&mut doc, "inventory-sync");
        t["log"].as_array_mut().unwrap().pop();
        let dir = std::env::temp_dir().join(format!("kdp-history-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("cluster.json");
        std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
        let out = Command::new(KDP)
            .args([
                "mock-broker",
                "--cluster",
                file.to_str().unwrap(),
                "--listen",
                "127.0.0.1:0",
            ])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        out
    };
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(".log: the last record (producer 8004 epoch 7 PrepareCommit) must be the coordinator's entry"),
        "{stderr}"
    );
}

#[test]
fn kdp_demo_history_tells_the_fenced_instances_story() {
    let out = Command::new(KDP)
        .args(["demo", "--history", "-o", "json"])
        .stdin(Stdio::null())
        .output()
        .expect("kdp demo --history");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        common::schema::violations("history", false, &doc),
        None,
        "kdp demo --history -o json fits the history schema"
    );
    let changes = doc["Histories"][0]["Changes"].as_array().unwrap();
    let new: Vec<&Value> = changes
        .iter()
        .filter(|c| c["InstanceChange"] == true)
        .collect();
    assert_eq!(new.len(), 1);
    assert_eq!(new[0]["TransactionalId"], "inventory-sync");
    // the fenced instance wrote ledger-4 before it
    assert!(changes
        .iter()
        .take_while(|c| c["InstanceChange"] == false)
        .any(|c| c["PartitionsAdded"] == json!(["ledger-4"])));
}
