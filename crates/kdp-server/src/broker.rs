//! One mock broker's request handling, without sockets: a whole request
//! frame payload in, a whole response frame (or the reason to close the
//! connection) out.
//!
//! Served: every API of kdp-wire's registry ([`kdp_wire::registry`]), in
//! every version kdp-wire decodes, each by its [`Handler`] in
//! [`crate::apis`]. Anything else closes the connection, as a Kafka broker
//! does for a request it cannot parse (`SocketServer` /
//! `RequestContext.parseRequest` throw `InvalidRequestException`, and the
//! processor closes the channel).

use kdp_wire::api;
use kdp_wire::frame::encode_response_frame;
use kdp_wire::messages::{ApiVersionsRequest, ApiVersionsResponse};
use kdp_wire::ErrorCode;
use kdp_wire::{decode_exact, Message, Reader, RequestHeader, ResponseHeader};

use crate::apis::api_versions::api_range;
pub use crate::apis::api_versions::{api_versions_response, SUPPORTED_APIS};
pub use crate::apis::metadata::{
    metadata_response, metadata_within, CLUSTER_ALL_OPERATIONS, TOPIC_ALL_OPERATIONS,
};
use crate::apis::{Call, Caller, Handler, Refusal};
use crate::responder::RequestContext;
pub use crate::shared::{Advertised, Shared, TRANSACTIONAL_ID_CLEANUP_INTERVAL_MS};

/// The registry's APIs, each to its handler: a request of an API the
/// registry has is decoded as its declared request and answered by that
/// type's [`Handler`] (`None` for any other key).
macro_rules! dispatch {
    ($($name:ident: $key:ident, $req:ident, $resp:ident;)*) => {
        fn dispatch(call: &Call<'_>, header: &RequestHeader, body: &[u8]) -> Option<Result<Vec<u8>, Reject>> {
            match header.request_api_key {
                $(api::$key => Some(serve::<kdp_wire::messages::$req>(call, header, body)),)*
                _ => None,
            }
        }
    };
}

kdp_wire::for_each_api!(dispatch);

/// Decodes the body as `R`, lets its handler answer, and frames the answer
/// within `max_response_size`.
fn serve<R: Handler>(
    call: &Call<'_>,
    header: &RequestHeader,
    body: &[u8],
) -> Result<Vec<u8>, Reject> {
    let version = call.version;
    let api_name = api::name(R::API_KEY).unwrap_or("unknown");
    let req: R = decode_body(body, version, api_name)?;
    let header_len = response_header_len(R::API_KEY, version);
    let resp = req.handle(call).map_err(|e| match e {
        Refusal::Invalid(e) => Reject(format!("{api_name} v{version}: {e}")),
        Refusal::TooLarge(e) => too_large(header, e.at_least, header_len, call.shared),
    })?;
    bounded_frame(call.shared, header, &resp, version)
}

/// Why a request closes its connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Reject(pub String);

/// What a handled request produced.
#[derive(Debug)]
pub struct Handled {
    /// The request's header (for logs; the response echoes its `CorrelationId`).
    pub header: RequestHeader,
    /// The whole response frame, size prefix included.
    pub response: Vec<u8>,
}

/// Handles one request frame payload (the bytes after the size prefix) on
/// broker `broker_id`, from an unauthenticated client (`User:ANONYMOUS`).
pub fn handle_request(
    shared: &Shared,
    broker_id: i32,
    payload: &[u8],
    client_address: Option<std::net::SocketAddr>,
) -> Result<Handled, Reject> {
    handle_request_as(
        shared,
        broker_id,
        payload,
        client_address,
        crate::sasl::ANONYMOUS.to_string(),
    )
}

/// [`handle_request`] for a request from `principal` (`User:alice` once
/// SASL authenticated it): the cluster file's ACLs for it apply.
pub fn handle_request_as(
    shared: &Shared,
    broker_id: i32,
    payload: &[u8],
    client_address: Option<std::net::SocketAddr>,
    principal: String,
) -> Result<Handled, Reject> {
    let mut r = Reader::new(payload);
    let (header, _) = RequestHeader::decode_auto(&mut r)
        .map_err(|e| Reject(format!("malformed request header: {e}")))?;
    let (key, version) = (header.request_api_key, header.request_api_version);
    let api_name = api::name(key).unwrap_or("unknown");
    let body = r.take(r.remaining(), "body").unwrap_or_default();
    let ctx = RequestContext {
        principal,
        client_id: header.client_id.clone(),
        client_address,
    };
    shared.remove_expired_transactional_ids(shared.clock.now_ms());
    shared.advance_generators(shared.clock.now_ms());
    shared.abort_timed_out_transactions(shared.clock.now_ms());
    if key == api::API_VERSIONS
        && !(ApiVersionsRequest::LOWEST_VERSION..=ApiVersionsRequest::HIGHEST_VERSION)
            .contains(&version)
    {
        // RequestContext.isUnsupportedApiVersionsRequest: the body is not
        // parsed, and the answer is a v0 response (header v0) with
        // UNSUPPORTED_VERSION and, since KIP-511, only the ApiVersions
        // range (ApiVersionsRequest.getErrorResponse).
        let resp = ApiVersionsResponse {
            error_code: ErrorCode::UNSUPPORTED_VERSION,
            api_keys: vec![api_range(api::API_VERSIONS)],
            ..Default::default()
        };
        let response = bounded_frame(shared, &header, &resp, 0)?;
        return Ok(Handled { header, response });
    }
    let call = Call {
        shared,
        caller: caller(shared, broker_id, &ctx),
        version,
        limit: response_limit(shared).saturating_sub(response_header_len(key, version)),
    };
    if call.shared.read().withheld_apis.contains(&key) {
        // a broker that predates the API cannot parse its header: it
        // closes the connection
        return Err(Reject(format!(
            "api key {key} ({api_name}) is withheld by this mock's cluster file"
        )));
    }
    match dispatch(&call, &header, body) {
        Some(response) => {
            let response = response?;
            Ok(Handled { header, response })
        }
        None => Err(Reject(format!(
            "api key {key} ({api_name}) v{version} is not served by this mock"
        ))),
    }
}

