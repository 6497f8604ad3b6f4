use std::time::Duration;

use kdp_client::{Client, ClientConfig, Connection, ConnectionConfig, Error};
use kdp_wire::api;
use kdp_wire::messages::{DescribeProducersRequest, TopicRequest};
use kdp_wire::ErrorCode;

use super::*;

async fn client(cluster: &StallCluster) -> Arc<Client> {
    let config = ClientConfig {
        connector: Arc::new(cluster.clone()),
        ..Default::default()
    };
    Arc::new(Client::connect(cluster.bootstrap(), config).await.unwrap())
}

async fn connection(cluster: &StallCluster, broker: i32) -> Connection {
    let config = ConnectionConfig {
        request_timeout: Duration::from_secs(5),
        ..Default::default()
    };
    let addr = StallCluster::address(broker);
    Connection::connect(&addr, cluster, config, Duration::from_secs(1))
        .await
        .unwrap()
}

fn dp(topic: &str, partitions: Vec<i32>) -> DescribeProducersRequest {
    DescribeProducersRequest {
        topics: vec![TopicRequest {
            name: topic.into(),
            partition_indexes: partitions,
            ..Default::default()
        }],
        ..Default::default()
    }
}

#[tokio::test(start_paused = true)]
async fn a_delay_answers_late_and_a_cut_fails_the_request() {
    let cluster = StallCluster::demo();
    let c = client(&cluster).await;
    cluster.fault(api::METADATA, Fault::Delay(Duration::from_secs(3)));
    let start = tokio::time::Instant::now();
    c.metadata(None).await.unwrap();
    assert_eq!(start.elapsed(), Duration::from_secs(3));

    cluster.fault(api::METADATA, Fault::Cut);
    assert!(c.metadata(None).await.is_err());
    assert!(cluster.asked(api::METADATA) >= 2);
}

#[tokio::test(start_paused = true)]
async fn placed_partitions_answer_with_the_leaders_producer() {
    let cluster = StallCluster::placed(2, &[("t", 0, 2), ("t", 1, 1)]);
    let conn = connection(&cluster, 2).await;
    let resp = conn.send(&dp("t", vec![0, 1]), 0).await.unwrap();
    let parts = &resp.topics[0].partitions;
    assert_eq!(parts[0].error_code, ErrorCode::NONE);
    assert_eq!(parts[0].active_producers[0].producer_id, 200);
    // a follower answers too (Kafka's DescribeProducers has no leader
    // check), with its own replica's state
    assert_eq!(parts[1].active_producers[0].producer_id, 201);
    assert_eq!(cluster.asked_by(api::DESCRIBE_PRODUCERS), [2]);
    let asked = cluster.requests::<DescribeProducersRequest>();
    assert_eq!(asked, vec![(2, dp("t", vec![0, 1]))]);
}

#[tokio::test(start_paused = true)]
async fn an_error_fault_sets_every_error_code_and_changes_nothing() {
    let cluster = StallCluster::placed(1, &[("t", 0, 1), ("t", 1, 1)]);
    let conn = connection(&cluster, 1).await;
    let code = ErrorCode::COORDINATOR_LOAD_IN_PROGRESS;
    cluster.fault_on(1, api::DESCRIBE_PRODUCERS, Fault::Error(code));
    let resp = conn.send(&dp("t", vec![0, 1]), 0).await.unwrap();
    let codes: Vec<ErrorCode> = resp.topics[0]
        .partitions
        .iter()
        .map(|p| p.error_code)
        .collect();
    assert_eq!(codes, [code, code]);
    let before = cluster.cluster().clone();
    // a write answered with an error is not applied
    cluster.fault(api::WRITE_TXN_MARKERS, Fault::Error(code));
    let spec = kdp_domain::repair::AbortSpec {
        topic: "t".into(),
        partition: 0,
        producer_id: 100,
        producer_epoch: 0,
        coordinator_epoch: 0,
    };
    let c = client(&cluster).await;
    let opts = kdp_client::admin::DriverOptions::default();
    let bound = kdp_client::TimeBound::after(Duration::from_secs(5));
    let done = kdp_client::txn::write_txn_markers::abort(&c, vec![spec], &opts, &bound).await;
    assert!(done.values().all(|r| r.is_err()), "{done:?}");
    assert!(cluster.asked(api::WRITE_TXN_MARKERS) > 0);
    assert_eq!(*cluster.cluster(), before);
}

#[tokio::test(start_paused = true)]
async fn a_frozen_broker_answers_nothing_on_any_connection() {
    let cluster = StallCluster::placed(1, &[("t", 0, 1)]);
    let first = connection(&cluster, 1).await;
    let second = connection(&cluster, 1).await;
    cluster.fault(api::DESCRIBE_PRODUCERS, Fault::Freeze);
    let e = first.send(&dp("t", vec![0]), 0).await.unwrap_err();
    assert!(matches!(e, Error::RequestTimeout { .. }), "{e}");
    let e = second
        .send(&kdp_wire::messages::MetadataRequest::default(), 4)
        .await
        .unwrap_err();
    assert!(matches!(e, Error::RequestTimeout { .. }), "{e}");
}

#[tokio::test(start_paused = true)]
async fn a_refused_broker_refuses_until_it_listens() {
    let cluster = StallCluster::placed(1, &[]);
    cluster.refuse(1);
    let addr = StallCluster::address(1);
    let e = Connection::connect(&addr, &cluster, Default::default(), Duration::from_secs(1))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, Error::Connect { source, .. } if source.kind() == std::io::ErrorKind::ConnectionRefused),
        "{e}"
    );
    cluster.listen(1);
    Connection::connect(&addr, &cluster, Default::default(), Duration::from_secs(1))
        .await
        .unwrap();
}

#[tokio::test(start_paused = true)]
async fn edits_and_after_answer_changes_apply_to_their_api() {
    let cluster = StallCluster::placed(2, &[("t", 0, 1)]);
    cluster.edit::<DescribeProducersRequest, _>(|broker, req, resp| {
        assert_eq!(req.topics[0].name, "t");
        resp.throttle_time_ms = broker * 1000;
    });
    cluster.after_answer(api::DESCRIBE_PRODUCERS, |c, n| {
        assert!(elect(c, "t", 0, 2), "answer {n}");
    });
    let conn = connection(&cluster, 1).await;
    let resp = conn.send(&dp("t", vec![0]), 0).await.unwrap();
    assert_eq!(resp.throttle_time_ms, 1000);
    assert_eq!(resp.topics[0].partitions[0].error_code, ErrorCode::NONE);
    // the answer named broker 1; right after it, broker 2 leads
    let p = cluster.cluster().partition("t", 0).cloned().unwrap();
    assert_eq!(p.leader, 2);
    let md = conn
        .request(&kdp_wire::messages::MetadataRequest::default())
        .await
        .unwrap();
    assert_eq!(md.topics[0].partitions[0].leader_id, 2);
}

/// A size prefix announcing 2 GiB closes the connection at once: nothing is
/// allocated for it and nothing is waited for (the old loop allocated the
/// announced size and waited for it forever).
#[tokio::test(start_paused = true)]
async fn an_oversize_request_closes_the_connection_without_waiting() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let cluster = StallCluster::placed(1, &[]);
    let mut s = cluster.connect(&StallCluster::address(1)).await.unwrap();
    s.write_all(&i32::MAX.to_be_bytes()).await.unwrap();
    let mut buf = [0u8; 16];
    let read = tokio::time::timeout(Duration::from_secs(60), s.read(&mut buf)).await;
    assert!(matches!(read, Ok(Ok(0))), "{read:?}");
}
