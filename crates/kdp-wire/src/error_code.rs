//! Kafka's error codes (Errors.java), so that codes print as names.
//!
//! The table lists every error code Apache Kafka defines in
//! `clients/src/main/java/org/apache/kafka/common/protocol/Errors.java`, from `-1`
//! (`UNKNOWN_SERVER_ERROR`) and `0` (`NONE`) up to `133` (`SHARE_SESSION_LIMIT_REACHED`), with the
//! enum name, whether the error is retriable, and Kafka's default message for it.
//!
//! Sources:
//! - codes `-1..=128`: apache/kafka trunk at commit `1eb7644349cb07139d6a3c1ad1986979647cac99`
//!   (2024-10-25, version `4.0.0-SNAPSHOT`);
//! - codes `129..=133` (`REBOOTSTRAP_REQUIRED`, added in Kafka 4.0, and the Streams / share-group
//!   codes added in 4.1) and the newer wording of the messages for `INVALID_GROUP_ID` (24) and
//!   `GROUP_MAX_SIZE_REACHED` (81): Kroxylicious's vendored copy of Kafka 4.3.0's `Errors.java`
//!   (messages) and `errors` package (exception superclasses), commit `6e2637c59cd7`, which ends
//!   at code 133. The wording of 24 and 81 before that change was "The configured groupId is
//!   invalid." and "The consumer group has reached its max size.".
//!
//! `retriable` is true exactly when the Java exception Kafka maps the code to is a subclass of
//! `org.apache.kafka.common.errors.RetriableException`. It was derived for every row by walking
//! the `extends` chain of each exception class in `org.apache.kafka.common.errors` (this is the
//! same rule Kafka uses for the "Retriable" column of its protocol documentation). Note that
//! some codes a client usually retries are *not* retriable by this rule, e.g.
//! `BROKER_NOT_AVAILABLE` (8) and `REBALANCE_IN_PROGRESS` (27).
//!
//! `NONE` has no message in Kafka (its message is `null`); here it is the empty string.

use std::fmt;

/// One row of Kafka's error table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorInfo {
    /// The error code as sent on the wire.
    pub code: i16,
    /// Kafka's enum name for the code, e.g. `"NOT_LEADER_OR_FOLLOWER"`.
    pub name: &'static str,
    /// Whether Kafka's exception for the code is a `RetriableException`.
    pub retriable: bool,
    /// Kafka's default message for the code (empty for `NONE`).
    pub message: &'static str,
}

// Codes by name, one constant per row of `ERRORS`.

