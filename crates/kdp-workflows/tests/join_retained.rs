//! The join reads DescribeProducers through the view and keeps only what
//! its caller reads ([`Retain`]): on a generated cluster whose producers
//! write to several partitions, the join that keeps every producer holds
//! what the owned describe built, and the judgements `find-hanging` and
//! `blocked` make of a join that keeps fewer are those of the full join.

use std::collections::BTreeMap;
use std::time::Duration;

use kdp_client::describe::{describe_producers, DescribeEvent, DescribeOptions};
use kdp_client::TimeBound;
use kdp_domain::diagnose::blocked::{blocked, Blocked, BlockedOptions};
use kdp_domain::diagnose::findings;
use kdp_domain::joined::Joined;
use kdp_domain::partition::{PartitionOutcome, TopicPartition};
use kdp_domain::repair::findings_judged;
use kdp_domain::retained::Retain;
use kdp_test_support::StallCluster;
use kdp_workflows::join::{join, JoinOptions};

const BUDGET: Duration = Duration::from_secs(30);
const TOPICS: usize = 6;
const PARTITIONS: usize = 4;
/// Producer ids are drawn from a pool this big, so most write to several
/// partitions: open on some, idle or finished on others.
const POOL: usize = 11;

/// The generated cluster: each partition has five producers of the pool,
/// some with a transaction open, their LastTimestamp days, an hour or
/// seconds ago, or unknown (0, -1); each third producer id has an Ongoing
/// transaction at its coordinator holding some of its partitions.
fn cluster_json() -> String {
    let stamps = [
        "\"now-3d\"",
        "\"now-2s\"",
        "\"now-1h\"",
        "0",
        "-1",
        "\"now-20m\"",
    ];
    let mut topics = Vec::new();
    let mut open_on: BTreeMap<usize, Vec<(String, usize)>> = BTreeMap::new();
    for t in 0..TOPICS {
        let mut parts = Vec::new();
        for p in 0..PARTITIONS {
            let n = t * PARTITIONS + p;
            let mut producers = Vec::new();
            let mut start = 100;
            for i in 0..5 {
                // 7 is prime to the pool: five distinct ids per partition
                let pid = (n * 5 + i * 7) % POOL;
                let open = (t + p + i) % 3 == 0;
                let marked = open || i % 2 == 0;
                let stamp = stamps[(n * 3 + i * 5 + pid) % stamps.len()];
                if open {
                    open_on.entry(pid).or_default().push((format!("t{t}"), p));
                    start += 10;
                }
                producers.push(format!(
                    r#"{{"ProducerId": {}, "ProducerEpoch": 0, "LastSequence": {i}, "LastTimestamp": {stamp}, "CoordinatorEpoch": {}, "CurrentTxnStartOffset": {}}}"#,
                    1000 + pid,
                    if marked { 2 } else { -1 },
                    if open { start } else { -1 },
                ));
            }
            parts.push(format!(
                r#"{{"partition": {p}, "leader": {}, "replicas": [1, 2, 3], "high_watermark": 1000, "producers": [{}]}}"#,
                n % 3 + 1,
                producers.join(",")
            ));
        }
        topics.push(format!(
            r#"{{"name": "t{t}", "partitions": [{}]}}"#,
            parts.join(",")
        ));
    }
    let mut txns = Vec::new();
    for (pid, on) in &open_on {
        if pid % 3 != 0 {
            continue;
        }
        let mut by_topic: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        // every other partition tracked: the rest hangs
        for (topic, p) in on.iter().step_by(2) {
            by_topic.entry(topic).or_default().push(*p);
        }
        let partitions: Vec<String> = by_topic
            .iter()
            .map(|(t, ps)| format!("\"{t}\": {ps:?}"))
            .collect();
        txns.push(format!(
            r#"{{"transactional_id": "tx-{pid}", "producer_id": {}, "producer_epoch": 0, "state": "Ongoing", "timeout_ms": 60000, "start_time": "now-2d", "partitions": {{{}}}}}"#,
            1000 + pid,
            partitions.join(",")
        ));
    }
    format!(
        r#"{{"cluster_id": "retained", "brokers": [{{"id": 1}}, {{"id": 2}}, {{"id": 3}}], "topics": [{}], "transactions": [{}]}}"#,
        topics.join(","),
        txns.join(",")
    )
}

