//! The broker side of DescribeProducers, without sockets: a request, a view
//! of the cluster from one broker, and an authorizer in; the response a Kafka
//! broker would send out.
//!
//! Mirrors Apache Kafka's `KafkaApis.handleDescribeProducersRequest` and
//! `ReplicaManager.activeProducerState` / `getPartitionOrError` (verified
//! against apache/kafka at 1eb7644, 4.0.0-SNAPSHOT):
//!
//! * Topics and partitions are answered one for one, in request order.
//!   Duplicates are not merged: `forEach` over the request's topics and
//!   their `PartitionIndexes` adds one response entry per occurrence.
//! * Per topic, first error wins: `Topic.validate` fails ->
//!   INVALID_TOPIC_EXCEPTION with the exception's text ("Topic name is
//!   invalid: ...", which differs from the code's default message, so
//!   `ApiError.fromThrowable` keeps it); READ on the topic denied ->
//!   TOPIC_AUTHORIZATION_FAILED (before the existence check, so names
//!   cannot be probed); topic not in the metadata -> UNKNOWN_TOPIC_OR_PARTITION.
//!   Both use `new ApiError(error)`, whose message is the code's default
//!   message, so the ErrorMessage is "Topic authorization failed." and
//!   "This server does not host this topic-partition." respectively.
//!   A topic error is copied to every requested partition of that topic.
//! * Per partition: hosted and online -> the replica's own producer state,
//!   leader or follower alike (no leader check); hosted but the log is
//!   offline -> KAFKA_STORAGE_ERROR; not hosted here but in the metadata ->
//!   NOT_LEADER_OR_FOLLOWER; else UNKNOWN_TOPIC_OR_PARTITION. These come
//!   from `activeProducerState`, which sets only the code: ErrorMessage
//!   stays null.
//! * ThrottleTimeMs is 0 (no quotas here).

use kdp_wire::messages::{
    DescribeProducersRequest, DescribeProducersResponse, PartitionResponse, ProducerState,
    TopicResponse,
};
use kdp_wire::ErrorCode;
use kdp_wire::Message;

pub use crate::budget::TooLarge;

use crate::acls::{ClusterOperation, TxnIdOperation};
use crate::cluster::{validate_topic_name, Cluster};

/// Who is asking (Kafka's `KafkaPrincipal` and the client's address).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestContext {
    /// `User:ANONYMOUS` on a PLAINTEXT listener.
    pub principal: String,
    /// The request header's `ClientId`.
    pub client_id: Option<String>,
    /// The peer's socket address, if there is one.
    pub client_address: Option<std::net::SocketAddr>,
}

impl Default for RequestContext {
    fn default() -> Self {
        RequestContext {
            principal: "User:ANONYMOUS".to_string(),
            client_id: None,
            client_address: None,
        }
    }
}

/// Decides what the client may do. READ on a topic is the only ACL
/// DescribeProducers checks; the others default to allowed (the cluster
/// file's `acls` are checked as well, by the mock).
pub trait Authorizer: Send + Sync {
    /// Whether `ctx` may READ `topic`; a denied topic's partitions answer
    /// TOPIC_AUTHORIZATION_FAILED.
    fn authorize_read_topic(&self, ctx: &RequestContext, topic: &str) -> bool;

    /// DESCRIBE on a topic (ListOffsets; DescribeTransactions drops the
    /// topics it denies).
    fn authorize_describe_topic(&self, _ctx: &RequestContext, _topic: &str) -> bool {
        true
    }

    /// DESCRIBE or WRITE on a transactional id.
    fn authorize_transactional_id(
        &self,
        _ctx: &RequestContext,
        _op: TxnIdOperation,
        _transactional_id: &str,
    ) -> bool {
        true
    }

    /// An operation on the cluster resource.
    fn authorize_cluster(&self, _ctx: &RequestContext, _op: ClusterOperation) -> bool {
        true
    }
}

/// No ACLs: everything is allowed (Kafka without an authorizer).
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl Authorizer for AllowAll {
    fn authorize_read_topic(&self, _ctx: &RequestContext, _topic: &str) -> bool {
        true
    }
}

impl<F> Authorizer for F
where
    F: Fn(&RequestContext, &str) -> bool + Send + Sync,
{
    fn authorize_read_topic(&self, ctx: &RequestContext, topic: &str) -> bool {
        self(ctx, topic)
    }
}