/// Code -1.
pub const UNKNOWN_SERVER_ERROR: i16 = -1;
/// Code 0.
pub const NONE: i16 = 0;
/// Code 1.
pub const OFFSET_OUT_OF_RANGE: i16 = 1;
/// Code 2, retriable.
pub const CORRUPT_MESSAGE: i16 = 2;
/// Code 3, retriable.
pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
/// Code 4.
pub const INVALID_FETCH_SIZE: i16 = 4;
/// Code 5, retriable.
pub const LEADER_NOT_AVAILABLE: i16 = 5;
/// Code 6, retriable.
pub const NOT_LEADER_OR_FOLLOWER: i16 = 6;
/// Code 7, retriable.
pub const REQUEST_TIMED_OUT: i16 = 7;
/// Code 8.
pub const BROKER_NOT_AVAILABLE: i16 = 8;
/// Code 9, retriable.
pub const REPLICA_NOT_AVAILABLE: i16 = 9;
/// Code 10.
pub const MESSAGE_TOO_LARGE: i16 = 10;
/// Code 11.
pub const STALE_CONTROLLER_EPOCH: i16 = 11;
/// Code 12.
pub const OFFSET_METADATA_TOO_LARGE: i16 = 12;
/// Code 13, retriable.
pub const NETWORK_EXCEPTION: i16 = 13;
/// Code 14, retriable.
pub const COORDINATOR_LOAD_IN_PROGRESS: i16 = 14;
/// Code 15, retriable.
pub const COORDINATOR_NOT_AVAILABLE: i16 = 15;
/// Code 16, retriable.
pub const NOT_COORDINATOR: i16 = 16;
/// Code 17.
pub const INVALID_TOPIC_EXCEPTION: i16 = 17;
/// Code 18.
pub const RECORD_LIST_TOO_LARGE: i16 = 18;
/// Code 19, retriable.
pub const NOT_ENOUGH_REPLICAS: i16 = 19;
/// Code 20, retriable.
pub const NOT_ENOUGH_REPLICAS_AFTER_APPEND: i16 = 20;
/// Code 21.
pub const INVALID_REQUIRED_ACKS: i16 = 21;
/// Code 22.
pub const ILLEGAL_GENERATION: i16 = 22;
/// Code 23.
pub const INCONSISTENT_GROUP_PROTOCOL: i16 = 23;
/// Code 24.
pub const INVALID_GROUP_ID: i16 = 24;
/// Code 25.
pub const UNKNOWN_MEMBER_ID: i16 = 25;
/// Code 26.
pub const INVALID_SESSION_TIMEOUT: i16 = 26;
/// Code 27.
pub const REBALANCE_IN_PROGRESS: i16 = 27;
/// Code 28.
pub const INVALID_COMMIT_OFFSET_SIZE: i16 = 28;
/// Code 29.
pub const TOPIC_AUTHORIZATION_FAILED: i16 = 29;
/// Code 30.
pub const GROUP_AUTHORIZATION_FAILED: i16 = 30;
/// Code 31.
pub const CLUSTER_AUTHORIZATION_FAILED: i16 = 31;
/// Code 32.
pub const INVALID_TIMESTAMP: i16 = 32;
/// Code 33.
pub const UNSUPPORTED_SASL_MECHANISM: i16 = 33;
/// Code 34.
pub const ILLEGAL_SASL_STATE: i16 = 34;
/// Code 35.
pub const UNSUPPORTED_VERSION: i16 = 35;
/// Code 36.
pub const TOPIC_ALREADY_EXISTS: i16 = 36;
/// Code 37.
pub const INVALID_PARTITIONS: i16 = 37;
/// Code 38.
pub const INVALID_REPLICATION_FACTOR: i16 = 38;
/// Code 39.
pub const INVALID_REPLICA_ASSIGNMENT: i16 = 39;
/// Code 40.
pub const INVALID_CONFIG: i16 = 40;
/// Code 41, retriable.
pub const NOT_CONTROLLER: i16 = 41;
/// Code 42.
pub const INVALID_REQUEST: i16 = 42;
/// Code 43.
pub const UNSUPPORTED_FOR_MESSAGE_FORMAT: i16 = 43;
/// Code 44.
pub const POLICY_VIOLATION: i16 = 44;
/// Code 45.
pub const OUT_OF_ORDER_SEQUENCE_NUMBER: i16 = 45;
/// Code 46.
pub const DUPLICATE_SEQUENCE_NUMBER: i16 = 46;
/// Code 47.
pub const INVALID_PRODUCER_EPOCH: i16 = 47;
/// Code 48.
pub const INVALID_TXN_STATE: i16 = 48;
/// Code 49.
pub const INVALID_PRODUCER_ID_MAPPING: i16 = 49;
/// Code 50.
pub const INVALID_TRANSACTION_TIMEOUT: i16 = 50;
/// Code 51, retriable.
pub const CONCURRENT_TRANSACTIONS: i16 = 51;
/// Code 52.
pub const TRANSACTION_COORDINATOR_FENCED: i16 = 52;
/// Code 53.
pub const TRANSACTIONAL_ID_AUTHORIZATION_FAILED: i16 = 53;
/// Code 54.
pub const SECURITY_DISABLED: i16 = 54;
/// Code 55.
pub const OPERATION_NOT_ATTEMPTED: i16 = 55;
/// Code 56, retriable.
pub const KAFKA_STORAGE_ERROR: i16 = 56;
/// Code 57.
pub const LOG_DIR_NOT_FOUND: i16 = 57;
/// Code 58.
pub const SASL_AUTHENTICATION_FAILED: i16 = 58;
/// Code 59.
pub const UNKNOWN_PRODUCER_ID: i16 = 59;
/// Code 60.
pub const REASSIGNMENT_IN_PROGRESS: i16 = 60;
/// Code 61.
pub const DELEGATION_TOKEN_AUTH_DISABLED: i16 = 61;
/// Code 62.
pub const DELEGATION_TOKEN_NOT_FOUND: i16 = 62;
/// Code 63.
pub const DELEGATION_TOKEN_OWNER_MISMATCH: i16 = 63;
/// Code 64.
pub const DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: i16 = 64;
/// Code 65.
pub const DELEGATION_TOKEN_AUTHORIZATION_FAILED: i16 = 65;
/// Code 66.
pub const DELEGATION_TOKEN_EXPIRED: i16 = 66;
/// Code 67.
pub const INVALID_PRINCIPAL_TYPE: i16 = 67;
/// Code 68.
pub const NON_EMPTY_GROUP: i16 = 68;
/// Code 69.
pub const GROUP_ID_NOT_FOUND: i16 = 69;
/// Code 70, retriable.
pub const FETCH_SESSION_ID_NOT_FOUND: i16 = 70;
/// Code 71, retriable.
pub const INVALID_FETCH_SESSION_EPOCH: i16 = 71;
/// Code 72, retriable.
pub const LISTENER_NOT_FOUND: i16 = 72;
/// Code 73.
pub const TOPIC_DELETION_DISABLED: i16 = 73;
/// Code 74, retriable.
pub const FENCED_LEADER_EPOCH: i16 = 74;
/// Code 75, retriable.
pub const UNKNOWN_LEADER_EPOCH: i16 = 75;
/// Code 76.
pub const UNSUPPORTED_COMPRESSION_TYPE: i16 = 76;
/// Code 77.
pub const STALE_BROKER_EPOCH: i16 = 77;
/// Code 78, retriable.
pub const OFFSET_NOT_AVAILABLE: i16 = 78;
/// Code 79.
pub const MEMBER_ID_REQUIRED: i16 = 79;
/// Code 80, retriable.
pub const PREFERRED_LEADER_NOT_AVAILABLE: i16 = 80;
/// Code 81.
pub const GROUP_MAX_SIZE_REACHED: i16 = 81;
/// Code 82.
pub const FENCED_INSTANCE_ID: i16 = 82;
/// Code 83, retriable.
pub const ELIGIBLE_LEADERS_NOT_AVAILABLE: i16 = 83;
/// Code 84, retriable.
pub const ELECTION_NOT_NEEDED: i16 = 84;
/// Code 85.
pub const NO_REASSIGNMENT_IN_PROGRESS: i16 = 85;
/// Code 86.
pub const GROUP_SUBSCRIBED_TO_TOPIC: i16 = 86;
/// Code 87.
pub const INVALID_RECORD: i16 = 87;
/// Code 88, retriable.
pub const UNSTABLE_OFFSET_COMMIT: i16 = 88;
/// Code 89, retriable.
pub const THROTTLING_QUOTA_EXCEEDED: i16 = 89;
/// Code 90.
pub const PRODUCER_FENCED: i16 = 90;
/// Code 91.
pub const RESOURCE_NOT_FOUND: i16 = 91;
/// Code 92.
pub const DUPLICATE_RESOURCE: i16 = 92;
/// Code 93.
pub const UNACCEPTABLE_CREDENTIAL: i16 = 93;
/// Code 94.
pub const INCONSISTENT_VOTER_SET: i16 = 94;
/// Code 95.
pub const INVALID_UPDATE_VERSION: i16 = 95;
/// Code 96.
pub const FEATURE_UPDATE_FAILED: i16 = 96;
/// Code 97.
pub const PRINCIPAL_DESERIALIZATION_FAILURE: i16 = 97;
/// Code 98.
pub const SNAPSHOT_NOT_FOUND: i16 = 98;
/// Code 99.
pub const POSITION_OUT_OF_RANGE: i16 = 99;
/// Code 100, retriable.
pub const UNKNOWN_TOPIC_ID: i16 = 100;
/// Code 101.
pub const DUPLICATE_BROKER_REGISTRATION: i16 = 101;
/// Code 102.
pub const BROKER_ID_NOT_REGISTERED: i16 = 102;
/// Code 103, retriable.
pub const INCONSISTENT_TOPIC_ID: i16 = 103;
/// Code 104.
pub const INCONSISTENT_CLUSTER_ID: i16 = 104;
/// Code 105.
pub const TRANSACTIONAL_ID_NOT_FOUND: i16 = 105;
/// Code 106, retriable.
pub const FETCH_SESSION_TOPIC_ID_ERROR: i16 = 106;
/// Code 107.
pub const INELIGIBLE_REPLICA: i16 = 107;
/// Code 108.
pub const NEW_LEADER_ELECTED: i16 = 108;
/// Code 109.
pub const OFFSET_MOVED_TO_TIERED_STORAGE: i16 = 109;
/// Code 110.
pub const FENCED_MEMBER_EPOCH: i16 = 110;
/// Code 111.
pub const UNRELEASED_INSTANCE_ID: i16 = 111;
/// Code 112.
pub const UNSUPPORTED_ASSIGNOR: i16 = 112;
/// Code 113.
pub const STALE_MEMBER_EPOCH: i16 = 113;
/// Code 114.
pub const MISMATCHED_ENDPOINT_TYPE: i16 = 114;
/// Code 115.
pub const UNSUPPORTED_ENDPOINT_TYPE: i16 = 115;
/// Code 116.
pub const UNKNOWN_CONTROLLER_ID: i16 = 116;
/// Code 117.
pub const UNKNOWN_SUBSCRIPTION_ID: i16 = 117;
/// Code 118.
pub const TELEMETRY_TOO_LARGE: i16 = 118;
/// Code 119.
pub const INVALID_REGISTRATION: i16 = 119;
/// Code 120.
pub const TRANSACTION_ABORTABLE: i16 = 120;
/// Code 121.
pub const INVALID_RECORD_STATE: i16 = 121;
/// Code 122, retriable.
pub const SHARE_SESSION_NOT_FOUND: i16 = 122;
/// Code 123, retriable.
pub const INVALID_SHARE_SESSION_EPOCH: i16 = 123;
/// Code 124.
pub const FENCED_STATE_EPOCH: i16 = 124;
/// Code 125.
pub const INVALID_VOTER_KEY: i16 = 125;
/// Code 126.
pub const DUPLICATE_VOTER: i16 = 126;
/// Code 127.
pub const VOTER_NOT_FOUND: i16 = 127;
/// Code 128.
pub const INVALID_REGULAR_EXPRESSION: i16 = 128;
/// Code 129.
pub const REBOOTSTRAP_REQUIRED: i16 = 129;
/// Code 130.
pub const STREAMS_INVALID_TOPOLOGY: i16 = 130;
/// Code 131.
pub const STREAMS_INVALID_TOPOLOGY_EPOCH: i16 = 131;
/// Code 132.
pub const STREAMS_TOPOLOGY_FENCED: i16 = 132;
/// Code 133, retriable.
pub const SHARE_SESSION_LIMIT_REACHED: i16 = 133;

