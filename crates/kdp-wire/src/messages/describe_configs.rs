//! DescribeConfigs (API key 32), versions 1-4; flexible from 4.
//!
//! kdp reads brokers' `transaction.max.timeout.ms`,
//! `producer.id.expiration.ms` and `transactional.id.expiration.ms`, topics'
//! `cleanup.policy` and share groups' `share.isolation.level` with it.
//! Kafka 4.0 removed v0.

use kdp_derive::kafka;

use crate::error_code::ErrorCode;

use crate::tagged::TaggedFields;

/// ResourceType of a topic.
pub const RESOURCE_TYPE_TOPIC: i8 = 2;
/// ResourceType of a broker.
pub const RESOURCE_TYPE_BROKER: i8 = 4;
/// ResourceType of a group (Kafka 4.x: `ConfigResource.Type.GROUP`, group
/// configs such as `share.isolation.level`).
pub const RESOURCE_TYPE_GROUP: i8 = 32;

/// Describes the configuration of some resources.
#[kafka(key = crate::api::DESCRIBE_CONFIGS, versions = "1-4", response = DescribeConfigsResponse)]
pub struct DescribeConfigsRequest {
    /// The resources.
    pub resources: Vec<DescribeConfigsResource>,
    /// Whether to include synonyms.
    #[kafka(default = "false")]
    pub include_synonyms: bool,
    /// v3+: whether to include documentation.
    #[kafka(versions = "3+", default = "false")]
    pub include_documentation: bool,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One resource asked for.
#[kafka]
pub struct DescribeConfigsResource {
    /// The resource type (see the `RESOURCE_TYPE_*` constants).
    pub resource_type: i8,
    /// The resource name (a broker's is its id).
    pub resource_name: String,
    /// The keys to describe, or null for all.
    pub configuration_keys: Option<Vec<String>>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// The configuration of each resource.
#[kafka(key = crate::api::DESCRIBE_CONFIGS, versions = "1-4")]
pub struct DescribeConfigsResponse {
    /// How long the broker throttled this request.
    pub throttle_time_ms: i32,
    /// One result per resource.
    pub results: Vec<DescribeConfigsResult>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One resource's configuration.
#[kafka]
pub struct DescribeConfigsResult {
    /// The resource's error code, 0 for none.
    pub error_code: ErrorCode,
    /// The error's text.
    pub error_message: Option<String>,
    /// The resource type.
    pub resource_type: i8,
    /// The resource name.
    pub resource_name: String,
    /// Its configuration entries.
    pub configs: Vec<DescribeConfigsResourceResult>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One configuration entry.
#[kafka]
pub struct DescribeConfigsResourceResult {
    /// The key.
    pub name: String,
    /// The value, null when sensitive.
    pub value: Option<String>,
    /// Whether it is read-only.
    pub read_only: bool,
    /// Where the value comes from.
    #[kafka(default = "-1")]
    pub config_source: i8,
    /// Whether the value is sensitive.
    pub is_sensitive: bool,
    /// Its synonyms.
    pub synonyms: Vec<DescribeConfigsSynonym>,
    /// v3+: the value's type.
    #[kafka(versions = "3+", default = "0")]
    pub config_type: i8,
    /// v3+: its documentation.
    #[kafka(versions = "3+")]
    pub documentation: Option<String>,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}

/// One synonym of a configuration entry.
#[kafka]
pub struct DescribeConfigsSynonym {
    /// The synonym's key.
    pub name: String,
    /// Its value.
    pub value: Option<String>,
    /// Where it comes from.
    pub source: i8,
    /// Tagged fields kdp does not know.
    pub unknown_tagged_fields: TaggedFields,
}
