//! Share groups (KIP-932) in the lag gather, over kdp-test-support's
//! broker: the start offsets (DescribeShareGroupOffsets) and
//! `share.isolation.level` (DescribeConfigs, resource type GROUP) are read
//! for every share group; a read_committed group is counted up to the LSO
//! and may deliver at most that, a read_uncommitted one at most the records
//! a read_uncommitted count finds up to the high watermark (Fetch
//! READ_UNCOMMITTED: aborted and open records in, markers out); a failed
//! read of either makes the
//! answer partial, named once per cause, never caught up.

use std::sync::Arc;
use std::time::Duration;

use kdp_client::admin::DriverOptions;
use kdp_client::{Client, TimeBound};
use kdp_domain::groups::Isolation;
use kdp_domain::lag::{LagGap, LagVerdict, Records};
use kdp_test_support::{Fault, StallCluster};
use kdp_wire::{api, ErrorCode};
use kdp_workflows::lag::{gather, Gathered, LagReadOptions};

/// 0-4 idempotent | 5-8 committed, 9 marker | 10-12 aborted, 13 marker |
/// 14-16 an open transaction: LSO 14, HWM 17; 9 records below the LSO.
const CLUSTER: &str = r#"{
  "brokers": [{"id": 1, "configs": {"offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "1",
    "transaction.state.log.replication.factor": "1", "transaction.state.log.num.partitions": "1"}}],
  "topics": [
    {"name": "jobs", "partitions": [{"partition": 0, "leader": 1, "replicas": [1],
      "producers": [{"ProducerId": 4, "ProducerEpoch": 0, "LastSequence": 2, "LastTimestamp": "now-5m",
                     "CoordinatorEpoch": 0, "CurrentTxnStartOffset": 14}],
      "batches": [
      {"producer_id": 1, "producer_epoch": 0, "base_sequence": 0, "records": 5},
      {"producer_id": 2, "producer_epoch": 0, "base_sequence": 0, "records": 4, "transactional": true},
      {"producer_id": 2, "producer_epoch": 0, "control": "commit"},
      {"producer_id": 3, "producer_epoch": 0, "base_sequence": 0, "records": 3, "transactional": true},
      {"producer_id": 3, "producer_epoch": 0, "control": "abort"},
      {"producer_id": 4, "producer_epoch": 0, "base_sequence": 0, "records": 3, "transactional": true}]}]}
  ],
  "transactions": [
    {"transactional_id": "jobs-writer", "producer_id": 4, "producer_epoch": 0, "state": "Ongoing",
     "timeout_ms": 3600000, "start_time": "now-5m", "partitions": {"jobs": [0]}}
  ],
  "groups": [
    {"group_id": "committed-workers", "type": "share", "state": "Empty",
     "configs": {"share.isolation.level": "read_committed"}, "offsets": {"jobs": {"0": 5}}},
    {"group_id": "default-workers", "type": "share", "state": "Empty", "offsets": {"jobs": {"0": 5}}},
    {"group_id": "plain", "offsets": {"jobs": {"0": 5}}}
  ]
}"#;

async fn gathered(cluster: &StallCluster) -> Gathered {
    let client = Arc::new(
        Client::connect(cluster.bootstrap(), cluster.client_config())
            .await
            .unwrap(),
    );
    let bound = TimeBound::after(Duration::from_secs(30));
    gather(
        &client,
        &LagReadOptions::default(),
        &DriverOptions::default(),
        &bound,
    )
    .await
    .unwrap()
}

fn row<'a>(g: &'a Gathered, group: &str) -> &'a kdp_domain::lag::LagRow {
    g.lag
        .rows
        .iter()
        .find(|r| r.group_id == group)
        .unwrap_or_else(|| panic!("{group} in {:?}", g.lag.rows))
}

