//! `kdp abort`, `kdp force-terminate` and `kdp find-hanging --repair`
//! against `kdp mock-broker` serving the demo cluster (the mock answers
//! WriteTxnMarkers and InitProducerId with Kafka's semantics and updates its
//! state). The claims about real brokers are the real-Kafka tests' job.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use kdp_client::admin::DriverOptions;
use kdp_client::txn::offsets::{offsets, Offsets};
use kdp_client::{BrokerAddress, Client, ClientConfig};
use serde_json::Value;

mod mock_broker;
use mock_broker::MockBroker;

const KDP: &str = env!("CARGO_BIN_EXE_kdp");

struct Mock {
    _broker: MockBroker,
    bootstrap: String,
    _dir: PathBuf,
}

fn demo_cluster() -> Value {
    let out = Command::new(KDP)
        .args(["demo", "--print-cluster-file"])
        .output()
        .expect("kdp demo --print-cluster-file");
    serde_json::from_slice(&out.stdout).expect("the demo cluster is JSON")
}

impl Mock {
    fn start(name: &str, cluster: &Value) -> Mock {
        let dir = std::env::temp_dir().join(format!("kdp-repair-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("cluster.json");
        std::fs::write(&file, cluster.to_string()).expect("write cluster file");
        let broker = MockBroker::start(&file, &[], Stdio::null());
        Mock {
            bootstrap: broker.bootstrap.clone(),
            _broker: broker,
            _dir: dir,
        }
    }

    fn demo(name: &str) -> Mock {
        Mock::start(name, &demo_cluster())
    }

    /// Runs kdp with stdin closed (not a terminal).
    fn kdp(&self, sub: &[&str], args: &[&str]) -> Output {
        Command::new(KDP)
            .args(sub)
            .args(["--bootstrap-server", &self.bootstrap, "--timeout", "20s"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run kdp")
    }

    /// `kdp abort` of payments-0's transaction at `start_offset`, then `extra`.
    fn abort_payments(&self, start_offset: &str, extra: &[&str]) -> Output {
        let mut args = vec![
            "--topic",
            "payments",
            "--partition",
            "0",
            "--start-offset",
            start_offset,
        ];
        args.extend_from_slice(extra);
        self.kdp(&["abort"], &args)
    }

    /// Every partition's producers, as `kdp describe --output json` gives them.
    fn state(&self) -> Value {
        let out = self.kdp(&["describe"], &["--output", "json"]);
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
    }

    fn transaction(&self, id: &str) -> Value {
        let out = Command::new(KDP)
            .args(["transactions", "--bootstrap-server", &self.bootstrap])
            .args(["describe", "--transactional-id", id, "--output", "json"])
            .output()
            .expect("kdp transactions describe");
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        doc["Transactions"][0].clone()
    }

    fn offsets(&self, topic: &str, partition: i32) -> Offsets {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let bootstrap = BrokerAddress::parse_list(&self.bootstrap).expect("bootstrap");
            let client = Arc::new(
                Client::connect(bootstrap, ClientConfig::default())
                    .await
                    .expect("connect"),
            );
            let tp = (topic.to_string(), partition);
            let mut all = offsets(&client, vec![tp.clone()], &DriverOptions::default()).await;
            all.remove(&tp)
                .expect("an answer")
                .expect("offsets of the partition")
        })
    }
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn producer<'a>(state: &'a Value, topic: &str, partition: i64, id: i64) -> &'a Value {
    state["Topics"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["Name"] == topic))
        .and_then(|t| t["Partitions"].as_array())
        .and_then(|ps| ps.iter().find(|p| p["PartitionIndex"] == partition))
        .and_then(|p| p["ActiveProducers"].as_array())
        .and_then(|ps| ps.iter().find(|p| p["ProducerId"] == id))
        .unwrap_or_else(|| panic!("{topic}-{partition} producer {id} missing from {state}"))
}

