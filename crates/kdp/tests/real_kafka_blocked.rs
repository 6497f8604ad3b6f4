//! `kdp blocked` against a real cluster of either generation, with real Java
//! consumers (it/'s Scenario group-consume): behind a producer killed inside
//! a transaction (timeout one hour), a read_committed group waits at the LSO,
//! a read_uncommitted group reads past it, one group lags, and groups without
//! members keep old offsets. Committed offsets, high watermarks and lag are
//! compared with Kafka's own `kafka-consumer-groups.sh --describe`
//! (ConsumerGroupCommand of the cluster's version) field by field, the LSO
//! with Admin.listOffsets under READ_COMMITTED (Scenario offsets), member
//! counts with the tool's `--state`. The transaction is fresh, so with an
//! hour's `--blocked-after` the groups at its LSO are `waiting` (exit 0,
//! nothing suggested); with 0 they are `blocked`. `find-hanging` and
//! `describe --with-transactions` name the groups it holds. Then the
//! command `kdp blocked` suggests is run, the same live consumer reads past
//! the old LSO and commits, and `kdp blocked` exits 0. On 4.x the same for a
//! consumer-protocol (KIP-848) group. Run with scripts/test.sh.

mod common;

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use common::*;
use serde_json::Value;

fn i(v: &Value, k: &str) -> i64 {
    v[k].as_i64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

/// `(high watermark, last stable offset)` of partition 0, from Kafka's Admin
/// (listOffsets latest, READ_UNCOMMITTED and READ_COMMITTED).
fn offsets(env: &Env, topic: &str) -> (i64, i64) {
    let o = scenario(env, "offsets", &["--topic", topic, "--partition", "0"]);
    (i(&o, "highWatermark"), i(&o, "lastStableOffset"))
}

/// The committed offset of partition 0 in a group-consume line.
fn committed(line: &Value) -> i64 {
    let p = &line["partitions"][0];
    assert_eq!(p["partition"], 0, "{line}");
    i(p, "committed")
}

/// A member of `group` that stays in it (Scenario group-consume --hold-file):
/// it has read and committed; once resumed it reads to the end again,
/// commits, and prints a second line.
fn member(env: &Env, topic: &str, group: &str, extra: &[&str]) -> (Held, Value) {
    let mut args = vec!["--topic", topic, "--group", group];
    args.extend_from_slice(extra);
    let (m, first) = Held::start(env, "group-consume", 400, &args, "--hold-file", group);
    assert_eq!(first["holding"], true, "{first}");
    (m, first)
}

/// A member of `group` reads, commits and leaves (the group is Empty after).
fn consume_and_leave(env: &Env, topic: &str, group: &str, extra: &[&str]) -> Value {
    let mut args = vec!["--topic", topic, "--group", group];
    args.extend_from_slice(extra);
    scenario(env, "group-consume", &args)
}

/// `kdp blocked --bootstrap-server B --timeout 40s ARGS --output json`: the
/// exit status and the rows.
fn blocked(env: &Env, args: &[&str]) -> (i32, Vec<Value>, String) {
    let mut all = vec![
        "blocked",
        "--bootstrap-server",
        env.bootstrap.as_str(),
        "--timeout",
        "40s",
    ];
    all.extend_from_slice(args);
    all.extend(["--output", "json"]);
    let r = kdp(&all);
    let doc: Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("{e}: stdout {:?} stderr {}", r.stdout, r.stderr));
    let rows = doc["Blocked"].as_array().cloned().unwrap_or_default();
    (r.code, rows, r.stderr)
}

fn row<'a>(rows: &'a [Value], group: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["Group"] == group)
        .unwrap_or_else(|| panic!("no row for {group} in {rows:#?}"))
}

/// Kafka's `kafka-consumer-groups.sh --describe --group G [more]`
/// (ConsumerGroupCommand of the cluster's version, in kafka-tools in 3.9 and
/// 4.x alike): its table, one map from header to cell per row.
fn consumer_groups(env: &Env, group: &str, more: &[&str]) -> Vec<BTreeMap<String, String>> {
    let r = run(
        Command::new(&env.java)
            .args([
                "-cp",
                &env.classpath,
                "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
                "--bootstrap-server",
                &env.bootstrap,
                "--describe",
                "--group",
                group,
            ])
            .args(more),
        Duration::from_secs(120),
    );
    assert_eq!(r.code, 0, "ConsumerGroupCommand failed:\n{}", r.stderr);
    // The table follows a blank line (and, for a group without members, a
    // sentence saying so); cells are separated by runs of spaces.
    let mut lines = r
        .stdout
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("GROUP"));
    let header: Vec<String> = lines
        .next()
        .unwrap_or_else(|| panic!("no table:\n{}", r.stdout))
        .split_whitespace()
        .map(str::to_string)
        .collect();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let cells: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(cells.len(), header.len(), "{l:?} under {header:?}");
            header
                .iter()
                .cloned()
                .zip(cells.iter().map(|c| c.to_string()))
                .collect()
        })
        .collect()
}

