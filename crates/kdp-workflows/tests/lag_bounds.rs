//! The lag's bounds (log start, high watermark, LSO) read in waves: the
//! three ListOffsets runs of a wave share one Metadata lookup, each wave's
//! requests ask only its partitions and go out after the previous wave's
//! answers (the reads' routing is looked up in the same waves), and the bounds, counts and rows are those of the three
//! whole-cluster runs whatever the wave.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use kdp_client::admin::DriverOptions;
use kdp_client::txn::offsets::list_offsets;
use kdp_client::{Client, TimeBound};
use kdp_domain::lag::Bounds;
use kdp_domain::partition::TopicPartition;
use kdp_test_support::StallCluster;
use kdp_wire::messages::list_offsets::{EARLIEST_TIMESTAMP, LATEST_TIMESTAMP};
use kdp_wire::messages::{ListOffsetsRequest, MetadataRequest, READ_COMMITTED, READ_UNCOMMITTED};
use kdp_workflows::lag::{gather, Gathered, LagReadOptions};

/// Topics t0..t3 of 3 partitions on brokers 1 and 2 (leaders alternate):
/// partition p of topic t holds 2 + t + p plain records, a committed
/// transaction of 2 and its marker; t1's partition 1 also an open
/// transaction of 3 records (its LSO below its high watermark). One group
/// committed at 1 on every partition.
fn cluster() -> StallCluster {
    let mut topics = Vec::new();
    let mut offsets = Vec::new();
    for t in 0..4 {
        let mut partitions = Vec::new();
        for p in 0..3 {
            let leader = 1 + (t + p) % 2;
            let open = if (t, p) == (1, 1) {
                r#",{"producer_id": 9, "producer_epoch": 0, "base_sequence": 0, "records": 3, "transactional": true}"#
            } else {
                ""
            };
            partitions.push(format!(
                r#"{{"partition": {p}, "leader": {leader}, "replicas": [{leader}], "batches": [
                  {{"records": {}}},
                  {{"producer_id": {}, "producer_epoch": 0, "base_sequence": 0, "records": 2, "transactional": true}},
                  {{"producer_id": {}, "producer_epoch": 0, "control": "commit"}}{open}]}}"#,
                2 + t + p,
                100 + t * 3 + p,
                100 + t * 3 + p,
            ));
        }
        topics.push(format!(
            r#"{{"name": "t{t}", "partitions": [{}]}}"#,
            partitions.join(",")
        ));
        offsets.push(format!(r#""t{t}": {{"0": 1, "1": 1, "2": 1}}"#));
    }
    let json = format!(
        r#"{{
  "brokers": [
    {{"id": 1, "configs": {{"offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "1"}}}},
    {{"id": 2}}],
  "topics": [{}],
  "groups": [{{"group_id": "g", "offsets": {{{}}}}}]
}}"#,
        topics.join(","),
        offsets.join(", ")
    );
    StallCluster::from_json(&json).unwrap()
}

/// Every partition, in order.
fn keys() -> Vec<TopicPartition> {
    (0..4)
        .flat_map(|t| (0..3).map(move |p| (format!("t{t}"), p)))
        .collect()
}

async fn client(cluster: &StallCluster) -> Arc<Client> {
    Arc::new(
        Client::connect(cluster.bootstrap(), cluster.client_config())
            .await
            .unwrap(),
    )
}

fn bound() -> TimeBound {
    TimeBound::after(Duration::from_secs(30))
}

async fn read(client: &Arc<Client>, per_wave: usize) -> Gathered {
    let opts = LagReadOptions {
        offsets_per_wave: per_wave,
        ..LagReadOptions::default()
    };
    gather(client, &opts, &DriverOptions::default(), &bound())
        .await
        .unwrap()
}

/// The bounds as three whole-cluster ListOffsets runs give them (the
/// lag's way before its waves).
async fn whole(client: &Arc<Client>) -> Vec<(TopicPartition, Bounds)> {
    let d = DriverOptions::default();
    let b = bound();
    let run = |ts, iso| list_offsets(client, keys(), ts, iso, &d, &b);
    let (earliest, hwm, lso) = tokio::join!(
        run(EARLIEST_TIMESTAMP, READ_UNCOMMITTED),
        run(LATEST_TIMESTAMP, READ_UNCOMMITTED),
        run(LATEST_TIMESTAMP, READ_COMMITTED),
    );
    keys()
        .into_iter()
        .map(|tp| {
            let b = Bounds {
                log_start: Some(earliest[&tp].clone().unwrap()),
                high_watermark: hwm[&tp].clone().unwrap(),
                last_stable_offset: lso[&tp].clone().unwrap(),
            };
            (tp, b)
        })
        .collect()
}

fn bounds(g: &Gathered) -> Vec<(TopicPartition, Bounds)> {
    g.partitions
        .iter()
        .map(|(tp, p)| (tp.clone(), p.bounds.clone().unwrap()))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn bounds_in_waves_are_those_of_the_whole_cluster_runs() {
    let cluster = cluster();
    let client = client(&cluster).await;
    let want = whole(&client).await;
    let held: Vec<_> = want.iter().filter(|(_, b)| b.held_back() > 0).collect();
    assert_eq!(held.len(), 1, "t1-1's open transaction: {want:?}");
    let first = read(&client, 10_000).await;
    assert_eq!(bounds(&first), want);
    for per_wave in [1, 2, 5, 11, 12, 0] {
        let g = read(&client, per_wave).await;
        assert_eq!(bounds(&g), want, "waves of {per_wave}");
        assert_eq!(g.partitions, first.partitions, "waves of {per_wave}");
        let rows = |g: &Gathered| -> Vec<_> {
            g.lag
                .rows
                .iter()
                .map(|r| (r.partition.clone(), r.position, r.records, r.held_back))
                .collect()
        };
        assert_eq!(rows(&g), rows(&first), "waves of {per_wave}");
        assert!(g.lag.is_complete(), "{:?}", g.lag.gaps);
    }
}

#[tokio::test(start_paused = true)]
async fn list_offsets_go_out_in_waves_each_with_one_lookup() {
    let cluster = cluster();
    let client = client(&cluster).await;
    let g = read(&client, 5).await;
    assert!(g.lag.is_complete(), "{:?}", g.lag.gaps);
    let keys = keys();
    // the wave of each partition: 12 partitions in waves of 5, 5 and 2
    let wave_of = |tp: &TopicPartition| keys.iter().position(|k| k == tp).unwrap() / 5;
    let mut waves_in_order = Vec::new();
    let mut asked = [0usize; 3];
    for (_, r) in cluster.requests::<ListOffsetsRequest>() {
        let tps: Vec<(TopicPartition, i64)> = r
            .topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|p| ((t.name.clone(), p.partition_index), p.timestamp))
            })
            .collect();
        // the bounds' runs, not the proof's (a time)
        if tps.iter().any(|(_, ts)| *ts >= 0) {
            continue;
        }
        let waves: BTreeSet<usize> = tps.iter().map(|(tp, _)| wave_of(tp)).collect();
        assert_eq!(
            waves.len(),
            1,
            "a request asks one wave's partitions: {tps:?}"
        );
        let w = *waves.first().unwrap();
        waves_in_order.push(w);
        asked[w] += tps.len();
    }
    assert!(
        waves_in_order.is_sorted(),
        "a wave is asked after the previous one's answers: {waves_in_order:?}"
    );
    // each partition three times (log start, high watermark, LSO), in at
    // most one request per broker and run
    assert_eq!(asked, [15, 15, 6]);
    assert!(waves_in_order.len() <= 3 * 2 * 3, "{waves_in_order:?}");
    // one Metadata lookup per wave, for its topics, shared by its runs;
    // then the reads' routing, looked up in the same waves
    let waves = [vec!["t0", "t1"], vec!["t1", "t2", "t3"], vec!["t3"]];
    let looked_up: Vec<Vec<String>> = cluster
        .requests::<MetadataRequest>()
        .into_iter()
        .filter_map(|(_, r)| Some(r.topics?.into_iter().filter_map(|t| t.name).collect()))
        .filter(|topics: &Vec<String>| topics.len() > 1 || waves.contains(&topics_of(topics)))
        .collect();
    let want: Vec<Vec<String>> = waves
        .iter()
        .chain(&waves)
        .map(|w| w.iter().map(ToString::to_string).collect())
        .collect();
    assert_eq!(looked_up, want);
}

fn topics_of(topics: &[String]) -> Vec<&str> {
    topics.iter().map(String::as_str).collect()
}