/// Where a partition stands on one broker (Kafka's `HostedPartition`, plus
/// the metadata check `getPartitionOrError` makes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hosted<'a> {
    /// This broker has a replica with an online log: its producer state.
    Online(&'a [ProducerState]),
    /// This broker has a replica whose log directory is offline.
    Offline,
    /// The partition exists, but this broker has no replica of it.
    NotHosted,
    /// The partition is not in the metadata.
    Unknown,
}

/// The cluster as one broker sees it.
pub trait BrokerView {
    /// Whether the topic is in the metadata (`metadataCache.contains(topic)`).
    fn contains_topic(&self, topic: &str) -> bool;
    /// Where `topic`-`partition` stands on this broker.
    fn hosted(&self, topic: &str, partition: i32) -> Hosted<'_>;
}

/// A cluster file's cluster, seen from one of its brokers.
#[derive(Debug, Clone, Copy)]
pub struct ClusterBroker<'a> {
    /// The cluster.
    pub cluster: &'a Cluster,
    /// The broker answering.
    pub broker_id: i32,
}

impl BrokerView for ClusterBroker<'_> {
    fn contains_topic(&self, topic: &str) -> bool {
        self.cluster.topic(topic).is_some()
    }

    fn hosted(&self, topic: &str, partition: i32) -> Hosted<'_> {
        match self.cluster.partition(topic, partition) {
            None => Hosted::Unknown,
            Some(p) if !p.is_replica(self.broker_id) => Hosted::NotHosted,
            Some(p) if p.is_offline_on(self.broker_id) => Hosted::Offline,
            Some(p) => Hosted::Online(p.producers_on(self.broker_id)),
        }
    }
}

/// Builds the response a Kafka broker would send for `request`, however
/// large. A server facing untrusted clients wants
/// [`describe_producers_within`].
pub fn describe_producers(
    request: &DescribeProducersRequest,
    view: &impl BrokerView,
    authorizer: &dyn Authorizer,
    ctx: &RequestContext,
) -> DescribeProducersResponse {
    match describe_producers_within(
        request,
        view,
        authorizer,
        ctx,
        DescribeProducersResponse::LOWEST_VERSION,
        usize::MAX,
    ) {
        Ok(resp) => resp,
        // Nothing encodes to more than usize::MAX bytes.
        Err(too_large) => unreachable!("{too_large}"),
    }
}

/// As [`describe_producers`], but gives up as soon as the response body at
/// `version` is known to encode to more than `limit` bytes, before building
/// the rest of it. Memory stays within about `limit` plus one partition's
/// producer state, whatever the request: a small request can otherwise ask
/// for a long invalid topic name's error message once per partition, or for
/// a big partition's state many times over.
pub fn describe_producers_within(
    request: &DescribeProducersRequest,
    view: &impl BrokerView,
    authorizer: &dyn Authorizer,
    ctx: &RequestContext,
    version: i16,
    limit: usize,
) -> Result<DescribeProducersResponse, TooLarge> {
    // Each topic and partition named is answered once: refused from the
    // counts alone when even the smallest entries cannot fit.
    let v = kdp_wire::wire::Version::of::<DescribeProducersResponse>(version);
    let (topic, partition) = (
        <TopicResponse as kdp_wire::wire::Wire>::min_len(v),
        <PartitionResponse as kdp_wire::wire::Wire>::min_len(v),
    );
    crate::budget::Budget::new(limit).precheck_each(request.topics.iter().map(|t| {
        topic
            .saturating_add(t.name.len())
            .saturating_add(t.partition_indexes.len().saturating_mul(partition))
    }))?;
    let mut meter = Meter::new(version, limit);
    let mut topics = Vec::with_capacity(request.topics.len().min(1024));
    for t in &request.topics {
        let topic_error: Option<(ErrorCode, String)> = match validate_topic_name(&t.name) {
            Err(reason) => Some((ErrorCode::INVALID_TOPIC_EXCEPTION, reason)),
            Ok(()) if !authorizer.authorize_read_topic(ctx, &t.name) => {
                Some(with_default(ErrorCode::TOPIC_AUTHORIZATION_FAILED))
            }
            Ok(()) if !view.contains_topic(&t.name) => {
                Some(with_default(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION))
            }
            Ok(()) => None,
        };
        let topic = meter.topic(TopicResponse {
            name: t.name.clone(),
            partitions: Vec::new(),
            unknown_tagged_fields: Default::default(),
        })?;
        let partitions = match topic_error {
            // Every partition gets the same answer but its index (a fixed
            // width field): measure one, and build them only if all fit.
            Some((code, message)) => {
                let one = |partition_index| PartitionResponse {
                    partition_index,
                    error_code: code,
                    error_message: Some(message.clone()),
                    active_producers: Vec::new(),
                    unknown_tagged_fields: Default::default(),
                };
                let (_, each) = meter.measure_partition(one(0));
                meter.add(each.saturating_mul(t.partition_indexes.len()))?;
                t.partition_indexes.iter().map(|&i| one(i)).collect()
            }
            None => {
                let mut partitions = Vec::with_capacity(t.partition_indexes.len().min(1024));
                for &index in &t.partition_indexes {
                    let (p, size) = meter
                        .measure_partition(partition_response(index, view.hosted(&t.name, index)));
                    meter.add(size)?;
                    partitions.push(p);
                }
                partitions
            }
        };
        topics.push(TopicResponse {
            partitions,
            ..topic
        });
    }
    Ok(DescribeProducersResponse {
        throttle_time_ms: 0,
        topics,
        unknown_tagged_fields: Default::default(),
    })
}