/// The STATE and #MEMBERS of `kafka-consumer-groups.sh --describe --group G
/// --state`. Its row ends `... STATE #MEMBERS`; earlier cells may be empty
/// (3.9 prints no ASSIGNMENT-STRATEGY for an Empty group) or contain a space
/// (the coordinator), so they are read from the end.
fn tool_state(env: &Env, group: &str) -> (String, i64) {
    let r = run(
        Command::new(&env.java).args([
            "-cp",
            &env.classpath,
            "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
            "--bootstrap-server",
            &env.bootstrap,
            "--describe",
            "--state",
            "--group",
            group,
        ]),
        Duration::from_secs(120),
    );
    assert_eq!(r.code, 0, "ConsumerGroupCommand failed:\n{}", r.stderr);
    let line = r
        .stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(group))
        .unwrap_or_else(|| panic!("no row for {group}:\n{}", r.stdout));
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert!(cells.len() >= 3, "{line:?}");
    let members = cells[cells.len() - 1]
        .parse()
        .unwrap_or_else(|e| panic!("#MEMBERS of {line:?}: {e}"));
    (cells[cells.len() - 2].to_string(), members)
}

/// kdp's row of `group` on `topic`-0 against Kafka's tool, field by field:
/// the committed offset, the log end offset (the high watermark, which the
/// tool's LAG is measured against) and that lag; and the group's state and
/// member count (kdp's from DescribeGroups or ConsumerGroupDescribe).
fn assert_matches_the_tool(env: &Env, topic: &str, group: &str, kdp_row: &Value) {
    let rows = consumer_groups(env, group, &[]);
    let tool = rows
        .iter()
        .find(|r| r["TOPIC"] == topic && r["PARTITION"] == "0")
        .unwrap_or_else(|| panic!("{group}: no {topic}-0 in {rows:?}"));
    let num = |k: &str| -> i64 {
        tool[k]
            .parse()
            .unwrap_or_else(|e| panic!("{group} {k} {:?}: {e}", tool[k]))
    };
    let hw = i(kdp_row, "HighWatermark");
    let at = i(kdp_row, "CommittedOffset");
    assert_eq!(num("CURRENT-OFFSET"), at, "{group}: {tool:?} vs {kdp_row}");
    assert_eq!(num("LOG-END-OFFSET"), hw, "{group}: {tool:?} vs {kdp_row}");
    assert_eq!(num("LAG"), hw - at, "{group}: {tool:?} vs {kdp_row}");
    let (state, members) = tool_state(env, group);
    assert_eq!(
        kdp_row["GroupState"].as_str(),
        Some(state.as_str()),
        "{group}: {kdp_row}"
    );
    assert_eq!(
        kdp_row["Members"].as_i64(),
        Some(members),
        "{group}: {kdp_row}"
    );
}

/// A topic with 4 committed records (0-3), then a producer killed inside a
/// transaction of 5 (4-8, timeout one hour), then 3 more committed records
/// (9-11): LSO 4, high watermark 12. Returns the transaction's line.
fn pinned_topic(env: &Env, topic: &str, tid: &str, before: impl FnOnce()) -> Value {
    create_topic(env, topic, 1);
    let tp = ["--topic", topic, "--partition", "0"];
    scenario(env, "idempotent", &[&tp[..], &["--records", "4"]].concat());
    before();
    let open = open_txn(env, topic, 0, tid, 5);
    assert_eq!(i(&open, "baseOffset"), 4, "{open}");
    scenario(env, "idempotent", &[&tp[..], &["--records", "3"]].concat());
    assert_eq!(
        offsets(env, topic),
        (12, 4),
        "the open transaction holds the LSO at its first offset"
    );
    open
}

