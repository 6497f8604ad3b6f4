//! `kdp owners` against `kdp demo --owners`' cluster served by `kdp
//! mock-broker`: a Streams application with one live and one orphaned
//! instance (its members' subscriptions as a real Streams client sent
//! them), a Connect cluster's tasks and leader, a Flink sink's lingering
//! transaction and newest checkpoint, an id of no scheme; and the groups
//! kdp may not read (ACLs), which leave the answer unknown (exit 1), never
//! guessed.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value;

mod common;
mod mock_broker;
use mock_broker::Served;

const KDP: &str = env!("CARGO_BIN_EXE_kdp");

/// The owners demo cluster, with `edit` applied to its JSON first.
fn demo(edit: impl FnOnce(&mut Value)) -> Served {
    Served::demo(&["--owners"], edit)
}

/// `kdp owners --output json ARGS`: exit status, the document, stderr.
fn owners(d: &Served, args: &[&str]) -> (i32, Value, String) {
    d.json(&["owners"], args)
}

fn by_id(doc: &Value) -> BTreeMap<String, Value> {
    doc["Owners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["TransactionalId"].as_str().unwrap().to_string(),
                r.clone(),
            )
        })
        .collect()
}

const LIVE: &str = "orders-app-c64c5f99-f79b-4139-b9eb-3ace5599ac75";
const GONE: &str = "orders-app-5e1d0a7b-93c4-4f6e-8a21-0b7c9d3e4f12";

#[test]
fn every_framework_attributed_and_the_stuck_ones_get_force_terminate() {
    let d = demo(|_| {});
    let (code, doc, stderr) = owners(&d, &[]);
    assert_eq!(
        code, 4,
        "orphaned and lingering transactions are found: {stderr}"
    );
    let rows = by_id(&doc);
    let verdict = |id: &str| rows[id]["Verdict"].as_str().unwrap().to_string();
    for n in [1, 2] {
        let gone = &rows[&format!("{GONE}-{n}")];
        assert_eq!(gone["Verdict"], "orphaned");
        assert_eq!(gone["Framework"], "kafka-streams");
        assert_eq!(gone["Application"], "orders-app");
        assert_eq!(gone["Task"], format!("thread {n}"));
        assert_eq!(
            gone["PinnedPartitions"],
            serde_json::json!([format!("orders-out-{n}")])
        );
        // the read_committed group committed at the LSO it holds
        assert_eq!(gone["GroupsBlocked"], serde_json::json!(["orders-report"]));
        let action = gone["Action"].as_str().unwrap();
        assert!(
            action.starts_with("kdp force-terminate --bootstrap-server"),
            "{action}"
        );
        assert!(
            action.ends_with(&format!("--transactional-id {GONE}-{n}")),
            "{action}"
        );
        // the live instance's member of the very thread
        let live = &rows[&format!("{LIVE}-{n}")];
        assert_eq!(live["Verdict"], "live");
        assert!(live["Evidence"]
            .as_str()
            .unwrap()
            .contains(&format!("{LIVE}-StreamThread-{n}-consumer")));
        assert_ne!(
            live["Action"].as_str().map(|a| a.starts_with("kdp ")),
            Some(true)
        );
    }
    for t in 0..3 {
        let id = format!("connect-prod-ticks-2024-v2-{t}");
        assert_eq!(verdict(&id), "live", "{id}");
        assert_eq!(rows[&id]["Application"], "connect-prod/ticks-2024-v2");
        assert_eq!(rows[&id]["Instance"], "connect-10.0.9.4:8083");
    }
    assert_eq!(rows["connect-cluster-connect-prod"]["Task"], "leader");
    assert_eq!(verdict("ingest-sink-0-41"), "lingering");
    assert!(rows["ingest-sink-0-41"]["Action"]
        .as_str()
        .unwrap()
        .contains("force-terminate"));
    let newest = &rows["ingest-sink-0-3"];
    assert_eq!(
        (
            newest["Verdict"].as_str(),
            newest["NewestCheckpoint"].as_bool()
        ),
        (Some("live"), Some(true))
    );
    assert!(newest["Action"]
        .as_str()
        .unwrap()
        .contains("discards data Flink checkpointed"));
    assert_eq!(verdict("legacy-writer.7"), "unattributed");
    assert_eq!(rows["legacy-writer.7"]["Framework"], Value::Null);

    let apps: BTreeMap<String, Value> = doc["Applications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["Application"].as_str().unwrap().to_string(), a.clone()))
        .collect();
    let orders = &apps["orders-app"];
    assert_eq!(
        (
            orders["LiveInstances"].as_i64(),
            orders["Orphaned"].as_i64()
        ),
        (Some(1), Some(2))
    );
    assert!(orders["OldestStuckMs"].as_i64().unwrap() >= 9 * 60_000);
    assert_eq!(
        orders["GroupsBlocked"],
        serde_json::json!(["orders-report"])
    );
    // a closed transaction holds nothing; an open one where nobody
    // committed at its LSO holds nothing either
    assert_eq!(
        rows[&format!("{LIVE}-2")]["GroupsBlocked"],
        serde_json::json!([])
    );
    assert_eq!(
        rows["ingest-sink-0-41"]["GroupsBlocked"],
        serde_json::json!([])
    );
    assert_eq!(apps["ingest-sink"]["Lingering"], 1);
}

#[test]
fn scope_flags_narrow_it_and_a_live_only_answer_exits_0() {
    let d = demo(|_| {});
    let (code, doc, stderr) = owners(&d, &["--group", "connect-prod"]);
    assert_eq!(code, 0, "{stderr}");
    let ids: Vec<String> = by_id(&doc).into_keys().collect();
    assert_eq!(ids.len(), 4, "{ids:?}");
    assert!(ids.iter().all(|i| i.contains("connect-prod")));

    // a Flink id's siblings are read, so a single id is still judged
    let (code, doc, _) = owners(&d, &["--transactional-id", "ingest-sink-0-41"]);
    assert_eq!(code, 4);
    let rows = by_id(&doc);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows["ingest-sink-0-41"]["Verdict"], "lingering");

    let (code, doc, _) = owners(&d, &["--prefix", LIVE]);
    assert_eq!(code, 0);
    assert!(by_id(&doc).values().all(|r| r["Verdict"] == "live"));
}

