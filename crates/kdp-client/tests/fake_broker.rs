//! kdp-client against small fake brokers written in the tests: framing,
//! pipelining, time-outs, misbehaving peers, ApiVersions negotiation and the
//! describe engine's retries. These check the client's own behaviour; claims
//! about Kafka's behaviour are tested against real Kafka (crates/kdp/tests).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kdp_client::{
    BrokerAddress, Client, ClientConfig, ConnectFuture, Connection, ConnectionConfig, Connector,
    DescribeEvent, DescribeOptions, Error, RetryPolicy, TimeBound, TopicSelection,
};
use kdp_domain::PartitionOutcome;
use kdp_wire::frame::io::read_frame;
use kdp_wire::frame::{response_frame_to_vec, FrameReader, DEFAULT_MAX_FRAME_SIZE};
use kdp_wire::messages::{
    ApiVersion, ApiVersionsResponse, DescribeProducersRequest, DescribeProducersResponse,
    MetadataRequest, MetadataResponse, MetadataResponseBroker, MetadataResponsePartition,
    MetadataResponseTopic, PartitionResponse, ProducerState, TopicRequest, TopicResponse,
};
use kdp_wire::ErrorCode;
use kdp_wire::{decode_exact, Reader, RequestHeader};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

fn config(timeout_ms: u64) -> ConnectionConfig {
    ConnectionConfig {
        request_timeout: Duration::from_millis(timeout_ms),
        ..Default::default()
    }
}

/// Accepts one connection, buffered for [`read_request`].
async fn accept(l: &TcpListener) -> BufReader<TcpStream> {
    let (s, _) = l.accept().await.unwrap();
    BufReader::new(s)
}

/// Reads one request frame (kdp-wire's frame loop): its header and raw body.
async fn read_request(s: &mut BufReader<TcpStream>) -> Option<(RequestHeader, Vec<u8>)> {
    let buf = read_frame(s, &mut FrameReader::new(DEFAULT_MAX_FRAME_SIZE))
        .await
        .ok()?;
    let mut r = Reader::new(&buf);
    let (h, _) = RequestHeader::decode_auto(&mut r).expect("request header");
    let body = buf[r.offset()..].to_vec();
    Some((h, body))
}

async fn listener() -> (TcpListener, String) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let a = l.local_addr().unwrap().to_string();
    (l, a)
}

