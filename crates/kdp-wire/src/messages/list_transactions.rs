//! ListTransactions (API key 66), versions 0-2; flexible throughout.
//!
//! Sent to every broker: each lists the transactions its coordinator
//! partitions hold, leaving out ids the caller may not DESCRIBE.

use kdp_derive::kafka;

use crate::error_code::ErrorCode;

use crate::tagged::TaggedFields;

/// Lists transactions, optionally filtered.
#[kafka(key = crate::api::LIST_TRANSACTIONS, versions = "0-2", response = ListTransactionsResponse)]
pub struct ListTransactionsRequest {
    /// States to keep (empty: all), e.g. `Ongoing`, `PrepareCommit`.
    pub state_filters: Vec<String>,
    /// Producer ids to keep (empty: all).
    pub producer_id_filters: Vec<i64>,
    /// v1+: keep transactions running longer than this many ms (< 0: all).
    #[kafka(versions = "1+", default = "-1")]
    pub duration_filter: i64,
    /// v2+ (Kafka 4.1+): keep transactional ids matching this RE2/J pattern.
    #[kafka(versions = "2+", default = "None")]
    pub transactional_id_pattern: Option<String>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The transactions one broker coordinates.
#[kafka(key = crate::api::LIST_TRANSACTIONS, versions = "0-2")]
pub struct ListTransactionsResponse {
    /// How long the broker throttled this request.
    pub throttle_time_ms: i32,
    /// The top-level error code.
    pub error_code: ErrorCode,
    /// State filters the broker did not know.
    pub unknown_state_filters: Vec<String>,
    /// The transactions.
    pub transaction_states: Vec<ListedTransaction>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One listed transaction (the schema's `TransactionState`).
#[kafka]
pub struct ListedTransaction {
    /// The transactional id.
    pub transactional_id: String,
    /// Its current producer id.
    pub producer_id: i64,
    /// Its state, e.g. `Ongoing`.
    pub transaction_state: String,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}
