//! Kafka's API keys, their names and where their flexible versions start.
//!
//! The header a message travels with depends on whether its version is
//! flexible, so framing needs this for every key, not just the ones kdp
//! decodes. Facts from Apache Kafka's message schemas.

/// One API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiInfo {
    /// The key as sent in request headers.
    pub key: i16,
    /// Kafka's name for the API, e.g. `"DescribeProducers"`.
    pub name: &'static str,
    /// The first flexible version, or `None` if no version is flexible.
    pub flexible_from: Option<i16>,
}

/// An API key as sent in a request header, known or not.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ApiKey(pub i16);

/// `flexible_from` for a row: a version, or `-` for none.
macro_rules! flexible_from {
    (-) => {
        None
    };
    ($v:literal) => {
        Some($v)
    };
}

/// Declares the table once; the `i16` constants, the `ApiKey` constants and
/// `APIS` all come from it. One line per key, in key order:
/// `key CONST_NAME SchemaName first-flexible-version-or-dash;`.
macro_rules! api_keys {
    ($($key:literal $const:ident $name:ident $flex:tt;)*) => {
        $(
            #[doc = concat!("API key ", stringify!($key), ", ", stringify!($name), ".")]
            pub const $const: i16 = $key;
        )*

        impl ApiKey {
            $(
                #[doc = concat!("API key ", stringify!($key), ", ", stringify!($name), ".")]
                pub const $const: ApiKey = ApiKey($key);
            )*
        }

        /// Every API key Kafka defines, indexed by key.
        pub const APIS: &[ApiInfo] = &[
            $(ApiInfo {
                key: $key,
                name: stringify!($name),
                flexible_from: flexible_from!($flex),
            },)*
        ];
    };
}

