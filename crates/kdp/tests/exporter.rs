//! `kdp exporter` in front of `kdp mock-broker`, scraped over HTTP, checked
//! by Prometheus' own tools (`promtool`) and by a real Prometheus server.
//!
//! Scans are awaited by watching the exporter's own counters
//! (`kdp_scans_total`), never by sleeping a fixed time; every wait is
//! bounded (a hang fails the test). Every process started here is killed
//! when its guard drops, so none outlives a test, failed or not.
//!
//! promtool and prometheus come from Debian's `prometheus` package, which
//! `.ci/run` installs. The tests that need them are `#[ignore]`d, like the
//! real-Kafka ones, so a bare `cargo test` stays self-contained;
//! `scripts/test.sh` runs them, and without the tools they fail (never skip).
//!
//! One test watches a real Kafka cluster instead (`scripts/test.sh` starts it).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::Value;

mod common;

const KDP: &str = env!("CARGO_BIN_EXE_kdp");

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "kdp-exporter-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        TempDir(dir)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).expect("write temp file");
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A child process killed (and reaped) on drop.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Reads the one line a kdp service prints on stdout when it is listening.
fn first_line(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("first stdout line");
    assert!(!line.is_empty(), "the process exited before it listened");
    line.trim().to_string()
}

/// `kdp mock-broker` serving `cluster` with its one broker on `port`.
fn mock(cluster: &Path, port: u16) -> (Proc, String) {
    let mut child = Command::new(KDP)
        .args([
            "mock-broker",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--cluster",
        ])
        .arg(cluster)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start kdp mock-broker");
    let bootstrap = first_line(&mut child);
    (Proc(child), bootstrap)
}

/// `kdp exporter` on a free port; returns its `host:port`. Its stderr goes
/// to `log`.
fn exporter(bootstrap: &str, args: &[&str], log: &Path) -> (Proc, String) {
    let mut child = Command::new(KDP)
        .args([
            "exporter",
            "--bootstrap-server",
            bootstrap,
            "--listen",
            "127.0.0.1:0",
        ])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).expect("log file"))
        .spawn()
        .expect("start kdp exporter");
    let addr = first_line(&mut child);
    (Proc(child), addr)
}

/// One HTTP/1.0 GET (no chunking, the server closes): status, headers, body.
fn get(addr: &str, path: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut req = format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw)
        .unwrap_or_else(|e| panic!("GET {addr}{path}: {e}"));
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {raw:?}"));
    (status, head.to_string(), body.to_string())
}

fn metrics(addr: &str) -> String {
    let (status, _, body) = get(addr, "/metrics", &[]);
    assert_eq!(status, 200, "{body}");
    body
}

/// The value of the sample `series` (name and labels exactly as printed).
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

fn scans(text: &str, result: &str) -> f64 {
    sample(text, &format!("kdp_scans_total{{result=\"{result}\"}}")).unwrap_or(0.0)
}

/// Whether some scan has been counted. The exporter publishes a scan's
/// snapshot and gauges first and counts the scan right after, so a scrape
/// between the two sees the new values without the count: a test that
/// reads both waits for this too.
fn counted(text: &str) -> bool {
    ["ok", "partial", "failed"]
        .iter()
        .any(|r| scans(text, r) >= 1.0)
}

/// Polls until `done` holds; a bound on the number of polls turns a hang
/// into a failure (it asserts nothing about time).
fn wait_until<T>(what: &str, mut done: impl FnMut() -> Option<T>) -> T {
    for _ in 0..1200 {
        if let Some(v) = done() {
            return v;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("gave up waiting: {what}");
}

/// Metrics after at least `n` more scans of `result` than `before` shows.
fn after_scans(addr: &str, before: &str, result: &str, n: f64) -> String {
    let target = scans(before, result) + n;
    wait_until(&format!("{n} more {result} scans"), || {
        let m = metrics(addr);
        (scans(&m, result) >= target).then_some(m)
    })
}

/// A one-broker cluster of `topics`, with the `__consumer_offsets` topic
/// every Kafka cluster has (the group coordinators' log: without it the
/// group lookups of each scan have no coordinator to find).
fn cluster(topics: &str) -> String {
    format!(
        r#"{{"cluster_id": "exp", "brokers": [{{"id": 1}}], "topics": [{topics},
           {{"name": "__consumer_offsets", "partitions": [{{"partition": 0, "leader": 1, "replicas": [1]}}]}}]}}"#
    )
}

/// Before: orders has one idle producer. After: three, two in open
/// transactions (the oldest last wrote 20 minutes ago), and a new topic.
const BEFORE: &str = r#"{"name": "orders", "partitions": [
    {"partition": 0, "leader": 1, "replicas": [1],
     "producers": [{"ProducerId": 1, "LastSequence": 5, "LastTimestamp": "now-1m"}]},
    {"partition": 1, "leader": 1, "replicas": [1]}]}"#;
const AFTER: &str = r#"{"name": "orders", "partitions": [
    {"partition": 0, "leader": 1, "replicas": [1],
     "producers": [{"ProducerId": 1, "LastSequence": 9, "LastTimestamp": "now-10s"},
                   {"ProducerId": 2, "LastSequence": 0, "LastTimestamp": "now-20m", "CurrentTxnStartOffset": 40}]},
    {"partition": 1, "leader": 1, "replicas": [1],
     "producers": [{"ProducerId": 3, "LastSequence": 1, "LastTimestamp": "now-2m", "CurrentTxnStartOffset": 7}]}]},
    {"name": "events", "partitions": [{"partition": 0, "leader": 1, "replicas": [1],
     "producers": [{"ProducerId": 4, "LastSequence": 0, "LastTimestamp": "now"}]}]}"#;

const ORDERS: &str = r#"kdp_producers{topic="orders"}"#;

