//! kdp-client's connections against kdp-test-support's in-memory brokers
//! made to misbehave: pipelining, oversized and truncated frames, a wrong
//! correlation id, time-outs and late answers, ApiVersions negotiation with
//! old brokers, and the describe engine's retries. These check the client's
//! own behaviour; claims about Kafka's behaviour are tested against real
//! Kafka (crates/kdp/tests).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kdp_client::{
    BrokerAddress, Client, ClientConfig, ConnectFuture, Connection, ConnectionConfig, Connector,
    DescribeEvent, DescribeOptions, Error, RetryPolicy, TimeBound, TopicSelection,
};
use kdp_domain::PartitionOutcome;
use kdp_test_support::{Fault, Raw, StallCluster};
use kdp_wire::api::ApiKey;
use kdp_wire::frame::response_frame_to_vec;
use kdp_wire::messages::{
    ApiVersion, ApiVersionsResponse, DescribeProducersRequest, MetadataRequest, TopicRequest,
};
use kdp_wire::{ErrorCode, Reader, RequestHeader};

fn config(timeout_ms: u64) -> ConnectionConfig {
    ConnectionConfig {
        request_timeout: Duration::from_millis(timeout_ms),
        ..Default::default()
    }
}

/// A one-broker cluster with topic `t` (`partitions` partitions).
fn one_broker(partitions: i32) -> StallCluster {
    let leaders: Vec<(&str, i32, i32)> = (0..partitions).map(|p| ("t", p, 1)).collect();
    StallCluster::placed(1, &leaders)
}