#[test]
fn a_group_hidden_by_acls_makes_its_ids_unknown_and_exit_1() {
    // the listing leaves out every group but connect-*: the probe sees it
    let d = demo(|doc| doc["acls"] = serde_json::json!({"group_describe_allow": ["connect-*"]}));
    let (code, doc, stderr) = owners(&d, &["--group", "orders-app"]);
    assert_eq!(code, 1, "{stderr}");
    for r in by_id(&doc).values() {
        assert_eq!(r["Verdict"], "unknown", "{r}");
        assert_eq!(r["Action"], Value::Null);
        assert!(
            r["Evidence"].as_str().unwrap().contains("orders-app"),
            "{r}"
        );
    }
    assert!(stderr.contains("not decided"), "{stderr}");

    // whole cluster: the orphans are not called orphaned, and Flink-shaped
    // ids are not Flink's while a hidden Connect group could own them
    let (code, doc, stderr) = owners(&d, &[]);
    assert_eq!(code, 1, "{stderr}");
    let rows = by_id(&doc);
    assert_eq!(rows[&format!("{GONE}-1")]["Verdict"], "unknown");
    assert!(rows[&format!("{GONE}-1")]["Evidence"]
        .as_str()
        .unwrap()
        .contains("may hide"));
    assert_eq!(rows["ingest-sink-0-41"]["Verdict"], "unknown");
    assert_eq!(rows["connect-prod-ticks-2024-v2-0"]["Verdict"], "live");
    assert!(stderr.contains("may leave out groups"), "{stderr}");
    // nor are the groups an open transaction holds back known: null, not []
    assert_eq!(rows[&format!("{GONE}-1")]["GroupsBlocked"], Value::Null);
    assert!(stderr.contains("GroupsBlocked unknown"), "{stderr}");
}