api_keys! {
     0 PRODUCE                         Produce                      9;
     1 FETCH                           Fetch                        12;
     2 LIST_OFFSETS                    ListOffsets                  6;
     3 METADATA                        Metadata                     9;
     4 LEADER_AND_ISR                  LeaderAndIsr                 4;
     5 STOP_REPLICA                    StopReplica                  2;
     6 UPDATE_METADATA                 UpdateMetadata               6;
     7 CONTROLLED_SHUTDOWN             ControlledShutdown           3;
     8 OFFSET_COMMIT                   OffsetCommit                 8;
     9 OFFSET_FETCH                    OffsetFetch                  6;
    10 FIND_COORDINATOR                FindCoordinator              3;
    11 JOIN_GROUP                      JoinGroup                    6;
    12 HEARTBEAT                       Heartbeat                    4;
    13 LEAVE_GROUP                     LeaveGroup                   4;
    14 SYNC_GROUP                      SyncGroup                    4;
    15 DESCRIBE_GROUPS                 DescribeGroups               5;
    16 LIST_GROUPS                     ListGroups                   3;
    17 SASL_HANDSHAKE                  SaslHandshake                -;
    18 API_VERSIONS                    ApiVersions                  3;
    19 CREATE_TOPICS                   CreateTopics                 5;
    20 DELETE_TOPICS                   DeleteTopics                 4;
    21 DELETE_RECORDS                  DeleteRecords                2;
    22 INIT_PRODUCER_ID                InitProducerId               2;
    23 OFFSET_FOR_LEADER_EPOCH         OffsetForLeaderEpoch         4;
    24 ADD_PARTITIONS_TO_TXN           AddPartitionsToTxn           3;
    25 ADD_OFFSETS_TO_TXN              AddOffsetsToTxn              3;
    26 END_TXN                         EndTxn                       3;
    27 WRITE_TXN_MARKERS               WriteTxnMarkers              1;
    28 TXN_OFFSET_COMMIT               TxnOffsetCommit              3;
    29 DESCRIBE_ACLS                   DescribeAcls                 2;
    30 CREATE_ACLS                     CreateAcls                   2;
    31 DELETE_ACLS                     DeleteAcls                   2;
    32 DESCRIBE_CONFIGS                DescribeConfigs              4;
    33 ALTER_CONFIGS                   AlterConfigs                 2;
    34 ALTER_REPLICA_LOG_DIRS          AlterReplicaLogDirs          2;
    35 DESCRIBE_LOG_DIRS               DescribeLogDirs              2;
    36 SASL_AUTHENTICATE               SaslAuthenticate             2;
    37 CREATE_PARTITIONS               CreatePartitions             2;
    38 CREATE_DELEGATION_TOKEN         CreateDelegationToken        2;
    39 RENEW_DELEGATION_TOKEN          RenewDelegationToken         2;
    40 EXPIRE_DELEGATION_TOKEN         ExpireDelegationToken        2;
    41 DESCRIBE_DELEGATION_TOKEN       DescribeDelegationToken      2;
    42 DELETE_GROUPS                   DeleteGroups                 2;
    43 ELECT_LEADERS                   ElectLeaders                 2;
    44 INCREMENTAL_ALTER_CONFIGS       IncrementalAlterConfigs      1;
    45 ALTER_PARTITION_REASSIGNMENTS   AlterPartitionReassignments  0;
    46 LIST_PARTITION_REASSIGNMENTS    ListPartitionReassignments   0;
    47 OFFSET_DELETE                   OffsetDelete                 -;
    48 DESCRIBE_CLIENT_QUOTAS          DescribeClientQuotas         1;
    49 ALTER_CLIENT_QUOTAS             AlterClientQuotas            1;
    50 DESCRIBE_USER_SCRAM_CREDENTIALS DescribeUserScramCredentials 0;
    51 ALTER_USER_SCRAM_CREDENTIALS    AlterUserScramCredentials    0;
    52 VOTE                            Vote                         0;
    53 BEGIN_QUORUM_EPOCH              BeginQuorumEpoch             1;
    54 END_QUORUM_EPOCH                EndQuorumEpoch               1;
    55 DESCRIBE_QUORUM                 DescribeQuorum               0;
    56 ALTER_PARTITION                 AlterPartition               0;
    57 UPDATE_FEATURES                 UpdateFeatures               0;
    58 ENVELOPE                        Envelope                     0;
    59 FETCH_SNAPSHOT                  FetchSnapshot                0;
    60 DESCRIBE_CLUSTER                DescribeCluster              0;
    61 DESCRIBE_PRODUCERS              DescribeProducers            0;
    62 BROKER_REGISTRATION             BrokerRegistration           0;
    63 BROKER_HEARTBEAT                BrokerHeartbeat              0;
    64 UNREGISTER_BROKER               UnregisterBroker             0;
    65 DESCRIBE_TRANSACTIONS           DescribeTransactions         0;
    66 LIST_TRANSACTIONS               ListTransactions             0;
    67 ALLOCATE_PRODUCER_IDS           AllocateProducerIds          0;
    68 CONSUMER_GROUP_HEARTBEAT        ConsumerGroupHeartbeat       0;
    69 CONSUMER_GROUP_DESCRIBE         ConsumerGroupDescribe        0;
    70 CONTROLLER_REGISTRATION         ControllerRegistration       0;
    71 GET_TELEMETRY_SUBSCRIPTIONS     GetTelemetrySubscriptions    0;
    72 PUSH_TELEMETRY                  PushTelemetry                0;
    73 ASSIGN_REPLICAS_TO_DIRS         AssignReplicasToDirs         0;
    74 LIST_CLIENT_METRICS_RESOURCES   ListClientMetricsResources   0;
    75 DESCRIBE_TOPIC_PARTITIONS       DescribeTopicPartitions      0;
    76 SHARE_GROUP_HEARTBEAT           ShareGroupHeartbeat          0;
    77 SHARE_GROUP_DESCRIBE            ShareGroupDescribe           0;
    78 SHARE_FETCH                     ShareFetch                   0;
    79 SHARE_ACKNOWLEDGE               ShareAcknowledge             0;
    80 ADD_RAFT_VOTER                  AddRaftVoter                 0;
    81 REMOVE_RAFT_VOTER               RemoveRaftVoter              0;
    82 UPDATE_RAFT_VOTER               UpdateRaftVoter              0;
    83 INITIALIZE_SHARE_GROUP_STATE    InitializeShareGroupState    0;
    84 READ_SHARE_GROUP_STATE          ReadShareGroupState          0;
    85 WRITE_SHARE_GROUP_STATE         WriteShareGroupState         0;
    86 DELETE_SHARE_GROUP_STATE        DeleteShareGroupState        0;
    87 READ_SHARE_GROUP_STATE_SUMMARY  ReadShareGroupStateSummary   0;
    88 STREAMS_GROUP_HEARTBEAT         StreamsGroupHeartbeat        0;
    89 STREAMS_GROUP_DESCRIBE          StreamsGroupDescribe         0;
    90 DESCRIBE_SHARE_GROUP_OFFSETS    DescribeShareGroupOffsets    0;
    91 ALTER_SHARE_GROUP_OFFSETS       AlterShareGroupOffsets       0;
    92 DELETE_SHARE_GROUP_OFFSETS      DeleteShareGroupOffsets      0;
}

