//! The mock cluster over real TCP, with kdp-wire-encoded requests: what it
//! serves, and that hostile clients cost it nothing but their own connection.

#[path = "support/wire.rs"]
mod wire;
use wire::{frame, read_frame, HANG_GUARD};

use std::time::Duration;

use kdp_server::cluster::Cluster;
use kdp_server::mock::{MockCluster, MockConfig};
use kdp_wire::ErrorCode;

use kdp_wire::frame::decode_response_frame;
use kdp_wire::messages::{
    ApiVersion, ApiVersionsRequest, ApiVersionsResponse, DescribeProducersRequest,
    DescribeProducersResponse, MetadataRequest, MetadataRequestTopic, TopicRequest,
};
use kdp_wire::Request;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::{timeout, Instant};

const CLUSTER: &str = include_str!("data/cluster.json");
/// The idle timeout where a test is about it (on tokio's paused clock).
const IDLE: Duration = Duration::from_millis(800);
/// The idle timeout elsewhere: long, so that a connection a test sees closed
/// was closed for the reason under test, however slow the machine.
const NEVER_IDLE: Duration = Duration::from_secs(3600);
async fn start() -> MockCluster {
    start_with(MockConfig {
        port: 0,
        idle_timeout: NEVER_IDLE,
        ..MockConfig::default()
    })
    .await
}

async fn start_with(config: MockConfig) -> MockCluster {
    MockCluster::start(Cluster::from_json(CLUSTER).unwrap(), config)
        .await
        .unwrap()
}

async fn connect(mock: &MockCluster, broker: i32) -> TcpStream {
    TcpStream::connect(mock.broker_addr(broker).unwrap())
        .await
        .unwrap()
}

async fn call<R: Request>(
    s: &mut TcpStream,
    req: &R,
    version: i16,
    correlation_id: i32,
) -> R::Response {
    s.write_all(&frame(req, version, correlation_id))
        .await
        .unwrap();
    let bytes = read_frame(s).await;
    let (h, body) = decode_response_frame::<R::Response>(&bytes, version).unwrap();
    assert_eq!(h.correlation_id, correlation_id);
    body
}

/// True if the server closed the connection (EOF or reset) within `within`
/// (on tokio's clock, so virtual time where the clock is paused).
async fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 64];
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match timeout(left, s.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue,
        }
    }
}

