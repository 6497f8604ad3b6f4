//! The lag's reads carried from one gather to the next (the exporter's
//! scans, `kdp_domain::lag::Known`): a partition never written
//! transactionally is read once, then not at all while its log does not
//! grow, and only what it added when it does; a transactional partition
//! and a compacted topic are read every time. The counts stay the same.

use std::sync::Arc;
use std::time::Duration;

use kdp_client::admin::DriverOptions;
use kdp_client::{Client, TimeBound};
use kdp_domain::lag::{Known, Records};
use kdp_domain::partition::TopicPartition;
use kdp_server::cluster::SimpleRecord;
use kdp_test_support::StallCluster;
use kdp_wire::api;
use kdp_wire::messages::FetchRequest;
use kdp_workflows::groups::{read_groups, ReadOptions};
use kdp_workflows::lag::{gather_from, Gathered, LagReadOptions};

/// plain: 10 idempotent records (never transactional); txn: 4 committed
/// records, their marker, 3 plain ones; compacted (`cleanup.policy`
/// compact): 6 records. One group on each.
const CLUSTER: &str = r#"{
  "brokers": [{"id": 1, "configs": {"offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "1"}}],
  "topics": [
    {"name": "plain", "partitions": [{"partition": 0, "leader": 1, "replicas": [1], "batches": [
      {"producer_id": 1, "producer_epoch": 0, "base_sequence": 0, "records": 5},
      {"producer_id": 1, "producer_epoch": 0, "base_sequence": 5, "records": 5}]}]},
    {"name": "txn", "partitions": [{"partition": 0, "leader": 1, "replicas": [1], "batches": [
      {"producer_id": 2, "producer_epoch": 0, "base_sequence": 0, "records": 4, "transactional": true},
      {"producer_id": 2, "producer_epoch": 0, "control": "commit"},
      {"records": 3}]}]},
    {"name": "compacted", "configs": {"cleanup.policy": "compact"}, "partitions": [
      {"partition": 0, "leader": 1, "replicas": [1], "batches": [{"records": 6}]}]}
  ],
  "groups": [
    {"group_id": "g", "offsets": {"plain": {"0": 2}, "txn": {"0": 0}, "compacted": {"0": 1}}}
  ]
}"#;

fn tp(topic: &str) -> TopicPartition {
    (topic.to_string(), 0)
}

/// One gather with `known`, and the Fetch requests the cluster received.
async fn scan(
    cluster: &StallCluster,
    client: &Arc<Client>,
    known: &mut Known,
) -> (Gathered, usize) {
    let bound = TimeBound::after(Duration::from_secs(30));
    let driver = DriverOptions::default();
    let groups = read_groups(client, &ReadOptions::default(), &driver, &bound)
        .await
        .unwrap();
    let before = cluster.asked(api::FETCH);
    let g = gather_from(
        client,
        groups,
        &LagReadOptions::default(),
        &driver,
        &bound,
        Some(known),
    )
    .await;
    (g, cluster.asked(api::FETCH) - before)
}

/// Partitions in each Fetch request so far, in order of arrival.
fn asked_partitions(cluster: &StallCluster) -> Vec<usize> {
    cluster
        .requests::<FetchRequest>()
        .iter()
        .map(|(_, r)| r.topics.iter().map(|t| t.partitions.len()).sum())
        .collect()
}

fn records(g: &Gathered, topic: &str) -> Option<Records> {
    g.lag
        .rows
        .iter()
        .find(|r| r.partition == tp(topic))
        .and_then(|r| r.records)
}

#[tokio::test(start_paused = true)]
async fn a_partition_never_written_transactionally_is_not_fetched_again() {
    let cluster = StallCluster::from_json(CLUSTER).unwrap();
    let client = Arc::new(
        Client::connect(cluster.bootstrap(), cluster.client_config())
            .await
            .unwrap(),
    );
    let mut known = Known::new();

    // the first scan reads all three, once each
    let (first, sent) = scan(&cluster, &client, &mut known).await;
    assert!(first.lag.is_complete(), "{:?}", first.lag.gaps);
    let once: Vec<_> = first
        .fetched
        .iter()
        .map(|(tp, n)| (tp.0.as_str(), *n))
        .collect();
    assert_eq!(once, [("compacted", 1), ("plain", 1), ("txn", 1)]);
    assert_eq!(sent, 1, "one leader: the three in one Fetch");
    assert_eq!(asked_partitions(&cluster), [3]);
    assert_eq!(records(&first, "plain"), Some(Records::Exact(8)));
    assert_eq!(records(&first, "txn"), Some(Records::Exact(7)));
    assert_eq!(records(&first, "compacted"), Some(Records::Exact(5)));
    assert_eq!(known.stretch(&tp("plain")), Some((2, 10)));
    assert_eq!(known.stretch(&tp("txn")), None, "a marker was read");
    assert_eq!(
        known.stretch(&tp("compacted")),
        None,
        "compaction may remove records"
    );

    // the next: no Fetch for the plain partition, the same counts
    let (second, sent) = scan(&cluster, &client, &mut known).await;
    assert!(
        !second.fetched.contains_key(&tp("plain")),
        "{:?}",
        second.fetched
    );
    assert_eq!(second.fetched.len(), 2);
    assert_eq!(sent, 1);
    assert_eq!(
        asked_partitions(&cluster),
        [3, 2],
        "only txn and compacted are fetched"
    );
    for topic in ["plain", "txn", "compacted"] {
        assert_eq!(records(&second, topic), records(&first, topic), "{topic}");
    }

    // the plain partition grows: only what it added is read
    cluster.update(|c| {
        let r = SimpleRecord {
            key: None,
            value: Some(b"new".to_vec()),
            timestamp_ms: 1_800_000_000_000,
        };
        c.append_records("plain", 0, &[r.clone(), r]).unwrap();
    });
    let (third, _) = scan(&cluster, &client, &mut known).await;
    assert_eq!(third.fetched.get(&tp("plain")), Some(&1));
    assert_eq!(records(&third, "plain"), Some(Records::Exact(10)));
    assert_eq!(known.stretch(&tp("plain")), Some((2, 12)));
}
