//! Every kdp command that talks to a cluster, against the secured node of
//! scripts/kafka-secure.sh: over SASL_SSL with each mechanism, SASL_PLAINTEXT
//! and mutual TLS it answers what it answers over the node's PLAINTEXT
//! listener; the writing commands plan the same and change nothing with
//! `--dry-run`; and a user without ALTER on the cluster cannot abort a real
//! open transaction, is told which ACL is missing, and the transaction stays
//! open.
//!
//! The producers are real Java clients (it/'s Scenario) writing over the
//! PLAINTEXT listener, where ANONYMOUS is a super user. Run with
//! scripts/test.sh, or `bash scripts/kafka-secure.sh start; set -a;
//! . target/kafka-secure/secure.env; set +a` and
//! `cargo test -p kdp --test real_kafka_secure_commands -- --include-ignored`.
//! Without the node the tests fail; they never skip.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::secure::{secure, Secure};
use common::{create_topic_rf, describe_rows, kdp, run, scenario, unique, Env, Run};
use serde_json::Value;

/// A topic with one idempotent producer, one committed transaction and one
/// transaction left open by a producer that was killed inside it.
struct Fixture {
    topic: String,
    committed: String,
    open: String,
    open_producer: i64,
    start_offset: i64,
}

fn populate(env: &Env, prefix: &str) -> Fixture {
    let topic = unique(prefix);
    let (committed, open) = (format!("{topic}-c"), format!("{topic}-o"));
    create_topic_rf(env, &topic, 1, 1);
    let tp = ["--topic", topic.as_str(), "--partition", "0"];
    scenario(env, "idempotent", &[&tp[..], &["--records", "2"]].concat());
    scenario(
        env,
        "txn-commit",
        &[
            &tp[..],
            &["--records", "2", "--transactional-id", &committed],
        ]
        .concat(),
    );
    let o = scenario(
        env,
        "txn-open",
        &[&tp[..], &["--records", "3", "--transactional-id", &open]].concat(),
    );
    Fixture {
        open_producer: o["producerId"].as_i64().expect("producerId"),
        start_offset: o["currentTransactionStartOffset"]
            .as_i64()
            .expect("currentTransactionStartOffset"),
        topic,
        committed,
        open,
    }
}

/// `kdp <command> --bootstrap-server B [--command-config F] --timeout 60s <rest>`.
fn kdp_via(
    s: &Secure,
    props: Option<&str>,
    bootstrap: &str,
    command: &[&str],
    rest: &[&str],
) -> Run {
    let file = props.map(|p| s.props(p));
    let mut args: Vec<&str> = command.to_vec();
    args.extend(["--bootstrap-server", bootstrap, "--timeout", "60s"]);
    if let Some(f) = &file {
        args.extend(["--command-config", f.as_str()]);
    }
    args.extend_from_slice(rest);
    let r = kdp(&args);
    s.assert_no_secret(&r);
    r
}

/// A JSON answer without what moves with the clock (ages, durations) and,
/// for lists, only the fixture's transactional ids (other tests share the node).
fn stable(mut v: Value, ids: &[&str]) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("TransactionDurationMs");
                m.remove("TransactionAgeMs");
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    if let Some(rows) = v.get_mut("Transactions").and_then(Value::as_array_mut) {
        rows.retain(|r| {
            r["TransactionalId"]
                .as_str()
                .is_some_and(|id| ids.contains(&id))
        });
    }
    v
}

fn json(r: &Run) -> Value {
    serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", r.stdout, r.stderr))
}

