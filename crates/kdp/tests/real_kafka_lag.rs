//! `kdp lag` against a real cluster of either generation, on the layouts
//! of it/'s LagScenario (docs/LAG.md): a partition with idempotent
//! records, committed and aborted transactions, interleaved producers and
//! a producer killed inside an open transaction; an idle transactional
//! partition whose group committed after its last record; a partition
//! whose log start moved past a group's offset; a partition of 1000 small
//! transactions from 16 producers. Groups are committed by Admin, by a
//! classic member and (4.x) by a KIP-848 consumer-protocol member. For
//! every group kdp's Records equal what a real read_committed
//! KafkaConsumer seeked to the committed offset receives up to the end
//! (LagScenario count), and its OffsetLag, high
//! watermark and committed offset equal `kafka-consumer-groups.sh
//! --describe` of the cluster's version. A budget too small for the 1000
//! transactions gives bounds around the consumer's count, never a figure
//! shown as exact. `kdp exporter --lag` publishes the same counts per
//! group and topic. Run with scripts/test.sh.

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// `LagScenario <sub> --bootstrap ... <args>`: its JSON lines.
fn lag_scenario(env: &Env, sub: &str, args: &[&str]) -> Vec<Value> {
    let r = run(
        Command::new(&env.java)
            .args([
                "-cp",
                &env.classpath,
                "dev.kdp.it.LagScenario",
                sub,
                "--bootstrap",
                &env.bootstrap,
                "--timeout-seconds",
                "240",
            ])
            .args(args),
        Duration::from_secs(300),
    );
    assert_eq!(
        r.code, 0,
        "LagScenario {sub} {args:?} failed:\n{}",
        r.stderr
    );
    r.stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn i(v: &Value, k: &str) -> i64 {
    v[k].as_i64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

/// A topic of one partition written with `plan`; the write's summary.
fn layout(env: &Env, topic: &str, plan: &str) -> Value {
    layout_with(env, topic, plan, &[])
}

/// [`layout`] of a topic created with `config` (`--config k=v`).
fn layout_with(env: &Env, topic: &str, plan: &str, config: &[&str]) -> Value {
    let mut create = vec!["--topic", topic, "--partitions", "1"];
    create.extend_from_slice(config);
    lag_scenario(env, "create-topic", &create);
    let prefix = format!("{topic}-p");
    lag_scenario(
        env,
        "write",
        &[
            "--topic",
            topic,
            "--partition",
            "0",
            "--transactional-id",
            &prefix,
            "--plan",
            plan,
        ],
    )
    .remove(0)
}

/// Commits `offset` on partition 0 of `topic` for `group` (`via`: admin,
/// classic, consumer).
fn commit(env: &Env, group: &str, topic: &str, offset: i64, via: &str) {
    let offsets = format!("0:{offset}");
    let out = lag_scenario(
        env,
        "commit",
        &[
            "--group",
            group,
            "--topic",
            topic,
            "--offsets",
            &offsets,
            "--via",
            via,
        ],
    );
    assert!(!out.is_empty());
}

/// What a read_committed consumer receives from each of `from` (reset
/// `reset`), by offset.
fn counts(env: &Env, topic: &str, from: &[i64], reset: &str) -> BTreeMap<i64, i64> {
    counts_as(env, topic, from, reset, "read_committed")
}

/// What a consumer of `isolation` receives from each of `from` up to the
/// end it can reach (the LSO, or the high watermark), by offset.
fn counts_as(
    env: &Env,
    topic: &str,
    from: &[i64],
    reset: &str,
    isolation: &str,
) -> BTreeMap<i64, i64> {
    let list: Vec<String> = from.iter().map(i64::to_string).collect();
    let lines = lag_scenario(
        env,
        "count",
        &[
            "--topic",
            topic,
            "--partition",
            "0",
            "--from",
            &list.join(","),
            "--isolation",
            isolation,
            "--reset",
            reset,
        ],
    );
    lines
        .iter()
        .map(|l| (i(l, "from"), i(l, "records")))
        .collect()
}

/// `kdp lag --topic T` within 45 s.
fn lag_args<'a>(env: &'a Env, topic: &'a str) -> Vec<&'a str> {
    vec![
        "lag",
        "--bootstrap-server",
        &env.bootstrap,
        "--topic",
        topic,
        "--timeout",
        "45s",
    ]
}

/// `kdp lag --topic T -o json` rows by group, and the exit status.
fn kdp_lag(env: &Env, topic: &str, extra: &[&str]) -> (BTreeMap<String, Value>, i32) {
    let mut args = lag_args(env, topic);
    args.extend_from_slice(&["-o", "json"]);
    args.extend_from_slice(extra);
    let r = kdp(&args);
    let doc: Value =
        serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.stdout));
    let rows = doc["Lag"]
        .as_array()
        .expect("Lag")
        .iter()
        .map(|row| (row["Group"].as_str().unwrap().to_string(), row.clone()))
        .collect();
    (rows, r.code)
}

