//! A partition the broker proves free of markers is counted without a
//! Fetch (`kdp_domain::lag::proof`, docs/LAG.md section 11); every
//! partition where the proof fails for one reason is read, and counted the
//! same way as before: a marker older than the expiration window whose
//! producer the broker forgot, a producer listed with a coordinator epoch,
//! a CreateTime topic, a compacted one. The mock's timestamps are relative
//! to the wall clock, as a broker's are; nothing here asserts on time.

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
use kdp_workflows::lag::{gather, gather_from, Gathered, LagReadOptions};

/// Every topic LogAppendTime unless it says otherwise; the brokers'
/// `producer.id.expiration.ms` is Kafka's default (a day).
/// - recent: 10 idempotent records appended an hour ago: proven;
/// - forgotten: a transaction committed three days ago (its producer
///   expired, so DescribeProducers lists nobody), then 3 records an hour
///   ago: the window starts at the 3, the group below it: read;
/// - listed: 6 recent records and a producer listed with a coordinator
///   epoch: read;
/// - created: CreateTime, 5 recent records: read;
/// - compacted: 4 recent records: read.
const CLUSTER: &str = r#"{
  "brokers": [{"id": 1, "configs": {"offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "1"}}],
  "topics": [
    {"name": "recent", "configs": {"message.timestamp.type": "LogAppendTime"},
     "partitions": [{"partition": 0, "leader": 1, "replicas": [1], "batches": [
      {"producer_id": 1, "producer_epoch": 0, "base_sequence": 0, "records": 5, "timestamp": "now-1h"},
      {"producer_id": 1, "producer_epoch": 0, "base_sequence": 5, "records": 5, "timestamp": "now-1h"}]}]},
    {"name": "forgotten", "configs": {"message.timestamp.type": "LogAppendTime"},
     "partitions": [{"partition": 0, "leader": 1, "replicas": [1], "batches": [
      {"producer_id": 2, "producer_epoch": 0, "base_sequence": 0, "records": 4, "transactional": true, "timestamp": "now-3d"},
      {"producer_id": 2, "producer_epoch": 0, "control": "commit", "timestamp": "now-3d"},
      {"records": 3, "timestamp": "now-1h"}]}]},
    {"name": "listed", "configs": {"message.timestamp.type": "LogAppendTime"},
     "partitions": [{"partition": 0, "leader": 1, "replicas": [1],
      "producers": [{"ProducerId": 3, "CoordinatorEpoch": 0, "LastTimestamp": "now-1h"}],
      "batches": [{"records": 6, "timestamp": "now-1h"}]}]},
    {"name": "created", "configs": {"message.timestamp.type": "CreateTime"},
     "partitions": [{"partition": 0, "leader": 1, "replicas": [1], "batches": [
      {"records": 5, "timestamp": "now-1h"}]}]},
    {"name": "compacted", "configs": {"message.timestamp.type": "LogAppendTime", "cleanup.policy": "compact"},
     "partitions": [{"partition": 0, "leader": 1, "replicas": [1], "batches": [
      {"records": 4, "timestamp": "now-1h"}]}]}
  ],
  "groups": [
    {"group_id": "g", "offsets": {"recent": {"0": 2}, "forgotten": {"0": 0}, "listed": {"0": 1}, "created": {"0": 0}, "compacted": {"0": 1}}}
  ]
}"#;

fn tp(topic: &str) -> TopicPartition {
    (topic.to_string(), 0)
}

fn records(g: &Gathered, topic: &str) -> Option<Records> {
    row(g, topic).records
}

fn row<'a>(g: &'a Gathered, topic: &str) -> &'a kdp_domain::lag::LagRow {
    g.lag
        .rows
        .iter()
        .find(|r| r.partition == tp(topic))
        .expect("a row")
}

/// The topics a Fetch asked for, and the partitions all Fetch requests
/// named (topic ids on the wire: counted, not named).
fn fetched(g: &Gathered, cluster: &StallCluster) -> (Vec<String>, usize) {
    let named: usize = cluster
        .requests::<FetchRequest>()
        .iter()
        .map(|(_, r)| r.topics.iter().map(|t| t.partitions.len()).sum::<usize>())
        .sum();
    (g.fetched.keys().map(|tp| tp.0.clone()).collect(), named)
}

async fn connect(cluster: &StallCluster) -> Arc<Client> {
    Arc::new(
        Client::connect(cluster.bootstrap(), cluster.client_config())
            .await
            .unwrap(),
    )
}

/// `kdp lag`'s read and judgement of the whole cluster.
async fn gathered(cluster: &StallCluster) -> Gathered {
    let client = connect(cluster).await;
    let bound = TimeBound::after(Duration::from_secs(30));
    let g = gather(
        &client,
        &LagReadOptions::default(),
        &DriverOptions::default(),
        &bound,
    )
    .await
    .unwrap();
    assert!(g.lag.is_complete(), "{:?}", g.lag.gaps);
    g
}

