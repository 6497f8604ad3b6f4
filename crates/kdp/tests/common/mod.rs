//! Helpers for the tests that run `kdp describe` against a real Apache Kafka
//! cluster started by `scripts/kafka-cluster.sh` (see it/README.md).
#![allow(dead_code)] // each test binary uses a different subset

pub mod schema;
pub mod secure;

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use kdp_wire::ErrorCode;
use serde_json::Value;

/// The cluster's environment; panics (the test fails, never skips) when the
/// cluster is not there.
pub struct Env {
    pub bootstrap: String,
    pub classpath: String,
    pub java: String,
    pub state_dir: String,
    /// broker id -> host:port
    pub brokers: Vec<(i32, String)>,
    /// `KDP_IT_JMX`: each broker's JMX port, as `ID=HOST:PORT ...` (empty
    /// when the cluster was started without it).
    pub jmx: String,
    /// The Apache Kafka version the cluster (and the tools on the classpath) run:
    /// `KDP_IT_KAFKA_VERSION`, e.g. "4.4.0" or "3.9.2".
    pub kafka_version: String,
    /// The transaction protocol the cluster speaks, read from its finalized
    /// `transaction.version` (`KDP_IT_TXN_VERSION`): 1 (Kafka 3.9: the epoch
    /// stays across transactions) or 2 (KIP-890: every transaction end bumps it).
    pub txn_version: u8,
}

pub fn env() -> Env {
    let need = |k: &str| {
        std::env::var(k).unwrap_or_else(|_| {
            panic!(
                "{k} is not set: these tests need a real Kafka cluster. Run scripts/test.sh, or \
                 `bash scripts/kafka-cluster.sh start; set -a; . target/kafka-it/cluster.env; set +a` first"
            )
        })
    };
    let brokers = need("KDP_IT_BROKERS")
        .split_whitespace()
        .map(|kv| {
            let (id, addr) = kv.split_once('=').expect("KDP_IT_BROKERS: id=host:port");
            (id.parse().expect("broker id"), addr.to_string())
        })
        .collect();
    Env {
        bootstrap: need("KDP_IT_BOOTSTRAP"),
        classpath: need("KDP_IT_CLASSPATH"),
        java: std::env::var("KDP_IT_JAVA").unwrap_or_else(|_| "java".into()),
        state_dir: need("KDP_IT_STATE_DIR"),
        brokers,
        jmx: std::env::var("KDP_IT_JMX").unwrap_or_default(),
        kafka_version: need("KDP_IT_KAFKA_VERSION"),
        txn_version: match need("KDP_IT_TXN_VERSION").as_str() {
            "1" => 1,
            "2" => 2,
            v => panic!("KDP_IT_TXN_VERSION={v}: want 1 or 2"),
        },
    }
}

impl Env {
    pub fn broker_addr(&self, id: i32) -> &str {
        &self
            .brokers
            .iter()
            .find(|(b, _)| *b == id)
            .expect("broker in KDP_IT_BROKERS")
            .1
    }
}

/// A name no other test (or earlier run) uses.
pub fn unique(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "{prefix}-{}-{}-{}",
        std::process::id(),
        nanos % 1_000_000_000,
        N.fetch_add(1, Ordering::Relaxed)
    )
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

/// Runs a command; fails the test if it does not end within `limit` (a hang).
pub fn run(cmd: &mut Command, limit: Duration) -> Run {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        out.read_to_string(&mut s).unwrap();
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        err.read_to_string(&mut s).unwrap();
        s
    });
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {limit:?} (hang)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = start.elapsed();
    Run {
        code: status.code().unwrap_or(-1),
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
        elapsed,
    }
}

/// `kdp <args>`; at most 60 s.
pub fn kdp(args: &[&str]) -> Run {
    let r = run(
        Command::new(env!("CARGO_BIN_EXE_kdp")).args(args),
        Duration::from_secs(60),
    );
    eprintln!(
        "kdp {} -> exit {} in {:?}\n{}",
        args.join(" "),
        r.code,
        r.elapsed,
        r.stderr
    );
    schema::check(args, &r.stdout);
    r
}

/// `Scenario <sub> --bootstrap ... <args>`: its one JSON line (the test
/// fails if it exits non-zero or prints anything else).
pub fn scenario(env: &Env, sub: &str, args: &[&str]) -> Value {
    let r = scenario_run(env, sub, args);
    assert_eq!(r.code, 0, "Scenario {sub} {args:?} failed:\n{}", r.stderr);
    serde_json::from_str(r.stdout.trim())
        .unwrap_or_else(|e| panic!("Scenario {sub} printed {:?}: {e}", r.stdout))
}

/// `Scenario <sub> --bootstrap ... <args>` as run, for tests that expect it to fail.
pub fn scenario_run(env: &Env, sub: &str, args: &[&str]) -> Run {
    run(
        Command::new(&env.java)
            .args([
                "-cp",
                &env.classpath,
                "dev.kdp.it.Scenario",
                sub,
                "--bootstrap",
                &env.bootstrap,
            ])
            .args(["--timeout-seconds", "90"])
            .args(args),
        Duration::from_secs(120),
    )
}

