//! `--producer-ids` scans against kdp-server's handling behind in-memory
//! streams, on tokio's paused clock: every replica counted per broker and
//! topic as the cluster holds it, a broker or topic some replica of which
//! did not answer without series (never a count of part of it), expiry
//! series only with the broker's setting, and new-id counters that only
//! grow while a broker goes away and comes back.

use std::sync::Arc;
use std::time::Duration;

use kdp_client::Client;
use kdp_server::Cluster;
use kdp_test_support::{Fault, StallCluster};
use kdp_wire::api;
use kdp_wire::messages::ProducerState;
use prometheus_client::metrics::counter::Counter;
use tokio::time::Instant;

use super::*;
use crate::exporter::diagnosis::FileDiagnosis;
use crate::exporter::exposition::{encode, Format};
use crate::exporter::metrics::Health;

const BUDGET: Duration = Duration::from_secs(10);

/// A scanner with `--producer-ids` over `cluster`, already connected, with
/// an empty diagnosis (the test is about producer ids).
async fn scanner(cluster: &StallCluster, dir: &std::path::Path) -> Scanner {
    let diagnosis = dir.join("diagnosis.json");
    std::fs::write(&diagnosis, "{}").expect("write the diagnosis");
    let client = cluster.client_config();
    let connected = Client::connect(cluster.bootstrap(), client.clone())
        .await
        .expect("the cluster answers");
    Scanner {
        config: ScanConfig {
            bootstrap: cluster.bootstrap(),
            client,
            request_timeout: Duration::from_secs(30),
            timeout: BUDGET,
            interval: Duration::from_secs(60),
            topics: None,
            per_partition: false,
            max_partitions_per_request: 10_000,
            producer_ids: Some(PressureConfig::default()),
            owners: false,
        },
        shared: Arc::new(Shared::new(Health::new(60.0), false)),
        diagnose: Arc::new(FileDiagnosis(diagnosis)),
        client: Some(Arc::new(connected)),
        previous: BTreeMap::new(),
        pressure: Some(Tracker::new(PressureConfig::default())),
    }
}

