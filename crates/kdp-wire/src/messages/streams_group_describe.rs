//! StreamsGroupDescribe (API key 89), version 0; flexible (KIP-1071).
//!
//! Sent to each group's coordinator; describes the groups of Kafka
//! Streams applications that run with `group.protocol=streams` (Kafka 4.1+
//! brokers with `streams.version` finalized). A group of another type
//! answers GROUP_ID_NOT_FOUND. Version 1 (KIP-1331) adds the topology
//! description, which kdp does not ask for.

use kdp_derive::kafka;

use crate::error_code::ErrorCode;
use crate::nullable_struct::NullableStruct;
use crate::tagged::TaggedFields;

/// Describes streams groups.
#[kafka(key = crate::api::STREAMS_GROUP_DESCRIBE, versions = "0", response = StreamsGroupDescribeResponse)]
pub struct StreamsGroupDescribeRequest {
    /// The group ids.
    pub group_ids: Vec<String>,
    /// Whether to return the caller's authorized operations.
    pub include_authorized_operations: bool,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The coordinator's view of each group.
#[kafka(key = crate::api::STREAMS_GROUP_DESCRIBE, versions = "0")]
pub struct StreamsGroupDescribeResponse {
    /// How long the broker throttled this request.
    pub throttle_time_ms: i32,
    /// One entry per group asked for.
    pub groups: Vec<StreamsDescribedGroup>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One described group (the schema's `DescribedGroup`).
#[kafka]
pub struct StreamsDescribedGroup {
    /// The group's error code, 0 for none.
    pub error_code: ErrorCode,
    /// The error's text.
    #[kafka(default = "None")]
    pub error_message: Option<String>,
    /// The group id.
    pub group_id: String,
    /// The state, e.g. `Stable`, `Empty`, `NotReady`, `Assigning`, `Reconciling`.
    pub group_state: String,
    /// The group epoch.
    pub group_epoch: i32,
    /// The epoch of the target assignment.
    pub assignment_epoch: i32,
    /// The topology the group initialized; null on a describe error.
    pub topology: NullableStruct<StreamsTopology>,
    /// The members.
    pub members: Vec<StreamsGroupMember>,
    /// The caller's authorized operations as a bit field.
    #[kafka(default = "i32::MIN")]
    pub authorized_operations: i32,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The topology initialized for the group (the schema's `Topology`).
#[kafka]
pub struct StreamsTopology {
    /// The epoch of the topology.
    pub epoch: i32,
    /// Its subtopologies; null while uninitialized or when source topics
    /// are missing.
    #[kafka(default = "None")]
    pub subtopologies: Option<Vec<StreamsSubtopology>>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One subtopology (the schema's `Subtopology`).
#[kafka]
pub struct StreamsSubtopology {
    /// Its id.
    pub subtopology_id: String,
    /// The topics it reads.
    pub source_topics: Vec<String>,
    /// The repartition topics it writes.
    pub repartition_sink_topics: Vec<String>,
    /// Its state changelog topics.
    pub state_changelog_topics: Vec<StreamsTopicInfo>,
    /// Its internal repartition source topics.
    pub repartition_source_topics: Vec<StreamsTopicInfo>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// An internal topic (the schema's `TopicInfo`).
#[kafka]
pub struct StreamsTopicInfo {
    /// The topic name.
    pub name: String,
    /// Its partition count, 0 if not enforced.
    pub partitions: i32,
    /// Its replication factor, 0 for the default.
    pub replication_factor: i16,
    /// Topic configs.
    pub topic_configs: Vec<StreamsKeyValue>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// A key and a value (the schema's `KeyValue`).
#[kafka]
pub struct StreamsKeyValue {
    /// The key.
    pub key: String,
    /// The value.
    pub value: String,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One member: one Kafka Streams client (the schema's `Member`).
#[kafka]
pub struct StreamsGroupMember {
    /// The member id.
    pub member_id: String,
    /// The member's epoch.
    pub member_epoch: i32,
    /// The static member's instance id.
    #[kafka(default = "None")]
    pub instance_id: Option<String>,
    /// The member's rack.
    #[kafka(default = "None")]
    pub rack_id: Option<String>,
    /// The member's client id.
    pub client_id: String,
    /// The member's host.
    pub client_host: String,
    /// The topology epoch the client runs.
    pub topology_epoch: i32,
    /// The Kafka Streams instance (process) the client belongs to: the
    /// UUID Streams also writes into its transactional ids.
    pub process_id: String,
    /// The interactive-queries endpoint, if the application set one.
    pub user_endpoint: NullableStruct<StreamsEndpoint>,
    /// Client tags for rack-aware assignment.
    pub client_tags: Vec<StreamsKeyValue>,
    /// Cumulative changelog offsets per task.
    pub task_offsets: Vec<StreamsTaskOffset>,
    /// Cumulative changelog end offsets per task.
    pub task_end_offsets: Vec<StreamsTaskOffset>,
    /// Its current assignment.
    pub assignment: StreamsAssignment,
    /// The assignment it is moving to.
    pub target_assignment: StreamsAssignment,
    /// Whether it is a classic member not yet upgraded.
    pub is_classic: bool,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// A host and port (the schema's `Endpoint`).
#[kafka]
pub struct StreamsEndpoint {
    /// The host.
    pub host: String,
    /// The port.
    pub port: u16,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// An offset of one task (the schema's `TaskOffset`).
#[kafka]
pub struct StreamsTaskOffset {
    /// The subtopology.
    pub subtopology_id: String,
    /// The partition.
    pub partition: i32,
    /// The offset.
    pub offset: i64,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// A member's tasks (the schema's `Assignment`).
#[kafka]
pub struct StreamsAssignment {
    /// Active tasks.
    pub active_tasks: Vec<StreamsTaskIds>,
    /// Standby tasks.
    pub standby_tasks: Vec<StreamsTaskIds>,
    /// Warm-up tasks.
    pub warmup_tasks: Vec<StreamsTaskIds>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The tasks of one subtopology (the schema's `TaskIds`).
#[kafka]
pub struct StreamsTaskIds {
    /// The subtopology.
    pub subtopology_id: String,
    /// The partitions of its input topics, one task each.
    pub partitions: Vec<i32>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}