#[tokio::test(start_paused = true)]
async fn share_groups_are_measured_by_their_isolation_with_records_at_most() {
    let cluster = StallCluster::from_json(CLUSTER).unwrap();
    let g = gathered(&cluster).await;
    assert!(g.lag.gaps.is_empty(), "{:?}", g.lag.gaps);
    let rc = row(&g, "committed-workers");
    let share = rc.share.expect("a share row");
    assert_eq!(share.isolation, Some(Isolation::ReadCommitted));
    // the mock reports no Lag of its own (-1): none, never a zero
    assert_eq!(share.kafka_lag, None);
    // [5, 14): 4 committed records, markers and aborted ones excluded
    assert_eq!(
        rc.records,
        Some(Records::Between {
            at_least: 0,
            at_most: 4
        })
    );
    assert_eq!(rc.held_back, Some(3));
    assert_eq!(
        rc.holder
            .as_ref()
            .and_then(|h| h.transactional_id.as_deref()),
        Some("jobs-writer")
    );
    assert_eq!(rc.verdict, LagVerdict::MaybeLagging);
    // unset: Kafka's default read_uncommitted, counted up to the HWM: [5,
    // 17) holds 4 committed, 3 aborted and 3 open records and 2 markers
    let ru = row(&g, "default-workers");
    assert_eq!(
        ru.share.and_then(|s| s.isolation),
        Some(Isolation::ReadUncommitted)
    );
    assert_eq!(
        ru.records,
        Some(Records::Between {
            at_least: 0,
            at_most: 10
        })
    );
    assert_eq!(ru.held_back, Some(0));
    // the consumer group beside them is counted exactly, as before
    let plain = row(&g, "plain");
    assert_eq!(plain.records, Some(Records::Exact(4)));
    assert!(plain.share.is_none());
    assert!(cluster.asked(api::DESCRIBE_SHARE_GROUP_OFFSETS) >= 1);
    assert!(cluster.asked(api::DESCRIBE_CONFIGS) >= 1);
}

#[tokio::test(start_paused = true)]
async fn a_failed_isolation_or_start_offset_read_is_partial_never_caught_up() {
    let cluster = StallCluster::from_json(CLUSTER).unwrap();
    cluster.fault(
        api::DESCRIBE_CONFIGS,
        Fault::Error(ErrorCode::GROUP_AUTHORIZATION_FAILED),
    );
    let g = gathered(&cluster).await;
    let isolation: Vec<&str> = g
        .lag
        .gaps
        .iter()
        .filter_map(|gap| match gap {
            LagGap::ShareIsolation(group, e) if e.code == ErrorCode::GROUP_AUTHORIZATION_FAILED => {
                Some(group.as_str())
            }
            _ => None,
        })
        .collect();
    assert_eq!(isolation, ["committed-workers", "default-workers"]);
    assert!(!g.lag.is_complete());
    let rc = row(&g, "committed-workers");
    assert_eq!((rc.records, rc.verdict), (None, LagVerdict::Unknown));

    let cluster = StallCluster::from_json(CLUSTER).unwrap();
    cluster.fault(
        api::DESCRIBE_SHARE_GROUP_OFFSETS,
        Fault::Error(ErrorCode::GROUP_AUTHORIZATION_FAILED),
    );
    let g = gathered(&cluster).await;
    assert!(g.lag.rows.iter().all(|r| r.share.is_none()));
    assert_eq!(
        g.lag
            .gaps
            .iter()
            .filter(|gap| matches!(gap, LagGap::ShareOffsets(..)))
            .count(),
        2,
        "{:?}",
        g.lag.gaps
    );
    assert!(!g.lag.is_complete());
}

/// A consumer group said to read read_uncommitted is counted by its own
/// Fetch READ_UNCOMMITTED up to the high watermark: past the open
/// transaction's LSO, aborted records in, markers out, nothing held back.
#[tokio::test(start_paused = true)]
async fn a_read_uncommitted_consumer_group_is_counted_past_the_lso() {
    let cluster = StallCluster::from_json(CLUSTER).unwrap();
    let client = Arc::new(
        Client::connect(cluster.bootstrap(), cluster.client_config())
            .await
            .unwrap(),
    );
    let mut opts = LagReadOptions::default();
    opts.lag.groups = vec!["plain".into()];
    opts.lag.isolation = Isolation::ReadUncommitted;
    let bound = TimeBound::after(Duration::from_secs(30));
    let g = gather(&client, &opts, &DriverOptions::default(), &bound)
        .await
        .unwrap();
    assert!(g.lag.gaps.is_empty(), "{:?}", g.lag.gaps);
    let plain = row(&g, "plain");
    assert_eq!(plain.isolation, Some(Isolation::ReadUncommitted));
    assert_eq!(plain.records, Some(Records::Exact(10)));
    assert_eq!(plain.held_back, Some(0));
    assert_eq!(plain.holder, None);
    assert_eq!(plain.verdict, LagVerdict::Lagging);
    // counted by the read_uncommitted read alone
    let p = &g.partitions[&("jobs".to_string(), 0)];
    assert!(p.tally.is_none(), "no read_committed count was needed");
    assert!(p.uncommitted.as_ref().is_some_and(|t| t.is_done()));
}
