//! The join asks only what its answer needs: with `candidates_only`
//! (find-hanging without a wider view) the coordinators are asked about
//! Kafka's candidates alone and only their partitions' offsets are read,
//! and the verdicts are those of the full join.

use std::collections::BTreeSet;
use std::time::Duration;

use kdp_client::describe::DescribeOptions;
use kdp_client::TimeBound;
use kdp_domain::diagnose::findings;
use kdp_domain::diagnose::flags::Coordinator;
use kdp_domain::diagnose::hanging::is_candidate;
use kdp_domain::joined::{max_timeout, Joined, TimeoutSource};
use kdp_test_support::StallCluster;
use kdp_wire::messages::{ListOffsetsRequest, ListTransactionsRequest};
use kdp_workflows::join::{join, JoinOptions};

const BUDGET: Duration = Duration::from_secs(30);

fn partitions_of(r: &ListOffsetsRequest) -> impl Iterator<Item = (String, i32)> + '_ {
    r.topics.iter().flat_map(|t| {
        t.partitions
            .iter()
            .map(|p| (t.name.clone(), p.partition_index))
    })
}

async fn joined(cluster: &StallCluster, given: Option<i64>, candidates: bool) -> Joined {
    let client = cluster.client().await;
    let mut opts = JoinOptions::new(DescribeOptions::default(), true);
    if candidates {
        opts = opts.candidates_only(given);
    }
    join(&client, &opts, &TimeBound::after(BUDGET))
        .await
        .expect("the join")
}

#[tokio::test(start_paused = true)]
async fn candidates_only_looks_up_and_reads_offsets_of_the_candidates_alone() {
    let cluster = StallCluster::demo();
    let all = joined(&cluster, None, false).await;
    let (threshold, source) = max_timeout(None, all.cluster_max_timeout_ms);
    assert_eq!(source, TimeoutSource::Cluster, "the demo's brokers say");
    let open: BTreeSet<(String, i32)> = all
        .open_transactions()
        .map(|(t, p, _)| (t.to_string(), p))
        .collect();
    let candidates: BTreeSet<(String, i32)> = all
        .open_transactions()
        .filter(|(_, _, p)| is_candidate(p, all.now_ms, threshold))
        .map(|(t, p, _)| (t.to_string(), p))
        .collect();
    assert!(
        !candidates.is_empty() && candidates.len() < open.len(),
        "the demo has candidates and recent open transactions: {candidates:?} of {open:?}"
    );
    let before = cluster.requests::<ListOffsetsRequest>().len();
    let listed_before = cluster.requests::<ListTransactionsRequest>().len();

    let only = joined(&cluster, None, true).await;
    assert_eq!(only.candidates_only, Some(threshold));
    // the offsets read are the candidates' partitions, and no other was asked
    let read: BTreeSet<(String, i32)> = only.offsets.keys().cloned().collect();
    assert_eq!(read, candidates);
    let asked: BTreeSet<(String, i32)> = cluster.requests::<ListOffsetsRequest>()[before..]
        .iter()
        .flat_map(|(_, r)| partitions_of(r).collect::<Vec<_>>())
        .collect();
    assert_eq!(asked, candidates);
    // ListTransactions is filtered by the candidates' producer ids
    let candidate_ids: BTreeSet<i64> = all
        .open_transactions()
        .filter(|(_, _, p)| is_candidate(p, all.now_ms, threshold))
        .map(|(_, _, p)| p.producer_id)
        .collect();
    for (_, r) in &cluster.requests::<ListTransactionsRequest>()[listed_before..] {
        let filtered: BTreeSet<i64> = r.producer_id_filters.iter().copied().collect();
        assert_eq!(filtered, candidate_ids);
    }
    // the same verdicts as the full join
    assert_eq!(findings(&only, threshold), findings(&all, threshold));
    // a producer that was not looked up is unseen, never "unknown to its coordinator"
    for (_, _, p) in only.open_transactions() {
        if !is_candidate(p, only.now_ms, threshold) {
            assert!(matches!(only.coordinator(p), Coordinator::Unseen), "{p:?}");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_given_threshold_needs_no_config_first_and_selects_by_it() {
    let cluster = StallCluster::demo();
    let all = joined(&cluster, None, false).await;
    // a threshold of a day: no demo transaction is that idle
    let day = 86_400_000;
    let only = joined(&cluster, Some(day), true).await;
    assert_eq!(only.candidates_only, Some(day));
    let expected: BTreeSet<(String, i32)> = all
        .open_transactions()
        .filter(|(_, _, p)| is_candidate(p, all.now_ms, day))
        .map(|(t, p, _)| (t.to_string(), p))
        .collect();
    let read: BTreeSet<(String, i32)> = only.offsets.keys().cloned().collect();
    assert_eq!(read, expected);
    assert_eq!(findings(&only, day), findings(&all, day));
}
