//! Metadata (`KafkaApis.handleTopicMetadataRequest`) over the cluster file.

use std::collections::HashSet;
use std::hash::Hash;

use kdp_wire::messages::{
    MetadataRequest, MetadataResponse, MetadataResponseBroker, MetadataResponsePartition,
    MetadataResponseTopic,
};
use kdp_wire::wire::Version;
use kdp_wire::ErrorCode;
use kdp_wire::Uuid;

use super::handler::Invalid;
use super::handler::{Call, Handler, Refusal};
use crate::acls::TopicOperation;
use crate::budget::Budget;
use crate::budget::TooLarge;
use crate::cluster::{is_internal_topic, validate_topic_name, Topic};
use crate::shared::Shared;

/// `TopicAuthorizedOperations` when everything is allowed: READ, WRITE,
/// CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS
/// (`AclEntry.supportedOperations(TOPIC)` as a bitfield of AclOperation codes).
pub const TOPIC_ALL_OPERATIONS: i32 =
    (1 << 3) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 10) | (1 << 11);
/// `ClusterAuthorizedOperations` when everything is allowed: CREATE, ALTER,
/// DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE.
pub const CLUSTER_ALL_OPERATIONS: i32 =
    (1 << 5) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12);

impl Handler for MetadataRequest {
    fn handle(&self, call: &Call<'_>) -> Result<MetadataResponse, Refusal> {
        metadata_within(
            call.shared,
            self,
            call.version,
            &call.caller.request.principal,
            &mut Budget::new(call.limit),
        )
    }
}

/// KafkaApis.handleTopicMetadataRequest over the cluster file, with
/// auto-creation disabled and every broker alive.
///
/// Topics `principal` may not DESCRIBE (the cluster file's ACLs) are left
/// out of an all-topics answer and answer TOPIC_AUTHORIZATION_FAILED when
/// named, as Kafka does. `Err`: the request is invalid (Kafka closes the
/// connection).
pub fn metadata_response(
    shared: &Shared,
    req: &MetadataRequest,
    version: i16,
    principal: &str,
) -> Result<MetadataResponse, Invalid> {
    match metadata_within(shared, req, version, principal, &mut Budget::unlimited()) {
        Ok(resp) => Ok(resp),
        Err(Refusal::Invalid(e)) => Err(e),
        // Nothing is larger than usize::MAX bytes.
        Err(Refusal::TooLarge(e)) => unreachable!("{e}"),
    }
}

