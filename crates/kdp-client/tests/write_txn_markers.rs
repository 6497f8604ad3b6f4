//! The raw abort against kdp-test-support's in-memory cluster (kdp-server's
//! handling: only a partition's leader writes its marker) on tokio's paused
//! clock: a leader that moves between the lookup and the WriteTxnMarkers
//! request is looked up again and the marker lands on the new leader.

use std::sync::Arc;

use kdp_client::admin::DriverOptions;
use kdp_client::txn::write_txn_markers::abort;
use kdp_client::TimeBound;
use kdp_client::{Client, ClientConfig};
use kdp_domain::repair::AbortSpec;
use kdp_test_support::{elect, StallCluster};
use kdp_wire::api;
use kdp_wire::messages::WriteTxnMarkersRequest;

/// The default bound: 30 s from now, Kafka's request timeout and retries.
fn bound() -> TimeBound {
    TimeBound::after(std::time::Duration::from_secs(30))
}

#[tokio::test(start_paused = true)]
async fn a_leader_that_moved_is_looked_up_again_and_the_new_one_gets_the_marker() {
    let cluster = StallCluster::placed(2, &[("t", 0, 1)]);
    let client = Client::connect(
        cluster.bootstrap(),
        ClientConfig {
            connector: Arc::new(cluster.clone()),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    // the next Metadata answer still names broker 1; leadership moves right after
    cluster.after_answer(api::METADATA, |c, _| {
        elect(c, "t", 0, 2);
    });
    let spec = AbortSpec {
        topic: "t".into(),
        partition: 0,
        producer_id: 7,
        producer_epoch: 3,
        coordinator_epoch: 0,
    };
    let results = abort(
        &Arc::new(client),
        vec![spec],
        &DriverOptions::default(),
        &bound(),
    )
    .await;
    assert_eq!(results.get(&("t".to_string(), 0)), Some(&Ok(())));
    let calls = cluster.requests::<WriteTxnMarkersRequest>();
    let brokers: Vec<i32> = calls.iter().map(|(b, _)| *b).collect();
    assert_eq!(brokers, [1, 2], "asked the stale leader, then the new one");
    let (_, req) = &calls[1];
    let m = &req.markers[0];
    assert_eq!(
        (
            m.producer_id,
            m.producer_epoch,
            m.transaction_result,
            m.transaction_version
        ),
        (7, 3, false, 0)
    );
}