struct Dir(std::path::PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let d = std::env::temp_dir().join(format!(
            "kdp-pressure-scan-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&d).expect("temp dir");
        Dir(d)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn published(s: &Scanner) -> String {
    encode(&s.shared.current(), Format::Text).expect("encodes")
}

fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

fn scans(s: &Scanner, result: &str) -> u64 {
    let c: Counter = s
        .shared
        .health
        .scans
        .get_or_create(&vec![("result", result.to_string())])
        .clone();
    c.get()
}

/// What `broker` holds by the cluster's own model: one per partition
/// replica hosted online there and producer (the oracle the exporter's
/// count must equal).
fn held_on(c: &Cluster, broker: i32) -> usize {
    c.topics
        .iter()
        .flat_map(|t| &t.partitions)
        .filter(|p| p.is_replica(broker) && !p.is_offline_on(broker))
        .map(|p| p.producers_on(broker).len())
        .sum()
}

/// What the replicas of `topic` hold together, by the model.
fn held_for(c: &Cluster, topic: &str) -> usize {
    c.topic(topic)
        .map(|t| {
            t.partitions
                .iter()
                .flat_map(|p| p.replicas.iter().map(move |&b| p.producers_on(b).len()))
                .sum()
        })
        .unwrap_or(0)
}

/// On the demo, broker 3's log of payments-2 is offline (it answers
/// KAFKA_STORAGE_ERROR there): brokers 1 and 2 are counted exactly as the
/// cluster holds them, broker 3 and the payments topic have no series,
/// every other topic is counted over all its replicas, and the scan is
/// partial.
#[tokio::test(start_paused = true)]
async fn every_replica_counts_and_a_broker_short_of_one_partition_has_no_series() {
    let dir = Dir::new("demo");
    let cluster = StallCluster::demo();
    let mut s = scanner(&cluster, &dir.0).await;
    let start = Instant::now();
    s.scan().await;
    assert!(start.elapsed() < BUDGET);
    let text = published(&s);
    let c = cluster.cluster().clone();
    for b in [1, 2] {
        assert_eq!(
            sample(
                &text,
                &format!(r#"kdp_broker_producer_ids{{broker="{b}"}}"#)
            ),
            Some(held_on(&c, b) as f64),
            "broker {b}: {text}"
        );
    }
    assert!(held_on(&c, 1) > 0);
    assert_eq!(
        sample(&text, r#"kdp_broker_producer_ids{broker="3"}"#),
        None,
        "broker 3 did not answer for payments-2: {text}"
    );
    assert_eq!(
        sample(&text, r#"kdp_topic_producer_ids{topic="payments"}"#),
        None
    );
    for topic in ["orders", "ledger", "inventory"] {
        assert_eq!(
            sample(
                &text,
                &format!(r#"kdp_topic_producer_ids{{topic="{topic}"}}"#)
            ),
            Some(held_for(&c, topic) as f64),
            "{topic}: {text}"
        );
    }
    // orders-3 holds the seed's producer at epoch 12
    assert_eq!(
        sample(&text, r#"kdp_topic_max_producer_epoch{topic="orders"}"#),
        Some(12.0)
    );
    assert_eq!(
        sample(
            &text,
            r#"kdp_topic_producers_near_epoch_exhaustion{topic="orders"}"#
        ),
        Some(0.0)
    );
    // the demo's brokers use Kafka's default day
    assert!(sample(
        &text,
        r#"kdp_broker_producer_ids_past_expiration{broker="1"}"#
    )
    .is_some());
    assert_eq!((scans(&s, "ok"), scans(&s, "partial")), (0, 1), "{text}");
    // the first answer is the baseline: counters at 0
    assert_eq!(
        sample(&text, r#"kdp_broker_new_producer_ids_total{broker="1"}"#),
        Some(0.0),
        "{text}"
    );
}

/// Two brokers, `t` with two partitions on both.
const TWO: &str = r#"{"brokers": [{"id": 1, "configs": {"producer.id.expiration.ms": "3600000"}}, {"id": 2}],
 "topics": [{"name": "t", "partitions": [
   {"partition": 0, "leader": 1, "replicas": [1, 2],
    "producers": [{"ProducerId": 1, "LastTimestamp": "now-50m"}, {"ProducerId": 2, "LastTimestamp": "now-2h"}]},
   {"partition": 1, "leader": 2, "replicas": [2, 1],
    "producers": [{"ProducerId": 1, "LastTimestamp": "now-50m"},
                  {"ProducerId": 3, "ProducerEpoch": 32767, "LastTimestamp": "now-1m", "CoordinatorEpoch": 1}]}]}]}"#;

fn add_producers(cluster: &StallCluster, partition: i32, ids: std::ops::Range<i64>) {
    cluster.update(|c| {
        let p = c.partition_mut("t", partition).expect("t");
        for id in ids {
            p.producers.push(ProducerState {
                producer_id: id,
                last_timestamp: kdp_workflows::clock::now_ms(),
                ..Default::default()
            });
        }
    });
}

/// Expiry per broker setting; DescribeConfigs that does not answer leaves
/// the broker's expiry series out (never a zero for a check not made)
/// while its count stands.
#[tokio::test(start_paused = true)]
async fn expiry_series_only_with_the_brokers_setting() {
    let dir = Dir::new("expiry");
    let cluster = StallCluster::from_json(TWO).expect("cluster");
    let mut s = scanner(&cluster, &dir.0).await;
    s.scan().await;
    let text = published(&s);
    assert_eq!((scans(&s, "ok"), scans(&s, "partial")), (1, 0), "{text}");
    // broker 1 (an hour): 1 (on both partitions) and 3 expire within it, 2 is past it
    let one = |name: &str, b: i32| sample(&text, &format!(r#"{name}{{broker="{b}"}}"#));
    assert_eq!(one("kdp_broker_producer_ids", 1), Some(4.0), "{text}");
    assert_eq!(
        one("kdp_broker_producer_ids_expiring_within_hour", 1),
        Some(3.0)
    );
    assert_eq!(one("kdp_broker_producer_ids_past_expiration", 1), Some(1.0));
    // broker 2 (a day): nothing within the hour, nothing past
    assert_eq!(
        one("kdp_broker_producer_ids_expiring_within_hour", 2),
        Some(0.0)
    );
    assert_eq!(one("kdp_broker_producer_ids_past_expiration", 2), Some(0.0));
    assert_eq!(
        sample(
            &text,
            r#"kdp_topic_producers_near_epoch_exhaustion{topic="t"}"#
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(&text, r#"kdp_topic_max_producer_epoch{topic="t"}"#),
        Some(32767.0)
    );

    cluster.stall_on(2, api::DESCRIBE_CONFIGS);
    let start = Instant::now();
    s.scan().await;
    assert!(start.elapsed() <= BUDGET, "{:?}", start.elapsed());
    let text = published(&s);
    let one = |name: &str, b: i32| sample(&text, &format!(r#"{name}{{broker="{b}"}}"#));
    assert_eq!(scans(&s, "partial"), 1, "{text}");
    assert_eq!(one("kdp_broker_producer_ids", 2), Some(4.0), "{text}");
    assert_eq!(
        one("kdp_broker_producer_ids_expiring_within_hour", 2),
        None,
        "{text}"
    );
    assert_eq!(one("kdp_broker_producer_ids_past_expiration", 2), None);
    assert_eq!(one("kdp_broker_producer_ids_past_expiration", 1), Some(1.0));
}

/// New ids are counted per broker and topic against each broker's last
/// answer; a broker that stops answering loses its gauges (and the topic
/// its own) but not its counter, and once back it is compared with its last
/// answer, so the counters only grow and count each id once.
#[tokio::test(start_paused = true)]
async fn new_ids_only_grow_while_a_broker_goes_away_and_comes_back() {
    let dir = Dir::new("churn");
    let cluster = StallCluster::from_json(TWO).expect("cluster");
    let mut s = scanner(&cluster, &dir.0).await;
    s.scan().await;
    let counter = |s: &Scanner, b: i32| {
        sample(
            &published(s),
            &format!(r#"kdp_broker_new_producer_ids_total{{broker="{b}"}}"#),
        )
    };
    let topic_counter = |s: &Scanner| {
        sample(
            &published(s),
            r#"kdp_topic_new_producer_ids_total{topic="t"}"#,
        )
    };
    assert_eq!((counter(&s, 1), counter(&s, 2)), (Some(0.0), Some(0.0)));

    // three new producers on t-0 (both brokers hold it)
    add_producers(&cluster, 0, 100..103);
    s.scan().await;
    assert_eq!((counter(&s, 1), counter(&s, 2)), (Some(3.0), Some(3.0)));
    assert_eq!(topic_counter(&s), Some(6.0));

    // broker 2 goes away; two more producers arrive meanwhile
    cluster.fault_on(2, api::DESCRIBE_PRODUCERS, Fault::Cut);
    add_producers(&cluster, 1, 200..202);
    s.scan().await;
    let text = published(&s);
    assert_eq!(
        sample(&text, r#"kdp_broker_producer_ids{broker="2"}"#),
        None,
        "{text}"
    );
    assert_eq!(
        sample(&text, r#"kdp_topic_producer_ids{topic="t"}"#),
        None,
        "{text}"
    );
    assert_eq!(
        sample(&text, r#"kdp_broker_producer_ids{broker="1"}"#),
        Some(9.0),
        "{text}"
    );
    assert_eq!((counter(&s, 1), counter(&s, 2)), (Some(5.0), Some(3.0)));
    assert!(scans(&s, "partial") >= 1);

    // back: only the two it missed are new to it
    cluster.fault_on(2, api::DESCRIBE_PRODUCERS, Fault::Delay(Duration::ZERO));
    s.scan().await;
    let text = published(&s);
    assert_eq!(
        sample(&text, r#"kdp_broker_producer_ids{broker="2"}"#),
        Some(9.0),
        "{text}"
    );
    assert_eq!((counter(&s, 1), counter(&s, 2)), (Some(5.0), Some(5.0)));
    assert_eq!(topic_counter(&s), Some(10.0));

    // ids that expire are gone, not negative churn
    cluster.update(|c| {
        c.partition_mut("t", 0)
            .expect("t")
            .producers
            .retain(|p| p.producer_id < 100)
    });
    s.scan().await;
    assert_eq!((counter(&s, 1), counter(&s, 2)), (Some(5.0), Some(5.0)));
    assert_eq!(
        sample(&published(&s), r#"kdp_broker_producer_ids{broker="1"}"#),
        Some(6.0)
    );
}

/// The series of a scan that come from the leaders' answers (no
/// producer-id family, no scan bookkeeping; no ages, which follow the
/// clock the clusters were made at).
fn leaders_series(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| {
            [
                "kdp_producers",
                "kdp_open_transactions",
                "kdp_scan_partitions",
                "kdp_scan_stale",
                "kdp_scan_errors",
            ]
            .iter()
            .any(|f| l.starts_with(f))
        })
        .collect();
    lines.sort_unstable();
    lines
}

/// The same scanner without `--producer-ids`: the leaders' describe alone.
async fn leaders_only(cluster: &StallCluster, dir: &std::path::Path) -> Scanner {
    let mut s = scanner(cluster, dir).await;
    s.config.producer_ids = None;
    s.pressure = None;
    s
}

/// Every partition replica of the model, sorted: what a scan that asks
/// each once asks.
fn every_replica(c: &Cluster) -> Vec<(i32, String, i32)> {
    let mut every: Vec<(i32, String, i32)> = c
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions.iter().flat_map(move |p| {
                p.replicas
                    .iter()
                    .map(move |b| (*b, t.name.clone(), p.index))
            })
        })
        .collect();
    every.sort();
    every
}

/// Every partition replica asked, each once.
fn asked_replicas(cluster: &StallCluster) -> Vec<(i32, String, i32)> {
    let mut asked: Vec<(i32, String, i32)> = cluster
        .requests::<kdp_wire::messages::DescribeProducersRequest>()
        .into_iter()
        .flat_map(|(b, r)| {
            r.topics.into_iter().flat_map(move |t| {
                let name = t.name;
                t.partition_indexes
                    .into_iter()
                    .map(move |p| (b, name.clone(), p))
            })
        })
        .collect();
    asked.sort();
    asked
}

/// With `--producer-ids` the replicas are asked once: every replica of
/// every partition in one DescribeProducers each, no leaders' describe
/// beside it, and the leaders' series (producers, open transactions, the
/// partitions that failed) are those of a leaders-only scan of the same
/// cluster (broker 3's offline log of payments-2 is a follower's: it fails
/// the producer-id series, not the leaders').
#[tokio::test(start_paused = true)]
async fn one_scan_of_every_replica_is_the_leaders_describe_too() {
    let dir = Dir::new("shared");
    let (shared, alone) = (StallCluster::demo(), StallCluster::demo());
    let mut s = scanner(&shared, &dir.0).await;
    let mut l = leaders_only(&alone, &dir.0).await;
    s.scan().await;
    l.scan().await;
    let c = shared.cluster().clone();
    assert_eq!(asked_replicas(&shared), every_replica(&c));
    // the leaders-only scan asks each partition's leader (on the demo, one
    // request per broker)
    let leaders = c.topics.iter().map(|t| t.partitions.len()).sum::<usize>();
    assert_eq!(asked_replicas(&alone).len(), leaders);
    let (a, b) = (published(&s), published(&l));
    assert!(a.contains("kdp_producers{"), "{a}");
    assert_eq!(leaders_series(&a), leaders_series(&b), "{a}\n---\n{b}");
}

/// The leader answers NOT_LEADER_OR_FOLLOWER for t-0 once (a leadership
/// change it learnt of before the client did): the replica scan takes it as
/// "not a replica", and the partition is described again the leaders' way
/// (a metadata refresh, its leader asked again) as a leaders-only scan
/// retries it, so the leaders' series are the same and t-0 counted once.
#[tokio::test(start_paused = true)]
async fn a_leader_that_says_it_is_not_is_asked_again_the_leaders_way() {
    use kdp_wire::messages::DescribeProducersRequest;
    use kdp_wire::ErrorCode;
    const CLUSTER: &str = r#"{"brokers": [{"id": 1}, {"id": 2}, {"id": 3}],
     "topics": [{"name": "t", "partitions": [
       {"partition": 0, "leader": 1, "replicas": [1, 2],
        "producers": [{"ProducerId": 1, "LastTimestamp": "now-1m", "CurrentTxnStartOffset": 5}]},
       {"partition": 1, "leader": 2, "replicas": [2, 3],
        "producers": [{"ProducerId": 2, "LastTimestamp": "now-1m"}]}]}]}"#;
    let dir = Dir::new("stale");
    let mut texts = Vec::new();
    for ids in [true, false] {
        let cluster = StallCluster::from_json(CLUSTER).expect("cluster");
        let mut s = if ids {
            scanner(&cluster, &dir.0).await
        } else {
            leaders_only(&cluster, &dir.0).await
        };
        let once = std::sync::atomic::AtomicBool::new(true);
        cluster.edit::<DescribeProducersRequest, _>(move |broker, _, resp| {
            if broker != 1 || !once.swap(false, Ordering::SeqCst) {
                return;
            }
            for p in resp.topics.iter_mut().flat_map(|t| t.partitions.iter_mut()) {
                p.error_code = ErrorCode::NOT_LEADER_OR_FOLLOWER;
                p.active_producers.clear();
            }
        });
        s.scan().await;
        let text = published(&s);
        assert_eq!(
            sample(&text, "kdp_scan_partitions_failed"),
            Some(0.0),
            "{text}"
        );
        assert_eq!(
            sample(&text, r#"kdp_producers{topic="t"}"#),
            Some(2.0),
            "{text}"
        );
        assert_eq!(
            sample(&text, r#"kdp_open_transactions{topic="t"}"#),
            Some(1.0)
        );
        // broker 1 was asked for t-0 twice: the scan, then the leaders' retry
        let t0_on_1 = asked_replicas(&cluster)
            .into_iter()
            .filter(|a| *a == (1, "t".to_string(), 0))
            .count();
        assert_eq!(t0_on_1, 2);
        texts.push(text);
    }
    assert_eq!(leaders_series(&texts[0]), leaders_series(&texts[1]));
}

/// With `--compare-replicas` the comparison reads the scan's one pass over
/// every replica, with `--producer-ids` or without: each partition replica
/// is asked once a scan (no leaders' describe beside it, no second pass for
/// the diagnosis), and the divergence series are what `kdp
/// compare-replicas`' own read of a twin cluster compares (payments-2,
/// whose follower on broker 3 fails, has none: its replicas agreeing
/// proves nothing).
#[tokio::test(start_paused = true)]
async fn compare_replicas_reads_the_one_pass_over_every_replica() {
    use std::collections::BTreeSet;

    use kdp_domain::diagnose::replicas::{compare, ReplicaError};

    use crate::exporter::findings::ClusterDiagnosis;

    let twin = StallCluster::demo();
    let client = Client::connect(twin.bootstrap(), twin.client_config())
        .await
        .expect("the twin answers");
    let (replicas, failures) = kdp_workflows::replicas::describe_every_replica(
        &Arc::new(client),
        &DescribeOptions::default(),
        &TimeBound::after(BUDGET),
    )
    .await
    .expect("every replica asked");
    let failed: BTreeSet<(String, i32)> = failures
        .iter()
        .filter_map(|f| match f {
            ReplicaError::Partition { partition, .. } => Some(partition.clone()),
            _ => None,
        })
        .collect();
    assert!(
        failed.contains(&("payments".to_string(), 2)),
        "{failures:?}"
    );
    let diverged = |by_broker| {
        let ids: BTreeSet<i64> = compare(by_broker).iter().map(|d| d.producer_id).collect();
        ids.len()
    };
    assert!(
        replicas.values().any(|b| diverged(b) > 0),
        "nothing to find"
    );
    let dir = Dir::new("compare");
    for ids in [true, false] {
        let cluster = StallCluster::demo();
        let mut s = scanner(&cluster, &dir.0).await;
        if !ids {
            s.config.producer_ids = None;
            s.pressure = None;
        }
        // the divergences are series per partition
        s.config.per_partition = true;
        s.shared = Arc::new(Shared::new(Health::new(60.0), true));
        s.diagnose = Arc::new(ClusterDiagnosis {
            describe: DescribeOptions::default(),
            compare_replicas: true,
            groups_blocked_after_ms: None,
            lag: None,
            lag_per_partition: false,
            lag_known: Default::default(),
        });
        s.scan().await;
        let every = every_replica(&cluster.cluster());
        assert_eq!(asked_replicas(&cluster), every, "--producer-ids {ids}");
        let text = published(&s);
        for ((t, p), by_broker) in &replicas {
            let n = diverged(by_broker);
            let want = (n > 0 || !failed.contains(&(t.clone(), *p))).then_some(n as f64);
            let series = format!(r#"kdp_replica_divergences{{topic="{t}",partition="{p}"}}"#);
            assert_eq!(sample(&text, &series), want, "{series}: {text}");
        }
    }
}