/// As [`metadata_response`], within `budget`: each topic entry is charged
/// as it is built (names are answered once each, so the request's count is
/// no bound), and the answer is refused as soon as it is over.
pub fn metadata_within(
    shared: &Shared,
    req: &MetadataRequest,
    version: i16,
    principal: &str,
    budget: &mut Budget,
) -> Result<MetadataResponse, Refusal> {
    let v = Version::of::<MetadataResponse>(version);
    let cluster = &*shared.read();
    let may_describe = |name: &str| {
        cluster
            .acls
            .allows_topic(principal, TopicOperation::Describe, name)
    };
    let denied = |name: &str, topic_id: Uuid| MetadataResponseTopic {
        error_code: ErrorCode::TOPIC_AUTHORIZATION_FAILED,
        name: Some(name.to_string()),
        topic_id,
        is_internal: is_internal_topic(name),
        ..Default::default()
    };
    let mut topics = Vec::new();
    let mut put = |t: MetadataResponseTopic| -> Result<(), TooLarge> {
        budget.charge(&t, v)?;
        topics.push(t);
        Ok(())
    };
    match &req.topics {
        None => {
            for t in cluster.topics.iter().filter(|t| may_describe(&t.name)) {
                put(topic_metadata(t))?;
            }
        }
        Some(requested) => {
            // Topic names and ids are a set in Kafka: answer each once.
            let mut seen_names: Seen<&str> = Seen::default();
            let mut seen_ids: Seen<Uuid> = Seen::default();
            for t in requested {
                if version < 12 && t.name.is_none() {
                    return Err(Invalid(format!(
                        "Topic name can not be null for version {version}"
                    ))
                    .into());
                }
                if version < 12 && t.topic_id != Uuid::ZERO {
                    return Err(Invalid(format!(
                        "Topic IDs are not supported in requests for version {version}"
                    ))
                    .into());
                }
                if t.topic_id != Uuid::ZERO {
                    if !seen_ids.first_time(t.topic_id) {
                        continue;
                    }
                    match cluster.topic_by_id(t.topic_id) {
                        // Kafka does not name a topic the client may not see.
                        Some(topic) if !may_describe(&topic.name) => put(MetadataResponseTopic {
                            error_code: ErrorCode::TOPIC_AUTHORIZATION_FAILED,
                            name: None,
                            topic_id: t.topic_id,
                            ..Default::default()
                        })?,
                        Some(topic) => put(topic_metadata(topic))?,
                        None => put(MetadataResponseTopic {
                            error_code: ErrorCode::UNKNOWN_TOPIC_ID,
                            name: None,
                            topic_id: t.topic_id,
                            ..Default::default()
                        })?,
                    }
                    continue;
                }
                let Some(name) = t.name.as_deref() else {
                    // v12, neither a name nor an id: Kafka looks up a null name
                    // and finds nothing.
                    put(MetadataResponseTopic {
                        error_code: ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
                        ..Default::default()
                    })?;
                    continue;
                };
                if !seen_names.first_time(name) {
                    continue;
                }
                if !may_describe(name) {
                    // Before the existence check: names cannot be probed.
                    put(denied(name, Uuid::ZERO))?;
                    continue;
                }
                match cluster.topic(name) {
                    Some(topic) => put(topic_metadata(topic))?,
                    None => {
                        let error_code = if validate_topic_name(name).is_ok() {
                            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION
                        } else {
                            ErrorCode::INVALID_TOPIC_EXCEPTION
                        };
                        put(MetadataResponseTopic {
                            error_code,
                            name: Some(name.to_string()),
                            topic_id: Uuid::ZERO,
                            is_internal: is_internal_topic(name),
                            ..Default::default()
                        })?;
                    }
                }
            }
        }
    }
    if version >= 8 && req.include_topic_authorized_operations {
        for t in &mut topics {
            if t.error_code == ErrorCode::NONE {
                t.topic_authorized_operations = TOPIC_ALL_OPERATIONS;
            }
        }
    }
    let mut resp = MetadataResponse {
        throttle_time_ms: 0,
        brokers: shared
            .advertised
            .iter()
            .map(|a| MetadataResponseBroker {
                node_id: a.id,
                host: a.host.clone(),
                port: i32::from(a.port),
                rack: cluster.broker(a.id).and_then(|b| b.rack.clone()),
                unknown_tagged_fields: Default::default(),
            })
            .collect(),
        cluster_id: Some(cluster.cluster_id.clone()),
        controller_id: cluster.controller_id,
        topics,
        ..Default::default()
    };
    if (8..=10).contains(&version) && req.include_cluster_authorized_operations {
        resp.cluster_authorized_operations = CLUSTER_ALL_OPERATIONS;
    }
    Ok(resp)
}

/// What a request already named. A request may name tens of thousands of
/// topics, so this must not cost a scan per name.
pub(crate) struct Seen<T>(HashSet<T>);

impl<T> Default for Seen<T> {
    fn default() -> Self {
        Seen(HashSet::new())
    }
}

impl<T: Eq + Hash> Seen<T> {
    /// True the first time `item` is offered.
    pub(crate) fn first_time(&mut self, item: T) -> bool {
        self.0.insert(item)
    }
}

fn topic_metadata(t: &Topic) -> MetadataResponseTopic {
    MetadataResponseTopic {
        error_code: ErrorCode::NONE,
        name: Some(t.name.clone()),
        topic_id: t.topic_id,
        is_internal: t.internal,
        partitions: t
            .partitions
            .iter()
            .map(|p| MetadataResponsePartition {
                // KRaftMetadataCache.getPartitionMetadata: no live leader ->
                // LEADER_NOT_AVAILABLE with leader -1; every broker of the
                // file is alive, so no REPLICA_NOT_AVAILABLE.
                error_code: if p.leader < 0 {
                    ErrorCode::LEADER_NOT_AVAILABLE
                } else {
                    ErrorCode::NONE
                },
                partition_index: p.index,
                leader_id: p.leader.max(-1),
                leader_epoch: p.leader_epoch,
                replica_nodes: p.replicas.clone(),
                isr_nodes: p.isr.clone(),
                offline_replicas: p.offline_replicas.clone(),
                unknown_tagged_fields: Default::default(),
            })
            .collect(),
        ..Default::default()
    }
}