fn caller<'a>(shared: &'a Shared, broker_id: i32, ctx: &'a RequestContext) -> Caller<'a> {
    Caller {
        broker_id,
        authorizer: shared.authorizer.as_ref(),
        request: ctx,
        now_ms: shared.clock.now_ms(),
    }
}

/// `max_response_size`, and never more than a size prefix (an int32) can say.
fn response_limit(shared: &Shared) -> usize {
    shared.max_response_size.min(i32::MAX as usize)
}

fn response_header_len(key: i16, version: i16) -> usize {
    ResponseHeader::default().encoded_len(api::response_header_version(key, version))
}

/// The whole response frame, unless its size prefix would be above
/// `max_response_size`: a client refuses such a frame, so it is not sent.
fn bounded_frame<M: Message>(
    shared: &Shared,
    header: &RequestHeader,
    body: &M,
    version: i16,
) -> Result<Vec<u8>, Reject> {
    let size = response_header_len(M::API_KEY, version).saturating_add(body.encoded_len(version));
    if size > response_limit(shared) {
        return Err(too_large(header, size, 0, shared));
    }
    let mut out = Vec::with_capacity(4 + size);
    encode_response_frame(&mut out, header.correlation_id, body, version);
    Ok(out)
}

fn too_large(
    header: &RequestHeader,
    body_at_least: usize,
    header_len: usize,
    shared: &Shared,
) -> Reject {
    let at_least = body_at_least.saturating_add(header_len);
    let limit = response_limit(shared);
    let key = header.request_api_key;
    Reject(format!(
        "the response to {} v{} (correlation id {}) would be at least {at_least} bytes, \
         above max.response.size {limit}",
        api::name(key).unwrap_or("unknown"),
        header.request_api_version,
        header.correlation_id,
    ))
}

