//! `kdp describe` against one secured Apache Kafka node
//! (scripts/kafka-secure.sh): SASL_SSL with every mechanism, mutual TLS,
//! the TLS and SASL failures an operator meets, ACLs, and the same
//! properties file given to Kafka's own `kafka-transactions.sh`.
//!
//! Run with scripts/test.sh, or `bash scripts/kafka-secure.sh start; set -a;
//! . target/kafka-secure/secure.env; set +a` and
//! `cargo test -p kdp --test real_kafka_secure -- --include-ignored`.
//! Without the node the tests fail; they never skip.

mod common;

use std::process::Command;
use std::time::Duration;

use common::secure::{secure, Secure};
use common::{kdp, parse_json_doc, parse_kafka_table, run, ProducerRow, Run};

impl Secure {
    /// `kdp -vvv describe` of both test topics, as JSON, with `props` (if any).
    fn describe(&self, bootstrap: &str, props: Option<&str>, extra: &[&str]) -> Run {
        let file = props.map(|p| self.props(p));
        let mut args = vec![
            "-vvv",
            "describe",
            "--bootstrap-server",
            bootstrap,
            "--timeout",
            "60s",
            "--topic",
            "secure-read",
            "--topic",
            "secure-hidden",
        ];
        if let Some(f) = &file {
            args.extend(["--command-config", f.as_str()]);
        }
        args.extend_from_slice(extra);
        let r = kdp(&args);
        self.assert_no_secret(&r);
        r
    }
}

fn rows(doc_text: &str, topic: &str) -> Vec<ProducerRow> {
    let doc = parse_json_doc(doc_text);
    let mut rows = common::json_partition(&doc, topic, 0);
    rows.sort_by_key(|r| r.producer_id);
    rows
}

#[test]
#[ignore = "needs the secured Kafka node: run scripts/test.sh"]
fn every_mechanism_and_mutual_tls_see_what_plaintext_sees() {
    let s = secure();
    let base = s.describe(&s.plaintext, None, &["--output", "json"]);
    assert_eq!(base.code, 0, "{}", base.stderr);
    let want = (
        rows(&base.stdout, "secure-read"),
        rows(&base.stdout, "secure-hidden"),
    );
    assert_eq!(want.0.len(), 1, "one idempotent producer per topic");
    for (props, bootstrap) in [
        ("scram512", &s.sasl_ssl),
        ("scram256", &s.sasl_ssl),
        ("plain", &s.sasl_ssl),
        ("oauth-file", &s.sasl_ssl),
        ("oauth-cc", &s.sasl_ssl),
        ("sasl-plaintext", &s.sasl_plaintext),
        ("mtls", &s.ssl),
        ("mtls-encrypted", &s.ssl),
        ("mtls-encrypted-inline", &s.ssl),
        ("mtls-pbes1", &s.ssl),
    ] {
        let r = s.describe(bootstrap, Some(props), &["--output", "json"]);
        assert_eq!(r.code, 0, "{props}: {}", r.stderr);
        if bootstrap == &s.sasl_ssl {
            // the listener sets connections.max.reauth.ms: kdp read the session's lifetime
            assert!(
                r.stderr.contains("SASL session lifetime"),
                "{props}: {}",
                r.stderr
            );
        }
        let got = (
            rows(&r.stdout, "secure-read"),
            rows(&r.stdout, "secure-hidden"),
        );
        assert_eq!(got, want, "{props}");
    }
}

#[test]
#[ignore = "needs the secured Kafka node: run scripts/test.sh"]
fn tls_and_sasl_failures_name_their_cause_and_exit_3() {
    let s = secure();
    let sasl_plaintext = ["--command-property", "security.protocol=SASL_PLAINTEXT"];
    for (props, bootstrap, want, extra) in [
        (
            "wrong-password",
            &s.sasl_ssl,
            "SASL SCRAM-SHA-512 authentication failed: SASL_AUTHENTICATION_FAILED",
            &[][..],
        ),
        // the SASL_PLAINTEXT listener enables SCRAM-SHA-512 only
        (
            "plain",
            &s.sasl_plaintext,
            "does not enable PLAIN (it enables: SCRAM-SHA-512)",
            &sasl_plaintext[..],
        ),
        ("untrusted", &s.sasl_ssl, "unknown CA", &[]),
        ("ssl-no-client-cert", &s.wronghost, "hostname mismatch", &[]),
        (
            "ssl-no-client-cert",
            &s.expired,
            "certificate has expired",
            &[],
        ),
        ("ssl-no-client-cert", &s.ssl, "client certificate", &[]),
    ] {
        let r = s.describe(bootstrap, Some(props), extra);
        assert_eq!(r.code, 3, "{props} @ {bootstrap}: {}", r.stderr);
        let last = r.stderr.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("kdp: cannot reach the cluster"),
            "{props}: {last}"
        );
        assert!(last.contains(want), "{props}: want {want:?} in {last}");
        // fails at once on the cause, not when --timeout runs out
        assert!(!last.contains("did not finish within"), "{props}: {last}");
        assert!(r.stdout.is_empty(), "{props}: {}", r.stdout);
    }
    // a mechanism kdp does not implement is a usage error, before any connection
    let r = s.describe(&s.sasl_ssl, Some("gssapi"), &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("GSSAPI (Kerberos) is not supported"),
        "{}",
        r.stderr
    );
}

