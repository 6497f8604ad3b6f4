//! One scan (describe + diagnosis) against kdp-server's demo cluster behind
//! in-memory streams, each API the scan needs stalled in turn, on tokio's
//! paused clock: the scan ends by its deadline and publishes what it could
//! not check as partial, never as a checked zero.

use std::sync::Arc;
use std::time::Duration;

use kdp_client::{Client, ClientConfig, DescribeOptions};
use kdp_test_support::{Fault, StallCluster};
use kdp_wire::api;
use prometheus_client::metrics::counter::Counter;
use tokio::time::Instant;

use super::*;
use crate::exporter::exposition::{encode, Format};
use crate::exporter::findings::ClusterDiagnosis;
use crate::exporter::metrics::Health;

const BUDGET: Duration = Duration::from_secs(10);

/// A scanner over `cluster` whose client is already connected, so that a
/// stall set afterwards hits the scan itself.
async fn scanner(cluster: &StallCluster, per_partition: bool) -> Scanner {
    let client = ClientConfig {
        connector: Arc::new(cluster.clone()),
        ..Default::default()
    };
    let connected = Client::connect(cluster.bootstrap(), client.clone())
        .await
        .expect("the demo cluster answers");
    Scanner {
        config: ScanConfig {
            bootstrap: cluster.bootstrap(),
            client,
            request_timeout: Duration::from_secs(30),
            timeout: BUDGET,
            interval: Duration::from_secs(60),
            topics: None,
            per_partition,
            max_partitions_per_request: 10_000,
            producer_ids: None,
            owners: false,
        },
        shared: Arc::new(Shared::new(Health::new(60.0), per_partition)),
        diagnose: Arc::new(ClusterDiagnosis {
            describe: DescribeOptions::default(),
            compare_replicas: false,
            groups_blocked_after_ms: Some(60_000),
            lag: None,
            lag_per_partition: per_partition,
            lag_known: Default::default(),
        }),
        client: Some(Arc::new(connected)),
        previous: BTreeMap::new(),
        pressure: None,
    }
}

fn scans(health: &Health, result: &str) -> u64 {
    let c: Counter = health
        .scans
        .get_or_create(&vec![("result", result.to_string())])
        .clone();
    c.get()
}

/// The published metrics, as scraped.
fn published(s: &Scanner) -> String {
    encode(&s.shared.current(), Format::Text).expect("encodes")
}

/// The value of the sample named exactly `name{labels}`, if published.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// The series of `family` for `topic`-`partition` (any reason).
fn series<'a>(text: &'a str, family: &str, topic: &str, partition: i32) -> Vec<&'a str> {
    let prefix = format!("{family}{{topic=\"{topic}\",partition=\"{partition}\"");
    text.lines().filter(|l| l.starts_with(&prefix)).collect()
}

/// One scan with `api` stalled (after a first clean scan when `warm`):
/// the scanner, and how long the stalled scan took.
async fn scan_with_stalled(api: i16, warm: bool) -> (Scanner, Duration) {
    let cluster = StallCluster::demo();
    let mut s = scanner(&cluster, true).await;
    if warm {
        s.scan().await;
        assert_eq!(scans(&s.shared.health, "ok"), 1, "{}", published(&s));
    }
    cluster.stall(api);
    let start = Instant::now();
    s.scan().await;
    (s, start.elapsed())
}

#[tokio::test(start_paused = true)]
async fn a_clean_scan_diagnoses_the_demo_and_is_ok() {
    let (s, took) = scan_with_stalled(api::SASL_HANDSHAKE, false).await;
    assert!(took < BUDGET, "{took:?}");
    let text = published(&s);
    let h = &s.shared.health;
    assert_eq!((scans(h, "ok"), scans(h, "partial")), (1, 0), "{text}");
    assert_eq!(h.diagnosis_available.get(), 1, "{text}");
    assert_eq!(
        sample(
            &text,
            r#"kdp_hanging_transactions{topic="ledger",partition="0",reason="partition_not_in_transaction"}"#
        ),
        Some(1.0),
        "{text}"
    );
    // checked and clean: a zero is a claim the scan may make
    assert_eq!(
        sample(
            &text,
            r#"kdp_hanging_transactions{topic="orders",partition="0",reason="no_transaction"}"#
        ),
        Some(0.0),
        "{text}"
    );
    // the groups, as kdp blocked judges them: payments-ledger is blocked on
    // payments-0 (78 records) and waits on payments-2's live transaction
    assert_eq!(
        group(&text, "kdp_group_blocked_partitions", "payments-ledger"),
        Some(1.0)
    );
    assert_eq!(
        group(&text, "kdp_group_blocked_records", "payments-ledger"),
        Some(78.0)
    );
    assert_eq!(
        group(&text, "kdp_group_members", "payments-ledger"),
        Some(1.0)
    );
    assert_eq!(
        group(&text, "kdp_group_blocked_partitions", "payments-audit"),
        Some(0.0)
    );
    assert_eq!(
        group(&text, "kdp_group_members", "payments-archive"),
        Some(0.0)
    );
}