/// A connection to broker 1 of `cluster` (ApiVersions done).
async fn connect(cluster: &StallCluster, config: ConnectionConfig) -> Result<Connection, Error> {
    Connection::connect(
        &StallCluster::address(1),
        cluster,
        config,
        Duration::from_secs(1),
    )
    .await
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

/// The request header of a request payload.
fn header(request: &[u8]) -> RequestHeader {
    RequestHeader::decode_auto(&mut Reader::new(request))
        .expect("request header")
        .0
}

/// An answer payload (header and body) of `message` at `version`.
fn payload<M: kdp_wire::Message>(correlation_id: i32, message: &M, version: i16) -> Vec<u8> {
    response_frame_to_vec(correlation_id, message, version)[4..].to_vec()
}

#[tokio::test(start_paused = true)]
async fn pipelined_requests_are_routed_by_correlation_id() {
    let cluster = one_broker(1);
    // the eight are read before any is answered, then answered last first
    cluster.hold(ApiKey::DESCRIBE_PRODUCERS, 8);
    let conn = Arc::new(connect(&cluster, config(5000)).await.unwrap());
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
    let asked = cluster.requests::<DescribeProducersRequest>();
    assert_eq!(asked.len(), 8);
}

#[tokio::test(start_paused = true)]
async fn oversized_frame_is_refused_before_allocating() {
    let cluster = one_broker(1);
    // claims 2 GiB - 1 and sends nothing more
    cluster.answer_raw(ApiKey::DESCRIBE_PRODUCERS, |_, _, _| {
        Raw::Bytes(i32::MAX.to_be_bytes().to_vec())
    });
    let conn = connect(
        &cluster,
        ConnectionConfig {
            max_response_size: 1 << 20,
            ..config(5000)
        },
    )
    .await
    .unwrap();
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

#[tokio::test(start_paused = true)]
async fn unknown_correlation_id_fails_the_connection() {
    let cluster = one_broker(1);
    cluster.answer_raw(ApiKey::DESCRIBE_PRODUCERS, |_, _, answer| {
        let mut answer = answer.to_vec();
        let wrong = i32::from_be_bytes([answer[0], answer[1], answer[2], answer[3]]) + 1000;
        answer[..4].copy_from_slice(&wrong.to_be_bytes());
        Raw::Frame(answer)
    });
    let conn = connect(&cluster, config(5000)).await.unwrap();
    let err = conn.send(&dp_request("t"), 0).await.unwrap_err();
    assert!(matches!(err, Error::UnknownCorrelationId { .. }), "{err}");
    assert!(!conn.is_usable());
}

#[tokio::test(start_paused = true)]
async fn peer_closing_mid_response_or_between_responses() {
    // half a response, then close
    let cluster = one_broker(1);
    cluster.answer_raw(ApiKey::DESCRIBE_PRODUCERS, |_, _, answer| {
        let size = i32::try_from(answer.len()).unwrap();
        let mut frame = size.to_be_bytes().to_vec();
        frame.extend_from_slice(&answer[..answer.len() - 3]);
        Raw::BytesThenClose(frame)
    });
    let conn = connect(&cluster, config(5000)).await.unwrap();
    let err = conn.send(&dp_request("t"), 0).await.unwrap_err();
    assert!(matches!(err, Error::Truncated { .. }), "{err}");
    assert!(err.is_connection_error());
    assert_eq!(err.kafka_code(), ErrorCode::NETWORK_EXCEPTION);

    // close without answering
    let cluster = one_broker(1);
    cluster.fault(ApiKey::DESCRIBE_PRODUCERS.0, Fault::Cut);
    let conn = connect(&cluster, config(5000)).await.unwrap();
    let err = conn.send(&dp_request("t"), 0).await.unwrap_err();
    assert!(matches!(err, Error::Closed { .. }), "{err}");
}

#[tokio::test(start_paused = true)]
async fn request_timeout_and_a_late_response_is_dropped() {
    let cluster = one_broker(1);
    // every answer comes after the caller's first request gave up
    cluster.fault(
        ApiKey::DESCRIBE_PRODUCERS.0,
        Fault::Delay(Duration::from_secs(1)),
    );
    let conn = connect(&cluster, config(200)).await.unwrap();
    let err = conn.send(&dp_request("first"), 0).await.unwrap_err();
    assert!(matches!(err, Error::RequestTimeout { .. }), "{err}");
    assert_eq!(err.kafka_code(), ErrorCode::REQUEST_TIMED_OUT);
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

#[tokio::test(start_paused = true)]
async fn a_peer_that_accepts_and_never_answers_times_out() {
    let cluster = one_broker(1);
    cluster.stall(ApiKey::API_VERSIONS.0);
    let err = connect(&cluster, config(300)).await.unwrap_err();
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

/// A broker that knows ApiVersions up to v2 only: it answers the v4 request
/// in v0 with UNSUPPORTED_VERSION and its range; kdp retries at v2.
#[tokio::test(start_paused = true)]
async fn api_versions_falls_back_to_the_brokers_version() {
    let cluster = one_broker(1);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let asked = seen.clone();
    cluster.answer_raw(ApiKey::API_VERSIONS, move |_, request, _| {
        let h = header(request);
        asked.lock().unwrap().push(h.request_api_version);
        let versions = |max: i16| ApiVersionsResponse {
            api_keys: vec![
                ApiVersion::new(ApiKey::METADATA.0, 0, 13),
                ApiVersion::new(ApiKey::API_VERSIONS.0, 0, max),
                ApiVersion::new(ApiKey::DESCRIBE_PRODUCERS.0, 0, 0),
            ],
            ..Default::default()
        };
        Raw::Frame(if h.request_api_version > 2 {
            let refused = ApiVersionsResponse {
                error_code: ErrorCode::UNSUPPORTED_VERSION,
                api_keys: vec![ApiVersion::new(ApiKey::API_VERSIONS.0, 0, 2)],
                ..Default::default()
            };
            payload(h.correlation_id, &refused, 0)
        } else {
            payload(h.correlation_id, &versions(2), h.request_api_version)
        })
    });
    let conn = connect(&cluster, config(2000)).await.unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![4, 2]);
    let table = conn.api_versions().unwrap();
    assert_eq!(table.api_versions_version, 2);
    assert_eq!(conn.version_for::<MetadataRequest>().unwrap(), 12);
    assert_eq!(conn.version_for::<DescribeProducersRequest>().unwrap(), 0);
}

#[tokio::test(start_paused = true)]
async fn no_common_version_is_an_error() {
    let cluster = one_broker(1);
    // an old broker: Metadata up to v3, no DescribeProducers
    cluster.answer_raw(ApiKey::API_VERSIONS, |_, request, _| {
        let h = header(request);
        let old = ApiVersionsResponse {
            api_keys: vec![
                ApiVersion::new(ApiKey::METADATA.0, 0, 3),
                ApiVersion::new(ApiKey::API_VERSIONS.0, 0, 4),
            ],
            ..Default::default()
        };
        Raw::Frame(payload(h.correlation_id, &old, h.request_api_version))
    });
    let conn = connect(&cluster, config(2000)).await.unwrap();
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

// ---------------------------------------------------------------- the describe engine

/// Retries after 10 ms, at most `max_attempts` rounds.
fn retry_quickly(max_attempts: u32) -> TimeBound {
    TimeBound::after(Duration::from_secs(30)).with_retry(RetryPolicy {
        max_attempts,
        backoff: Duration::from_millis(10),
        ..RetryPolicy::default()
    })
}

/// Every partition of `cluster`'s DescribeProducers answers gets the error
/// `code(call, partition)` (call counted from 0), producers only without one.
fn answer_with(
    cluster: &StallCluster,
    code: impl Fn(usize, i32) -> ErrorCode + Send + Sync + 'static,
) {
    let calls = AtomicUsize::new(0);
    cluster.edit::<DescribeProducersRequest, _>(move |_, _, resp| {
        let n = calls.fetch_add(1, Ordering::SeqCst);
        for p in resp.topics.iter_mut().flat_map(|t| &mut t.partitions) {
            p.error_code = code(n, p.partition_index);
            if p.error_code != ErrorCode::NONE {
                p.active_producers.clear();
            }
        }
    });
}

async fn describe_within(
    cluster: &StallCluster,
    opts: DescribeOptions,
    bound: TimeBound,
) -> (Vec<PartitionOutcome>, usize) {
    let client = cluster.client().await;
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

#[tokio::test(start_paused = true)]
async fn describe_retries_not_leader_and_never_authorization_errors() {
    let cluster = one_broker(3);
    // call 0: partition 0 NOT_LEADER_OR_FOLLOWER, partition 1 TOPIC_AUTHORIZATION_FAILED, 2 fine
    answer_with(&cluster, |n, p| match (n, p) {
        (0, 0) => ErrorCode::NOT_LEADER_OR_FOLLOWER,
        (_, 1) => ErrorCode::TOPIC_AUTHORIZATION_FAILED,
        _ => ErrorCode::NONE,
    });
    let (out, planned) = describe_within(&cluster, topic_t(None), retry_quickly(10)).await;
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
        cluster.asked(ApiKey::DESCRIBE_PRODUCERS.0),
        2,
        "one retry, for partition 0 only"
    );
}

#[tokio::test(start_paused = true)]
async fn describe_with_broker_id_does_not_retry_not_leader() {
    let cluster = one_broker(1);
    answer_with(&cluster, |_, _| ErrorCode::NOT_LEADER_OR_FOLLOWER);
    let mut opts = topic_t(Some(vec![0]));
    opts.broker_id = Some(1);
    let (out, _) = describe_within(&cluster, opts, retry_quickly(10)).await;
    assert_eq!(
        out[0].result.as_ref().unwrap_err().code,
        ErrorCode::NOT_LEADER_OR_FOLLOWER
    );
    assert_eq!(out[0].broker_id, Some(1));
    assert_eq!(cluster.asked(ApiKey::DESCRIBE_PRODUCERS.0), 1);
}

#[tokio::test(start_paused = true)]
async fn describe_gives_up_on_unknown_partition_within_bounds() {
    let cluster = one_broker(1);
    // the broker keeps saying UNKNOWN_TOPIC_OR_PARTITION although metadata has it
    answer_with(&cluster, |_, _| ErrorCode::UNKNOWN_TOPIC_OR_PARTITION);
    let opts = topic_t(Some(vec![0, 5]));
    let (out, planned) = describe_within(&cluster, opts, retry_quickly(4)).await;
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
    assert_eq!(
        cluster.asked(ApiKey::DESCRIBE_PRODUCERS.0),
        4,
        "bounded by max_attempts"
    );
}

#[tokio::test(start_paused = true)]
async fn bootstrap_tries_each_server_and_reports_all_failures() {
    let cluster = one_broker(1);
    // broker 2 is no broker of the cluster, and refuses connections
    cluster.refuse(2);
    let (dead, live) = (StallCluster::address(2), StallCluster::address(1));
    let client = Client::connect(vec![dead.clone(), live], cluster.client_config())
        .await
        .unwrap();
    let md = client.metadata(None).await.unwrap();
    assert_eq!(md.brokers.len(), 1);
    assert_eq!(md.leader("t", 0), Some(1));

    let cfg = ClientConfig {
        bootstrap_passes: 2,
        reconnect_backoff: Duration::from_millis(10),
        ..cluster.client_config()
    };
    let err = Client::connect(vec![dead.clone(), dead], cfg)
        .await
        .unwrap_err();
    let Error::Bootstrap { attempts } = &err else {
        panic!("{err}")
    };
    assert_eq!(attempts.len(), 2);
    // the refusal by its kind, not by its wording
    assert!(
        attempts
            .iter()
            .all(|e| matches!(e, Error::Connect { source, .. }
            if source.kind() == std::io::ErrorKind::ConnectionRefused)),
        "{err}"
    );
}
