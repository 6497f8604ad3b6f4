//! Metadata (API key 3), versions 4-12; flexible from 9.
//!
//! kdp supports 4+ (AllowAutoTopicCreation exists from 4; Kafka 4.0 removed
//! 0-3), and stops at 12 (13 adds a top-level error code kdp does not need).

use kdp_derive::kafka;

use crate::error_code::ErrorCode;

use crate::codec::Uuid;
use crate::tagged::TaggedFields;

/// The "not requested" value of the authorized-operations bitfields.
pub const AUTHORIZED_OPERATIONS_OMITTED: i32 = i32::MIN;

/// Asks for brokers and for the partitions of some topics or all of them.
#[kafka(key = crate::api::METADATA, versions = "4-12", response = MetadataResponse)]
pub struct MetadataRequest {
    /// `None` asks for every topic.
    pub topics: Option<Vec<MetadataRequestTopic>>,
    /// Whether a broker may create a topic asked for that does not exist.
    #[kafka(default = "true")]
    pub allow_auto_topic_creation: bool,
    /// v8-10.
    #[kafka(versions = "8-10")]
    pub include_cluster_authorized_operations: bool,
    /// v8+.
    #[kafka(versions = "8+")]
    pub include_topic_authorized_operations: bool,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic asked for.
#[kafka]
pub struct MetadataRequestTopic {
    /// v10+.
    #[kafka(versions = "10+")]
    pub topic_id: Uuid,
    /// Nullable from v10 (topics asked for by id).
    #[kafka(nullable = "10+")]
    pub name: Option<String>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The cluster's brokers and the asked topics' partitions.
#[kafka(key = crate::api::METADATA, versions = "4-12")]
pub struct MetadataResponse {
    /// How long the broker throttled this request.
    pub throttle_time_ms: i32,
    /// Every live broker.
    pub brokers: Vec<MetadataResponseBroker>,
    /// The cluster id, if the broker has one.
    #[kafka(default = "None")]
    pub cluster_id: Option<String>,
    /// The active controller, or -1.
    #[kafka(default = "-1")]
    pub controller_id: i32,
    /// The topics.
    pub topics: Vec<MetadataResponseTopic>,
    /// v8-10.
    #[kafka(versions = "8-10", default = "AUTHORIZED_OPERATIONS_OMITTED")]
    pub cluster_authorized_operations: i32,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One broker.
#[kafka]
pub struct MetadataResponseBroker {
    /// The broker id.
    pub node_id: i32,
    /// Its host name.
    pub host: String,
    /// Its port.
    pub port: i32,
    /// Its rack, if any.
    #[kafka(default = "None")]
    pub rack: Option<String>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic.
#[kafka]
pub struct MetadataResponseTopic {
    /// The topic's error code, 0 for none.
    pub error_code: ErrorCode,
    /// Nullable from v12 (unknown topics asked for by id).
    #[kafka(nullable = "12+")]
    pub name: Option<String>,
    /// v10+.
    #[kafka(versions = "10+")]
    pub topic_id: Uuid,
    /// Whether the topic is internal.
    #[kafka(default = "false")]
    pub is_internal: bool,
    /// Its partitions.
    pub partitions: Vec<MetadataResponsePartition>,
    /// v8+.
    #[kafka(versions = "8+", default = "AUTHORIZED_OPERATIONS_OMITTED")]
    pub topic_authorized_operations: i32,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One partition.
#[kafka]
pub struct MetadataResponsePartition {
    /// The partition's error code, 0 for none.
    pub error_code: ErrorCode,
    /// The partition index.
    pub partition_index: i32,
    /// The leader's broker id, or -1.
    #[kafka(default = "-1")]
    pub leader_id: i32,
    /// v7+.
    #[kafka(versions = "7+", default = "-1")]
    pub leader_epoch: i32,
    /// The replicas' broker ids.
    pub replica_nodes: Vec<i32>,
    /// The in-sync replicas' broker ids.
    pub isr_nodes: Vec<i32>,
    /// v5+.
    #[kafka(versions = "5+")]
    pub offline_replicas: Vec<i32>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}
