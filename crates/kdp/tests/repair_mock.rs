//! `kdp abort`, `kdp force-terminate` and `kdp find-hanging --repair`
//! against `kdp mock-broker` serving the demo cluster (the mock answers
//! WriteTxnMarkers and InitProducerId with Kafka's semantics and updates its
//! state). The claims about real brokers are the real-Kafka tests' job.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use kdp_client::admin::DriverOptions;
use kdp_client::txn::offsets::offsets;
use kdp_client::{BrokerAddress, Client, ClientConfig, TimeBound};
use kdp_domain::Offsets;
use serde_json::Value;

mod common;

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
        let mut kdp = Command::new(KDP);
        kdp.args(sub)
            .args(["--bootstrap-server", &self.bootstrap, "--timeout", "20s"])
            .args(args)
            .stdin(Stdio::null());
        let out = kdp.output().expect("run kdp");
        common::schema::check_command(&kdp, &out.stdout);
        out
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
        let mut kdp = Command::new(KDP);
        kdp.args(["transactions", "--bootstrap-server", &self.bootstrap])
            .args(["describe", "--transactional-id", id, "--output", "json"]);
        let out = kdp.output().expect("kdp transactions describe");
        common::schema::check_command(&kdp, &out.stdout);
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
            let bound = TimeBound::after(std::time::Duration::from_secs(30));
            let mut all =
                offsets(&client, vec![tp.clone()], &DriverOptions::default(), &bound).await;
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
    // the stuck PrepareCommit transaction is skipped and the unknown rows are left to an
    // operator: nothing failed, but something still hangs (4; it was 1, a failure, before)
    assert_eq!(out.status.code(), Some(4), "{all}");
    assert!(all.contains("skip ledger-2"), "{all}");
    assert!(!all.contains("FAILED"), "{all}");
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
fn a_stale_epoch_is_refused_with_the_error_and_what_to_do_and_a_repeated_abort_changes_nothing() {
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
        // refused by the plan, nothing sent (exit 2; it was 1 after the leader refused the
        // marker kdp sent), naming what the leader would answer and what the partition has
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(text(&out).contains(error), "{}", text(&out));
        assert!(
            text(&out).contains("describe the partition again"),
            "{}",
            text(&out)
        );
        assert!(
            text(&out).contains(
                "producer 8001 epoch 2 coordinator epoch 4, open transaction from offset 5120"
            ),
            "{}",
            text(&out)
        );
        assert!(!text(&out).contains("Plan ("), "{}", text(&out));
    }
    assert_eq!(mock.state(), before);
    // the producer's own epochs end it; the same abort again is refused (no open
    // transaction any more: it was sent, and harmless, before) and changes nothing more
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
    for run in 0..2 {
        let out = mock.kdp(&["abort"], &args);
        let want = if run == 0 { 0 } else { 2 };
        assert_eq!(out.status.code(), Some(want), "{}", text(&out));
        if run == 1 {
            assert!(
                text(&out).contains("producer 8001 has no open transaction on ledger-0"),
                "{}",
                text(&out)
            );
        }
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
    use kdp_client::txn::write_txn_markers::abort;
    use kdp_domain::repair::{marker_coordinator_epoch, AbortSpec};
    use kdp_server::cluster::Cluster;
    use kdp_server::mock::{MockCluster, MockConfig};
    use kdp_workflows::join::{join, JoinOptions};

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
            lookups: Default::default(),
            retain: Default::default(),
        },
        &TimeBound::after(std::time::Duration::from_secs(30)),
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
    let bound = TimeBound::after(std::time::Duration::from_secs(30));
    let results = abort(&client, vec![spec], &DriverOptions::default(), &bound).await;
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

