//! OffsetFetch (API key 9), versions 1-9; flexible from 6.
//!
//! Sent to each group's coordinator. v1-7 ask for one group; v8+ (Kafka
//! 3.0+) batch groups. Null topics ask for every partition with an offset
//! (v2+). v7+ can ask for stable offsets only (UNSTABLE_OFFSET_COMMIT while
//! a transactional commit is pending). kdp stops at v9: v10 names topics by
//! id.

use kdp_derive::kafka;

use crate::error_code::ErrorCode;

use crate::tagged::TaggedFields;

/// Asks a coordinator for groups' committed offsets.
#[kafka(key = crate::api::OFFSET_FETCH, versions = "1-9", response = OffsetFetchResponse)]
pub struct OffsetFetchRequest {
    /// v1-7: the one group.
    #[kafka(versions = "0-7")]
    pub group_id: String,
    /// v1-7: its partitions, or (v2+) null for all.
    #[kafka(versions = "0-7", nullable = "2+", default = "Some(Vec::new())")]
    pub topics: Option<Vec<OffsetFetchRequestTopic>>,
    /// v8+: the groups.
    #[kafka(versions = "8+")]
    pub groups: Vec<OffsetFetchRequestGroup>,
    /// v7+: wait for pending transactional commits to end.
    #[kafka(versions = "7+")]
    pub require_stable: bool,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic asked for (v1-7).
#[kafka]
pub struct OffsetFetchRequestTopic {
    /// The topic name.
    pub name: String,
    /// The partition indexes.
    pub partition_indexes: Vec<i32>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One group asked for (v8+).
#[kafka]
pub struct OffsetFetchRequestGroup {
    /// The group id.
    pub group_id: String,
    /// v9+: the member id, when a consumer-protocol member asks.
    #[kafka(versions = "9+", default = "None")]
    pub member_id: Option<String>,
    /// v9+: that member's epoch, or -1.
    #[kafka(versions = "9+", default = "-1")]
    pub member_epoch: i32,
    /// Its partitions, or null for all.
    #[kafka(default = "Some(Vec::new())")]
    pub topics: Option<Vec<OffsetFetchRequestTopics>>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic asked for (v8+).
#[kafka]
pub struct OffsetFetchRequestTopics {
    /// The topic name.
    pub name: String,
    /// The partition indexes.
    pub partition_indexes: Vec<i32>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The committed offsets.
#[kafka(key = crate::api::OFFSET_FETCH, versions = "1-9")]
pub struct OffsetFetchResponse {
    /// v3+: how long the broker throttled this request.
    #[kafka(versions = "3+")]
    pub throttle_time_ms: i32,
    /// v1-7: the one group's topics.
    #[kafka(versions = "0-7")]
    pub topics: Vec<OffsetFetchResponseTopic>,
    /// v2-7: the one group's error code.
    #[kafka(versions = "2-7")]
    pub error_code: ErrorCode,
    /// v8+: one entry per group asked for.
    #[kafka(versions = "8+")]
    pub groups: Vec<OffsetFetchResponseGroup>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic's offsets (v1-7).
#[kafka]
pub struct OffsetFetchResponseTopic {
    /// The topic name.
    pub name: String,
    /// Its partitions.
    pub partitions: Vec<OffsetFetchResponsePartition>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One partition's committed offset (v1-7).
#[kafka]
pub struct OffsetFetchResponsePartition {
    /// The partition index.
    pub partition_index: i32,
    /// The committed offset, or -1 for none.
    pub committed_offset: i64,
    /// v5+: the leader epoch of the committed record, or -1.
    #[kafka(versions = "5+", default = "-1")]
    pub committed_leader_epoch: i32,
    /// The metadata committed with the offset.
    pub metadata: Option<String>,
    /// The partition's error code, 0 for none.
    pub error_code: ErrorCode,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One group's offsets (v8+).
#[kafka]
pub struct OffsetFetchResponseGroup {
    /// The group id.
    pub group_id: String,
    /// Its topics.
    pub topics: Vec<OffsetFetchResponseTopics>,
    /// The group's error code, 0 for none.
    pub error_code: ErrorCode,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic's offsets (v8+).
#[kafka]
pub struct OffsetFetchResponseTopics {
    /// The topic name.
    pub name: String,
    /// Its partitions.
    pub partitions: Vec<OffsetFetchResponsePartitions>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One partition's committed offset (v8+).
#[kafka]
pub struct OffsetFetchResponsePartitions {
    /// The partition index.
    pub partition_index: i32,
    /// The committed offset, or -1 for none.
    pub committed_offset: i64,
    /// The leader epoch of the committed record, or -1.
    #[kafka(default = "-1")]
    pub committed_leader_epoch: i32,
    /// The metadata committed with the offset.
    pub metadata: Option<String>,
    /// The partition's error code, 0 for none.
    pub error_code: ErrorCode,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}
