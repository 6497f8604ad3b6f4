//! `kdp blocked` against the demo cluster served by `kdp mock-broker`: the
//! groups around payments-0's LSO (pinned by the demo's hanging
//! transaction) get every verdict, the blocked row ends with the repair
//! `find-hanging --repair` would plan, and the exit status is 4.

use std::process::Command;

use serde_json::Value;

mod common;
mod mock_broker;
use mock_broker::Served;

const KDP: &str = env!("CARGO_BIN_EXE_kdp");

/// The demo cluster, with `edit` applied to its JSON first.
fn demo(edit: impl FnOnce(&mut Value)) -> Served {
    Served::demo(&[], edit)
}

/// `kdp blocked --bootstrap-server B ARGS`: exit status, stdout, stderr.
fn run(d: &Served, args: &[&str]) -> (i32, String, String) {
    d.run(&["blocked"], args)
}

fn json(d: &Served, args: &[&str]) -> (i32, Vec<Value>) {
    let mut all = args.to_vec();
    all.extend(["--output", "json"]);
    let (code, stdout, stderr) = run(d, &all);
    let doc: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: stdout {stdout:?} stderr {stderr}"));
    let rows = doc["Blocked"].as_array().cloned().unwrap_or_default();
    (code, rows)
}

fn of<'a>(rows: &'a [Value], topic: &str, partition: i64, group: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["Topic"] == topic && r["Partition"] == partition && r["Group"] == group)
        .unwrap_or_else(|| panic!("no {topic}-{partition} {group} in {rows:?}"))
}

#[test]
fn every_verdict_on_the_partition_the_hanging_transaction_pins() {
    let d = demo(|_| {});
    let (code, rows) = json(&d, &[]);
    assert_eq!(code, 4, "a group is blocked: exit 4");
    let row = |g| of(&rows, "payments", 0, g);
    let verdict = |g| row(g)["Verdict"].as_str().unwrap().to_string();
    assert_eq!(verdict("payments-ledger"), "blocked");
    assert_eq!(verdict("payments-audit"), "lagging");
    assert_eq!(verdict("payments-reporting"), "past the LSO");
    // The empty group shows its state: nobody waits behind its old offset.
    assert_eq!(verdict("payments-archive"), "lagging");
    assert_eq!(row("payments-archive")["GroupState"], "Empty");
    let ledger = row("payments-ledger");
    assert_eq!(ledger["CommittedOffset"], ledger["LastStableOffset"]);
    assert_eq!(ledger["HeldBack"], 78);
    assert_eq!(ledger["ProducerId"], 7003);
    // No coordinator lists 7003, and the demo's principal may not describe
    // every id: find-hanging --repair leaves it to a manual abort by start
    // offset, and cannot tell when (if ever) a coordinator aborts it.
    let unblock = ledger["Unblock"].as_str().unwrap();
    assert!(
        unblock.starts_with("kdp abort --bootstrap-server ")
            && unblock.ends_with("--topic payments --partition 0 --start-offset 40112"),
        "{unblock}"
    );
    assert!(ledger["AutoAbort"].is_null(), "{ledger}");
    // Only the blocked row carries the command.
    assert!(row("payments-audit")["Unblock"].is_null());
    // Members, from DescribeGroups (classic) and ConsumerGroupDescribe
    // (payments-audit is a KIP-848 consumer group).
    let members = |g| (row(g)["GroupType"].clone(), row(g)["Members"].clone());
    assert_eq!(members("payments-ledger"), ("classic".into(), 1.into()));
    assert_eq!(members("payments-audit"), ("consumer".into(), 1.into()));
    assert_eq!(members("payments-archive"), ("classic".into(), 0.into()));
    // payments-2: payments-app's transaction is live (its producer wrote
    // some 40 s ago, within --blocked-after's minute): the caught-up
    // ledger group waits on it, and nothing suggests fencing the producer.
    let p2 = of(&rows, "payments", 2, "payments-ledger");
    assert_eq!(p2["Verdict"], "waiting");
    assert_eq!(p2["TransactionalId"], "payments-app");
    assert_eq!(p2["CoordinatorState"], "Ongoing");
    assert_eq!(p2["Unblock"], "wait");
    assert!(p2["AutoAbort"].as_str().unwrap().ends_with('Z'), "{p2}");
    let idle = p2["ProducerIdleMs"].as_i64().unwrap();
    assert!((30_000..60_000).contains(&idle), "{p2}");
}