#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn each_group_gets_its_verdict_behind_a_killed_producers_transaction() {
    let env = env();
    let topic = unique("kdp-bl-verdicts");
    let tid = unique("kdp-bl-verdicts-tx");
    let g = |s: &str| format!("{topic}-{s}");
    let (live, reader, lagging, empty_old, empty_lso) = (
        g("live"),
        g("uncommitted"),
        g("lagging"),
        g("old"),
        g("idle"),
    );
    // committed at 2 before the transaction began, and gone since
    let open = pinned_topic(&env, &topic, &tid, || {
        let old = consume_and_leave(&env, &topic, &empty_old, &["--until-offset", "2"]);
        assert_eq!(committed(&old), 2);
    });
    let (_live, l) = member(&env, &topic, &live, &[]);
    assert_eq!(committed(&l), 4, "read_committed stops at the LSO: {l}");
    let (_reader, r) = member(&env, &topic, &reader, &["--isolation", "read_uncommitted"]);
    assert_eq!(committed(&r), 12, "read_uncommitted reads to the end: {r}");
    let (_lagging, lg) = member(&env, &topic, &lagging, &["--until-offset", "3"]);
    assert_eq!(committed(&lg), 3);
    let idle = consume_and_leave(&env, &topic, &empty_lso, &[]);
    assert_eq!(committed(&idle), 4);

    // The producer wrote its transaction moments ago: with an hour's
    // --blocked-after it is a live transaction, the groups at its LSO wait
    // on it, nothing is blocked and nothing would fence the producer.
    let (code, rows, stderr) = blocked(&env, &["--topic", &topic, "--blocked-after", "1h"]);
    assert_eq!(code, 0, "only waiting: {stderr}\n{rows:#?}");
    for g in [&live, &empty_lso] {
        assert_eq!(row(&rows, g)["Verdict"], "waiting", "{rows:#?}");
        assert_eq!(row(&rows, g)["Unblock"], "wait", "{rows:#?}");
    }
    let idle = i(row(&rows, &live), "ProducerIdleMs");
    assert!(idle >= 0, "{idle}");

    // With 0 every group at the LSO is blocked.
    let (code, rows, stderr) = blocked(&env, &["--topic", &topic, "--blocked-after", "0"]);
    assert_eq!(code, 4, "a group is blocked: {stderr}");
    assert_eq!(rows.len(), 5, "one row per group: {rows:#?}");
    let (hw, lso) = offsets(&env, &topic);
    for r in &rows {
        assert_eq!(
            (r["Topic"].as_str(), r["Partition"].as_i64()),
            (Some(topic.as_str()), Some(0))
        );
        assert_eq!(
            (i(r, "HighWatermark"), i(r, "LastStableOffset")),
            (hw, lso),
            "{r}"
        );
        assert_eq!(i(r, "HeldBack"), hw - lso);
        assert_eq!(r["TransactionalId"], tid.as_str(), "{r}");
        assert_eq!(r["ProducerId"], open["producerId"], "{r}");
        assert_eq!(r["CoordinatorState"], "Ongoing", "{r}");
        // the coordinator's own abort: start + the one-hour timeout
        assert!(
            r["AutoAbort"].as_str().is_some_and(|a| a.ends_with('Z')),
            "{r}"
        );
    }
    let verdict = |group: &str| {
        (
            row(&rows, group)["Verdict"].clone(),
            row(&rows, group)["GroupState"].clone(),
        )
    };
    assert_eq!(verdict(&live), ("blocked".into(), "Stable".into()));
    // members and protocol, from DescribeGroups
    for (g, members) in [
        (&live, 1),
        (&reader, 1),
        (&lagging, 1),
        (&empty_old, 0),
        (&empty_lso, 0),
    ] {
        assert_eq!(row(&rows, g)["Members"], members, "{}", row(&rows, g));
        assert_eq!(row(&rows, g)["GroupType"], "classic", "{}", row(&rows, g));
    }
    assert_eq!(verdict(&reader), ("past the LSO".into(), "Stable".into()));
    assert_eq!(verdict(&lagging), ("lagging".into(), "Stable".into()));
    assert_eq!(verdict(&empty_old), ("lagging".into(), "Empty".into()));
    // at the LSO but nobody is there: its state says so beside the verdict
    assert_eq!(verdict(&empty_lso), ("blocked".into(), "Empty".into()));
    // the blocked rows end with the repair; the others need none
    let force = format!(
        "kdp force-terminate --bootstrap-server {} --transactional-id {tid}",
        env.bootstrap
    );
    assert_eq!(row(&rows, &live)["Unblock"], force.as_str());
    assert_eq!(row(&rows, &empty_lso)["Unblock"], force.as_str());
    for g in [&reader, &lagging, &empty_old] {
        assert!(row(&rows, g)["Unblock"].is_null(), "{}", row(&rows, g));
    }
    for g in [&live, &reader, &lagging, &empty_old, &empty_lso] {
        assert_matches_the_tool(&env, &topic, g, row(&rows, g));
    }

    // find-hanging and describe --with-transactions name the groups the
    // transaction holds at its LSO (the live and the idle one), from the
    // same read of the groups as kdp blocked's
    let mut held = vec![live.clone(), empty_lso.clone()];
    held.sort();
    let r = kdp(&[
        "find-hanging",
        "--bootstrap-server",
        &env.bootstrap,
        "--topic",
        &topic,
        "--max-transaction-timeout",
        "0",
        "--all",
        "--output",
        "json",
    ]);
    let doc: Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout));
    let txns = doc["Transactions"].as_array().expect("rows");
    let ours = txns
        .iter()
        .find(|t| t["ProducerId"] == open["producerId"])
        .unwrap_or_else(|| panic!("{txns:#?}"));
    assert_eq!(ours["Verdict"], "ok", "its coordinator tracks it: {ours}");
    assert_eq!(ours["BlockedGroups"], serde_json::json!(held), "{ours}");
    let r = kdp(&[
        "describe",
        "--bootstrap-server",
        &env.bootstrap,
        "--topic",
        &topic,
        "--with-transactions",
        "--output",
        "json",
    ]);
    let doc: Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout));
    let producers = doc["Topics"][0]["Partitions"][0]["ActiveProducers"]
        .as_array()
        .expect("producers");
    assert!(producers.len() >= 2, "{producers:#?}");
    for p in producers {
        let want = if p["ProducerId"] == open["producerId"] {
            serde_json::json!(held)
        } else {
            serde_json::json!([])
        };
        assert_eq!(p["BlockedGroups"], want, "{p}");
    }

    // narrowed to one group that is not blocked: exit 0, its row still shown
    let (code, rows, stderr) = blocked(&env, &["--group", &lagging]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!(rows[0]["Verdict"], "lagging");
}

