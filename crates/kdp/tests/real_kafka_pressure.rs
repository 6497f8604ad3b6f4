//! `kdp producers` against a real Apache Kafka cluster (started by
//! `scripts/kafka-cluster.sh`, both generations), with the brokers' own
//! JMX gauge `kafka.server:type=ReplicaManager,name=ProducerIdCount` as the
//! oracle for the per-broker count, and real Java producers (Scenario
//! `producer-burst`: a few hundred idempotent and transactional producers,
//! one transactional id per task under a prefix).
//!
//! The cluster's nodes 1 and 2 check for expired producer ids every second
//! and node 3 once a day (`producer.id.expiration.check.interval.ms`, read
//! at start; see scripts/kafka-cluster.sh): with Kafka's default
//! `producer.id.expiration.ms` of a day that changes nothing the other tests
//! see; once a test here shortens it (dynamically, cluster-wide, restored
//! afterwards even on failure) nodes 1 and 2 expire idle ids and node 3
//! holds them past the setting.
//!
//! The gauge counts every producer id of the broker, so the tests of this
//! file run one at a time (a lock), and every wait is for a condition,
//! bounded in attempts, never a time.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;

mod common;
use common::{env, kdp, scenario, unique, Env};

/// The gauge is per broker: one test at a time.
static BROKER_WIDE: Mutex<()> = Mutex::new(());

/// Each broker's `ProducerIdCount`, over JMX.
fn gauges(env: &Env) -> BTreeMap<i32, i64> {
    assert!(
        !env.jmx.is_empty(),
        "KDP_IT_JMX is not set: start the cluster with this checkout's scripts/kafka-cluster.sh"
    );
    let out = scenario(env, "jmx-gauge", &["--jmx", &env.jmx]);
    out["values"]
        .as_object()
        .expect("values")
        .iter()
        .map(|(b, v)| {
            (
                b.parse().expect("broker id"),
                v.as_i64().unwrap_or_else(|| panic!("gauge {v}")),
            )
        })
        .collect()
}

/// `kdp producers --output json <args>`: exit status and document.
fn producers(env: &Env, args: &[&str]) -> (i32, Value) {
    let mut all = vec![
        "producers",
        "--bootstrap-server",
        &env.bootstrap,
        "--output",
        "json",
        "--timeout",
        "60s",
    ];
    all.extend_from_slice(args);
    let r = kdp(&all);
    let doc = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("kdp producers: {e}\n{}\n{}", r.stdout, r.stderr));
    (r.code, doc)
}

fn broker(doc: &Value, id: i32) -> &Value {
    doc["Brokers"]
        .as_array()
        .expect("Brokers")
        .iter()
        .find(|b| b["Broker"] == id)
        .unwrap_or_else(|| panic!("broker {id} in {doc}"))
}

/// kdp's count per broker (every broker answered fully, else `None`).
fn counts(doc: &Value) -> Option<BTreeMap<i32, i64>> {
    doc["Brokers"]
        .as_array()?
        .iter()
        .map(|b| {
            (b["Answered"] == true && b["Complete"] == true).then(|| {
                (
                    b["Broker"].as_i64().unwrap_or(-1) as i32,
                    b["ProducerIds"].as_i64().unwrap_or(-1),
                )
            })
        })
        .collect()
}

/// The ids broker `b` holds for `topic`, as kdp reports them.
fn held(doc: &Value, b: i32, topic: &str) -> Vec<i64> {
    doc["Held"][b.to_string()][topic]
        .as_array()
        .map(|ids| ids.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_default()
}

/// A scan with the gauges read just before and just after it, once they
/// agree with each other (no producer id came or went during the scan)
/// and `done` holds; bounded in attempts.
fn settled(
    env: &Env,
    what: &str,
    done: impl Fn(&BTreeMap<i32, i64>, &Value) -> bool,
) -> (BTreeMap<i32, i64>, Value) {
    let mut last = String::new();
    for _ in 0..60 {
        let before = gauges(env);
        let (_, doc) = producers(env, &[]);
        let after = gauges(env);
        if before == after && done(&after, &doc) {
            return (after, doc);
        }
        last = format!("gauges {before:?} -> {after:?}, kdp {:?}", counts(&doc));
        std::thread::sleep(Duration::from_millis(500));
    }
    panic!("gave up waiting: {what}; last: {last}");
}

fn create_topic(env: &Env, topic: &str, partitions: u32) {
    scenario(
        env,
        "create-topic",
        &[
            "--topic",
            topic,
            "--partitions",
            &partitions.to_string(),
            "--replication-factor",
            "3",
        ],
    );
}

/// `count` new producers writing every partition of `topic`; their ids.
fn burst(env: &Env, topic: &str, count: u32, transactional_prefix: Option<&str>) -> Vec<i64> {
    let n = count.to_string();
    let mut args = vec!["--topic", topic, "--producers", &n];
    if let Some(p) = transactional_prefix {
        args.extend_from_slice(&["--transactional-prefix", p]);
    }
    let out = scenario(env, "producer-burst", &args);
    let ids: Vec<i64> = out["producerIds"]
        .as_array()
        .expect("producerIds")
        .iter()
        .filter_map(Value::as_i64)
        .collect();
    assert_eq!(ids.len(), count as usize, "{out}");
    ids
}

/// Restores `producer.id.expiration.ms` to Kafka's default when dropped,
/// whatever the test did: the other tests rely on it.
struct Expiration<'a>(&'a Env);

