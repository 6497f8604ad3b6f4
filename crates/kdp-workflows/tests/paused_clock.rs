//! One deadline per join: against kdp-server's demo cluster, answered by
//! its own request handling, each API the join needs stalled in turn.
//! Whatever stalls, the join ends by its deadline (plus nothing: the clock
//! is paused) and names the phase that did not answer.

use std::sync::Arc;
use std::time::Duration;

use kdp_client::{Client, ClientConfig, DescribeOptions, Error, TimeBound};
use kdp_domain::joined::{JoinPhase, Joined};
use kdp_test_support::StallCluster;
use kdp_wire::api;
use kdp_wire::ErrorCode;
use kdp_workflows::join::{join, JoinOptions};
use tokio::time::Instant;

const BUDGET: Duration = Duration::from_secs(10);

async fn connected(cluster: &StallCluster) -> Arc<Client> {
    let config = ClientConfig {
        connector: Arc::new(cluster.clone()),
        ..Default::default()
    };
    Arc::new(Client::connect(cluster.bootstrap(), config).await.unwrap())
}

/// The join behind find-hanging (open transactions only) or describe
/// --with-transactions, with `api` stalled once the client is connected;
/// how long it took.
async fn join_with_stalled(api: i16, open_only: bool) -> (Result<Joined, Error>, Duration) {
    let cluster = StallCluster::demo();
    let client = connected(&cluster).await;
    cluster.stall(api);
    let start = Instant::now();
    let opts = JoinOptions::new(DescribeOptions::default(), open_only);
    let r = join(&client, &opts, &TimeBound::after(BUDGET)).await;
    (r, start.elapsed())
}

#[tokio::test(start_paused = true)]
async fn the_join_ends_by_its_deadline_naming_the_phase_that_stalled() {
    let cases = [
        (api::DESCRIBE_PRODUCERS, JoinPhase::DescribeProducers),
        (api::DESCRIBE_CONFIGS, JoinPhase::DescribeConfigs),
        (api::LIST_TRANSACTIONS, JoinPhase::ListTransactions),
        (api::FIND_COORDINATOR, JoinPhase::FindCoordinator),
        (api::DESCRIBE_TRANSACTIONS, JoinPhase::DescribeTransactions),
        (api::LIST_OFFSETS, JoinPhase::ListOffsets),
    ];
    for open_only in [true, false] {
        for (api, phase) in cases {
            let (r, took) = join_with_stalled(api, open_only).await;
            let joined = r.unwrap_or_else(|e| panic!("api {api}: {e}"));
            assert!(took <= BUDGET, "api {api}: took {took:?}");
            assert!(
                joined.unfinished.contains(&phase),
                "api {api}: {:?}",
                joined.unfinished
            );
            if api == api::FIND_COORDINATOR {
                // DescribeTransactions was never sent: it did not stall
                assert!(
                    !joined.unfinished.contains(&JoinPhase::DescribeTransactions),
                    "{:?}",
                    joined.unfinished
                );
            }
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_join_with_nothing_stalled_finishes_every_phase() {
    let (r, took) = join_with_stalled(api::SASL_HANDSHAKE, true).await;
    let joined = r.unwrap();
    assert!(joined.unfinished.is_empty(), "{:?}", joined.unfinished);
    assert!(took < BUDGET, "{took:?}");
    assert!(joined.open_transactions().count() > 0);
}

#[tokio::test(start_paused = true)]
async fn stalled_metadata_fails_the_join_and_the_describe_by_the_deadline() {
    let (r, took) = join_with_stalled(api::METADATA, true).await;
    let e = r.unwrap_err();
    assert!(took <= BUDGET, "took {took:?}");
    assert!(e.to_string().contains("Metadata"), "{e}");
}

/// ApiVersions stalls on brokers 2 and 3 (bootstrap went to broker 1):
/// their connections never open, and the partitions they lead end with
/// the deadline.
#[tokio::test(start_paused = true)]
async fn stalled_api_versions_on_other_brokers_end_by_the_deadline() {
    let cluster = StallCluster::demo();
    let client = connected(&cluster).await;
    cluster.stall_on(2, api::API_VERSIONS);
    cluster.stall_on(3, api::API_VERSIONS);
    let start = Instant::now();
    let opts = JoinOptions::new(DescribeOptions::default(), true);
    let joined = join(&client, &opts, &TimeBound::after(BUDGET))
        .await
        .unwrap();
    assert!(start.elapsed() <= BUDGET, "{:?}", start.elapsed());
    assert!(
        joined.unfinished.contains(&JoinPhase::DescribeProducers),
        "{:?}",
        joined.unfinished
    );
    let failed: Vec<_> = joined
        .partitions
        .iter()
        .filter_map(|o| o.result.as_ref().err())
        .collect();
    assert!(!failed.is_empty());
    assert!(failed
        .iter()
        .all(|e| e.code == ErrorCode::REQUEST_TIMED_OUT));
}
