//! Fetch (API key 1), versions 4-18; flexible from 12; topics by id from 13.
//!
//! The versions Kafka 3.9 (v0-17) and 4.x (v4-17, v18 in later 4.x) brokers
//! serve from v4 on: v0-3 read the legacy message formats and Kafka 4.0
//! removed them (KIP-896). The records are kept as bytes; the `records`
//! module reads their batches. Tagged fields the schema names (ClusterId,
//! ReplicaState, ReplicaDirectoryId and HighWatermark of the request;
//! DivergingEpoch, CurrentLeader, SnapshotId and NodeEndpoints of the
//! response) are carried as unknown tagged fields, byte for byte.

use kdp_derive::kafka;

use crate::codec::Uuid;
use crate::error_code::ErrorCode;
use crate::tagged::TaggedFields;

/// Isolation level read_uncommitted: every record, aborted ones and
/// control batches included, up to the high watermark.
pub const READ_UNCOMMITTED: i8 = 0;
/// Isolation level read_committed: up to the last stable offset, with the
/// aborted transactions listed.
pub const READ_COMMITTED: i8 = 1;

/// Asks a partition leader for records.
#[kafka(key = crate::api::FETCH, versions = "4-18", response = FetchResponse)]
pub struct FetchRequest {
    /// v0-14: the follower's broker id, or -1 for a consumer.
    #[kafka(versions = "0-14", default = "-1")]
    pub replica_id: i32,
    /// The longest the broker may wait for MinBytes (ms).
    pub max_wait_ms: i32,
    /// The least bytes to answer with (0: answer at once).
    pub min_bytes: i32,
    /// v3+: the most bytes to answer with (KIP-74: at least one batch).
    #[kafka(versions = "3+", default = "0x7fffffff")]
    pub max_bytes: i32,
    /// v4+: [`READ_UNCOMMITTED`] or [`READ_COMMITTED`].
    #[kafka(versions = "4+", default = "0")]
    pub isolation_level: i8,
    /// v7+: the fetch session id (0: none).
    #[kafka(versions = "7+", default = "0")]
    pub session_id: i32,
    /// v7+: the fetch session epoch (-1: no session).
    #[kafka(versions = "7+", default = "-1")]
    pub session_epoch: i32,
    /// The topics to fetch.
    pub topics: Vec<FetchTopic>,
    /// v7+: partitions an incremental session drops.
    #[kafka(versions = "7+")]
    pub forgotten_topics_data: Vec<ForgottenTopic>,
    /// v11+: the consumer's rack.
    #[kafka(versions = "11+", default = "String::new()")]
    pub rack_id: String,
    /// Tagged fields (ClusterId, ReplicaState) kept as they came.
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic to fetch.
#[kafka]
pub struct FetchTopic {
    /// v0-12: the topic's name.
    #[kafka(versions = "0-12")]
    pub topic: String,
    /// v13+: the topic's id.
    #[kafka(versions = "13+")]
    pub topic_id: Uuid,
    /// Its partitions.
    pub partitions: Vec<FetchPartition>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One partition to fetch.
#[kafka]
pub struct FetchPartition {
    /// The partition index.
    pub partition: i32,
    /// v9+: the leader epoch the fetcher knows, or -1.
    #[kafka(versions = "9+", default = "-1")]
    pub current_leader_epoch: i32,
    /// The offset to read from.
    pub fetch_offset: i64,
    /// v12+: the epoch of the last record fetched, or -1.
    #[kafka(versions = "12+", default = "-1")]
    pub last_fetched_epoch: i32,
    /// v5+: a follower's log start offset (-1 for consumers).
    #[kafka(versions = "5+", default = "-1")]
    pub log_start_offset: i64,
    /// The most bytes to return for this partition.
    pub partition_max_bytes: i32,
    /// Tagged fields (ReplicaDirectoryId, HighWatermark) kept as they came.
    pub unknown_tagged_fields: TaggedFields,
}

/// Partitions an incremental fetch session drops (v7+).
#[kafka]
pub struct ForgottenTopic {
    /// v7-12: the topic's name.
    #[kafka(versions = "7-12")]
    pub topic: String,
    /// v13+: the topic's id.
    #[kafka(versions = "13+")]
    pub topic_id: Uuid,
    /// The partition indexes.
    pub partitions: Vec<i32>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// A leader's records.
#[kafka(key = crate::api::FETCH, versions = "4-18")]
pub struct FetchResponse {
    /// How long the broker throttled this request.
    pub throttle_time_ms: i32,
    /// v7+: a fetch session's error, 0 for none.
    #[kafka(versions = "7+")]
    pub error_code: ErrorCode,
    /// v7+: the fetch session id (0: none).
    #[kafka(versions = "7+", default = "0")]
    pub session_id: i32,
    /// One entry per topic.
    pub responses: Vec<FetchableTopicResponse>,
    /// Tagged fields (NodeEndpoints) kept as they came.
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic's partitions.
#[kafka]
pub struct FetchableTopicResponse {
    /// v0-12: the topic's name.
    #[kafka(versions = "0-12")]
    pub topic: String,
    /// v13+: the topic's id.
    #[kafka(versions = "13+")]
    pub topic_id: Uuid,
    /// Its partitions.
    pub partitions: Vec<FetchPartitionData>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One partition's answer (the schema's PartitionData).
#[kafka]
pub struct FetchPartitionData {
    /// The partition index.
    pub partition_index: i32,
    /// The partition's error code, 0 for none.
    pub error_code: ErrorCode,
    /// The high watermark.
    pub high_watermark: i64,
    /// v4+: the last stable offset, or -1.
    #[kafka(versions = "4+", default = "-1")]
    pub last_stable_offset: i64,
    /// v5+: the log start offset, or -1.
    #[kafka(versions = "5+", default = "-1")]
    pub log_start_offset: i64,
    /// v4+: for read_committed, the aborted transactions in the records
    /// returned (null for read_uncommitted).
    #[kafka(versions = "4+", default = "None")]
    pub aborted_transactions: Option<Vec<AbortedTransaction>>,
    /// v11+: the replica the consumer should fetch from, or -1.
    #[kafka(versions = "11+", default = "-1")]
    pub preferred_read_replica: i32,
    /// The record batches (see `kdp_wire::records`); the last may be cut
    /// short by the byte limits.
    pub records: Option<Vec<u8>>,
    /// Tagged fields (DivergingEpoch, CurrentLeader, SnapshotId) kept as
    /// they came.
    pub unknown_tagged_fields: TaggedFields,
}

/// A transaction aborted in the records returned (read_committed).
#[kafka]
pub struct AbortedTransaction {
    /// The producer id.
    pub producer_id: i64,
    /// The transaction's first offset.
    pub first_offset: i64,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}
