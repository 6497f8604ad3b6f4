//! WriteTxnMarkers (API key 27), versions 1-2; flexible throughout.
//!
//! Sent to partition leaders: a coordinator ends transactions with it, and
//! `Admin.abortTransaction` aborts a hanging one. v2 (transaction protocol
//! v2, KIP-890) says which transaction version each marker belongs to.
//! Kafka 4.0 removed v0.

use kdp_derive::kafka;

use crate::error_code::ErrorCode;

use crate::tagged::TaggedFields;

/// Writes transaction markers.
#[kafka(key = crate::api::WRITE_TXN_MARKERS, versions = "1-2", response = WriteTxnMarkersResponse)]
pub struct WriteTxnMarkersRequest {
    /// The markers.
    pub markers: Vec<WritableTxnMarker>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One marker: a producer's transaction end on some partitions.
#[kafka]
pub struct WritableTxnMarker {
    /// The producer id.
    pub producer_id: i64,
    /// Its current epoch.
    pub producer_epoch: i16,
    /// false: abort, true: commit.
    pub transaction_result: bool,
    /// The partitions.
    pub topics: Vec<WritableTxnMarkerTopic>,
    /// The coordinator epoch of the transaction's state partition.
    pub coordinator_epoch: i32,
    /// v2+: 0/1 legacy, 2 transaction protocol v2.
    #[kafka(versions = "2+", default = "0")]
    pub transaction_version: i8,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The partitions of one topic a marker goes to.
#[kafka]
pub struct WritableTxnMarkerTopic {
    /// The topic name.
    pub name: String,
    /// The partition indexes.
    pub partition_indexes: Vec<i32>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The result of each marker.
#[kafka(key = crate::api::WRITE_TXN_MARKERS, versions = "1-2")]
pub struct WriteTxnMarkersResponse {
    /// One result per marker.
    pub markers: Vec<WritableTxnMarkerResult>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One marker's result.
#[kafka]
pub struct WritableTxnMarkerResult {
    /// The producer id.
    pub producer_id: i64,
    /// Per topic.
    pub topics: Vec<WritableTxnMarkerTopicResult>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One topic's results.
#[kafka]
pub struct WritableTxnMarkerTopicResult {
    /// The topic name.
    pub name: String,
    /// Per partition.
    pub partitions: Vec<WritableTxnMarkerPartitionResult>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One partition's result.
#[kafka]
pub struct WritableTxnMarkerPartitionResult {
    /// The partition index.
    pub partition_index: i32,
    /// Its error code, 0 for none.
    pub error_code: ErrorCode,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}
