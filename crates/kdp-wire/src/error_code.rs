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
    /// The error code.
    pub code: ErrorCode,
    /// Kafka's enum name for the code, e.g. `"NOT_LEADER_OR_FOLLOWER"`.
    pub name: &'static str,
    /// Whether Kafka's exception for the code is a `RetriableException`.
    pub retriable: bool,
    /// Kafka's default message for the code (empty for `NONE`).
    pub message: &'static str,
}

/// A Kafka error code as sent on the wire, known or not.
///
/// Every message field and per-key error of the schema type `int16` named
/// `ErrorCode` has this type, so code that reasons about errors asks it
/// (`p.error_code.is_retriable()`, `p.error_code == ErrorCode::NONE`) rather
/// than comparing numbers. On the wire and in JSON it is the bare `int16`.
#[derive(
    Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct ErrorCode(pub i16);

/// Declares the table once; the `ErrorCode` constants and `ERRORS` both
/// come from it, so they cannot disagree.
/// One line per code: `code NAME retriable "Kafka's message";`.
macro_rules! error_codes {
    ($($code:literal $name:ident $retriable:literal $message:literal;)*) => {
        impl ErrorCode {
            $(
                #[doc = concat!("Code ", stringify!($code), ": ", $message)]
                pub const $name: ErrorCode = ErrorCode($code);
            )*
        }

        /// Every error Kafka defines, sorted by code.
        pub const ERRORS: &[ErrorInfo] = &[
            $(ErrorInfo {
                code: ErrorCode($code),
                name: stringify!($name),
                retriable: $retriable,
                message: $message,
            },)*
        ];
    };
}

