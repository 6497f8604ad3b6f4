//! DescribeTransactions (API key 65), version 0; flexible.
//!
//! Sent to the coordinator of each transactional id.

use kdp_derive::kafka;

use crate::error_code::ErrorCode;

use crate::tagged::TaggedFields;

/// Describes transactional ids.
#[kafka(key = crate::api::DESCRIBE_TRANSACTIONS, versions = "0", response = DescribeTransactionsResponse)]
pub struct DescribeTransactionsRequest {
    /// The transactional ids.
    pub transactional_ids: Vec<String>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The coordinator's view of each id.
#[kafka(key = crate::api::DESCRIBE_TRANSACTIONS, versions = "0")]
pub struct DescribeTransactionsResponse {
    /// How long the broker throttled this request.
    pub throttle_time_ms: i32,
    /// One entry per id asked for.
    pub transaction_states: Vec<TransactionState>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One transactional id's state at its coordinator.
#[kafka]
pub struct TransactionState {
    /// The id's error code, 0 for none.
    pub error_code: ErrorCode,
    /// The transactional id.
    pub transactional_id: String,
    /// Its state, e.g. `Ongoing`, `PrepareAbort`, `CompleteCommit`, `Empty`.
    pub transaction_state: String,
    /// The transaction timeout.
    pub transaction_timeout_ms: i32,
    /// When the current transaction started (ms since the epoch), or -1.
    pub transaction_start_time_ms: i64,
    /// The current producer id.
    pub producer_id: i64,
    /// The current producer epoch.
    pub producer_epoch: i16,
    /// The partitions in the current transaction.
    pub topics: Vec<TopicData>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The partitions of one topic in a transaction.
#[kafka]
pub struct TopicData {
    /// The topic name.
    pub topic: String,
    /// The partition indexes.
    pub partitions: Vec<i32>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}