#[test]
fn a_group_that_cannot_be_read_is_unknown_never_orphaned() {
    // listed to nobody and refused when named: GROUP_AUTHORIZATION_FAILED
    let d = demo(|doc| doc["acls"] = serde_json::json!({"group_describe_deny": ["orders-app"]}));
    let (code, doc, stderr) = owners(&d, &["--prefix", "orders-app-"]);
    assert_eq!(code, 1, "{stderr}");
    for r in by_id(&doc).values() {
        assert_eq!(r["Verdict"], "unknown", "{r}");
    }
    let (code, doc, _) = owners(&d, &["--group", "orders-app"]);
    assert_eq!(code, 1);
    let rows = by_id(&doc);
    assert!(rows[&format!("{GONE}-1")]["Evidence"]
        .as_str()
        .unwrap()
        .contains("GROUP_AUTHORIZATION_FAILED"));
}

#[test]
fn table_and_jsonl_say_the_same() {
    let d = demo(|_| {});
    let mut kdp = Command::new(KDP);
    kdp.args([
        "owners",
        "--bootstrap-server",
        d.bootstrap(),
        "--output",
        "jsonl",
    ]);
    let out = kdp.output().unwrap();
    common::schema::check_command(&kdp, &out.stdout);
    let lines = common::parse_jsonl(&String::from_utf8_lossy(&out.stdout));
    let kinds: Vec<&str> = lines.iter().map(|l| l["Kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.iter().filter(|k| **k == "owner").count(), 15);
    assert_eq!(kinds.iter().filter(|k| **k == "application").count(), 5);
    let table = Command::new(KDP)
        .args(["owners", "--bootstrap-server", d.bootstrap(), "-o", "wide"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.lines().next().unwrap().starts_with("TransactionalId"));
    assert!(
        text.contains("orphaned") && text.contains("lingering") && text.contains("LiveInstances")
    );
    assert_eq!(table.status.code(), Some(4));
}

const PAYMENTS_LIVE: &str = "payments-app-3f9a2c4e-8b71-4d05-9e6a-5c2b1d7f0a93-1";
const PAYMENTS_GONE: &str = "payments-app-b84e6d10-27c3-4f9e-a1d5-6e0c3b9a7f28-1";

#[test]
fn a_kip_1071_streams_group_attributes_its_application_by_process_id() {
    let d = demo(|_| {});
    let (code, doc, stderr) = owners(&d, &["--group", "payments-app"]);
    assert_eq!(code, 4, "an orphaned open transaction: {stderr}");
    let rows = by_id(&doc);
    assert_eq!(rows.len(), 2, "{doc}");
    let live = &rows[PAYMENTS_LIVE];
    assert_eq!(
        (live["Framework"].as_str(), live["Verdict"].as_str()),
        (Some("kafka-streams"), Some("live"))
    );
    // the member StreamsGroupDescribe lists with that process id
    assert!(
        live["Evidence"].as_str().unwrap().starts_with(
            "member payments-app-3f9a2c4e-8b71-4d05-9e6a-5c2b1d7f0a93-StreamThread-1-consumer"
        ),
        "{live}"
    );
    let gone = &rows[PAYMENTS_GONE];
    assert_eq!(gone["Verdict"], "orphaned", "{gone}");
    assert!(gone["Action"].as_str().unwrap().contains("force-terminate"));
    let app = &doc["Applications"][0];
    assert_eq!(
        (app["Application"].as_str(), app["LiveInstances"].as_i64()),
        (Some("payments-app"), Some(1))
    );
}

#[test]
fn a_broker_without_streams_group_describe_leaves_a_streams_groups_ids_unknown() {
    // a broker that predates KIP-1071: API 89 neither advertised nor served
    let d = demo(|doc| doc["withheld_apis"] = serde_json::json!([89]));
    let (code, doc, stderr) = owners(&d, &["--group", "payments-app"]);
    assert_eq!(code, 1, "undecided, never clear: {stderr}");
    for id in [PAYMENTS_LIVE, PAYMENTS_GONE] {
        let r = &by_id(&doc)[id];
        // what the id says is kept; the verdict is not guessed
        assert_eq!(r["Framework"], "kafka-streams", "{r}");
        assert_eq!(r["Verdict"], "unknown", "{r}");
        assert_eq!(r["Action"], Value::Null, "{r}");
        assert!(
            r["Evidence"]
                .as_str()
                .unwrap()
                .contains("group payments-app could not be read: UNSUPPORTED_VERSION"),
            "{r}"
        );
    }
    assert!(stderr.contains("not decided"), "{stderr}");
    assert_eq!(doc["Applications"][0]["LiveInstances"], Value::Null);
    // the other applications are read as before
    let (code, doc, _) = owners(&d, &["--group", "orders-app"]);
    assert_eq!(code, 4);
    assert_eq!(by_id(&doc)[&format!("{GONE}-1")]["Verdict"], "orphaned");
}

/// `kdp COMMAND --output json ARGS` on the demo: status and document.
fn other(d: &Served, command: &str, args: &[&str]) -> (i32, Value) {
    let (code, doc, _) = d.json(&[command], args);
    (code, doc)
}

#[test]
fn blocked_and_find_hanging_name_the_owner_and_never_end_a_live_ones_transaction() {
    let d = demo(|_| {});
    // every pinning producer counts as idle: only the owner keeps kdp from
    // suggesting force-terminate for the live writers
    let (_, doc) = other(&d, "blocked", &["--blocked-after", "0"]);
    let rows: BTreeMap<String, Value> = doc["Blocked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["TransactionalId"].as_str().unwrap().to_string(),
                r.clone(),
            )
        })
        .collect();
    for live in [
        format!("{LIVE}-1"),
        "connect-prod-ticks-2024-v2-0".to_string(),
    ] {
        assert_eq!(rows[&live]["Owner"]["Verdict"], "live", "{live}");
        assert_eq!(rows[&live]["Unblock"], "wait", "{live}");
    }
    let gone = &rows[&format!("{GONE}-1")];
    assert_eq!(gone["Owner"]["Verdict"], "orphaned");
    assert_eq!(gone["Owner"]["Framework"], "kafka-streams");
    assert!(gone["Unblock"]
        .as_str()
        .unwrap()
        .contains("force-terminate"));
    assert_eq!(rows["ingest-sink-0-41"]["Owner"]["Verdict"], "lingering");

    let (_, doc) = other(
        &d,
        "find-hanging",
        &["--all", "--max-transaction-timeout", "1s"],
    );
    let owners: BTreeMap<String, Value> = doc["Transactions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| {
            Some((
                r["TransactionalId"].as_str()?.to_string(),
                r["Owner"].clone(),
            ))
        })
        .collect();
    assert_eq!(owners[&format!("{GONE}-2")]["Verdict"], "orphaned");
    assert_eq!(owners["ingest-sink-0-3"]["Verdict"], "live");
    assert_eq!(owners["legacy-writer.7"]["Verdict"], "unattributed");
}