error_codes! {
     -1 UNKNOWN_SERVER_ERROR                  false "The server experienced an unexpected error when processing the request.";
      0 NONE                                  false "";
      1 OFFSET_OUT_OF_RANGE                   false "The requested offset is not within the range of offsets maintained by the server.";
      2 CORRUPT_MESSAGE                       true  "This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic, or is otherwise corrupt.";
      3 UNKNOWN_TOPIC_OR_PARTITION            true  "This server does not host this topic-partition.";
      4 INVALID_FETCH_SIZE                    false "The requested fetch size is invalid.";
      5 LEADER_NOT_AVAILABLE                  true  "There is no leader for this topic-partition as we are in the middle of a leadership election.";
      6 NOT_LEADER_OR_FOLLOWER                true  "For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition.";
      7 REQUEST_TIMED_OUT                     true  "The request timed out.";
      8 BROKER_NOT_AVAILABLE                  false "The broker is not available.";
      9 REPLICA_NOT_AVAILABLE                 true  "The replica is not available for the requested topic-partition. Produce/Fetch requests and other requests intended only for the leader or follower return NOT_LEADER_OR_FOLLOWER if the broker is not a replica of the topic-partition.";
     10 MESSAGE_TOO_LARGE                     false "The request included a message larger than the max message size the server will accept.";
     11 STALE_CONTROLLER_EPOCH                false "The controller moved to another broker.";
     12 OFFSET_METADATA_TOO_LARGE             false "The metadata field of the offset request was too large.";
     13 NETWORK_EXCEPTION                     true  "The server disconnected before a response was received.";
     14 COORDINATOR_LOAD_IN_PROGRESS          true  "The coordinator is loading and hence can't process requests.";
     15 COORDINATOR_NOT_AVAILABLE             true  "The coordinator is not available.";
     16 NOT_COORDINATOR                       true  "This is not the correct coordinator.";
     17 INVALID_TOPIC_EXCEPTION               false "The request attempted to perform an operation on an invalid topic.";
     18 RECORD_LIST_TOO_LARGE                 false "The request included message batch larger than the configured segment size on the server.";
     19 NOT_ENOUGH_REPLICAS                   true  "Messages are rejected since there are fewer in-sync replicas than required.";
     20 NOT_ENOUGH_REPLICAS_AFTER_APPEND      true  "Messages are written to the log, but to fewer in-sync replicas than required.";
     21 INVALID_REQUIRED_ACKS                 false "Produce request specified an invalid value for required acks.";
     22 ILLEGAL_GENERATION                    false "Specified group generation id is not valid.";
     23 INCONSISTENT_GROUP_PROTOCOL           false "The group member's supported protocols are incompatible with those of existing members or first group member tried to join with empty protocol type or empty protocol list.";
     24 INVALID_GROUP_ID                      false "The group id is invalid.";
     25 UNKNOWN_MEMBER_ID                     false "The coordinator is not aware of this member.";
     26 INVALID_SESSION_TIMEOUT               false "The session timeout is not within the range allowed by the broker (as configured by group.min.session.timeout.ms and group.max.session.timeout.ms).";
     27 REBALANCE_IN_PROGRESS                 false "The group is rebalancing, so a rejoin is needed.";
     28 INVALID_COMMIT_OFFSET_SIZE            false "The committing offset data size is not valid.";
     29 TOPIC_AUTHORIZATION_FAILED            false "Topic authorization failed.";
     30 GROUP_AUTHORIZATION_FAILED            false "Group authorization failed.";
     31 CLUSTER_AUTHORIZATION_FAILED          false "Cluster authorization failed.";
     32 INVALID_TIMESTAMP                     false "The timestamp of the message is out of acceptable range.";
     33 UNSUPPORTED_SASL_MECHANISM            false "The broker does not support the requested SASL mechanism.";
     34 ILLEGAL_SASL_STATE                    false "Request is not valid given the current SASL state.";
     35 UNSUPPORTED_VERSION                   false "The version of API is not supported.";
     36 TOPIC_ALREADY_EXISTS                  false "Topic with this name already exists.";
     37 INVALID_PARTITIONS                    false "Number of partitions is below 1.";
     38 INVALID_REPLICATION_FACTOR            false "Replication factor is below 1 or larger than the number of available brokers.";
     39 INVALID_REPLICA_ASSIGNMENT            false "Replica assignment is invalid.";
     40 INVALID_CONFIG                        false "Configuration is invalid.";
     41 NOT_CONTROLLER                        true  "This is not the correct controller for this cluster.";
     42 INVALID_REQUEST                       false "This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details.";
     43 UNSUPPORTED_FOR_MESSAGE_FORMAT        false "The message format version on the broker does not support the request.";
     44 POLICY_VIOLATION                      false "Request parameters do not satisfy the configured policy.";
     45 OUT_OF_ORDER_SEQUENCE_NUMBER          false "The broker received an out of order sequence number.";
     46 DUPLICATE_SEQUENCE_NUMBER             false "The broker received a duplicate sequence number.";
     47 INVALID_PRODUCER_EPOCH                false "Producer attempted to produce with an old epoch.";
     48 INVALID_TXN_STATE                     false "The producer attempted a transactional operation in an invalid state.";
     49 INVALID_PRODUCER_ID_MAPPING           false "The producer attempted to use a producer id which is not currently assigned to its transactional id.";
     50 INVALID_TRANSACTION_TIMEOUT           false "The transaction timeout is larger than the maximum value allowed by the broker (as configured by transaction.max.timeout.ms).";
     51 CONCURRENT_TRANSACTIONS               true  "The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing.";
     52 TRANSACTION_COORDINATOR_FENCED        false "Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current coordinator for a given producer.";
     53 TRANSACTIONAL_ID_AUTHORIZATION_FAILED false "Transactional Id authorization failed.";
     54 SECURITY_DISABLED                     false "Security features are disabled.";
     55 OPERATION_NOT_ATTEMPTED               false "The broker did not attempt to execute this operation. This may happen for batched RPCs where some operations in the batch failed, causing the broker to respond without trying the rest.";
     56 KAFKA_STORAGE_ERROR                   true  "Disk error when trying to access log file on the disk.";
     57 LOG_DIR_NOT_FOUND                     false "The user-specified log directory is not found in the broker config.";
     58 SASL_AUTHENTICATION_FAILED            false "SASL Authentication failed.";
     59 UNKNOWN_PRODUCER_ID                   false "This exception is raised by the broker if it could not locate the producer metadata associated with the producerId in question. This could happen if, for instance, the producer's records were deleted because their retention time had elapsed. Once the last records of the producerId are removed, the producer's metadata is removed from the broker, and future appends by the producer will return this exception.";
     60 REASSIGNMENT_IN_PROGRESS              false "A partition reassignment is in progress.";
     61 DELEGATION_TOKEN_AUTH_DISABLED        false "Delegation Token feature is not enabled.";
     62 DELEGATION_TOKEN_NOT_FOUND            false "Delegation Token is not found on server.";
     63 DELEGATION_TOKEN_OWNER_MISMATCH       false "Specified Principal is not valid Owner/Renewer.";
     64 DELEGATION_TOKEN_REQUEST_NOT_ALLOWED  false "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels.";
     65 DELEGATION_TOKEN_AUTHORIZATION_FAILED false "Delegation Token authorization failed.";
     66 DELEGATION_TOKEN_EXPIRED              false "Delegation Token is expired.";
     67 INVALID_PRINCIPAL_TYPE                false "Supplied principalType is not supported.";
     68 NON_EMPTY_GROUP                       false "The group is not empty.";
     69 GROUP_ID_NOT_FOUND                    false "The group id does not exist.";
     70 FETCH_SESSION_ID_NOT_FOUND            true  "The fetch session ID was not found.";
     71 INVALID_FETCH_SESSION_EPOCH           true  "The fetch session epoch is invalid.";
     72 LISTENER_NOT_FOUND                    true  "There is no listener on the leader broker that matches the listener on which metadata request was processed.";
     73 TOPIC_DELETION_DISABLED               false "Topic deletion is disabled.";
     74 FENCED_LEADER_EPOCH                   true  "The leader epoch in the request is older than the epoch on the broker.";
     75 UNKNOWN_LEADER_EPOCH                  true  "The leader epoch in the request is newer than the epoch on the broker.";
     76 UNSUPPORTED_COMPRESSION_TYPE          false "The requesting client does not support the compression type of given partition.";
     77 STALE_BROKER_EPOCH                    false "Broker epoch has changed.";
     78 OFFSET_NOT_AVAILABLE                  true  "The leader high watermark has not caught up from a recent leader election so the offsets cannot be guaranteed to be monotonically increasing.";
     79 MEMBER_ID_REQUIRED                    false "The group member needs to have a valid member id before actually entering a consumer group.";
     80 PREFERRED_LEADER_NOT_AVAILABLE        true  "The preferred leader was not available.";
     81 GROUP_MAX_SIZE_REACHED                false "The group has reached its maximum size.";
     82 FENCED_INSTANCE_ID                    false "The broker rejected this static consumer since another consumer with the same group.instance.id has registered with a different member.id.";
     83 ELIGIBLE_LEADERS_NOT_AVAILABLE        true  "Eligible topic partition leaders are not available.";
     84 ELECTION_NOT_NEEDED                   true  "Leader election not needed for topic partition.";
     85 NO_REASSIGNMENT_IN_PROGRESS           false "No partition reassignment is in progress.";
     86 GROUP_SUBSCRIBED_TO_TOPIC             false "Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.";
     87 INVALID_RECORD                        false "This record has failed the validation on broker and hence will be rejected.";
     88 UNSTABLE_OFFSET_COMMIT                true  "There are unstable offsets that need to be cleared.";
     89 THROTTLING_QUOTA_EXCEEDED             true  "The throttling quota has been exceeded.";
     90 PRODUCER_FENCED                       false "There is a newer producer with the same transactionalId which fences the current one.";
     91 RESOURCE_NOT_FOUND                    false "A request illegally referred to a resource that does not exist.";
     92 DUPLICATE_RESOURCE                    false "A request illegally referred to the same resource twice.";
     93 UNACCEPTABLE_CREDENTIAL               false "Requested credential would not meet criteria for acceptability.";
     94 INCONSISTENT_VOTER_SET                false "Indicates that the either the sender or recipient of a voter-only request is not one of the expected voters.";
     95 INVALID_UPDATE_VERSION                false "The given update version was invalid.";
     96 FEATURE_UPDATE_FAILED                 false "Unable to update finalized features due to an unexpected server error.";
     97 PRINCIPAL_DESERIALIZATION_FAILURE     false "Request principal deserialization failed during forwarding. This indicates an internal error on the broker cluster security setup.";
     98 SNAPSHOT_NOT_FOUND                    false "Requested snapshot was not found.";
     99 POSITION_OUT_OF_RANGE                 false "Requested position is not greater than or equal to zero, and less than the size of the snapshot.";
    100 UNKNOWN_TOPIC_ID                      true  "This server does not host this topic ID.";
    101 DUPLICATE_BROKER_REGISTRATION         false "This broker ID is already in use.";
    102 BROKER_ID_NOT_REGISTERED              false "The given broker ID was not registered.";
    103 INCONSISTENT_TOPIC_ID                 true  "The log's topic ID did not match the topic ID in the request.";
    104 INCONSISTENT_CLUSTER_ID               false "The clusterId in the request does not match that found on the server.";
    105 TRANSACTIONAL_ID_NOT_FOUND            false "The transactionalId could not be found.";
    106 FETCH_SESSION_TOPIC_ID_ERROR          true  "The fetch session encountered inconsistent topic ID usage.";
    107 INELIGIBLE_REPLICA                    false "The new ISR contains at least one ineligible replica.";
    108 NEW_LEADER_ELECTED                    false "The AlterPartition request successfully updated the partition state but the leader has changed.";
    109 OFFSET_MOVED_TO_TIERED_STORAGE        false "The requested offset is moved to tiered storage.";
    110 FENCED_MEMBER_EPOCH                   false "The member epoch is fenced by the group coordinator. The member must abandon all its partitions and rejoin.";
    111 UNRELEASED_INSTANCE_ID                false "The instance ID is still used by another member in the consumer group. That member must leave first.";
    112 UNSUPPORTED_ASSIGNOR                  false "The assignor or its version range is not supported by the consumer group.";
    113 STALE_MEMBER_EPOCH                    false "The member epoch is stale. The member must retry after receiving its updated member epoch via the ConsumerGroupHeartbeat API.";
    114 MISMATCHED_ENDPOINT_TYPE              false "The request was sent to an endpoint of the wrong type.";
    115 UNSUPPORTED_ENDPOINT_TYPE             false "This endpoint type is not supported yet.";
    116 UNKNOWN_CONTROLLER_ID                 false "This controller ID is not known.";
    117 UNKNOWN_SUBSCRIPTION_ID               false "Client sent a push telemetry request with an invalid or outdated subscription ID.";
    118 TELEMETRY_TOO_LARGE                   false "Client sent a push telemetry request larger than the maximum size the broker will accept.";
    119 INVALID_REGISTRATION                  false "The controller has considered the broker registration to be invalid.";
    120 TRANSACTION_ABORTABLE                 false "The server encountered an error with the transaction. The client can abort the transaction to continue using this transactional ID.";
    121 INVALID_RECORD_STATE                  false "The record state is invalid. The acknowledgement of delivery could not be completed.";
    122 SHARE_SESSION_NOT_FOUND               true  "The share session was not found.";
    123 INVALID_SHARE_SESSION_EPOCH           true  "The share session epoch is invalid.";
    124 FENCED_STATE_EPOCH                    false "The share coordinator rejected the request because the share-group state epoch did not match.";
    125 INVALID_VOTER_KEY                     false "The voter key doesn't match the receiving replica's key.";
    126 DUPLICATE_VOTER                       false "The voter is already part of the set of voters.";
    127 VOTER_NOT_FOUND                       false "The voter is not part of the set of voters.";
    128 INVALID_REGULAR_EXPRESSION            false "The regular expression is not valid.";
    129 REBOOTSTRAP_REQUIRED                  false "Client metadata is stale. The client should rebootstrap to obtain new metadata.";
    130 STREAMS_INVALID_TOPOLOGY              false "The supplied topology is invalid.";
    131 STREAMS_INVALID_TOPOLOGY_EPOCH        false "The supplied topology epoch is invalid.";
    132 STREAMS_TOPOLOGY_FENCED               false "The supplied topology epoch is outdated.";
    133 SHARE_SESSION_LIMIT_REACHED           true  "The limit of share sessions has been reached.";
}

