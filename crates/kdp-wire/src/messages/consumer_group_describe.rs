//! ConsumerGroupDescribe (API key 69), versions 0-1; flexible (KIP-848).
//!
//! Sent to each group's coordinator; describes consumer-protocol groups
//! (Kafka 4.0+). A classic group answers GROUP_ID_NOT_FOUND.

use kdp_derive::kafka;

use crate::codec::Uuid;
use crate::error_code::ErrorCode;
use crate::tagged::TaggedFields;

/// Describes consumer-protocol groups.
#[kafka(key = crate::api::CONSUMER_GROUP_DESCRIBE, versions = "0-1", response = ConsumerGroupDescribeResponse)]
pub struct ConsumerGroupDescribeRequest {
    /// The group ids.
    pub group_ids: Vec<String>,
    /// Whether to return the caller's authorized operations.
    pub include_authorized_operations: bool,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The coordinator's view of each group.
#[kafka(key = crate::api::CONSUMER_GROUP_DESCRIBE, versions = "0-1")]
pub struct ConsumerGroupDescribeResponse {
    /// How long the broker throttled this request.
    pub throttle_time_ms: i32,
    /// One entry per group asked for.
    pub groups: Vec<ConsumerDescribedGroup>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One described group (the schema's `DescribedGroup`).
#[kafka]
pub struct ConsumerDescribedGroup {
    /// The group's error code, 0 for none.
    pub error_code: ErrorCode,
    /// The error's text.
    #[kafka(default = "None")]
    pub error_message: Option<String>,
    /// The group id.
    pub group_id: String,
    /// The state, e.g. `Stable`, `Empty`, `Reconciling`.
    pub group_state: String,
    /// The group epoch.
    pub group_epoch: i32,
    /// The epoch of the target assignment.
    pub assignment_epoch: i32,
    /// The server-side assignor, e.g. `uniform`.
    pub assignor_name: String,
    /// The members.
    pub members: Vec<ConsumerGroupMember>,
    /// The caller's authorized operations as a bit field.
    #[kafka(default = "i32::MIN")]
    pub authorized_operations: i32,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One member (the schema's `Member`).
#[kafka]
pub struct ConsumerGroupMember {
    /// The member id.
    pub member_id: String,
    /// The static member's instance id.
    #[kafka(default = "None")]
    pub instance_id: Option<String>,
    /// The member's rack.
    #[kafka(default = "None")]
    pub rack_id: Option<String>,
    /// The member's epoch.
    pub member_epoch: i32,
    /// The member's client id.
    pub client_id: String,
    /// The member's host.
    pub client_host: String,
    /// The topics it subscribed to by name.
    pub subscribed_topic_names: Vec<String>,
    /// The regular expression it subscribed with.
    #[kafka(default = "None")]
    pub subscribed_topic_regex: Option<String>,
    /// Its current assignment.
    pub assignment: Assignment,
    /// The assignment it is moving to.
    pub target_assignment: Assignment,
    /// v1+: 0 for a classic-protocol member of this group, 1 for a consumer
    /// one, -1 unknown.
    #[kafka(versions = "1+", default = "-1")]
    pub member_type: i8,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// A member's partitions.
#[kafka]
pub struct Assignment {
    /// The partitions, topic by topic.
    pub topic_partitions: Vec<TopicPartitions>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The partitions of one topic in an assignment.
#[kafka]
pub struct TopicPartitions {
    /// The topic id.
    pub topic_id: Uuid,
    /// The topic name.
    pub topic_name: String,
    /// The partition indexes.
    pub partitions: Vec<i32>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}
