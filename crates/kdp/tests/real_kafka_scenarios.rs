//! The it/ Scenario building blocks the diagnosis and repair tests stand on,
//! each proven against a real cluster of either generation (Kafka 3.9:
//! transaction protocol v1; Kafka 4.x: v2, see `Env::txn_version`): what the
//! Java producers did must be what `kdp describe` and Kafka's own
//! TransactionsCommand report. The epochs asserted here are the per-generation
//! table in it/README.md.
//!
//! Run with scripts/test.sh (both generations), or start the cluster, source
//! target/kafka-it/cluster.env and
//! `cargo test -p kdp --test real_kafka_scenarios -- --include-ignored`.

mod common;

use common::*;
use serde_json::Value;

/// kdp's rows for one partition (`describe --output jsonl`, the leader).
fn kdp_rows(env: &Env, topic: &str, partition: i32) -> Vec<ProducerRow> {
    let p = partition.to_string();
    let r = kdp(&[
        "describe",
        "--bootstrap-server",
        &env.bootstrap,
        "--timeout",
        "30s",
        "--topic",
        topic,
        "--partition",
        &p,
        "--output",
        "jsonl",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut rows: Vec<ProducerRow> = parse_jsonl(&r.stdout).iter().map(jsonl_row).collect();
    rows.sort_by_key(|r| r.producer_id);
    rows
}

fn i(v: &Value, k: &str) -> i64 {
    v[k].as_i64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

/// A partition entry of txn-two-partitions / fence-after-write as a row.
fn partition_row(producer_id: i64, p: &Value) -> ProducerRow {
    ProducerRow {
        producer_id,
        producer_epoch: i(p, "producerEpoch") as i32,
        coordinator_epoch: i(p, "coordinatorEpoch") as i32,
        last_sequence: i(p, "lastSequence") as i32,
        last_timestamp: i(p, "lastTimestamp"),
        current_txn_start_offset: i(p, "currentTransactionStartOffset"),
    }
}

fn offsets(env: &Env, topic: &str, partition: &str) -> (i64, i64) {
    let o = scenario(
        env,
        "offsets",
        &["--topic", topic, "--partition", partition],
    );
    (i(&o, "highWatermark"), i(&o, "lastStableOffset"))
}

/// A producer killed inside a transaction with a long timeout: the
/// partition's CurrentTxnStartOffset is the first offset it wrote, the
/// coordinator still describes the transaction as Ongoing, the LSO is pinned
/// there and a read_committed consumer reads only what came before. A new
/// instance of the transactional id aborts it and the consumer reads on.
#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn txn_open_pins_the_lso_until_fenced() {
    let env = env();
    let topic = unique("kdp-sc-open");
    create_topic(&env, &topic, 1);
    scenario(
        &env,
        "idempotent",
        &["--topic", &topic, "--partition", "0", "--records", "3"],
    );
    let tid = unique("kdp-sc-open-tx");
    let open = open_txn(&env, &topic, 0, &tid, 4);
    let first = i(&open, "baseOffset");
    assert_eq!(first, 3, "after the 3 idempotent records");
    assert_eq!(i(&open, "lastOffset"), 6);
    assert_eq!(i(&open, "transactionTimeoutMs"), 3_600_000);
    let pid = i(&open, "producerId");

    // kdp sees the open transaction start exactly where the producer wrote
    let rows = kdp_rows(&env, &topic, 0);
    let row = rows
        .iter()
        .find(|r| r.producer_id == pid)
        .expect("the txn producer");
    assert_eq!(row.current_txn_start_offset, first);
    assert_eq!(*row, scenario_row(&open));
    assert_eq!(rows, kafka_describe_producers(&env, &topic, 0, None));

    // the coordinator still tracks it (the process is gone)
    let d = kafka_describe_transaction(&env, &tid);
    assert_eq!(d["TransactionState"], "Ongoing", "{d:?}");
    assert_eq!(d["ProducerId"], pid.to_string());
    assert_eq!(d["TransactionTimeoutMs"], "3600000");
    assert_eq!(d["TopicPartitions"], format!("{topic}-0"));

    // the LSO is pinned at the open transaction's first offset
    assert_eq!(offsets(&env, &topic, "0"), (7, first));
    let c = scenario(
        &env,
        "consume-committed",
        &["--topic", &topic, "--partition", "0"],
    );
    assert_eq!(c["reachedEnd"], true, "{c}");
    assert_eq!((i(&c, "records"), i(&c, "highestOffset")), (3, 2), "{c}");
    assert_eq!(i(&c, "position"), first, "read_committed stops at the LSO");
    assert_eq!(i(&c, "endOffset"), first);

    // a new instance fences the dead one and aborts its transaction
    scenario(
        &env,
        "fence",
        &[
            "--topic",
            &topic,
            "--partition",
            "0",
            "--records",
            "0",
            "--transactional-id",
            &tid,
        ],
    );
    let (hw, lso) = offsets(&env, &topic, "0");
    assert_eq!(hw, 8, "4 records and the abort marker after the 3");
    assert_eq!(lso, hw, "nothing open any more");
    let c = scenario(
        &env,
        "consume-committed",
        &["--topic", &topic, "--partition", "0"],
    );
    assert_eq!(c["reachedEnd"], true, "{c}");
    assert_eq!(i(&c, "records"), 3, "aborted records are skipped: {c}");
    assert_eq!(
        i(&c, "position"),
        hw,
        "read on to the end, past the aborted ones"
    );
    let rows = kdp_rows(&env, &topic, 0);
    let row = rows
        .iter()
        .find(|r| r.producer_id == pid)
        .expect("the txn producer");
    assert_eq!(row.current_txn_start_offset, -1);
}

/// One healthy producer: a committed transaction to partition 0, its next to
/// partition 1. Per generation (it/README.md): v1 leaves the same epoch
/// everywhere and LastSequence N-1; v2 bumps the epoch at each commit, so
/// partition 0 keeps an epoch one below the coordinator's.
#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn txn_two_partitions_epochs_per_generation() {
    let env = env();
    let topic = unique("kdp-sc-two");
    create_topic(&env, &topic, 2);
    let tid = unique("kdp-sc-two-tx");
    let s = scenario(
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
            &tid,
        ],
    );
    let pid = i(&s, "producerId");
    let coordinator = i(&s, "txnProducerEpoch") as i32;
    let parts = s["partitions"].as_array().unwrap();
    let (a, b) = (partition_row(pid, &parts[0]), partition_row(pid, &parts[1]));
    assert_eq!(kdp_rows(&env, &topic, 0), vec![a.clone()]);
    assert_eq!(kdp_rows(&env, &topic, 1), vec![b.clone()]);
    assert_eq!(
        kafka_describe_producers(&env, &topic, 1, None),
        vec![b.clone()]
    );
    let d = kafka_describe_transaction(&env, &tid);
    assert_eq!(d["TransactionState"], "CompleteCommit");
    assert_eq!(d["ProducerEpoch"], coordinator.to_string());
    let init = i(&s, "clientInitEpoch") as i32;
    match env.txn_version {
        1 => {
            assert_eq!(
                (a.producer_epoch, b.producer_epoch, coordinator),
                (init, init, init),
                "v1: no epoch bump at commit"
            );
            assert_eq!((a.last_sequence, b.last_sequence), (2, 2));
        }
        _ => {
            assert_eq!(
                (a.producer_epoch, b.producer_epoch, coordinator),
                (init + 1, init + 2, init + 2),
                "v2: each commit marker carries a bumped epoch"
            );
            assert_eq!((a.last_sequence, b.last_sequence), (-1, -1));
        }
    }
}