#[test]
fn dry_run_changes_nothing() {
    let mock = Mock::demo("dry");
    let before = mock.state();
    let out = mock.kdp(&["find-hanging"], &["--repair", "--dry-run"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("Plan ("), "{}", text(&out));
    let out = mock.abort_payments("40112", &["--dry-run"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = mock.kdp(
        &["force-terminate"],
        &["--transactional-id", "ledger-writer", "--dry-run"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(mock.state(), before);
    assert_eq!(
        mock.transaction("ledger-writer")["TransactionState"],
        "Ongoing"
    );
}

#[test]
fn abort_at_the_start_offset_ends_the_transaction_and_the_lso_reaches_the_high_watermark() {
    let mock = Mock::demo("abort");
    let before = mock.offsets("payments", 0);
    assert!(before.blocked() > 0, "{before:?}");
    let out = mock.abort_payments("40112", &["--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let state = mock.state();
    assert_eq!(
        producer(&state, "payments", 0, 7003)["CurrentTxnStartOffset"],
        -1
    );
    let after = mock.offsets("payments", 0);
    assert_eq!(after.last_stable_offset, after.high_watermark, "{after:?}");
}

#[test]
fn abort_where_no_transaction_starts_is_refused_and_changes_nothing() {
    let mock = Mock::demo("nostart");
    let before = mock.state();
    let out = mock.abort_payments("40111", &["--yes"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("no open transaction starts at offset 40111"),
        "{}",
        text(&out)
    );
    assert_eq!(mock.state(), before);
}

#[test]
fn without_a_terminal_and_without_yes_nothing_is_changed() {
    let mock = Mock::demo("noterm");
    let before = mock.state();
    for (sub, args) in [
        (
            "abort",
            &[
                "--topic",
                "payments",
                "--partition",
                "0",
                "--start-offset",
                "40112",
            ][..],
        ),
        (
            "force-terminate",
            &["--transactional-id", "ledger-writer"][..],
        ),
        ("find-hanging", &["--repair"][..]),
    ] {
        let out = mock.kdp(&[sub], args);
        assert_eq!(out.status.code(), Some(2), "{sub}: {}", text(&out));
        assert!(text(&out).contains("pass --yes"), "{sub}: {}", text(&out));
    }
    assert_eq!(mock.state(), before);
    assert_eq!(
        mock.transaction("ledger-writer")["TransactionState"],
        "Ongoing"
    );
}

#[test]
fn force_terminate_bumps_the_epoch_and_ends_the_transaction() {
    let mock = Mock::demo("fence");
    let before = mock.transaction("ledger-writer");
    let epoch = before["ProducerEpoch"].as_i64().expect("epoch");
    let out = mock.kdp(
        &["force-terminate"],
        &["--transactional-id", "ledger-writer", "--yes"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let after = mock.transaction("ledger-writer");
    assert_ne!(after["TransactionState"], "Ongoing", "{after}");
    // fenced: the epoch moved past every epoch the old instance could use
    assert!(
        after["ProducerEpoch"].as_i64().expect("epoch") > epoch,
        "{after}"
    );
}

fn hanging_rows(mock: &Mock) -> Vec<(String, i64, String)> {
    let out = mock.kdp(&["find-hanging"], &["--output", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    doc["Transactions"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r["Topic"].as_str().unwrap_or("").to_string(),
                r["Partition"].as_i64().unwrap_or(-1),
                r["Verdict"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn find_hanging_repair_fixes_what_it_plans_and_leaves_unknown_rows_alone() {
    let mock = Mock::demo("all");
    let before = hanging_rows(&mock);
    // unknown rows are never touched; PrepareCommit/PrepareAbort ones are skipped
    let untouched: Vec<_> = before
        .iter()
        .filter(|(_, _, v)| v == "unknown" || v == "stuck")
        .cloned()
        .collect();
    assert!(untouched.iter().any(|(t, p, _)| t == "ledger" && *p == 2));
    let out = mock.kdp(&["find-hanging"], &["--repair", "--yes"]);
    let all = text(&out);
    // the stuck PrepareCommit transaction is skipped, so the run reports a failure
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(all.contains("skip ledger-2"), "{all}");
    let repaired = before.len() - untouched.len();
    assert_eq!(all.matches(": done: aborted").count(), repaired, "{all}");
    assert_eq!(hanging_rows(&mock), untouched);
}

#[test]
fn a_denied_cluster_acl_gives_the_clear_error_and_changes_nothing() {
    let mut cluster = demo_cluster();
    cluster["acls"]["cluster_deny"] = serde_json::json!(["ALTER", "CLUSTER_ACTION"]);
    let mock = Mock::start("acl", &cluster);
    let before = mock.state();
    let out = mock.abort_payments("40112", &["--yes"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("CLUSTER_AUTHORIZATION_FAILED")
            && text(&out).contains("ALTER or CLUSTER_ACTION on the cluster"),
        "{}",
        text(&out)
    );
    assert_eq!(mock.state(), before);
}

#[test]
fn dry_run_and_yes_need_repair_on_find_hanging() {
    let mock = Mock::demo("usage");
    let out = mock.kdp(&["find-hanging"], &["--yes"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn a_stale_epoch_gets_the_error_and_what_to_do_and_a_retried_abort_is_harmless() {
    let mock = Mock::demo("epochs");
    let before = mock.state();
    for (epoch, coordinator_epoch, error) in [
        ("1", "4", "INVALID_PRODUCER_EPOCH"),
        ("2", "3", "TRANSACTION_COORDINATOR_FENCED"),
    ] {
        let out = mock.kdp(
            &["abort"],
            &[
                "--topic",
                "ledger",
                "--partition",
                "0",
                "--producer-id",
                "8001",
                "--producer-epoch",
                epoch,
                "--coordinator-epoch",
                coordinator_epoch,
                "--yes",
            ],
        );
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        assert!(text(&out).contains(error), "{}", text(&out));
        assert!(
            text(&out).contains("describe the partition again"),
            "{}",
            text(&out)
        );
    }
    assert_eq!(mock.state(), before);
    // the producer's own epochs end it; sending the same abort again changes nothing more
    let args = [
        "--topic",
        "ledger",
        "--partition",
        "0",
        "--producer-id",
        "8001",
        "--producer-epoch",
        "2",
        "--coordinator-epoch",
        "4",
        "--yes",
    ];
    for _ in 0..2 {
        let out = mock.kdp(&["abort"], &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let state = mock.state();
        assert_eq!(
            producer(&state, "ledger", 0, 8001)["CurrentTxnStartOffset"],
            -1
        );
        assert_eq!(producer(&state, "ledger", 0, 8001)["ProducerEpoch"], 2);
    }
}

#[test]
fn help_teaches_the_preferred_lever_and_the_exit_statuses() {
    for sub in ["abort", "force-terminate", "find-hanging"] {
        let out = Command::new(KDP)
            .args([sub, "--help"])
            .output()
            .expect("kdp --help");
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(help.contains("force-terminate"), "{sub}: {help}");
        assert!(help.contains("2 bad usage"), "{sub}: {help}");
        assert!(help.contains("--dry-run"), "{sub}: {help}");
    }
}

#[test]
fn demo_shows_the_repair_plan_without_changing_anything() {
    let out = Command::new(KDP)
        .args(["demo", "--repair-dry-run"])
        .stdin(Stdio::null())
        .output()
        .expect("kdp demo --repair-dry-run");
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(all.contains("Plan ("), "{all}");
    assert!(
        all.contains("abort (WriteTxnMarkers to the leader): producer 8001"),
        "{all}"
    );
    assert!(all.contains("nothing was changed"), "{all}");
    assert!(!all.contains("Result:"), "{all}");
}

/// The mock in this process, so that its leader can move between the plan
/// (DescribeProducers at broker 1) and the abort: the marker must land on
/// broker 2, which ends the transaction (broker 1 would answer
/// NOT_LEADER_OR_FOLLOWER). A metadata answer that is itself stale is
/// kdp-client's `tests/repair.rs`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_that_moves_between_plan_and_abort_is_followed() {
    use kdp_client::describe::{DescribeOptions, TopicSelection};
    use kdp_client::txn::join::{join, JoinOptions};
    use kdp_client::txn::repair::{abort, marker_coordinator_epoch, AbortSpec};
    use kdp_server::cluster::Cluster;
    use kdp_server::mock::{MockCluster, MockConfig};

    let cluster = Cluster::from_json(
        r#"{"cluster_id": "move", "brokers": [{"id": 1}, {"id": 2}], "topics": [
            {"name": "t", "partitions": [{"partition": 0, "leader": 1, "replicas": [1, 2],
             "high_watermark": 50,
             "producers": [{"ProducerId": 7, "ProducerEpoch": 3, "LastSequence": 9,
                            "CoordinatorEpoch": 2, "CurrentTxnStartOffset": 40}]}]},
            {"name": "__transaction_state", "partitions": [
                {"partition": 0, "leader": 2, "replicas": [2, 1]}]}]}"#,
    )
    .expect("cluster");
    let mock = MockCluster::start(cluster, MockConfig::default())
        .await
        .expect("mock");
    let bootstrap = BrokerAddress::parse_list(&mock.bootstrap()).expect("bootstrap");
    let client = Arc::new(
        Client::connect(bootstrap, ClientConfig::default())
            .await
            .expect("connect"),
    );

    let plan = join(
        &client,
        &JoinOptions {
            describe: DescribeOptions {
                topics: Some(vec![TopicSelection {
                    name: "t".into(),
                    partitions: None,
                }]),
                ..Default::default()
            },
            open_only: true,
        },
    )
    .await
    .expect("plan");
    let open: Vec<_> = plan.open_transactions().collect();
    assert_eq!(open.len(), 1, "{open:?}");
    let (_, _, p) = open[0];
    let spec = AbortSpec {
        topic: "t".into(),
        partition: 0,
        producer_id: p.producer_id,
        producer_epoch: i16::try_from(p.producer_epoch).expect("epoch"),
        coordinator_epoch: marker_coordinator_epoch(p.coordinator_epoch),
    };
    assert_eq!(p.current_txn_start_offset, 40);

    mock.update(|c| {
        let p = c.partition_mut("t", 0).expect("t-0");
        p.leader = 2;
        p.leader_epoch += 1;
    });
    let results = abort(&client, vec![spec], &DriverOptions::default()).await;
    assert_eq!(
        results.get(&("t".to_string(), 0)),
        Some(&Ok(())),
        "{results:?}"
    );

    let after = mock.cluster();
    let p = after.partition("t", 0).expect("t-0");
    assert_eq!(p.leader, 2);
    assert_eq!(p.producers[0].current_txn_start_offset, -1);
    assert_eq!(p.high_watermark, 51, "one marker appended");
    assert_eq!(p.last_stable_offset(), 51);
}

/// force-terminate's plan says what it unblocks: where the producer's open
/// transaction starts on each partition of the transaction and the records
/// held behind it (the demo's ledger-1: open at 3301, 9 records pinned).
#[test]
fn force_terminate_plan_shows_start_offsets_and_what_it_unblocks() {
    let mock = Mock::demo("fence-plan");
    let out = mock.kdp(
        &["force-terminate"],
        &["--transactional-id", "ledger-writer", "--dry-run"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(
        plan.contains("partitions ledger-1@3301;") && plan.contains("unblocks 9 record(s)"),
        "{plan}"
    );
    assert_eq!(
        mock.transaction("ledger-writer")["TransactionState"],
        "Ongoing"
    );
}
