//! Metadata (API key 3), versions 4-12; flexible from 9.
//!
//! kdp supports 4+ (AllowAutoTopicCreation exists from 4; Kafka 4.0 removed
//! 0-3), and stops at 12 (13 adds a top-level error code kdp does not need).

use bytes::BufMut;

use crate::api;
use crate::codec::{
    array_len_len_v, i32_array_len_v, nullable_string_len_v, string_len_v, tagged_fields_len,
    PutWire, Reader, Uuid,
};
use crate::error::{Context, DecodeError};
use crate::message::{Message, Request};
use crate::tagged::TaggedFields;

/// The "not requested" value of the authorized-operations bitfields.
pub const AUTHORIZED_OPERATIONS_OMITTED: i32 = i32::MIN;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataRequest {
    /// `None` asks for every topic.
    pub topics: Option<Vec<MetadataRequestTopic>>,
    pub allow_auto_topic_creation: bool,
    /// v8-10.
    pub include_cluster_authorized_operations: bool,
    /// v8+.
    pub include_topic_authorized_operations: bool,
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for MetadataRequest {
    fn default() -> Self {
        MetadataRequest {
            topics: None,
            allow_auto_topic_creation: true,
            include_cluster_authorized_operations: false,
            include_topic_authorized_operations: false,
            unknown_tagged_fields: TaggedFields::default(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetadataRequestTopic {
    /// v10+.
    pub topic_id: Uuid,
    /// Nullable from v10 (topics asked for by id).
    pub name: Option<String>,
    pub unknown_tagged_fields: TaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataResponse {
    pub throttle_time_ms: i32,
    pub brokers: Vec<MetadataResponseBroker>,
    pub cluster_id: Option<String>,
    pub controller_id: i32,
    pub topics: Vec<MetadataResponseTopic>,
    /// v8-10.
    pub cluster_authorized_operations: i32,
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for MetadataResponse {
    fn default() -> Self {
        MetadataResponse {
            throttle_time_ms: 0,
            brokers: Vec::new(),
            cluster_id: None,
            controller_id: -1,
            topics: Vec::new(),
            cluster_authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
            unknown_tagged_fields: TaggedFields::default(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetadataResponseBroker {
    pub node_id: i32,
    pub host: String,
    pub port: i32,
    pub rack: Option<String>,
    pub unknown_tagged_fields: TaggedFields,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataResponseTopic {
    pub error_code: i16,
    /// Nullable from v12 (unknown topics asked for by id).
    pub name: Option<String>,
    /// v10+.
    pub topic_id: Uuid,
    pub is_internal: bool,
    pub partitions: Vec<MetadataResponsePartition>,
    /// v8+.
    pub topic_authorized_operations: i32,
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for MetadataResponseTopic {
    fn default() -> Self {
        MetadataResponseTopic {
            error_code: 0,
            name: None,
            topic_id: Uuid::ZERO,
            is_internal: false,
            partitions: Vec::new(),
            topic_authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
            unknown_tagged_fields: TaggedFields::default(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataResponsePartition {
    pub error_code: i16,
    pub partition_index: i32,
    pub leader_id: i32,
    /// v7+.
    pub leader_epoch: i32,
    pub replica_nodes: Vec<i32>,
    pub isr_nodes: Vec<i32>,
    /// v5+.
    pub offline_replicas: Vec<i32>,
    pub unknown_tagged_fields: TaggedFields,
}

impl Default for MetadataResponsePartition {
    fn default() -> Self {
        MetadataResponsePartition {
            error_code: 0,
            partition_index: 0,
            leader_id: -1,
            leader_epoch: -1,
            replica_nodes: Vec::new(),
            isr_nodes: Vec::new(),
            offline_replicas: Vec::new(),
            unknown_tagged_fields: TaggedFields::default(),
        }
    }
}

fn tags_len(fields: &TaggedFields, flexible: bool) -> usize {
    if flexible {
        tagged_fields_len(fields)
    } else {
        0
    }
}

fn put_tags<B: BufMut>(buf: &mut B, fields: &TaggedFields, flexible: bool) {
    if flexible {
        buf.put_tagged_fields(fields);
    }
}

fn read_tags(r: &mut Reader<'_>, flexible: bool) -> Result<TaggedFields, DecodeError> {
    if flexible {
        r.tagged_fields()
    } else {
        Ok(TaggedFields::default())
    }
}

impl MetadataRequestTopic {
    fn encoded_len(&self, version: i16, flexible: bool) -> usize {
        (if version >= 10 { 16 } else { 0 })
            + nullable_string_len_v(self.name.as_deref(), flexible)
            + tags_len(&self.unknown_tagged_fields, flexible)
    }

    fn encode<B: BufMut>(&self, buf: &mut B, version: i16, flexible: bool) {
        if version >= 10 {
            buf.put_uuid(&self.topic_id);
        }
        buf.put_nullable_string_v(self.name.as_deref(), flexible);
        put_tags(buf, &self.unknown_tagged_fields, flexible);
    }

    fn decode(r: &mut Reader<'_>, version: i16, flexible: bool) -> Result<Self, DecodeError> {
        let topic_id = if version >= 10 {
            r.uuid().field("TopicId")?
        } else {
            Uuid::ZERO
        };
        let name = if version >= 10 {
            r.nullable_string_v(flexible).field("Name")?
        } else {
            Some(r.string_v(flexible).field("Name")?)
        };
        Ok(MetadataRequestTopic {
            topic_id,
            name,
            unknown_tagged_fields: read_tags(r, flexible)?,
        })
    }
}

impl Message for MetadataRequest {
    const NAME: &'static str = "MetadataRequest";
    const API_KEY: i16 = api::METADATA;
    const LOWEST_VERSION: i16 = 4;
    const HIGHEST_VERSION: i16 = 12;

    fn encoded_len(&self, version: i16) -> usize {
        let flexible = Self::is_flexible(version);
        array_len_len_v(self.topics.as_ref().map(Vec::len), flexible)
            + self.topics.as_ref().map_or(0, |ts| {
                ts.iter()
                    .map(|t| t.encoded_len(version, flexible))
                    .sum::<usize>()
            })
            + 1
            + if (8..=10).contains(&version) { 1 } else { 0 }
            + if version >= 8 { 1 } else { 0 }
            + tags_len(&self.unknown_tagged_fields, flexible)
    }

    fn encode<B: BufMut>(&self, buf: &mut B, version: i16) {
        let flexible = Self::is_flexible(version);
        buf.put_array_len_v(self.topics.as_ref().map(Vec::len), flexible);
        for t in self.topics.iter().flatten() {
            t.encode(buf, version, flexible);
        }
        buf.put_bool(self.allow_auto_topic_creation);
        if (8..=10).contains(&version) {
            buf.put_bool(self.include_cluster_authorized_operations);
        }
        if version >= 8 {
            buf.put_bool(self.include_topic_authorized_operations);
        }
        put_tags(buf, &self.unknown_tagged_fields, flexible);
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        Self::check_version(r, version)?;
        let flexible = Self::is_flexible(version);
        let topics = r
            .nullable_array_v(flexible, 2, |r| {
                MetadataRequestTopic::decode(r, version, flexible)
            })
            .field("Topics")?;
        let allow_auto_topic_creation = r.bool().field("AllowAutoTopicCreation")?;
        let include_cluster_authorized_operations = if (8..=10).contains(&version) {
            r.bool().field("IncludeClusterAuthorizedOperations")?
        } else {
            false
        };
        let include_topic_authorized_operations = if version >= 8 {
            r.bool().field("IncludeTopicAuthorizedOperations")?
        } else {
            false
        };
        Ok(MetadataRequest {
            topics,
            allow_auto_topic_creation,
            include_cluster_authorized_operations,
            include_topic_authorized_operations,
            unknown_tagged_fields: read_tags(r, flexible)?,
        })
    }
}

impl Request for MetadataRequest {
    type Response = MetadataResponse;
}

impl MetadataResponseBroker {
    fn encoded_len(&self, flexible: bool) -> usize {
        4 + string_len_v(&self.host, flexible)
            + 4
            + nullable_string_len_v(self.rack.as_deref(), flexible)
            + tags_len(&self.unknown_tagged_fields, flexible)
    }

    fn encode<B: BufMut>(&self, buf: &mut B, flexible: bool) {
        buf.put_i32(self.node_id);
        buf.put_string_v(&self.host, flexible);
        buf.put_i32(self.port);
        buf.put_nullable_string_v(self.rack.as_deref(), flexible);
        put_tags(buf, &self.unknown_tagged_fields, flexible);
    }

    fn decode(r: &mut Reader<'_>, flexible: bool) -> Result<Self, DecodeError> {
        Ok(MetadataResponseBroker {
            node_id: r.i32().field("NodeId")?,
            host: r.string_v(flexible).field("Host")?,
            port: r.i32().field("Port")?,
            rack: r.nullable_string_v(flexible).field("Rack")?,
            unknown_tagged_fields: read_tags(r, flexible)?,
        })
    }
}

impl MetadataResponsePartition {
    fn encoded_len(&self, version: i16, flexible: bool) -> usize {
        2 + 4
            + 4
            + if version >= 7 { 4 } else { 0 }
            + i32_array_len_v(&self.replica_nodes, flexible)
            + i32_array_len_v(&self.isr_nodes, flexible)
            + if version >= 5 {
                i32_array_len_v(&self.offline_replicas, flexible)
            } else {
                0
            }
            + tags_len(&self.unknown_tagged_fields, flexible)
    }

    fn encode<B: BufMut>(&self, buf: &mut B, version: i16, flexible: bool) {
        buf.put_i16(self.error_code);
        buf.put_i32(self.partition_index);
        buf.put_i32(self.leader_id);
        if version >= 7 {
            buf.put_i32(self.leader_epoch);
        }
        buf.put_i32_array_v(&self.replica_nodes, flexible);
        buf.put_i32_array_v(&self.isr_nodes, flexible);
        if version >= 5 {
            buf.put_i32_array_v(&self.offline_replicas, flexible);
        }
        put_tags(buf, &self.unknown_tagged_fields, flexible);
    }

    fn decode(r: &mut Reader<'_>, version: i16, flexible: bool) -> Result<Self, DecodeError> {
        Ok(MetadataResponsePartition {
            error_code: r.i16().field("ErrorCode")?,
            partition_index: r.i32().field("PartitionIndex")?,
            leader_id: r.i32().field("LeaderId")?,
            leader_epoch: if version >= 7 {
                r.i32().field("LeaderEpoch")?
            } else {
                -1
            },
            replica_nodes: r.i32_array_v(flexible).field("ReplicaNodes")?,
            isr_nodes: r.i32_array_v(flexible).field("IsrNodes")?,
            offline_replicas: if version >= 5 {
                r.i32_array_v(flexible).field("OfflineReplicas")?
            } else {
                Vec::new()
            },
            unknown_tagged_fields: read_tags(r, flexible)?,
        })
    }
}

impl MetadataResponseTopic {
    fn encoded_len(&self, version: i16, flexible: bool) -> usize {
        2 + nullable_string_len_v(self.name.as_deref(), flexible)
            + if version >= 10 { 16 } else { 0 }
            + 1
            + array_len_len_v(Some(self.partitions.len()), flexible)
            + self
                .partitions
                .iter()
                .map(|p| p.encoded_len(version, flexible))
                .sum::<usize>()
            + if version >= 8 { 4 } else { 0 }
            + tags_len(&self.unknown_tagged_fields, flexible)
    }

    fn encode<B: BufMut>(&self, buf: &mut B, version: i16, flexible: bool) {
        buf.put_i16(self.error_code);
        buf.put_nullable_string_v(self.name.as_deref(), flexible);
        if version >= 10 {
            buf.put_uuid(&self.topic_id);
        }
        buf.put_bool(self.is_internal);
        buf.put_array_len_v(Some(self.partitions.len()), flexible);
        for p in &self.partitions {
            p.encode(buf, version, flexible);
        }
        if version >= 8 {
            buf.put_i32(self.topic_authorized_operations);
        }
        put_tags(buf, &self.unknown_tagged_fields, flexible);
    }

    fn decode(r: &mut Reader<'_>, version: i16, flexible: bool) -> Result<Self, DecodeError> {
        let error_code = r.i16().field("ErrorCode")?;
        let name = if version >= 12 {
            r.nullable_string_v(flexible).field("Name")?
        } else {
            Some(r.string_v(flexible).field("Name")?)
        };
        let topic_id = if version >= 10 {
            r.uuid().field("TopicId")?
        } else {
            Uuid::ZERO
        };
        let is_internal = r.bool().field("IsInternal")?;
        let partitions = r
            .array_v(flexible, 10, |r| {
                MetadataResponsePartition::decode(r, version, flexible)
            })
            .field("Partitions")?;
        let topic_authorized_operations = if version >= 8 {
            r.i32().field("TopicAuthorizedOperations")?
        } else {
            AUTHORIZED_OPERATIONS_OMITTED
        };
        Ok(MetadataResponseTopic {
            error_code,
            name,
            topic_id,
            is_internal,
            partitions,
            topic_authorized_operations,
            unknown_tagged_fields: read_tags(r, flexible)?,
        })
    }
}

impl Message for MetadataResponse {
    const NAME: &'static str = "MetadataResponse";
    const API_KEY: i16 = api::METADATA;
    const LOWEST_VERSION: i16 = 4;
    const HIGHEST_VERSION: i16 = 12;

    fn encoded_len(&self, version: i16) -> usize {
        let flexible = Self::is_flexible(version);
        4 + array_len_len_v(Some(self.brokers.len()), flexible)
            + self
                .brokers
                .iter()
                .map(|b| b.encoded_len(flexible))
                .sum::<usize>()
            + nullable_string_len_v(self.cluster_id.as_deref(), flexible)
            + 4
            + array_len_len_v(Some(self.topics.len()), flexible)
            + self
                .topics
                .iter()
                .map(|t| t.encoded_len(version, flexible))
                .sum::<usize>()
            + if (8..=10).contains(&version) { 4 } else { 0 }
            + tags_len(&self.unknown_tagged_fields, flexible)
    }

    fn encode<B: BufMut>(&self, buf: &mut B, version: i16) {
        let flexible = Self::is_flexible(version);
        buf.put_i32(self.throttle_time_ms);
        buf.put_array_len_v(Some(self.brokers.len()), flexible);
        for b in &self.brokers {
            b.encode(buf, flexible);
        }
        buf.put_nullable_string_v(self.cluster_id.as_deref(), flexible);
        buf.put_i32(self.controller_id);
        buf.put_array_len_v(Some(self.topics.len()), flexible);
        for t in &self.topics {
            t.encode(buf, version, flexible);
        }
        if (8..=10).contains(&version) {
            buf.put_i32(self.cluster_authorized_operations);
        }
        put_tags(buf, &self.unknown_tagged_fields, flexible);
    }

    fn decode(r: &mut Reader<'_>, version: i16) -> Result<Self, DecodeError> {
        Self::check_version(r, version)?;
        let flexible = Self::is_flexible(version);
        let throttle_time_ms = r.i32().field("ThrottleTimeMs")?;
        let brokers = r
            .array_v(flexible, 10, |r| {
                MetadataResponseBroker::decode(r, flexible)
            })
            .field("Brokers")?;
        let cluster_id = r.nullable_string_v(flexible).field("ClusterId")?;
        let controller_id = r.i32().field("ControllerId")?;
        let topics = r
            .array_v(flexible, 4, |r| {
                MetadataResponseTopic::decode(r, version, flexible)
            })
            .field("Topics")?;
        let cluster_authorized_operations = if (8..=10).contains(&version) {
            r.i32().field("ClusterAuthorizedOperations")?
        } else {
            AUTHORIZED_OPERATIONS_OMITTED
        };
        Ok(MetadataResponse {
            throttle_time_ms,
            brokers,
            cluster_id,
            controller_id,
            topics,
            cluster_authorized_operations,
            unknown_tagged_fields: read_tags(r, flexible)?,
        })
    }
}