/// An abort for a producer the partition has no open transaction of, or
/// with epochs that are not the partition's, is refused by the plan itself:
/// exit 2 with what the partition does have, dry run or not, and nothing is
/// sent (the high watermark and LSO, which a marker would move, and every
/// producer's state stay as they were).
#[test]
fn an_abort_the_partition_does_not_support_is_refused_and_nothing_is_sent() {
    let mock = Mock::demo("refuse");
    let before = mock.state();
    let offsets = mock.offsets("payments", 0);
    let abort = |id: &str, epoch: &str, extra: &str| {
        mock.kdp(
            &["abort"],
            &[
                "--producer-id",
                id,
                "--producer-epoch",
                epoch,
                "--coordinator-epoch",
                "2",
                "--topic",
                "payments",
                "--partition",
                "0",
                extra,
            ],
        )
    };
    for extra in ["--dry-run", "--yes"] {
        // a producer the partition does not know
        let out = abort("9999", "6", extra);
        let all = text(&out);
        assert_eq!(out.status.code(), Some(2), "{extra}: {all}");
        assert!(
            all.contains("producer 9999 has no open transaction on payments-0"),
            "{all}"
        );
        assert!(
            all.contains(
                "producer 7003 epoch 0 coordinator epoch 2, open transaction from offset 40112"
            ) && all.contains("producer 7004 epoch 6 coordinator epoch 2, no open transaction"),
            "the refusal says what the partition has: {all}"
        );
        assert!(
            !all.contains("Plan (") && !all.contains("unblocks"),
            "{all}"
        );
        // 7004 is there, without an open transaction on payments-0
        let out = abort("7004", "6", extra);
        assert_eq!(out.status.code(), Some(2), "{extra}: {}", text(&out));
        assert!(
            text(&out).contains("producer 7004 has no open transaction on payments-0"),
            "{}",
            text(&out)
        );
        // 7003's transaction, with another producer's epoch
        let out = abort("7003", "6", extra);
        assert_eq!(out.status.code(), Some(2), "{extra}: {}", text(&out));
        assert!(
            text(&out).contains("producer 7003 is at epoch 0 with coordinator epoch 2"),
            "{}",
            text(&out)
        );
    }
    assert_eq!(mock.state(), before);
    assert_eq!(
        mock.offsets("payments", 0),
        offsets,
        "no marker was written"
    );
}

/// `find-hanging --repair`: the results carry the plan's numbers, the
/// stuck transaction's step is reported as skipped (not failed), and each
/// row with verdict unknown is a manual step with the command to run by
/// hand (and the bootstrap flags) and why kdp did not.
#[test]
fn find_hanging_repair_numbers_results_as_the_plan_and_lists_unknown_rows_by_hand() {
    let mock = Mock::demo("numbers");
    let out = mock.kdp(&["find-hanging"], &["--repair", "--yes"]);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let plan =
        &stdout[stdout.find("Plan (").expect("a plan")..stdout.find("Result:").expect("a result")];
    // the steps' results end where the proof of what they changed begins
    let result = &stdout[stdout.find("Result:").expect("a result")
        ..stdout.find("After the repair").unwrap_or(stdout.len())];
    let numbered = |block: &str, what: &str| -> Option<String> {
        block
            .lines()
            .find(|l| l.contains(what))
            .and_then(|l| l.trim().split('.').next().map(str::to_string))
    };
    // the plan's numbers, each step once in the result with the same number
    assert_eq!(
        numbered(plan, "producer 8001 epoch 2"),
        numbered(result, "abort ledger-0 producer 8001"),
        "{stdout}"
    );
    assert_eq!(
        numbered(
            plan,
            "skip: the coordinator decided the outcome (PrepareCommit)"
        ),
        numbered(result, "skip ledger-2 producer 8002"),
        "{stdout}"
    );
    let skipped = result
        .lines()
        .find(|l| l.contains("skip ledger-2 producer 8002"))
        .expect("the skipped step");
    assert!(skipped.contains(": skipped: "), "{skipped}");
    // the unknown rows: manual steps with the command, the bootstrap flags and why
    for (tp, start) in [
        ("ledger-3", "7702"),
        ("orders-3", "150382"),
        ("payments-0", "40112"),
    ] {
        let (topic, partition) = tp.split_once('-').expect("topic-partition");
        let command = format!(
            "kdp abort --bootstrap-server {} --topic {topic} --partition {partition} --start-offset {start}",
            mock.bootstrap
        );
        let in_plan = numbered(plan, &command);
        assert!(in_plan.is_some(), "{command} not in the plan: {plan}");
        assert_eq!(
            in_plan,
            numbered(result, &format!("manual {tp} ")),
            "{stdout}"
        );
    }
    assert_eq!(
        plan.matches("why kdp did not run it: kdp cannot tell whether a coordinator still tracks")
            .count(),
        3,
        "{plan}"
    );
    let steps = plan
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("     "))
        .count();
    let results = result.lines().filter(|l| l.starts_with("  ")).count();
    assert_eq!(steps, results, "{stdout}");
    assert_eq!(out.status.code(), Some(4), "{}", text(&out));
}

