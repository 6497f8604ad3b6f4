//! A FindCoordinator v4 request of 500,000 empty keys (500 KB) asks for an
//! answer of at least 7 MB; under a 1 MiB `max_response_size` the mock
//! refuses it from the count of keys, without building the answer (it used
//! to build all of it, 65 MB, before the size check refused it).

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
#[path = "support/refused.rs"]
mod refused;

use std::time::Duration;

use kdp_server::cluster::Cluster;
use kdp_server::mock::{MockCluster, MockConfig};
use kdp_wire::frame::request_frame_to_vec;
use kdp_wire::messages::FindCoordinatorRequest;
use kdp_wire::RequestHeader;
use tokio::net::TcpStream;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_keys_are_refused_without_building_the_answer() {
    let cluster = Cluster::from_json(include_str!("data/cluster.json")).unwrap();
    let mock = MockCluster::start(
        cluster,
        MockConfig {
            port: 0,
            idle_timeout: Duration::from_secs(3600),
            max_response_size: 1024 * 1024,
            ..MockConfig::default()
        },
    )
    .await
    .unwrap();
    let req = FindCoordinatorRequest {
        key_type: 1,
        coordinator_keys: vec![String::new(); 500_000],
        ..Default::default()
    };
    let frame = request_frame_to_vec(
        &RequestHeader {
            request_api_key: kdp_wire::api::FIND_COORDINATOR,
            request_api_version: 4,
            correlation_id: 7,
            client_id: Some("hostile".into()),
            ..Default::default()
        },
        &req,
    );
    drop(req);
    assert!(frame.len() < 600_000);
    let s = TcpStream::connect(mock.listeners()[0].local_addr)
        .await
        .unwrap();

    let base = counting_alloc::reset_peak();
    // the server closes the connection without a byte of answer
    refused::expect_closed_without_answer(s, &frame).await;
    let grown = counting_alloc::peak().saturating_sub(base);
    // The request as read (500 KB) and decoded (500,000 empty strings, 12
    // MB); nothing of the 65 MB answer.
    assert!(
        grown < 20 * 1024 * 1024,
        "peak allocation grew by {} KiB",
        grown / 1024
    );
    assert_eq!(
        mock.stats()
            .rejected_requests
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    mock.shutdown().await;
}