/// The sample of a per-group family.
fn group(text: &str, family: &str, group: &str) -> Option<f64> {
    sample(text, &format!("{family}{{group=\"{group}\"}}"))
}

/// Every group series of `text`.
fn group_series(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.starts_with("kdp_group_"))
        .collect()
}

/// ListGroups stalled: no group is known, so no group series at all (the
/// last scan's do not linger either); the rest of the diagnosis stands and
/// the scan is partial.
#[tokio::test(start_paused = true)]
async fn stalled_list_groups_publishes_no_group_series_and_is_partial() {
    let (s, took) = scan_with_stalled(api::LIST_GROUPS, true).await;
    assert!(took <= BUDGET, "{took:?}");
    let text = published(&s);
    let h = &s.shared.health;
    assert_eq!((scans(h, "ok"), scans(h, "partial")), (1, 1), "{text}");
    assert_eq!(h.diagnosis_available.get(), 0, "{text}");
    assert!(group_series(&text).is_empty(), "{text}");
    assert_eq!(
        sample(
            &text,
            r#"kdp_hanging_transactions{topic="ledger",partition="0",reason="partition_not_in_transaction"}"#
        ),
        Some(1.0),
        "the transactions' diagnosis stands: {text}"
    );
}

/// OffsetFetch stalled: every group's offsets fail by the deadline; no
/// group gets a blocked series (payments-ledger was blocked: it must not
/// become a 0), members are still known, the scan is partial.
#[tokio::test(start_paused = true)]
async fn stalled_offset_fetch_gives_no_blocked_zero() {
    let (s, took) = scan_with_stalled(api::OFFSET_FETCH, true).await;
    assert!(took <= BUDGET, "{took:?}");
    let text = published(&s);
    let h = &s.shared.health;
    assert_eq!((scans(h, "ok"), scans(h, "partial")), (1, 1), "{text}");
    for family in ["kdp_group_blocked_partitions", "kdp_group_blocked_records"] {
        let found: Vec<&str> = group_series(&text)
            .into_iter()
            .filter(|l| l.starts_with(family))
            .collect();
        assert!(found.is_empty(), "{found:?}");
    }
    assert_eq!(
        group(&text, "kdp_group_members", "payments-ledger"),
        Some(1.0),
        "{text}"
    );
}

/// DescribeGroups stalled: the classic groups' members are unknown (no
/// series), the consumer-protocol group's are known, and the blocked
/// series stand (they need no description); partial.
#[tokio::test(start_paused = true)]
async fn stalled_describe_groups_leaves_members_unknown() {
    let (s, took) = scan_with_stalled(api::DESCRIBE_GROUPS, true).await;
    assert!(took <= BUDGET, "{took:?}");
    let text = published(&s);
    let h = &s.shared.health;
    assert_eq!((scans(h, "ok"), scans(h, "partial")), (1, 1), "{text}");
    assert_eq!(
        group(&text, "kdp_group_members", "payments-ledger"),
        None,
        "{text}"
    );
    assert_eq!(
        group(&text, "kdp_group_members", "payments-audit"),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        group(&text, "kdp_group_blocked_partitions", "payments-ledger"),
        Some(1.0)
    );
}

/// Metadata stalled: the describe cannot start, the scan fails by its
/// deadline and publishes nothing (no value from a scan that did not run).
#[tokio::test(start_paused = true)]
async fn stalled_metadata_fails_the_scan_by_its_deadline_publishing_nothing() {
    let (s, took) = scan_with_stalled(api::METADATA, false).await;
    assert!(took <= BUDGET, "{took:?}");
    let h = &s.shared.health;
    assert_eq!((scans(h, "ok"), scans(h, "failed")), (0, 1));
    assert_eq!(h.stale.get(), 1);
    assert_eq!(h.diagnosis_available.get(), 0);
    assert!(!s.shared.is_ready(), "nothing published");
    assert!(
        !published(&s).contains("kdp_hanging_transactions{"),
        "{}",
        published(&s)
    );
}

