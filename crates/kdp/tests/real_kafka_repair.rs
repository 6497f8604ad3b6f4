//! `kdp abort` and `kdp force-terminate` against a real cluster of either
//! generation (Kafka 3.9: transaction protocol v1; 4.x: v2). The state of the
//! partition is read with Kafka's own tools (TransactionsCommand, the Admin
//! client, a read_committed consumer), never with kdp. Run with scripts/test.sh.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use kdp_wire::ErrorCode;
use serde_json::Value;

fn i(v: &Value, k: &str) -> i64 {
    v[k].as_i64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

/// What an operator (and Kafka's tools) can see of one partition and,
/// optionally, one transactional id; compared before and after a command
/// that must change nothing.
#[derive(Debug, PartialEq)]
struct Seen {
    producers: Vec<ProducerRow>,
    high_watermark: i64,
    last_stable_offset: i64,
    /// TransactionsCommand describe, without the column that grows with time
    /// and the coordinator's broker id (leadership of `__transaction_state`
    /// may move while a test runs, e.g. after another test restarted a broker:
    /// that is no change kdp made).
    transaction: Option<BTreeMap<String, String>>,
}

fn offsets(env: &Env, topic: &str) -> (i64, i64) {
    let o = scenario(env, "offsets", &["--topic", topic, "--partition", "0"]);
    (i(&o, "highWatermark"), i(&o, "lastStableOffset"))
}

fn seen(env: &Env, topic: &str, tid: Option<&str>) -> Seen {
    let (high_watermark, last_stable_offset) = offsets(env, topic);
    Seen {
        producers: kafka_describe_producers(env, topic, 0, None),
        high_watermark,
        last_stable_offset,
        transaction: tid.map(|t| {
            let mut row = kafka_describe_transaction(env, t);
            row.remove("TransactionDurationMs");
            row.remove("CoordinatorId");
            row
        }),
    }
}

/// A read_committed consumer from the beginning: the records it gets and the
/// end it is allowed to reach (the LSO).
fn consume(env: &Env, topic: &str) -> (i64, i64) {
    let c = scenario(
        env,
        "consume-committed",
        &["--topic", topic, "--partition", "0", "--seconds", "30"],
    );
    (i(&c, "records"), i(&c, "position"))
}

/// Three committed records written after `open`'s transaction started: a
/// read_committed consumer must not see them while it stays open.
fn write_after(env: &Env, topic: &str) {
    scenario(
        env,
        "idempotent",
        &["--topic", topic, "--partition", "0", "--records", "3"],
    );
}

fn kdp_in(env: &Env, cmd: &[&str], args: &[&str]) -> Run {
    let mut all: Vec<&str> = cmd.to_vec();
    all.extend(["--bootstrap-server", &env.bootstrap, "--timeout", "40s"]);
    all.extend(args);
    kdp(&all)
}

/// `kdp abort --topic T --partition 0 <args>`.
fn abort(env: &Env, topic: &str, args: &[&str]) -> Run {
    let mut all = vec!["--topic", topic, "--partition", "0"];
    all.extend(args);
    kdp_in(env, &["abort"], &all)
}

/// The pinned partition as the consumer sees it: it reaches the open
/// transaction's first offset and no further, and gets none of the records
/// committed after it.
fn assert_pinned(env: &Env, topic: &str, start: i64) {
    let (hw, lso) = offsets(env, topic);
    assert_eq!(lso, start, "the open transaction pins the LSO");
    assert!(hw >= start + 8, "5 open + 3 committed records: hw {hw}");
    let (records, position) = consume(env, topic);
    assert_eq!(
        (records, position),
        (start, start),
        "read_committed stops at the open transaction"
    );
}

/// After the repair: LSO = HW, the consumer reads the 3 records committed
/// after the aborted transaction, and none of its 5.
fn assert_released(env: &Env, topic: &str, start: i64) {
    let (hw, lso) = offsets(env, topic);
    assert_eq!(lso, hw, "nothing open: the LSO is the high watermark");
    let (records, position) = consume(env, topic);
    assert_eq!(position, hw, "read_committed reads to the end");
    assert_eq!(
        records,
        start + 3,
        "the 3 committed records, not the 5 aborted"
    );
}

fn producer(rows: &[ProducerRow], pid: i64) -> &ProducerRow {
    rows.iter()
        .find(|r| r.producer_id == pid)
        .unwrap_or_else(|| panic!("producer {pid} not in {rows:?}"))
}

/// The raw abort, by start offset, as `kafka-transactions.sh abort` does it;
/// with the refusals and the dry run around it.
#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn abort_by_start_offset_releases_the_lso_and_refuses_what_is_not_there() {
    let env = env();
    let topic = unique("kdp-rp-abort");
    create_topic(&env, &topic, 1);
    let tid = unique("kdp-rp-abort-tx");
    let open = open_txn(&env, &topic, 0, &tid, 5);
    let (pid, start) = (i(&open, "producerId"), i(&open, "baseOffset"));
    write_after(&env, &topic);
    assert_pinned(&env, &topic, start);
    let before = seen(&env, &topic, Some(&tid));
    assert_eq!(
        producer(&before.producers, pid).current_txn_start_offset,
        start
    );

    // the dry run prints the plan (producer, transactional id, records it
    // unblocks) and changes nothing
    let so = start.to_string();
    let dry = abort(&env, &topic, &["--start-offset", &so, "--dry-run"]);
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    for part in [
        format!("producer {pid} "),
        format!("transactional id {tid};"),
        format!("{topic}-0@{start}"),
        "recommended instead: kdp force-terminate".to_string(),
        "unblocks 8 record(s)".to_string(),
    ] {
        assert!(
            dry.stdout.contains(&part),
            "plan names {part}: {}",
            dry.stdout
        );
    }
    // without a terminal and without --yes: refused, nothing sent
    let unconfirmed = abort(&env, &topic, &["--start-offset", &so]);
    assert_eq!(unconfirmed.code, 2, "{}", unconfirmed.stderr);
    // an offset no open transaction starts at: refused, says where they start
    let wrong = (start + 1).to_string();
    let refused = abort(&env, &topic, &["--start-offset", &wrong, "--yes"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains(&format!("no open transaction starts at offset {wrong}"))
            && refused.stderr.contains(&so),
        "{}",
        refused.stderr
    );
    assert_eq!(seen(&env, &topic, Some(&tid)), before, "nothing changed");

    let done = abort(&env, &topic, &["--start-offset", &so, "--yes"]);
    assert_eq!(done.code, 0, "{}\n{}", done.stdout, done.stderr);
    assert!(done.stdout.contains("done"), "{}", done.stdout);
    let after = kafka_describe_producers(&env, &topic, 0, None);
    let row = producer(&after, pid);
    assert_eq!(row.current_txn_start_offset, -1, "{after:?}");
    assert_released(&env, &topic, start);

    // the same abort again (explicit epochs, as planned before): refused, since the
    // transaction is no longer open (exit 2), and nothing changes
    let epoch = producer(&before.producers, pid).producer_epoch.to_string();
    let coord = producer(&before.producers, pid)
        .coordinator_epoch
        .max(0)
        .to_string();
    let again = abort(
        &env,
        &topic,
        &[
            "--producer-id",
            &pid.to_string(),
            "--producer-epoch",
            &epoch,
            "--coordinator-epoch",
            &coord,
            "--yes",
        ],
    );
    assert_eq!(again.code, 2, "{}\n{}", again.stdout, again.stderr);
    assert!(
        again.stderr.contains(&format!(
            "producer {pid} has no open transaction on {topic}-0"
        )),
        "{}",
        again.stderr
    );
    assert_released(&env, &topic, start);
}

/// A producer that stays alive inside its transaction (Scenario txn-zombie);
/// once resumed it goes on with its old epoch and prints what happened.
fn zombie(env: &Env, topic: &str, tid: &str) -> (Held, Value) {
    let args = [
        "--topic",
        topic,
        "--partition",
        "0",
        "--records",
        "5",
        "--transactional-id",
        tid,
        "--transaction-timeout-ms",
        "3600000",
    ];
    Held::start(
        env,
        "txn-zombie",
        300,
        &args,
        "--resume-file",
        "the open transaction",
    )
}

/// Polls Kafka's describe-producers until the producer's transaction is
/// closed on the partition (the coordinator writes the markers after it
/// answers); a bound on the polls turns a hang into a failure.
fn wait_closed(env: &Env, topic: &str, pid: i64) -> Vec<ProducerRow> {
    for _ in 0..30 {
        let rows = kafka_describe_producers(env, topic, 0, None);
        if rows
            .iter()
            .any(|r| r.producer_id == pid && r.current_txn_start_offset == -1)
        {
            return rows;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    panic!("producer {pid}'s transaction on {topic}-0 never closed");
}

/// force-terminate through the coordinator: the LSO moves on, and the
/// producer, still alive, is refused when it goes on with its old epoch.
#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn force_terminate_releases_the_lso_and_fences_the_live_producer() {
    let env = env();
    let topic = unique("kdp-rp-fence");
    create_topic(&env, &topic, 1);
    let tid = unique("kdp-rp-fence-tx");
    let (mut zombie, open) = zombie(&env, &topic, &tid);
    let (pid, start) = (i(&open, "producerId"), i(&open, "baseOffset"));
    let epoch = i(&open, "clientProducerEpoch");
    write_after(&env, &topic);
    assert_pinned(&env, &topic, start);
    let before = seen(&env, &topic, Some(&tid));
    assert_eq!(
        before.transaction.as_ref().unwrap()["TransactionState"],
        "Ongoing"
    );

    let dry = kdp_in(
        &env,
        &["force-terminate"],
        &["--transactional-id", &tid, "--dry-run"],
    );
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(
        dry.stdout.contains(&format!("force-terminate {tid:?}"))
            && dry.stdout.contains(&format!("producer {pid} "))
            && dry.stdout.contains("coordinator state Ongoing"),
        "{}",
        dry.stdout
    );
    assert_eq!(
        seen(&env, &topic, Some(&tid)),
        before,
        "the dry run changed nothing"
    );

    let done = kdp_in(
        &env,
        &["force-terminate"],
        &["--transactional-id", &tid, "--yes"],
    );
    assert_eq!(done.code, 0, "{}\n{}", done.stdout, done.stderr);
    let rows = wait_closed(&env, &topic, pid);
    assert!(
        i64::from(producer(&rows, pid).producer_epoch) > epoch,
        "the abort marker carries a bumped epoch: {rows:?} (data epoch {epoch})"
    );
    let txn = kafka_describe_transaction(&env, &tid);
    // InitProducerId finishes the abort, then leaves the id Empty at the new epoch
    assert_eq!(txn["TransactionState"], "Empty", "{txn:?}");
    assert_eq!(txn["ProducerId"], pid.to_string(), "{txn:?}");
    assert!(
        txn["ProducerEpoch"].parse::<i64>().unwrap() > epoch,
        "{txn:?}"
    );
    assert_released(&env, &topic, start);

    // the producer comes back with the epoch it was fenced at
    let resumed = zombie.resume("the resumed producer");
    eprintln!(
        "Kafka {}: the fenced producer resumed: {resumed}",
        env.kafka_version
    );
    assert_eq!(resumed["committed"], false, "{resumed}");
    let refused = resumed["sendError"]
        .as_str()
        .or(resumed["commitError"].as_str())
        .unwrap_or_default();
    assert!(
        ["ProducerFencedException", "InvalidProducerEpochException"].contains(&refused),
        "{resumed}"
    );
    assert_released(&env, &topic, start);
}

/// One WriteTxnMarkers ABORT for `pid` on `topic`-0 at `version` with the
/// marker's epoch and transaction version: the partition's error code.
async fn raw_abort(
    conn: &kdp_client::Connection,
    version: i16,
    topic: &str,
    pid: i64,
    epoch: i16,
    coordinator_epoch: i32,
    transaction_version: i8,
) -> ErrorCode {
    use kdp_wire::messages::{WritableTxnMarker, WritableTxnMarkerTopic, WriteTxnMarkersRequest};
    let req = WriteTxnMarkersRequest {
        markers: vec![WritableTxnMarker {
            producer_id: pid,
            producer_epoch: epoch,
            transaction_result: false,
            topics: vec![WritableTxnMarkerTopic {
                name: topic.to_string(),
                partition_indexes: vec![0],
                ..Default::default()
            }],
            coordinator_epoch,
            transaction_version,
            ..Default::default()
        }],
        ..Default::default()
    };
    let resp = conn
        .send(&req, version)
        .await
        .unwrap_or_else(|e| panic!("WriteTxnMarkers v{version}: {e}"));
    let codes: Vec<ErrorCode> = resp
        .markers
        .iter()
        .flat_map(|m| &m.topics)
        .flat_map(|t| &t.partitions)
        .map(|p| p.error_code)
        .collect();
    assert_eq!(codes.len(), 1, "{resp:?}");
    codes[0]
}

/// What a raw abort marker must carry, asked of the real leader: which
/// WriteTxnMarkers versions it speaks, and which producer epoch it accepts
/// with each transaction version (docs/REPAIR.md has the table this pins).
/// The producer's second transaction, so that its epoch is at least 1.
#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn raw_abort_marker_epoch_rules_of_this_generation() {
    let env = env();
    let topic = unique("kdp-rp-epoch");
    create_topic(&env, &topic, 1);
    let tid = unique("kdp-rp-epoch-tx");
    scenario(
        &env,
        "txn-commit",
        &[
            "--topic",
            &topic,
            "--partition",
            "0",
            "--records",
            "1",
            "--transactional-id",
            &tid,
        ],
    );
    let open = open_txn(&env, &topic, 0, &tid, 5);
    let pid = i(&open, "producerId");
    let epoch = i16::try_from(i(&open, "producerEpoch")).unwrap();
    let coordinator_epoch = i32::try_from(i(&open, "coordinatorEpoch")).unwrap().max(0);
    assert!(epoch >= 1, "second transaction: {open}");
    let leader = env
        .broker_addr(i32::try_from(i(&open, "leader")).unwrap())
        .to_string();

    let rt = tokio::runtime::Runtime::new().unwrap();
    let (range, answers) = rt.block_on(async {
        let stream = tokio::net::TcpStream::connect(&leader).await.unwrap();
        let conn = kdp_client::Connection::establish(
            stream,
            leader.clone(),
            kdp_client::ConnectionConfig::default(),
        )
        .await
        .unwrap();
        let range = conn
            .api_versions()
            .and_then(|t| t.range(kdp_wire::api::WRITE_TXN_MARKERS))
            .expect("the leader speaks WriteTxnMarkers");
        let mut answers = BTreeMap::new();
        let ask = |version, epoch, tv| {
            let conn = &conn;
            let topic = topic.clone();
            async move {
                let code =
                    raw_abort(conn, version, &topic, pid, epoch, coordinator_epoch, tv).await;
                ((version, epoch, tv), code)
            }
        };
        // an older epoch is refused whatever the version
        let (k, v) = ask(1, epoch - 1, 0).await;
        answers.insert(k, v);
        if range.1 >= 2 {
            // transaction version 2: the epoch must be newer than the partition's
            for (e, tv) in [(epoch, 2), (epoch + 1, 2)] {
                let (k, v) = ask(2, e, tv).await;
                answers.insert(k, v);
            }
        } else {
            let (k, v) = ask(1, epoch, 0).await;
            answers.insert(k, v);
        }
        (range, answers)
    });
    eprintln!(
        "Kafka {} (transaction.version {}): WriteTxnMarkers {range:?}; (version, epoch, tv) -> error: {answers:?}; partition epoch {epoch}",
        env.kafka_version, env.txn_version
    );
    assert_eq!(
        answers[&(1, epoch - 1, 0)],
        ErrorCode::INVALID_PRODUCER_EPOCH
    );
    let closed_at = if range.1 >= 2 {
        assert_eq!(
            answers[&(2, epoch, 2)],
            ErrorCode::INVALID_PRODUCER_EPOCH,
            "a version-2 marker needs a newer epoch than the partition's"
        );
        assert_eq!(answers[&(2, epoch + 1, 2)], ErrorCode::NONE);
        epoch + 1
    } else {
        assert_eq!(answers[&(1, epoch, 0)], ErrorCode::NONE);
        epoch
    };
    let rows = wait_closed(&env, &topic, pid);
    assert_eq!(
        producer(&rows, pid).producer_epoch,
        i32::from(closed_at),
        "{rows:?}"
    );
}
