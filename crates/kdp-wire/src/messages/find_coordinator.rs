//! FindCoordinator (API key 10), versions 0-6; flexible from 3.
//!
//! v4 batches keys (`CoordinatorKeys` in, `Coordinators` out) and drops the
//! single-key fields. KeyType: 0 group, 1 transaction, 2 share group.

use kdp_derive::kafka;

use crate::error_code::ErrorCode;

use crate::tagged::TaggedFields;

/// KeyType of a consumer group.
pub const KEY_TYPE_GROUP: i8 = 0;
/// KeyType of a transactional id.
pub const KEY_TYPE_TRANSACTION: i8 = 1;

/// Asks which broker coordinates a group or a transactional id.
#[kafka(key = crate::api::FIND_COORDINATOR, versions = "0-6", response = FindCoordinatorResponse)]
pub struct FindCoordinatorRequest {
    /// v0-3: the one key.
    #[kafka(versions = "0-3")]
    pub key: String,
    /// v1+: what the keys are (see the `KEY_TYPE_*` constants).
    #[kafka(versions = "1+")]
    pub key_type: i8,
    /// v4+: the keys.
    #[kafka(versions = "4+")]
    pub coordinator_keys: Vec<String>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The coordinator of each key.
#[kafka(key = crate::api::FIND_COORDINATOR, versions = "0-6")]
pub struct FindCoordinatorResponse {
    /// v1+.
    #[kafka(versions = "1+")]
    pub throttle_time_ms: i32,
    /// v0-3: the one key's error code.
    #[kafka(versions = "0-3")]
    pub error_code: ErrorCode,
    /// v1-3.
    #[kafka(versions = "1-3", default = "None")]
    pub error_message: Option<String>,
    /// v0-3: the coordinator's broker id.
    #[kafka(versions = "0-3")]
    pub node_id: i32,
    /// v0-3: its host.
    #[kafka(versions = "0-3")]
    pub host: String,
    /// v0-3: its port.
    #[kafka(versions = "0-3")]
    pub port: i32,
    /// v4+: one entry per key asked for.
    #[kafka(versions = "4+")]
    pub coordinators: Vec<Coordinator>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One key's coordinator (v4+).
#[kafka]
pub struct Coordinator {
    /// The key.
    pub key: String,
    /// The coordinator's broker id.
    pub node_id: i32,
    /// Its host.
    pub host: String,
    /// Its port.
    pub port: i32,
    /// The key's error code, 0 for none.
    pub error_code: ErrorCode,
    /// The error's text.
    #[kafka(default = "None")]
    pub error_message: Option<String>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}