/// Every error Kafka defines, sorted by code.
pub const ERRORS: &[ErrorInfo] = &[
    ErrorInfo {
        code: -1,
        name: "UNKNOWN_SERVER_ERROR",
        retriable: false,
        message: "The server experienced an unexpected error when processing the request.",
    },
    ErrorInfo {
        code: 0,
        name: "NONE",
        retriable: false,
        message: "",
    },
    ErrorInfo {
        code: 1,
        name: "OFFSET_OUT_OF_RANGE",
        retriable: false,
        message: "The requested offset is not within the range of offsets maintained by the \
            server.",
    },
    ErrorInfo {
        code: 2,
        name: "CORRUPT_MESSAGE",
        retriable: true,
        message: "This message has failed its CRC checksum, exceeds the valid size, has a null \
            key for a compacted topic, or is otherwise corrupt.",
    },
    ErrorInfo {
        code: 3,
        name: "UNKNOWN_TOPIC_OR_PARTITION",
        retriable: true,
        message: "This server does not host this topic-partition.",
    },
    ErrorInfo {
        code: 4,
        name: "INVALID_FETCH_SIZE",
        retriable: false,
        message: "The requested fetch size is invalid.",
    },
    ErrorInfo {
        code: 5,
        name: "LEADER_NOT_AVAILABLE",
        retriable: true,
        message: "There is no leader for this topic-partition as we are in the middle of a \
            leadership election.",
    },
    ErrorInfo {
        code: 6,
        name: "NOT_LEADER_OR_FOLLOWER",
        retriable: true,
        message: "For requests intended only for the leader, this error indicates that the broker \
            is not the current leader. For requests intended for any replica, this error \
            indicates that the broker is not a replica of the topic partition.",
    },
    ErrorInfo {
        code: 7,
        name: "REQUEST_TIMED_OUT",
        retriable: true,
        message: "The request timed out.",
    },
    ErrorInfo {
        code: 8,
        name: "BROKER_NOT_AVAILABLE",
        retriable: false,
        message: "The broker is not available.",
    },
    ErrorInfo {
        code: 9,
        name: "REPLICA_NOT_AVAILABLE",
        retriable: true,
        message: "The replica is not available for the requested topic-partition. Produce/Fetch \
            requests and other requests intended only for the leader or follower return \
            NOT_LEADER_OR_FOLLOWER if the broker is not a replica of the topic-partition.",
    },
    ErrorInfo {
        code: 10,
        name: "MESSAGE_TOO_LARGE",
        retriable: false,
        message: "The request included a message larger than the max message size the server will \
            accept.",
    },
    ErrorInfo {
        code: 11,
        name: "STALE_CONTROLLER_EPOCH",
        retriable: false,
        message: "The controller moved to another broker.",
    },
    ErrorInfo {
        code: 12,
        name: "OFFSET_METADATA_TOO_LARGE",
        retriable: false,
        message: "The metadata field of the offset request was too large.",
    },
    ErrorInfo {
        code: 13,
        name: "NETWORK_EXCEPTION",
        retriable: true,
        message: "The server disconnected before a response was received.",
    },
    ErrorInfo {
        code: 14,
        name: "COORDINATOR_LOAD_IN_PROGRESS",
        retriable: true,
        message: "The coordinator is loading and hence can't process requests.",
    },
    ErrorInfo {
        code: 15,
        name: "COORDINATOR_NOT_AVAILABLE",
        retriable: true,
        message: "The coordinator is not available.",
    },
    ErrorInfo {
        code: 16,
        name: "NOT_COORDINATOR",
        retriable: true,
        message: "This is not the correct coordinator.",
    },
    ErrorInfo {
        code: 17,
        name: "INVALID_TOPIC_EXCEPTION",
        retriable: false,
        message: "The request attempted to perform an operation on an invalid topic.",
    },
    ErrorInfo {
        code: 18,
        name: "RECORD_LIST_TOO_LARGE",
        retriable: false,
        message: "The request included message batch larger than the configured segment size on \
            the server.",
    },
    ErrorInfo {
        code: 19,
        name: "NOT_ENOUGH_REPLICAS",
        retriable: true,
        message: "Messages are rejected since there are fewer in-sync replicas than required.",
    },
    ErrorInfo {
        code: 20,
        name: "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
        retriable: true,
        message: "Messages are written to the log, but to fewer in-sync replicas than required.",
    },
    ErrorInfo {
        code: 21,
        name: "INVALID_REQUIRED_ACKS",
        retriable: false,
        message: "Produce request specified an invalid value for required acks.",
    },
    ErrorInfo {
        code: 22,
        name: "ILLEGAL_GENERATION",
        retriable: false,
        message: "Specified group generation id is not valid.",
    },
    ErrorInfo {
        code: 23,
        name: "INCONSISTENT_GROUP_PROTOCOL",
        retriable: false,
        message: "The group member's supported protocols are incompatible with those of existing \
            members or first group member tried to join with empty protocol type or empty \
            protocol list.",
    },
    ErrorInfo {
        code: 24,
        name: "INVALID_GROUP_ID",
        retriable: false,
        message: "The group id is invalid.",
    },
    ErrorInfo {
        code: 25,
        name: "UNKNOWN_MEMBER_ID",
        retriable: false,
        message: "The coordinator is not aware of this member.",
    },
    ErrorInfo {
        code: 26,
        name: "INVALID_SESSION_TIMEOUT",
        retriable: false,
        message: "The session timeout is not within the range allowed by the broker (as \
            configured by group.min.session.timeout.ms and group.max.session.timeout.ms).",
    },
    ErrorInfo {
        code: 27,
        name: "REBALANCE_IN_PROGRESS",
        retriable: false,
        message: "The group is rebalancing, so a rejoin is needed.",
    },
    ErrorInfo {
        code: 28,
        name: "INVALID_COMMIT_OFFSET_SIZE",
        retriable: false,
        message: "The committing offset data size is not valid.",
    },
    ErrorInfo {
        code: 29,
        name: "TOPIC_AUTHORIZATION_FAILED",
        retriable: false,
        message: "Topic authorization failed.",
    },
    ErrorInfo {
        code: 30,
        name: "GROUP_AUTHORIZATION_FAILED",
        retriable: false,
        message: "Group authorization failed.",
    },
    ErrorInfo {
        code: 31,
        name: "CLUSTER_AUTHORIZATION_FAILED",
        retriable: false,
        message: "Cluster authorization failed.",
    },
    ErrorInfo {
        code: 32,
        name: "INVALID_TIMESTAMP",
        retriable: false,
        message: "The timestamp of the message is out of acceptable range.",
    },
    ErrorInfo {
        code: 33,
        name: "UNSUPPORTED_SASL_MECHANISM",
        retriable: false,
        message: "The broker does not support the requested SASL mechanism.",
    },
    ErrorInfo {
        code: 34,
        name: "ILLEGAL_SASL_STATE",
        retriable: false,
        message: "Request is not valid given the current SASL state.",
    },
    ErrorInfo {
        code: 35,
        name: "UNSUPPORTED_VERSION",
        retriable: false,
        message: "The version of API is not supported.",
    },
    ErrorInfo {
        code: 36,
        name: "TOPIC_ALREADY_EXISTS",
        retriable: false,
        message: "Topic with this name already exists.",
    },
    ErrorInfo {
        code: 37,
        name: "INVALID_PARTITIONS",
        retriable: false,
        message: "Number of partitions is below 1.",
    },
    ErrorInfo {
        code: 38,
        name: "INVALID_REPLICATION_FACTOR",
        retriable: false,
        message: "Replication factor is below 1 or larger than the number of available brokers.",
    },
    ErrorInfo {
        code: 39,
        name: "INVALID_REPLICA_ASSIGNMENT",
        retriable: false,
        message: "Replica assignment is invalid.",
    },
    ErrorInfo {
        code: 40,
        name: "INVALID_CONFIG",
        retriable: false,
        message: "Configuration is invalid.",
    },
    ErrorInfo {
        code: 41,
        name: "NOT_CONTROLLER",
        retriable: true,
        message: "This is not the correct controller for this cluster.",
    },
    ErrorInfo {
        code: 42,
        name: "INVALID_REQUEST",
        retriable: false,
        message: "This most likely occurs because of a request being malformed by the client \
            library or the message was sent to an incompatible broker. See the broker logs for \
            more details.",
    },
    ErrorInfo {
        code: 43,
        name: "UNSUPPORTED_FOR_MESSAGE_FORMAT",
        retriable: false,
        message: "The message format version on the broker does not support the request.",
    },
    ErrorInfo {
        code: 44,
        name: "POLICY_VIOLATION",
        retriable: false,
        message: "Request parameters do not satisfy the configured policy.",
    },
    ErrorInfo {
        code: 45,
        name: "OUT_OF_ORDER_SEQUENCE_NUMBER",
        retriable: false,
        message: "The broker received an out of order sequence number.",
    },
    ErrorInfo {
        code: 46,
        name: "DUPLICATE_SEQUENCE_NUMBER",
        retriable: false,
        message: "The broker received a duplicate sequence number.",
    },
    ErrorInfo {
        code: 47,
        name: "INVALID_PRODUCER_EPOCH",
        retriable: false,
        message: "Producer attempted to produce with an old epoch.",
    },
    ErrorInfo {
        code: 48,
        name: "INVALID_TXN_STATE",
        retriable: false,
        message: "The producer attempted a transactional operation in an invalid state.",
    },
    ErrorInfo {
        code: 49,
        name: "INVALID_PRODUCER_ID_MAPPING",
        retriable: false,
        message: "The producer attempted to use a producer id which is not currently assigned to \
            its transactional id.",
    },
    ErrorInfo {
        code: 50,
        name: "INVALID_TRANSACTION_TIMEOUT",
        retriable: false,
        message: "The transaction timeout is larger than the maximum value allowed by the broker \
            (as configured by transaction.max.timeout.ms).",
    },
    ErrorInfo {
        code: 51,
        name: "CONCURRENT_TRANSACTIONS",
        retriable: true,
        message: "The producer attempted to update a transaction while another concurrent \
            operation on the same transaction was ongoing.",
    },
    ErrorInfo {
        code: 52,
        name: "TRANSACTION_COORDINATOR_FENCED",
        retriable: false,
        message: "Indicates that the transaction coordinator sending a WriteTxnMarker is no \
            longer the current coordinator for a given producer.",
    },
    ErrorInfo {
        code: 53,
        name: "TRANSACTIONAL_ID_AUTHORIZATION_FAILED",
        retriable: false,
        message: "Transactional Id authorization failed.",
    },
    ErrorInfo {
        code: 54,
        name: "SECURITY_DISABLED",
        retriable: false,
        message: "Security features are disabled.",
    },
    ErrorInfo {
        code: 55,
        name: "OPERATION_NOT_ATTEMPTED",
        retriable: false,
        message: "The broker did not attempt to execute this operation. This may happen for \
            batched RPCs where some operations in the batch failed, causing the broker to respond \
            without trying the rest.",
    },
    ErrorInfo {
        code: 56,
        name: "KAFKA_STORAGE_ERROR",
        retriable: true,
        message: "Disk error when trying to access log file on the disk.",
    },
    ErrorInfo {
        code: 57,
        name: "LOG_DIR_NOT_FOUND",
        retriable: false,
        message: "The user-specified log directory is not found in the broker config.",
    },
    ErrorInfo {
        code: 58,
        name: "SASL_AUTHENTICATION_FAILED",
        retriable: false,
        message: "SASL Authentication failed.",
    },
    ErrorInfo {
        code: 59,
        name: "UNKNOWN_PRODUCER_ID",
        retriable: false,
        message: "This exception is raised by the broker if it could not locate the producer \
            metadata associated with the producerId in question. This could happen if, for \
            instance, the producer's records were deleted because their retention time had \
            elapsed. Once the last records of the producerId are removed, the producer's metadata \
            is removed from the broker, and future appends by the producer will return this \
            exception.",
    },
    ErrorInfo {
        code: 60,
        name: "REASSIGNMENT_IN_PROGRESS",
        retriable: false,
        message: "A partition reassignment is in progress.",
    },
    ErrorInfo {
        code: 61,
        name: "DELEGATION_TOKEN_AUTH_DISABLED",
        retriable: false,
        message: "Delegation Token feature is not enabled.",
    },
    ErrorInfo {
        code: 62,
        name: "DELEGATION_TOKEN_NOT_FOUND",
        retriable: false,
        message: "Delegation Token is not found on server.",
    },
    ErrorInfo {
        code: 63,
        name: "DELEGATION_TOKEN_OWNER_MISMATCH",
        retriable: false,
        message: "Specified Principal is not valid Owner/Renewer.",
    },
    ErrorInfo {
        code: 64,
        name: "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED",
        retriable: false,
        message: "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and \
            on delegation token authenticated channels.",
    },
    ErrorInfo {
        code: 65,
        name: "DELEGATION_TOKEN_AUTHORIZATION_FAILED",
        retriable: false,
        message: "Delegation Token authorization failed.",
    },
    ErrorInfo {
        code: 66,
        name: "DELEGATION_TOKEN_EXPIRED",
        retriable: false,
        message: "Delegation Token is expired.",
    },
    ErrorInfo {
        code: 67,
        name: "INVALID_PRINCIPAL_TYPE",
        retriable: false,
        message: "Supplied principalType is not supported.",
    },
    ErrorInfo {
        code: 68,
        name: "NON_EMPTY_GROUP",
        retriable: false,
        message: "The group is not empty.",
    },
    ErrorInfo {
        code: 69,
        name: "GROUP_ID_NOT_FOUND",
        retriable: false,
        message: "The group id does not exist.",
    },
    ErrorInfo {
        code: 70,
        name: "FETCH_SESSION_ID_NOT_FOUND",
        retriable: true,
        message: "The fetch session ID was not found.",
    },
    ErrorInfo {
        code: 71,
        name: "INVALID_FETCH_SESSION_EPOCH",
        retriable: true,
        message: "The fetch session epoch is invalid.",
    },
    ErrorInfo {
        code: 72,
        name: "LISTENER_NOT_FOUND",
        retriable: true,
        message: "There is no listener on the leader broker that matches the listener on which \
            metadata request was processed.",
    },
    ErrorInfo {
        code: 73,
        name: "TOPIC_DELETION_DISABLED",
        retriable: false,
        message: "Topic deletion is disabled.",
    },
    ErrorInfo {
        code: 74,
        name: "FENCED_LEADER_EPOCH",
        retriable: true,
        message: "The leader epoch in the request is older than the epoch on the broker.",
    },
    ErrorInfo {
        code: 75,
        name: "UNKNOWN_LEADER_EPOCH",
        retriable: true,
        message: "The leader epoch in the request is newer than the epoch on the broker.",
    },
    ErrorInfo {
        code: 76,
        name: "UNSUPPORTED_COMPRESSION_TYPE",
        retriable: false,
        message: "The requesting client does not support the compression type of given partition.",
    },
    ErrorInfo {
        code: 77,
        name: "STALE_BROKER_EPOCH",
        retriable: false,
        message: "Broker epoch has changed.",
    },
    ErrorInfo {
        code: 78,
        name: "OFFSET_NOT_AVAILABLE",
        retriable: true,
        message: "The leader high watermark has not caught up from a recent leader election so \
            the offsets cannot be guaranteed to be monotonically increasing.",
    },
    ErrorInfo {
        code: 79,
        name: "MEMBER_ID_REQUIRED",
        retriable: false,
        message: "The group member needs to have a valid member id before actually entering a \
            consumer group.",
    },
    ErrorInfo {
        code: 80,
        name: "PREFERRED_LEADER_NOT_AVAILABLE",
        retriable: true,
        message: "The preferred leader was not available.",
    },
    ErrorInfo {
        code: 81,
        name: "GROUP_MAX_SIZE_REACHED",
        retriable: false,
        message: "The group has reached its maximum size.",
    },
    ErrorInfo {
        code: 82,
        name: "FENCED_INSTANCE_ID",
        retriable: false,
        message: "The broker rejected this static consumer since another consumer with the same \
            group.instance.id has registered with a different member.id.",
    },
    ErrorInfo {
        code: 83,
        name: "ELIGIBLE_LEADERS_NOT_AVAILABLE",
        retriable: true,
        message: "Eligible topic partition leaders are not available.",
    },
    ErrorInfo {
        code: 84,
        name: "ELECTION_NOT_NEEDED",
        retriable: true,
        message: "Leader election not needed for topic partition.",
    },
    ErrorInfo {
        code: 85,
        name: "NO_REASSIGNMENT_IN_PROGRESS",
        retriable: false,
        message: "No partition reassignment is in progress.",
    },
    ErrorInfo {
        code: 86,
        name: "GROUP_SUBSCRIBED_TO_TOPIC",
        retriable: false,
        message: "Deleting offsets of a topic is forbidden while the consumer group is actively \
            subscribed to it.",
    },
    ErrorInfo {
        code: 87,
        name: "INVALID_RECORD",
        retriable: false,
        message: "This record has failed the validation on broker and hence will be rejected.",
    },
    ErrorInfo {
        code: 88,
        name: "UNSTABLE_OFFSET_COMMIT",
        retriable: true,
        message: "There are unstable offsets that need to be cleared.",
    },
    ErrorInfo {
        code: 89,
        name: "THROTTLING_QUOTA_EXCEEDED",
        retriable: true,
        message: "The throttling quota has been exceeded.",
    },
    ErrorInfo {
        code: 90,
        name: "PRODUCER_FENCED",
        retriable: false,
        message: "There is a newer producer with the same transactionalId which fences the \
            current one.",
    },
    ErrorInfo {
        code: 91,
        name: "RESOURCE_NOT_FOUND",
        retriable: false,
        message: "A request illegally referred to a resource that does not exist.",
    },
    ErrorInfo {
        code: 92,
        name: "DUPLICATE_RESOURCE",
        retriable: false,
        message: "A request illegally referred to the same resource twice.",
    },
    ErrorInfo {
        code: 93,
        name: "UNACCEPTABLE_CREDENTIAL",
        retriable: false,
        message: "Requested credential would not meet criteria for acceptability.",
    },
    ErrorInfo {
        code: 94,
        name: "INCONSISTENT_VOTER_SET",
        retriable: false,
        message: "Indicates that the either the sender or recipient of a voter-only request is \
            not one of the expected voters.",
    },
    ErrorInfo {
        code: 95,
        name: "INVALID_UPDATE_VERSION",
        retriable: false,
        message: "The given update version was invalid.",
    },
    ErrorInfo {
        code: 96,
        name: "FEATURE_UPDATE_FAILED",
        retriable: false,
        message: "Unable to update finalized features due to an unexpected server error.",
    },
    ErrorInfo {
        code: 97,
        name: "PRINCIPAL_DESERIALIZATION_FAILURE",
        retriable: false,
        message: "Request principal deserialization failed during forwarding. This indicates an \
            internal error on the broker cluster security setup.",
    },
    ErrorInfo {
        code: 98,
        name: "SNAPSHOT_NOT_FOUND",
        retriable: false,
        message: "Requested snapshot was not found.",
    },
    ErrorInfo {
        code: 99,
        name: "POSITION_OUT_OF_RANGE",
        retriable: false,
        message: "Requested position is not greater than or equal to zero, and less than the size \
            of the snapshot.",
    },
    ErrorInfo {
        code: 100,
        name: "UNKNOWN_TOPIC_ID",
        retriable: true,
        message: "This server does not host this topic ID.",
    },
    ErrorInfo {
        code: 101,
        name: "DUPLICATE_BROKER_REGISTRATION",
        retriable: false,
        message: "This broker ID is already in use.",
    },
    ErrorInfo {
        code: 102,
        name: "BROKER_ID_NOT_REGISTERED",
        retriable: false,
        message: "The given broker ID was not registered.",
    },
    ErrorInfo {
        code: 103,
        name: "INCONSISTENT_TOPIC_ID",
        retriable: true,
        message: "The log's topic ID did not match the topic ID in the request.",
    },
    ErrorInfo {
        code: 104,
        name: "INCONSISTENT_CLUSTER_ID",
        retriable: false,
        message: "The clusterId in the request does not match that found on the server.",
    },
    ErrorInfo {
        code: 105,
        name: "TRANSACTIONAL_ID_NOT_FOUND",
        retriable: false,
        message: "The transactionalId could not be found.",
    },
    ErrorInfo {
        code: 106,
        name: "FETCH_SESSION_TOPIC_ID_ERROR",
        retriable: true,
        message: "The fetch session encountered inconsistent topic ID usage.",
    },
    ErrorInfo {
        code: 107,
        name: "INELIGIBLE_REPLICA",
        retriable: false,
        message: "The new ISR contains at least one ineligible replica.",
    },
    ErrorInfo {
        code: 108,
        name: "NEW_LEADER_ELECTED",
        retriable: false,
        message: "The AlterPartition request successfully updated the partition state but the \
            leader has changed.",
    },
    ErrorInfo {
        code: 109,
        name: "OFFSET_MOVED_TO_TIERED_STORAGE",
        retriable: false,
        message: "The requested offset is moved to tiered storage.",
    },
    ErrorInfo {
        code: 110,
        name: "FENCED_MEMBER_EPOCH",
        retriable: false,
        message: "The member epoch is fenced by the group coordinator. The member must abandon \
            all its partitions and rejoin.",
    },
    ErrorInfo {
        code: 111,
        name: "UNRELEASED_INSTANCE_ID",
        retriable: false,
        message: "The instance ID is still used by another member in the consumer group. That \
            member must leave first.",
    },
    ErrorInfo {
        code: 112,
        name: "UNSUPPORTED_ASSIGNOR",
        retriable: false,
        message: "The assignor or its version range is not supported by the consumer group.",
    },
    ErrorInfo {
        code: 113,
        name: "STALE_MEMBER_EPOCH",
        retriable: false,
        message: "The member epoch is stale. The member must retry after receiving its updated \
            member epoch via the ConsumerGroupHeartbeat API.",
    },
    ErrorInfo {
        code: 114,
        name: "MISMATCHED_ENDPOINT_TYPE",
        retriable: false,
        message: "The request was sent to an endpoint of the wrong type.",
    },
    ErrorInfo {
        code: 115,
        name: "UNSUPPORTED_ENDPOINT_TYPE",
        retriable: false,
        message: "This endpoint type is not supported yet.",
    },
    ErrorInfo {
        code: 116,
        name: "UNKNOWN_CONTROLLER_ID",
        retriable: false,
        message: "This controller ID is not known.",
    },
    ErrorInfo {
        code: 117,
        name: "UNKNOWN_SUBSCRIPTION_ID",
        retriable: false,
        message: "Client sent a push telemetry request with an invalid or outdated subscription \
            ID.",
    },
    ErrorInfo {
        code: 118,
        name: "TELEMETRY_TOO_LARGE",
        retriable: false,
        message: "Client sent a push telemetry request larger than the maximum size the broker \
            will accept.",
    },
    ErrorInfo {
        code: 119,
        name: "INVALID_REGISTRATION",
        retriable: false,
        message: "The controller has considered the broker registration to be invalid.",
    },
    ErrorInfo {
        code: 120,
        name: "TRANSACTION_ABORTABLE",
        retriable: false,
        message: "The server encountered an error with the transaction. The client can abort the \
            transaction to continue using this transactional ID.",
    },
    ErrorInfo {
        code: 121,
        name: "INVALID_RECORD_STATE",
        retriable: false,
        message: "The record state is invalid. The acknowledgement of delivery could not be \
            completed.",
    },
    ErrorInfo {
        code: 122,
        name: "SHARE_SESSION_NOT_FOUND",
        retriable: true,
        message: "The share session was not found.",
    },
    ErrorInfo {
        code: 123,
        name: "INVALID_SHARE_SESSION_EPOCH",
        retriable: true,
        message: "The share session epoch is invalid.",
    },
    ErrorInfo {
        code: 124,
        name: "FENCED_STATE_EPOCH",
        retriable: false,
        message: "The share coordinator rejected the request because the share-group state epoch \
            did not match.",
    },
    ErrorInfo {
        code: 125,
        name: "INVALID_VOTER_KEY",
        retriable: false,
        message: "The voter key doesn't match the receiving replica's key.",
    },
    ErrorInfo {
        code: 126,
        name: "DUPLICATE_VOTER",
        retriable: false,
        message: "The voter is already part of the set of voters.",
    },
    ErrorInfo {
        code: 127,
        name: "VOTER_NOT_FOUND",
        retriable: false,
        message: "The voter is not part of the set of voters.",
    },
    ErrorInfo {
        code: 128,
        name: "INVALID_REGULAR_EXPRESSION",
        retriable: false,
        message: "The regular expression is not valid.",
    },
    ErrorInfo {
        code: 129,
        name: "REBOOTSTRAP_REQUIRED",
        retriable: false,
        message: "Client metadata is stale. The client should rebootstrap to obtain new metadata.",
    },
    ErrorInfo {
        code: 130,
        name: "STREAMS_INVALID_TOPOLOGY",
        retriable: false,
        message: "The supplied topology is invalid.",
    },
    ErrorInfo {
        code: 131,
        name: "STREAMS_INVALID_TOPOLOGY_EPOCH",
        retriable: false,
        message: "The supplied topology epoch is invalid.",
    },
    ErrorInfo {
        code: 132,
        name: "STREAMS_TOPOLOGY_FENCED",
        retriable: false,
        message: "The supplied topology epoch is outdated.",
    },
    ErrorInfo {
        code: 133,
        name: "SHARE_SESSION_LIMIT_REACHED",
        retriable: true,
        message: "The limit of share sessions has been reached.",
    },
];