fn describe(topic: &str, partitions: &[i32]) -> DescribeProducersRequest {
    DescribeProducersRequest {
        topics: vec![TopicRequest {
            name: topic.into(),
            partition_indexes: partitions.to_vec(),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn api_versions() -> ApiVersionsRequest {
    ApiVersionsRequest {
        client_software_name: "kdp-test".into(),
        client_software_version: "0.1.0".into(),
        ..Default::default()
    }
}

/// A well-behaved client's full exchange; panics if anything is off.
async fn healthy(mock: &MockCluster) {
    let mut s = connect(mock, 1).await;
    let v = call(&mut s, &api_versions(), 4, 1).await;
    assert_eq!(v.error_code, ErrorCode::NONE);
    let r = call(&mut s, &describe("orders", &[3]), 0, 2).await;
    assert_eq!(r.topics[0].partitions[0].active_producers.len(), 2);
}

#[tokio::test]
async fn api_versions_every_version_and_the_fallback() {
    let mock = start().await;
    let mut s = connect(&mock, 2).await;
    for v in 0..=4 {
        let resp = call(&mut s, &api_versions(), v, 100 + i32::from(v)).await;
        assert_eq!(resp.error_code, ErrorCode::NONE, "v{v}");
        assert_eq!(resp.range(3), Some((4, 12)));
        assert_eq!(resp.range(18), Some((0, 4)));
        assert_eq!(resp.range(61), Some((0, 0)));
        assert_eq!(
            resp.api_keys.len(),
            kdp_server::broker::SUPPORTED_APIS.len(),
            "only what is served is advertised"
        );
    }
    // A version above 4: a v0 response with UNSUPPORTED_VERSION and the
    // ApiVersions range, on the same connection, which stays open.
    for (v, cid) in [(5i16, 7i32), (127, 8)] {
        let mut req = Vec::new();
        req.extend_from_slice(&18i16.to_be_bytes());
        req.extend_from_slice(&v.to_be_bytes());
        req.extend_from_slice(&cid.to_be_bytes());
        req.extend_from_slice(&6i16.to_be_bytes());
        req.extend_from_slice(b"future");
        req.push(0);
        req.extend_from_slice(b"\x09body-of-a-future-version");
        let mut f = (req.len() as i32).to_be_bytes().to_vec();
        f.extend_from_slice(&req);
        s.write_all(&f).await.unwrap();
        let bytes = read_frame(&mut s).await;
        let (h, resp) = decode_response_frame::<ApiVersionsResponse>(&bytes, 0).unwrap();
        assert_eq!(h.correlation_id, cid);
        assert_eq!(resp.error_code, ErrorCode::UNSUPPORTED_VERSION);
        assert_eq!(
            resp.api_keys,
            vec![ApiVersion::new(kdp_wire::api::API_VERSIONS, 0, 4)]
        );
    }
    let resp = call(&mut s, &api_versions(), 3, 9).await;
    assert_eq!(resp.error_code, ErrorCode::NONE);
    mock.shutdown().await;
}

#[tokio::test]
async fn metadata_advertises_the_real_listeners() {
    let mock = start().await;
    let cluster = Cluster::from_json(CLUSTER).unwrap();
    for l in mock.listeners() {
        let mut s = connect(&mock, l.id).await;
        for v in [4, 9, 12] {
            let resp = call(
                &mut s,
                &MetadataRequest {
                    topics: None,
                    ..Default::default()
                },
                v,
                v.into(),
            )
            .await;
            let brokers: Vec<(i32, String)> = resp
                .brokers
                .iter()
                .map(|b| (b.node_id, format!("{}:{}", b.host, b.port)))
                .collect();
            let expected: Vec<(i32, String)> = mock
                .listeners()
                .iter()
                .map(|l| (l.id, l.local_addr.to_string()))
                .collect();
            assert_eq!(brokers, expected);
            assert_eq!(resp.cluster_id.as_deref(), Some("kdp-test-cluster"));
            assert_eq!(resp.controller_id, 2);
            assert_eq!(resp.topics.len(), cluster.topics.len());
            for (t, ct) in resp.topics.iter().zip(&cluster.topics) {
                assert_eq!(t.name.as_deref(), Some(ct.name.as_str()));
                assert_eq!(t.is_internal, ct.name == "__transaction_state");
                for (p, cp) in t.partitions.iter().zip(&ct.partitions) {
                    assert_eq!(p.leader_id, cp.leader);
                    assert_eq!(p.replica_nodes, cp.replicas);
                    if v >= 5 {
                        assert_eq!(p.offline_replicas, cp.offline_replicas);
                    }
                }
            }
        }
        let one = call(
            &mut s,
            &MetadataRequest {
                topics: Some(vec![MetadataRequestTopic {
                    name: Some("ghost".into()),
                    ..Default::default()
                }]),
                allow_auto_topic_creation: false,
                ..Default::default()
            },
            12,
            99,
        )
        .await;
        assert_eq!(
            one.topics[0].error_code,
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
        );
    }
    mock.shutdown().await;
}

#[tokio::test]
async fn describe_producers_every_partition_on_every_broker() {
    let mock = start().await;
    let cluster = Cluster::from_json(CLUSTER).unwrap();
    for b in &cluster.brokers {
        let mut s = connect(&mock, b.id).await;
        for t in &cluster.topics {
            let indexes: Vec<i32> = (0..t.partitions.len() as i32 + 1).collect();
            let resp: DescribeProducersResponse =
                call(&mut s, &describe(&t.name, &indexes), 0, b.id).await;
            let parts = &resp.topics[0].partitions;
            assert_eq!(parts.len(), indexes.len());
            for (got, &idx) in parts.iter().zip(&indexes) {
                assert_eq!(got.partition_index, idx);
                assert_eq!(got.error_message, None);
                let Some(p) = t.partitions.get(idx as usize) else {
                    assert_eq!(got.error_code, ErrorCode::UNKNOWN_TOPIC_OR_PARTITION);
                    continue;
                };
                if !p.replicas.contains(&b.id) {
                    assert_eq!(got.error_code, ErrorCode::NOT_LEADER_OR_FOLLOWER);
                } else if p.offline_replicas.contains(&b.id) {
                    assert_eq!(got.error_code, ErrorCode::KAFKA_STORAGE_ERROR);
                } else {
                    assert_eq!(got.error_code, ErrorCode::NONE);
                    assert_eq!(got.active_producers, p.producers_on(b.id));
                }
            }
        }
    }
    mock.shutdown().await;
}

#[tokio::test]
async fn leader_and_follower_answer_differently_when_they_diverged() {
    let mock = start().await;
    let ask = |broker| {
        let mock = &mock;
        async move {
            let mut s = connect(mock, broker).await;
            call(&mut s, &describe("orders", &[3]), 0, 1).await.topics[0].partitions[0].clone()
        }
    };
    let leader = ask(1).await;
    let follower = ask(2).await;
    let diverged = ask(3).await;
    assert_eq!(leader, follower);
    let seed = &leader.active_producers[0];
    assert_eq!(
        (
            seed.producer_id,
            seed.producer_epoch,
            seed.last_sequence,
            seed.last_timestamp,
            seed.coordinator_epoch,
            seed.current_txn_start_offset
        ),
        (0, 12, 0, 0, 12, 150382)
    );
    assert_eq!(diverged.error_code, ErrorCode::NONE);
    assert_eq!(diverged.active_producers.len(), 1);
    assert_eq!(diverged.active_producers[0].producer_epoch, 11);
    assert_eq!(ask(4).await.error_code, ErrorCode::NOT_LEADER_OR_FOLLOWER);
    mock.shutdown().await;
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order() {
    let mock = start().await;
    let mut s = connect(&mock, 1).await;
    let mut batch = Vec::new();
    for cid in 0..200 {
        if cid % 3 == 0 {
            batch.extend(frame(&api_versions(), 4, cid));
        } else {
            batch.extend(frame(&describe("orders", &[cid % 4]), 0, cid));
        }
    }
    s.write_all(&batch).await.unwrap();
    for cid in 0..200 {
        let bytes = read_frame(&mut s).await;
        let cid_got = i32::from_be_bytes(bytes[4..8].try_into().unwrap());
        assert_eq!(cid_got, cid);
        if cid % 3 != 0 {
            let (_, r) = decode_response_frame::<DescribeProducersResponse>(&bytes, 0).unwrap();
            assert_eq!(r.topics[0].partitions[0].partition_index, cid % 4);
        }
    }
    mock.shutdown().await;
}

#[tokio::test]
async fn unserved_api_closes_after_answering_what_came_before() {
    let mock = start().await;
    let mut s = connect(&mock, 1).await;
    let mut batch = frame(&api_versions(), 4, 1);
    // Produce v9 with an empty-ish body: not served.
    let produce: &[u8] = &[0, 0, 0, 9, 0, 0, 0, 2, 0xff, 0xff, 0];
    batch.extend_from_slice(&(produce.len() as i32).to_be_bytes());
    batch.extend_from_slice(produce);
    batch.extend(frame(&api_versions(), 4, 3));
    s.write_all(&batch).await.unwrap();
    let first = read_frame(&mut s).await;
    assert_eq!(i32::from_be_bytes(first[4..8].try_into().unwrap()), 1);
    assert!(closed_within(&mut s, HANG_GUARD).await);
    // DescribeProducers v1 does not exist: closed too.
    let mut s = connect(&mock, 1).await;
    s.write_all(&frame(&describe("orders", &[0]), 0, 1)[..4])
        .await
        .unwrap();
    let mut bad = frame(&describe("orders", &[0]), 0, 1);
    bad[7] = 1; // api version 1
    let mut s2 = connect(&mock, 1).await;
    s2.write_all(&bad).await.unwrap();
    assert!(closed_within(&mut s2, HANG_GUARD).await);
    drop(s);
    healthy(&mock).await;
    mock.shutdown().await;
}

#[tokio::test]
async fn hostile_clients_lose_only_their_own_connection() {
    let mock = start_with(MockConfig {
        port: 0,
        idle_timeout: NEVER_IDLE,
        max_request_size: 1024 * 1024,
        ..MockConfig::default()
    })
    .await;
    // With connections never idle, each close below is the server's answer
    // to what the client sent.

    // Negative size.
    let mut s = connect(&mock, 1).await;
    s.write_all(&(-1i32).to_be_bytes()).await.unwrap();
    assert!(closed_within(&mut s, HANG_GUARD).await, "negative size");

    // Size above the maximum: closed before any body arrives.
    for size in [1024 * 1024 + 1, i32::MAX] {
        let mut s = connect(&mock, 1).await;
        s.write_all(&size.to_be_bytes()).await.unwrap();
        assert!(closed_within(&mut s, HANG_GUARD).await, "size {size}");
    }

    // Garbage that is a well-sized frame.
    let mut s = connect(&mock, 2).await;
    let mut g = 32i32.to_be_bytes().to_vec();
    g.extend_from_slice(&[0xa5; 32]);
    s.write_all(&g).await.unwrap();
    assert!(closed_within(&mut s, HANG_GUARD).await, "garbage");

    // Pure garbage: the first 4 bytes read as a huge size.
    let mut s = connect(&mock, 2).await;
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    assert!(closed_within(&mut s, HANG_GUARD).await, "http");

    // A valid DescribeProducers with its body cut short (the frame size is right).
    let mut s = connect(&mock, 3).await;
    let full = frame(&describe("orders", &[0, 1, 2]), 0, 5);
    let cut = &full[4..full.len() - 3];
    let mut f = (cut.len() as i32).to_be_bytes().to_vec();
    f.extend_from_slice(cut);
    s.write_all(&f).await.unwrap();
    assert!(closed_within(&mut s, HANG_GUARD).await, "truncated body");

    // A frame truncated on the wire, then EOF from the client.
    let mut s = connect(&mock, 3).await;
    s.write_all(&full[..full.len() - 2]).await.unwrap();
    s.shutdown().await.unwrap();
    assert!(closed_within(&mut s, HANG_GUARD).await, "truncated frame");

    healthy(&mock).await;
    let stats = mock.stats();
    assert!(stats.connections.load(std::sync::atomic::Ordering::Relaxed) >= 8);
    assert_eq!(
        stats
            .rejected_requests
            .load(std::sync::atomic::Ordering::Relaxed),
        2,
        "the two well-sized frames that do not decode"
    );
    mock.shutdown().await;
}

/// Idle connections are closed after the idle timeout and not before, on
/// tokio's paused clock: virtual time moves only to the next timer, so what
/// is measured is which timer closed the connection.
#[tokio::test(start_paused = true)]
async fn idle_connections_are_closed_after_the_idle_timeout_not_before() {
    let mock = start_with(MockConfig {
        port: 0,
        idle_timeout: IDLE,
        ..MockConfig::default()
    })
    .await;
    let cases: [(&str, &[u8]); 3] = [
        // Connects and sends nothing.
        ("silent client", &[]),
        // A partial size prefix, then nothing.
        ("partial prefix", &[0, 0]),
        // A body announced and started, then silence.
        (
            "stalled body",
            &[0, 0, 3, 232, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        ),
    ];
    for (what, sent) in cases {
        let mut s = connect(&mock, 4).await;
        s.write_all(sent).await.unwrap();
        let t0 = Instant::now();
        assert!(closed_within(&mut s, IDLE * 4).await, "{what}");
        let waited = t0.elapsed();
        assert!(waited >= IDLE, "{what}: closed after {waited:?}");
    }
    // A connection that keeps asking is not idle, however long it lives.
    let mut s = connect(&mock, 1).await;
    for cid in 0..5 {
        tokio::time::sleep(IDLE / 2).await;
        let v = call(&mut s, &api_versions(), 4, cid).await;
        assert_eq!(v.error_code, ErrorCode::NONE);
    }
    mock.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_clients_and_hostile_ones() {
    let mock = std::sync::Arc::new(start().await);
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..200 {
        let mock = mock.clone();
        tasks.spawn(async move {
            let broker = [1, 2, 3, 4][i % 4];
            let mut s = connect(&mock, broker).await;
            let v = call(&mut s, &api_versions(), 4, 1).await;
            assert_eq!(v.error_code, ErrorCode::NONE);
            for round in 0..5 {
                let r = call(&mut s, &describe("orders", &[0, 1, 2, 3]), 0, 10 + round).await;
                assert_eq!(r.topics[0].partitions.len(), 4);
            }
        });
    }
    // Meanwhile: hostile connections that announce large frames and stall,
    // and ones that send garbage.
    let mut hostile = Vec::new();
    for i in 0..50 {
        let mut s = connect(&mock, 1 + (i % 4)).await;
        if i % 2 == 0 {
            s.write_all(&(50 * 1024 * 1024i32).to_be_bytes())
                .await
                .unwrap();
            s.write_all(&[1u8; 100]).await.unwrap();
        } else {
            s.write_all(&[0xffu8; 16]).await.unwrap();
        }
        hostile.push(s);
    }
    healthy(&mock).await;
    while let Some(r) = tasks.join_next().await {
        r.unwrap();
    }
    healthy(&mock).await;
    drop(hostile);
    let mock = std::sync::Arc::try_unwrap(mock).ok().unwrap();
    mock.shutdown().await;
}

#[tokio::test]
async fn connection_cap_refuses_extra_connections_only() {
    let mock = start_with(MockConfig {
        port: 0,
        idle_timeout: NEVER_IDLE,
        max_connections: 3,
        ..MockConfig::default()
    })
    .await;
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut s = connect(&mock, 1).await;
        call(&mut s, &api_versions(), 4, 1).await;
        held.push(s);
    }
    let mut extra = connect(&mock, 2).await;
    assert!(closed_within(&mut extra, HANG_GUARD).await);
    // The held ones still work.
    for s in &mut held {
        call(s, &api_versions(), 4, 2).await;
    }
    // Close them and wait for the server's side to be gone: on this
    // one-thread runtime the server's connection task ends (and frees its
    // slot) before the client can see the end of the stream.
    for mut s in held {
        s.shutdown().await.unwrap();
        assert!(closed_within(&mut s, HANG_GUARD).await);
    }
    healthy(&mock).await;
    mock.shutdown().await;
}

/// On tokio's paused clock: a shutdown that had to wait out its grace period
/// would take exactly the grace period of virtual time.
#[tokio::test(start_paused = true)]
async fn shutdown_closes_connections_and_listeners() {
    let mock = start().await;
    let addr = mock.broker_addr(1).unwrap().to_string();
    let mut s = connect(&mock, 1).await;
    call(&mut s, &api_versions(), 4, 1).await;
    let grace = Duration::from_secs(3600);
    let t0 = Instant::now();
    mock.shutdown_within(grace).await;
    assert!(t0.elapsed() < grace, "shutdown waited out its grace period");
    assert!(closed_within(&mut s, HANG_GUARD).await);
    assert!(TcpStream::connect(&addr).await.is_err());
}

#[tokio::test]
async fn consecutive_ports_from_the_given_one() {
    // Find a free run of 4 ports by asking for one and trying from there.
    for _ in 0..20 {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = probe.local_addr().unwrap().port();
        drop(probe);
        if base > 65000 {
            continue;
        }
        let started = MockCluster::start(
            Cluster::from_json(CLUSTER).unwrap(),
            MockConfig {
                port: base,
                ..MockConfig::default()
            },
        )
        .await;
        let Ok(mock) = started else { continue };
        let ports: Vec<u16> = mock
            .listeners()
            .iter()
            .map(|l| l.local_addr.port())
            .collect();
        assert_eq!(ports, vec![base, base + 1, base + 2, base + 3]);
        assert_eq!(
            mock.bootstrap(),
            format!(
                "127.0.0.1:{base},127.0.0.1:{},127.0.0.1:{},127.0.0.1:{}",
                base + 1,
                base + 2,
                base + 3
            )
        );
        mock.shutdown().await;
        return;
    }
    panic!("no free run of 4 ports found");
}

#[tokio::test]
async fn answers_up_to_max_response_size_and_closes_above() {
    // Partition 3 of "orders" has two producers on broker 1: about 80 bytes
    // an entry, asked 3,000 times.
    let req = describe("orders", &[3; 3000]);
    let mock = start_with(MockConfig {
        port: 0,
        idle_timeout: NEVER_IDLE,
        max_response_size: 1024 * 1024,
        ..MockConfig::default()
    })
    .await;
    let mut s = connect(&mock, 1).await;
    let r = call(&mut s, &req, 0, 1).await;
    assert_eq!(r.topics[0].partitions.len(), 3000);
    assert!(r.topics[0]
        .partitions
        .iter()
        .all(|p| p.active_producers.len() == 2));
    // The same connection goes on serving.
    call(&mut s, &api_versions(), 4, 2).await;
    mock.shutdown().await;

    let mock = start_with(MockConfig {
        port: 0,
        idle_timeout: NEVER_IDLE,
        max_response_size: 100 * 1024,
        ..MockConfig::default()
    })
    .await;
    let mut s = connect(&mock, 1).await;
    s.write_all(&frame(&req, 0, 1)).await.unwrap();
    assert!(closed_within(&mut s, HANG_GUARD).await);
    healthy(&mock).await;
    mock.shutdown().await;
}

/// The test cluster with one SASL user, `alice`, for PLAIN.
async fn start_with_users() -> MockCluster {
    let mut file: serde_json::Value = serde_json::from_str(CLUSTER).unwrap();
    file["sasl"] = serde_json::json!({"users": [{"name": "alice", "password": "pw", "mechanisms": ["PLAIN"]}]});
    let config = MockConfig {
        port: 0,
        idle_timeout: NEVER_IDLE,
        ..MockConfig::default()
    };
    MockCluster::start(Cluster::from_json(&file.to_string()).unwrap(), config)
        .await
        .unwrap()
}

#[tokio::test]
async fn with_users_only_an_authenticated_client_is_served() {
    use kdp_wire::messages::{SaslAuthenticateRequest, SaslHandshakeRequest};
    let mock = start_with_users().await;

    // ApiVersions before authenticating: served, and it offers SASL.
    let mut s = connect(&mock, 1).await;
    let v = call(&mut s, &api_versions(), 3, 1).await;
    assert!(
        v.api_keys
            .iter()
            .any(|k| k.api_key == kdp_wire::api::SASL_HANDSHAKE),
        "{v:?}"
    );
    assert!(
        v.api_keys
            .iter()
            .any(|k| k.api_key == kdp_wire::api::SASL_AUTHENTICATE),
        "{v:?}"
    );
    // Anything else closes the connection.
    s.write_all(&frame(&describe("orders", &[3]), 0, 2))
        .await
        .unwrap();
    assert!(closed_within(&mut s, HANG_GUARD).await);

    // Before authentication a frame may not exceed 512 KiB: the size prefix
    // alone closes the connection.
    let mut s = connect(&mock, 1).await;
    s.write_all(&(600 * 1024i32).to_be_bytes()).await.unwrap();
    assert!(closed_within(&mut s, HANG_GUARD).await);

    // PLAIN, then the same request is served.
    let mut s = connect(&mock, 1).await;
    let hs = SaslHandshakeRequest {
        mechanism: "PLAIN".into(),
        ..Default::default()
    };
    let hs = call(&mut s, &hs, 1, 3).await;
    assert_eq!(
        (hs.error_code, hs.mechanisms),
        (ErrorCode::NONE, vec!["PLAIN".to_string()])
    );
    let auth = SaslAuthenticateRequest {
        auth_bytes: b"\0alice\0pw".to_vec(),
        ..Default::default()
    };
    assert_eq!(call(&mut s, &auth, 2, 4).await.error_code, ErrorCode::NONE);
    let r = call(&mut s, &describe("orders", &[3]), 0, 5).await;
    assert_eq!(r.topics[0].partitions[0].active_producers.len(), 2);
    // A second handshake on an authenticated connection: ILLEGAL_SASL_STATE.
    let again = SaslHandshakeRequest {
        mechanism: "PLAIN".into(),
        ..Default::default()
    };
    assert_eq!(
        call(&mut s, &again, 1, 6).await.error_code,
        ErrorCode::ILLEGAL_SASL_STATE
    );
}