/// Decodes a request body; an unsupported version is refused here too
/// (by the codec's own version check).
fn decode_body<M: Message>(body: &[u8], version: i16, api_name: &str) -> Result<M, Reject> {
    // Offsets in errors count from the start of the body.
    decode_exact(body, version).map_err(|e| {
        Reject(format!(
            "cannot read {api_name} v{version} request body: {e}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apis::api_versions::valid_software_token;
    use crate::apis::metadata::Seen;
    use crate::cluster::Cluster;
    use crate::responder::AllowAll;
    use kdp_wire::frame::{decode_response_frame, request_frame_to_vec};
    use kdp_wire::messages::*;
    use kdp_wire::messages::{DescribeProducersResponse, MetadataRequestTopic};
    use kdp_wire::Request;
    use kdp_wire::Uuid;
    use std::sync::{Arc, RwLock};

    fn shared() -> Shared {
        let cluster = Cluster::from_json(
            r#"{"brokers": [{"id": 1, "rack": "r1"}, {"id": 2}],
                "topics": [{"name": "t", "partitions": [
                    {"partition": 0, "leader": 1, "replicas": [1, 2], "leader_epoch": 4},
                    {"partition": 1, "leader": -1, "replicas": [2]}]}]}"#,
        )
        .unwrap();
        Shared::new(
            cluster,
            vec![
                Advertised {
                    id: 1,
                    host: "127.0.0.1".into(),
                    port: 9001,
                },
                Advertised {
                    id: 2,
                    host: "127.0.0.1".into(),
                    port: 9002,
                },
            ],
            Arc::new(AllowAll),
            kdp_wire::frame::DEFAULT_MAX_FRAME_SIZE,
        )
    }

    fn call<R: Request>(req: &R, version: i16) -> Result<R::Response, Reject> {
        let header = RequestHeader {
            request_api_key: R::API_KEY,
            request_api_version: version,
            correlation_id: 77,
            client_id: Some("test".into()),
            ..Default::default()
        };
        let frame = request_frame_to_vec(&header, req);
        let handled = handle_request(&shared(), 1, &frame[4..], None)?;
        let (h, body) = decode_response_frame::<R::Response>(&handled.response, version).unwrap();
        assert_eq!(h.correlation_id, 77);
        Ok(body)
    }

    #[test]
    fn api_versions_every_version() {
        for v in 0..=4 {
            let req = ApiVersionsRequest {
                client_software_name: "kdp".into(),
                client_software_version: "0.1.0".into(),
                ..Default::default()
            };
            let resp = call(&req, v).unwrap();
            assert_eq!(resp.error_code, ErrorCode::NONE);
            assert_eq!(resp.range(api::DESCRIBE_PRODUCERS), Some((0, 0)));
            assert_eq!(resp.range(api::METADATA), Some((4, 12)));
            assert_eq!(resp.range(api::API_VERSIONS), Some((0, 4)));
            assert_eq!(resp.range(api::FIND_COORDINATOR), Some((0, 6)));
            assert_eq!(resp.range(api::LIST_TRANSACTIONS), Some((0, 2)));
            assert_eq!(resp.range(api::DESCRIBE_TRANSACTIONS), Some((0, 0)));
            assert_eq!(resp.range(api::DESCRIBE_CONFIGS), Some((1, 4)));
            assert_eq!(resp.range(api::LIST_OFFSETS), Some((1, 10)));
            assert_eq!(resp.range(api::WRITE_TXN_MARKERS), Some((1, 2)));
            assert_eq!(resp.range(api::INIT_PRODUCER_ID), Some((0, 5)));
            assert_eq!(resp.api_keys.len(), SUPPORTED_APIS.len());
        }
    }

    #[test]
    fn api_versions_invalid_software_name() {
        let req = ApiVersionsRequest {
            client_software_name: "-bad".into(),
            client_software_version: "1".into(),
            ..Default::default()
        };
        let resp = call(&req, 3).unwrap();
        assert_eq!(resp.error_code, ErrorCode::INVALID_REQUEST);
        assert!(resp.api_keys.is_empty());
        assert!(valid_software_token("apache-kafka-java"));
        assert!(valid_software_token("4.1.1"));
        assert!(valid_software_token("a"));
        assert!(!valid_software_token(""));
        assert!(!valid_software_token("a."));
        assert!(!valid_software_token("a b"));
    }

    #[test]
    fn api_versions_unsupported_version_falls_back_to_v0() {
        // A v9 request with a body we cannot know: header v2, then junk.
        let mut payload = Vec::new();
        payload.extend_from_slice(&18i16.to_be_bytes());
        payload.extend_from_slice(&9i16.to_be_bytes());
        payload.extend_from_slice(&5i32.to_be_bytes());
        payload.extend_from_slice(&(-1i16).to_be_bytes()); // null client id
        payload.push(0); // no tagged fields
        payload.extend_from_slice(b"\xff\xff\xffjunk");
        let handled = handle_request(&shared(), 1, &payload, None).unwrap();
        let (h, resp) = decode_response_frame::<ApiVersionsResponse>(&handled.response, 0).unwrap();
        assert_eq!(h.correlation_id, 5);
        assert_eq!(resp.error_code, ErrorCode::UNSUPPORTED_VERSION);
        assert_eq!(
            resp.api_keys,
            vec![ApiVersion::new(kdp_wire::api::API_VERSIONS, 0, 4)]
        );
        // size + correlation id + error code + int32 count + one entry
        assert_eq!(handled.response.len(), 4 + 4 + 2 + 4 + 6);
    }

    #[test]
    fn metadata_all_topics_and_unknowns() {
        for v in 4..=12 {
            let resp = call(
                &MetadataRequest {
                    topics: None,
                    ..Default::default()
                },
                v,
            )
            .unwrap();
            assert_eq!(resp.brokers.len(), 2);
            assert_eq!(resp.brokers[0].port, 9001);
            assert_eq!(resp.brokers[0].rack.as_deref(), Some("r1"));
            assert_eq!(resp.controller_id, 1);
            assert_eq!(resp.topics.len(), 1);
            let t = &resp.topics[0];
            assert_eq!(t.partitions[0].leader_id, 1);
            assert_eq!(t.partitions[0].replica_nodes, vec![1, 2]);
            assert_eq!(t.partitions[1].error_code, ErrorCode::LEADER_NOT_AVAILABLE);
            assert_eq!(t.partitions[1].leader_id, -1);
            if v >= 7 {
                assert_eq!(t.partitions[0].leader_epoch, 4);
            }
            if v >= 10 {
                assert_ne!(t.topic_id, Uuid::ZERO);
            }
        }
        let named = |n: &str| MetadataRequestTopic {
            name: Some(n.into()),
            ..Default::default()
        };
        let resp = call(
            &MetadataRequest {
                topics: Some(vec![named("t"), named("nope"), named("t"), named("a/b")]),
                allow_auto_topic_creation: true,
                include_topic_authorized_operations: true,
                ..Default::default()
            },
            12,
        )
        .unwrap();
        let got: Vec<(Option<&str>, ErrorCode)> = resp
            .topics
            .iter()
            .map(|t| (t.name.as_deref(), t.error_code))
            .collect();
        assert_eq!(
            got,
            vec![
                (Some("t"), ErrorCode::NONE),
                (Some("nope"), ErrorCode::UNKNOWN_TOPIC_OR_PARTITION),
                (Some("a/b"), ErrorCode::INVALID_TOPIC_EXCEPTION)
            ]
        );
        assert_eq!(resp.topics[0].topic_authorized_operations, 3576);
        let empty = call(
            &MetadataRequest {
                topics: Some(vec![]),
                ..Default::default()
            },
            12,
        )
        .unwrap();
        assert!(empty.topics.is_empty());
        assert_eq!(empty.brokers.len(), 2);
    }

    #[test]
    fn metadata_by_topic_id() {
        let id = shared().read().topic("t").unwrap().topic_id;
        let by_id = |id| MetadataRequestTopic {
            topic_id: id,
            name: None,
            ..Default::default()
        };
        let resp = call(
            &MetadataRequest {
                topics: Some(vec![by_id(id), by_id(Uuid([9; 16]))]),
                ..Default::default()
            },
            12,
        )
        .unwrap();
        assert_eq!(resp.topics[0].name.as_deref(), Some("t"));
        assert_eq!(resp.topics[1].error_code, ErrorCode::UNKNOWN_TOPIC_ID);
        assert_eq!(resp.topics[1].name, None);
        // Before v12, a topic id is an invalid request: the connection closes.
        assert!(call(
            &MetadataRequest {
                topics: Some(vec![by_id(id)]),
                ..Default::default()
            },
            11
        )
        .is_err());
    }

    #[test]
    fn describe_producers_through_the_frame() {
        let resp: DescribeProducersResponse = call(
            &DescribeProducersRequest {
                topics: vec![kdp_wire::messages::TopicRequest {
                    name: "t".into(),
                    partition_indexes: vec![0, 1],
                    ..Default::default()
                }],
                ..Default::default()
            },
            0,
        )
        .unwrap();
        let codes: Vec<ErrorCode> = resp.topics[0]
            .partitions
            .iter()
            .map(|p| p.error_code)
            .collect();
        // Broker 1 hosts partition 0, not partition 1.
        assert_eq!(
            codes,
            vec![ErrorCode::NONE, ErrorCode::NOT_LEADER_OR_FOLLOWER]
        );
    }

    /// A key that counts how often it is compared.
    #[derive(Debug)]
    struct Counted(u32);

    impl std::hash::Hash for Counted {
        fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
            self.0.hash(state);
        }
    }

    static COMPARISONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

    impl PartialEq for Counted {
        fn eq(&self, other: &Self) -> bool {
            COMPARISONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            self.0 == other.0
        }
    }
    impl Eq for Counted {}

    #[test]
    fn seen_costs_about_one_comparison_per_item() {
        let n = 20_000u32;
        let mut seen = Seen::default();
        let mut firsts = 0;
        // Every item twice: n distinct ones, then each again.
        for i in (0..n).chain(0..n) {
            if seen.first_time(Counted(i)) {
                firsts += 1;
            }
        }
        assert_eq!(firsts, n);
        let comparisons = COMPARISONS.load(std::sync::atomic::Ordering::Relaxed);
        // A scan per item would make about n * n comparisons.
        assert!(
            comparisons <= 4 * u64::from(n),
            "{comparisons} comparisons for {} items",
            2 * n
        );
    }

    #[test]
    fn metadata_answers_a_huge_request_once_per_name_in_order() {
        let s = shared();
        let names: Vec<String> = (0..200_000).map(|i| format!("t{i}")).collect();
        let mut asked: Vec<MetadataRequestTopic> = names
            .iter()
            .map(|n| MetadataRequestTopic {
                name: Some(n.clone()),
                ..Default::default()
            })
            .collect();
        // Every name again, and the one real topic twice.
        asked.extend_from_slice(&asked.clone());
        for _ in 0..2 {
            asked.push(MetadataRequestTopic {
                name: Some("t".into()),
                ..Default::default()
            });
        }
        let req = MetadataRequest {
            topics: Some(asked),
            ..Default::default()
        };
        let resp = metadata_response(&s, &req, 12, crate::sasl::ANONYMOUS).unwrap();
        let got: Vec<&str> = resp
            .topics
            .iter()
            .map(|t| t.name.as_deref().unwrap_or(""))
            .collect();
        let mut expected: Vec<&str> = names.iter().map(String::as_str).collect();
        expected.push("t");
        assert_eq!(got, expected);
        assert_eq!(
            resp.topics.last().map(|t| t.error_code),
            Some(ErrorCode::NONE)
        );
    }

    fn describe_frame(topic: &str, partitions: Vec<i32>) -> Vec<u8> {
        let header = RequestHeader {
            request_api_key: api::DESCRIBE_PRODUCERS,
            request_api_version: 0,
            correlation_id: 31,
            client_id: Some("test".into()),
            ..Default::default()
        };
        let req = DescribeProducersRequest {
            topics: vec![kdp_wire::messages::TopicRequest {
                name: topic.into(),
                partition_indexes: partitions,
                ..Default::default()
            }],
            ..Default::default()
        };
        request_frame_to_vec(&header, &req)
    }

    #[test]
    fn describe_producers_answers_up_to_max_response_size_exactly() {
        // A topic error copied to every partition, and per-partition answers.
        for (topic, partitions) in [("a/b", vec![0; 3000]), ("t", [0, 1, 9].repeat(1000))] {
            let frame = describe_frame(topic, partitions);
            let mut s = shared();
            let full = handle_request(&s, 1, &frame[4..], None).unwrap().response;
            let size = full.len() - 4;
            s.max_response_size = size;
            let handled = handle_request(&s, 1, &frame[4..], None).unwrap();
            assert_eq!(handled.response, full);
            s.max_response_size = size - 1;
            let reject = handle_request(&s, 1, &frame[4..], None).unwrap_err();
            assert!(reject.0.contains("DescribeProducers v0"), "{reject}");
            assert!(reject.0.contains("correlation id 31"), "{reject}");
            assert!(
                reject
                    .0
                    .ends_with(&format!("above max.response.size {}", size - 1)),
                "{reject}"
            );
        }
    }

    #[test]
    fn every_answer_is_bounded() {
        let mut s = shared();
        s.max_response_size = 40;
        let header = RequestHeader {
            request_api_key: api::METADATA,
            request_api_version: 12,
            correlation_id: 4,
            ..Default::default()
        };
        let frame = request_frame_to_vec(&header, &MetadataRequest::default());
        let reject = handle_request(&s, 1, &frame[4..], None).unwrap_err();
        assert!(
            reject.0.contains("Metadata v12 (correlation id 4)"),
            "{reject}"
        );
        assert!(reject.0.contains("max.response.size 40"), "{reject}");
    }

    fn frame<R: Request>(req: &R, version: i16) -> Vec<u8> {
        let header = RequestHeader {
            request_api_key: R::API_KEY,
            request_api_version: version,
            correlation_id: 9,
            client_id: Some("test".into()),
            ..Default::default()
        };
        request_frame_to_vec(&header, req)
    }

    fn on<R: Request>(s: &Shared, broker: i32, req: &R, version: i16) -> R::Response {
        let handled = handle_request(s, broker, &frame(req, version)[4..], None).unwrap();
        decode_response_frame::<R::Response>(&handled.response, version)
            .unwrap()
            .1
    }

    #[test]
    fn a_marker_on_the_leader_changes_what_every_broker_reports() {
        use kdp_wire::messages::{
            ListOffsetsPartition, ListOffsetsTopic, TopicRequest, WritableTxnMarker,
            WritableTxnMarkerTopic,
        };
        let s = shared();
        s.write().partition_mut("t", 0).unwrap().producers.push(
            kdp_wire::messages::ProducerState {
                producer_id: 42,
                producer_epoch: 1,
                current_txn_start_offset: 7,
                ..Default::default()
            },
        );
        s.write().partition_mut("t", 0).unwrap().high_watermark = 10;
        let lso = |s: &Shared| {
            let req = ListOffsetsRequest {
                replica_id: -1,
                isolation_level: 1,
                topics: vec![ListOffsetsTopic {
                    name: "t".into(),
                    partitions: vec![ListOffsetsPartition {
                        partition_index: 0,
                        current_leader_epoch: -1,
                        timestamp: -1,
                        ..Default::default()
                    }],
                    ..Default::default()
                }],
                ..Default::default()
            };
            on(s, 1, &req, 10).topics[0].partitions[0].offset
        };
        assert_eq!(lso(&s), 7);
        let abort = WriteTxnMarkersRequest {
            markers: vec![WritableTxnMarker {
                producer_id: 42,
                producer_epoch: 1,
                topics: vec![WritableTxnMarkerTopic {
                    name: "t".into(),
                    partition_indexes: vec![0],
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        let resp = on(&s, 1, &abort, 1);
        assert_eq!(
            resp.markers[0].topics[0].partitions[0].error_code,
            ErrorCode::NONE
        );
        assert_eq!(lso(&s), 11);
        // The follower (broker 2) sees the transaction gone too.
        let dp = DescribeProducersRequest {
            topics: vec![TopicRequest {
                name: "t".into(),
                partition_indexes: vec![0],
                ..Default::default()
            }],
            ..Default::default()
        };
        let state = on(&s, 2, &dp, 0).topics[0].partitions[0]
            .active_producers
            .clone();
        assert_eq!(state.len(), 1);
        assert_eq!(state[0].current_txn_start_offset, -1);
    }

    #[test]
    fn a_marker_request_whose_answer_is_too_large_writes_nothing() {
        use kdp_wire::messages::{WritableTxnMarker, WritableTxnMarkerTopic};
        let req = WriteTxnMarkersRequest {
            markers: (0..1_000)
                .map(|i| WritableTxnMarker {
                    producer_id: 500 + i,
                    topics: vec![WritableTxnMarkerTopic {
                        name: "t".into(),
                        partition_indexes: vec![0],
                        ..Default::default()
                    }],
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let frame = frame(&req, 1);
        let mut s = shared();
        let full = handle_request(&s, 1, &frame[4..], None).unwrap().response;
        let size = full.len() - 4;
        assert_eq!(s.read().partition("t", 0).unwrap().producers.len(), 1_000);
        // One byte less: refused, and not one marker written.
        let mut small = shared();
        small.max_response_size = size - 1;
        let before = small.read().clone();
        let reject = handle_request(&small, 1, &frame[4..], None).unwrap_err();
        assert!(reject.0.contains("WriteTxnMarkers v1"), "{reject}");
        assert_eq!(*small.read(), before);
        // Exactly the size: answered.
        s = shared();
        s.max_response_size = size;
        assert_eq!(
            handle_request(&s, 1, &frame[4..], None).unwrap().response,
            full
        );
    }

    /// The size a refusal reports: what the broker had counted when it
    /// stopped.
    fn refused_at(reject: &Reject) -> usize {
        reject
            .0
            .split("at least ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{reject}"))
    }

    #[test]
    fn answers_that_grow_with_the_request_are_refused_near_the_limit() {
        let mut s = shared();
        let limit = 4096;
        s.max_response_size = limit;
        let names: Vec<String> = (0..10_000).map(|i| format!("topic-{i}")).collect();
        let requests: Vec<(&str, Vec<u8>)> = vec![
            (
                "ListOffsets",
                frame(
                    &ListOffsetsRequest {
                        topics: names
                            .iter()
                            .map(|n| ListOffsetsTopic {
                                name: n.clone(),
                                partitions: vec![ListOffsetsPartition::default()],
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    },
                    10,
                ),
            ),
            (
                "Metadata",
                frame(
                    &MetadataRequest {
                        topics: Some(
                            names
                                .iter()
                                .map(|n| MetadataRequestTopic {
                                    name: Some(n.clone()),
                                    ..Default::default()
                                })
                                .collect(),
                        ),
                        ..Default::default()
                    },
                    12,
                ),
            ),
            (
                "DescribeProducers",
                frame(
                    &DescribeProducersRequest {
                        topics: names
                            .iter()
                            .map(|n| TopicRequest {
                                name: n.clone(),
                                partition_indexes: vec![0],
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    },
                    0,
                ),
            ),
            (
                "DescribeTransactions",
                frame(
                    &DescribeTransactionsRequest {
                        transactional_ids: names.clone(),
                        ..Default::default()
                    },
                    0,
                ),
            ),
            (
                "DescribeConfigs",
                frame(
                    &DescribeConfigsRequest {
                        resources: names
                            .iter()
                            .map(|n| DescribeConfigsResource {
                                resource_type: 2,
                                resource_name: n.clone(),
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    },
                    4,
                ),
            ),
            (
                "FindCoordinator",
                frame(
                    &FindCoordinatorRequest {
                        coordinator_keys: names.clone(),
                        ..Default::default()
                    },
                    6,
                ),
            ),
            (
                "WriteTxnMarkers",
                frame(
                    &WriteTxnMarkersRequest {
                        markers: vec![WritableTxnMarker {
                            topics: names
                                .iter()
                                .map(|n| WritableTxnMarkerTopic {
                                    name: n.clone(),
                                    partition_indexes: vec![0],
                                    ..Default::default()
                                })
                                .collect(),
                            ..Default::default()
                        }],
                        ..Default::default()
                    },
                    1,
                ),
            ),
        ];
        for (name, frame) in requests {
            let reject = handle_request(&s, 1, &frame[4..], None).unwrap_err();
            assert!(reject.0.contains(name), "{reject}");
            // Stopped within about one entry of the limit: the whole
            // answer (10,000 entries, 150 KB or more) was not built.
            let at = refused_at(&reject);
            assert!(at > limit && at < limit + 256, "{name}: {reject}");
        }
    }

    #[test]
    fn find_coordinator_for_many_keys_is_refused_from_their_count() {
        let mut s = shared();
        s.max_response_size = 1 << 20;
        let req = FindCoordinatorRequest {
            key_type: 0,
            coordinator_keys: vec![String::new(); 500_000],
            ..Default::default()
        };
        let reject = handle_request(&s, 1, &frame(&req, 4)[4..], None).unwrap_err();
        assert!(reject.0.contains("FindCoordinator v4"), "{reject}");
        assert!(
            reject.0.ends_with("above max.response.size 1048576"),
            "{reject}"
        );
        // Refused at the first key over the limit: 14 bytes each, at least.
        assert!(refused_at(&reject) <= (1 << 20) + 64, "{reject}");
        // A few keys are answered.
        let few = FindCoordinatorRequest {
            coordinator_keys: vec![String::new(); 3],
            ..req
        };
        assert_eq!(on(&s, 1, &few, 4).coordinators.len(), 3);
    }

    fn expiring_shared(clock: Arc<crate::clock::ManualClock>) -> Shared {
        let cluster = Cluster::from_json_at(
            r#"{"brokers": [{"id": 1, "configs": {"transactional.id.expiration.ms": "60000"}}, {"id": 2}],
                "topics": [{"name": "t", "partitions": [{"partition": 0, "leader": 1, "replicas": [1]}]},
                           {"name": "__transaction_state", "partitions": [{"partition": 0, "leader": 1, "replicas": [1]}]}],
                "transactions": [
                    {"transactional_id": "open", "producer_id": 5, "state": "Ongoing",
                     "start_time": "now-30d", "last_update": "now-30d", "partitions": {"t": [0]}, "coordinator": 1},
                    {"transactional_id": "old", "producer_id": 6, "state": "CompleteCommit",
                     "last_update": "now-30d", "coordinator": 2},
                    {"transactional_id": "settled", "producer_id": 7, "state": "CompleteAbort", "coordinator": 1}
                ]}"#,
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(crate::clock::Clock::now_ms(&*clock) as u64),
        )
        .unwrap();
        Shared {
            cluster: RwLock::new(cluster),
            ..shared()
        }
        .with_clock(clock)
    }

    fn listed(s: &Shared, broker: i32) -> Vec<String> {
        on(s, broker, &ListTransactionsRequest::default(), 0)
            .transaction_states
            .into_iter()
            .map(|t| t.transactional_id)
            .collect()
    }

    #[test]
    fn transactional_ids_expire_as_their_coordinators_setting_says() {
        use crate::clock::ManualClock;
        use std::time::Duration;
        let clock = Arc::new(ManualClock::at(1_700_000_000_000));
        let s = expiring_shared(clock.clone());
        // The first request runs the cleanup: "old" (broker 2, Kafka's 7
        // days) has been idle 30 days; "open" has a transaction open.
        assert_eq!(listed(&s, 1), ["open", "settled"]);
        assert!(listed(&s, 2).is_empty());
        // Its removal is a tombstone in the log, at the time of the cleanup.
        let log = |s: &Shared| -> Vec<(i64, String, bool)> {
            crate::cluster::coordinator_log::testing::txn_log(&s.read(), 0)
                .into_iter()
                .map(|(_, at, _, e)| {
                    let removed = matches!(
                        e,
                        kdp_wire::coordinator::txn_log::TxnLogEntry::Tombstone { .. }
                    );
                    (at, e.transactional_id().to_string(), removed)
                })
                .collect()
        };
        let t0 = crate::clock::Clock::now_ms(&*clock);
        assert_eq!(log(&s), [(t0, "old".to_string(), true)]);
        // InitProducerId creates "fresh" on broker 1 (its setting: 1 minute).
        let init = InitProducerIdRequest {
            transactional_id: Some("fresh".into()),
            transaction_timeout_ms: 60_000,
            producer_id: -1,
            producer_epoch: -1,
            ..Default::default()
        };
        let first = on(&s, 1, &init, 4);
        assert_eq!(first.error_code, ErrorCode::NONE);
        let fresh_pid = first.producer_id;
        // Idle but not for a cleanup interval yet: the cleanup has not run again.
        clock.advance(Duration::from_secs(59 * 60));
        assert_eq!(listed(&s, 1), ["open", "settled", "fresh"]);
        // An hour after the last cleanup, it runs: both idle ids of broker 1
        // go, the open transaction stays however old it is.
        clock.advance(Duration::from_secs(60));
        assert_eq!(listed(&s, 1), ["open"]);
        // "fresh"'s InitProducerId, then both removals in one batch.
        let t1 = t0 + 3_600_000;
        assert_eq!(
            log(&s),
            [
                (t0, "old".to_string(), true),
                (t0, "fresh".to_string(), false),
                (t1, "settled".to_string(), true),
                (t1, "fresh".to_string(), true)
            ]
        );
        let batches = s
            .read()
            .partition("__transaction_state", 0)
            .unwrap()
            .log
            .batches()
            .len();
        assert_eq!(batches, 3);
        let describe = DescribeTransactionsRequest {
            transactional_ids: vec!["fresh".into(), "open".into()],
            ..Default::default()
        };
        let d = on(&s, 1, &describe, 0);
        assert_eq!(
            d.transaction_states
                .iter()
                .map(|t| t.error_code)
                .collect::<Vec<_>>(),
            [ErrorCode::TRANSACTIONAL_ID_NOT_FOUND, ErrorCode::NONE]
        );
        // Asked again, the id starts over with a new producer id.
        let again = on(&s, 1, &init, 4);
        assert_eq!(
            (again.error_code, again.producer_epoch),
            (ErrorCode::NONE, 0)
        );
        assert_ne!(again.producer_id, fresh_pid);
    }

    #[test]
    fn a_coordinator_that_scans_aborts_a_timed_out_transaction_at_the_next_request() {
        use crate::clock::ManualClock;
        use std::time::Duration;
        let clock = Arc::new(ManualClock::at(1_700_000_000_000));
        let now = crate::clock::Clock::now_ms(&*clock);
        let cluster = Cluster::from_json_at(
            r#"{"brokers": [{"id": 1, "configs": {
                    "transaction.abort.timed.out.transaction.cleanup.interval.ms": "10000"}}],
                "topics": [{"name": "t", "partitions": [{"partition": 0, "leader": 1, "replicas": [1],
                    "producers": [{"ProducerId": 5, "CurrentTxnStartOffset": 0}]}]},
                           {"name": "__transaction_state", "partitions": [{"partition": 0, "leader": 1, "replicas": [1]}]}],
                "transactions": [{"transactional_id": "slow", "producer_id": 5, "state": "Ongoing",
                    "timeout_ms": 15000, "start_time": "now", "partitions": {"t": [0]}}]}"#,
            std::time::UNIX_EPOCH + Duration::from_millis(now as u64),
        )
        .unwrap();
        let s = Shared {
            cluster: RwLock::new(cluster),
            ..shared()
        }
        .with_clock(clock.clone());
        let state = |s: &Shared| {
            let d = on(
                s,
                1,
                &DescribeTransactionsRequest {
                    transactional_ids: vec!["slow".into()],
                    ..Default::default()
                },
                0,
            );
            let t = &d.transaction_states[0];
            (t.transaction_state.clone(), t.producer_epoch)
        };
        // Scans at +10 s, +20 s, ...: the deadline (+15 s) is past at +20 s.
        assert_eq!(state(&s), ("Ongoing".to_string(), 0));
        clock.advance(Duration::from_secs(19));
        assert_eq!(state(&s), ("Ongoing".to_string(), 0));
        // No request between +19 s and +31 s: the scan due at +20 s, the
        // first after the deadline, runs at the next one, at its time.
        clock.advance(Duration::from_secs(12));
        assert_eq!(state(&s), ("CompleteAbort".to_string(), 1));
        let log = crate::cluster::coordinator_log::testing::txn_log(&s.read(), 0);
        let at: Vec<i64> = log.iter().map(|r| r.1).collect();
        assert_eq!(at, [now + 20_000, now + 20_000]);
        let lso = s.read().partition("t", 0).unwrap().last_stable_offset();
        assert_eq!(lso, s.read().partition("t", 0).unwrap().high_watermark);
    }

    #[test]
    fn a_used_transactional_id_does_not_expire() {
        use crate::clock::ManualClock;
        use std::time::Duration;
        let clock = Arc::new(ManualClock::at(1_700_000_000_000));
        let s = expiring_shared(clock.clone());
        let init = InitProducerIdRequest {
            transactional_id: Some("settled".into()),
            transaction_timeout_ms: 60_000,
            producer_id: -1,
            producer_epoch: -1,
            ..Default::default()
        };
        // Used every 50 s, for longer than its 1-minute expiration and the
        // cleanup interval: each use counts as an update.
        for _ in 0..100 {
            assert_eq!(on(&s, 1, &init, 4).error_code, ErrorCode::NONE);
            clock.advance(Duration::from_secs(50));
        }
        assert!(listed(&s, 1).contains(&"settled".to_string()));
    }

    #[test]
    fn find_coordinator_answers_with_the_advertised_address() {
        let s = shared();
        // No __transaction_state in this cluster.
        let req = FindCoordinatorRequest {
            key_type: 1,
            coordinator_keys: vec!["a".into()],
            ..Default::default()
        };
        let resp = on(&s, 1, &req, 6);
        assert_eq!(
            resp.coordinators[0].error_code,
            ErrorCode::COORDINATOR_NOT_AVAILABLE
        );
        let s = Shared {
            cluster: RwLock::new(
                Cluster::from_json(
                    r#"{"brokers": [{"id": 1}, {"id": 2}], "topics": [{"name": "__transaction_state",
                        "partitions": [{"partition": 0, "leader": 2, "replicas": [2]}]}]}"#,
                )
                .unwrap(),
            ),
            ..shared()
        };
        let resp = on(&s, 1, &req, 4);
        let c = &resp.coordinators[0];
        assert_eq!(
            (c.error_code, c.node_id, c.host.as_str(), c.port),
            (ErrorCode::NONE, 2, "127.0.0.1", 9002)
        );
        // An unknown key type closes the connection.
        let bad = FindCoordinatorRequest { key_type: 9, ..req };
        assert!(handle_request(&s, 1, &frame(&bad, 4)[4..], None).is_err());
    }

    #[test]
    fn rejects_what_it_does_not_serve() {
        let s = shared();
        // Produce v9
        let mut p = vec![0, 0, 0, 9, 0, 0, 0, 1, 0xff, 0xff, 0];
        assert!(handle_request(&s, 1, &p, None)
            .unwrap_err()
            .0
            .contains("Produce"));
        // DescribeProducers v1
        p[1] = 61;
        p[3] = 1;
        assert!(handle_request(&s, 1, &p, None).is_err());
        // Too short, truncated header, garbage body.
        assert!(handle_request(&s, 1, &[0, 61], None).is_err());
        assert!(handle_request(&s, 1, &[0, 61, 0, 0, 0, 0], None).is_err());
        assert!(
            handle_request(&s, 1, &[0, 61, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0, 7, 7], None).is_err()
        );
        // Trailing bytes after a valid empty request.
        assert!(handle_request(
            &s,
            1,
            &[0, 61, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0, 1, 0, 0],
            None
        )
        .is_err());
        assert!(
            handle_request(&s, 1, &[0, 61, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0, 1, 0], None).is_ok()
        );
    }

    #[test]
    fn a_principals_topic_acls_shape_metadata_and_describe_producers() {
        let s = Shared {
            cluster: RwLock::new(
                Cluster::from_json(
                    r#"{"brokers": [{"id": 1}],
                        "topics": [{"name": "t", "partitions": [{"partition": 0, "leader": 1, "replicas": [1]}]},
                                   {"name": "u", "partitions": [{"partition": 0, "leader": 1, "replicas": [1]}]}],
                        "acls": {"principals": {
                            "User:blind": {"topic_describe_deny": ["t"]},
                            "User:reader": {"topic_read_deny": ["t"]}}}}"#,
                )
                .unwrap(),
            ),
            ..shared()
        };
        let as_ = |principal: &str, frame: &[u8]| {
            handle_request_as(&s, 1, &frame[4..], None, principal.to_string())
                .unwrap()
                .response
        };
        let named = MetadataRequest {
            topics: Some(vec![MetadataRequestTopic {
                name: Some("t".into()),
                ..Default::default()
            }]),
            ..Default::default()
        };
        let all = MetadataRequest::default();
        let metadata = |principal: &str, req: &MetadataRequest| {
            let bytes = as_(principal, &frame(req, 12));
            decode_response_frame::<MetadataResponse>(&bytes, 12)
                .unwrap()
                .1
        };
        let codes = |r: MetadataResponse| -> Vec<(String, ErrorCode)> {
            r.topics
                .into_iter()
                .map(|t| (t.name.unwrap_or_default(), t.error_code))
                .collect()
        };
        let denied = ErrorCode::TOPIC_AUTHORIZATION_FAILED;
        assert_eq!(
            codes(metadata("User:blind", &named)),
            [("t".into(), denied)]
        );
        assert_eq!(
            codes(metadata("User:blind", &all)),
            [("u".into(), ErrorCode::NONE)]
        );
        for p in ["User:reader", "User:ANONYMOUS"] {
            assert_eq!(codes(metadata(p, &named)), [("t".into(), ErrorCode::NONE)]);
        }
        let dp = DescribeProducersRequest {
            topics: vec![kdp_wire::messages::TopicRequest {
                name: "t".into(),
                partition_indexes: vec![0],
                ..Default::default()
            }],
            ..Default::default()
        };
        let describe = |principal: &str| {
            let bytes = as_(principal, &frame(&dp, 0));
            decode_response_frame::<DescribeProducersResponse>(&bytes, 0)
                .unwrap()
                .1
                .topics[0]
                .partitions[0]
                .error_code
        };
        assert_eq!(describe("User:reader"), denied);
        assert_eq!(describe("User:ANONYMOUS"), ErrorCode::NONE);
        assert_eq!(describe("User:blind"), ErrorCode::NONE);
    }
}
