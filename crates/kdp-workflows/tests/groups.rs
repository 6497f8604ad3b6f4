//! Reading every group at once (`kdp_workflows::groups::read_groups`)
//! against kdp-test-support's demo cluster: the broker that lists a group
//! is its coordinator, and a coordinator that moves after the listing is
//! looked up as usual.

use std::sync::Arc;

use kdp_client::admin::DriverOptions;
use kdp_client::{Client, ClientConfig, TimeBound};
use kdp_domain::groups::Committed;
use kdp_test_support::{elect, StallCluster};
use kdp_wire::api;
use kdp_wire::messages::OffsetFetchRequest;
use kdp_workflows::groups::{read_groups, ReadOptions};

async fn connected(cluster: &StallCluster) -> Arc<Client> {
    let config = ClientConfig {
        connector: Arc::new(cluster.clone()),
        ..Default::default()
    };
    Arc::new(Client::connect(cluster.bootstrap(), config).await.unwrap())
}

/// The broker that lists a group coordinates it: reading every group (their
/// offsets and members) looks up only the visibility probe's coordinator,
/// not the listed groups' again.
#[tokio::test(start_paused = true)]
async fn listed_groups_are_not_looked_up_again() {
    let cluster = StallCluster::demo();
    let client = connected(&cluster).await;
    let before = cluster.asked(api::FIND_COORDINATOR);
    let read = read_groups(
        &client,
        &ReadOptions {
            members: true,
            ..Default::default()
        },
        &DriverOptions::default(),
        &TimeBound::after(std::time::Duration::from_secs(30)),
    )
    .await
    .unwrap();
    assert_eq!(read.answers.len(), 4);
    assert!(read
        .answers
        .iter()
        .all(|a| a.offsets.is_ok() && a.members.is_some()));
    assert_eq!(
        cluster.asked(api::FIND_COORDINATOR) - before,
        1,
        "only the probe's"
    );
}

/// A listed group whose coordinator moves after the listing: the broker
/// that listed it answers NOT_COORDINATOR, and it is looked up as usual.
#[tokio::test(start_paused = true)]
async fn a_group_that_moves_after_its_listing_is_looked_up() {
    let cluster = StallCluster::demo();
    let client = connected(&cluster).await;
    let (mut moved, mut answered) = (false, 0);
    // payments-ledger is on __consumer_offsets-2, led by broker 3: it moves
    // once all three brokers have listed their groups
    cluster.after_answer(api::LIST_GROUPS, move |c, _| {
        answered += 1;
        if !moved && answered == 3 {
            moved = elect(c, "__consumer_offsets", 2, 1);
        }
    });
    let read = read_groups(
        &client,
        &ReadOptions {
            only: vec!["payments-ledger".into()],
            members: true,
        },
        &DriverOptions::default(),
        &TimeBound::after(std::time::Duration::from_secs(30)),
    )
    .await
    .unwrap();
    let ledger = &read.answers[0];
    assert_eq!(
        *ledger.offsets.as_ref().unwrap().get("payments", 0).unwrap(),
        Committed::At(40112)
    );
    assert_eq!(ledger.members, Some(Ok(1)));
    let brokers: Vec<i32> = cluster
        .requests::<OffsetFetchRequest>()
        .iter()
        .map(|r| r.0)
        .collect();
    assert_eq!(
        brokers,
        vec![3, 1],
        "the lister first, then the new coordinator"
    );
}