/// `GET /metrics` of the exporter at `addr`, once it answers 200.
fn scrape(addr: &str) -> Option<String> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    s.write_all(format!("GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
        .ok()?;
    let mut raw = String::new();
    s.read_to_string(&mut raw).ok()?;
    let (head, body) = raw.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200")
        .then(|| body.to_string())
        .or_else(|| head.starts_with("HTTP/1.0 200").then(|| body.to_string()))
}

/// The value of `series` (name and labels as printed) in `text`.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// `kdp exporter --lag --topic T...` until its `metric` series of every
/// group in `expected` are there; then the value each shows.
fn exported(
    env: &Env,
    topics: &[&String],
    metric: &str,
    expected: &BTreeMap<String, i64>,
) -> BTreeMap<String, f64> {
    exported_with(env, topics, &[], metric, expected)
}

/// [`exported`] with more exporter flags.
fn exported_with(
    env: &Env,
    topics: &[&String],
    extra: &[&str],
    metric: &str,
    expected: &BTreeMap<String, i64>,
) -> BTreeMap<String, f64> {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let addr = format!("127.0.0.1:{port}");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kdp"));
    cmd.args([
        "exporter",
        "--bootstrap-server",
        &env.bootstrap,
        "--listen",
        &addr,
    ])
    .args(["--interval", "2s", "--timeout", "30s", "--lag"])
    .args(extra);
    for t in topics {
        cmd.args(["--topic", t.as_str()]);
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start kdp exporter");
    let start = Instant::now();
    let series =
        |group: &str, topic: &str| format!("{metric}{{group=\"{group}\",topic=\"{topic}\"}}");
    let found = loop {
        let text = scrape(&addr).unwrap_or_default();
        let values: BTreeMap<String, f64> = expected
            .keys()
            .filter_map(|g| {
                let topic = topics.iter().find(|t| g.starts_with(t.as_str()))?;
                Some((g.clone(), sample(&text, &series(g, topic))?))
            })
            .collect();
        if values.len() == expected.len() {
            break values;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("the exporter did not publish every group's lag: {values:?}\n{text}");
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let _ = child.kill();
    let _ = child.wait();
    found
}

#[test]
#[ignore = "needs a real Kafka cluster: run with scripts/test.sh"]
fn lag_in_records_equals_a_real_read_committed_consumer_and_offset_lag_equals_kafkas_tool() {
    let env = env();
    let mix = unique("lag-mix");
    let idle = unique("lag-idle");
    let trunc = unique("lag-trunc");
    let many = unique("lag-many");
    // the layouts side by side: each is its own topic
    std::thread::scope(|s| {
        let e = &env;
        let (m, id, t, n) = (&mix, &idle, &trunc, &many);
        let a = s.spawn(move || {
            layout(
                e,
                m,
                "idem:5,commit:4,abort:3,idem:2,interleave:3,commit:2,open:3,idem:3,commit:2",
            )
        });
        let b = s.spawn(move || layout(e, id, "idem:3,commit:4"));
        let c = s.spawn(move || layout(e, t, "idem:10,commit:5"));
        let d = s.spawn(move || layout(e, n, "txns:1000:1:10:16"));
        let mixed = a.join().unwrap();
        assert_eq!(
            (i(&mixed, "highWatermark"), i(&mixed, "lastStableOffset")),
            (36, 27),
            "{mixed}"
        );
        let idled = b.join().unwrap();
        assert_eq!(i(&idled, "highWatermark"), 8, "{idled}");
        c.join().unwrap();
        let manied = d.join().unwrap();
        assert_eq!(i(&manied, "highWatermark"), 2000, "{manied}");
    });

    let mix_at = [0i64, 9, 17, 26, 27, 36];
    let g = |topic: &str, c: i64| format!("{topic}-g{c}");
    // KIP-848's consumer protocol is Kafka 4.0's; 3.9 brokers do not serve it by default
    let kip848 = !env.kafka_version.starts_with("3.");
    std::thread::scope(|s| {
        let e = &env;
        for &c in &mix_at {
            let (group, topic) = (g(&mix, c), mix.clone());
            // one group committed by a classic member, one (4.x) by a
            // KIP-848 consumer-protocol member, the rest by Admin
            let via = match c {
                9 => "classic",
                17 if kip848 => "consumer",
                _ => "admin",
            };
            s.spawn(move || commit(e, &group, &topic, c, via));
        }
        for c in [7i64, 8] {
            let (group, topic) = (g(&idle, c), idle.clone());
            s.spawn(move || commit(e, &group, &topic, c, "admin"));
        }
        let (group, topic) = (g(&trunc, 3), trunc.clone());
        s.spawn(move || commit(e, &group, &topic, 3, "admin"));
        for c in [0i64, 1000] {
            let (group, topic) = (g(&many, c), many.clone());
            s.spawn(move || commit(e, &group, &topic, c, "admin"));
        }
    });
    let deleted = lag_scenario(
        &env,
        "delete-records",
        &["--topic", &trunc, "--partition", "0", "--before", "8"],
    );
    assert_eq!(i(&deleted[0], "logStartOffset"), 8, "{deleted:?}");

    // the oracles: the real consumer's counts, Kafka's tool
    let mut expected: BTreeMap<String, i64> = BTreeMap::new();
    for (c, n) in counts(&env, &mix, &mix_at, "none") {
        expected.insert(g(&mix, c), n);
    }
    for (c, n) in counts(&env, &idle, &[7, 8], "none") {
        expected.insert(g(&idle, c), n);
    }
    // below the log start: what an `earliest` consumer reads from it
    for (c, n) in counts(&env, &trunc, &[3], "earliest") {
        expected.insert(g(&trunc, c), n);
    }
    for (c, n) in counts(&env, &many, &[0, 1000], "none") {
        expected.insert(g(&many, c), n);
    }
    let all_groups: Vec<String> = expected.keys().cloned().collect();
    let tool = lag_scenario(
        &env,
        "tool",
        &[
            "--kind",
            "consumer-groups",
            "--group",
            &all_groups.join(","),
        ],
    );
    let tool: BTreeMap<String, &Value> = tool
        .iter()
        .map(|row| (row["GROUP"].as_str().unwrap().to_string(), row))
        .collect();
    let cell = |v: &Value, k: &str| -> i64 {
        v[k].as_str()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{k} in {v}"))
    };

    let mut checked = 0;
    let mut held = 0;
    // the idle topic's groups are caught up (exit 0); each other topic has
    // a group lagging, held back or behind its log start (exit 4)
    for (topic, status) in [(&mix, 4), (&idle, 0), (&trunc, 4), (&many, 4)] {
        let (rows, code) = kdp_lag(&env, topic, &[]);
        assert_eq!(code, status, "kdp lag --topic {topic}");
        for (group, row) in &rows {
            let want = expected[group];
            assert_eq!(row["Records"], want, "{group}: {row}");
            assert_eq!(row["RecordsAtLeast"], want, "{group}");
            assert_eq!(row["RecordsAtMost"], want, "{group}");
            let t = tool[group];
            assert_eq!(i(row, "OffsetLag"), cell(t, "LAG"), "{group}: {t}");
            assert_eq!(
                i(row, "HighWatermark"),
                cell(t, "LOG-END-OFFSET"),
                "{group}"
            );
            assert_eq!(
                i(row, "CommittedOffset"),
                cell(t, "CURRENT-OFFSET"),
                "{group}"
            );
            checked += 1;
            if row["Verdict"] == "held_back" {
                held += 1;
                assert_eq!(row["HeldBack"], 9, "{row}");
                let holder = row["HoldingTransactionalId"].as_str().unwrap_or("");
                assert!(holder.starts_with(&format!("{mix}-p-open")), "{row}");
                assert!(row["HoldingProducerId"].as_i64().is_some(), "{row}");
            }
        }
    }
    assert_eq!(checked, expected.len(), "one row per group");
    // at the LSO (27) and on the marker just below it (26)
    assert_eq!(held, 2);

    let (rows, _) = kdp_lag(&env, &idle, &[]);
    let on_marker = &rows[&g(&idle, 7)];
    // Kafka's LAG 1, nothing to deliver
    assert_eq!((i(on_marker, "OffsetLag"), i(on_marker, "Records")), (1, 0));
    assert_eq!(on_marker["Verdict"], "caught_up");
    let (rows, _) = kdp_lag(&env, &trunc, &[]);
    assert_eq!(rows[&g(&trunc, 3)]["Verdict"], "behind_log_start");
    let (rows, _) = kdp_lag(&env, &mix, &[]);
    assert_eq!(rows[&g(&mix, 36)]["Verdict"], "past_lso");
    assert_eq!(rows[&g(&mix, 9)]["GroupType"], "classic");
    if kip848 {
        assert_eq!(rows[&g(&mix, 17)]["GroupType"], "consumer");
    }

    // a budget smaller than the partition: bounds around the real count
    let (rows, code) = kdp_lag(&env, &many, &["--max-bytes-per-partition", "4096"]);
    for c in [0i64, 1000] {
        let row = &rows[&g(&many, c)];
        let want = expected[&g(&many, c)];
        assert!(
            row["Records"].is_null(),
            "a bound is never shown as exact: {row}"
        );
        assert!(
            i(row, "RecordsAtLeast") <= want && want <= i(row, "RecordsAtMost"),
            "{row}"
        );
        assert!(i(row, "RecordsAtMost") < i(row, "OffsetLag") + 1, "{row}");
    }
    assert_eq!(code, 4, "at least some records are known to be there");

    // the exporter's series: the same counts per group and topic (each
    // group here reads one partition)
    let published = exported(
        &env,
        &[&mix, &idle, &trunc, &many],
        "kdp_group_lag_records",
        &expected,
    );
    for (group, want) in &expected {
        assert_eq!(published[group], *want as f64, "{group}");
    }

    // the same groups of the mixed partition read read_uncommitted: what a
    // real read_uncommitted consumer seeked to each offset receives up to
    // the high watermark (aborted and open transactions' records too,
    // markers never), nothing held back
    let uncommitted: BTreeMap<String, i64> =
        counts_as(&env, &mix, &mix_at, "none", "read_uncommitted")
            .into_iter()
            .map(|(c, n)| (g(&mix, c), n))
            .collect();
    // LAG.md section 9: 30 data records below the HWM 36
    assert_eq!(uncommitted[&g(&mix, 0)], 30, "{uncommitted:?}");
    let (rows, code) = kdp_lag(&env, &mix, &["--isolation-level", "read_uncommitted"]);
    assert_eq!(code, 4, "groups are lagging");
    assert_eq!(rows.len(), mix_at.len());
    for (group, row) in &rows {
        let want = uncommitted[group];
        assert_eq!(row["Records"], want, "{group}: {row}");
        assert_eq!(row["Isolation"], "read_uncommitted", "{row}");
        assert_eq!(row["HeldBack"], 0, "{row}");
        assert_eq!(i(row, "OffsetLag"), cell(tool[group], "LAG"), "{group}");
        let verdict = if want > 0 { "lagging" } else { "caught_up" };
        assert_eq!(row["Verdict"], verdict, "{row}");
    }
    // above the LSO a read_uncommitted group still has records to read
    assert!(uncommitted[&g(&mix, 27)] > 0);
    // one group named read_uncommitted, the others read_committed
    let one = format!("{}=read_uncommitted", g(&mix, 9));
    let (rows, _) = kdp_lag(&env, &mix, &["--group-isolation-level", &one]);
    assert_eq!(rows[&g(&mix, 9)]["Records"], uncommitted[&g(&mix, 9)]);
    assert_eq!(rows[&g(&mix, 17)]["Records"], expected[&g(&mix, 17)]);
    assert_eq!(rows[&g(&mix, 17)]["Isolation"], "read_committed");
    // a budget smaller than the partition: bounds around the real count
    let (rows, _) = kdp_lag(
        &env,
        &many,
        &[
            "--isolation-level",
            "read_uncommitted",
            "--max-bytes-per-partition",
            "4096",
        ],
    );
    let many_ru = counts_as(&env, &many, &[0], "none", "read_uncommitted")[&0];
    let row = &rows[&g(&many, 0)];
    assert!(row["Records"].is_null(), "{row}");
    assert!(
        i(row, "RecordsAtLeast") <= many_ru && many_ru <= i(row, "RecordsAtMost"),
        "{many_ru}: {row}"
    );
    // and the exporter's series with the same flag
    let published = exported_with(
        &env,
        &[&mix],
        &["--isolation-level", "read_uncommitted"],
        "kdp_group_lag_records",
        &uncommitted,
    );
    for (group, want) in &uncommitted {
        assert_eq!(published[group], *want as f64, "{group}");
    }

    // the four topics read in a wave each (JSON lines read in waves of
    // topics) give the rows and the exit status of one wave
    let waves = |per_wave: &str| {
        let mut args = vec![
            "lag",
            "--bootstrap-server",
            &env.bootstrap,
            "--timeout",
            "45s",
        ];
        for t in [&mix, &idle, &trunc, &many] {
            args.extend_from_slice(&["--topic", t]);
        }
        args.extend_from_slice(&["--committed-offsets-per-wave", per_wave, "-o", "jsonl"]);
        let r = kdp(&args);
        let mut rows: Vec<String> = r.stdout.lines().map(String::from).collect();
        rows.sort();
        (rows, r.code)
    };
    let (one, code) = waves("0");
    assert!(one.len() >= all_groups.len(), "{one:?}");
    assert_eq!(waves("1"), (one, code));

    // whole cluster, narrowed by group: one row, found
    let group = g(&idle, 8);
    let r = kdp(&[
        "lag",
        "--bootstrap-server",
        &env.bootstrap,
        "--group",
        &group,
        "--timeout",
        "45s",
        "-o",
        "jsonl",
    ]);
    assert_eq!(r.code, 0, "a caught-up group alone exits 0");
    let lines: Vec<Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["Verdict"], "caught_up");
}

/// `kdp lag --group G -o json`'s rows (one partition each here), and the
/// exit status.
fn kdp_lag_group(env: &Env, group: &str) -> (Vec<Value>, i32) {
    let r = kdp(&[
        "lag",
        "--bootstrap-server",
        &env.bootstrap,
        "--group",
        group,
        "--timeout",
        "45s",
        "-o",
        "json",
    ]);
    let doc: Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", r.stdout, r.stderr));
    (doc["Lag"].as_array().expect("Lag").clone(), r.code)
}

/// Kafka's share-group tool's row of `group` (kafka-share-groups.sh
/// --describe --offsets of the cluster's version).
fn share_tool_row(env: &Env, group: &str) -> Value {
    let rows = lag_scenario(env, "tool", &["--kind", "share-groups", "--group", group]);
    assert_eq!(rows.len(), 1, "{rows:?}");
    rows[0].clone()
}

/// A KafkaShareConsumer of `group` (its `share.isolation.level` set to
/// `isolation`) accepts `accept` records of `topic` (LagScenario
/// share-consume; it waits until it has them).
fn share_consume(env: &Env, group: &str, topic: &str, accept: i64, isolation: &str) {
    let n = accept.to_string();
    let out = lag_scenario(
        env,
        "share-consume",
        &[
            "--group",
            group,
            "--topic",
            topic,
            "--accept",
            &n,
            "--isolation",
            isolation,
        ],
    );
    assert_eq!(i(&out[0], "accepted"), accept, "{out:?}");
}

/// The tool's cell as kdp's JSON value: `-` is null.
fn cell(row: &Value, k: &str) -> Value {
    match row[k].as_str() {
        Some("-") => Value::Null,
        Some(n) => Value::from(
            n.parse::<i64>()
                .unwrap_or_else(|e| panic!("{k}: {e} in {row}")),
        ),
        None => panic!("{k} missing in {row}"),
    }
}

/// Share groups (KIP-932, Kafka 4.x): a topic written with a committed
/// and an aborted transaction and then an open one; real KafkaShareConsumers
/// (read_committed, read_uncommitted) accept some records. kdp's row of
/// each equals what `kafka-share-groups.sh --describe --offsets` prints
/// (start offset, LAG), names the group's isolation, holds back the open
/// transaction's offsets only under read_committed, and its "at most"
/// bound holds against what a second share consumer then still receives.
/// On 3.9 the brokers do not offer DescribeShareGroupOffsets at all.
#[test]
#[ignore = "needs a real Kafka cluster: run with scripts/test.sh"]
fn a_share_groups_records_to_deliver_are_bounded_and_kafkas_lag_equals_its_tool() {
    let env = env();
    let (_, addr) = &env.brokers[0];
    let rt = tokio::runtime::Runtime::new().unwrap();
    let offered = rt.block_on(async {
        let stream = tokio::net::TcpStream::connect(addr.as_str()).await.unwrap();
        let conn = kdp_client::Connection::establish(
            stream,
            addr.clone(),
            kdp_client::ConnectionConfig::default(),
        )
        .await
        .unwrap();
        conn.api_versions()
            .and_then(|t| t.range(kdp_wire::api::DESCRIBE_SHARE_GROUP_OFFSETS))
    });
    if env.kafka_version.starts_with("3.") {
        assert_eq!(offered, None, "3.x has no share groups");
        return;
    }
    assert!(
        offered.is_some_and(|r| r.1 >= 1),
        "4.4 offers DescribeShareGroupOffsets v1: {offered:?}"
    );
    let topic = unique("lag-share");
    // idem 0-4, commit 5-8 + marker 9, abort 10-12 + marker 13, open 14-16:
    // LSO 14, HWM 17; read_committed delivers 9 below the LSO,
    // read_uncommitted 12 + the 3 open ones
    let w = layout(&env, &topic, "idem:5,commit:4,abort:3,open:3");
    assert_eq!(i(&w, "deliveredReadCommitted"), 9, "{w}");
    // after both consumers: each group's KafkaLag and RecordsAtMost, for
    // the exporter's series
    let mut kafka_lags: BTreeMap<String, i64> = BTreeMap::new();
    let mut at_mosts: BTreeMap<String, i64> = BTreeMap::new();
    let mut lower: BTreeMap<String, i64> = BTreeMap::new();
    for (isolation, deliverable, held) in [("read_committed", 9, 3), ("read_uncommitted", 15, 0)] {
        let group = format!("{topic}-{isolation}");
        share_consume(&env, &group, &topic, 3, isolation);
        let (rows, code) = kdp_lag_group(&env, &group);
        assert_eq!(rows.len(), 1, "{rows:?}");
        let row = &rows[0];
        let tool = share_tool_row(&env, &group);
        assert_eq!(row["Isolation"], isolation, "{row}");
        assert_eq!(row["GroupType"], "share", "{row}");
        assert_eq!(row["CommittedOffset"], Value::Null, "{row}");
        assert_eq!(row["OffsetLag"], Value::Null, "{row}");
        assert_eq!(
            row["ShareStartOffset"],
            cell(&tool, "START-OFFSET"),
            "{row} {tool}"
        );
        assert_eq!(row["KafkaLag"], cell(&tool, "LAG"), "{row} {tool}");
        assert_eq!(i(row, "HighWatermark"), 17, "{row}");
        assert_eq!(i(row, "LastStableOffset"), 14, "{row}");
        assert_eq!(i(row, "HeldBack"), held, "{row}");
        // bounds while records remain: at least what Kafka's Lag proves
        let (at_least, at_most) = (i(row, "RecordsAtLeast"), i(row, "RecordsAtMost"));
        assert!(at_least <= at_most, "{row}");
        if at_least > 0 {
            assert_eq!(row["Verdict"], "lagging", "{row}");
            assert_eq!(code, 4, "at least one record above --max-records 0: {row}");
        } else {
            assert_eq!(row["Verdict"], "maybe_lagging", "{row}");
            assert_eq!(code, 1, "a bound above --max-records 0 is undecided: {row}");
        }
        // the bounds hold: what a second consumer still receives is within
        let rest = deliverable - 3;
        share_consume(&env, &group, &topic, rest, isolation);
        assert!(
            at_least <= rest && rest <= at_most,
            "{isolation}: {rest} records still delivered, kdp said {at_least}..{at_most}"
        );
        eprintln!(
            "{isolation}: {at_least} <= {rest} <= {at_most} (KafkaLag {})",
            row["KafkaLag"]
        );

        // and Kafka's figure follows the tool after the second consumer too
        let (rows, _) = kdp_lag_group(&env, &group);
        let tool = share_tool_row(&env, &group);
        assert_eq!(rows[0]["KafkaLag"], cell(&tool, "LAG"), "{rows:?} {tool}");
        assert_eq!(
            rows[0]["ShareStartOffset"],
            cell(&tool, "START-OFFSET"),
            "{rows:?} {tool}"
        );
        // everything delivered: nothing proven left, whatever Kafka's Lag
        // still counts (the open transaction's offsets, markers)
        assert_eq!(i(&rows[0], "RecordsAtLeast"), 0, "{rows:?}");
        lower.insert(group.clone(), 0);
        kafka_lags.insert(group.clone(), i(&rows[0], "KafkaLag"));
        at_mosts.insert(group, i(&rows[0], "RecordsAtMost"));
    }
    // the exporter publishes the same figures (no consumer runs now)
    let published = exported(&env, &[&topic], "kdp_share_group_lag", &kafka_lags);
    let want: BTreeMap<String, f64> = kafka_lags
        .iter()
        .map(|(g, &n)| (g.clone(), n as f64))
        .collect();
    assert_eq!(published, want, "kdp_share_group_lag");
    let published = exported(&env, &[&topic], "kdp_group_lag_records_at_most", &at_mosts);
    let want: BTreeMap<String, f64> = at_mosts
        .iter()
        .map(|(g, &n)| (g.clone(), n as f64))
        .collect();
    assert_eq!(published, want, "kdp_group_lag_records_at_most");
    let published = exported(&env, &[&topic], "kdp_group_lag_records_at_least", &lower);
    let want: BTreeMap<String, f64> = lower.iter().map(|(g, &n)| (g.clone(), n as f64)).collect();
    assert_eq!(published, want, "kdp_group_lag_records_at_least");
}

/// `kdp lag --topic T` as a table: the summary it prints on stderr (the
/// partitions read and proven, the Fetch requests sent).
fn kdp_lag_summary(env: &Env, topic: &str) -> String {
    let r = kdp(&lag_args(env, topic));
    assert!(r.code == 0 || r.code == 4, "{}", r.stderr);
    r.stderr
        .lines()
        .find(|l| l.contains("proven without a read"))
        .unwrap_or_else(|| panic!("no summary: {}", r.stderr))
        .to_string()
}

/// docs/LAG.md section 11: a LogAppendTime topic written only by an
/// idempotent producer is counted without a Fetch (its leader lists no
/// transactional producer and every offset of the range was appended
/// within producer.id.expiration.ms), and exactly: what a real
/// read_committed consumer receives. A LogAppendTime topic with a
/// committed transaction, and a CreateTime topic (the default), are read,
/// and counted the same. The proof rests on LogAppendTime, so it holds
/// on both generations alike.
#[test]
#[ignore = "needs a real Kafka cluster: run with scripts/test.sh"]
fn a_partition_never_written_transactionally_is_counted_without_a_read() {
    let env = env();
    let plain = unique("lag-proof-plain");
    let txn = unique("lag-proof-txn");
    let created = unique("lag-proof-create");
    std::thread::scope(|s| {
        let e = &env;
        for (topic, config, plan, hw) in [
            (
                &plain,
                "message.timestamp.type=LogAppendTime",
                "idem:5,idem:4",
                9,
            ),
            (
                &txn,
                "message.timestamp.type=LogAppendTime",
                "idem:3,commit:4",
                8,
            ),
            (&created, "message.timestamp.type=CreateTime", "idem:6", 6),
        ] {
            s.spawn(move || {
                let w = layout_with(e, topic, plan, &["--config", config]);
                assert_eq!(i(&w, "highWatermark"), hw, "{w}");
                commit(e, &format!("{topic}-g"), topic, 2, "admin");
            });
        }
    });
    for (topic, proven) in [(&plain, true), (&txn, false), (&created, false)] {
        let expected = counts(&env, topic, &[2], "none")[&2];
        let (rows, code) = kdp_lag(&env, topic, &[]);
        assert_eq!(code, 4, "{topic} lags: {rows:?}");
        let row = &rows[&format!("{topic}-g")];
        assert_eq!(i(row, "Records"), expected, "{topic}: {row}");
        assert_eq!(row["RecordsProvenUnread"], proven, "{topic}: {row}");
        let summary = kdp_lag_summary(&env, topic);
        let fetches = match proven {
            true => "0 bytes in 0 fetch(es)",
            false => "1 partition(s) read, 0 proven without a read",
        };
        assert!(summary.contains(fetches), "{topic}: {summary}");
    }
}