#[test]
fn history_names_the_owner() {
    let d = demo(|_| {});
    let id = format!("{GONE}-1");
    let (_, doc) = other(&d, "history", &["--transactional-id", &id]);
    let h = &doc["Histories"][0];
    assert_eq!(h["TransactionalId"], id.as_str());
    assert_eq!(h["Owner"]["Verdict"], "orphaned", "{h}");
    assert_eq!(h["Owner"]["Task"], "thread 1");
}

#[test]
fn describe_with_transactions_names_the_owner_of_each_open_transaction() {
    let d = demo(|_| {});
    let (_, doc) = other(
        &d,
        "describe",
        &["--with-transactions", "--topic", "orders-out"],
    );
    let text = doc.to_string();
    let producers: Vec<&Value> = doc["Topics"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["Partitions"].as_array().unwrap())
        .flat_map(|p| p["ActiveProducers"].as_array().unwrap())
        .collect();
    let verdicts: BTreeMap<i64, Value> = producers
        .iter()
        .map(|p| {
            (
                p["ProducerId"].as_i64().unwrap(),
                p["Owner"]["Verdict"].clone(),
            )
        })
        .collect();
    assert_eq!(verdicts[&6101], "live", "{text}");
    assert_eq!(verdicts[&6201], "orphaned", "{text}");
    assert_eq!(verdicts[&6202], "orphaned", "{text}");
}
