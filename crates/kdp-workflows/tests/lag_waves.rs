//! A lag read in waves of topics (`read_in_waves`, what `kdp lag -o
//! json|jsonl` and the exporter use) gives the rows and gaps of the one
//! read (`gather`), asks each partition as often, keeps what `Known`
//! proved across the waves, and judges each group's offset as its wave
//! read it: one committed after the first pass is counted exactly from
//! where it now is.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kdp_client::admin::DriverOptions;
use kdp_client::{Client, TimeBound};
use kdp_domain::lag::{lag_each, Known, LagGap, LagRow, Records, WaveGaps};
use kdp_domain::partition::TopicPartition;
use kdp_test_support::StallCluster;
use kdp_workflows::groups::{read_groups, ReadOptions};
use kdp_workflows::lag::{gather, gather_from, LagRead, LagReadOptions};
use kdp_workflows::lag_waves::read_in_waves;

/// Five topics, committed offsets 3, 1, 2, 3 and 1 of them (a, b, c, d,
/// e), so three offsets a wave cuts them into a | b c | d | e, and every
/// group but g5 spans two waves:
/// - a0: 5 records, a committed transaction of 4, 3 records (offsets 0-12);
/// - a1: an aborted transaction of 3, 2 records;
/// - c0: a committed transaction of 2, then one of 3 still open (LSO 3);
/// - b0, d0, d1, e0: records only.
const CLUSTER: &str = r#"{
  "brokers": [{"id": 1, "configs": {"offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "1"}},
              {"id": 2}],
  "topics": [
    {"name": "a", "partitions": [
      {"partition": 0, "leader": 1, "replicas": [1], "batches": [
        {"records": 5},
        {"producer_id": 7, "producer_epoch": 0, "base_sequence": 0, "records": 4, "transactional": true},
        {"producer_id": 7, "producer_epoch": 0, "control": "commit"},
        {"records": 3}]},
      {"partition": 1, "leader": 2, "replicas": [2], "batches": [
        {"producer_id": 8, "producer_epoch": 0, "base_sequence": 0, "records": 3, "transactional": true},
        {"producer_id": 8, "producer_epoch": 0, "control": "abort"},
        {"records": 2}]}]},
    {"name": "b", "partitions": [{"partition": 0, "leader": 2, "replicas": [2], "batches": [{"records": 6}]}]},
    {"name": "c", "partitions": [{"partition": 0, "leader": 1, "replicas": [1], "batches": [
        {"producer_id": 9, "producer_epoch": 0, "base_sequence": 0, "records": 2, "transactional": true},
        {"producer_id": 9, "producer_epoch": 0, "control": "commit"},
        {"producer_id": 9, "producer_epoch": 0, "base_sequence": 2, "records": 3, "transactional": true}]}]},
    {"name": "d", "partitions": [
      {"partition": 0, "leader": 1, "replicas": [1], "batches": [{"records": 4}]},
      {"partition": 1, "leader": 2, "replicas": [2], "batches": [{"records": 4}]}]},
    {"name": "e", "partitions": [{"partition": 0, "leader": 1, "replicas": [1], "batches": [{"records": 3}]}]}
  ],
  "groups": [
    {"group_id": "g1", "offsets": {"a": {"0": 0, "1": 0}, "c": {"0": 0}}},
    {"group_id": "g2", "offsets": {"b": {"0": 2}, "d": {"0": 1, "1": 0}}},
    {"group_id": "g3", "offsets": {"a": {"0": 12}, "d": {"1": 4}}},
    {"group_id": "g4", "offsets": {"c": {"0": 3}, "e": {"0": 1}}},
    {"group_id": "g5", "offsets": {}}
  ]
}"#;

fn opts(per_wave: usize) -> LagReadOptions {
    LagReadOptions {
        committed_per_wave: per_wave,
        ..LagReadOptions::default()
    }
}

fn bound() -> TimeBound {
    TimeBound::after(Duration::from_secs(30))
}

async fn connect(cluster: &StallCluster) -> Arc<Client> {
    Arc::new(
        Client::connect(cluster.bootstrap(), cluster.client_config())
            .await
            .unwrap(),
    )
}

/// What the waves handed over, judged as `kdp lag` judges them.
#[derive(Default)]
struct Judged {
    rows: Vec<LagRow>,
    gaps: Vec<LagGap>,
    fetched: BTreeMap<TopicPartition, u64>,
    waves: usize,
}

async fn in_waves(
    client: &Arc<Client>,
    opts: &LagReadOptions,
    known: Option<&mut Known>,
    mut after: impl FnMut(usize),
) -> Judged {
    let mut out = Judged::default();
    let mut gaps = WaveGaps::new();
    let mut handed = 0;
    let waves = read_in_waves(
        client,
        opts,
        &DriverOptions::default(),
        &bound(),
        known,
        |read: LagRead| {
            gaps.add(lag_each(
                &read.groups,
                &read.partitions,
                &read.blocked,
                &opts.lag,
                |r| out.rows.push(r),
            ));
            for (tp, n) in read.fetched {
                *out.fetched.entry(tp).or_default() += n;
            }
            after(handed);
            handed += 1;
        },
    )
    .await
    .unwrap();
    assert_eq!(waves, handed, "every wave is handed over");
    out.gaps = gaps.finish();
    out.waves = waves;
    out
}

fn key(r: &LagRow) -> (String, TopicPartition) {
    (r.group_id.clone(), r.partition.clone())
}

fn sorted(mut rows: Vec<LagRow>) -> Vec<LagRow> {
    rows.sort_by_key(key);
    rows
}

#[tokio::test(start_paused = true)]
async fn the_waves_give_the_rows_and_gaps_of_one_read_each_partition_asked_as_often() {
    let cluster = StallCluster::from_json(CLUSTER).unwrap();
    let client = connect(&cluster).await;
    let asked = || cluster.asked(kdp_wire::api::OFFSET_FETCH);
    let before = asked();
    let one = gather(&client, &opts(0), &DriverOptions::default(), &bound())
        .await
        .unwrap();
    let by_one_read = asked() - before;
    assert!(one.lag.is_complete(), "{:?}", one.lag.gaps);
    // the cluster's own figures, so that the comparison is of something
    let records = |rows: &[LagRow], g: &str, t: &str, p: i32| {
        rows.iter()
            .find(|r| r.group_id == g && r.partition == (t.to_string(), p))
            .and_then(|r| r.records)
    };
    assert_eq!(
        records(&one.lag.rows, "g1", "a", 0),
        Some(Records::Exact(12))
    );
    assert_eq!(
        records(&one.lag.rows, "g1", "a", 1),
        Some(Records::Exact(2))
    );
    assert_eq!(
        records(&one.lag.rows, "g2", "d", 0),
        Some(Records::Exact(3))
    );
    assert_eq!(one.lag.rows.len(), 10);

    // one wave: the same rows in the same order, the offsets asked once
    let before = asked();
    let whole = in_waves(&client, &opts(0), None, |_| {}).await;
    assert_eq!(asked() - before, by_one_read);
    assert_eq!(whole.waves, 1);
    // ten offsets fit in a wave of 100: the same
    let before = asked();
    let fits = in_waves(&client, &opts(100), None, |_| {}).await;
    assert_eq!((fits.waves, asked() - before), (1, by_one_read));
    assert_eq!(fits.rows, one.lag.rows);
    assert_eq!(whole.rows, one.lag.rows);
    assert_eq!(whole.gaps, one.lag.gaps);

    // a | b c | d | e: asked again in each wave
    let before = asked();
    let cut = in_waves(&client, &opts(3), None, |_| {}).await;
    assert!(asked() - before > by_one_read);
    assert_eq!(cut.waves, 4);
    assert_ne!(cut.rows, one.lag.rows, "rows come wave by wave");
    assert_eq!(sorted(cut.rows), sorted(one.lag.rows.clone()));
    assert!(cut.gaps.is_empty(), "{:?}", cut.gaps);
    // each partition fetched as often as by the one read
    assert_eq!(cut.fetched, one.fetched);
    assert!(!one.fetched.is_empty());

    // a wave per topic
    let each = in_waves(&client, &opts(1), None, |_| {}).await;
    assert_eq!(each.waves, 5);
    assert_eq!(sorted(each.rows), sorted(one.lag.rows));
}

#[tokio::test(start_paused = true)]
async fn an_offset_committed_after_the_first_pass_is_counted_where_it_now_is() {
    let cluster = StallCluster::from_json(CLUSTER).unwrap();
    let client = connect(&cluster).await;
    // g2 commits d0 at 3 once the first wave (a) is judged: d is read
    // in the third wave, which asks g2's offsets again
    let judged = in_waves(&client, &opts(3), None, |wave| {
        if wave == 0 {
            cluster.update(|c| {
                let g2 = c.groups.iter_mut().find(|g| g.group_id == "g2").unwrap();
                g2.offsets.get_mut("d").unwrap().insert(0, 3);
            });
        }
    })
    .await;
    let d0 = judged
        .rows
        .iter()
        .find(|r| r.group_id == "g2" && r.partition == ("d".to_string(), 0))
        .unwrap();
    assert_eq!(d0.position.and_then(|p| p.committed), Some(3));
    assert_eq!(d0.records, Some(Records::Exact(1)));
    // the same as a read made after the commit
    let after = gather(&client, &opts(0), &DriverOptions::default(), &bound())
        .await
        .unwrap();
    assert_eq!(sorted(judged.rows), sorted(after.lag.rows));
}

#[tokio::test(start_paused = true)]
async fn what_known_proved_is_kept_across_the_waves() {
    // the exporter's scans: in waves, and at once, from the same cluster
    let cluster = StallCluster::from_json(CLUSTER).unwrap();
    let client = connect(&cluster).await;
    let driver = DriverOptions::default();
    let mut at_once = Known::new();
    let mut fetched_at_once = Vec::new();
    for _ in 0..2 {
        let groups = read_groups(&client, &ReadOptions::default(), &driver, &bound())
            .await
            .unwrap();
        let g = gather_from(
            &client,
            groups,
            &opts(0),
            &driver,
            &bound(),
            Some(&mut at_once),
        )
        .await;
        fetched_at_once.push(g.fetched.into_keys().collect::<Vec<_>>());
    }
    let mut known = Known::new();
    let mut fetched_in_waves = Vec::new();
    for _ in 0..2 {
        let j = in_waves(&client, &opts(3), Some(&mut known), |_| {}).await;
        fetched_in_waves.push(j.fetched.into_keys().collect::<Vec<_>>());
    }
    assert_eq!(fetched_in_waves, fetched_at_once);
    // the second scan skips what the first proved (records only, no marker)
    assert!(
        fetched_at_once[1].len() < fetched_at_once[0].len(),
        "{fetched_at_once:?}"
    );
    for tp in [("b", 0), ("d", 0), ("e", 0)] {
        let tp = (tp.0.to_string(), tp.1);
        assert!(known.stretch(&tp).is_some(), "{tp:?} kept");
    }
}

/// Share groups (judged in the first wave), an open transaction holding
/// an LSO (named in its wave), and consumer groups across two topics.
const WITH_SHARES: &str = r#"{
  "brokers": [{"id": 1, "configs": {"offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "1",
    "transaction.state.log.replication.factor": "1", "transaction.state.log.num.partitions": "1"}}],
  "topics": [
    {"name": "jobs", "partitions": [{"partition": 0, "leader": 1, "replicas": [1],
      "producers": [{"ProducerId": 7, "ProducerEpoch": 0, "LastSequence": 1, "LastTimestamp": "now-2m",
                     "CoordinatorEpoch": 0, "CurrentTxnStartOffset": 6}],
      "batches": [
      {"records": 3},
      {"producer_id": 6, "producer_epoch": 0, "base_sequence": 0, "records": 2, "transactional": true},
      {"producer_id": 6, "producer_epoch": 0, "control": "commit"},
      {"producer_id": 7, "producer_epoch": 0, "base_sequence": 0, "records": 2, "transactional": true}]}]},
    {"name": "audit", "partitions": [{"partition": 0, "leader": 1, "replicas": [1], "batches": [{"records": 6}]}]},
    {"name": "zeta", "partitions": [{"partition": 0, "leader": 1, "replicas": [1], "batches": [{"records": 2}]}]}
  ],
  "transactions": [
    {"transactional_id": "jobs-writer", "producer_id": 7, "producer_epoch": 0, "state": "Ongoing",
     "timeout_ms": 3600000, "start_time": "now-2m", "partitions": {"jobs": [0]}}
  ],
  "groups": [
    {"group_id": "committed-workers", "type": "share", "state": "Empty",
     "configs": {"share.isolation.level": "read_committed"}, "offsets": {"jobs": {"0": 3}}},
    {"group_id": "default-workers", "type": "share", "state": "Empty", "offsets": {"zeta": {"0": 0}}},
    {"group_id": "plain", "offsets": {"jobs": {"0": 6}, "audit": {"0": 1}}},
    {"group_id": "zz", "offsets": {"zeta": {"0": 1}, "audit": {"0": 6}}}
  ]
}"#;

