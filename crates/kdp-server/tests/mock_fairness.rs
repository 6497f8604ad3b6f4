//! One connection's expensive request does not hold up the others. The
//! runtime here has a single thread, so a request worked on inline would
//! stall every other connection until it is done; the expensive work is
//! modelled by an authorizer that blocks until the test lets it go.

#[path = "support/wire.rs"]
mod wire;
use wire::{frame, read_frame};

use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use kdp_server::cluster::Cluster;
use kdp_server::mock::{MockCluster, MockConfig};
use kdp_server::RequestContext;
use kdp_wire::frame::decode_response_frame;
use kdp_wire::messages::{
    ApiVersionsRequest, ApiVersionsResponse, DescribeProducersRequest, DescribeProducersResponse,
    TopicRequest,
};
use kdp_wire::ErrorCode;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::oneshot;

#[tokio::test(flavor = "current_thread")]
async fn an_expensive_request_does_not_stall_other_connections() {
    let events = Arc::new(Mutex::new(Vec::<&'static str>::new()));
    let (started_tx, started_rx) = oneshot::channel::<()>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let started_tx = Mutex::new(Some(started_tx));
    let release_rx = Mutex::new(release_rx);
    let log = events.clone();
    // Blocks the thread it runs on until released (or, if it stalls the
    // whole runtime so that the release cannot come, for 20 s).
    let slow = move |_: &RequestContext, topic: &str| {
        if topic == "orders" {
            if let Some(tx) = started_tx.lock().unwrap().take() {
                let _ = tx.send(());
            }
            let released = release_rx
                .lock()
                .unwrap()
                .recv_timeout(Duration::from_secs(20))
                .is_ok();
            log.lock().unwrap().push(if released {
                "released"
            } else {
                "gave up waiting"
            });
        }
        true
    };
    let mock = MockCluster::start(
        Cluster::from_json(include_str!("data/cluster.json")).unwrap(),
        MockConfig {
            port: 0,
            idle_timeout: Duration::from_secs(3600),
            authorizer: Arc::new(slow),
            ..MockConfig::default()
        },
    )
    .await
    .unwrap();
    let addr = mock.listeners()[0].local_addr;

    // A large request (partition 3, ten thousand times).
    let mut a = TcpStream::connect(addr).await.unwrap();
    let big = DescribeProducersRequest {
        topics: vec![TopicRequest {
            name: "orders".into(),
            partition_indexes: vec![3; 10_000],
            ..Default::default()
        }],
        ..Default::default()
    };
    a.write_all(&frame(&big, 0, 1)).await.unwrap();
    started_rx.await.unwrap();

    // Meanwhile, another client is answered.
    let mut b = TcpStream::connect(addr).await.unwrap();
    let versions = ApiVersionsRequest {
        client_software_name: "kdp-test".into(),
        client_software_version: "0.1.0".into(),
        ..Default::default()
    };
    b.write_all(&frame(&versions, 3, 2)).await.unwrap();
    let bytes = read_frame(&mut b).await;
    let (_, v) = decode_response_frame::<ApiVersionsResponse>(&bytes, 3).unwrap();
    assert_eq!(v.error_code, ErrorCode::NONE);
    events.lock().unwrap().push("other client answered");

    release_tx.send(()).unwrap();
    let bytes = read_frame(&mut a).await;
    let (_, r) = decode_response_frame::<DescribeProducersResponse>(&bytes, 0).unwrap();
    assert_eq!(r.topics[0].partitions.len(), 10_000);
    assert_eq!(
        *events.lock().unwrap(),
        vec!["other client answered", "released"]
    );
    mock.shutdown().await;
}
