//! `kdp transactions list`'s reads (`kdp_workflows::transactions::list`)
//! against kdp-test-support's demo cluster: each listed id is described at
//! the broker that listed it (its coordinator) without a FindCoordinator,
//! and an id whose coordinator moves after the listing is looked up as
//! usual.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use kdp_client::admin::DriverOptions;
use kdp_client::txn::list::ListFilters;
use kdp_client::{Client, ClientConfig, TimeBound};
use kdp_test_support::{elect, StallCluster};
use kdp_wire::api;
use kdp_wire::messages::DescribeTransactionsRequest;
use kdp_workflows::transactions::{list, Listed};

async fn listed(cluster: &StallCluster) -> Listed {
    let config = ClientConfig {
        connector: Arc::new(cluster.clone()),
        ..Default::default()
    };
    let client = Arc::new(Client::connect(cluster.bootstrap(), config).await.unwrap());
    list(
        &client,
        &ListFilters::default(),
        &DriverOptions::default(),
        &TimeBound::after(Duration::from_secs(30)),
    )
    .await
    .unwrap()
}

/// The ids each broker was asked to describe, as (broker, id).
fn described_at(cluster: &StallCluster) -> BTreeSet<(i32, String)> {
    cluster
        .requests::<DescribeTransactionsRequest>()
        .into_iter()
        .flat_map(|(b, r)| r.transactional_ids.into_iter().map(move |id| (b, id)))
        .collect()
}

#[tokio::test(start_paused = true)]
async fn listed_ids_are_described_where_listed_without_a_lookup() {
    let cluster = StallCluster::demo();
    let l = listed(&cluster).await;
    assert!(l.failed.is_empty(), "{:?}", l.failed);
    assert!(l.entries.len() >= 5, "{:?}", l.entries);
    let ids: Vec<&str> = l.entries.iter().map(|e| &*e.transactional_id).collect();
    assert!(ids.windows(2).all(|w| w[0] <= w[1]), "sorted: {ids:?}");
    assert_eq!(cluster.asked(api::FIND_COORDINATOR), 0);
    let asked: BTreeSet<(i32, String)> = l
        .entries
        .iter()
        .map(|e| (e.coordinator, e.transactional_id.to_string()))
        .collect();
    assert_eq!(described_at(&cluster), asked);
    assert!(l.start_failures.is_empty(), "{:?}", l.start_failures);
    assert!(l.entries.iter().all(|e| e.start_time_ms > 0), "{l:?}");
}

#[tokio::test(start_paused = true)]
async fn an_id_whose_coordinator_moves_after_the_listing_is_looked_up() {
    let cluster = StallCluster::demo();
    let mut answered = 0;
    // every coordinator partition moves once all three brokers have listed
    cluster.after_answer(api::LIST_TRANSACTIONS, move |c, _| {
        answered += 1;
        if answered == 3 {
            for (p, leader) in [(0, 2), (1, 3), (2, 1)] {
                assert!(elect(c, "__transaction_state", p, leader));
            }
        }
    });
    let l = listed(&cluster).await;
    assert!(cluster.asked(api::FIND_COORDINATOR) > 0);
    assert!(!l.entries.is_empty());
    assert!(l.start_failures.is_empty(), "{:?}", l.start_failures);
    assert!(l.entries.iter().all(|e| e.start_time_ms > 0), "{l:?}");
    // each id was asked first of the broker that listed it, then of another
    let asked = described_at(&cluster);
    for e in &l.entries {
        let at: Vec<i32> = asked
            .iter()
            .filter(|(_, id)| *id == *e.transactional_id)
            .map(|(b, _)| *b)
            .collect();
        assert!(
            at.contains(&e.coordinator) && at.len() == 2,
            "{e:?}: {at:?}"
        );
    }
}
