//! `kdp mock-broker` with TLS, SASL users and per-principal ACLs, reached by
//! `kdp describe --command-config` exactly as a secured Kafka cluster is:
//! each security protocol and mechanism gives the same answer as the plain
//! mock, and each way of failing fails with exit status 3 and no secret in
//! any output. Certificates are made here, at test time.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use serde_json::{json, Value};

mod mock_broker;
use mock_broker::MockBroker;

mod common;

const KDP: &str = env!("CARGO_BIN_EXE_kdp");
const ALICE_PW: &str = "alice-Pw-8c1f0e";
const READER_PW: &str = "reader-Pw-41d7b2";

/// A directory of its own per test, removed at the end.
struct Dir(PathBuf);

impl Dir {
    fn new() -> Dir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let d = std::env::temp_dir().join(format!(
            "kdp-mock-secure-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }

    fn write(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A CA and what it signed, as PEM files in the test's directory.
struct Pki {
    ca: rcgen::Certificate,
    ca_key: KeyPair,
}

impl Pki {
    fn new(name: &str) -> Pki {
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.distinguished_name.push(DnType::CommonName, name);
        let ca_key = KeyPair::generate().unwrap();
        let ca = p.self_signed(&ca_key).unwrap();
        Pki { ca, ca_key }
    }

    /// (certificate PEM, key PEM) for `names`.
    fn leaf(&self, cn: &str, names: &[&str]) -> (String, String) {
        let mut p = CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .unwrap();
        p.distinguished_name.push(DnType::CommonName, cn);
        let key = KeyPair::generate().unwrap();
        let cert = p.signed_by(&key, &self.ca, &self.ca_key).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

/// Everything a test needs: certificates, cluster files, properties.
struct Setup {
    dir: Dir,
    ca: String,
    other_ca: String,
    server_cert: String,
    server_key: String,
    client_pem: String,
    plain_cluster: String,
    secure_cluster: String,
}

fn setup() -> Setup {
    let dir = Dir::new();
    let pki = Pki::new("kdp test CA");
    let other = Pki::new("someone else's CA");
    let (cert, key) = pki.leaf("broker", &["localhost", "127.0.0.1"]);
    let (ccert, ckey) = pki.leaf("client", &["client"]);
    let base =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../kdp-server/tests/data/cluster.json");
    let mut cluster: Value =
        serde_json::from_str(&std::fs::read_to_string(&base).unwrap()).unwrap();
    cluster["sasl"] = json!({"users": [
        {"name": "alice", "password": ALICE_PW},
        {"name": "reader", "password": READER_PW, "mechanisms": ["SCRAM-SHA-512"]}
    ]});
    cluster["acls"] = json!({"principals": {"User:reader": {"topic_read_deny": ["secret"]}}});
    Setup {
        ca: dir.write("ca.pem", &pki.ca.pem()),
        other_ca: dir.write("other-ca.pem", &other.ca.pem()),
        server_cert: dir.write("broker.pem", &cert),
        server_key: dir.write("broker-key.pem", &key),
        client_pem: dir.write("client.pem", &format!("{ckey}{ccert}")),
        plain_cluster: base.display().to_string(),
        secure_cluster: dir.write("cluster.json", &cluster.to_string()),
        dir,
    }
}

struct Mock {
    _broker: MockBroker,
    bootstrap: String,
}

impl Mock {
    fn start(cluster: &str, extra: &[&str]) -> Mock {
        Mock::start_logging(cluster, extra, Stdio::null())
    }

    /// A mock whose stderr (its log) goes to `log`.
    fn start_logging(cluster: &str, extra: &[&str], log: Stdio) -> Mock {
        let broker = MockBroker::start(cluster, extra, log);
        Mock {
            bootstrap: broker.bootstrap.clone(),
            _broker: broker,
        }
    }

    fn tls(s: &Setup, cluster: &str, extra: &[&str]) -> Mock {
        let mut args = vec!["--tls-cert", &s.server_cert, "--tls-key", &s.server_key];
        args.extend_from_slice(extra);
        Mock::start(cluster, &args)
    }
}

/// `kdp describe` of two topics, with a properties file (if any) and more arguments.
fn describe(mock: &Mock, props: Option<&str>, extra: &[&str]) -> Output {
    let mut cmd = Command::new(KDP);
    cmd.args(["describe", "--bootstrap-server", &mock.bootstrap])
        .args(["--topic", "orders", "--topic", "secret", "--output", "json"])
        .args(["--timeout", "20s"]);
    if let Some(p) = props {
        cmd.args(["--command-config", p]);
    }
    cmd.args(extra);
    let out = cmd.output().expect("run kdp describe");
    common::schema::check_command(&cmd, &out.stdout);
    out
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout {:?}, stderr {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// What the mock without any security answers.
fn plain_answer(s: &Setup) -> Value {
    let mock = Mock::start(&s.plain_cluster, &[]);
    let out = describe(&mock, None, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json_of(&out)
}

fn trust(ca: &str) -> String {
    format!("ssl.truststore.type=PEM\nssl.truststore.location={ca}\n")
}

fn jaas(mechanism: &str, user: &str, password: &str) -> String {
    let module = if mechanism == "PLAIN" {
        "org.apache.kafka.common.security.plain.PlainLoginModule"
    } else {
        "org.apache.kafka.common.security.scram.ScramLoginModule"
    };
    format!(
        "sasl.mechanism={mechanism}\nsasl.jaas.config={module} required username=\"{user}\" password=\"{password}\";\n"
    )
}

/// SSL with the client certificate (mutual TLS).
fn mtls_props(s: &Setup) -> String {
    s.dir.write(
        "mtls.properties",
        &format!(
            "security.protocol=SSL\n{}ssl.keystore.type=PEM\nssl.keystore.location={}\n",
            trust(&s.ca),
            s.client_pem
        ),
    )
}

fn sasl_props(s: &Setup, protocol: &str, mechanism: &str, user: &str, pw: &str) -> String {
    let mut text = format!(
        "security.protocol={protocol}\n{}",
        jaas(mechanism, user, pw)
    );
    if protocol == "SASL_SSL" {
        text.push_str(&trust(&s.ca));
    }
    s.dir.write(
        &format!("{protocol}-{mechanism}-{user}-{pw}.properties"),
        &text,
    )
}

/// One topic of a `kdp describe --output json` document.
fn topic(doc: &Value, name: &str) -> Value {
    doc["Topics"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["Name"] == name))
        .cloned()
        .unwrap_or_else(|| panic!("{name} missing from {doc}"))
}

/// Every partition of `topic` is a TOPIC_AUTHORIZATION_FAILED row.
fn assert_denied(topic: &Value) {
    let partitions = topic["Partitions"].as_array().unwrap();
    assert!(!partitions.is_empty());
    for p in partitions {
        assert_eq!(p["ErrorCode"], 29, "{p}");
        assert_eq!(p["ActiveProducers"], json!([]), "{p}");
    }
}

#[test]
fn every_protocol_and_mechanism_gives_the_plain_answer() {
    let s = setup();
    let want = plain_answer(&s);
    let sasl_ssl = Mock::tls(&s, &s.secure_cluster, &[]);
    for mechanism in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] {
        let props = sasl_props(&s, "SASL_SSL", mechanism, "alice", ALICE_PW);
        let out = describe(&sasl_ssl, Some(&props), &[]);
        assert_eq!(out.status.code(), Some(0), "{mechanism}: {}", stderr(&out));
        assert_eq!(json_of(&out), want, "SASL_SSL {mechanism}");
    }
    let sasl_plaintext = Mock::start(&s.secure_cluster, &[]);
    let props = sasl_props(&s, "SASL_PLAINTEXT", "SCRAM-SHA-512", "alice", ALICE_PW);
    let out = describe(&sasl_plaintext, Some(&props), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_of(&out), want, "SASL_PLAINTEXT");
    // The secured listeners refuse a client that does not authenticate.
    let out = describe(&sasl_plaintext, None, &[]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));

    let ssl = Mock::tls(&s, &s.plain_cluster, &[]);
    let props = s.dir.write(
        "ssl.properties",
        &format!("security.protocol=SSL\n{}", trust(&s.ca)),
    );
    let out = describe(&ssl, Some(&props), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_of(&out), want, "SSL");
}

#[test]
fn mutual_tls_needs_the_client_certificate() {
    let s = setup();
    let want = plain_answer(&s);
    let mtls = Mock::tls(&s, &s.plain_cluster, &["--tls-client-ca", &s.ca]);
    let with_cert = mtls_props(&s);
    let out = describe(&mtls, Some(&with_cert), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_of(&out), want);
    let without = s.dir.write(
        "ssl.properties",
        &format!("security.protocol=SSL\n{}", trust(&s.ca)),
    );
    let out = describe(&mtls, Some(&without), &[]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
}

/// On a TLS listener without SASL, Kafka's principal is the client
/// certificate's subject (`User:CN=client`), and the file's rules for it apply.
#[test]
fn a_client_certificate_is_its_principal() {
    let s = setup();
    let want = plain_answer(&s);
    let mut cluster: Value =
        serde_json::from_str(&std::fs::read_to_string(&s.plain_cluster).unwrap()).unwrap();
    cluster["acls"] = json!({"principals": {"User:CN=client": {"topic_read_deny": ["secret"]}}});
    let cluster = s.dir.write("cert-acls.json", &cluster.to_string());
    let mtls = Mock::tls(&s, &cluster, &["--tls-client-ca", &s.ca]);
    let with_cert = mtls_props(&s);
    let out = describe(&mtls, Some(&with_cert), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let got = json_of(&out);
    assert_eq!(topic(&got, "orders"), topic(&want, "orders"));
    assert_denied(&topic(&got, "secret"));
}

#[test]
fn an_untrusted_ca_fails_with_status_3() {
    let s = setup();
    let ssl = Mock::tls(&s, &s.plain_cluster, &[]);
    let props = s.dir.write(
        "other.properties",
        &format!("security.protocol=SSL\n{}", trust(&s.other_ca)),
    );
    let out = describe(&ssl, Some(&props), &[]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(out.stdout.is_empty() || !stderr(&out).is_empty());
    assert!(
        stderr(&out).to_lowercase().contains("certificate"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_wrong_password_fails_with_status_3_and_is_never_shown() {
    let s = setup();
    let wrong = "wrong-Pw-5e93aa";
    // The mock logs everything it does (-vvv) to a file checked at the end.
    let log_path = s.dir.0.join("mock.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let sasl_ssl = Mock::start_logging(
        &s.secure_cluster,
        &[
            "-vvv",
            "--tls-cert",
            &s.server_cert,
            "--tls-key",
            &s.server_key,
        ],
        Stdio::from(log),
    );
    for (mechanism, message) in [
        (
            "SCRAM-SHA-512",
            "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512",
        ),
        (
            "SCRAM-SHA-256",
            "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256",
        ),
        ("PLAIN", "Authentication failed: Invalid username or password"),
    ] {
        let props = sasl_props(&s, "SASL_SSL", mechanism, "alice", wrong);
        let out = describe(&sasl_ssl, Some(&props), &["-vvv"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{mechanism}: {err}");
        assert!(err.contains(message), "{mechanism}: {err}");
        assert!(err.contains("SASL_AUTHENTICATION_FAILED"), "{mechanism}: {err}");
        for secret in [wrong, ALICE_PW] {
            assert!(!err.contains(secret), "{mechanism}: password in stderr");
            assert!(
                !String::from_utf8_lossy(&out.stdout).contains(secret),
                "{mechanism}: password in stdout"
            );
        }
    }
    // A mechanism the user has no credentials for is refused the same way.
    let props = sasl_props(&s, "SASL_SSL", "PLAIN", "reader", READER_PW);
    let out = describe(&sasl_ssl, Some(&props), &[]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    drop(sasl_ssl);
    let log = std::fs::read_to_string(&log_path).unwrap();
    // The log says why each attempt failed, and holds no password.
    assert!(log.contains("the client proof is wrong"), "{log}");
    assert!(log.contains("Invalid username or password"), "{log}");
    for secret in [wrong, ALICE_PW, READER_PW] {
        assert!(!log.contains(secret), "a password in the mock's log");
    }
}

#[test]
fn a_user_without_read_sees_authorization_rows() {
    let s = setup();
    let want = plain_answer(&s);
    let sasl_ssl = Mock::tls(&s, &s.secure_cluster, &[]);
    let props = sasl_props(&s, "SASL_SSL", "SCRAM-SHA-512", "reader", READER_PW);
    let out = describe(&sasl_ssl, Some(&props), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let got = json_of(&out);
    assert_eq!(topic(&got, "orders"), topic(&want, "orders"));
    assert_denied(&topic(&got, "secret"));
    // alice has no rules of her own: the general ones (none) let her read it.
    let props = sasl_props(&s, "SASL_SSL", "SCRAM-SHA-512", "alice", ALICE_PW);
    let out = describe(&sasl_ssl, Some(&props), &[]);
    assert_eq!(topic(&json_of(&out), "secret"), topic(&want, "secret"));
}

#[test]
fn bad_tls_files_are_usage_errors_that_name_the_flag() {
    let s = setup();
    let out = Command::new(KDP)
        .args(["mock-broker", "--listen", "127.0.0.1:0", "--cluster"])
        .arg(&s.plain_cluster)
        .args(["--tls-cert", &s.server_cert, "--tls-key", &s.ca])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--tls-key"), "{}", stderr(&out));
    let missing = Path::new(&s.dir.0).join("nope.pem");
    let out = Command::new(KDP)
        .args(["mock-broker", "--listen", "127.0.0.1:0", "--cluster"])
        .arg(&s.plain_cluster)
        .args(["--tls-cert"])
        .arg(&missing)
        .args(["--tls-key", &s.server_key])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--tls-cert"), "{}", stderr(&out));
}

/// `--audit-log` of a repair over SASL_SSL with every kind of password in
/// the config (the JAAS password, the ssl.* passwords): the line names the
/// SASL user, fits its schema, and holds none of the passwords.
#[test]
fn the_audit_log_names_the_user_and_holds_no_secret() {
    const STORE_PW: &str = "store-Pw-77aa01";
    const KEY_PW: &str = "key-Pw-5e5e12";
    let s = setup();
    let mock = Mock::tls(&s, &s.secure_cluster, &[]);
    let mut text = format!(
        "security.protocol=SASL_SSL\n{}{}",
        jaas("SCRAM-SHA-512", "alice", ALICE_PW),
        trust(&s.ca)
    );
    text.push_str(&format!(
        "ssl.truststore.password={STORE_PW}\nssl.keystore.password={STORE_PW}\nssl.key.password={KEY_PW}\n"
    ));
    let props = s.dir.write("audit.properties", &text);
    let log = s.dir.0.join("audit.jsonl");
    let log_arg = log.display().to_string();
    let out = Command::new(KDP)
        .args(["abort", "--bootstrap-server", &mock.bootstrap])
        .args(["--command-config", &props, "--timeout", "20s"])
        .args([
            "--topic",
            "orders",
            "--partition",
            "3",
            "--start-offset",
            "150382",
        ])
        .args(["--yes", "--audit-log", &log_arg])
        .stdin(Stdio::null())
        .output()
        .expect("run kdp abort");
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{all}");
    let written = std::fs::read_to_string(&log).expect("the audit log");
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines.len(), 1, "{written}");
    let line: Value = serde_json::from_str(lines[0]).expect("a JSON line");
    if let Some(why) = common::schema::violations("audit-log", false, &line) {
        panic!("{why}: {line}");
    }
    assert_eq!(line["Principal"], "User:alice");
    assert_eq!(line["Result"], "done");
    for secret in [ALICE_PW, STORE_PW, KEY_PW] {
        assert!(!written.contains(secret), "a password in the audit log");
        assert!(!all.contains(secret), "a password in kdp's output");
    }
}