fn gaps_sorted(gaps: &[LagGap]) -> Vec<String> {
    let mut g: Vec<String> = gaps.iter().map(|g| format!("{g:?}")).collect();
    g.sort();
    g
}

#[tokio::test(start_paused = true)]
async fn share_groups_holders_and_failures_are_judged_in_waves_as_in_one_read() {
    use kdp_test_support::Fault;
    use kdp_wire::{api, ErrorCode};
    let cluster = StallCluster::from_json(WITH_SHARES).unwrap();
    let client = connect(&cluster).await;
    let compare = |label: &'static str, waves: usize| {
        let client = client.clone();
        async move {
            let one = gather(&client, &opts(0), &DriverOptions::default(), &bound())
                .await
                .unwrap();
            // a wave per topic: audit | jobs | zeta
            let cut = in_waves(&client, &opts(1), None, |_| {}).await;
            assert_eq!(cut.waves, waves, "{label}");
            assert_eq!(sorted(cut.rows), sorted(one.lag.rows.clone()), "{label}");
            assert_eq!(
                gaps_sorted(&cut.gaps),
                gaps_sorted(&one.lag.gaps),
                "{label}"
            );
            one
        }
    };
    let one = compare("answered", 3).await;
    assert!(one.lag.gaps.is_empty(), "{:?}", one.lag.gaps);
    let held = one
        .lag
        .rows
        .iter()
        .find(|r| r.group_id == "plain" && r.partition.0 == "jobs")
        .unwrap();
    assert_eq!(
        held.holder
            .as_ref()
            .and_then(|h| h.transactional_id.as_deref()),
        Some("jobs-writer")
    );
    assert!(one.lag.rows.iter().any(|r| r.share.is_some()));

    // a share group's offsets refused: its gap once, in the first wave
    cluster.fault(
        api::DESCRIBE_SHARE_GROUP_OFFSETS,
        Fault::Error(ErrorCode::GROUP_AUTHORIZATION_FAILED),
    );
    let one = compare("share offsets refused", 3).await;
    assert!(!one.lag.gaps.is_empty());

    // every group's offsets refused: each group's gap once, in the one
    // wave left (no topic is known to be read)
    cluster.fault(
        api::OFFSET_FETCH,
        Fault::Error(ErrorCode::GROUP_AUTHORIZATION_FAILED),
    );
    let one = compare("offsets refused", 1).await;
    assert!(
        one.lag
            .gaps
            .iter()
            .any(|g| matches!(g, LagGap::GroupOffsets(id, _) if id == "zz")),
        "{:?}",
        one.lag.gaps
    );
}