fn dp_request(topic: &str) -> DescribeProducersRequest {
    DescribeProducersRequest {
        topics: vec![TopicRequest {
            name: topic.into(),
            partition_indexes: vec![0],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// A response naming the topic of the request, so routing can be checked.
fn dp_echo(body: &[u8]) -> DescribeProducersResponse {
    let req: DescribeProducersRequest = decode_exact(body, 0).unwrap();
    DescribeProducersResponse {
        topics: req
            .topics
            .iter()
            .map(|t| TopicResponse {
                name: t.name.clone(),
                partitions: vec![],
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

#[tokio::test]
async fn pipelined_requests_are_routed_by_correlation_id() {
    let (l, addr) = listener().await;
    tokio::spawn(async move {
        let mut s = accept(&l).await;
        // read all eight before answering, then answer in reverse order
        let mut reqs = Vec::new();
        for _ in 0..8 {
            reqs.push(read_request(&mut s).await.unwrap());
        }
        let ids: std::collections::HashSet<i32> =
            reqs.iter().map(|(h, _)| h.correlation_id).collect();
        assert_eq!(ids.len(), 8, "distinct correlation ids");
        for (h, body) in reqs.into_iter().rev() {
            assert_eq!(h.client_id.as_deref(), Some("kdp"));
            s.write_all(&response_frame_to_vec(h.correlation_id, &dp_echo(&body), 0))
                .await
                .unwrap();
        }
        let _ = read_request(&mut s).await;
    });
    let conn = Arc::new(Connection::new(
        TcpStream::connect(&addr).await.unwrap(),
        &addr,
        config(5000),
    ));
    let mut tasks = Vec::new();
    for i in 0..8 {
        let conn = conn.clone();
        tasks.push(tokio::spawn(async move {
            let name = format!("topic-{i}");
            let resp = conn.send(&dp_request(&name), 0).await.unwrap();
            assert_eq!(resp.topics[0].name, name);
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert!(conn.is_usable());
}

#[tokio::test]
async fn oversized_frame_is_refused_before_allocating() {
    let (l, addr) = listener().await;
    tokio::spawn(async move {
        let mut s = accept(&l).await;
        let _ = read_request(&mut s).await;
        // claims 2 GiB - 1 and sends nothing more
        s.write_all(&i32::MAX.to_be_bytes()).await.unwrap();
        tokio::time::sleep(Duration::from_secs(5)).await;
    });
    let conn = Connection::new(
        TcpStream::connect(&addr).await.unwrap(),
        &addr,
        ConnectionConfig {
            max_response_size: 1 << 20,
            ..config(5000)
        },
    );
    // refused on the prefix alone: a Frame error, not a timeout waiting for 2 GiB
    let err = conn.send(&dp_request("t"), 0).await.unwrap_err();
    assert!(matches!(err, Error::Frame { .. }), "{err}");
    assert!(
        err.to_string().contains("above the maximum frame size"),
        "{err}"
    );
    assert!(!conn.is_usable());
    // later requests get the same error at once
    let again = conn.send(&dp_request("t"), 0).await.unwrap_err();
    assert_eq!(again.to_string(), err.to_string());
}

#[tokio::test]
async fn unknown_correlation_id_fails_the_connection() {
    let (l, addr) = listener().await;
    tokio::spawn(async move {
        let mut s = accept(&l).await;
        let (h, body) = read_request(&mut s).await.unwrap();
        s.write_all(&response_frame_to_vec(
            h.correlation_id + 1000,
            &dp_echo(&body),
            0,
        ))
        .await
        .unwrap();
        tokio::time::sleep(Duration::from_secs(5)).await;
    });
    let conn = Connection::new(
        TcpStream::connect(&addr).await.unwrap(),
        &addr,
        config(5000),
    );
    let err = conn.send(&dp_request("t"), 0).await.unwrap_err();
    assert!(matches!(err, Error::UnknownCorrelationId { .. }), "{err}");
    assert!(!conn.is_usable());
}

#[tokio::test]
async fn peer_closing_mid_response_or_between_responses() {
    let (l, addr) = listener().await;
    tokio::spawn(async move {
        // first connection: half a response, then close
        let mut s = accept(&l).await;
        let (h, body) = read_request(&mut s).await.unwrap();
        let frame = response_frame_to_vec(h.correlation_id, &dp_echo(&body), 0);
        s.write_all(&frame[..frame.len() - 3]).await.unwrap();
        drop(s);
        // second connection: close without answering
        let mut s = accept(&l).await;
        let _ = read_request(&mut s).await.unwrap();
        drop(s);
    });
    let conn = Connection::new(
        TcpStream::connect(&addr).await.unwrap(),
        &addr,
        config(5000),
    );
    let err = conn.send(&dp_request("t"), 0).await.unwrap_err();
    assert!(matches!(err, Error::Truncated { .. }), "{err}");
    assert!(err.is_connection_error());
    assert_eq!(err.kafka_code(), ErrorCode::NETWORK_EXCEPTION);

    let conn = Connection::new(
        TcpStream::connect(&addr).await.unwrap(),
        &addr,
        config(5000),
    );
    let err = conn.send(&dp_request("t"), 0).await.unwrap_err();
    assert!(matches!(err, Error::Closed { .. }), "{err}");
}

#[tokio::test]
async fn request_timeout_and_a_late_response_is_dropped() {
    let (l, addr) = listener().await;
    let (timed_out_tx, timed_out) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let mut s = accept(&l).await;
        let (h1, b1) = read_request(&mut s).await.unwrap();
        // answer only once the caller has given up
        let _ = timed_out.await;
        s.write_all(&response_frame_to_vec(h1.correlation_id, &dp_echo(&b1), 0))
            .await
            .unwrap();
        let (h2, b2) = read_request(&mut s).await.unwrap();
        s.write_all(&response_frame_to_vec(h2.correlation_id, &dp_echo(&b2), 0))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_secs(5)).await;
    });
    let conn = Connection::new(TcpStream::connect(&addr).await.unwrap(), &addr, config(200));
    let err = conn.send(&dp_request("first"), 0).await.unwrap_err();
    assert!(matches!(err, Error::RequestTimeout { .. }), "{err}");
    assert_eq!(err.kafka_code(), ErrorCode::REQUEST_TIMED_OUT);
    timed_out_tx.send(()).unwrap();
    // the late answer to "first" arrives before this one's, on the same stream
    let resp = conn
        .send_with_timeout(&dp_request("second"), 0, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(resp.topics[0].name, "second");
    assert!(
        conn.is_usable(),
        "a late answer to an abandoned request is not a protocol error"
    );
}

#[tokio::test]
async fn a_peer_that_accepts_and_never_answers_times_out() {
    let (l, addr) = listener().await;
    // never accept(): the kernel completes the handshake, nobody reads
    let conn = Connection::connect(
        &BrokerAddress::parse(&addr).unwrap(),
        &kdp_client::TcpConnector,
        config(300),
        Duration::from_secs(1),
    )
    .await;
    let err = conn.unwrap_err();
    assert!(
        matches!(
            err,
            Error::RequestTimeout {
                api: "ApiVersionsRequest",
                ..
            }
        ),
        "{err}"
    );
    drop(l);
}

struct NeverConnects;
impl Connector for NeverConnects {
    fn connect<'a>(&'a self, _addr: &'a BrokerAddress) -> ConnectFuture<'a> {
        Box::pin(std::future::pending())
    }
}

#[tokio::test(start_paused = true)]
async fn connect_timeout() {
    let start = tokio::time::Instant::now();
    let err = Connection::connect(
        &BrokerAddress::new("broker", 9092),
        &NeverConnects,
        config(1000),
        Duration::from_millis(150),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, Error::ConnectTimeout { .. }), "{err}");
    // on the paused clock: the connect timeout, not the request timeout, ended it
    assert_eq!(start.elapsed(), Duration::from_millis(150));
}

fn api_versions(max_api_versions: i16) -> ApiVersionsResponse {
    ApiVersionsResponse {
        api_keys: vec![
            ApiVersion::new(3, 0, 13),
            ApiVersion::new(18, 0, max_api_versions),
            ApiVersion::new(61, 0, 0),
        ],
        ..Default::default()
    }
}

/// A broker that knows ApiVersions up to v2 only: it answers the v4 request
/// in v0 with UNSUPPORTED_VERSION and its range; kdp retries at v2.
#[tokio::test]
async fn api_versions_falls_back_to_the_brokers_version() {
    let (l, addr) = listener().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    tokio::spawn(async move {
        let mut s = accept(&l).await;
        while let Some((h, _)) = read_request(&mut s).await {
            assert_eq!(h.request_api_key, 18);
            seen2.lock().unwrap().push(h.request_api_version);
            let frame = if h.request_api_version > 2 {
                let resp = ApiVersionsResponse {
                    error_code: ErrorCode::UNSUPPORTED_VERSION,
                    api_keys: vec![ApiVersion::new(18, 0, 2)],
                    ..Default::default()
                };
                response_frame_to_vec(h.correlation_id, &resp, 0)
            } else {
                response_frame_to_vec(h.correlation_id, &api_versions(2), h.request_api_version)
            };
            s.write_all(&frame).await.unwrap();
        }
    });
    let conn = Connection::establish(
        TcpStream::connect(&addr).await.unwrap(),
        &addr,
        config(2000),
    )
    .await
    .unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![4, 2]);
    let table = conn.api_versions().unwrap();
    assert_eq!(table.api_versions_version, 2);
    assert_eq!(conn.version_for::<MetadataRequest>().unwrap(), 12);
    assert_eq!(conn.version_for::<DescribeProducersRequest>().unwrap(), 0);
}

#[tokio::test]
async fn no_common_version_is_an_error() {
    let (l, addr) = listener().await;
    tokio::spawn(async move {
        let mut s = accept(&l).await;
        let (h, _) = read_request(&mut s).await.unwrap();
        // an old broker: Metadata up to v3, no DescribeProducers
        let resp = ApiVersionsResponse {
            api_keys: vec![ApiVersion::new(3, 0, 3), ApiVersion::new(18, 0, 4)],
            ..Default::default()
        };
        s.write_all(&response_frame_to_vec(
            h.correlation_id,
            &resp,
            h.request_api_version,
        ))
        .await
        .unwrap();
        tokio::time::sleep(Duration::from_secs(5)).await;
    });
    let conn = Connection::establish(
        TcpStream::connect(&addr).await.unwrap(),
        &addr,
        config(2000),
    )
    .await
    .unwrap();
    let e = conn.version_for::<MetadataRequest>().unwrap_err();
    assert!(
        e.to_string()
            .contains("the broker supports v0-v3, kdp v4-v12"),
        "{e}"
    );
    let e = conn.version_for::<DescribeProducersRequest>().unwrap_err();
    assert!(
        e.to_string()
            .contains("does not support DescribeProducers (added in Kafka 2.8; kdp speaks v"),
        "{e}"
    );
    assert_eq!(e.kafka_code(), ErrorCode::UNSUPPORTED_VERSION);
}

// ---------------------------------------------------------------- a fake cluster

type DpHandler =
    dyn Fn(usize, &DescribeProducersRequest) -> DescribeProducersResponse + Send + Sync;

/// One fake broker of a one-broker cluster: ApiVersions, Metadata (topic "t",
/// `partitions` partitions led by broker 1), and DescribeProducers answered
/// by `dp` (given the 0-based call number).
async fn fake_cluster(partitions: i32, dp: Arc<DpHandler>) -> (String, Arc<AtomicUsize>) {
    let (l, addr) = listener().await;
    let port: i32 = addr.rsplit_once(':').unwrap().1.parse().unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let calls2 = calls.clone();
    tokio::spawn(async move {
        loop {
            let mut s = accept(&l).await;
            let dp = dp.clone();
            let calls = calls2.clone();
            tokio::spawn(async move {
                while let Some((h, body)) = read_request(&mut s).await {
                    let v = h.request_api_version;
                    let frame = match h.request_api_key {
                        18 => response_frame_to_vec(h.correlation_id, &api_versions(4), v),
                        3 => {
                            let req: MetadataRequest = decode_exact(&body, v).unwrap();
                            assert!(!req.allow_auto_topic_creation);
                            let md = MetadataResponse {
                                brokers: vec![MetadataResponseBroker {
                                    node_id: 1,
                                    host: "127.0.0.1".into(),
                                    port,
                                    ..Default::default()
                                }],
                                controller_id: 1,
                                topics: vec![MetadataResponseTopic {
                                    name: Some("t".into()),
                                    partitions: (0..partitions)
                                        .map(|p| MetadataResponsePartition {
                                            partition_index: p,
                                            leader_id: 1,
                                            replica_nodes: vec![1],
                                            isr_nodes: vec![1],
                                            ..Default::default()
                                        })
                                        .collect(),
                                    ..Default::default()
                                }],
                                ..Default::default()
                            };
                            response_frame_to_vec(h.correlation_id, &md, v)
                        }
                        61 => {
                            let req: DescribeProducersRequest = decode_exact(&body, 0).unwrap();
                            let n = calls.fetch_add(1, Ordering::SeqCst);
                            response_frame_to_vec(h.correlation_id, &dp(n, &req), 0)
                        }
                        k => panic!("unexpected api key {k}"),
                    };
                    if s.write_all(&frame).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, calls)
}

fn answer(
    req: &DescribeProducersRequest,
    code: impl Fn(i32) -> ErrorCode,
    throttle: i32,
) -> DescribeProducersResponse {
    DescribeProducersResponse {
        throttle_time_ms: throttle,
        topics: req
            .topics
            .iter()
            .map(|t| TopicResponse {
                name: t.name.clone(),
                partitions: t
                    .partition_indexes
                    .iter()
                    .map(|p| PartitionResponse {
                        partition_index: *p,
                        error_code: code(*p),
                        active_producers: if code(*p) == ErrorCode::NONE {
                            vec![ProducerState {
                                producer_id: 100 + i64::from(*p),
                                ..Default::default()
                            }]
                        } else {
                            vec![]
                        },
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

async fn describe(addr: &str, opts: DescribeOptions) -> (Vec<PartitionOutcome>, usize) {
    describe_within(addr, opts, retry_quickly(10)).await
}

/// Retries after 10 ms, at most `max_attempts` rounds.
fn retry_quickly(max_attempts: u32) -> TimeBound {
    TimeBound::after(Duration::from_secs(30)).with_retry(RetryPolicy {
        max_attempts,
        backoff: Duration::from_millis(10),
        ..RetryPolicy::default()
    })
}

async fn describe_within(
    addr: &str,
    opts: DescribeOptions,
    bound: TimeBound,
) -> (Vec<PartitionOutcome>, usize) {
    let client = Arc::new(
        Client::connect(
            BrokerAddress::parse_list(addr).unwrap(),
            ClientConfig::default(),
        )
        .await
        .unwrap(),
    );
    let mut outcomes = Vec::new();
    let mut planned = 0;
    kdp_client::describe_producers(client, &opts, &bound, |ev| match ev {
        DescribeEvent::Planned { partitions } => planned += partitions,
        DescribeEvent::Results { outcomes: o, .. } => outcomes.extend(o),
    })
    .await
    .unwrap();
    outcomes.sort_by_key(|o| o.partition);
    (outcomes, planned)
}

fn topic_t(partitions: Option<Vec<i32>>) -> DescribeOptions {
    DescribeOptions {
        topics: Some(vec![TopicSelection {
            name: "t".into(),
            partitions,
        }]),
        ..Default::default()
    }
}

#[tokio::test]
async fn describe_retries_not_leader_and_never_authorization_errors() {
    // call 0: partition 0 NOT_LEADER_OR_FOLLOWER, partition 1 TOPIC_AUTHORIZATION_FAILED, 2 fine
    let dp: Arc<DpHandler> = Arc::new(|n, req| {
        answer(
            req,
            |p| match (n, p) {
                (0, 0) => ErrorCode::NOT_LEADER_OR_FOLLOWER,
                (_, 1) => ErrorCode::TOPIC_AUTHORIZATION_FAILED,
                _ => ErrorCode::NONE,
            },
            0,
        )
    });
    let (addr, calls) = fake_cluster(3, dp).await;
    let (out, planned) = describe(&addr, topic_t(None)).await;
    assert_eq!(planned, 3);
    assert_eq!(out.len(), 3, "{out:?}");
    assert_eq!(
        out[0].result.as_ref().unwrap()[0].producer_id,
        100,
        "retried after NOT_LEADER"
    );
    let e = out[1].result.as_ref().unwrap_err();
    assert_eq!(
        (e.code, e.client_side),
        (ErrorCode::TOPIC_AUTHORIZATION_FAILED, false)
    );
    assert!(out[2].result.is_ok());
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "one retry, for partition 0 only"
    );
}

#[tokio::test]
async fn describe_with_broker_id_does_not_retry_not_leader() {
    let dp: Arc<DpHandler> =
        Arc::new(|_, req| answer(req, |_| ErrorCode::NOT_LEADER_OR_FOLLOWER, 0));
    let (addr, calls) = fake_cluster(1, dp).await;
    let mut opts = topic_t(Some(vec![0]));
    opts.broker_id = Some(1);
    let (out, _) = describe(&addr, opts).await;
    assert_eq!(
        out[0].result.as_ref().unwrap_err().code,
        ErrorCode::NOT_LEADER_OR_FOLLOWER
    );
    assert_eq!(out[0].broker_id, Some(1));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn describe_gives_up_on_unknown_partition_within_bounds() {
    // the broker keeps saying UNKNOWN_TOPIC_OR_PARTITION although metadata has it
    let dp: Arc<DpHandler> =
        Arc::new(|_, req| answer(req, |_| ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, 0));
    let (addr, calls) = fake_cluster(1, dp).await;
    let opts = topic_t(Some(vec![0, 5]));
    let (out, planned) = describe_within(&addr, opts, retry_quickly(4)).await;
    assert_eq!(planned, 2);
    // partition 5: metadata says it does not exist, reported without asking a broker
    assert_eq!(out[1].partition, 5);
    assert_eq!(out[1].broker_id, None);
    assert!(out[1].result.as_ref().unwrap_err().client_side);
    // partition 0: retried max_attempts times, then the broker's error
    let e = out[0].result.as_ref().unwrap_err();
    assert_eq!(
        (e.code, e.client_side),
        (ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, false)
    );
    assert_eq!(calls.load(Ordering::SeqCst), 4, "bounded by max_attempts");
}

#[tokio::test]
async fn bootstrap_tries_each_server_and_reports_all_failures() {
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let dp: Arc<DpHandler> = Arc::new(|_, req| answer(req, |_| ErrorCode::NONE, 0));
    let (live, _) = fake_cluster(1, dp).await;
    let client = Client::connect(
        BrokerAddress::parse_list(&format!("{dead},{live}")).unwrap(),
        ClientConfig::default(),
    )
    .await
    .unwrap();
    let md = client.metadata(None).await.unwrap();
    assert_eq!(md.brokers.len(), 1);
    assert_eq!(md.leader("t", 0), Some(1));

    let cfg = ClientConfig {
        bootstrap_passes: 2,
        reconnect_backoff: Duration::from_millis(10),
        ..Default::default()
    };
    let err = Client::connect(
        BrokerAddress::parse_list(&format!("{dead},{dead}")).unwrap(),
        cfg,
    )
    .await
    .unwrap_err();
    let Error::Bootstrap { attempts } = &err else {
        panic!("{err}")
    };
    assert_eq!(attempts.len(), 2);
    // the refusal by its kind, not by the OS's wording
    assert!(
        attempts
            .iter()
            .all(|e| matches!(e, Error::Connect { source, .. }
            if source.kind() == std::io::ErrorKind::ConnectionRefused)),
        "{err}"
    );
}