impl ApiKey {
    /// Kafka's row for this key, if Kafka defines it.
    #[must_use]
    pub fn info(self) -> Option<&'static ApiInfo> {
        info(self.0)
    }

    /// Kafka's name, e.g. `"DescribeProducers"`, or `None` for an unknown key.
    #[must_use]
    pub fn name(self) -> Option<&'static str> {
        name(self.0)
    }

    /// The first flexible version, or `None` if no version is flexible or the key is unknown.
    #[must_use]
    pub fn flexible_from(self) -> Option<i16> {
        self.info().and_then(|i| i.flexible_from)
    }

    /// Whether `version` of this API is flexible (see [`is_flexible`]).
    #[must_use]
    pub fn is_flexible(self, version: i16) -> bool {
        is_flexible(self.0, version)
    }
}

impl From<i16> for ApiKey {
    fn from(key: i16) -> Self {
        ApiKey(key)
    }
}

impl From<ApiKey> for i16 {
    fn from(key: ApiKey) -> Self {
        key.0
    }
}

/// `DescribeProducers(61)`, or `Unknown(1234)`.
impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({})", self.name().unwrap_or("Unknown"), self.0)
    }
}

/// The row for `key`, if Kafka defines it.
#[inline]
pub fn info(key: i16) -> Option<&'static ApiInfo> {
    usize::try_from(key).ok().and_then(|i| APIS.get(i))
}

/// The API's name, e.g. `DescribeProducers`.
pub fn name(key: i16) -> Option<&'static str> {
    info(key).map(|i| i.name)
}

/// Whether `version` of `key` is flexible. Unknown keys count as flexible
/// (every API added since KIP-482 is flexible from its first version).
// Inline, so that a caller's constant key and version fold to a constant
// (a view's every length prefix branches on it).
#[inline]
pub fn is_flexible(key: i16, version: i16) -> bool {
    match info(key) {
        Some(ApiInfo {
            flexible_from: Some(from),
            ..
        }) => version >= *from,
        Some(_) => false,
        None => true,
    }
}

/// The request header version for this API version: 2 when flexible, else 1.
/// (ControlledShutdown v0 used header v0; no live broker accepts it.)
pub fn request_header_version(key: i16, version: i16) -> i16 {
    if is_flexible(key, version) {
        2
    } else {
        1
    }
}

/// The response header version: 1 when flexible, else 0, except that
/// ApiVersions responses always use v0 so that any client can read them.
pub fn response_header_version(key: i16, version: i16) -> i16 {
    if key != API_VERSIONS && is_flexible(key, version) {
        1
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_indexed_by_key() {
        for (i, api) in APIS.iter().enumerate() {
            assert_eq!(api.key as usize, i, "{}", api.name);
        }
        assert_eq!(name(DESCRIBE_PRODUCERS), Some("DescribeProducers"));
        assert_eq!(name(-1), None);
    }

    #[test]
    fn header_versions() {
        assert_eq!(request_header_version(DESCRIBE_PRODUCERS, 0), 2);
        assert_eq!(response_header_version(DESCRIBE_PRODUCERS, 0), 1);
        assert_eq!(request_header_version(API_VERSIONS, 3), 2);
        assert_eq!(request_header_version(API_VERSIONS, 2), 1);
        assert_eq!(response_header_version(API_VERSIONS, 4), 0);
        assert_eq!(request_header_version(METADATA, 8), 1);
        assert_eq!(response_header_version(METADATA, 12), 1);
        assert_eq!(request_header_version(SASL_HANDSHAKE, 1), 1);
    }

    #[test]
    fn api_key_newtype() {
        let k = ApiKey::from(61);
        assert_eq!(k, ApiKey::DESCRIBE_PRODUCERS);
        assert_eq!(format!("{k:?}"), "DescribeProducers(61)");
        assert_eq!(k.flexible_from(), Some(0));
        assert_eq!(ApiKey::SASL_HANDSHAKE.flexible_from(), None);
        assert!(!ApiKey::METADATA.is_flexible(8) && ApiKey::METADATA.is_flexible(9));
        assert_eq!(i16::from(ApiKey::METADATA), METADATA);
        assert_eq!(format!("{:?}", ApiKey(-1)), "Unknown(-1)");
        assert_eq!(
            (ApiKey(-1).name(), ApiKey(-1).flexible_from()),
            (None, None)
        );
    }
}