fn by_partition(partitions: &[PartitionOutcome]) -> BTreeMap<TopicPartition, &PartitionOutcome> {
    partitions
        .iter()
        .map(|o| ((o.topic.clone(), o.partition), o))
        .collect()
}

async fn joined(cluster: &StallCluster, opts: &JoinOptions) -> Joined {
    let client = cluster.client().await;
    join(&client, opts, &TimeBound::after(BUDGET))
        .await
        .expect("the join")
}

/// `blocked`'s diagnosis of `j`, as `kdp blocked` makes it (no groups:
/// every pinned partition is shown).
fn diagnosed(j: &Joined) -> Blocked {
    let opts = BlockedOptions {
        max_timeout_ms: j.max_timeout_ms(),
        ..Default::default()
    };
    blocked(j, &[], &opts)
}

#[tokio::test(start_paused = true)]
async fn keeping_every_producer_through_the_view_keeps_what_the_owned_describe_built() {
    let cluster = StallCluster::from_json(&cluster_json()).expect("the generated cluster");
    let client = cluster.client().await;
    let mut owned = Vec::new();
    describe_producers(
        client,
        &DescribeOptions::default(),
        &TimeBound::after(BUDGET),
        |ev| {
            if let DescribeEvent::Results { outcomes, .. } = ev {
                owned.extend(outcomes);
            }
        },
    )
    .await
    .expect("the owned describe");
    let every = joined(
        &cluster,
        &JoinOptions::new(DescribeOptions::default(), false),
    )
    .await;
    // the generated topics, and the internal ones the mock adds
    let generated = owned.iter().filter(|o| !o.topic.starts_with("__")).count();
    assert_eq!(generated, TOPICS * PARTITIONS);
    assert_eq!(by_partition(&every.partitions), by_partition(&owned));
    assert!(every.unkept_writes.is_empty());
}

#[tokio::test(start_paused = true)]
async fn find_hanging_judges_the_selected_producers_as_it_judges_them_all() {
    let cluster = StallCluster::from_json(&cluster_json()).expect("the generated cluster");
    let opts = JoinOptions::new(DescribeOptions::default(), true).candidates_only(None);
    let every = joined(&cluster, &opts).await;
    let mut selected = joined(&cluster, &opts.clone().retaining(Retain::Selected)).await;
    selected.now_ms = every.now_ms;

    // every partition is there, fewer producers
    let (all, kept) = (every.producers().count(), selected.producers().count());
    assert_eq!(
        kept,
        every.open_transactions().count(),
        "only open transactions"
    );
    assert!(0 < kept && kept < all, "{kept} of {all} kept");
    let keys = |j: &Joined| by_partition(&j.partitions).into_keys().collect::<Vec<_>>();
    assert_eq!(keys(&selected), keys(&every));
    assert_eq!(selected.summary, every.summary);
    assert_eq!(selected.view.listed, every.view.listed);
    assert_eq!(selected.view.descriptions, every.view.descriptions);
    assert_eq!(selected.offsets, every.offsets);

    let t = every.max_timeout_ms();
    let (full, few) = (findings(&every, t), findings(&selected, t));
    assert_eq!(few, full);
    assert!(
        full.candidates().count() > 0 && full.open.len() > full.candidates().count(),
        "candidates and younger open transactions: {full:?}"
    );
    assert_eq!(
        findings_judged(&selected, &few),
        findings_judged(&every, &full)
    );
}

#[tokio::test(start_paused = true)]
async fn blocked_diagnoses_the_selected_producers_and_their_writes_as_it_does_them_all() {
    let cluster = StallCluster::from_json(&cluster_json()).expect("the generated cluster");
    let opts = JoinOptions::new(DescribeOptions::default(), true);
    let every = joined(&cluster, &opts).await;
    let mut kept = joined(&cluster, &opts.clone().retaining(Retain::SelectedAndWrites)).await;
    kept.now_ms = every.now_ms;
    assert!(!kept.unkept_writes.is_empty());

    let full = diagnosed(&every);
    assert!(
        full.partitions.iter().any(|p| p.pinned_by.is_some()),
        "pinned partitions: {full:?}"
    );
    assert_eq!(diagnosed(&kept), full);

    // the test can fail: without the other partitions' writes a pinning
    // producer's latest write is another
    let mut selected = joined(&cluster, &opts.retaining(Retain::Selected)).await;
    selected.now_ms = every.now_ms;
    assert!(selected.unkept_writes.is_empty());
    assert_ne!(diagnosed(&selected), full);
}
