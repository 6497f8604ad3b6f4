//! `kdp lag` against a cluster file served by `kdp mock-broker`: a
//! partition whose batches hold idempotent records, a committed and an
//! aborted transaction and their markers, read with Fetch READ_COMMITTED;
//! a group on the last marker is caught up while Kafka's offset lag says
//! 1; a byte budget too small for the partition gives bounds, never a
//! figure shown as exact, and a failed read makes the answer partial.

use std::process::Command;

use serde_json::{json, Value};

mod common;
mod mock_broker;
use mock_broker::Served;

const KDP: &str = env!("CARGO_BIN_EXE_kdp");

/// 0-4 idempotent | 5-8 committed (producer 2), 9 marker | 10-12 aborted
/// (producer 3), 13 marker | 14-15 plain | 16-17 committed (producer 4),
/// 18 marker. HWM = LSO = 19. A read_committed consumer from 0 gets 13.
fn cluster() -> Value {
    let b = |v: Value| v;
    json!({
        "brokers": [{"id": 1, "configs": {"offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "1"}}],
        "topics": [{
            "name": "txn",
            "partitions": [{"partition": 0, "leader": 1, "replicas": [1], "batches": [
                b(json!({"producer_id": 1, "producer_epoch": 0, "base_sequence": 0, "records": 5})),
                b(json!({"producer_id": 2, "producer_epoch": 0, "base_sequence": 0, "records": 4, "transactional": true})),
                b(json!({"producer_id": 2, "producer_epoch": 0, "control": "commit"})),
                b(json!({"producer_id": 3, "producer_epoch": 0, "base_sequence": 0, "records": 3, "transactional": true, "compression": "zstd"})),
                b(json!({"producer_id": 3, "producer_epoch": 0, "control": "abort"})),
                b(json!({"records": 2, "compression": "gzip"})),
                b(json!({"producer_id": 4, "producer_epoch": 0, "base_sequence": 0, "records": 2, "transactional": true})),
                b(json!({"producer_id": 4, "producer_epoch": 0, "control": "commit"}))
            ]}]
        }],
        "groups": [
            {"group_id": "from-start", "offsets": {"txn": {"0": 0}}},
            {"group_id": "inside-idem", "offsets": {"txn": {"0": 2}}},
            {"group_id": "on-abort-marker", "offsets": {"txn": {"0": 13}}},
            {"group_id": "on-last-marker", "offsets": {"txn": {"0": 18}}},
            {"group_id": "at-end", "offsets": {"txn": {"0": 19}}}
        ]
    })
}

fn start() -> Served {
    Served::start(&cluster())
}

/// `kdp lag -o json ARGS`: exit status and rows by group.
fn lag(m: &Served, args: &[&str]) -> (i32, std::collections::BTreeMap<String, Value>) {
    let (code, doc, _) = m.json(&["lag"], args);
    let rows = doc["Lag"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["Group"].as_str().unwrap().to_string(), r.clone()))
        .collect();
    (code, rows)
}

#[test]
fn markers_and_aborted_records_are_not_lag_and_a_budget_gives_bounds() {
    let m = start();
    let (code, rows) = lag(&m, &[]);
    assert_eq!(code, 4, "groups are lagging");
    let records = |g: &str| rows[g]["Records"].clone();
    assert_eq!(records("from-start"), 13);
    // C inside a batch: its records' offsets are read (5 - 2 = 3 of it)
    assert_eq!(records("inside-idem"), 11);
    assert_eq!(records("on-abort-marker"), 4);
    assert_eq!(records("on-last-marker"), 0);
    assert_eq!(rows["on-last-marker"]["OffsetLag"], 1);
    assert_eq!(rows["on-last-marker"]["Verdict"], "caught_up");
    assert_eq!(rows["at-end"]["Verdict"], "caught_up");
    assert_eq!(rows["from-start"]["OffsetLag"], 19);
    assert_eq!(rows["from-start"]["Verdict"], "lagging");

    // one byte of budget: the first batch only (a broker returns it whole)
    let (code, rows) = lag(&m, &["--max-bytes-per-partition", "1"]);
    let from_start = &rows["from-start"];
    assert!(from_start["Records"].is_null(), "{from_start}");
    assert_eq!(from_start["RecordsAtLeast"], 5);
    assert_eq!(from_start["RecordsAtMost"], 5 + 14);
    // nothing read past 5 for a group at 13: at most one per offset
    let on_abort = &rows["on-abort-marker"];
    assert_eq!(
        (
            on_abort["RecordsAtLeast"].as_i64(),
            on_abort["RecordsAtMost"].as_i64()
        ),
        (Some(0), Some(6))
    );
    assert_eq!(on_abort["Verdict"], "maybe_lagging");
    // a group known to lag decides the status
    assert_eq!(code, 4);

    // the groups that are caught up alone, with a budget too small: an
    // at-end group needs no read, so the answer is complete
    let (code, rows) = lag(
        &m,
        &[
            "--group",
            "at-end",
            "--group",
            "on-last-marker",
            "--max-bytes-per-partition",
            "1",
        ],
    );
    assert_eq!(rows.len(), 2);
    // on-last-marker's read starts at 18: one batch, the marker, whole
    assert_eq!(rows["on-last-marker"]["Records"], 0);
    assert_eq!(code, 0);

    // undecided and nothing found: partial, never 0
    let (code, _) = lag(
        &m,
        &[
            "--group",
            "on-abort-marker",
            "--max-bytes-per-partition",
            "1",
        ],
    );
    assert_eq!(code, 1, "between 0 and 5 records: undecided");
}

#[test]
fn read_uncommitted_groups_count_aborted_records_never_markers() {
    let m = start();
    let (code, rows) = lag(&m, &["--isolation-level", "read_uncommitted"]);
    assert_eq!(code, 4, "groups are lagging");
    // 16 data records of 19 offsets: the aborted 3 are delivered too
    for (g, n) in [
        ("from-start", 16),
        ("inside-idem", 14),
        ("on-abort-marker", 4),
        ("on-last-marker", 0),
        ("at-end", 0),
    ] {
        assert_eq!(rows[g]["Records"], n, "{g}: {}", rows[g]);
        assert_eq!(rows[g]["Isolation"], "read_uncommitted", "{g}");
        assert_eq!(rows[g]["HeldBack"], 0, "{g}");
    }
    assert_eq!(rows["on-last-marker"]["Verdict"], "caught_up");
    // one group read otherwise than the rest
    let (_, rows) = lag(
        &m,
        &["--group-isolation-level", "from-start=read_uncommitted"],
    );
    assert_eq!(rows["from-start"]["Records"], 16);
    assert_eq!(rows["from-start"]["Isolation"], "read_uncommitted");
    assert_eq!(rows["inside-idem"]["Records"], 11);
    assert_eq!(rows["inside-idem"]["Isolation"], "read_committed");
    // a budget cuts the read_uncommitted count into bounds as well
    let (_, rows) = lag(
        &m,
        &[
            "--isolation-level",
            "read_uncommitted",
            "--max-bytes-per-partition",
            "1",
        ],
    );
    let r = &rows["from-start"];
    assert!(r["Records"].is_null(), "{r}");
    assert_eq!(
        (r["RecordsAtLeast"].as_i64(), r["RecordsAtMost"].as_i64()),
        (Some(5), Some(19))
    );
    // a level Kafka does not know is bad usage
    let (code, _, stderr) = m.run(&["lag"], &["--group-isolation-level", "g=read_everything"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("read_committed or read_uncommitted"),
        "{stderr}"
    );
}

#[test]
fn the_lag_demo_shows_a_caught_up_group_kafkas_tool_calls_lagging() {
    let out = Command::new(KDP)
        .args(["demo", "--lag", "-o", "json"])
        .output()
        .expect("kdp demo --lag");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(common::schema::violations("lag", false, &doc), None);
    let rows = doc["Lag"].as_array().unwrap();
    let row = |g: &str, p: i64| {
        rows.iter()
            .find(|r| r["Group"] == g && r["Partition"] == p)
            .unwrap_or_else(|| panic!("{g}-{p} in {doc}"))
    };
    let idle = row("settlement", 0);
    assert_eq!(
        (idle["OffsetLag"].as_i64(), idle["Records"].as_i64()),
        (Some(1), Some(0))
    );
    assert_eq!(idle["Verdict"], "caught_up");
    let held = row("settlement", 1);
    assert_eq!(held["Verdict"], "held_back");
    assert_eq!(held["HoldingTransactionalId"], "transfers-writer");
    let behind = row("reconciler", 0);
    assert_eq!(
        (behind["OffsetLag"].as_i64(), behind["Records"].as_i64()),
        (Some(17), Some(11))
    );
    // a read_committed share group from offset 9: the 2 committed records
    // of [9, 17), at most (above its start offset some may be
    // acknowledged); the mock reports no Lag of its own
    let share = row("payouts", 0);
    assert_eq!(share["GroupType"], "share");
    assert_eq!(share["Isolation"], "read_committed");
    assert_eq!(share["ShareStartOffset"], 9);
    assert_eq!(share["CommittedOffset"], Value::Null);
    assert_eq!(share["OffsetLag"], Value::Null);
    assert_eq!(share["KafkaLag"], Value::Null);
    assert_eq!(
        (
            &share["Records"],
            &share["RecordsAtLeast"],
            &share["RecordsAtMost"]
        ),
        (&Value::Null, &json!(0), &json!(2))
    );
    assert_eq!(share["Verdict"], "maybe_lagging");
    let waiting = row("payouts", 1);
    assert_eq!(
        (&waiting["HeldBack"], &waiting["HoldingTransactionalId"]),
        (&json!(3), &json!("transfers-writer"))
    );
    assert_eq!(out.status.code(), Some(4));
}

/// JSON and JSON lines are read in waves of topics
/// (`--committed-offsets-per-wave`): cut into a wave per topic they give
/// the rows, exit status and gaps of one wave, and the JSON document
/// holds the JSON lines' rows; so does the table, and its closing line
/// counts the positions and groups once.
#[test]
fn waves_of_topics_print_the_rows_of_one_read() {
    let mut c = cluster();
    let plain = |name: &str, records: i64| {
        json!({"name": name, "partitions": [
            {"partition": 0, "leader": 1, "replicas": [1], "batches": [{"records": records}]},
            {"partition": 1, "leader": 1, "replicas": [1], "batches": [{"records": records}]}]})
    };
    let topics = c["topics"].as_array_mut().unwrap();
    topics.push(plain("audit", 7));
    topics.push(plain("zeta", 3));
    let groups = c["groups"].as_array_mut().unwrap();
    groups.push(json!({"group_id": "spans", "offsets": {"audit": {"0": 2, "1": 7}, "txn": {"0": 5}, "zeta": {"1": 0}}}));
    groups.push(json!({"group_id": "nothing-yet", "offsets": {}}));
    let m = Served::start(&c);
    let lines = |per_wave: &str| {
        let (code, out, err) = m.run(
            &["lag"],
            &["--committed-offsets-per-wave", per_wave, "-o", "jsonl"],
        );
        let mut rows: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        rows.sort_by_key(|r| r.to_string());
        (code, rows, err)
    };
    let (code, one, err) = lines("0");
    assert_eq!(one.len(), 9, "{one:?}");
    // three offsets a wave: audit | txn (5 offsets, alone) | zeta
    for per_wave in ["1", "3"] {
        assert_eq!(
            lines(per_wave),
            (code, one.clone(), err.clone()),
            "{per_wave}"
        );
    }
    let (json_code, doc, _) = m.json(&["lag"], &["--committed-offsets-per-wave", "1"]);
    let mut rows = doc["Lag"].as_array().unwrap().clone();
    rows.sort_by_key(|r| r.to_string());
    assert_eq!((json_code, rows), (code, one.clone()));
    assert_eq!(common::schema::violations("lag", false, &doc), None);
    // the table too: each line's cells as with one wave (a later wave may
    // widen a column, so the spacing is not compared), and the same count
    let table = |per_wave: &str| {
        // the ages (TxnAge, OldestAge) change between runs
        let columns = "Group,Topic,Partition,Committed,LSO,HWM,OffsetLag,KafkaLag,Records,HeldBack,HeldBy,Verdict";
        let (code, out, err) = m.run(
            &["lag"],
            &[
                "--committed-offsets-per-wave",
                per_wave,
                "--columns",
                columns,
            ],
        );
        let mut lines: Vec<String> = out
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect();
        lines.sort();
        let positions = err
            .lines()
            .find(|l| l.contains("position(s) of"))
            .and_then(|l| l.split(';').next())
            .map(str::to_string);
        (code, lines, positions)
    };
    let (table_code, whole, positions) = table("0");
    assert_eq!(table_code, code);
    // a header and a line per row
    assert_eq!(whole.len(), one.len() + 1, "{whole:?}");
    assert_eq!(
        positions.as_deref(),
        Some("kdp: 9 position(s) of 7 group(s)")
    );
    for per_wave in ["1", "3"] {
        assert_eq!(
            table(per_wave),
            (code, whole.clone(), positions.clone()),
            "{per_wave}"
        );
    }
    // an unknown column is bad usage, said before the cluster is read
    let (bad, out, err) = m.run(&["lag"], &["--columns", "Group,Nope"]);
    assert_eq!((bad, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("this table has no column \"Nope\""), "{err}");
    assert!(!err.contains("position(s)"), "{err}");
}