/// The exporter's scan: the groups, then the lag with `known`.
async fn scan(client: &Arc<Client>, known: &mut Known) -> Gathered {
    let bound = TimeBound::after(Duration::from_secs(30));
    let driver = DriverOptions::default();
    let groups = read_groups(client, &ReadOptions::default(), &driver, &bound)
        .await
        .unwrap();
    gather_from(
        client,
        groups,
        &LagReadOptions::default(),
        &driver,
        &bound,
        Some(known),
    )
    .await
}

#[tokio::test(start_paused = true)]
async fn a_proven_partition_is_counted_without_a_fetch_and_the_others_are_read() {
    let cluster = StallCluster::from_json(CLUSTER).unwrap();
    let g = gathered(&cluster).await;

    assert_eq!(records(&g, "recent"), Some(Records::Exact(8)));
    assert!(row(&g, "recent").proven);
    // the others read once each, in one Fetch: the wire names 4 partitions
    assert_eq!(
        fetched(&g, &cluster),
        (
            ["compacted", "created", "forgotten", "listed"]
                .map(String::from)
                .to_vec(),
            4
        )
    );
    assert_eq!(cluster.asked(api::FETCH), 1);
    assert_eq!(records(&g, "forgotten"), Some(Records::Exact(7)));
    assert_eq!(records(&g, "listed"), Some(Records::Exact(5)));
    assert_eq!(records(&g, "created"), Some(Records::Exact(5)));
    assert_eq!(records(&g, "compacted"), Some(Records::Exact(3)));
    for topic in ["forgotten", "listed", "created", "compacted"] {
        assert!(!row(&g, topic).proven, "{topic}");
    }
    // the proof asked the leader for the producers of the candidates only
    assert!(cluster.asked(api::DESCRIBE_PRODUCERS) >= 1);
}

#[tokio::test(start_paused = true)]
async fn the_forgotten_marker_counts_only_once_read() {
    // the same log, the group past the marker: the range is in the window
    let cluster = StallCluster::from_json(
        &CLUSTER.replace(r#""forgotten": {"0": 0}"#, r#""forgotten": {"0": 5}"#),
    )
    .unwrap();
    let g = gathered(&cluster).await;
    assert_eq!(records(&g, "forgotten"), Some(Records::Exact(3)));
    assert!(row(&g, "forgotten").proven);
    let (topics, named) = fetched(&g, &cluster);
    assert_eq!(topics, ["compacted", "created", "listed"]);
    assert_eq!(named, 3, "the proven partitions are not on the wire");
}

#[tokio::test(start_paused = true)]
async fn the_exporter_keeps_what_a_proof_showed() {
    let cluster = StallCluster::from_json(CLUSTER).unwrap();
    let client = connect(&cluster).await;
    let mut known = Known::new();
    let g = scan(&client, &mut known).await;
    assert_eq!(records(&g, "recent"), Some(Records::Exact(8)));
    assert_eq!(known.stretch(&tp("recent")), Some((2, 10)));
    let (topics, named) = fetched(&g, &cluster);
    assert_eq!(topics, ["compacted", "created", "forgotten", "listed"]);
    assert_eq!(named, 4);

    // the log grows: only what it added needs the proof, and gets it
    cluster.update(|c| {
        let r = SimpleRecord {
            key: None,
            value: Some(b"new".to_vec()),
            timestamp_ms: kdp_workflows::clock::now_ms(),
        };
        c.append_records("recent", 0, &[r.clone(), r]).unwrap();
    });
    let before = cluster.asked(api::FETCH);
    let next = scan(&client, &mut known).await;
    assert_eq!(records(&next, "recent"), Some(Records::Exact(10)));
    assert!(row(&next, "recent").proven);
    assert!(
        !next.fetched.contains_key(&tp("recent")),
        "{:?}",
        next.fetched
    );
    assert_eq!(known.stretch(&tp("recent")), Some((2, 12)));
    assert_eq!(cluster.asked(api::FETCH) - before, 1, "the four others");
}

#[tokio::test(start_paused = true)]
async fn no_producer_is_described_where_no_topic_can_qualify() {
    // every topic CreateTime: the topics' configs rule the proof out
    let cluster =
        StallCluster::from_json(&CLUSTER.replace(r#""LogAppendTime""#, r#""CreateTime""#)).unwrap();
    let g = gathered(&cluster).await;
    assert_eq!(records(&g, "recent"), Some(Records::Exact(8)));
    assert!(!row(&g, "recent").proven);
    assert_eq!(g.fetched.len(), 5, "{:?}", g.fetched);
    assert_eq!(cluster.asked(api::DESCRIBE_PRODUCERS), 0);
    assert_eq!(cluster.asked(api::DESCRIBE_CONFIGS), 1, "the topics' only");
}
