//! A huge WriteTxnMarkers request does not hold the cluster while it
//! runs: one request of 100,000 markers, and one marker naming 40,000
//! topics, each finish, and while each runs a DescribeProducers from
//! another connection is answered. The authorizer, asked once per
//! WriteTxnMarkers, blocks until the test has its DescribeProducers answer:
//! a broker that asked it under the cluster's write lock (as the mock did)
//! could not answer the other client meanwhile.

#[path = "support/wire.rs"]
mod wire;
use wire::{frame, read_frame};

use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use kdp_server::acls::ClusterOperation;
use kdp_server::cluster::Cluster;
use kdp_server::mock::{MockCluster, MockConfig};
use kdp_server::{Authorizer, RequestContext};
use kdp_wire::frame::decode_response_frame;
use kdp_wire::messages::{
    DescribeProducersRequest, DescribeProducersResponse, TopicRequest, WritableTxnMarker,
    WritableTxnMarkerTopic, WriteTxnMarkersRequest, WriteTxnMarkersResponse,
};
use kdp_wire::ErrorCode;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::time::timeout;

/// Blocks each cluster check until the test releases it (at most 20 s).
struct Gate {
    started: Mutex<mpsc::Sender<()>>,
    release: Mutex<mpsc::Receiver<()>>,
    events: Arc<Mutex<Vec<&'static str>>>,
}

impl Authorizer for Gate {
    fn authorize_read_topic(&self, _: &RequestContext, _: &str) -> bool {
        true
    }

    fn authorize_cluster(&self, _: &RequestContext, _: ClusterOperation) -> bool {
        let _ = self.started.lock().unwrap().send(());
        let released = self
            .release
            .lock()
            .unwrap()
            .recv_timeout(Duration::from_secs(20))
            .is_ok();
        self.events.lock().unwrap().push(if released {
            "released"
        } else {
            "gave up waiting"
        });
        true
    }
}

fn marker(producer_id: i64, topics: Vec<WritableTxnMarkerTopic>) -> WritableTxnMarker {
    WritableTxnMarker {
        producer_id,
        producer_epoch: 0,
        transaction_result: false,
        topics,
        coordinator_epoch: 0,
        ..Default::default()
    }
}

fn topic(name: String, partition: i32) -> WritableTxnMarkerTopic {
    WritableTxnMarkerTopic {
        name,
        partition_indexes: vec![partition],
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_marker_requests_finish_while_other_clients_are_answered() {
    let events = Arc::new(Mutex::new(Vec::<&'static str>::new()));
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let gate = Gate {
        started: Mutex::new(started_tx),
        release: Mutex::new(release_rx),
        events: events.clone(),
    };
    let mock = MockCluster::start(
        Cluster::from_json(include_str!("data/cluster.json")).unwrap(),
        MockConfig {
            port: 0,
            idle_timeout: Duration::from_secs(3600),
            authorizer: Arc::new(gate),
            ..MockConfig::default()
        },
    )
    .await
    .unwrap();
    // Broker 1 leads orders-0.
    let addr = mock.listeners()[0].local_addr;
    let started_rx = Arc::new(Mutex::new(started_rx));

    // 100,000 producers' aborts on orders-0; then one marker naming
    // 40,000 topics (orders, and 39,999 the cluster does not have).
    let many_markers = WriteTxnMarkersRequest {
        markers: (0..100_000)
            .map(|i| marker(10_000 + i, vec![topic("orders".into(), 0)]))
            .collect(),
        ..Default::default()
    };
    let mut topics = vec![topic("orders".into(), 0)];
    topics.extend((1..40_000).map(|i| topic(format!("t{i}"), 0)));
    let many_topics = WriteTxnMarkersRequest {
        markers: vec![marker(7, topics)],
        ..Default::default()
    };

    let mut a = TcpStream::connect(addr).await.unwrap();
    let mut b = TcpStream::connect(addr).await.unwrap();
    let describe = DescribeProducersRequest {
        topics: vec![TopicRequest {
            name: "orders".into(),
            partition_indexes: vec![0],
            ..Default::default()
        }],
        ..Default::default()
    };
    for (round, req) in [many_markers, many_topics].iter().enumerate() {
        let correlation_id = i32::try_from(round).unwrap();
        a.write_all(&frame(req, 1, correlation_id)).await.unwrap();
        let rx = started_rx.clone();
        tokio::task::spawn_blocking(move || rx.lock().unwrap().recv().unwrap())
            .await
            .unwrap();

        // The marker request is under way; another client is answered.
        b.write_all(&frame(&describe, 0, 100 + correlation_id))
            .await
            .unwrap();
        let bytes = timeout(Duration::from_secs(10), read_frame(&mut b))
            .await
            .expect("DescribeProducers answered while WriteTxnMarkers runs");
        let (_, d) = decode_response_frame::<DescribeProducersResponse>(&bytes, 0).unwrap();
        assert_eq!(d.topics[0].partitions[0].error_code, ErrorCode::NONE);
        events.lock().unwrap().push("other client answered");

        release_tx.send(()).unwrap();
        let bytes = timeout(Duration::from_secs(120), read_frame(&mut a))
            .await
            .expect("WriteTxnMarkers finishes");
        let (h, r) = decode_response_frame::<WriteTxnMarkersResponse>(&bytes, 1).unwrap();
        assert_eq!(h.correlation_id, correlation_id);
        let codes: Vec<ErrorCode> = r
            .markers
            .iter()
            .flat_map(|m| &m.topics)
            .flat_map(|t| &t.partitions)
            .map(|p| p.error_code)
            .collect();
        if round == 0 {
            assert_eq!(r.markers.len(), 100_000);
            assert_eq!(r.markers[99_999].producer_id, 109_999);
            assert!(codes.iter().all(|&c| c == ErrorCode::NONE));
        } else {
            assert_eq!(r.markers.len(), 1);
            let names: Vec<&str> = r.markers[0]
                .topics
                .iter()
                .map(|t| t.name.as_str())
                .collect();
            assert_eq!(names.len(), 40_000);
            assert_eq!((names[0], names[39_999]), ("orders", "t39999"));
            assert_eq!(codes[0], ErrorCode::NONE);
            // UNKNOWN_TOPIC_OR_PARTITION
            assert!(codes[1..]
                .iter()
                .all(|&c| c == ErrorCode::UNKNOWN_TOPIC_OR_PARTITION));
        }
    }
    assert_eq!(
        *events.lock().unwrap(),
        vec![
            "other client answered",
            "released",
            "other client answered",
            "released"
        ]
    );
    // Every marker was written: 100,000 producers plus producer 7.
    let c = mock.cluster();
    let p = c.partition("orders", 0).unwrap();
    assert_eq!(p.producers_on(1).len(), 100_001);
    assert_eq!(p.high_watermark, 100_001);
    mock.shutdown().await;
}
