//! DescribeShareGroupOffsets (API key 90), versions 0-1; flexible (KIP-932).
//!
//! Sent to each share group's coordinator: the share-partition start offset
//! of every partition the group has state for (null topics ask for all).
//! v1 (KIP-1226) adds the coordinator's own lag figure per partition, -1
//! where it has none. A group that is not a share group answers
//! GROUP_ID_NOT_FOUND.

use kdp_derive::kafka;

use crate::codec::Uuid;
use crate::error_code::ErrorCode;
use crate::tagged::TaggedFields;

/// Asks a coordinator for share groups' start offsets.
#[kafka(key = crate::api::DESCRIBE_SHARE_GROUP_OFFSETS, versions = "0-1", response = DescribeShareGroupOffsetsResponse)]
pub struct DescribeShareGroupOffsetsRequest {
    /// The groups.
    pub groups: Vec<DescribeShareGroupOffsetsRequestGroup>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One group asked for.
#[kafka]
pub struct DescribeShareGroupOffsetsRequestGroup {
    /// The group id.
    pub group_id: String,
    /// Its partitions, or null for every partition it has state for.
    #[kafka(default = "Some(Vec::new())")]
    pub topics: Option<Vec<DescribeShareGroupOffsetsRequestTopic>>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic asked for.
#[kafka]
pub struct DescribeShareGroupOffsetsRequestTopic {
    /// The topic name.
    pub topic_name: String,
    /// The partition indexes.
    pub partitions: Vec<i32>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The coordinator's answer, group by group.
#[kafka(key = crate::api::DESCRIBE_SHARE_GROUP_OFFSETS, versions = "0-1")]
pub struct DescribeShareGroupOffsetsResponse {
    /// How long the broker throttled this request.
    pub throttle_time_ms: i32,
    /// One entry per group asked for.
    pub groups: Vec<DescribeShareGroupOffsetsResponseGroup>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One group's start offsets.
#[kafka]
pub struct DescribeShareGroupOffsetsResponseGroup {
    /// The group id.
    pub group_id: String,
    /// Its topics.
    pub topics: Vec<DescribeShareGroupOffsetsResponseTopic>,
    /// The group's error code, 0 for none.
    pub error_code: ErrorCode,
    /// The error's text.
    #[kafka(default = "None")]
    pub error_message: Option<String>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic of a group.
#[kafka]
pub struct DescribeShareGroupOffsetsResponseTopic {
    /// The topic name.
    pub topic_name: String,
    /// The topic id.
    pub topic_id: Uuid,
    /// Its partitions.
    pub partitions: Vec<DescribeShareGroupOffsetsResponsePartition>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One share-partition.
#[kafka]
pub struct DescribeShareGroupOffsetsResponsePartition {
    /// The partition index.
    pub partition_index: i32,
    /// The share-partition start offset: every record below it is
    /// acknowledged or archived; -1 where the group has no state there.
    pub start_offset: i64,
    /// The leader epoch the start offset was recorded under.
    pub leader_epoch: i32,
    /// v1+: the coordinator's lag for the share-partition, -1 unknown.
    #[kafka(versions = "1+", default = "-1")]
    pub lag: i64,
    /// The partition's error code, 0 for none.
    pub error_code: ErrorCode,
    /// The error's text.
    #[kafka(default = "None")]
    pub error_message: Option<String>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}
