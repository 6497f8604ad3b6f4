//! The raw abort against the in-memory fake cluster on tokio's paused
//! clock: a leader that moves between the lookup and the WriteTxnMarkers
//! request is looked up again and the marker lands on the new leader.

mod common;

use std::sync::Arc;

use common::{answer_from, Answer, MemCluster};
use kdp_client::admin::DriverOptions;
use kdp_client::txn::repair::{abort, AbortSpec};
use kdp_client::{Client, ClientConfig};

#[tokio::test(start_paused = true)]
async fn a_leader_that_moved_is_looked_up_again_and_the_new_one_gets_the_marker() {
    let cluster = MemCluster::new(
        2,
        &[("t", 0, 1)],
        Arc::new(|b, req| Answer::Respond(answer_from(b, req))),
    );
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
    cluster
        .state()
        .move_after_metadata
        .insert(("t".to_string(), 0), 2);
    let spec = AbortSpec {
        topic: "t".into(),
        partition: 0,
        producer_id: 7,
        producer_epoch: 3,
        coordinator_epoch: 0,
    };
    let results = abort(&Arc::new(client), vec![spec], &DriverOptions::default()).await;
    assert_eq!(results.get(&("t".to_string(), 0)), Some(&Ok(())));
    let calls: Vec<i32> = cluster.state().wtm_calls.iter().map(|(b, _)| *b).collect();
    assert_eq!(calls, [1, 2], "asked the stale leader, then the new one");
    let (_, req) = &cluster.state().wtm_calls[1];
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