#[test]
#[ignore = "needs the secured Kafka node: run scripts/test.sh"]
fn a_user_without_read_sees_authorization_rows() {
    let s = secure();
    let r = s.describe(&s.sasl_ssl, Some("reader"), &["--output", "json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(rows(&r.stdout, "secure-read").len(), 1);
    let doc = parse_json_doc(&r.stdout);
    let hidden = doc
        .topics
        .iter()
        .find(|t| t.name == "secure-hidden")
        .expect("secure-hidden is reported");
    for p in &hidden.partitions {
        assert_eq!(
            p.error_code,
            kdp_wire::ErrorCode::TOPIC_AUTHORIZATION_FAILED,
            "{p:?}"
        );
        assert!(p.active_producers.is_empty());
    }
}

/// Kafka's `kafka-transactions.sh describe-producers` of secure-read-0 run by
/// `java` with `props`, parsed.
fn kafka_describe_producers(
    s: &Secure,
    java: &str,
    bootstrap: &str,
    props: &str,
) -> Vec<ProducerRow> {
    let file = s.props(props);
    let mut cmd = Command::new(java);
    cmd.args([
        "-cp",
        &s.classpath,
        "org.apache.kafka.tools.TransactionsCommand",
    ])
    .args(["--bootstrap-server", bootstrap, "--command-config", &file])
    .args([
        "describe-producers",
        "--topic",
        "secure-read",
        "--partition",
        "0",
    ]);
    let r = run(&mut cmd, Duration::from_secs(120));
    assert_eq!(
        r.code, 0,
        "{props}: TransactionsCommand ({java}) failed:\n{}",
        r.stderr
    );
    parse_kafka_table(&r.stdout)
}

/// The same properties files work for `kafka-transactions.sh --command-config`
/// (TransactionsCommand) and kdp, with the same answer.
#[test]
#[ignore = "needs the secured Kafka node: run scripts/test.sh"]
fn the_same_properties_file_works_for_kafka_transactions() {
    let s = secure();
    for (props, bootstrap) in [
        ("scram512", &s.sasl_ssl),
        ("plain", &s.sasl_ssl),
        ("mtls", &s.ssl),
        // an encrypted key Java 17 reads: PBES1 (for PBES2 see the next test)
        ("mtls-pbes1", &s.ssl),
    ] {
        let theirs = kafka_describe_producers(&s, &s.java, bootstrap, props);
        let ours = s.describe(bootstrap, Some(props), &["--output", "json"]);
        assert_eq!(ours.code, 0, "{props}: {}", ours.stderr);
        assert_eq!(rows(&ours.stdout, "secure-read"), theirs, "{props}");
    }
}

/// The JVM that runs Kafka's tool with an encrypted key: `KDP_IT_JAVA25`, by
/// default the Temurin 25 of the test machines (Debian's Java 17 cannot read
/// the key, see docs/SECURITY.md).
fn java_25() -> String {
    std::env::var("KDP_IT_JAVA25")
        .unwrap_or_else(|_| "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java".into())
}

/// One properties file with a PBES2 (PBKDF2-HMAC-SHA256, AES-256-CBC)
/// encrypted PKCS#8 key and `ssl.key.password`, as `openssl pkcs8 -topk8`
/// writes it, in a file (`ssl.keystore.location`) or inline with its base64
/// on one line (`ssl.keystore.key`): kdp and Kafka's tool on Java 25 both read
/// it and get the same answer over mutual TLS. (Java 17's PemStore cannot:
/// "PBES2 SecretKeyFactory not available".)
#[test]
#[ignore = "needs the secured Kafka node: run scripts/test.sh"]
fn an_encrypted_pkcs8_key_works_for_kdp_and_for_kafka_on_java_25() {
    let s = secure();
    for name in ["mtls-encrypted", "mtls-encrypted-inline"] {
        let props = std::fs::read_to_string(s.props(name)).expect("the properties file");
        let key = match props
            .lines()
            .find_map(|l| l.strip_prefix("ssl.keystore.location="))
        {
            Some(file) => std::fs::read_to_string(file).expect("the keystore"),
            None => props.clone(),
        };
        // the key really is encrypted (not a plain key the password is ignored for)
        assert!(
            key.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----"),
            "{name}"
        );
        assert!(!key.contains("-----BEGIN PRIVATE KEY-----"), "{name}");
        assert!(
            props.lines().any(|l| l.starts_with("ssl.key.password=")),
            "{name}"
        );

        let theirs = kafka_describe_producers(&s, &java_25(), &s.ssl, name);
        let ours = s.describe(&s.ssl, Some(name), &["--output", "json"]);
        assert_eq!(ours.code, 0, "{name}: {}", ours.stderr);
        assert_eq!(rows(&ours.stdout, "secure-read"), theirs, "{name}");
        assert_eq!(
            theirs.len(),
            1,
            "{name}: the idempotent producer of the setup"
        );
    }
}

/// A PLAINTEXT client aimed at the node's TLS listeners (SSL, SASL_SSL):
/// Kafka's TLS engine answers with an alert record, which kdp recognises
/// and names at once, instead of retrying until `--timeout` and then
/// reporting a frame size of 352518912.
#[test]
#[ignore = "needs the secured Kafka node: run scripts/test.sh"]
fn plaintext_to_a_tls_listener_exits_3_at_once_with_the_hint() {
    let s = secure();
    for bootstrap in [&s.ssl, &s.sasl_ssl] {
        let r = s.describe(bootstrap, None, &[]);
        assert_eq!(r.code, 3, "{bootstrap}: {}", r.stderr);
        let last = r.stderr.lines().last().unwrap_or_default();
        assert!(
            last.contains("this port speaks TLS: set security.protocol=SSL (or SASL_SSL)"),
            "{bootstrap}: {last}"
        );
        assert!(!last.contains("frame size"), "{bootstrap}: {last}");
        // fails at once on the cause, not when --timeout runs out
        assert!(
            !last.contains("did not finish within"),
            "{bootstrap}: {last}"
        );
    }
}

/// Stops a child process when the test ends, however it ends.
struct Stop(std::process::Child);

impl Drop for Stop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A self-signed broker certificate marked CA:TRUE, as `openssl req -x509`
/// makes one, placed in a PEM truststore: Kafka's Java client (the node's
/// TransactionsCommand) accepts it, and kdp with the same properties file
/// does too, with the same answer. Served by `kdp mock-broker` over TLS: the
/// node's own certificates are CA-signed.
#[test]
#[ignore = "needs the secured Kafka node: run scripts/test.sh"]
fn a_self_signed_broker_certificate_in_the_truststore_works_as_for_kafka() {
    use std::io::BufRead;
    use std::process::Stdio;

    let s = secure();
    let dir = std::env::temp_dir().join(common::unique("kdp-self-signed"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let openssl = run(
        Command::new("openssl").args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout",
            &path("key.pem"),
            "-out",
            &path("cert.pem"),
        ]),
        Duration::from_secs(60),
    );
    assert_eq!(openssl.code, 0, "{}", openssl.stderr);
    let demo = kdp(&["demo", "--print-cluster-file"]);
    assert_eq!(demo.code, 0, "{}", demo.stderr);
    std::fs::write(path("demo.json"), demo.stdout).unwrap();
    std::fs::write(
        path("self-signed.properties"),
        format!(
            "security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={}\n",
            path("cert.pem")
        ),
    )
    .unwrap();

    let mut child = Command::new(env!("CARGO_BIN_EXE_kdp"))
        .args(["mock-broker", "--listen", "127.0.0.1:0", "--cluster"])
        .arg(path("demo.json"))
        .args([
            "--tls-cert",
            &path("cert.pem"),
            "--tls-key",
            &path("key.pem"),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start kdp mock-broker");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _mock = Stop(child);
    let bootstrap = line.trim().split(',').next().unwrap().to_string();
    assert!(
        !bootstrap.is_empty(),
        "the mock broker exited before it listened"
    );

    let props = path("self-signed.properties");
    let mut java = Command::new(&s.java);
    java.args([
        "-cp",
        &s.classpath,
        "org.apache.kafka.tools.TransactionsCommand",
        "--bootstrap-server",
        &bootstrap,
        "--command-config",
        &props,
        "describe-producers",
        "--topic",
        "payments",
        "--partition",
        "0",
    ]);
    let theirs = run(&mut java, Duration::from_secs(120));
    assert_eq!(theirs.code, 0, "TransactionsCommand: {}", theirs.stderr);
    let theirs = parse_kafka_table(&theirs.stdout);
    assert!(!theirs.is_empty());

    let ours = kdp(&[
        "describe",
        "--bootstrap-server",
        &bootstrap,
        "--command-config",
        &props,
        "--topic",
        "payments",
        "--partition",
        "0",
        "--output",
        "json",
    ]);
    assert_eq!(ours.code, 0, "{}", ours.stderr);
    assert_eq!(rows(&ours.stdout, "payments"), theirs);
    let _ = std::fs::remove_dir_all(&dir);
}
