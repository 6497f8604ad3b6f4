//! ListOffsets (API key 2), versions 1-10; flexible from 6.
//!
//! kdp asks for the latest offset twice: READ_UNCOMMITTED gives the high
//! watermark, READ_COMMITTED the last stable offset (LSO). Kafka 4.0
//! removed v0.

use kdp_derive::kafka;

use crate::error_code::ErrorCode;

use crate::tagged::TaggedFields;

/// The Timestamp that asks for the latest offset.
pub const LATEST_TIMESTAMP: i64 = -1;
/// The Timestamp that asks for the earliest offset.
pub const EARLIEST_TIMESTAMP: i64 = -2;
/// IsolationLevel READ_UNCOMMITTED: the latest offset is the high watermark.
pub const READ_UNCOMMITTED: i8 = 0;
/// IsolationLevel READ_COMMITTED: the latest offset is the LSO.
pub const READ_COMMITTED: i8 = 1;

/// Asks partition leaders for offsets.
#[kafka(key = crate::api::LIST_OFFSETS, versions = "1-10", response = ListOffsetsResponse)]
pub struct ListOffsetsRequest {
    /// -1 for a client.
    #[kafka(default = "-1")]
    pub replica_id: i32,
    /// v2+: see `READ_UNCOMMITTED` and `READ_COMMITTED`.
    #[kafka(versions = "2+")]
    pub isolation_level: i8,
    /// The topics.
    pub topics: Vec<ListOffsetsTopic>,
    /// v10+: how long to wait for a remote-storage lookup.
    #[kafka(versions = "10+")]
    pub timeout_ms: i32,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic asked for.
#[kafka]
pub struct ListOffsetsTopic {
    /// The topic name.
    pub name: String,
    /// Its partitions.
    pub partitions: Vec<ListOffsetsPartition>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One partition asked for.
#[kafka]
pub struct ListOffsetsPartition {
    /// The partition index.
    pub partition_index: i32,
    /// v4+: the leader epoch the client knows, or -1.
    #[kafka(versions = "4+", default = "-1")]
    pub current_leader_epoch: i32,
    /// The timestamp to look up (see `LATEST_TIMESTAMP`).
    pub timestamp: i64,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The offsets found.
#[kafka(key = crate::api::LIST_OFFSETS, versions = "1-10")]
pub struct ListOffsetsResponse {
    /// v2+.
    #[kafka(versions = "2+")]
    pub throttle_time_ms: i32,
    /// The topics.
    pub topics: Vec<ListOffsetsTopicResponse>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic's answer.
#[kafka]
pub struct ListOffsetsTopicResponse {
    /// The topic name.
    pub name: String,
    /// Its partitions.
    pub partitions: Vec<ListOffsetsPartitionResponse>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One partition's answer.
#[kafka]
pub struct ListOffsetsPartitionResponse {
    /// The partition index.
    pub partition_index: i32,
    /// The partition's error code, 0 for none.
    pub error_code: ErrorCode,
    /// The timestamp of the offset found, or -1.
    #[kafka(default = "-1")]
    pub timestamp: i64,
    /// The offset found, or -1.
    #[kafka(default = "-1")]
    pub offset: i64,
    /// v4+: the leader epoch, or -1.
    #[kafka(versions = "4+", default = "-1")]
    pub leader_epoch: i32,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}
