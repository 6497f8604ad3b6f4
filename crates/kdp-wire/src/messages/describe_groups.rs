//! DescribeGroups (API key 15), versions 0-6; flexible from 5.
//!
//! Sent to each group's coordinator; describes classic groups (a
//! consumer-protocol group answers GROUP_ID_NOT_FOUND on Kafka 4.x, which
//! ConsumerGroupDescribe answers instead).

use kdp_derive::kafka;

use crate::error_code::ErrorCode;

use crate::tagged::TaggedFields;

/// The AuthorizedOperations value meaning "not asked for".
pub const AUTHORIZED_OPERATIONS_OMITTED: i32 = i32::MIN;

/// Describes groups at their coordinator.
#[kafka(key = crate::api::DESCRIBE_GROUPS, versions = "0-6", response = DescribeGroupsResponse)]
pub struct DescribeGroupsRequest {
    /// The group ids.
    pub groups: Vec<String>,
    /// v3+: whether to return the caller's authorized operations.
    #[kafka(versions = "3+")]
    pub include_authorized_operations: bool,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The coordinator's view of each group.
#[kafka(key = crate::api::DESCRIBE_GROUPS, versions = "0-6")]
pub struct DescribeGroupsResponse {
    /// v1+: how long the broker throttled this request.
    #[kafka(versions = "1+")]
    pub throttle_time_ms: i32,
    /// One entry per group asked for.
    pub groups: Vec<DescribedGroup>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One described group.
#[kafka]
pub struct DescribedGroup {
    /// The group's error code, 0 for none.
    pub error_code: ErrorCode,
    /// v6+: the error's text.
    #[kafka(versions = "6+", default = "None")]
    pub error_message: Option<String>,
    /// The group id.
    pub group_id: String,
    /// The state, e.g. `Stable`, `Empty`, `Dead`, or empty.
    pub group_state: String,
    /// The protocol type, e.g. `consumer`, or empty.
    pub protocol_type: String,
    /// The protocol (for consumers, the assignor), or empty.
    pub protocol_data: String,
    /// The members.
    pub members: Vec<DescribedGroupMember>,
    /// v3+: the caller's authorized operations as a bit field.
    #[kafka(versions = "3+", default = "AUTHORIZED_OPERATIONS_OMITTED")]
    pub authorized_operations: i32,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One member of a described group.
#[kafka]
pub struct DescribedGroupMember {
    /// The member id the coordinator gave.
    pub member_id: String,
    /// v4+: the static member's `group.instance.id`.
    #[kafka(versions = "4+", default = "None")]
    pub group_instance_id: Option<String>,
    /// The member's client id.
    pub client_id: String,
    /// The member's host.
    pub client_host: String,
    /// The member's protocol metadata (for consumers, its subscription).
    pub member_metadata: Vec<u8>,
    /// The member's assignment (for consumers, a `ConsumerProtocolAssignment`).
    pub member_assignment: Vec<u8>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}