/// Instance 1 commits to partition 0, instance 2 of the same transactional id
/// fences it and commits to partition 1; instance 1's retry is rejected and
/// writes nothing. Partition 0's epoch is below the coordinator's on both
/// generations (v1: by one, the fencing bump; v2: by two, the fencing bump and
/// instance 2's commit marker).
#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn fence_after_write_leaves_the_fenced_epoch_on_the_first_partition() {
    let env = env();
    let topic = unique("kdp-sc-fence");
    create_topic(&env, &topic, 2);
    let tid = unique("kdp-sc-fence-tx");
    let s = scenario(
        &env,
        "fence-after-write",
        &[
            "--topic",
            &topic,
            "--partition-a",
            "0",
            "--partition-b",
            "1",
            "--records",
            "2",
            "--transactional-id",
            &tid,
        ],
    );
    let pid = i(&s, "producerId");
    let coordinator = i(&s, "txnProducerEpoch") as i32;
    let parts = s["partitions"].as_array().unwrap();
    let (a, b) = (partition_row(pid, &parts[0]), partition_row(pid, &parts[1]));
    assert_eq!(kdp_rows(&env, &topic, 0), vec![a.clone()]);
    assert_eq!(kdp_rows(&env, &topic, 1), vec![b.clone()]);
    assert_eq!(
        kafka_describe_producers(&env, &topic, 0, None),
        vec![a.clone()]
    );
    let d = kafka_describe_transaction(&env, &tid);
    assert_eq!(d["ProducerEpoch"], coordinator.to_string());
    assert_eq!(s["zombieChangedPartitionA"], false, "{s}");
    let first_init = i(&s, "firstClientInitEpoch") as i32;
    match env.txn_version {
        1 => {
            assert_eq!(a.producer_epoch, first_init, "the fenced instance's epoch");
            assert_eq!(i(&s, "secondClientInitEpoch") as i32, first_init + 1);
            assert_eq!(
                (b.producer_epoch, coordinator),
                (first_init + 1, first_init + 1)
            );
            assert_eq!(a.producer_epoch, coordinator - 1);
            assert_eq!((a.last_sequence, b.last_sequence), (1, 1));
            assert_eq!(s["zombieError"], "ProducerFencedException");
        }
        _ => {
            assert_eq!(
                a.producer_epoch,
                first_init + 1,
                "instance 1's commit marker"
            );
            assert_eq!(i(&s, "secondClientInitEpoch") as i32, first_init + 2);
            assert_eq!(
                (b.producer_epoch, coordinator),
                (first_init + 3, first_init + 3)
            );
            assert_eq!(a.producer_epoch, coordinator - 2);
            assert_eq!((a.last_sequence, b.last_sequence), (-1, -1));
            assert_eq!(s["zombieError"], "InvalidProducerEpochException");
        }
    }
}

/// The TransactionsCommand helper runs any subcommand: `list` shows an open
/// transaction of a dead producer, and bad usage comes back as a non-zero
/// exit with the tool's message.
#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn transactions_command_list_and_bad_usage() {
    let env = env();
    let topic = unique("kdp-sc-list");
    create_topic(&env, &topic, 1);
    let tid = unique("kdp-sc-list-tx");
    let open = open_txn(&env, &topic, 0, &tid, 1);
    let r = transactions_command(&env, &["list"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = parse_tool_table(&r.stdout);
    let row = rows
        .iter()
        .find(|r| r["TransactionalId"] == tid)
        .unwrap_or_else(|| panic!("{tid} not listed:\n{}", r.stdout));
    assert_eq!(row["ProducerId"], i(&open, "producerId").to_string());
    assert_eq!(row["TransactionState"], "Ongoing");

    let r = transactions_command(&env, &["describe"]);
    assert_ne!(
        r.code, 0,
        "describe without --transactional-id: {}",
        r.stdout
    );
    assert!(r.stderr.contains("transactional-id"), "{}", r.stderr);
}