/// Running size of a response being built, measured with the codec's own
/// size function (the only one it exports is a whole message's), by
/// difference against a scratch message. Array counts are varints that
/// grow with the count; they are counted at one byte each, so the total is
/// a lower bound, exact up to a few bytes per array: it can only refuse
/// answers that are certainly too large. The exact check is the caller's,
/// on the finished message.
struct Meter {
    version: i16,
    limit: usize,
    total: usize,
    /// No topics; one is put in to be measured.
    bare: DescribeProducersResponse,
    /// One topic with an empty name and no partitions; one is put in to be
    /// measured.
    holder: DescribeProducersResponse,
    empty: usize,
    one_empty_topic: usize,
}

impl Meter {
    fn new(version: i16, limit: usize) -> Meter {
        let bare = DescribeProducersResponse::default();
        let holder = DescribeProducersResponse {
            topics: vec![TopicResponse::default()],
            ..Default::default()
        };
        let empty = bare.encoded_len(version);
        let one_empty_topic = holder.encoded_len(version);
        Meter {
            version,
            limit,
            total: empty,
            bare,
            holder,
            empty,
            one_empty_topic,
        }
    }

    fn add(&mut self, bytes: usize) -> Result<(), TooLarge> {
        self.total = self.total.saturating_add(bytes);
        if self.total > self.limit {
            return Err(TooLarge {
                at_least: self.total,
                limit: self.limit,
            });
        }
        Ok(())
    }

    /// Counts a topic without partitions.
    fn topic(&mut self, topic: TopicResponse) -> Result<TopicResponse, TooLarge> {
        self.bare.topics.push(topic);
        let size = self.bare.encoded_len(self.version) - self.empty;
        let topic = self.bare.topics.pop().unwrap_or_default();
        self.add(size)?;
        Ok(topic)
    }

    /// The encoded size of one partition entry (not yet counted).
    fn measure_partition(&mut self, p: PartitionResponse) -> (PartitionResponse, usize) {
        let Some(slot) = self.holder.topics.first_mut() else {
            return (p, 0);
        };
        slot.partitions.push(p);
        let size = self.holder.encoded_len(self.version) - self.one_empty_topic;
        let p = self
            .holder
            .topics
            .first_mut()
            .and_then(|slot| slot.partitions.pop())
            .unwrap_or_default();
        (p, size)
    }
}

/// `new ApiError(error)`: the code with its default message.
fn with_default(code: ErrorCode) -> (ErrorCode, String) {
    (code, code.message().unwrap_or_default().to_string())
}