/// A Scenario process held at a point of its run: it prints a JSON line,
/// waits until its resume file exists (the file is named by `resume_flag`),
/// then goes on and prints more. Killed when dropped.
pub struct Held {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
    resume: std::path::PathBuf,
    sub: String,
}

impl Held {
    /// `Scenario <sub> --bootstrap ... --timeout-seconds <timeout> <args>
    /// <resume_flag> FILE`, and its first line (`what` names it if it never
    /// comes).
    pub fn start(
        env: &Env,
        sub: &str,
        timeout_seconds: u32,
        args: &[&str],
        resume_flag: &str,
        what: &str,
    ) -> (Held, Value) {
        let resume = std::env::temp_dir().join(unique(&format!("kdp-{sub}-resume")));
        let mut child = Command::new(&env.java)
            .args(["-cp", &env.classpath, "dev.kdp.it.Scenario", sub])
            .args(["--bootstrap", &env.bootstrap, "--timeout-seconds"])
            .arg(timeout_seconds.to_string())
            .args(args)
            .arg(resume_flag)
            .arg(&resume)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("start Scenario {sub}: {e}"));
        let out = child.stdout.take().expect("stdout");
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut held = Held {
            child,
            lines,
            resume,
            sub: sub.to_string(),
        };
        let first = held.line(what);
        (held, first)
    }

    /// Its next line, at most two minutes away.
    pub fn line(&mut self, what: &str) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|e| panic!("Scenario {}: no line for {what}: {e}", self.sub));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    /// Lets it go on; its next line.
    pub fn resume(&mut self, what: &str) -> Value {
        std::fs::write(&self.resume, b"go").expect("resume file");
        self.line(what)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.resume);
    }
}

/// Kafka's own `kafka-transactions.sh` (`org.apache.kafka.tools.TransactionsCommand`
/// of the cluster's version) with `--bootstrap-server` and then `args`; at most 120 s.
pub fn transactions_command(env: &Env, args: &[&str]) -> Run {
    run(
        Command::new(&env.java)
            .args([
                "-cp",
                &env.classpath,
                "org.apache.kafka.tools.TransactionsCommand",
                "--bootstrap-server",
                &env.bootstrap,
            ])
            .args(args),
        Duration::from_secs(120),
    )
}

/// A tab-separated table as TransactionsCommand prints it (`describe`,
/// `list`, `find-hanging`): one map from header to trimmed cell per row.
pub fn parse_tool_table(text: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let Some(header) = lines.next() else {
        return vec![];
    };
    let header: Vec<&str> = header.split('\t').map(str::trim).collect();
    lines
        .map(|l| {
            header
                .iter()
                .zip(l.split('\t').map(str::trim))
                .filter(|(h, _)| !h.is_empty())
                .map(|(h, c)| (h.to_string(), c.to_string()))
                .collect()
        })
        .collect()
}

/// `TransactionsCommand describe --transactional-id ID`: its one row.
pub fn kafka_describe_transaction(
    env: &Env,
    transactional_id: &str,
) -> std::collections::BTreeMap<String, String> {
    let r = transactions_command(env, &["describe", "--transactional-id", transactional_id]);
    assert_eq!(
        r.code, 0,
        "TransactionsCommand describe failed:\n{}",
        r.stderr
    );
    let mut rows = parse_tool_table(&r.stdout);
    assert_eq!(rows.len(), 1, "{}", r.stdout);
    rows.remove(0)
}

/// A producer killed inside a transaction of `records` records on
/// `topic`-`partition` (Scenario txn-open, transaction timeout one hour): its
/// one JSON line.
pub fn open_txn(env: &Env, topic: &str, partition: i32, tid: &str, records: u32) -> Value {
    scenario(
        env,
        "txn-open",
        &[
            "--topic",
            topic,
            "--partition",
            &partition.to_string(),
            "--records",
            &records.to_string(),
            "--transactional-id",
            tid,
            "--transaction-timeout-ms",
            "3600000",
        ],
    )
}

pub fn create_topic(env: &Env, topic: &str, partitions: u32) -> Value {
    create_topic_rf(env, topic, partitions, 3)
}

/// `topic` with `partitions` partitions of `replication_factor` replicas.
pub fn create_topic_rf(env: &Env, topic: &str, partitions: u32, replication_factor: u32) -> Value {
    scenario(
        env,
        "create-topic",
        &[
            "--topic",
            topic,
            "--partitions",
            &partitions.to_string(),
            "--replication-factor",
            &replication_factor.to_string(),
        ],
    )
}

/// One row of `TransactionsCommand describe-producers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerRow {
    pub producer_id: i64,
    pub producer_epoch: i32,
    pub coordinator_epoch: i32,
    pub last_sequence: i32,
    pub last_timestamp: i64,
    /// -1 for "None"
    pub current_txn_start_offset: i64,
}