/// `kdp blocked` names `group` blocked behind a killed producer's open
/// transaction, its suggested command ends it, the same live member then
/// reads past the old LSO and commits, and `kdp blocked` exits 0.
fn blocked_then_released(env: &Env, prefix: &str, protocol: &str) {
    let topic = unique(prefix);
    let tid = format!("{topic}-tx");
    let group = format!("{topic}-g");
    let classic = format!("{topic}-classic");
    pinned_topic(env, &topic, &tid, || {});
    let (mut held, first) = member(env, &topic, &group, &["--protocol", protocol]);
    assert_eq!(first["protocol"], protocol);
    assert_eq!(committed(&first), 4, "{first}");
    // a classic group beside it on the same partition
    let (_beside, b) = member(env, &topic, &classic, &[]);
    assert_eq!(committed(&b), 4, "{b}");

    // live (an hour's --blocked-after): both wait, nothing is suggested
    let (code, rows, stderr) = blocked(env, &["--topic", &topic, "--blocked-after", "1h"]);
    assert_eq!(code, 0, "{stderr}\n{rows:#?}");
    for g in [&group, &classic] {
        assert_eq!(row(&rows, g)["Verdict"], "waiting", "{rows:#?}");
        assert_eq!(row(&rows, g)["Unblock"], "wait", "{rows:#?}");
    }
    let (code, rows, stderr) = blocked(env, &["--topic", &topic, "--blocked-after", "0"]);
    assert_eq!(code, 4, "{stderr}");
    for g in [&group, &classic] {
        let r = row(&rows, g);
        assert_eq!(r["Verdict"], "blocked", "{r}");
        assert_eq!(r["GroupState"], "Stable", "{r}");
        assert_eq!(r["Members"], 1, "{r}");
        assert_eq!(r["TransactionalId"], tid.as_str(), "{r}");
        assert_eq!(i(r, "CommittedOffset"), i(r, "LastStableOffset"), "{r}");
        assert_matches_the_tool(env, &topic, g, r);
    }
    assert_eq!(row(&rows, &group)["GroupType"], protocol, "{rows:#?}");
    assert_eq!(row(&rows, &classic)["GroupType"], "classic", "{rows:#?}");
    let (code, rows, stderr) = blocked(env, &["--group", &group, "--blocked-after", "0"]);
    assert_eq!(code, 4, "{stderr}");
    assert_eq!(rows.len(), 1, "{rows:#?}");
    let unblock = rows[0]["Unblock"]
        .as_str()
        .unwrap_or_else(|| panic!("no command: {}", rows[0]))
        .to_string();

    // the suggested command, as an operator pastes it (plain words: no quoting)
    let words: Vec<&str> = unblock.split(' ').collect();
    assert_eq!(words[..2], ["kdp", "force-terminate"], "{unblock}");
    let mut args = words[1..].to_vec();
    let audit = std::env::temp_dir().join(format!("kdp-audit-{topic}.jsonl"));
    let _ = std::fs::remove_file(&audit);
    let audit_arg = audit.display().to_string();
    args.extend(["--yes", "--audit-log", &audit_arg]);
    let before = offsets(env, &topic);
    let r = kdp(&args);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("unblocks 8 record(s)"), "{}", r.stdout);
    let report = format!("{}{}", r.stdout, r.stderr);
    assert!(
        report.contains(&format!("{topic}-0: LSO moved {} -> ", before.1)),
        "the report says the LSO moved: {report}"
    );
    // the coordinator writes the abort markers after it answers: wait for
    // the LSO to move (a bound on the polls, not on time)
    let (hw, lso) = (0..60)
        .map(|n| {
            if n > 0 {
                std::thread::sleep(Duration::from_millis(500));
            }
            offsets(env, &topic)
        })
        .find(|(hw, lso)| lso == hw)
        .unwrap_or_else(|| panic!("the LSO of {topic}-0 never moved off 4"));
    assert!(lso > 4 && hw >= 13, "the abort marker: hw {hw}");
    // the audit line: one action, the state before and after as Kafka's
    // Admin reads it, and the groups that can now advance
    let text = std::fs::read_to_string(&audit).expect("the audit log");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    let l = &lines[0];
    assert_eq!(l["Action"], "force-terminate", "{l}");
    assert_eq!(l["TransactionalId"], tid.as_str(), "{l}");
    assert_eq!(l["Result"], "done", "{l}");
    let p = &l["Partitions"][0];
    assert_eq!(p["Before"]["LastStableOffset"], before.1, "{l}");
    assert_eq!(p["Before"]["HighWatermark"], before.0, "{l}");
    // read when kdp saw the LSO move: at most what Admin reads now
    let (after_hw, after_lso) = (
        i(&p["After"], "HighWatermark"),
        i(&p["After"], "LastStableOffset"),
    );
    assert!(after_lso > before.1 && after_lso <= lso, "{l}");
    assert!(after_hw >= before.0 && after_hw <= hw, "{l}");
    assert_eq!(p["LsoChange"], "moved", "{l}");
    let advance = p["GroupsCanAdvance"].as_array().expect("groups");
    for g in [&group, &classic] {
        assert!(advance.iter().any(|a| a == g.as_str()), "{g}: {l}");
    }
    let _ = std::fs::remove_file(&audit);

    let after = held.resume("resumed");
    assert_eq!(after["memberId"], first["memberId"], "the same member");
    assert_eq!(committed(&after), lso, "it read past the old LSO: {after}");
    assert_eq!(
        i(&after, "records"),
        3,
        "the 3 committed records, not the 5 aborted"
    );
    let (code, rows, stderr) = blocked(env, &["--group", &group]);
    assert_eq!(code, 0, "released: {rows:#?}\n{stderr}");
    assert!(rows.is_empty(), "{rows:#?}");
    let (code, rows, stderr) = blocked(env, &["--topic", &topic]);
    assert_eq!(code, 0, "nothing is pinned: {rows:#?}\n{stderr}");
    assert!(rows.is_empty(), "{rows:#?}");
    let tool = consumer_groups(env, &group, &[]);
    assert_eq!(tool[0]["CURRENT-OFFSET"], lso.to_string(), "{tool:?}");
    assert_eq!(tool[0]["LAG"], "0", "{tool:?}");
}

#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn the_suggested_force_terminate_releases_a_classic_group() {
    blocked_then_released(&env(), "kdp-bl-classic", "classic");
}

#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn the_suggested_force_terminate_releases_a_consumer_protocol_group() {
    let env = env();
    // KIP-848's consumer protocol is Kafka 4.0's; 3.9 brokers do not serve it by default
    if env.kafka_version.starts_with("3.") {
        eprintln!(
            "Kafka {}: no consumer-protocol groups; this case is 4.x's",
            env.kafka_version
        );
        return;
    }
    blocked_then_released(&env, "kdp-bl-kip848", "consumer");
}
