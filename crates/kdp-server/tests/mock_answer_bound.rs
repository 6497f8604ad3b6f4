//! No answer is larger than a client accepts, and a request cannot make the
//! mock build one: a 68 KB DescribeProducers request naming an invalid
//! 60,000-character topic with 2,000 partitions used to make it build a
//! 120 MB answer (the name is quoted in each partition's error message).

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
#[path = "support/refused.rs"]
mod refused;

use std::time::Duration;

use kdp_server::cluster::Cluster;
use kdp_server::mock::{MockCluster, MockConfig};
use kdp_wire::frame::request_frame_to_vec;
use kdp_wire::messages::{DescribeProducersRequest, TopicRequest};
use kdp_wire::RequestHeader;
use tokio::net::TcpStream;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_amplifying_request_closes_the_connection_without_building_the_answer() {
    let cluster = Cluster::from_json(include_str!("data/cluster.json")).unwrap();
    let mock = MockCluster::start(
        cluster,
        MockConfig {
            port: 0,
            // Long: only the server's decision can close the connection.
            idle_timeout: Duration::from_secs(3600),
            ..MockConfig::default()
        },
    )
    .await
    .unwrap();
    let req = DescribeProducersRequest {
        topics: vec![TopicRequest {
            name: "x".repeat(60_000),
            partition_indexes: (0..2_000).collect(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let frame = request_frame_to_vec(
        &RequestHeader {
            request_api_key: kdp_wire::api::DESCRIBE_PRODUCERS,
            request_api_version: 0,
            correlation_id: 7,
            client_id: Some("hostile".into()),
            ..Default::default()
        },
        &req,
    );
    assert!(frame.len() < 70_000);
    let s = TcpStream::connect(mock.listeners()[0].local_addr)
        .await
        .unwrap();

    let base = counting_alloc::reset_peak();
    // the server closes the connection without a byte of answer
    refused::expect_closed_without_answer(s, &frame).await;
    let grown = counting_alloc::peak().saturating_sub(base);
    // The request itself and a read chunk; nothing near the 120 MB answer.
    assert!(
        grown < 8 * 1024 * 1024,
        "peak allocation grew by {} KiB",
        grown / 1024
    );
    let stats = mock.stats();
    assert_eq!(
        stats
            .rejected_requests
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    mock.shutdown().await;
}