#[test]
fn a_change_between_scans_appears_after_the_next_scan_and_a_failed_scan_keeps_the_last_values() {
    let dir = TempDir::new("change");
    let before = dir.write("before.json", &cluster(BEFORE));
    let after = dir.write("after.json", &cluster(AFTER));
    let port = free_port();
    let (broker, bootstrap) = mock(&before, port);
    let (_exp, addr) = exporter(
        &bootstrap,
        &["--interval", "100ms", "--timeout", "5s"],
        &dir.0.join("exporter.log"),
    );

    let m = wait_until("the first scan", || {
        let m = metrics(&addr);
        (scans(&m, "ok") >= 1.0).then_some(m)
    });
    assert_eq!(get(&addr, "/readyz", &[]).0, 200);
    assert_eq!(sample(&m, ORDERS), Some(1.0), "{m}");
    assert_eq!(
        sample(&m, r#"kdp_open_transactions{topic="orders"}"#),
        Some(0.0)
    );
    assert_eq!(sample(&m, "kdp_scan_stale"), Some(0.0));
    assert_eq!(
        sample(&m, "kdp_scan_partitions"),
        Some(3.0),
        "orders-0, orders-1, __consumer_offsets-0"
    );

    // the broker goes away: scans fail, the values stay, and say they are stale
    drop(broker);
    let m = after_scans(&addr, &m, "failed", 1.0);
    assert_eq!(
        sample(&m, ORDERS),
        Some(1.0),
        "the last good value is kept: {m}"
    );
    assert_eq!(sample(&m, "kdp_scan_stale"), Some(1.0));
    assert!(
        sample(&m, r#"kdp_scan_errors_total{error="NETWORK_EXCEPTION"}"#).unwrap_or(0.0) >= 1.0,
        "{m}"
    );
    assert_eq!(get(&addr, "/readyz", &[]).0, 200, "ready stays ready");

    // it comes back with other state: the next scan shows it
    let (_broker, _) = mock(&after, port);
    let m = wait_until("a scan of the new state", || {
        let m = metrics(&addr);
        (sample(&m, ORDERS) == Some(3.0)).then_some(m)
    });
    assert_eq!(
        sample(&m, r#"kdp_open_transactions{topic="orders"}"#),
        Some(2.0)
    );
    assert_eq!(sample(&m, r#"kdp_producers{topic="events"}"#), Some(1.0));
    let age = sample(
        &m,
        r#"kdp_oldest_open_transaction_age_seconds{topic="orders"}"#,
    )
    .expect("an age for orders");
    assert!(
        age >= 20.0 * 60.0,
        "the oldest open transaction last wrote 20 minutes ago: {age}"
    );
    assert_eq!(sample(&m, "kdp_scan_stale"), Some(0.0));
    assert_eq!(sample(&m, "kdp_scan_overlaps_total"), Some(0.0));
}

/// A diagnosis with every kind of finding, for the test hook.
const DIAGNOSIS: &str = r#"{
  "transactions": [{"topic": "orders", "partition": 3, "reason": "no_transaction"},
                   {"topic": "payments", "partition": 0, "reason": "prepare_abort"}],
  "fenced_producers": [{"topic": "orders", "partition": 3, "value": 1}],
  "replica_divergences": [{"topic": "orders", "partition": 3, "value": 1}],
  "blocked_records": [{"topic": "orders", "partition": 3, "value": 1200}],
  "groups": {"groups": [{"group": "ledger", "blocked_partitions": 1, "blocked_records": 1200, "members": 2}]},
  "lag": {"values": [{"group": "ledger", "topic": "orders", "partition": 3, "records_at_least": 0,
                      "records_at_most": 0, "offset_lag": 1201, "held_back": 1200,
                      "oldest_undelivered_ms": 1700000000000},
                     {"group": "queue", "topic": "orders", "partition": 3, "records_at_least": 0,
                      "records_at_most": 9, "held_back": 0, "share": true, "kafka_share_lag": 4}]}
}"#;

fn test_cluster() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../kdp-server/tests/data/cluster.json")
}

/// Metrics of the test cluster (an offline partition makes every scan
/// partial) with the diagnosis fed, once it is.
fn fed_metrics(dir: &TempDir, extra: &[&str]) -> (Proc, Proc, String, String) {
    let diagnosis = dir.write("diagnosis.json", DIAGNOSIS);
    let (broker, bootstrap) = mock(&test_cluster(), 0);
    let mut args = vec!["--interval", "100ms", "--timeout", "5s", "--diagnosis-file"];
    let diagnosis = diagnosis.to_string_lossy().into_owned();
    args.push(&diagnosis);
    args.extend_from_slice(extra);
    let (exp, addr) = exporter(&bootstrap, &args, &dir.0.join("exporter.log"));
    let m = wait_until("a scan with the diagnosis", || {
        let m = metrics(&addr);
        (sample(&m, "kdp_diagnosis_available") == Some(1.0) && counted(&m)).then_some(m)
    });
    (broker, exp, addr, m)
}

fn promtool(args: &[&str], stdin: Option<&str>) -> (bool, String) {
    let mut child = Command::new("promtool")
        .args(args)
        .current_dir(repo_root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian package prometheus; .ci/run installs it)");
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
#[ignore = "needs promtool (Debian package prometheus); scripts/test.sh runs it"]
fn promtool_check_metrics_accepts_the_output_per_topic_and_per_partition() {
    for extra in [
        &["--producer-ids"][..],
        &["--per-partition", "--producer-ids"][..],
    ] {
        let dir = TempDir::new("promtool");
        let (_b, _e, _addr, m) = fed_metrics(&dir, extra);
        // every family has series here, the diagnosis' included
        for name in [
            "kdp_hanging_transactions{",
            "kdp_stuck_transactions{",
            "kdp_unknown_transactions{",
            "kdp_blocked_records_by_verdict{",
            "kdp_fenced_producers{",
            "kdp_replica_divergences{",
            "kdp_blocked_records{",
            "kdp_scan_errors_total{",
            "kdp_group_blocked_partitions{",
            "kdp_group_blocked_records{",
            "kdp_group_members{",
            "kdp_broker_producer_ids{",
            "kdp_broker_producer_ids_expiring_within_hour{",
            "kdp_broker_producer_ids_past_expiration{",
            "kdp_topic_producer_ids{",
            "kdp_topic_max_producer_epoch{",
            "kdp_topic_producers_near_epoch_exhaustion{",
            "kdp_broker_new_producer_ids_total{",
            "kdp_topic_new_producer_ids_total{",
        ] {
            assert!(m.contains(name), "{name} missing:\n{m}");
        }
        let (ok, out) = promtool(&["check", "metrics"], Some(&m));
        assert!(ok, "promtool check metrics {extra:?}:\n{out}\n{m}");
        assert!(out.trim().is_empty(), "lint findings {extra:?}:\n{out}");
    }
}

#[test]
fn the_diagnosis_input_reaches_the_metrics_by_topic_or_partition() {
    let dir = TempDir::new("diag");
    let (_b, _e, _addr, m) = fed_metrics(&dir, &[]);
    assert_eq!(
        sample(
            &m,
            r#"kdp_hanging_transactions{topic="orders",reason="no_transaction"}"#
        ),
        Some(1.0),
        "{m}"
    );
    assert_eq!(
        sample(
            &m,
            r#"kdp_stuck_transactions{topic="payments",reason="prepare_abort"}"#
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(&m, r#"kdp_blocked_records{topic="orders"}"#),
        Some(1200.0)
    );
    // a diagnosed topic with nothing found is 0, not absent
    assert_eq!(
        sample(&m, r#"kdp_fenced_producers{topic="secret"}"#),
        Some(0.0)
    );
    // the offline partition makes the scan partial: counted, and said
    assert!(scans(&m, "partial") >= 1.0, "{m}");
    assert_eq!(sample(&m, "kdp_scan_stale"), Some(1.0));
    assert_eq!(sample(&m, "kdp_scan_partitions_failed"), Some(1.0));

    let dir = TempDir::new("diag-pp");
    let (_b, _e, _addr, m) = fed_metrics(&dir, &["--per-partition"]);
    assert_eq!(
        sample(&m, r#"kdp_blocked_records{topic="orders",partition="3"}"#),
        Some(1200.0),
        "{m}"
    );
    assert_eq!(
        sample(&m, r#"kdp_producers{topic="orders",partition="3"}"#),
        Some(2.0)
    );
}

#[test]
fn openmetrics_when_the_scraper_asks_for_it() {
    let dir = TempDir::new("om");
    let (_b, _e, addr, _) = fed_metrics(&dir, &[]);
    let (status, head, body) = get(
        &addr,
        "/metrics",
        &[(
            "Accept",
            "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5",
        )],
    );
    assert_eq!(status, 200);
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/openmetrics-text; version=1.0.0"),
        "{head}"
    );
    assert!(body.ends_with("# EOF\n"), "{body}");
    assert!(body.contains("# TYPE kdp_scans counter\n"), "{body}");
    let (_, head, body) = get(&addr, "/metrics", &[]);
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: text/plain; version=0.0.4"),
        "{head}"
    );
    assert!(!body.contains("# EOF"));
    assert_eq!(get(&addr, "/nope", &[]).0, 404);
}

#[test]
#[ignore = "needs promtool (Debian package prometheus); scripts/test.sh runs it"]
fn promtool_checks_and_unit_tests_the_rules() {
    let (ok, out) = promtool(&["check", "rules", "deploy/prometheus/kdp-rules.yml"], None);
    assert!(ok, "{out}");
    let (ok, out) = promtool(
        &["test", "rules", "deploy/prometheus/kdp-rules.test.yml"],
        None,
    );
    assert!(ok, "{out}");
}

/// Every `kdp_*` name in the rules and the dashboard is one the exporter
/// serves (a renamed metric would silently break an alert).
#[test]
fn rules_and_dashboard_use_only_served_metrics() {
    let dir = TempDir::new("names");
    let (_b, _e, _addr, m) = fed_metrics(&dir, &["--producer-ids"]);
    // the owner families, from a cluster with applications
    let (_ob, _oe, owners) = owners_metrics(&dir);
    let served: Vec<&str> = m
        .lines()
        .chain(owners.lines())
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let known = |name: &str| {
        served.contains(&name)
            || ["_bucket", "_sum", "_count"].iter().any(|s| {
                name.strip_suffix(s)
                    .is_some_and(|base| served.contains(&base))
            })
    };
    for file in [
        "deploy/prometheus/kdp-rules.yml",
        "deploy/grafana/kdp-dashboard.json",
    ] {
        let text = std::fs::read_to_string(repo_root().join(file)).unwrap();
        let mut found = 0;
        for (i, _) in text.match_indices("kdp_") {
            let preceded = text[..i]
                .chars()
                .last()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '/');
            if preceded {
                continue;
            }
            let name: String = text[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // prose such as `kdp find-hanging` is not a metric
            if name == "kdp_" {
                continue;
            }
            found += 1;
            assert!(
                known(&name),
                "{file} uses {name}, which the exporter does not serve"
            );
        }
        assert!(found > 5, "{file}: no metric names found");
    }
    let dash: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("deploy/grafana/kdp-dashboard.json")).unwrap(),
    )
    .expect("the dashboard is JSON");
    assert!(dash["panels"].as_array().is_some_and(|p| p.len() > 5));
}

#[test]
fn readyz_waits_for_a_scan_and_sigterm_stops_it_cleanly_with_json_logs() {
    let dir = TempDir::new("term");
    let log = dir.0.join("exporter.log");
    // nothing listens there
    let dead = format!("127.0.0.1:{}", free_port());
    let (mut exp, addr) = exporter(
        &dead,
        &["--interval", "100ms", "--log-format", "json"],
        &log,
    );
    assert_eq!(get(&addr, "/healthz", &[]).0, 200);
    let m = wait_until("a failed scan", || {
        let m = metrics(&addr);
        (scans(&m, "failed") >= 1.0).then_some(m)
    });
    assert_eq!(
        get(&addr, "/readyz", &[]).0,
        503,
        "no scan has reached the cluster"
    );
    assert_eq!(sample(&m, "kdp_scan_stale"), Some(1.0));
    assert_eq!(
        sample(&m, "kdp_last_successful_scan_timestamp_seconds"),
        Some(0.0)
    );
    assert!(
        !m.contains("kdp_producers{"),
        "no values before a scan: {m}"
    );

    let pid = exp.0.id().to_string();
    let st = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(st.success());
    let status = wait_until("the exporter to exit after SIGTERM", || {
        exp.0.try_wait().expect("wait")
    });
    assert_eq!(status.code(), Some(0), "a clean exit");
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: not JSON: {l}")))
        .collect();
    assert!(
        lines.iter().any(
            |l| l["fields"]["message"] == "shutting down" && l["fields"]["signal"] == "SIGTERM"
        ),
        "{text}"
    );
    assert!(
        lines.iter().any(|l| l["level"] == "WARN"),
        "failed scans are warned about: {text}"
    );
}

/// A real Prometheus server (Debian's /usr/bin/prometheus) on a free port
/// with its storage in `dir`, scraping `target` every second as job kdp and
/// evaluating `rules` every second.
fn prometheus(dir: &TempDir, target: &str, rules: &Path) -> (Proc, String) {
    let config = dir.write(
        "prometheus.yml",
        &format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             rule_files:\n  - {}\n\
             scrape_configs:\n  - job_name: kdp\n    static_configs:\n      - targets: ['{target}']\n",
            rules.display()
        ),
    );
    let addr = format!("127.0.0.1:{}", free_port());
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.0.join("data").display()
        ))
        .arg(format!("--web.listen-address={addr}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.0.join("prometheus.log")).unwrap())
        .spawn()
        .expect("prometheus (Debian package prometheus; .ci/run installs it)");
    let proc = Proc(child);
    wait_until("prometheus to be ready", || {
        TcpStream::connect(&addr).ok()?;
        (get(&addr, "/-/ready", &[]).0 == 200).then_some(())
    });
    (proc, addr)
}

fn api(addr: &str, path: &str) -> Value {
    let (status, _, body) = get(addr, path, &[]);
    assert_eq!(status, 200, "{path}: {body}");
    let v: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(v["status"], "success", "{v}");
    v["data"].clone()
}

#[test]
#[ignore = "needs prometheus (Debian package prometheus); scripts/test.sh runs it"]
fn prometheus_scrapes_the_exporter_and_the_hanging_transaction_alert_goes_pending_then_firing() {
    let dir = TempDir::new("prom");
    let (_b, _e, exp_addr, _) = fed_metrics(&dir, &[]);
    // the shipped rules, with every `for:` shortened so the alert fires
    // within the test (the expressions are the shipped ones)
    let shipped =
        std::fs::read_to_string(repo_root().join("deploy/prometheus/kdp-rules.yml")).unwrap();
    let fast: String = shipped
        .lines()
        .map(|l| match l.split_once("for: ") {
            Some((indent, _)) if indent.trim().is_empty() => format!("{indent}for: 4s\n"),
            _ => format!("{l}\n"),
        })
        .collect();
    assert_ne!(fast, shipped);
    let rules = dir.write("rules.yml", &fast);
    let (_prom, prom) = prometheus(&dir, &exp_addr, &rules);

    wait_until("the target to be up", || {
        let t = api(&prom, "/api/v1/targets");
        let active = t["activeTargets"].as_array()?.first()?.clone();
        (active["health"] == "up").then_some(())
    });
    let result = wait_until("kdp_producers in Prometheus", || {
        let d = api(&prom, "/api/v1/query?query=kdp_producers");
        let r = d["result"].as_array()?.clone();
        (!r.is_empty()).then_some(r)
    });
    let orders = result
        .iter()
        .find(|s| s["metric"]["topic"] == "orders")
        .expect("orders in kdp_producers");
    assert_eq!(orders["metric"]["job"], "kdp");
    assert_eq!(orders["value"][1], "3");

    let state = |name: &str| {
        let d = api(&prom, "/api/v1/alerts");
        d["alerts"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|a| a["labels"]["alertname"] == name && a["labels"]["topic"] == "orders")
            .and_then(|a| a["state"].as_str().map(String::from))
    };
    let mut seen = Vec::new();
    wait_until("KdpHangingTransaction to fire", || {
        let s = state("KdpHangingTransaction")?;
        if seen.last() != Some(&s) {
            seen.push(s.clone());
        }
        (s == "firing").then_some(())
    });
    assert_eq!(seen, ["pending", "firing"], "pending first, then firing");
    // the healthy exporter raises none of its own alerts
    let d = api(&prom, "/api/v1/alerts");
    for a in d["alerts"].as_array().into_iter().flatten() {
        let name = a["labels"]["alertname"].as_str().unwrap_or("");
        assert!(
            !matches!(
                name,
                "KdpExporterDown" | "KdpExporterAbsent" | "KdpExporterNotScanning"
            ),
            "{a}"
        );
    }
}

/// Resident memory of a process, from /proc (kB).
fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("VmRSS")
}

#[test]
fn soak_every_scrape_is_answered_while_the_broker_stops_and_restarts() {
    const SCRAPERS: usize = 4;
    const SCRAPES_EACH: usize = 150;
    const RESTARTS: usize = 3;
    let dir = TempDir::new("soak");
    let file = dir.write("cluster.json", &cluster(AFTER));
    let port = free_port();
    let (broker, bootstrap) = mock(&file, port);
    let mut broker = Some(broker);
    let (exp, addr) = exporter(
        &bootstrap,
        &["--interval", "20ms", "--timeout", "2s"],
        &dir.0.join("exporter.log"),
    );
    let pid = exp.0.id();
    // warm up: allocator arenas, connections, a few scans and scrapes
    let m = wait_until("a few scans", || {
        let m = metrics(&addr);
        (scans(&m, "ok") >= 5.0).then_some(m)
    });
    for _ in 0..50 {
        metrics(&addr);
    }
    let rss_before = rss_kb(pid);

    let scrapers: Vec<_> = (0..SCRAPERS)
        .map(|_| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let mut answered = 0;
                for _ in 0..SCRAPES_EACH {
                    let (status, _, body) = get(&addr, "/metrics", &[]);
                    assert_eq!(status, 200);
                    assert!(body.contains("kdp_build_info{"), "{body}");
                    answered += 1;
                }
                answered
            })
        })
        .collect();
    let mut last = m;
    for _ in 0..RESTARTS {
        drop(broker.take());
        last = after_scans(&addr, &last, "failed", 2.0);
        broker = Some(mock(&file, port).0);
        last = after_scans(&addr, &last, "ok", 2.0);
    }
    let answered: usize = scrapers
        .into_iter()
        .map(|t| t.join().expect("scraper"))
        .sum();
    assert_eq!(answered, SCRAPERS * SCRAPES_EACH);

    let m = metrics(&addr);
    assert_eq!(sample(&m, "kdp_scan_overlaps_total"), Some(0.0), "{m}");
    assert_eq!(sample(&m, ORDERS), Some(3.0));
    let rss_after = rss_kb(pid);
    // flat: a leak of even a few bytes per scrape or scan would show over
    // these hundreds of scrapes and scans
    assert!(
        rss_after <= rss_before + 4 * 1024,
        "RSS grew from {rss_before} kB to {rss_after} kB"
    );
    eprintln!(
        "soak: {answered} scrapes, {} ok / {} failed scans, RSS {rss_before} -> {rss_after} kB",
        scans(&m, "ok"),
        scans(&m, "failed")
    );
}