/// The partition's producers and the coordinators' view of them, over PLAINTEXT.
fn state(s: &Secure, f: &Fixture) -> Value {
    let r = kdp_via(
        s,
        None,
        &s.plaintext,
        &["describe"],
        &[
            "--topic",
            &f.topic,
            "--with-transactions",
            "--output",
            "json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    json(&r)
}

/// The fixture's open producer's CurrentTxnStartOffset in `state`.
fn open_start(state: &Value, producer: i64) -> i64 {
    describe_rows(state)
        .iter()
        .find(|p| p["ProducerId"].as_i64() == Some(producer))
        .and_then(|p| p["CurrentTxnStartOffset"].as_i64())
        .unwrap_or_else(|| panic!("producer {producer} not in {state}"))
}

/// `(high watermark, last stable offset)` of partition 0, from Kafka's Admin.
fn offsets(env: &Env, topic: &str) -> (i64, i64) {
    let o = scenario(env, "offsets", &["--topic", topic, "--partition", "0"]);
    (
        o["highWatermark"].as_i64().expect("highWatermark"),
        o["lastStableOffset"].as_i64().expect("lastStableOffset"),
    )
}

/// Polls until `done` holds; a bound on the number of polls turns a hang
/// into a failure (it asserts nothing about time).
fn wait_until<T>(what: &str, mut done: impl FnMut() -> Option<T>) -> T {
    for _ in 0..1200 {
        if let Some(v) = done() {
            return v;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("gave up waiting: {what}");
}

#[test]
#[ignore = "needs the secured Kafka node: run scripts/test.sh"]
fn every_cluster_command_answers_over_each_mechanism_and_mutual_tls_as_over_plaintext() {
    let s = secure();
    let env = s.env();
    let f = populate(&env, "sec-cmds");
    let before = state(&s, &f);
    assert_eq!(open_start(&before, f.open_producer), f.start_offset);
    let ids = [f.committed.as_str(), f.open.as_str()];
    let start = f.start_offset.to_string();
    let topic = f.topic.as_str();
    let json_out = ["--output", "json"];
    let commands: Vec<(&[&str], Vec<&str>)> = vec![
        (&["transactions"], [&["list"][..], &json_out].concat()),
        (
            &["transactions"],
            [
                &["describe", "--transactional-id", &f.open][..],
                &["--transactional-id", &f.committed],
                &json_out,
            ]
            .concat(),
        ),
        (
            &["find-hanging"],
            [
                &["--topic", topic, "--all", "--max-transaction-timeout", "0"][..],
                &json_out,
            ]
            .concat(),
        ),
        (
            &["compare-replicas"],
            [&["--topic", topic][..], &json_out].concat(),
        ),
        (
            &["describe"],
            [&["--topic", topic, "--with-transactions"][..], &json_out].concat(),
        ),
        (
            &["abort"],
            vec![
                "--topic",
                topic,
                "--partition",
                "0",
                "--start-offset",
                &start,
                "--dry-run",
            ],
        ),
        (
            &["force-terminate"],
            vec!["--transactional-id", &f.open, "--dry-run"],
        ),
    ];
    for (command, rest) in &commands {
        let name = command
            .iter()
            .chain(rest.iter().take(1))
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        let dry_run = rest.contains(&"--dry-run");
        let mut want: Option<Value> = None;
        for (props, bootstrap) in s.admin_ways() {
            let r = kdp_via(&s, props, bootstrap, command, rest);
            assert_eq!(r.code, 0, "{name} via {props:?}: {}", r.stderr);
            let got = if dry_run {
                assert!(
                    r.stderr.contains("--dry-run: nothing was changed"),
                    "{name} via {props:?}: {}",
                    r.stderr
                );
                Value::String(r.stdout.clone())
            } else {
                stable(json(&r), &ids)
            };
            match &want {
                Some(w) => assert_eq!(&got, w, "{name} via {props:?} differs from PLAINTEXT"),
                None => want = Some(got),
            }
        }
        // the PLAINTEXT answer itself is the fixture's
        let w = want.expect("a PLAINTEXT answer");
        let text = w.to_string();
        match *command {
            ["transactions"] => {
                assert_eq!(w["Transactions"].as_array().map(Vec::len), Some(2), "{w}")
            }
            ["find-hanging"] => {
                assert!(
                    text.contains(&format!("\"ProducerId\":{}", f.open_producer)),
                    "{w}"
                );
                assert!(text.contains("\"Verdict\":\"ok\""), "{w}");
            }
            ["compare-replicas"] => assert_eq!(w["Differences"], Value::Array(vec![]), "{w}"),
            ["describe"] => assert_eq!(describe_rows(&w).len(), 3, "{w}"),
            ["abort"] => {
                let plan = w.as_str().unwrap_or_default();
                assert!(
                    plan.contains(&format!("producer {}", f.open_producer)),
                    "{plan}"
                );
                assert!(plan.contains(&format!("{topic}-0@{start}")), "{plan}");
                assert!(
                    plan.contains(&format!("transactional id {}", f.open)),
                    "{plan}"
                );
            }
            ["force-terminate"] => {
                let plan = w.as_str().unwrap_or_default();
                assert!(
                    plan.contains(&format!("force-terminate {:?}", f.open)),
                    "{plan}"
                );
                assert!(plan.contains("coordinator state Ongoing"), "{plan}");
            }
            _ => {}
        }
    }

    // the exporter scans over SASL_SSL and mutual TLS and serves the producers
    for props in ["scram512", "mtls"] {
        let bootstrap = if props == "mtls" { &s.ssl } else { &s.sasl_ssl };
        let m = exporter_scrape(&s, props, bootstrap, topic);
        let series = |name: &str| sample(&m, &format!("{name}{{topic=\"{topic}\"}}"));
        assert_eq!(series("kdp_producers"), Some(3.0), "{props}:\n{m}");
        assert_eq!(series("kdp_open_transactions"), Some(1.0), "{props}:\n{m}");
    }

    // --dry-run changed nothing, whichever way in
    assert_eq!(state(&s, &f), before, "a dry run changed the cluster");

    // a real write over mutual TLS ends it: force-terminate as the admin's certificate
    let r = kdp_via(
        &s,
        Some("mtls"),
        &s.ssl,
        &["force-terminate"],
        &["--transactional-id", &f.open, "--yes"],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("terminated"), "{}", r.stdout);
    wait_until("the open transaction's abort markers", || {
        (open_start(&state(&s, &f), f.open_producer) == -1).then_some(())
    });
}

/// A kdp process killed (and reaped) on drop.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A listener whose SASL sessions last 5 s (`connections.max.reauth.ms`): an
/// exporter running for several lifetimes authenticates a fresh connection
/// before each session ends: the broker never has to close an expired
/// session's connection under a request, and every scan succeeds.
#[test]
#[ignore = "needs the secured Kafka node: run scripts/test.sh"]
fn a_long_run_outlives_the_brokers_sasl_session_lifetime() {
    let s = secure();
    let env = s.env();
    let topic = unique("kdp-sec-reauth");
    create_topic_rf(&env, &topic, 1, 1);
    let tp = ["--topic", topic.as_str(), "--partition", "0"];
    scenario(&env, "idempotent", &[&tp[..], &["--records", "2"]].concat());

    // 16 scans a second apart: more than three 5-second sessions
    let (m, log) = exporter_run(&s, "scram512", &s.reauth, &topic, 16.0);
    for result in ["failed", "partial"] {
        let series = format!("kdp_scans_total{{result=\"{result}\"}}");
        assert_eq!(sample(&m, &series).unwrap_or(0.0), 0.0, "{m}\n{log}");
    }
    let series = format!("kdp_producers{{topic=\"{topic}\"}}");
    assert_eq!(sample(&m, &series), Some(1.0), "{m}");
    let sessions = log.matches("SASL session lifetime").count();
    assert!(
        sessions >= 3,
        "a session of 5 s, renewed at least 3 times in 16 scans ({sessions} seen):\n{log}"
    );
    // renewed before the end: no connection is cut under a request (scans
    // would still succeed on a retry, so this is what tells)
    assert!(
        !log.contains("connection closed by the peer"),
        "a session ran out on a connection in use:\n{log}"
    );
}

/// Kafka's AclCommand: in kafka-tools from 4.0, in the core jar before.
fn acl_command(kafka_version: &str) -> &'static str {
    if kafka_version.starts_with("3.") {
        "kafka.admin.AclCommand"
    } else {
        "org.apache.kafka.tools.AclCommand"
    }
}

/// `kdp exporter` over `props` watching `topic`: its metrics once a scan has
/// succeeded.
fn exporter_scrape(s: &Secure, props: &str, bootstrap: &str, topic: &str) -> String {
    exporter_run(s, props, bootstrap, topic, 1.0).0
}

/// `kdp exporter` over `props` watching `topic`, with kdp-client's debug log,
/// until `scans` scans have succeeded: its metrics then, and its log.
fn exporter_run(
    s: &Secure,
    props: &str,
    bootstrap: &str,
    topic: &str,
    scans: f64,
) -> (String, String) {
    let file = s.props(props);
    let mut child = Command::new(env!("CARGO_BIN_EXE_kdp"))
        .env("RUST_LOG", "kdp_client=debug")
        .args([
            "exporter",
            "--bootstrap-server",
            bootstrap,
            "--command-config",
            &file,
        ])
        .args([
            "--listen",
            "127.0.0.1:0",
            "--interval",
            "1s",
            "--timeout",
            "30s",
        ])
        .args(["--topic", topic])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start kdp exporter");
    let stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    let proc = Proc(child);
    let mut addr = String::new();
    BufReader::new(stdout)
        .read_line(&mut addr)
        .expect("the exporter's address");
    let addr = addr.trim().to_string();
    assert!(!addr.is_empty(), "the exporter exited before it listened");
    let m = wait_until("successful scans", || {
        let m = get(&addr, "/metrics");
        (sample(&m, "kdp_scans_total{result=\"ok\"}").unwrap_or(0.0) >= scans).then_some(m)
    });
    drop(proc);
    let mut log = String::new();
    let _ = BufReader::new(stderr).read_to_string(&mut log);
    let run = Run {
        code: 0,
        stdout: m,
        stderr: log,
        elapsed: Duration::ZERO,
    };
    s.assert_no_secret(&run);
    (run.stdout, run.stderr)
}

/// One HTTP/1.0 GET's body (the server closes).
fn get(addr: &str, path: &str) -> String {
    let mut c = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    c.write_all(format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
        .unwrap();
    let mut raw = String::new();
    c.read_to_string(&mut raw)
        .unwrap_or_else(|e| panic!("GET {addr}{path}: {e}"));
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    assert!(
        head.starts_with("HTTP/1.") && head.contains(" 200 "),
        "{raw}"
    );
    body.to_string()
}

/// The value of the sample `series` (name and labels exactly as printed).
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// A user who may READ the topic but has no ALTER (nor CLUSTER_ACTION) on the
/// cluster asks for a raw abort of a real open transaction: the broker refuses
/// with CLUSTER_AUTHORIZATION_FAILED, kdp says which ACL is missing, and the
/// transaction stays open (partition, coordinator and offsets compared before
/// and after). Its force-terminate (no WRITE on the transactional id) is
/// refused too. The admin's abort then goes through.
#[test]
#[ignore = "needs the secured Kafka node: run scripts/test.sh"]
fn a_user_without_cluster_alter_cannot_abort_and_the_transaction_stays_open() {
    let s = secure();
    let env = s.env();
    let topic = unique("sec-acl");
    let tid = format!("{topic}-o");
    create_topic_rf(&env, &topic, 1, 1);
    let acl = run(
        Command::new(&s.java)
            .args(["-cp", &s.classpath, acl_command(&env.kafka_version)])
            .args(["--bootstrap-server", &s.plaintext, "--add"])
            .args(["--allow-principal", "User:reader", "--operation", "Read"])
            .args(["--topic", &topic]),
        Duration::from_secs(120),
    );
    assert_eq!(acl.code, 0, "AclCommand failed:\n{}", acl.stderr);
    let o = scenario(
        &env,
        "txn-open",
        &[
            "--topic",
            &topic,
            "--partition",
            "0",
            "--records",
            "3",
            "--transactional-id",
            &tid,
        ],
    );
    let f = Fixture {
        open_producer: o["producerId"].as_i64().expect("producerId"),
        start_offset: o["currentTransactionStartOffset"]
            .as_i64()
            .expect("currentTransactionStartOffset"),
        topic,
        committed: String::new(),
        open: tid,
    };
    let start = f.start_offset.to_string();
    let coordinator = || {
        let r = kdp_via(
            &s,
            None,
            &s.plaintext,
            &["transactions"],
            &[
                "describe",
                "--transactional-id",
                &f.open,
                "--output",
                "json",
            ],
        );
        assert_eq!(r.code, 0, "{}", r.stderr);
        stable(json(&r), &[&f.open])
    };
    let before = (state(&s, &f), coordinator(), offsets(&env, &f.topic));
    assert_eq!(open_start(&before.0, f.open_producer), f.start_offset);
    assert!(
        before
            .1
            .to_string()
            .contains("\"TransactionState\":\"Ongoing\""),
        "{}",
        before.1
    );
    let (hw, lso) = before.2;
    assert_eq!(
        (lso, hw),
        (f.start_offset, f.start_offset + 3),
        "the open transaction pins the LSO"
    );

    let abort = |props: &str| {
        kdp_via(
            &s,
            Some(props),
            &s.sasl_ssl,
            &["abort"],
            &[
                "--topic",
                &f.topic,
                "--partition",
                "0",
                "--start-offset",
                &start,
                "--yes",
            ],
        )
    };
    let r = abort("reader");
    // the step failed (exit 1: "the abort failed"), with the missing ACL named
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    let result = r
        .stdout
        .lines()
        .find(|l| l.contains(&format!("abort {}-0 producer {}", f.topic, f.open_producer)))
        .unwrap_or_else(|| panic!("no result line:\n{}", r.stdout));
    assert!(
        result.contains("FAILED: CLUSTER_AUTHORIZATION_FAILED"),
        "{result}"
    );
    assert!(
        result.contains("ALTER or CLUSTER_ACTION on the cluster"),
        "{result}"
    );
    assert!(result.contains("--operation Alter --cluster"), "{result}");
    // nor force-terminate (no WRITE on the transactional id): refused before anything is
    // sent; and the id it may not DESCRIBE is reported as such
    let r = kdp_via(
        &s,
        Some("reader"),
        &s.sasl_ssl,
        &["force-terminate"],
        &["--transactional-id", &f.open, "--yes"],
    );
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("TRANSACTIONAL_ID_AUTHORIZATION_FAILED")
            && r.stderr.contains("WRITE on the transactional id"),
        "{}",
        r.stderr
    );
    let r = kdp_via(
        &s,
        Some("reader"),
        &s.sasl_ssl,
        &["transactions"],
        &["describe", "--transactional-id", &f.open],
    );
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "{}: TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
            f.open
        )),
        "{}",
        r.stderr
    );
    let after = (state(&s, &f), coordinator(), offsets(&env, &f.topic));
    assert_eq!(after, before, "a refused abort changed the cluster");

    // the admin may: the markers land and the LSO moves on to the high watermark
    let r = abort("scram512");
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains(": done: aborted"), "{}", r.stdout);
    assert_eq!(open_start(&state(&s, &f), f.open_producer), -1);
    // the abort marker is one more offset; nothing is held back any more
    let (hw_after, lso_after) = offsets(&env, &f.topic);
    assert!(hw_after > hw, "no abort marker was written");
    assert_eq!(lso_after, hw_after, "the LSO did not move on");
}