/// Kafka's own `kafka-transactions.sh describe-producers`, parsed. Rows sorted by producer id.
pub fn kafka_describe_producers(
    env: &Env,
    topic: &str,
    partition: i32,
    broker_id: Option<i32>,
) -> Vec<ProducerRow> {
    let p = partition.to_string();
    let b = broker_id.map(|b| b.to_string());
    let mut args = vec!["describe-producers", "--topic", topic, "--partition", &p];
    if let Some(b) = &b {
        args.extend(["--broker-id", b.as_str()]);
    }
    let r = transactions_command(env, &args);
    assert_eq!(r.code, 0, "TransactionsCommand failed:\n{}", r.stderr);
    parse_kafka_table(&r.stdout)
}

pub fn parse_kafka_table(text: &str) -> Vec<ProducerRow> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines
        .next()
        .expect("header")
        .split('\t')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        header,
        [
            "ProducerId",
            "ProducerEpoch",
            "LatestCoordinatorEpoch",
            "LastSequence",
            "LastTimestamp",
            "CurrentTransactionStartOffset"
        ]
    );
    let mut rows: Vec<ProducerRow> = lines
        .map(|l| {
            let c: Vec<&str> = l.split('\t').map(str::trim).collect();
            ProducerRow {
                producer_id: c[0].parse().unwrap(),
                producer_epoch: c[1].parse().unwrap(),
                coordinator_epoch: c[2].parse().unwrap(),
                last_sequence: c[3].parse().unwrap(),
                last_timestamp: c[4].parse().unwrap(),
                current_txn_start_offset: if c[5] == "None" {
                    -1
                } else {
                    c[5].parse().unwrap()
                },
            }
        })
        .collect();
    rows.sort_by_key(|r| r.producer_id);
    rows
}

/// The rows of one partition in kdp's `--output json` document (read with
/// kdp-wire's strict JSON reader, as `kdp decode` reads it).
pub fn json_partition(
    doc: &kdp_wire::messages::DescribeProducersResponse,
    topic: &str,
    partition: i32,
) -> Vec<ProducerRow> {
    let t = doc
        .topics
        .iter()
        .find(|t| t.name == topic)
        .unwrap_or_else(|| panic!("topic {topic} not in output"));
    let p = t
        .partitions
        .iter()
        .find(|p| p.partition_index == partition)
        .unwrap_or_else(|| panic!("{topic}-{partition} not in output"));
    assert_eq!(
        p.error_code,
        ErrorCode::NONE,
        "{topic}-{partition}: {:?}",
        p.error_message
    );
    p.active_producers
        .iter()
        .map(|s| ProducerRow {
            producer_id: s.producer_id,
            producer_epoch: s.producer_epoch,
            coordinator_epoch: s.coordinator_epoch,
            last_sequence: s.last_sequence,
            last_timestamp: s.last_timestamp,
            current_txn_start_offset: s.current_txn_start_offset,
        })
        .collect()
}

pub fn parse_json_doc(stdout: &str) -> kdp_wire::messages::DescribeProducersResponse {
    kdp_wire::json::from_str(stdout).unwrap_or_else(|e| {
        panic!("kdp --output json is not a DescribeProducersResponse: {e}\n{stdout}")
    })
}

pub fn parse_jsonl(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad jsonl line {l:?}: {e}")))
        .collect()
}

/// A producer line of `--output jsonl` as a row.
pub fn jsonl_row(v: &Value) -> ProducerRow {
    let i = |k: &str| {
        v[k].as_i64()
            .unwrap_or_else(|| panic!("{k} missing in {v}"))
    };
    ProducerRow {
        producer_id: i("ProducerId"),
        producer_epoch: i("ProducerEpoch") as i32,
        coordinator_epoch: i("CoordinatorEpoch") as i32,
        last_sequence: i("LastSequence") as i32,
        last_timestamp: i("LastTimestamp"),
        current_txn_start_offset: i("CurrentTxnStartOffset"),
    }
}

/// What a Scenario line says the partition's producer state is.
pub fn scenario_row(v: &Value) -> ProducerRow {
    let i = |k: &str| {
        v[k].as_i64()
            .unwrap_or_else(|| panic!("{k} missing in {v}"))
    };
    ProducerRow {
        producer_id: i("producerId"),
        producer_epoch: i("producerEpoch") as i32,
        coordinator_epoch: i("coordinatorEpoch") as i32,
        last_sequence: i("lastSequence") as i32,
        last_timestamp: i("lastTimestamp"),
        current_txn_start_offset: i("currentTransactionStartOffset"),
    }
}

/// `describe`'s JSON document (the seed's shape, with or without
/// `--with-transactions`) as one object per producer, each with its
/// `Topic` and `Partition` beside the producer's own fields.
pub fn describe_rows(doc: &Value) -> Vec<Value> {
    let mut rows = Vec::new();
    for t in doc["Topics"].as_array().into_iter().flatten() {
        for p in t["Partitions"].as_array().into_iter().flatten() {
            for q in p["ActiveProducers"].as_array().into_iter().flatten() {
                let mut row = q.clone();
                if let Some(obj) = row.as_object_mut() {
                    obj.insert("Topic".into(), t["Name"].clone());
                    obj.insert("Partition".into(), p["PartitionIndex"].clone());
                }
                rows.push(row);
            }
        }
    }
    rows
}
