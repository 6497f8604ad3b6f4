//! `kdp blocked` on the secured node of scripts/kafka-secure.sh as `reader`,
//! a user who may READ the topic and DESCRIBE one group but not the other:
//! both groups are real members blocked behind a killed producer's open
//! transaction (written as the PLAINTEXT super user). The group it may
//! describe is shown blocked; the one it may not, named with --group, is an
//! error naming the missing ACL, never silence and never exit 0. Run with
//! scripts/test.sh, or `bash scripts/kafka-secure.sh start; set -a;
//! . target/kafka-secure/secure.env; set +a` and
//! `cargo test -p kdp --test real_kafka_secure_blocked -- --include-ignored`.

mod common;

use std::process::Command;
use std::time::Duration;

use common::secure::secure;
use common::{create_topic_rf, kdp, run, scenario, unique};
use serde_json::Value;

fn acl_command(version: &str) -> &'static str {
    if version.starts_with("3.") {
        "kafka.admin.AclCommand"
    } else {
        "org.apache.kafka.tools.AclCommand"
    }
}

#[test]
#[ignore = "needs the secured Kafka node: run scripts/test.sh"]
fn a_group_the_user_may_not_describe_is_an_error_naming_the_acl() {
    let s = secure();
    let env = s.env();
    let topic = unique("sec-bl");
    let (seen, hidden) = (format!("{topic}-seen"), format!("{topic}-hidden"));
    create_topic_rf(&env, &topic, 1, 1);
    let tp = ["--topic", topic.as_str(), "--partition", "0"];
    scenario(&env, "idempotent", &[&tp[..], &["--records", "2"]].concat());
    let tid = format!("{topic}-tx");
    scenario(
        &env,
        "txn-open",
        &[&tp[..], &["--records", "3", "--transactional-id", &tid]].concat(),
    );
    for g in [&seen, &hidden] {
        let c = scenario(&env, "group-consume", &["--topic", &topic, "--group", g]);
        assert_eq!(c["partitions"][0]["committed"], 2, "{c}");
    }
    for (op, resource) in [
        ("Read", ["--topic", &topic]),
        ("Describe", ["--group", &seen]),
    ] {
        let acl = run(
            Command::new(&s.java)
                .args(["-cp", &s.classpath, acl_command(&env.kafka_version)])
                .args(["--bootstrap-server", &s.plaintext, "--add"])
                .args(["--allow-principal", "User:reader", "--operation", op])
                .args(resource),
            Duration::from_secs(120),
        );
        assert_eq!(acl.code, 0, "AclCommand failed:\n{}", acl.stderr);
    }
    let reader = s.props("reader");
    let blocked = |rest: &[&str]| {
        let mut args = vec![
            "blocked",
            "--bootstrap-server",
            s.sasl_ssl.as_str(),
            "--command-config",
            reader.as_str(),
            "--timeout",
            "60s",
            // the transaction is seconds old: without this its groups wait
            "--blocked-after",
            "0",
        ];
        args.extend_from_slice(rest);
        let r = kdp(&args);
        s.assert_no_secret(&r);
        r
    };

    // the group it may describe: blocked at the LSO
    let r = blocked(&["--group", &seen, "--output", "json"]);
    assert_eq!(r.code, 4, "{}\n{}", r.stdout, r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).expect("JSON");
    let rows = doc["Blocked"].as_array().expect("rows");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["Verdict"], "blocked");
    assert_eq!(rows[0]["CommittedOffset"], 2);

    // the one it may not: OffsetFetch refuses it; kdp says so and which ACL
    // is missing, and does not call it clear
    for rest in [
        vec!["--group", hidden.as_str()],
        vec!["--group", &hidden, "--topic", &topic],
    ] {
        let r = blocked(&rest);
        assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains(&format!(
                "group {hidden}: committed offsets not read: GROUP_AUTHORIZATION_FAILED"
            )),
            "{}",
            r.stderr
        );
        assert!(
            r.stderr.contains("needs DESCRIBE on the group")
                && r.stderr.contains("--operation Describe --group"),
            "{}",
            r.stderr
        );
    }
    // both named: the one seen is blocked (exit 4), the other still reported
    let r = blocked(&["--group", &seen, "--group", &hidden]);
    assert_eq!(r.code, 4, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("GROUP_AUTHORIZATION_FAILED"),
        "{}",
        r.stderr
    );
    // the fix, as the admin over SASL_SSL (SCRAM), with an audit log: one
    // JSON line naming the principal, the LSO moved, and no secret of the
    // node anywhere in it (nor in the output)
    let audit = format!("{}/audit-{topic}.jsonl", s.dir);
    let admin = s.props("scram512");
    let r = kdp(&[
        "force-terminate",
        "--bootstrap-server",
        &s.sasl_ssl,
        "--command-config",
        &admin,
        "--transactional-id",
        &tid,
        "--yes",
        "--audit-log",
        &audit,
        "--timeout",
        "60s",
    ]);
    s.assert_no_secret(&r);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let text = std::fs::read_to_string(&audit).expect("the audit log");
    let token = std::fs::read_to_string(format!("{}/token.jwt", s.dir)).unwrap_or_default();
    for secret in s.secrets.iter().map(String::as_str).chain([token.trim()]) {
        assert!(
            secret.is_empty() || !text.contains(secret),
            "a secret is in the audit log"
        );
    }
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    let l = &lines[0];
    assert_eq!(l["Action"], "force-terminate", "{l}");
    assert_eq!(l["TransactionalId"], tid.as_str(), "{l}");
    assert_eq!(l["Principal"], "User:admin", "{l}");
    let p = &l["Partitions"][0];
    assert_eq!(p["Before"]["LastStableOffset"], 2, "{l}");
    assert_eq!(p["LsoChange"], "moved", "{l}");
}