impl ErrorCode {
    /// Kafka's row for this code, if Kafka defines it.
    #[must_use]
    pub fn info(self) -> Option<&'static ErrorInfo> {
        let table: &'static [ErrorInfo] = ERRORS;
        table
            .binary_search_by_key(&self, |e| e.code)
            .ok()
            .and_then(|i| table.get(i))
    }

    /// Kafka's enum name, e.g. `"NOT_LEADER_OR_FOLLOWER"`, or `None` for a code Kafka does
    /// not define.
    #[must_use]
    pub fn name(self) -> Option<&'static str> {
        self.info().map(|e| e.name)
    }

    /// Kafka's enum name, or `UNKNOWN_ERROR_CODE` for a code this table
    /// does not list (a newer broker's): what tables and metric labels show.
    #[must_use]
    pub fn label(self) -> &'static str {
        self.name().unwrap_or("UNKNOWN_ERROR_CODE")
    }

    /// Whether Kafka's exception for this code is retriable. Unknown codes are not: Kafka's
    /// clients map them to `UNKNOWN_SERVER_ERROR`.
    #[must_use]
    pub fn is_retriable(self) -> bool {
        self.info().is_some_and(|e| e.retriable)
    }

    /// Kafka's default message (empty for `NONE`), or `None` for an unknown code.
    #[must_use]
    pub fn message(self) -> Option<&'static str> {
        self.info().map(|e| e.message)
    }

    /// Whether this is `NONE`, i.e. no error.
    #[must_use]
    pub fn is_ok(self) -> bool {
        self == ErrorCode::NONE
    }

    /// The code for a name, case-insensitive.
    #[must_use]
    pub fn from_name(name: &str) -> Option<ErrorCode> {
        ERRORS
            .iter()
            .find(|e| e.name.eq_ignore_ascii_case(name))
            .map(|e| e.code)
    }
}