/// DescribeProducers stalled after a clean scan: every partition fails by
/// the deadline; the scan is partial and stale, the producer counts are the
/// last scan's, but no diagnosis series claims this scan checked a
/// partition (ledger-0 hung in the clean scan: it must not become a 0).
#[tokio::test(start_paused = true)]
async fn stalled_describe_producers_is_partial_with_no_diagnosis_zero() {
    let (s, took) = scan_with_stalled(api::DESCRIBE_PRODUCERS, true).await;
    assert!(took <= BUDGET, "{took:?}");
    let text = published(&s);
    let h = &s.shared.health;
    assert_eq!((scans(h, "ok"), scans(h, "partial")), (1, 1), "{text}");
    assert_eq!(h.stale.get(), 1);
    assert!(h.scan_partitions_failed.get() > 0);
    assert_eq!(h.scan_partitions_failed.get(), h.scan_partitions.get());
    for family in [
        "kdp_hanging_transactions",
        "kdp_stuck_transactions",
        "kdp_blocked_records",
        "kdp_fenced_producers",
    ] {
        assert!(
            !text.contains(&format!("{family}{{")),
            "{family}: nothing was checked: {text}"
        );
    }
}

/// ListTransactions stalled: the candidates cannot be judged; the
/// diagnosis is unavailable, the scan partial, and the partitions with a
/// candidate have an unknown series and no hanging or stuck zero.
#[tokio::test(start_paused = true)]
async fn stalled_list_transactions_leaves_candidates_unknown_never_zero() {
    let (s, took) = scan_with_stalled(api::LIST_TRANSACTIONS, false).await;
    assert!(took <= BUDGET, "{took:?}");
    let text = published(&s);
    let h = &s.shared.health;
    assert_eq!((scans(h, "ok"), scans(h, "partial")), (0, 1), "{text}");
    assert_eq!(h.diagnosis_available.get(), 0, "{text}");
    assert_eq!(
        sample(
            &text,
            r#"kdp_unknown_transactions{topic="ledger",partition="0",reason="listing_incomplete"}"#
        ),
        Some(1.0),
        "{text}"
    );
    for (topic, partition) in [("ledger", 0), ("ledger", 2), ("payments", 0)] {
        for family in ["kdp_hanging_transactions", "kdp_stuck_transactions"] {
            let found = series(&text, family, topic, partition);
            assert!(found.is_empty(), "{topic}-{partition}: {found:?}");
        }
    }
}

/// DescribeTransactions stalled: the listed ids cannot be described; the
/// transactions they hold are unknown, never hanging, stuck or a zero.
#[tokio::test(start_paused = true)]
async fn stalled_describe_transactions_leaves_listed_ids_unknown_never_zero() {
    let (s, took) = scan_with_stalled(api::DESCRIBE_TRANSACTIONS, false).await;
    assert!(took <= BUDGET, "{took:?}");
    let text = published(&s);
    let h = &s.shared.health;
    assert_eq!((scans(h, "ok"), scans(h, "partial")), (0, 1), "{text}");
    assert_eq!(h.diagnosis_available.get(), 0, "{text}");
    // ledger-0 (ledger-writer) and ledger-2 (billing-app) are listed
    for (topic, partition) in [("ledger", 0), ("ledger", 2)] {
        for family in ["kdp_hanging_transactions", "kdp_stuck_transactions"] {
            let found = series(&text, family, topic, partition);
            assert!(found.is_empty(), "{topic}-{partition}: {found:?}");
        }
        let unknown: f64 = series(&text, "kdp_unknown_transactions", topic, partition)
            .iter()
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum();
        assert!(unknown >= 1.0, "{topic}-{partition}: {text}");
    }
}

