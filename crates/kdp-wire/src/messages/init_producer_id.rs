//! InitProducerId (API key 22), versions 0-5; flexible from 2.
//!
//! At the coordinator of a transactional id it bumps the epoch, aborts an
//! open transaction and fences the previous instance: what
//! `forceTerminateTransaction` relies on. v3 carries the caller's producer
//! id and epoch; v4 and v5 add error codes only.

use kdp_derive::kafka;

use crate::error_code::ErrorCode;

use crate::tagged::TaggedFields;

/// Gets (or bumps) a producer id and epoch.
#[kafka(key = crate::api::INIT_PRODUCER_ID, versions = "0-5", response = InitProducerIdResponse)]
pub struct InitProducerIdRequest {
    /// The transactional id, or null for an idempotent producer.
    pub transactional_id: Option<String>,
    /// The transaction timeout.
    pub transaction_timeout_ms: i32,
    /// v3+: the caller's producer id, or -1.
    #[kafka(versions = "3+", default = "-1")]
    pub producer_id: i64,
    /// v3+: the caller's epoch, or -1.
    #[kafka(versions = "3+", default = "-1")]
    pub producer_epoch: i16,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The producer id and epoch granted.
#[kafka(key = crate::api::INIT_PRODUCER_ID, versions = "0-5")]
pub struct InitProducerIdResponse {
    /// How long the broker throttled this request.
    pub throttle_time_ms: i32,
    /// The error code, 0 for none.
    pub error_code: ErrorCode,
    /// The producer id, or -1.
    #[kafka(default = "-1")]
    pub producer_id: i64,
    /// The epoch.
    pub producer_epoch: i16,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}