/// The demo cluster on a mock, and an exporter scanning it every 200 ms with
/// `extra` flags: what keeps them running (dropped in order: the exporter,
/// the mock, their directory), and the exporter's address.
fn demo_exporter(name: &str, extra: &[&str]) -> ((Proc, Proc, TempDir), String) {
    let dir = TempDir::new(name);
    let demo = Command::new(KDP)
        .args(["demo", "--print-cluster-file"])
        .output()
        .expect("kdp demo --print-cluster-file");
    let cluster = dir.write("demo.json", &String::from_utf8_lossy(&demo.stdout));
    let (broker, bootstrap) = mock(&cluster, 0);
    let mut args = vec!["--interval", "200ms", "--timeout", "10s"];
    args.extend_from_slice(extra);
    let (exporter, addr) = exporter(&bootstrap, &args, &dir.0.join("exporter.log"));
    ((exporter, broker, dir), addr)
}

/// Without the test hook the exporter diagnoses the cluster itself, with
/// the same code as `kdp find-hanging`: on the demo cluster the partition
/// missing from its transaction hangs, the PrepareCommit long past its
/// timeout is stuck, the fenced instances are counted and the records held
/// back are exported; the ACL-hidden ids are unknown, with no zero hanging
/// series for their topic.
#[test]
fn the_exporter_diagnoses_the_demo_cluster_like_find_hanging() {
    let (_running, addr) = demo_exporter("diagnose", &[]);
    let m = wait_until("a scan with the diagnosis", || {
        let m = metrics(&addr);
        (sample(&m, "kdp_diagnosis_available") == Some(1.0)).then_some(m)
    });
    // every request answered; the unknowns are the ACLs', not a failure
    assert_eq!(scans(&m, "failed"), 0.0, "{m}");
    assert_eq!(
        sample(
            &m,
            r#"kdp_hanging_transactions{topic="ledger",reason="partition_not_in_transaction"}"#
        ),
        Some(1.0),
        "{m}"
    );
    assert_eq!(
        sample(
            &m,
            r#"kdp_stuck_transactions{topic="ledger",reason="prepare_commit"}"#
        ),
        Some(1.0),
        "{m}"
    );
    // hidden by ACLs: unknown, neither hanging nor a zero that claims it
    // was checked
    assert_eq!(
        sample(
            &m,
            r#"kdp_unknown_transactions{topic="payments",reason="not_authorized"}"#
        ),
        Some(1.0),
        "{m}"
    );
    assert!(
        !m.contains(r#"kdp_hanging_transactions{topic="payments""#),
        "no zero for a verdict not made: {m}"
    );
    // payments' 88 blocked records: 78 held by the unknown one, 10 by the
    // live payments-app transaction
    assert_eq!(
        sample(&m, r#"kdp_blocked_records{topic="payments"}"#),
        Some(88.0),
        "{m}"
    );
    for (verdict, records) in [("unknown", 78.0), ("open", 10.0), ("hanging", 0.0)] {
        let series =
            format!("kdp_blocked_records_by_verdict{{topic=\"payments\",verdict=\"{verdict}\"}}");
        assert_eq!(sample(&m, &series), Some(records), "{series}: {m}");
    }
    let blocked = sample(&m, r#"kdp_blocked_records{topic="ledger"}"#).unwrap_or(0.0);
    assert!(blocked >= 80.0 + 68.0 + 28.0, "{m}");
    assert_eq!(
        sample(&m, r#"kdp_fenced_producers{topic="ledger"}"#),
        Some(1.0),
        "{m}"
    ); // replicas are asked only with --compare-replicas
    assert!(
        !m.lines().any(|l| l.starts_with("kdp_replica_divergences{")),
        "{m}"
    );
    // per group, as kdp blocked judges it: payments-ledger waits at the LSO
    // of the hanging payments-0 transaction (78 records) and of the live
    // payments-app one (payments-2: waiting, not counted)
    for (series, value) in [
        (
            r#"kdp_group_blocked_partitions{group="payments-ledger"}"#,
            1.0,
        ),
        (
            r#"kdp_group_blocked_records{group="payments-ledger"}"#,
            78.0,
        ),
        (r#"kdp_group_members{group="payments-ledger"}"#, 1.0),
        (
            r#"kdp_group_blocked_partitions{group="payments-reporting"}"#,
            0.0,
        ),
        (r#"kdp_group_members{group="payments-archive"}"#, 0.0),
    ] {
        assert_eq!(sample(&m, series), Some(value), "{series}: {m}");
    }
}

/// With `--lag` the groups are read once, in the lag's first pass, keeping
/// only the offsets of the pinned partitions' topics for the group series:
/// those series are the ones the whole read gives without `--lag`.
#[test]
fn the_group_series_are_the_same_read_with_the_lag_and_without() {
    let group_series = |extra: &[&str]| {
        let (_running, addr) = demo_exporter("groups-lag", extra);
        let m = wait_until("a scan with the diagnosis", || {
            let m = metrics(&addr);
            (sample(&m, "kdp_diagnosis_available") == Some(1.0)).then_some(m)
        });
        assert_eq!(scans(&m, "failed"), 0.0, "{m}");
        let mut lines: Vec<String> = m
            .lines()
            .filter(|l| l.starts_with("kdp_group_") && !l.starts_with("kdp_group_lag"))
            .map(String::from)
            .collect();
        // the exposition's order is not the point
        lines.sort();
        (lines, m)
    };
    let (without, _) = group_series(&[]);
    let (with, m) = group_series(&["--lag"]);
    assert!(
        m.lines().any(|l| l.starts_with("kdp_group_lag_records{")),
        "the lag was read: {m}"
    );
    assert!(
        without
            .iter()
            .any(|l| l.starts_with(r#"kdp_group_blocked_records{group="payments-ledger"} 78"#)),
        "{without:?}"
    );
    assert_eq!(with, without);
}

/// `kdp demo --owners`' cluster on a mock and an exporter scanning it with
/// --owners: what keeps them running, and its metrics once a scan has the
/// owners.
fn owners_metrics(dir: &TempDir) -> (Proc, Proc, String) {
    let demo = Command::new(KDP)
        .args(["demo", "--owners", "--print-cluster-file"])
        .output()
        .expect("kdp demo --owners --print-cluster-file");
    let cluster = dir.write("owners.json", &String::from_utf8_lossy(&demo.stdout));
    let (broker, bootstrap) = mock(&cluster, 0);
    let (exporter, addr) = exporter(
        &bootstrap,
        &["--interval", "200ms", "--timeout", "10s", "--owners"],
        &dir.0.join("owners-exporter.log"),
    );
    let m = wait_until("a scan with the owners", || {
        let m = metrics(&addr);
        sample(
            &m,
            r#"kdp_owner_orphaned_transactions{framework="kafka-streams",application="orders-app"}"#,
        )
        .map(|_| m)
    });
    (broker, exporter, m)
}

/// With --owners each scan attributes every transactional id as `kdp
/// owners` does: on `kdp demo --owners`' cluster, orders-app has one live
/// instance and two orphaned open transactions (the oldest 9 minutes old),
/// ingest-sink one lingering.
#[test]
fn owners_feed_the_per_application_metrics() {
    let dir = TempDir::new("owners");
    let (_broker, _exporter, m) = owners_metrics(&dir);
    let streams = r#"{framework="kafka-streams",application="orders-app"}"#;
    let flink = r#"{framework="flink-kafka-sink",application="ingest-sink"}"#;
    for (series, value) in [
        (format!("kdp_owner_orphaned_transactions{streams}"), 2.0),
        (format!("kdp_owner_open_transactions{streams}"), 3.0),
        (format!("kdp_owner_live_instances{streams}"), 1.0),
        (format!("kdp_owner_lingering_transactions{flink}"), 1.0),
        (format!("kdp_owner_orphaned_transactions{flink}"), 0.0),
    ] {
        assert_eq!(sample(&m, &series), Some(value), "{series}: {m}");
    }
    let age = sample(&m, &format!("kdp_owner_oldest_orphaned_seconds{streams}")).unwrap();
    assert!((540.0..600.0).contains(&age), "{age}");
    assert_eq!(
        sample(&m, &format!("kdp_owner_oldest_orphaned_seconds{flink}")),
        None
    );
}

/// With --compare-replicas every replica is asked, as `kdp compare-replicas`
/// does: the demo's diverged followers show as the producers that differ
/// (inventory-0: 9101's sequence and 9102 missing on broker 1; orders-2:
/// 5002 older on broker 2), and the topics whose replicas agree as 0.
#[test]
fn compare_replicas_feeds_the_divergence_metric() {
    let (_running, addr) = demo_exporter("diverge", &["--compare-replicas"]);
    let m = wait_until("a scan with the divergences", || {
        let m = metrics(&addr);
        sample(&m, r#"kdp_replica_divergences{topic="inventory"}"#).map(|_| m)
    });
    for (topic, producers) in [("inventory", 2.0), ("orders", 1.0), ("ledger", 0.0)] {
        let series = format!("kdp_replica_divergences{{topic=\"{topic}\"}}");
        assert_eq!(sample(&m, &series), Some(producers), "{topic}: {m}");
    }
}

/// A real cluster: a producer killed inside a transaction shows in the
/// metrics with its age and the records it blocks, and the series go back to
/// zero once `kdp abort` ends the transaction.
#[test]
#[ignore = "needs a real Kafka cluster: run scripts/test.sh"]
fn a_killed_producers_transaction_appears_then_goes_after_kdp_abort_on_real_kafka() {
    let env = common::env();
    let topic = common::unique("kdp-exp-real");
    common::create_topic(&env, &topic, 1);
    let tid = common::unique("kdp-exp-real-tx");
    let opened_before = std::time::SystemTime::now();
    let open = common::open_txn(&env, &topic, 0, &tid, 5);
    let start = open["baseOffset"].as_i64().expect("baseOffset");

    let dir = TempDir::new("real");
    let (_exporter, addr) = exporter(
        &env.bootstrap,
        &["--interval", "1s", "--timeout", "20s", "--topic", &topic],
        &dir.0.join("exporter.log"),
    );
    let series = |name: &str| format!("{name}{{topic=\"{topic}\"}}");
    let m = wait_until("the open transaction in the metrics", || {
        let m = metrics(&addr);
        (sample(&m, &series("kdp_open_transactions")) == Some(1.0)
            && sample(&m, &series("kdp_blocked_records")).is_some())
        .then_some(m)
    });
    assert_eq!(sample(&m, &series("kdp_producers")), Some(1.0), "{m}");
    assert_eq!(sample(&m, &series("kdp_blocked_records")), Some(5.0), "{m}");
    let age = sample(&m, &series("kdp_oldest_open_transaction_age_seconds")).expect("age");
    let since_open = opened_before.elapsed().expect("clock").as_secs_f64();
    assert!(
        (0.0..=since_open + 1.0).contains(&age),
        "the age ({age}) is at most the time since the producer wrote ({since_open})"
    );
    // the coordinator still tracks it (timeout 1 h): not hanging
    assert!(
        !m.lines().any(|l| l.starts_with("kdp_hanging_transactions{")
            && l.contains(&topic)
            && !l.ends_with(" 0")),
        "{m}"
    );

    let so = start.to_string();
    let abort = common::kdp(&[
        "abort",
        "--bootstrap-server",
        &env.bootstrap,
        "--topic",
        &topic,
        "--partition",
        "0",
        "--start-offset",
        &so,
        "--yes",
    ]);
    assert_eq!(abort.code, 0, "{}\n{}", abort.stdout, abort.stderr);
    let m = wait_until("the transaction gone from the metrics", || {
        let m = metrics(&addr);
        (sample(&m, &series("kdp_open_transactions")) == Some(0.0)).then_some(m)
    });
    assert_eq!(sample(&m, &series("kdp_producers")), Some(1.0), "{m}");
    assert_eq!(
        sample(&m, &series("kdp_blocked_records")).unwrap_or(0.0),
        0.0,
        "{m}"
    );
    assert_eq!(
        sample(&m, &series("kdp_oldest_open_transaction_age_seconds")).unwrap_or(0.0),
        0.0,
        "{m}"
    );
}

/// `kdp mock-broker` serving `cluster` on free ports, logging every request
/// (`-vv`) to `log`.
fn logged_mock(cluster: &Path, log: &Path) -> (Proc, String) {
    let mut child = Command::new(KDP)
        .args(["-vv", "mock-broker", "--listen", "127.0.0.1:0", "--cluster"])
        .arg(cluster)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).expect("mock log"))
        .spawn()
        .expect("start kdp mock-broker");
    let bootstrap = first_line(&mut child);
    (Proc(child), bootstrap)
}

/// The diagnosis works from the scan's own DescribeProducers answers: one
/// scan asks each broker once (it asked each twice, the diagnosis
/// describing the cluster again).
#[test]
fn one_scan_describes_each_broker_once_and_the_diagnosis_uses_it() {
    let dir = TempDir::new("one-pass");
    let demo = Command::new(KDP)
        .args(["demo", "--print-cluster-file"])
        .output()
        .expect("kdp demo --print-cluster-file");
    let cluster = dir.write("demo.json", &String::from_utf8_lossy(&demo.stdout));
    let log = dir.0.join("mock.log");
    let (_broker, bootstrap) = logged_mock(&cluster, &log);
    // one scan only
    let (_exp, addr) = exporter(
        &bootstrap,
        &["--interval", "1h", "--timeout", "10s"],
        &dir.0.join("exporter.log"),
    );
    let m = wait_until("the first scan with its diagnosis", || {
        let m = metrics(&addr);
        (sample(&m, "kdp_diagnosis_available") == Some(1.0)).then_some(m)
    });
    assert_eq!(
        sample(
            &m,
            r#"kdp_hanging_transactions{topic="ledger",reason="partition_not_in_transaction"}"#
        ),
        Some(1.0),
        "the diagnosis still sees the open transactions: {m}"
    );
    let text = std::fs::read_to_string(&log).unwrap();
    let mut asked: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" request ") && l.contains("api_key=61 "))
        .filter_map(|l| l.split_whitespace().find(|w| w.starts_with("broker=")))
        .collect();
    assert!(!asked.is_empty(), "no DescribeProducers logged:\n{text}");
    let total = asked.len();
    asked.sort();
    asked.dedup();
    assert_eq!(
        total,
        asked.len(),
        "each broker is asked once per scan ({asked:?}):\n{text}"
    );
}

/// When a broker cannot be asked for its transactions the verdicts it
/// would have decided are unknown: no zero hanging series for them,
/// `kdp_diagnosis_available` 0 and the scan counted as partial (it
/// published a clean 0 with the diagnosis available).
#[test]
fn a_failed_list_transactions_publishes_no_zero_and_the_scan_is_partial() {
    let dir = TempDir::new("listing");
    // broker 2 is advertised where nothing listens (the mock binds
    // 127.0.0.1 only): its ListTransactions fails; broker 1 leads the
    // partition, whose transaction has been idle for an hour
    let file = dir.write(
        "cluster.json",
        r#"{"cluster_id": "exp", "brokers": [{"id": 1}, {"id": 2, "host": "127.0.0.2"}],
            "topics": [{"name": "orders", "partitions": [
              {"partition": 0, "leader": 1, "replicas": [1], "high_watermark": 100,
               "producers": [{"ProducerId": 5, "LastSequence": 3, "LastTimestamp": "now-1h",
                              "CoordinatorEpoch": 1, "CurrentTxnStartOffset": 60}]}]}]}"#,
    );
    let (_broker, bootstrap) = mock(&file, 0);
    let bootstrap = bootstrap.split(',').next().unwrap().to_string();
    let (_exp, addr) = exporter(
        &bootstrap,
        &["--interval", "200ms", "--timeout", "5s"],
        &dir.0.join("exporter.log"),
    );
    let m = wait_until("a scan whose diagnosis got its errors back", || {
        let m = metrics(&addr);
        (m.contains(r#"kdp_unknown_transactions{topic="orders",reason="listing_incomplete"}"#)
            && counted(&m))
        .then_some(m)
    });
    assert_eq!(
        sample(
            &m,
            r#"kdp_unknown_transactions{topic="orders",reason="listing_incomplete"}"#
        ),
        Some(1.0),
        "what it could not decide is said: {m}"
    );
    assert_eq!(scans(&m, "ok"), 0.0, "not a clean scan: {m}");
    assert!(scans(&m, "partial") >= 1.0, "{m}");
    assert_eq!(sample(&m, "kdp_diagnosis_available"), Some(0.0), "{m}");
    assert!(
        !m.contains(r#"kdp_hanging_transactions{topic="orders""#),
        "no zero for a verdict not made: {m}"
    );
    // its records are said to be held by a transaction of unknown verdict
    assert_eq!(
        sample(
            &m,
            r#"kdp_blocked_records_by_verdict{topic="orders",verdict="unknown"}"#
        ),
        Some(40.0),
        "{m}"
    );
    assert_eq!(
        sample(&m, ORDERS),
        Some(1.0),
        "the scan itself is published: {m}"
    );
}

/// A LastTimestamp of 0 or -1 is unknown: no age (it was 56 years), and an
/// open transaction without a time is not judged hanging but unknown.
#[test]
fn unknown_timestamps_give_no_age_and_no_hanging_verdict() {
    let dir = TempDir::new("zero-ts");
    let file = dir.write(
        "cluster.json",
        &cluster(
            r#"{"name": "zero", "partitions": [{"partition": 0, "leader": 1, "replicas": [1], "high_watermark": 50,
                "producers": [
                  {"ProducerId": 1, "LastSequence": 1, "LastTimestamp": 0, "CoordinatorEpoch": 1, "CurrentTxnStartOffset": 10},
                  {"ProducerId": 2, "LastSequence": 1, "LastTimestamp": -1, "CoordinatorEpoch": 1, "CurrentTxnStartOffset": 20}]}]},
               {"name": "mixed", "partitions": [{"partition": 0, "leader": 1, "replicas": [1],
                "producers": [
                  {"ProducerId": 3, "LastSequence": 1, "LastTimestamp": 0, "CurrentTxnStartOffset": 10},
                  {"ProducerId": 4, "LastSequence": 1, "LastTimestamp": "now-2m", "CurrentTxnStartOffset": 20}]}]},
               {"name": "__transaction_state", "partitions": [{"partition": 0, "leader": 1, "replicas": [1]}]}"#,
        ),
    );
    // with a coordinator, and no ACLs: every id may be described, so an
    // unlisted producer with a time would hang
    let (_broker, bootstrap) = mock(&file, 0);
    let (_exp, addr) = exporter(
        &bootstrap,
        &["--interval", "200ms", "--timeout", "5s"],
        &dir.0.join("exporter.log"),
    );
    let m = wait_until("a scan with its diagnosis", || {
        let m = metrics(&addr);
        (sample(&m, "kdp_diagnosis_available") == Some(1.0)).then_some(m)
    });
    assert_eq!(
        sample(&m, r#"kdp_open_transactions{topic="zero"}"#),
        Some(2.0),
        "{m}"
    );
    assert!(
        !m.contains(r#"kdp_oldest_open_transaction_age_seconds{topic="zero"}"#),
        "no age from unknown times: {m}"
    );
    let mixed = sample(
        &m,
        r#"kdp_oldest_open_transaction_age_seconds{topic="mixed"}"#,
    )
    .expect("mixed has one known time");
    assert!(
        mixed < 3600.0,
        "the age is the known time's (2 minutes), not 1970's: {mixed}"
    );
    assert_eq!(
        sample(
            &m,
            r#"kdp_unknown_transactions{topic="zero",reason="unknown_timestamp"}"#
        ),
        Some(2.0),
        "{m}"
    );
    assert!(
        !m.contains(r#"kdp_hanging_transactions{topic="zero""#),
        "{m}"
    );
}

/// `--listen` on a port in use is bad usage (exit 2), said so, before the
/// cluster is asked anything (nothing listens at the bootstrap address).
#[test]
fn listen_on_a_port_in_use_exits_2_and_says_so() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let dead = format!("127.0.0.1:{}", free_port());
    let out = Command::new(KDP)
        .args(["exporter", "--bootstrap-server", &dead, "--listen", &addr])
        .stdin(Stdio::null())
        .output()
        .expect("run kdp exporter");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("in use"), "{stderr}");
    assert!(out.stdout.is_empty(), "no address is printed");
}

/// A wrong SASL password is counted as Kafka names it,
/// SASL_AUTHENTICATION_FAILED, not as a network failure.
#[test]
fn a_refused_sasl_login_is_counted_as_sasl_authentication_failed() {
    let dir = TempDir::new("sasl");
    let mut c: Value = serde_json::from_str(&cluster(BEFORE)).unwrap();
    c["sasl"] = serde_json::json!({"users": [{"name": "alice", "password": "alice-Pw-8c1f0e"}]});
    let file = dir.write("cluster.json", &c.to_string());
    let props = dir.write(
        "client.properties",
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n\
         sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
         username=\"alice\" password=\"not-alices\";\n",
    );
    let (_broker, bootstrap) = mock(&file, 0);
    let props = props.to_string_lossy().into_owned();
    let (_exp, addr) = exporter(
        &bootstrap,
        &[
            "--interval",
            "200ms",
            "--timeout",
            "3s",
            "--command-config",
            &props,
        ],
        &dir.0.join("exporter.log"),
    );
    let m = wait_until("a failed scan", || {
        let m = metrics(&addr);
        (scans(&m, "failed") >= 1.0).then_some(m)
    });
    assert!(
        sample(
            &m,
            r#"kdp_scan_errors_total{error="SASL_AUTHENTICATION_FAILED"}"#
        )
        .unwrap_or(0.0)
            >= 1.0,
        "{m}"
    );
    assert!(
        !m.contains(r#"kdp_scan_errors_total{error="NETWORK_EXCEPTION"}"#),
        "{m}"
    );
    let log = std::fs::read_to_string(dir.0.join("exporter.log")).unwrap();
    assert!(!log.contains("not-alices"), "no secret in the log: {log}");
}

/// 64 idle clients and 64 that pipeline requests and never read their
/// answers do not lock a scrape out (they did: every slot taken, each new
/// connection closed at once), and the log says so in a bounded number of
/// lines (it had one per refused connection).
#[test]
fn a_scrape_is_served_while_64_idle_and_64_non_reading_clients_hold_connections() {
    let dir = TempDir::new("hostile");
    let file = dir.write("cluster.json", &cluster(AFTER));
    let (_broker, bootstrap) = mock(&file, 0);
    let log = dir.0.join("exporter.log");
    let (_exp, addr) = exporter(&bootstrap, &["--interval", "1h", "--timeout", "5s"], &log);
    wait_until("the first scan", || {
        (scans(&metrics(&addr), "ok") >= 1.0).then_some(())
    });
    let idle: Vec<TcpStream> = (0..64)
        .map(|_| TcpStream::connect(&addr).expect("connect"))
        .collect();
    let requests = format!("GET /metrics HTTP/1.1\r\nHost: {addr}\r\n\r\n").repeat(200);
    let non_reading: Vec<TcpStream> = (0..64)
        .map(|_| {
            let mut s = TcpStream::connect(&addr).expect("connect");
            s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
            // the server may already have closed it: that is its business
            let _ = s.write_all(requests.as_bytes());
            s
        })
        .collect();
    // a fresh scrape while all of them are open (get's read timeout is
    // only a bound against hanging)
    let (status, _, body) = get(&addr, "/metrics", &[]);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("kdp_build_info{"), "{body}");
    assert_eq!(get(&addr, "/healthz", &[]).0, 200);
    drop((idle, non_reading));
    let text = std::fs::read_to_string(&log).unwrap();
    let lines = text
        .lines()
        .filter(|l| l.contains("too many connections"))
        .count();
    assert!(
        (1..=2).contains(&lines),
        "{lines} lines about refused or evicted connections:\n{text}"
    );
}

/// `--producer-ids` in front of a mock whose generator makes a producer id
/// every 100 ms: the new-ids counter grows scan by scan, is held while the
/// mock is down (scans fail), and once the mock is back (its generator made
/// again from the file) it goes on from there, every sample read never
/// below the one before; the broker's count and the topic's come back.
#[test]
fn new_producer_ids_only_grow_across_a_restart_of_the_mock() {
    let dir = TempDir::new("pid-churn");
    let file = dir.write(
        "cluster.json",
        r#"{"brokers": [{"id": 1}], "topics": [{"name": "sink", "partitions": [
              {"partition": 0, "leader": 1, "replicas": [1]},
              {"partition": 1, "leader": 1, "replicas": [1]}]}],
            "producer_generators": [{"topic": "sink", "every": "100ms", "start": "now-5s"}]}"#,
    );
    let port = free_port();
    let (broker, bootstrap) = mock(&file, port);
    let (_exp, addr) = exporter(
        &bootstrap,
        &["--interval", "200ms", "--timeout", "5s", "--producer-ids"],
        &dir.0.join("exporter.log"),
    );
    const NEW: &str = r#"kdp_broker_new_producer_ids_total{broker="1"}"#;
    const TOPIC_NEW: &str = r#"kdp_topic_new_producer_ids_total{topic="sink"}"#;
    let mut seen = 0.0;
    let mut read = |m: &str| {
        let v = sample(m, NEW).unwrap_or(0.0);
        assert!(v >= seen, "the counter went from {seen} to {v}:\n{m}");
        seen = v;
        v
    };
    let m = wait_until("ids made while the exporter runs", || {
        let m = metrics(&addr);
        (read(&m) >= 5.0).then_some(m)
    });
    assert_eq!(
        sample(&m, TOPIC_NEW),
        sample(&m, NEW),
        "one broker, one replica"
    );
    let held = sample(&m, r#"kdp_broker_producer_ids{broker="1"}"#).expect("a count");
    assert!(held >= 50.0, "{m}");
    drop(broker);
    let m = after_scans(&addr, &m, "failed", 2.0);
    let before = read(&m);
    let (_broker, _) = mock(&file, port);
    let m = wait_until("the counter going on after the restart", || {
        let m = metrics(&addr);
        (read(&m) >= before + 5.0).then_some(m)
    });
    assert!(
        sample(&m, r#"kdp_broker_producer_ids{broker="1"}"#).is_some(),
        "{m}"
    );
    assert!(
        sample(&m, r#"kdp_topic_producer_ids{topic="sink"}"#).is_some(),
        "{m}"
    );
    assert!(sample(&m, TOPIC_NEW) >= sample(&m, NEW), "{m}");
}