#[test]
fn blocked_after_decides_when_a_group_at_the_lso_of_a_live_transaction_is_blocked() {
    let d = demo(|_| {});
    // 0: every group at the LSO is blocked; the coordinator tracks
    // payments-app and would abort it at AutoAbort; force-terminate ends it now.
    let (code, rows) = json(&d, &["--topic", "payments", "--blocked-after", "0"]);
    assert_eq!(code, 4);
    let p2 = of(&rows, "payments", 2, "payments-ledger");
    assert_eq!(p2["Verdict"], "blocked");
    let unblock = p2["Unblock"].as_str().unwrap();
    assert!(
        unblock.starts_with("kdp force-terminate --bootstrap-server ")
            && unblock.ends_with(" --transactional-id payments-app"),
        "{unblock}"
    );
    // An hour: the 3-hour-idle producer of payments-0 still blocks.
    let (code, rows) = json(&d, &["--topic", "payments", "--blocked-after", "1h"]);
    assert_eq!(code, 4);
    assert_eq!(
        of(&rows, "payments", 0, "payments-ledger")["Verdict"],
        "blocked"
    );
    assert_eq!(
        of(&rows, "payments", 2, "payments-ledger")["Verdict"],
        "waiting"
    );
    // Only waiting: exit 0, and the table's summary says why.
    let d = demo(|doc| {
        // payments-0's group moves past the hanging transaction's LSO
        doc["groups"][0]["offsets"]["payments"]["0"] = 40113.into();
    });
    let (code, _, stderr) = run(&d, &["--group", "payments-ledger"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(
            "nothing blocked for payments-ledger: 1 group(s) at the LSO of a live transaction"
        ),
        "{stderr}"
    );
}

#[test]
fn group_and_topic_narrow_it_and_nothing_blocked_exits_0() {
    let d = demo(|_| {});
    let (code, rows) = json(&d, &["--group", "payments-audit", "--topic", "payments"]);
    assert_eq!(code, 0, "payments-audit only lags: {rows:?}");
    let groups: Vec<(&str, i64, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["Group"].as_str().unwrap(),
                r["Partition"].as_i64().unwrap(),
                r["Verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        groups,
        vec![
            ("payments-audit", 0, "lagging"),
            ("payments-audit", 2, "lagging")
        ]
    );
    // JSON lines: one object per row.
    let (code, stdout, _) = run(&d, &["--group", "payments-ledger", "--output", "jsonl"]);
    assert_eq!(code, 4);
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert!(lines.iter().all(|l| l["Group"] == "payments-ledger"));
}

#[test]
fn a_group_the_user_may_not_describe_is_left_out_and_never_all_clear() {
    // Hidden from the listing, payments-ledger is not diagnosed at all...
    let d = demo(|doc| {
        doc["acls"]["group_describe_deny"] = serde_json::json!(["payments-ledger"]);
    });
    let (code, rows) = json(&d, &["--topic", "payments"]);
    assert!(
        rows.iter().all(|r| r["Group"] != "payments-ledger"),
        "{rows:?}"
    );
    assert_eq!(code, 0, "the others lag or read past the LSO");
    // ...and named, its refused offsets are an error, not an all-clear...
    let (code, _, stderr) = run(&d, &["--group", "payments-ledger"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("GROUP_AUTHORIZATION_FAILED"), "{stderr}");
    // ...and a row of the output, not only a line on stderr.
    let (code, rows) = json(&d, &["--group", "payments-ledger"]);
    assert_eq!(code, 1);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let r = &rows[0];
    assert_eq!(r["Group"], "payments-ledger");
    assert_eq!(r["Verdict"], "unknown");
    assert_eq!(r["Error"], "GROUP_AUTHORIZATION_FAILED");
    assert!(r["Topic"].is_null() && r["Partition"].is_null(), "{r}");
    // The table's summary never reads as an all-clear for it.
    let (code, stdout, stderr) = run(&d, &["--group", "payments-ledger", "--output", "table"]);
    assert_eq!(code, 1);
    assert!(stdout.contains("GROUP_AUTHORIZATION_FAILED"), "{stdout}");
    assert!(!stderr.contains("no pinned partition"), "{stderr}");
    assert!(
        stderr.contains(
            "no blocked group found, but the answer is partial; not checked: 1 group(s) not read"
        ),
        "{stderr}"
    );
}

#[test]
fn a_named_group_nobody_knows_is_a_row_and_never_all_clear() {
    let d = demo(|_| {});
    let (code, rows) = json(&d, &["--group", "payments-ledgr"]);
    assert_eq!(code, 1, "{rows:?}");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["Group"], "payments-ledgr");
    assert_eq!(rows[0]["Verdict"], "unknown");
    assert_eq!(rows[0]["Error"], "GROUP_ID_NOT_FOUND");
    let (code, _, stderr) = run(&d, &["--group", "payments-ledgr", "--output", "table"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("is the id right?"), "{stderr}");
    assert!(!stderr.contains("no pinned partition"), "{stderr}");
}

#[test]
fn a_group_on_no_pinned_partition_says_so_for_that_group() {
    // payments-reporting reads only inventory here, where nothing is open
    let d = demo(|doc| {
        doc["groups"][2]["offsets"] = serde_json::json!({"inventory": {"1": 5}});
    });
    let (code, stdout, stderr) = run(&d, &["--group", "payments-reporting"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains(
            "nothing blocked for payments-reporting: no committed offset on a pinned partition"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("no pinned partition in"), "{stderr}");
    // Named, and reading the pinned topic elsewhere: `no offset` on each
    // pinned partition of it, so a missing commit is not silence.
    let d = demo(|doc| {
        doc["groups"][2]["offsets"] = serde_json::json!({"payments": {"1": 5}});
    });
    let (code, rows) = json(&d, &["--group", "payments-reporting"]);
    assert_eq!(code, 0, "{rows:?}");
    let got: Vec<(i64, &str)> = rows
        .iter()
        .map(|r| {
            (
                r["Partition"].as_i64().unwrap(),
                r["Verdict"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, vec![(0, "no offset"), (2, "no offset")]);
}

#[test]
fn a_listing_that_acls_may_have_cut_short_is_never_all_clear() {
    // An ALLOW-only principal (no wildcard): Kafka lists only the groups its
    // ACLs name, so nothing on the output shows what was left out.
    let d = demo(|doc| {
        doc["acls"]["group_describe_allow"] = serde_json::json!(["payments-a*", "payments-r*"]);
    });
    let (code, rows) = json(&d, &["--topic", "payments"]);
    let groups: std::collections::BTreeSet<&str> =
        rows.iter().filter_map(|r| r["Group"].as_str()).collect();
    assert_eq!(
        groups,
        ["payments-archive", "payments-audit", "payments-reporting"].into(),
        "{rows:?}"
    );
    // None of them is blocked, yet the answer is not clear: the probe for an
    // unused group id was refused, so the listing may have hidden groups.
    assert_eq!(code, 1);
    let (code, _, stderr) = run(&d, &["--topic", "payments"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("the group listing may leave out groups")
            && stderr.contains("--operation Describe --group '*'"),
        "{stderr}"
    );
    // With every group visible the same scan names the blocked one.
    let all = demo(|doc| {
        doc["acls"]["group_describe_allow"] = serde_json::json!(["*"]);
    });
    let (code, _, stderr) = run(&all, &["--topic", "payments"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(!stderr.contains("may leave out"), "{stderr}");
}

/// `kdp COMMAND --bootstrap-server B ARGS --output json` on the demo.
fn other(d: &Served, command: &[&str], args: &[&str]) -> (i32, Value, String) {
    d.json(command, args)
}

/// Each producer of describe --with-transactions' document, as
/// (topic, partition, producer id, BlockedGroups).
fn producers_groups(doc: &Value) -> Vec<(String, i64, i64, Value)> {
    let mut out = Vec::new();
    for t in doc["Topics"].as_array().unwrap() {
        for p in t["Partitions"].as_array().unwrap() {
            for pr in p["ActiveProducers"].as_array().unwrap() {
                out.push((
                    t["Name"].as_str().unwrap().to_string(),
                    p["PartitionIndex"].as_i64().unwrap(),
                    pr["ProducerId"].as_i64().unwrap(),
                    pr["BlockedGroups"].clone(),
                ));
            }
        }
    }
    out
}

#[test]
fn find_hanging_and_describe_name_the_groups_each_transaction_blocks() {
    let d = demo(|_| {});
    // find-hanging: 7003's unknown transaction holds payments-0's LSO, where
    // payments-ledger is committed (payments-archive lags behind it)
    let (code, doc, stderr) = other(&d, &["find-hanging"], &[]);
    assert_eq!(code, 4, "{stderr}");
    let rows = doc["Transactions"].as_array().unwrap();
    let of = |topic: &str, pid: i64| {
        rows.iter()
            .find(|r| r["Topic"] == topic && r["ProducerId"] == pid)
            .unwrap_or_else(|| panic!("{topic} {pid} in {rows:?}"))["BlockedGroups"]
            .clone()
    };
    assert_eq!(of("payments", 7003), serde_json::json!(["payments-ledger"]));
    // a hanging transaction on a topic no group reads blocks none (not null)
    assert_eq!(of("ledger", 8001), serde_json::json!([]));
    // the table counts them
    let out = Command::new(KDP)
        .args(["find-hanging", "--bootstrap-server", d.bootstrap()])
        .args(["--columns", "Topic,ProducerId,BlockedGroups"])
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines[0],
        ["Topic", "ProducerId", "BlockedGroups"],
        "{table}"
    );
    assert!(lines.contains(&vec!["payments", "7003", "1"]), "{table}");
    assert!(lines.contains(&vec!["ledger", "8001", "0"]), "{table}");

    // describe --with-transactions: every producer has the field; the live
    // payments-app transaction holds the caught-up group at payments-2's LSO
    let (code, doc, stderr) = other(&d, &["describe", "--with-transactions"], &[]);
    assert_eq!(code, 0, "{stderr}");
    let all = producers_groups(&doc);
    let held: Vec<_> = all
        .iter()
        .filter(|(_, _, _, g)| g.as_array().is_none_or(|a| !a.is_empty()))
        .map(|(t, p, pid, g)| (t.as_str(), *p, *pid, g.clone()))
        .collect();
    assert_eq!(
        held,
        vec![
            ("payments", 0, 7003, serde_json::json!(["payments-ledger"])),
            ("payments", 2, 7004, serde_json::json!(["payments-ledger"])),
        ]
    );
}

#[test]
fn a_group_listing_acls_may_cut_short_leaves_the_column_unknown_never_zero() {
    let d = demo(|doc| {
        doc["acls"]["group_describe_allow"] = serde_json::json!(["payments-a*"]);
    });
    // every candidate holds a pinned LSO: none of them can say 0
    let (_, doc, stderr) = other(&d, &["find-hanging"], &[]);
    let rows = doc["Transactions"].as_array().unwrap();
    assert!(!rows.is_empty());
    for r in rows {
        assert!(r["BlockedGroups"].is_null(), "{r}");
    }
    assert!(
        stderr.contains("BlockedGroups unknown ('-')") && stderr.contains("ACLs may hide groups"),
        "{stderr}"
    );
    // a producer with no open transaction still blocks nothing, known
    let (_, doc, _) = other(&d, &["describe", "--with-transactions"], &[]);
    let all = producers_groups(&doc);
    let idle = all
        .iter()
        .find(|(t, p, pid, _)| t == "payments" && *p == 0 && *pid == 7004)
        .unwrap();
    assert_eq!(idle.3, serde_json::json!([]));
    let held = all
        .iter()
        .find(|(t, p, pid, _)| t == "payments" && *p == 0 && *pid == 7003)
        .unwrap();
    assert!(held.3.is_null(), "{held:?}");
}