#[tokio::test(start_paused = true)]
async fn offsets_refused_after_the_first_wave_are_a_gap_per_group_once() {
    use kdp_test_support::Fault;
    use kdp_wire::{api, ErrorCode};
    let cluster = StallCluster::from_json(CLUSTER).unwrap();
    let client = connect(&cluster).await;
    // a | b c | d | e: from the second wave on, OffsetFetch is refused
    let judged = in_waves(&client, &opts(3), None, |wave| {
        if wave == 0 {
            cluster.fault(
                api::OFFSET_FETCH,
                Fault::Error(ErrorCode::GROUP_AUTHORIZATION_FAILED),
            );
        }
    })
    .await;
    let mut failed: Vec<&str> = judged
        .gaps
        .iter()
        .filter_map(|g| match g {
            LagGap::GroupOffsets(id, _) => Some(id.as_str()),
            _ => None,
        })
        .collect();
    failed.sort();
    // g2 (b, d) and g4 (c, e) fail in two waves each: named once; g1 and
    // g3 fail in one (c; d)
    assert_eq!(failed, vec!["g1", "g2", "g3", "g4"], "{:?}", judged.gaps);
    assert_eq!(judged.gaps.len(), 4, "{:?}", judged.gaps);
    // the first wave's rows stand: g1 and g3 on a
    let mut on_a: Vec<(String, TopicPartition)> = judged.rows.iter().map(key).collect();
    on_a.sort();
    assert_eq!(
        on_a,
        vec![
            ("g1".to_string(), ("a".to_string(), 0)),
            ("g1".to_string(), ("a".to_string(), 1)),
            ("g3".to_string(), ("a".to_string(), 0)),
        ]
    );
}