/// Broker 1 (leader of ledger-0, which hangs, and ledger-3) cuts every
/// DescribeProducers after a clean scan, per topic: its partitions fail
/// fast, the diagnosis runs on the rest, and the ledger topic, only partly
/// described, gets no hanging zero (a resolved alert nobody checked).
#[tokio::test(start_paused = true)]
async fn a_topic_described_in_part_gets_no_diagnosis_zero() {
    let cluster = StallCluster::demo();
    let mut s = scanner(&cluster, false).await;
    s.scan().await;
    let text = published(&s);
    let hanging =
        r#"kdp_hanging_transactions{topic="ledger",reason="partition_not_in_transaction"}"#;
    assert_eq!(sample(&text, hanging), Some(1.0), "{text}");
    cluster.fault_on(1, api::DESCRIBE_PRODUCERS, Fault::Cut);
    let start = Instant::now();
    s.scan().await;
    assert!(start.elapsed() <= BUDGET, "{:?}", start.elapsed());
    let text = published(&s);
    let h = &s.shared.health;
    assert_eq!((scans(h, "ok"), scans(h, "partial")), (1, 1), "{text}");
    assert_eq!(h.stale.get(), 1);
    // the diagnosis ran: the stuck ledger-2 (leader 3) is still counted
    assert_eq!(
        sample(
            &text,
            r#"kdp_stuck_transactions{topic="ledger",reason="prepare_commit"}"#
        ),
        Some(1.0),
        "{text}"
    );
    assert_eq!(sample(&text, hanging), None, "not checked: {text}");
    assert_eq!(
        sample(&text, r#"kdp_blocked_records{topic="ledger"}"#),
        None,
        "a sum over part of the topic: {text}"
    );
    // payments-2 (leader 1) was not described: the groups with an offset
    // there may be blocked on it; payments-reporting reads it too
    for g in ["payments-ledger", "payments-audit", "payments-reporting"] {
        assert_eq!(
            group(&text, "kdp_group_blocked_partitions", g),
            None,
            "{g}: {text}"
        );
    }
}

/// With `--compare-replicas` every replica is asked: on the demo orders-2's
/// follower on broker 2 diverged; payments-2's replica on broker 3 answers
/// a storage error, so payments-2 has no divergence series (the two that
/// answered agreeing proves nothing) and the diagnosis is not available.
#[tokio::test(start_paused = true)]
async fn a_replica_that_did_not_answer_gives_no_divergence_zero() {
    let cluster = StallCluster::demo();
    let mut s = scanner(&cluster, true).await;
    s.diagnose = Arc::new(ClusterDiagnosis {
        describe: DescribeOptions::default(),
        compare_replicas: true,
        groups_blocked_after_ms: Some(60_000),
        lag: None,
        lag_per_partition: false,
        lag_known: Default::default(),
    });
    s.scan().await;
    let text = published(&s);
    let diverged = |topic: &str, partition: i32| {
        sample(
            &text,
            &format!(r#"kdp_replica_divergences{{topic="{topic}",partition="{partition}"}}"#),
        )
    };
    assert!(diverged("orders", 2) >= Some(1.0), "{text}");
    assert_eq!(diverged("orders", 0), Some(0.0), "all three agree: {text}");
    assert_eq!(diverged("payments", 2), None, "{text}");
    let h = &s.shared.health;
    assert_eq!(h.diagnosis_available.get(), 0, "{text}");
    assert_eq!((scans(h, "ok"), scans(h, "partial")), (0, 1), "{text}");
}

/// What the diagnosis keeps of an answer takes the room of the producers
/// kept, not of the answer: a million producers described must not stay
/// allocated for the hundred thousand the diagnosis needs.
#[test]
fn kept_producers_take_their_own_room() {
    use kdp_domain::partition::ProducerFields;
    use kdp_wire::messages::ProducerState;

    let producers: Vec<ProducerState> = (0..100)
        .map(|i| ProducerState {
            producer_id: i,
            current_txn_start_offset: if i % 10 == 0 { 5 } else { -1 },
            ..Default::default()
        })
        .collect();
    let o = PartitionOutcome {
        topic: "t".into(),
        partition: 0,
        broker_id: Some(1),
        result: Ok(producers),
    };
    let mut unkept = 0;
    let kept = LeaderAnswer::of(&o).keeping(|p| p.current_txn_start_offset() >= 0, |_| unkept += 1);
    let kept = kept.result.expect("kept");
    let ids: Vec<i64> = kept.iter().map(|p| p.producer_id).collect();
    assert_eq!(ids, (0..10).map(|i| i * 10).collect::<Vec<_>>());
    assert_eq!(kept.capacity(), 10);
    assert_eq!(unkept, 90);
}
