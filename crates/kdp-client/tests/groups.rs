//! `kdp_client::groups` against kdp-test-support's demo cluster (the mock's
//! own group APIs): listing on every broker, committed offsets batched per
//! coordinator, and a coordinator that moves between lookup and fetch.

use std::sync::Arc;

use kdp_client::admin::DriverOptions;
use kdp_client::groups::{committed_offsets, describe_groups, list_groups, Description};
use kdp_client::TimeBound;
use kdp_client::{Client, ClientConfig};
use kdp_domain::groups::{Committed, GroupState, GroupType};
use kdp_test_support::{elect, StallCluster};
use kdp_wire::api;
use kdp_wire::messages::OffsetFetchRequest;

/// The default bound: 30 s from now, Kafka's request timeout and retries.
fn bound() -> TimeBound {
    TimeBound::after(std::time::Duration::from_secs(30))
}

async fn connected(cluster: &StallCluster) -> Arc<Client> {
    let config = ClientConfig {
        connector: Arc::new(cluster.clone()),
        ..Default::default()
    };
    Arc::new(Client::connect(cluster.bootstrap(), config).await.unwrap())
}

#[tokio::test(start_paused = true)]
async fn every_broker_lists_the_groups_it_coordinates() {
    let cluster = StallCluster::demo();
    let client = connected(&cluster).await;
    let listings = list_groups(
        &client,
        &Default::default(),
        &DriverOptions::default(),
        &bound(),
    )
    .await
    .unwrap();
    let mut groups: Vec<(String, i32, Option<GroupState>, Option<GroupType>)> = listings
        .into_values()
        .flat_map(|r| r.unwrap())
        .map(|g| (g.group_id, g.coordinator, g.state, g.group_type))
        .collect();
    groups.sort();
    assert_eq!(
        groups,
        vec![
            (
                "payments-archive".into(),
                2,
                Some(GroupState::Empty),
                Some(GroupType::Classic)
            ),
            (
                "payments-audit".into(),
                3,
                Some(GroupState::Stable),
                Some(GroupType::Consumer)
            ),
            (
                "payments-ledger".into(),
                3,
                Some(GroupState::Stable),
                Some(GroupType::Classic)
            ),
            (
                "payments-reporting".into(),
                2,
                Some(GroupState::Stable),
                Some(GroupType::Classic)
            ),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn committed_offsets_one_request_per_coordinator() {
    let cluster = StallCluster::demo();
    let client = connected(&cluster).await;
    let groups = [
        "payments-ledger",
        "payments-audit",
        "payments-reporting",
        "nobody",
    ];
    let got = committed_offsets(
        &client,
        groups.iter().map(|g| g.to_string()).collect(),
        &DriverOptions::default(),
        &bound(),
    )
    .await
    .unwrap();
    let at = |g: &str, p: i32| got[g].as_ref().unwrap().get("payments", p).cloned();
    assert_eq!(at("payments-ledger", 0), Some(Committed::At(40112)));
    assert_eq!(at("payments-audit", 0), Some(Committed::At(40050)));
    assert_eq!(at("payments-reporting", 1), None);
    assert!(got["nobody"].as_ref().unwrap().is_empty());
    // Three coordinators at most, one request each: the groups are batched.
    let asked = cluster.requests::<OffsetFetchRequest>();
    assert!(asked.len() <= 3, "{asked:?}");
    let ledger_and_audit = asked
        .iter()
        .find(|(_, r)| r.groups.iter().any(|g| g.group_id == "payments-ledger"))
        .unwrap();
    assert_eq!(ledger_and_audit.0, 3);
    assert_eq!(ledger_and_audit.1.groups.len(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_coordinator_that_moves_is_found_again() {
    let cluster = StallCluster::demo();
    let client = connected(&cluster).await;
    // After the lookup, payments-ledger's coordinator (broker 3, leading
    // __consumer_offsets-2) moves to broker 1: broker 3 answers
    // NOT_COORDINATOR, and the next round asks broker 1.
    let mut moved = false;
    cluster.after_answer(api::FIND_COORDINATOR, move |c, _| {
        if !moved {
            moved = elect(c, "__consumer_offsets", 2, 1);
        }
    });
    let got = committed_offsets(
        &client,
        vec!["payments-ledger".into()],
        &DriverOptions::default(),
        &bound(),
    )
    .await
    .unwrap();
    assert_eq!(
        *got["payments-ledger"]
            .as_ref()
            .unwrap()
            .get("payments", 0)
            .unwrap(),
        Committed::At(40112)
    );
    let brokers: Vec<i32> = cluster
        .requests::<OffsetFetchRequest>()
        .iter()
        .map(|r| r.0)
        .collect();
    assert_eq!(brokers, vec![3, 1]);
}

#[tokio::test(start_paused = true)]
async fn each_group_is_described_by_its_protocols_api() {
    let cluster = StallCluster::demo();
    let client = connected(&cluster).await;
    let typed = |g: &str, t: Option<GroupType>| (g.to_string(), t);
    let got = describe_groups(
        &client,
        &[
            typed("payments-ledger", Some(GroupType::Classic)),
            typed("payments-archive", Some(GroupType::Classic)),
            typed("payments-audit", Some(GroupType::Consumer)),
            typed("nobody", None),
        ],
        &DriverOptions::default(),
        &bound(),
    )
    .await
    .unwrap();
    let d = |state, group_type, members| {
        Ok(Description {
            state,
            group_type,
            members,
        })
    };
    assert_eq!(
        got["payments-ledger"],
        d(GroupState::Stable, GroupType::Classic, 1)
    );
    assert_eq!(
        got["payments-archive"],
        d(GroupState::Empty, GroupType::Classic, 0)
    );
    assert_eq!(
        got["payments-audit"],
        d(GroupState::Stable, GroupType::Consumer, 1)
    );
    assert!(
        matches!(&got["nobody"], Err(e) if e.code == kdp_wire::ErrorCode::GROUP_ID_NOT_FOUND),
        "{:?}",
        got["nobody"]
    );
    // payments-audit's, and nobody's once DescribeGroups did not know it
    assert_eq!(cluster.asked(api::CONSUMER_GROUP_DESCRIBE), 2);
}

/// Without ListGroups' type (a broker below v5), a consumer-protocol group
/// is asked with DescribeGroups, which does not know it, then with
/// ConsumerGroupDescribe.
#[tokio::test(start_paused = true)]
async fn an_untyped_consumer_group_is_described_by_consumer_group_describe() {
    let cluster = StallCluster::demo();
    let client = connected(&cluster).await;
    let got = describe_groups(
        &client,
        &[
            ("payments-audit".to_string(), None),
            ("payments-ledger".to_string(), None),
        ],
        &DriverOptions::default(),
        &bound(),
    )
    .await
    .unwrap();
    assert_eq!(
        got["payments-audit"].as_ref().unwrap().group_type,
        GroupType::Consumer
    );
    assert_eq!(got["payments-audit"].as_ref().unwrap().members, 1);
    assert_eq!(
        got["payments-ledger"].as_ref().unwrap().group_type,
        GroupType::Classic
    );
    // both are broker 3's: one request
    assert_eq!(cluster.asked(api::DESCRIBE_GROUPS), 1);
    assert_eq!(cluster.asked(api::CONSUMER_GROUP_DESCRIBE), 1);
}