/// The question comes after the plan it asks about: with stdout going to a
/// file and a terminal on stdin and stderr (`script`'s pty), the plan is
/// on the terminal before `Proceed? [y/N]`; stdout still has it.
#[test]
fn the_plan_is_on_the_terminal_before_the_question_when_stdout_is_not() {
    // a test that cannot give kdp a terminal fails, never passes unchecked
    assert!(
        Command::new("script").arg("--version").output().is_ok(),
        "needs `script` (util-linux, Debian's bsdutils) to give kdp a terminal"
    );
    let mock = Mock::demo("prompt");
    let before = mock.state();
    let dir = std::env::temp_dir().join(format!("kdp-repair-prompt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let piped = dir.join("stdout.txt");
    let inner = format!(
        "{KDP} abort --bootstrap-server {} --timeout 20s --topic payments --partition 0 --start-offset 40112 > {}",
        mock.bootstrap,
        piped.display()
    );
    let mut child = Command::new("script")
        .args(["-qec", &inner, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script");
    // answer no once the question is there (script passes it to the pty)
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        std::thread::sleep(std::time::Duration::from_secs(3));
        let _ = stdin.write_all(b"n\n");
        let _ = stdin.flush();
        std::thread::sleep(std::time::Duration::from_secs(2));
    });
    let out = child.wait_with_output().expect("script output");
    let _ = writer.join();
    let terminal = String::from_utf8_lossy(&out.stdout).to_string();
    let question = terminal
        .find("Proceed? [y/N]")
        .unwrap_or_else(|| panic!("no question: {terminal}"));
    let plan = terminal
        .find("payments-0@40112")
        .unwrap_or_else(|| panic!("the plan is not on the terminal: {terminal}"));
    assert!(plan < question, "{terminal}");
    assert!(
        terminal.contains("not confirmed; nothing was changed"),
        "{terminal}"
    );
    let file = std::fs::read_to_string(&piped).expect("stdout file");
    assert!(
        file.contains("payments-0@40112"),
        "stdout keeps the plan: {file}"
    );
    assert_eq!(mock.state(), before);
}

/// With the transaction coordinator unreachable (broker 3 coordinates
/// ledger-writer and advertises an address nothing listens on), the plan
/// makes no claim about the coordinator's transaction: it says the
/// coordinator could not be asked, and why.
#[test]
fn with_the_coordinator_unreachable_the_plan_claims_nothing_about_its_transaction() {
    let mut cluster = demo_cluster();
    for b in cluster["brokers"].as_array_mut().expect("brokers") {
        if b["id"] == 3 {
            b["host"] = "127.0.0.2".into();
        }
    }
    for t in cluster["transactions"]
        .as_array_mut()
        .expect("transactions")
    {
        if t["transactional_id"] == "ledger-writer" {
            t["coordinator"] = 3.into();
        }
    }
    let mock = Mock::start("nocoord", &cluster);
    let out = Command::new(KDP)
        .args([
            "abort",
            "--bootstrap-server",
            &mock.bootstrap,
            "--timeout",
            "4s",
        ])
        .args([
            "--topic",
            "ledger",
            "--partition",
            "0",
            "--start-offset",
            "5120",
            "--dry-run",
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run kdp");
    let all = text(&out);
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(all.contains("producer 8001 epoch 2"), "{all}");
    assert!(!all.contains("would not help"), "an unchecked claim: {all}");
    assert!(
        all.contains(
            "the coordinator could not be asked: broker 3 did not answer ListTransactions"
        ),
        "{all}"
    );
    // reachable, the coordinator's answer supports the claim
    let mock = Mock::demo("coord");
    let out = mock.abort_payments("40112", &["--dry-run"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = mock.kdp(
        &["abort"],
        &[
            "--topic",
            "ledger",
            "--partition",
            "0",
            "--start-offset",
            "5120",
            "--dry-run",
        ],
    );
    assert!(
        text(&out).contains(
            "force-terminate would not help: ledger-writer's transaction at the coordinator (Ongoing) does not include this partition"
        ),
        "{}",
        text(&out)
    );
}

/// The lines `--audit-log` appended, each checked against its schema.
fn audit_lines(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("the audit log");
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            if let Some(why) = common::schema::violations("audit-log", false, &v) {
                panic!("{why}: {v}");
            }
            v
        })
        .collect()
}

/// After the abort, the report and the audit line say what the mock now
/// holds: the LSO moved from the transaction's start to the high
/// watermark, the transaction is gone, and payments-ledger (committed at
/// the old LSO) can advance; a second repair appends a second line to the
/// same file, which only its owner may read.
#[test]
fn the_proof_and_the_audit_log_match_what_the_mock_reads_after_the_repair() {
    let mock = Mock::demo("proof");
    let log = mock._dir.join("audit.jsonl");
    let log_arg = log.display().to_string();
    let before = mock.offsets("payments", 0);
    let out = mock.abort_payments("40112", &["--yes", "--audit-log", &log_arg]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let after = mock.offsets("payments", 0);
    let shown = text(&out);
    let moved = format!(
        "payments-0: LSO moved {} -> {}, {} record(s) released; transaction gone; groups that can advance: payments-ledger",
        before.last_stable_offset,
        after.last_stable_offset,
        after.last_stable_offset - before.last_stable_offset
    );
    assert!(shown.contains(&moved), "{shown}");
    let lines = audit_lines(&log);
    assert_eq!(lines.len(), 1);
    let l = &lines[0];
    assert_eq!(
        (&l["Command"], &l["Action"], &l["Result"], &l["ProducerId"]),
        (
            &Value::from("abort"),
            &Value::from("abort"),
            &Value::from("done"),
            &Value::from(7003)
        )
    );
    assert_eq!(l["ClusterId"], mock_cluster_id());
    let p = &l["Partitions"][0];
    assert_eq!(p["Before"]["LastStableOffset"], before.last_stable_offset);
    assert_eq!(p["Before"]["HighWatermark"], before.high_watermark);
    assert_eq!(p["After"]["LastStableOffset"], after.last_stable_offset);
    assert_eq!(p["After"]["HighWatermark"], after.high_watermark);
    assert_eq!(p["LsoChange"], "moved");
    assert_eq!(p["TransactionGone"], true);
    assert_eq!(
        p["GroupsCanAdvance"],
        serde_json::json!(["payments-ledger"])
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&log).expect("log").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
    let out = mock.kdp(
        &["force-terminate"],
        &[
            "--transactional-id",
            "ledger-writer",
            "--yes",
            "--audit-log",
            &log_arg,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let lines = audit_lines(&log);
    assert_eq!(lines.len(), 2, "appended, not replaced");
    assert_eq!(lines[1]["Action"], "force-terminate");
    assert_eq!(lines[1]["TransactionalId"], "ledger-writer");
    assert_eq!(lines[1]["Partitions"][0]["LsoChange"], "moved");
}

fn mock_cluster_id() -> Value {
    demo_cluster()["cluster_id"].clone()
}

/// find-hanging --repair proves each repaired partition too.
#[test]
fn find_hanging_repair_reports_each_lso_it_moved() {
    let mock = Mock::demo("fh-proof");
    let log = mock._dir.join("audit.jsonl");
    let log_arg = log.display().to_string();
    let out = mock.kdp(
        &["find-hanging"],
        &["--repair", "--yes", "--audit-log", &log_arg],
    );
    let shown = text(&out);
    assert!(shown.contains("After the repair"), "{shown}");
    let lines = audit_lines(&log);
    assert!(!lines.is_empty(), "{shown}");
    for l in &lines {
        assert_eq!(l["Command"], "find-hanging --repair");
        if l["Result"] == "done" {
            for p in l["Partitions"].as_array().expect("partitions") {
                if !p["After"].is_null() {
                    assert_eq!(p["LsoChange"], "moved", "{l}");
                }
            }
        }
    }
}