/// The row for `code`, if Kafka defines it.
#[must_use]
pub fn lookup(code: i16) -> Option<&'static ErrorInfo> {
    let table: &'static [ErrorInfo] = ERRORS;
    table
        .binary_search_by_key(&code, |e| e.code)
        .ok()
        .map(|i| &table[i])
}

/// The name for `code` (e.g. `"NOT_LEADER_OR_FOLLOWER"`), or `None`.
#[must_use]
pub fn name(code: i16) -> Option<&'static str> {
    lookup(code).map(|e| e.name)
}

/// The code for a name, case-insensitive, or `None`.
#[must_use]
pub fn code_by_name(name: &str) -> Option<i16> {
    ERRORS
        .iter()
        .find(|e| e.name.eq_ignore_ascii_case(name))
        .map(|e| e.code)
}

/// A display helper: `ErrorCodeDisplay(code)` prints `"NAME (code)"` or
/// `"UNKNOWN_ERROR_CODE(code)"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCodeDisplay(pub i16);

impl fmt::Display for ErrorCodeDisplay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let code = self.0;
        match name(code) {
            Some(name) => write!(f, "{name} ({code})"),
            None => write!(f, "UNKNOWN_ERROR_CODE({code})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_with_unique_codes() {
        assert!(ERRORS.windows(2).all(|w| w[0].code < w[1].code));
    }

    #[test]
    fn table_covers_minus_one_to_133_without_gaps() {
        assert_eq!(ERRORS.len(), 135);
        assert_eq!(ERRORS[0].code, -1);
        assert_eq!(ERRORS.last().map(|e| e.code), Some(133));
        for (i, e) in ERRORS.iter().enumerate() {
            assert_eq!(
                usize::try_from(e.code + 1).ok(),
                Some(i),
                "gap before {}",
                e.name
            );
        }
    }

    #[test]
    fn names_are_upper_snake_case_and_unique() {
        for e in ERRORS {
            assert!(!e.name.is_empty());
            assert!(
                e.name.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'),
                "bad name {}",
                e.name
            );
            assert_eq!(ERRORS.iter().filter(|o| o.name == e.name).count(), 1);
        }
    }

    #[test]
    fn lookup_known_codes() {
        assert_eq!(name(-1), Some("UNKNOWN_SERVER_ERROR"));
        assert_eq!(name(0), Some("NONE"));
        assert_eq!(name(3), Some("UNKNOWN_TOPIC_OR_PARTITION"));
        assert_eq!(name(6), Some("NOT_LEADER_OR_FOLLOWER"));
        assert_eq!(name(16), Some("NOT_COORDINATOR"));
        assert_eq!(name(35), Some("UNSUPPORTED_VERSION"));
        assert_eq!(name(47), Some("INVALID_PRODUCER_EPOCH"));
        assert_eq!(name(90), Some("PRODUCER_FENCED"));
        assert_eq!(name(100), Some("UNKNOWN_TOPIC_ID"));
        assert_eq!(name(133), Some("SHARE_SESSION_LIMIT_REACHED"));

        let e = lookup(6).unwrap();
        assert_eq!(e.code, 6);
        assert!(e.retriable);
        let leader_msg = "For requests intended only for the leader,";
        assert!(e.message.starts_with(leader_msg));
        assert_eq!(lookup(7).unwrap().message, "The request timed out.");
    }

    #[test]
    fn retriable_flags_of_common_codes() {
        let retriable = [
            2, 3, 5, 6, 7, 9, 13, 14, 15, 16, 19, 20, 41, 51, 56, 89, 100, 133,
        ];
        let not_retriable = [
            -1, 0, 1, 8, 10, 17, 22, 25, 27, 29, 35, 42, 47, 48, 59, 90, 129,
        ];
        for code in retriable {
            assert!(lookup(code).unwrap().retriable, "{code}");
        }
        for code in not_retriable {
            assert!(!lookup(code).unwrap().retriable, "{code}");
        }
        assert_eq!(ERRORS.iter().filter(|e| e.retriable).count(), 32);
    }

    #[test]
    fn messages_are_present_except_for_none() {
        for e in ERRORS {
            if e.code == NONE {
                assert!(e.message.is_empty());
            } else {
                assert!(e.message.ends_with('.'), "message of {}", e.name);
                assert!(!e.message.contains("  "), "message of {}", e.name);
            }
        }
    }

    #[test]
    fn every_name_round_trips() {
        for e in ERRORS {
            assert_eq!(code_by_name(e.name), Some(e.code));
            assert_eq!(code_by_name(&e.name.to_ascii_lowercase()), Some(e.code));
            assert_eq!(name(e.code), Some(e.name));
        }
        assert_eq!(code_by_name("not_leader_or_follower"), Some(6));
        assert_eq!(code_by_name("NOT_A_KAFKA_ERROR"), None);
        assert_eq!(code_by_name(""), None);
    }

    #[test]
    fn unknown_codes() {
        for code in [-2, 134, 1000, i16::MIN, i16::MAX] {
            assert_eq!(lookup(code), None);
            assert_eq!(name(code), None);
        }
        assert_eq!(ErrorCodeDisplay(134).to_string(), "UNKNOWN_ERROR_CODE(134)");
        assert_eq!(ErrorCodeDisplay(-2).to_string(), "UNKNOWN_ERROR_CODE(-2)");
    }

    #[test]
    fn display_known_codes() {
        assert_eq!(
            ErrorCodeDisplay(6).to_string(),
            "NOT_LEADER_OR_FOLLOWER (6)"
        );
        assert_eq!(
            ErrorCodeDisplay(-1).to_string(),
            "UNKNOWN_SERVER_ERROR (-1)"
        );
        assert_eq!(ErrorCodeDisplay(0).to_string(), "NONE (0)");
    }

    #[test]
    fn constants_match_the_table() {
        // Pairs each constant with its own identifier, so a constant bound to the wrong code
        // (or missing from this list) is caught.
        macro_rules! named {
            ($($c:ident),* $(,)?) => {
                [$(($c, stringify!($c))),*]
            };
        }
        let named: [(i16, &str); 135] = named!(
            UNKNOWN_SERVER_ERROR,
            NONE,
            OFFSET_OUT_OF_RANGE,
            CORRUPT_MESSAGE,
            UNKNOWN_TOPIC_OR_PARTITION,
            INVALID_FETCH_SIZE,
            LEADER_NOT_AVAILABLE,
            NOT_LEADER_OR_FOLLOWER,
            REQUEST_TIMED_OUT,
            BROKER_NOT_AVAILABLE,
            REPLICA_NOT_AVAILABLE,
            MESSAGE_TOO_LARGE,
            STALE_CONTROLLER_EPOCH,
            OFFSET_METADATA_TOO_LARGE,
            NETWORK_EXCEPTION,
            COORDINATOR_LOAD_IN_PROGRESS,
            COORDINATOR_NOT_AVAILABLE,
            NOT_COORDINATOR,
            INVALID_TOPIC_EXCEPTION,
            RECORD_LIST_TOO_LARGE,
            NOT_ENOUGH_REPLICAS,
            NOT_ENOUGH_REPLICAS_AFTER_APPEND,
            INVALID_REQUIRED_ACKS,
            ILLEGAL_GENERATION,
            INCONSISTENT_GROUP_PROTOCOL,
            INVALID_GROUP_ID,
            UNKNOWN_MEMBER_ID,
            INVALID_SESSION_TIMEOUT,
            REBALANCE_IN_PROGRESS,
            INVALID_COMMIT_OFFSET_SIZE,
            TOPIC_AUTHORIZATION_FAILED,
            GROUP_AUTHORIZATION_FAILED,
            CLUSTER_AUTHORIZATION_FAILED,
            INVALID_TIMESTAMP,
            UNSUPPORTED_SASL_MECHANISM,
            ILLEGAL_SASL_STATE,
            UNSUPPORTED_VERSION,
            TOPIC_ALREADY_EXISTS,
            INVALID_PARTITIONS,
            INVALID_REPLICATION_FACTOR,
            INVALID_REPLICA_ASSIGNMENT,
            INVALID_CONFIG,
            NOT_CONTROLLER,
            INVALID_REQUEST,
            UNSUPPORTED_FOR_MESSAGE_FORMAT,
            POLICY_VIOLATION,
            OUT_OF_ORDER_SEQUENCE_NUMBER,
            DUPLICATE_SEQUENCE_NUMBER,
            INVALID_PRODUCER_EPOCH,
            INVALID_TXN_STATE,
            INVALID_PRODUCER_ID_MAPPING,
            INVALID_TRANSACTION_TIMEOUT,
            CONCURRENT_TRANSACTIONS,
            TRANSACTION_COORDINATOR_FENCED,
            TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
            SECURITY_DISABLED,
            OPERATION_NOT_ATTEMPTED,
            KAFKA_STORAGE_ERROR,
            LOG_DIR_NOT_FOUND,
            SASL_AUTHENTICATION_FAILED,
            UNKNOWN_PRODUCER_ID,
            REASSIGNMENT_IN_PROGRESS,
            DELEGATION_TOKEN_AUTH_DISABLED,
            DELEGATION_TOKEN_NOT_FOUND,
            DELEGATION_TOKEN_OWNER_MISMATCH,
            DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
            DELEGATION_TOKEN_AUTHORIZATION_FAILED,
            DELEGATION_TOKEN_EXPIRED,
            INVALID_PRINCIPAL_TYPE,
            NON_EMPTY_GROUP,
            GROUP_ID_NOT_FOUND,
            FETCH_SESSION_ID_NOT_FOUND,
            INVALID_FETCH_SESSION_EPOCH,
            LISTENER_NOT_FOUND,
            TOPIC_DELETION_DISABLED,
            FENCED_LEADER_EPOCH,
            UNKNOWN_LEADER_EPOCH,
            UNSUPPORTED_COMPRESSION_TYPE,
            STALE_BROKER_EPOCH,
            OFFSET_NOT_AVAILABLE,
            MEMBER_ID_REQUIRED,
            PREFERRED_LEADER_NOT_AVAILABLE,
            GROUP_MAX_SIZE_REACHED,
            FENCED_INSTANCE_ID,
            ELIGIBLE_LEADERS_NOT_AVAILABLE,
            ELECTION_NOT_NEEDED,
            NO_REASSIGNMENT_IN_PROGRESS,
            GROUP_SUBSCRIBED_TO_TOPIC,
            INVALID_RECORD,
            UNSTABLE_OFFSET_COMMIT,
            THROTTLING_QUOTA_EXCEEDED,
            PRODUCER_FENCED,
            RESOURCE_NOT_FOUND,
            DUPLICATE_RESOURCE,
            UNACCEPTABLE_CREDENTIAL,
            INCONSISTENT_VOTER_SET,
            INVALID_UPDATE_VERSION,
            FEATURE_UPDATE_FAILED,
            PRINCIPAL_DESERIALIZATION_FAILURE,
            SNAPSHOT_NOT_FOUND,
            POSITION_OUT_OF_RANGE,
            UNKNOWN_TOPIC_ID,
            DUPLICATE_BROKER_REGISTRATION,
            BROKER_ID_NOT_REGISTERED,
            INCONSISTENT_TOPIC_ID,
            INCONSISTENT_CLUSTER_ID,
            TRANSACTIONAL_ID_NOT_FOUND,
            FETCH_SESSION_TOPIC_ID_ERROR,
            INELIGIBLE_REPLICA,
            NEW_LEADER_ELECTED,
            OFFSET_MOVED_TO_TIERED_STORAGE,
            FENCED_MEMBER_EPOCH,
            UNRELEASED_INSTANCE_ID,
            UNSUPPORTED_ASSIGNOR,
            STALE_MEMBER_EPOCH,
            MISMATCHED_ENDPOINT_TYPE,
            UNSUPPORTED_ENDPOINT_TYPE,
            UNKNOWN_CONTROLLER_ID,
            UNKNOWN_SUBSCRIPTION_ID,
            TELEMETRY_TOO_LARGE,
            INVALID_REGISTRATION,
            TRANSACTION_ABORTABLE,
            INVALID_RECORD_STATE,
            SHARE_SESSION_NOT_FOUND,
            INVALID_SHARE_SESSION_EPOCH,
            FENCED_STATE_EPOCH,
            INVALID_VOTER_KEY,
            DUPLICATE_VOTER,
            VOTER_NOT_FOUND,
            INVALID_REGULAR_EXPRESSION,
            REBOOTSTRAP_REQUIRED,
            STREAMS_INVALID_TOPOLOGY,
            STREAMS_INVALID_TOPOLOGY_EPOCH,
            STREAMS_TOPOLOGY_FENCED,
            SHARE_SESSION_LIMIT_REACHED,
        );
        assert_eq!(named.len(), ERRORS.len());
        for (code, const_name) in named {
            assert_eq!(code_by_name(const_name), Some(code), "{const_name}");
            assert_eq!(name(code), Some(const_name));
        }
    }
}