impl<'a> Expiration<'a> {
    fn set(env: &'a Env, ms: u64) -> Expiration<'a> {
        let guard = Expiration(env);
        scenario(
            env,
            "broker-config",
            &[
                "--name",
                "producer.id.expiration.ms",
                "--set",
                &ms.to_string(),
            ],
        );
        guard
    }
}

impl Drop for Expiration<'_> {
    fn drop(&mut self) {
        let r = common::scenario_run(
            self.0,
            "broker-config",
            &["--name", "producer.id.expiration.ms", "--delete", "true"],
        );
        // a failure here would change every later test: say so loudly
        if r.code != 0 {
            eprintln!("could not restore producer.id.expiration.ms:\n{}", r.stderr);
            if !std::thread::panicking() {
                panic!("could not restore producer.id.expiration.ms");
            }
        }
    }
}

/// A few hundred idempotent and transactional producers (one id per task
/// under a prefix), then no producer running: kdp's count per broker (one
/// per partition replica and producer) equals each broker's
/// ProducerIdCount, and both grew by exactly the burst's ids.
#[test]
#[ignore = "needs a real Kafka cluster (scripts/kafka-cluster.sh start)"]
fn per_broker_count_equals_each_brokers_producer_id_count_gauge() {
    let _one = BROKER_WIDE.lock().unwrap_or_else(PoisonError::into_inner);
    let env = env();
    let topic = unique("pressure-gauge");
    create_topic(&env, &topic, 3);
    let (before, _) = settled(&env, "the gauges before the burst", |_, _| true);
    // a prefix that ends in a letter: kdp takes trailing numbers for counters
    let prefix = format!("{}-sink", unique("flink"));
    let idempotent = burst(&env, &topic, 120, None);
    let transactional = burst(&env, &topic, 120, Some(&prefix));
    let (after, doc) = settled(&env, "kdp's count per broker equals the gauge", |g, doc| {
        counts(doc).as_ref() == Some(g)
    });
    eprintln!("ProducerIdCount {before:?} -> {after:?}");
    // 240 producers on 3 partitions, a replica of each on every broker
    for (b, n) in &after {
        assert_eq!(n - before[b], 720, "broker {b}: {before:?} -> {after:?}");
        assert_eq!(held(&doc, *b, &topic).len(), 240, "broker {b}");
    }
    let t = doc["Topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["Topic"] == topic.as_str())
        .expect("the topic");
    assert_eq!(t["ProducerIds"], 2160, "{t}");
    assert_eq!(t["DistinctProducers"], 240, "{t}");
    // every id kdp holds for the topic is one the producers were given
    let mut given: Vec<i64> = idempotent.iter().chain(&transactional).copied().collect();
    given.sort_unstable();
    assert_eq!(held(&doc, 1, &topic), given);
    // the transactional ids: one per task under the prefix
    let p = doc["Prefixes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["Prefix"] == prefix.as_str())
        .unwrap_or_else(|| panic!("{prefix} in {}", doc["Prefixes"]));
    assert_eq!(
        (p["Tail"].clone(), p["TransactionalIds"].clone()),
        ("counter".into(), 120.into())
    );
    let b1 = broker(&doc, 1);
    assert!(b1["Transactional"].as_i64().unwrap() >= 360, "{b1}");
    assert!(b1["Idempotent"].as_i64().unwrap() >= 360, "{b1}");
}

/// After a burst of new producers, `--since` a scan from before counts
/// exactly them as new on every broker, and nothing else.
#[test]
#[ignore = "needs a real Kafka cluster (scripts/kafka-cluster.sh start)"]
fn a_burst_of_new_producers_is_counted_as_churn() {
    let _one = BROKER_WIDE.lock().unwrap_or_else(PoisonError::into_inner);
    let env = env();
    let topic = unique("pressure-churn");
    create_topic(&env, &topic, 2);
    let (_, before) = producers(&env, &[]);
    let file = std::env::temp_dir().join(format!("{topic}.json"));
    std::fs::write(&file, before.to_string()).expect("write the baseline");
    let ids = burst(&env, &topic, 100, None);
    let path = file.to_string_lossy().into_owned();
    let (code, doc) = producers(&env, &["--since", &path, "--max-new-per-second", "0.001"]);
    let _ = std::fs::remove_file(&file);
    assert_eq!(code, 4, "a rate above the threshold: {doc}");
    for b in [1, 2, 3] {
        let row = doc["Churn"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["Broker"] == b && c["Topic"] == topic.as_str())
            .unwrap_or_else(|| panic!("churn of broker {b}: {}", doc["Churn"]));
        assert_eq!(
            (row["New"].clone(), row["Gone"].clone()),
            (100.into(), 0.into()),
            "{row}"
        );
        assert!(row["NewPerSecond"].as_f64().unwrap() > 0.0);
        let mut want = ids.clone();
        want.sort_unstable();
        assert_eq!(held(&doc, b, &topic), want);
    }
    let others: i64 = doc["Churn"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["Topic"] != topic.as_str())
        .map(|c| c["New"].as_i64().unwrap_or(0))
        .sum();
    assert_eq!(others, 0, "{}", doc["Churn"]);
}

/// `producer.id.expiration.ms` shortened dynamically: a burst's idle ids
/// are reported as expiring within the hour under the new setting, then
/// leave brokers 1 and 2 (their check runs every second), kdp and the
/// gauge alike, while broker 3 (its check runs once a day) holds them and
/// kdp reports them past expiration; kdp's counts equal the gauges all
/// along.
#[test]
#[ignore = "needs a real Kafka cluster (scripts/kafka-cluster.sh start)"]
fn shortened_expiration_expires_idle_ids_and_a_broker_checking_rarely_holds_them_past_it() {
    const EXPIRATION_MS: i64 = 30_000;
    let _one = BROKER_WIDE.lock().unwrap_or_else(PoisonError::into_inner);
    let env = env();
    let topic = unique("pressure-expiry");
    create_topic(&env, &topic, 3);
    let _restore = Expiration::set(&env, EXPIRATION_MS as u64);
    let ids = burst(&env, &topic, 60, None);
    let (code, doc) = producers(&env, &[]);
    assert!(code == 0 || code == 4, "{doc}");
    for b in [1, 2, 3] {
        let row = broker(&doc, b);
        assert_eq!(row["ExpirationMs"], EXPIRATION_MS, "{row}");
        if held(&doc, b, &topic).len() == 60 {
            // 60 producers on 3 partitions, all idle for less than the setting
            assert!(row["ExpiringWithinHour"].as_i64().unwrap() >= 180, "{row}");
        } else {
            panic!(
                "broker {b} dropped the burst before the scan (slower than {EXPIRATION_MS} ms?): {row}"
            );
        }
    }
    let (gauges_gone, doc) = settled(
        &env,
        "the burst expired on brokers 1 and 2, and kdp equals the gauges",
        |g, doc| {
            [1, 2].iter().all(|&b| held(doc, b, &topic).is_empty())
                && counts(doc).as_ref() == Some(g)
        },
    );
    eprintln!("ProducerIdCount after expiry: {gauges_gone:?}");
    let three = broker(&doc, 3);
    assert_eq!(
        held(&doc, 3, &topic).len(),
        60,
        "broker 3 checks once a day: {three}"
    );
    assert!(
        three["PastExpiration"].as_i64().unwrap() >= 180,
        "held past the setting: {three}"
    );
    for b in [1, 2] {
        assert_eq!(
            broker(&doc, b)["PastExpiration"],
            0,
            "broker {b} expires them"
        );
    }
    let mut want = ids;
    want.sort_unstable();
    assert_eq!(held(&doc, 3, &topic), want);
}
