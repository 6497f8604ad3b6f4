//! ListGroups (API key 16), versions 0-5; flexible from 3.
//!
//! Sent to every broker: each lists the groups its `__consumer_offsets`
//! partitions coordinate, leaving out groups the caller may not DESCRIBE.
//! v4 adds the state filter and each group's state (KIP-518), v5 the type
//! filter and each group's type (KIP-848).

use kdp_derive::kafka;

use crate::error_code::ErrorCode;

use crate::tagged::TaggedFields;

/// Lists the groups one broker coordinates, optionally filtered.
#[kafka(key = crate::api::LIST_GROUPS, versions = "0-5", response = ListGroupsResponse)]
pub struct ListGroupsRequest {
    /// v4+: states to keep (empty: all), e.g. `Stable`, `Empty`.
    #[kafka(versions = "4+")]
    pub states_filter: Vec<String>,
    /// v5+: types to keep (empty: all), e.g. `classic`, `consumer`.
    #[kafka(versions = "5+")]
    pub types_filter: Vec<String>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The groups one broker coordinates.
#[kafka(key = crate::api::LIST_GROUPS, versions = "0-5")]
pub struct ListGroupsResponse {
    /// v1+: how long the broker throttled this request.
    #[kafka(versions = "1+")]
    pub throttle_time_ms: i32,
    /// The top-level error code.
    pub error_code: ErrorCode,
    /// The groups.
    pub groups: Vec<ListedGroup>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One listed group.
#[kafka]
pub struct ListedGroup {
    /// The group id.
    pub group_id: String,
    /// The protocol type, e.g. `consumer`, or empty.
    pub protocol_type: String,
    /// v4+: the state, e.g. `Stable`, `Empty`.
    #[kafka(versions = "4+")]
    pub group_state: String,
    /// v5+: the type, e.g. `classic`, `consumer`.
    #[kafka(versions = "5+")]
    pub group_type: String,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}
