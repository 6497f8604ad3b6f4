//! The lag's reads batched per leader: many partitions in one Fetch, an
//! answer `MaxBytes` cut short (empty, or inside a batch) read on from
//! where each partition stopped, one partition's error leaving the others
//! of its request counted, the counts the same whatever the limits, and
//! the exporter's fold of the rows into its series.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kdp_client::admin::DriverOptions;
use kdp_client::{Client, TimeBound};
use kdp_domain::lag::found::{LagFold, LagFound};
use kdp_domain::lag::{LagGap, LagVerdict, Records};
use kdp_test_support::StallCluster;
use kdp_wire::messages::FetchRequest;
use kdp_wire::ErrorCode;
use kdp_workflows::lag::{gather, Gathered, LagReadOptions};

/// Four partitions on one broker, each: 5 plain records, a committed
/// transaction of 3 and its marker, an aborted one of 2 and its marker, 4
/// plain records (16 offsets, 12 records a read_committed consumer
/// receives). The group committed at 0 on each.
fn cluster() -> StallCluster {
    cluster_of(4)
}

/// [`cluster`] with `n` partitions.
fn cluster_of(n: i32) -> StallCluster {
    let log = r#"[
      {"records": 5},
      {"producer_id": 7, "producer_epoch": 0, "base_sequence": 0, "records": 3, "transactional": true},
      {"producer_id": 7, "producer_epoch": 0, "control": "commit"},
      {"producer_id": 7, "producer_epoch": 0, "base_sequence": 3, "records": 2, "transactional": true},
      {"producer_id": 7, "producer_epoch": 0, "control": "abort"},
      {"records": 4}]"#;
    let partitions: Vec<String> = (0..n)
        .map(|p| format!(r#"{{"partition": {p}, "leader": 1, "replicas": [1], "batches": {log}}}"#))
        .collect();
    let offsets: Vec<String> = (0..n).map(|p| format!(r#""{p}": 0"#)).collect();
    let json = format!(
        r#"{{
  "brokers": [{{"id": 1, "configs": {{"offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "1"}}}}],
  "topics": [{{"name": "t", "partitions": [{}]}}],
  "groups": [{{"group_id": "g", "offsets": {{"t": {{{}}}}}}}]
}}"#,
        partitions.join(","),
        offsets.join(", ")
    );
    StallCluster::from_json(&json).unwrap()
}

async fn client(cluster: &StallCluster) -> Arc<Client> {
    Arc::new(
        Client::connect(cluster.bootstrap(), cluster.client_config())
            .await
            .unwrap(),
    )
}

async fn read(client: &Arc<Client>, opts: &LagReadOptions) -> Gathered {
    let bound = TimeBound::after(Duration::from_secs(30));
    gather(client, opts, &DriverOptions::default(), &bound)
        .await
        .unwrap()
}

fn records(g: &Gathered) -> Vec<(i32, Option<Records>)> {
    g.lag
        .rows
        .iter()
        .map(|r| (r.partition.1, r.records))
        .collect()
}

/// Partitions in each Fetch request, in order of arrival.
fn asked(cluster: &StallCluster) -> Vec<usize> {
    cluster
        .requests::<FetchRequest>()
        .iter()
        .map(|(_, r)| r.topics.iter().map(|t| t.partitions.len()).sum())
        .collect()
}

#[tokio::test(start_paused = true)]
async fn partitions_of_one_leader_share_a_fetch() {
    let cluster = cluster();
    let client = client(&cluster).await;
    let g = read(&client, &LagReadOptions::default()).await;
    assert!(g.lag.is_complete(), "{:?}", g.lag.gaps);
    let exact: Vec<_> = (0..4).map(|p| (p, Some(Records::Exact(12)))).collect();
    assert_eq!(records(&g), exact);
    assert_eq!(asked(&cluster), [4], "one request for the four partitions");
    assert_eq!(g.fetches, 1);
    assert!(g.fetched.values().all(|&n| n == 1), "{:?}", g.fetched);
}

#[tokio::test(start_paused = true)]
async fn a_round_larger_than_a_wave_asks_every_partition_once() {
    // one partition per request, one broker at once: waves of 4 asks, so
    // 9 partitions take 3 waves in the one round
    let cluster = cluster_of(9);
    let client = client(&cluster).await;
    let opts = LagReadOptions {
        partitions_per_fetch: 1,
        concurrency: 1,
        ..LagReadOptions::default()
    };
    let g = read(&client, &opts).await;
    assert!(g.lag.is_complete(), "{:?}", g.lag.gaps);
    let exact: Vec<_> = (0..9).map(|p| (p, Some(Records::Exact(12)))).collect();
    assert_eq!(records(&g), exact);
    assert_eq!(asked(&cluster), [1; 9]);
    assert_eq!(g.fetches, 9);
    assert_eq!(g.fetched.len(), 9);
    assert!(g.fetched.values().all(|&n| n == 1), "{:?}", g.fetched);
}

#[tokio::test(start_paused = true)]
async fn an_answer_cut_by_max_bytes_is_read_on_from_where_each_partition_stopped() {
    // MaxBytes of 1: the first partition with records gets its next batch
    // whole (KIP-74), the others nothing; 120: the second partition's
    // batch comes cut inside; 400: a few whole batches, then a cut one
    for max in [1, 120, 400] {
        let cluster = cluster();
        let client = client(&cluster).await;
        let opts = LagReadOptions {
            fetch_max_bytes: max,
            fetch_bytes: max,
            ..LagReadOptions::default()
        };
        let g = read(&client, &opts).await;
        assert!(g.lag.is_complete(), "MaxBytes {max}: {:?}", g.lag.gaps);
        let exact: Vec<_> = (0..4).map(|p| (p, Some(Records::Exact(12)))).collect();
        assert_eq!(records(&g), exact, "MaxBytes {max}");
        let sizes = asked(&cluster);
        assert!(sizes.len() > 1, "MaxBytes {max}: cut, so asked again");
        assert_eq!(sizes.first(), Some(&4), "MaxBytes {max}: {sizes:?}");
        assert_eq!(g.fetches, sizes.len() as u64);
        if max == 1 {
            // one batch per request: 6 batches per partition, the last
            // request reading the last batch of the last partition only
            assert_eq!(sizes.len(), 24, "{sizes:?}");
            assert_eq!(sizes.last(), Some(&1), "{sizes:?}");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn one_partitions_error_leaves_the_others_of_its_fetch_counted() {
    let cluster = cluster();
    let client = client(&cluster).await;
    // partition 1 is refused; partition 2 answers NOT_LEADER_OR_FOLLOWER
    // once (retried alone)
    let moved = Arc::new(AtomicUsize::new(0));
    let seen = moved.clone();
    cluster.edit::<FetchRequest, _>(move |_, _, resp| {
        for t in &mut resp.responses {
            for p in &mut t.partitions {
                match p.partition_index {
                    1 => {
                        p.error_code = ErrorCode::TOPIC_AUTHORIZATION_FAILED;
                        p.records = Some(Vec::new());
                    }
                    2 if seen.fetch_add(1, Ordering::SeqCst) == 0 => {
                        p.error_code = ErrorCode::NOT_LEADER_OR_FOLLOWER;
                        p.records = Some(Vec::new());
                    }
                    _ => {}
                }
            }
        }
    });
    let g = read(&client, &LagReadOptions::default()).await;
    let got = records(&g);
    assert_eq!(got[0], (0, Some(Records::Exact(12))));
    assert_eq!(got[2], (2, Some(Records::Exact(12))), "retried alone");
    assert_eq!(got[3], (3, Some(Records::Exact(12))));
    // partition 1: bounds only, unknown, and the answer partial
    let row = g.lag.rows.iter().find(|r| r.partition.1 == 1).unwrap();
    assert_eq!(
        row.records,
        Some(Records::Between {
            at_least: 0,
            at_most: 16
        })
    );
    assert_eq!(
        row.verdict,
        LagVerdict::of(row.position.as_ref(), row.records)
    );
    let read_gaps: Vec<_> = g
        .lag
        .gaps
        .iter()
        .filter_map(|gap| match gap {
            LagGap::Read(tp, e) => Some((tp.1, e.code)),
            _ => None,
        })
        .collect();
    assert_eq!(read_gaps, [(1, ErrorCode::TOPIC_AUTHORIZATION_FAILED)]);
    assert!(!g.lag.is_complete());
    // the four asked together, then partition 2 alone
    assert_eq!(asked(&cluster), [4, 1]);
    assert!(moved.load(Ordering::SeqCst) >= 2);
    // the exporter's fold: the refused partition counts as its bounds
    // (0..16), and the read's failure makes the scan partial
    let mut fold = LagFold::new(false);
    g.lag.rows.iter().for_each(|r| fold.add(r));
    let found = fold.finish(&g.lag.gaps);
    let v = found.values.first().unwrap();
    assert_eq!((v.records_at_least, v.records_at_most), (36, 52));
    assert_eq!(found.failed_requests, 1);
    assert_eq!(found.failed_requests, LagFound::of(&g.lag).failed_requests);
}

#[tokio::test(start_paused = true)]
async fn the_exporters_fold_holds_one_value_per_series_and_sums_the_rows() {
    let cluster = cluster();
    let client = client(&cluster).await;
    let g = read(&client, &LagReadOptions::default()).await;
    // per partition: the rows' own values
    let mut fold = LagFold::new(true);
    g.lag.rows.iter().for_each(|r| fold.add(r));
    assert_eq!(fold.finish(&g.lag.gaps), LagFound::of(&g.lag));
    // per topic: one value, the four partitions summed
    let mut fold = LagFold::new(false);
    g.lag.rows.iter().for_each(|r| fold.add(r));
    let found = fold.finish(&g.lag.gaps);
    let sums: Vec<_> = found
        .values
        .iter()
        .map(|v| {
            (
                v.group.as_str(),
                v.topic.as_str(),
                v.records_at_least,
                v.records_at_most,
                v.offset_lag,
            )
        })
        .collect();
    assert_eq!(sums, [("g", "t", 48, 48, Some(64))]);
}