fn partition_response(index: i32, hosted: Hosted<'_>) -> PartitionResponse {
    let (error_code, active_producers) = match hosted {
        Hosted::Online(state) => (ErrorCode::NONE, state.to_vec()),
        Hosted::Offline => (ErrorCode::KAFKA_STORAGE_ERROR, Vec::new()),
        Hosted::NotHosted => (ErrorCode::NOT_LEADER_OR_FOLLOWER, Vec::new()),
        Hosted::Unknown => (ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, Vec::new()),
    };
    PartitionResponse {
        partition_index: index,
        error_code,
        error_message: None,
        active_producers,
        unknown_tagged_fields: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kdp_wire::messages::TopicRequest;

    const CLUSTER: &str = r#"{
        "brokers": [{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4}],
        "topics": [
            {"name": "orders", "partitions": [
                {"partition": 0, "leader": 1, "replicas": [1, 2, 3],
                 "producers": [
                    {"ProducerId": 0, "ProducerEpoch": 12, "LastSequence": 0, "LastTimestamp": 0,
                     "CoordinatorEpoch": 12, "CurrentTxnStartOffset": 150382},
                    {"ProducerId": 5, "ProducerEpoch": 1, "LastSequence": 41, "LastTimestamp": 1000}
                 ],
                 "replica_producers": {"3": [{"ProducerId": 0, "ProducerEpoch": 11}]}},
                {"partition": 1, "leader": 2, "replicas": [2, 3, 1], "offline_replicas": [3]}
            ]},
            {"name": "secret", "partitions": [{"partition": 0, "leader": 1, "replicas": [1]}]}
        ]
    }"#;

    fn cluster() -> Cluster {
        Cluster::from_json(CLUSTER).unwrap()
    }

    fn request(topics: &[(&str, &[i32])]) -> DescribeProducersRequest {
        DescribeProducersRequest {
            topics: topics
                .iter()
                .map(|(name, parts)| TopicRequest {
                    name: name.to_string(),
                    partition_indexes: parts.to_vec(),
                    unknown_tagged_fields: Default::default(),
                })
                .collect(),
            unknown_tagged_fields: Default::default(),
        }
    }

    fn ask(broker: i32, topics: &[(&str, &[i32])]) -> DescribeProducersResponse {
        let c = cluster();
        describe_producers(
            &request(topics),
            &ClusterBroker {
                cluster: &c,
                broker_id: broker,
            },
            &AllowAll,
            &RequestContext::default(),
        )
    }

    fn one(broker: i32, topic: &str, partition: i32) -> PartitionResponse {
        let r = ask(broker, &[(topic, &[partition])]);
        assert_eq!(r.topics.len(), 1);
        assert_eq!(r.topics[0].name, topic);
        assert_eq!(r.topics[0].partitions.len(), 1);
        r.topics[0].partitions[0].clone()
    }

    #[test]
    fn leader_answers_with_its_state() {
        let p = one(1, "orders", 0);
        assert_eq!(p.partition_index, 0);
        assert_eq!(p.error_code, ErrorCode::NONE);
        assert_eq!(p.error_message, None);
        assert_eq!(p.active_producers.len(), 2);
        let seed = &p.active_producers[0];
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
    }

    #[test]
    fn followers_answer_from_their_own_state() {
        // Broker 2 is a follower without an override: the partition's state.
        assert_eq!(
            one(2, "orders", 0).active_producers,
            one(1, "orders", 0).active_producers
        );
        // Broker 3 diverged: its own state, no leader check.
        let p = one(3, "orders", 0);
        assert_eq!(p.error_code, ErrorCode::NONE);
        assert_eq!(p.active_producers.len(), 1);
        assert_eq!(p.active_producers[0].producer_epoch, 11);
        // A follower of a partition with no producers.
        let p = one(1, "orders", 1);
        assert_eq!(
            (p.error_code, p.active_producers.len()),
            (ErrorCode::NONE, 0)
        );
    }

    #[test]
    fn not_hosted_is_not_leader_or_follower_without_message() {
        let p = one(4, "orders", 0);
        assert_eq!(p.error_code, ErrorCode::NOT_LEADER_OR_FOLLOWER);
        assert_eq!(p.error_message, None);
        assert!(p.active_producers.is_empty());
    }

    #[test]
    fn offline_log_is_storage_error_without_message() {
        let p = one(3, "orders", 1);
        assert_eq!(p.error_code, ErrorCode::KAFKA_STORAGE_ERROR);
        assert_eq!(p.error_message, None);
        // The other replicas of that partition still answer.
        assert_eq!(one(2, "orders", 1).error_code, ErrorCode::NONE);
    }

    #[test]
    fn partition_not_in_metadata_is_unknown_without_message() {
        for idx in [2, 99, -1] {
            let p = one(1, "orders", idx);
            assert_eq!(p.partition_index, idx);
            assert_eq!(p.error_code, ErrorCode::UNKNOWN_TOPIC_OR_PARTITION);
            assert_eq!(p.error_message, None);
        }
    }

    #[test]
    fn unknown_topic_is_a_topic_error_with_default_message() {
        let r = ask(1, &[("nope", &[0, 1])]);
        assert_eq!(r.topics[0].partitions.len(), 2);
        for (p, idx) in r.topics[0].partitions.iter().zip([0, 1]) {
            assert_eq!(p.partition_index, idx);
            assert_eq!(p.error_code, ErrorCode::UNKNOWN_TOPIC_OR_PARTITION);
            assert_eq!(
                p.error_message.as_deref(),
                Some("This server does not host this topic-partition.")
            );
        }
    }

    #[test]
    fn invalid_topic_carries_the_validation_text() {
        for (name, text) in [
            ("", "Topic name is invalid: the empty string is not allowed"),
            (".", "Topic name is invalid: '.' is not allowed"),
            ("..", "Topic name is invalid: '..' is not allowed"),
            (
                "or/ders",
                "Topic name is invalid: 'or/ders' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'",
            ),
        ] {
            let p = one(1, name, 0);
            assert_eq!(p.error_code, ErrorCode::INVALID_TOPIC_EXCEPTION, "{name:?}");
            assert_eq!(p.error_message.as_deref(), Some(text));
        }
        let long = "x".repeat(250);
        let p = one(1, &long, 0);
        assert_eq!(p.error_code, ErrorCode::INVALID_TOPIC_EXCEPTION);
        assert!(p
            .error_message
            .unwrap()
            .ends_with("longer than the max allowed length 249"));
    }

    #[test]
    fn authorization_is_checked_before_existence() {
        let c = cluster();
        let deny_secret_and_ghost =
            |_: &RequestContext, topic: &str| topic != "secret" && topic != "ghost";
        let r = describe_producers(
            &request(&[
                ("secret", &[0]),
                ("ghost", &[0]),
                ("orders", &[0]),
                ("bad name", &[0]),
            ]),
            &ClusterBroker {
                cluster: &c,
                broker_id: 1,
            },
            &deny_secret_and_ghost,
            &RequestContext::default(),
        );
        let codes: Vec<(ErrorCode, Option<&str>)> = r
            .topics
            .iter()
            .map(|t| {
                (
                    t.partitions[0].error_code,
                    t.partitions[0].error_message.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            codes[0],
            (
                ErrorCode::TOPIC_AUTHORIZATION_FAILED,
                Some("Topic authorization failed.")
            )
        );
        // A topic that does not exist and is denied: still an authorization
        // failure, so the client learns nothing about its existence.
        assert_eq!(
            codes[1],
            (
                ErrorCode::TOPIC_AUTHORIZATION_FAILED,
                Some("Topic authorization failed.")
            )
        );
        assert_eq!(codes[2], (ErrorCode::NONE, None));
        // Validity is checked before authorization.
        assert_eq!(codes[3].0, ErrorCode::INVALID_TOPIC_EXCEPTION);
    }

    #[test]
    fn duplicates_are_answered_one_for_one_in_order() {
        let r = ask(
            1,
            &[("orders", &[1, 0, 1]), ("nope", &[]), ("orders", &[0])],
        );
        let shape: Vec<(&str, Vec<i32>)> = r
            .topics
            .iter()
            .map(|t| {
                (
                    t.name.as_str(),
                    t.partitions.iter().map(|p| p.partition_index).collect(),
                )
            })
            .collect();
        assert_eq!(
            shape,
            vec![
                ("orders", vec![1, 0, 1]),
                ("nope", vec![]),
                ("orders", vec![0])
            ]
        );
        assert_eq!(r.topics[0].partitions[0], r.topics[0].partitions[2]);
        assert_eq!(r.throttle_time_ms, 0);
    }

    #[test]
    fn within_a_limit_the_answer_is_the_same_and_above_it_nothing() {
        let c = cluster();
        let view = ClusterBroker {
            cluster: &c,
            broker_id: 1,
        };
        let long = "x".repeat(300);
        let req = request(&[
            ("orders", &[0, 1, 0, 7]),
            (&long, &[0, 1, 2, 3, 4, 5]),
            ("nope", &[1]),
        ]);
        let ctx = RequestContext::default();
        let full = describe_producers(&req, &view, &AllowAll, &ctx);
        let size = full.encoded_len(0);
        let within = |limit| describe_producers_within(&req, &view, &AllowAll, &ctx, 0, limit);
        assert_eq!(within(size), Ok(full));
        let err = within(size - 1).unwrap_err();
        assert_eq!(err.limit, size - 1);
        assert!(err.at_least > size - 1 && err.at_least <= size, "{err}");
        // Refused on the invalid topic, before its six messages exist.
        let err = within(size / 2).unwrap_err();
        assert!(err.at_least < size, "{err}");
    }

    #[test]
    fn empty_request_gets_empty_response() {
        let r = ask(1, &[]);
        assert!(r.topics.is_empty());
    }
}