impl From<i16> for ErrorCode {
    fn from(code: i16) -> Self {
        ErrorCode(code)
    }
}

impl From<ErrorCode> for i16 {
    fn from(code: ErrorCode) -> Self {
        code.0
    }
}

/// `NOT_LEADER_OR_FOLLOWER(6)`, or `UNKNOWN_ERROR_CODE(1234)`.
impl fmt::Debug for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let code = self.0;
        let name = self.name().unwrap_or("UNKNOWN_ERROR_CODE");
        write!(f, "{name}({code})")
    }
}

/// `NOT_LEADER_OR_FOLLOWER (6)`, or `UNKNOWN_ERROR_CODE(1234)`.
impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let code = self.0;
        match self.name() {
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
        assert_eq!(ERRORS[0].code, ErrorCode(-1));
        assert_eq!(ERRORS.last().map(|e| e.code), Some(ErrorCode(133)));
        for (i, e) in ERRORS.iter().enumerate() {
            assert_eq!(
                usize::try_from(e.code.0 + 1).ok(),
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
        assert_eq!(ErrorCode(-1).name(), Some("UNKNOWN_SERVER_ERROR"));
        assert_eq!(ErrorCode(0).name(), Some("NONE"));
        assert_eq!(ErrorCode(3).name(), Some("UNKNOWN_TOPIC_OR_PARTITION"));
        assert_eq!(ErrorCode(6).name(), Some("NOT_LEADER_OR_FOLLOWER"));
        assert_eq!(ErrorCode(16).name(), Some("NOT_COORDINATOR"));
        assert_eq!(ErrorCode(35).name(), Some("UNSUPPORTED_VERSION"));
        assert_eq!(ErrorCode(47).name(), Some("INVALID_PRODUCER_EPOCH"));
        assert_eq!(ErrorCode(90).name(), Some("PRODUCER_FENCED"));
        assert_eq!(ErrorCode(100).name(), Some("UNKNOWN_TOPIC_ID"));
        assert_eq!(ErrorCode(133).name(), Some("SHARE_SESSION_LIMIT_REACHED"));

        let e = ErrorCode(6).info().unwrap();
        assert_eq!(e.code, ErrorCode(6));
        assert!(e.retriable);
        let leader_msg = "For requests intended only for the leader,";
        assert!(e.message.starts_with(leader_msg));
        assert_eq!(
            ErrorCode(7).info().unwrap().message,
            "The request timed out."
        );
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
            assert!(ErrorCode(code).info().unwrap().retriable, "{code}");
        }
        for code in not_retriable {
            assert!(!ErrorCode(code).info().unwrap().retriable, "{code}");
        }
        assert_eq!(ERRORS.iter().filter(|e| e.retriable).count(), 32);
    }

    #[test]
    fn messages_are_present_except_for_none() {
        for e in ERRORS {
            if e.code == ErrorCode::NONE {
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
            assert_eq!(ErrorCode::from_name(e.name), Some(e.code));
            assert_eq!(
                ErrorCode::from_name(&e.name.to_ascii_lowercase()),
                Some(e.code)
            );
            assert_eq!(e.code.name(), Some(e.name));
        }
        assert_eq!(
            ErrorCode::from_name("not_leader_or_follower"),
            Some(ErrorCode(6))
        );
        assert_eq!(ErrorCode::from_name("NOT_A_KAFKA_ERROR"), None);
        assert_eq!(ErrorCode::from_name(""), None);
    }

    #[test]
    fn unknown_codes() {
        for code in [-2, 134, 1000, i16::MIN, i16::MAX] {
            assert_eq!(ErrorCode(code).info(), None);
            assert_eq!(ErrorCode(code).name(), None);
        }
        assert_eq!(ErrorCode(134).to_string(), "UNKNOWN_ERROR_CODE(134)");
        assert_eq!(ErrorCode(-2).to_string(), "UNKNOWN_ERROR_CODE(-2)");
    }

    #[test]
    fn display_known_codes() {
        assert_eq!(ErrorCode(6).to_string(), "NOT_LEADER_OR_FOLLOWER (6)");
        assert_eq!(ErrorCode(-1).to_string(), "UNKNOWN_SERVER_ERROR (-1)");
        assert_eq!(ErrorCode(0).to_string(), "NONE (0)");
    }

    #[test]
    fn error_code_newtype() {
        let e = ErrorCode::from(6);
        assert_eq!(e, ErrorCode::NOT_LEADER_OR_FOLLOWER);
        assert_eq!(format!("{e:?}"), "NOT_LEADER_OR_FOLLOWER(6)");
        assert_eq!(e.to_string(), "NOT_LEADER_OR_FOLLOWER (6)");
        assert_eq!(e.name(), Some("NOT_LEADER_OR_FOLLOWER"));
        assert!(e.is_retriable() && !e.is_ok());
        assert_eq!(e.message(), ErrorCode(6).info().map(|i| i.message));
        assert_eq!(i16::from(e), 6);
        assert!(ErrorCode::NONE.is_ok());
        assert!(!ErrorCode::BROKER_NOT_AVAILABLE.is_retriable());
        assert_eq!(
            ErrorCode::from_name("request_timed_out"),
            Some(ErrorCode(7))
        );

        let unknown = ErrorCode(1234);
        assert_eq!(format!("{unknown:?}"), "UNKNOWN_ERROR_CODE(1234)");
        assert_eq!(unknown.to_string(), "UNKNOWN_ERROR_CODE(1234)");
        assert_eq!((unknown.name(), unknown.message()), (None, None));
        assert!(!unknown.is_retriable() && !unknown.is_ok());
        assert!(ErrorCode::UNKNOWN_SERVER_ERROR < ErrorCode::NONE);
    }
}
