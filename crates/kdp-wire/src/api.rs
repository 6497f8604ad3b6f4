//! Kafka's API keys, their names and where their flexible versions start.
//!
//! The header a message travels with depends on whether its version is
//! flexible, so framing needs this for every key, not just the ones kdp
//! decodes. Facts from Apache Kafka's message schemas.

/// One API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiInfo {
    pub key: i16,
    pub name: &'static str,
    /// The first flexible version, or `None` if no version is flexible.
    pub flexible_from: Option<i16>,
}

/// Every API key Kafka defines, indexed by key.
pub const APIS: &[ApiInfo] = &[
    ApiInfo {
        key: 0,
        name: "Produce",
        flexible_from: Some(9),
    },
    ApiInfo {
        key: 1,
        name: "Fetch",
        flexible_from: Some(12),
    },
    ApiInfo {
        key: 2,
        name: "ListOffsets",
        flexible_from: Some(6),
    },
    ApiInfo {
        key: 3,
        name: "Metadata",
        flexible_from: Some(9),
    },
    ApiInfo {
        key: 4,
        name: "LeaderAndIsr",
        flexible_from: Some(4),
    },
    ApiInfo {
        key: 5,
        name: "StopReplica",
        flexible_from: Some(2),
    },
    ApiInfo {
        key: 6,
        name: "UpdateMetadata",
        flexible_from: Some(6),
    },
    ApiInfo {
        key: 7,
        name: "ControlledShutdown",
        flexible_from: Some(3),
    },
    ApiInfo {
        key: 8,
        name: "OffsetCommit",
        flexible_from: Some(8),
    },
    ApiInfo {
        key: 9,
        name: "OffsetFetch",
        flexible_from: Some(6),
    },
    ApiInfo {
        key: 10,
        name: "FindCoordinator",
        flexible_from: Some(3),
    },
    ApiInfo {
        key: 11,
        name: "JoinGroup",
        flexible_from: Some(6),
    },
    ApiInfo {
        key: 12,
        name: "Heartbeat",
        flexible_from: Some(4),
    },
    ApiInfo {
        key: 13,
        name: "LeaveGroup",
        flexible_from: Some(4),
    },
    ApiInfo {
        key: 14,
        name: "SyncGroup",
        flexible_from: Some(4),
    },
    ApiInfo {
        key: 15,
        name: "DescribeGroups",
        flexible_from: Some(5),
    },
    ApiInfo {
        key: 16,
        name: "ListGroups",
        flexible_from: Some(3),
    },
    ApiInfo {
        key: 17,
        name: "SaslHandshake",
        flexible_from: None,
    },
    ApiInfo {
        key: 18,
        name: "ApiVersions",
        flexible_from: Some(3),
    },
    ApiInfo {
        key: 19,
        name: "CreateTopics",
        flexible_from: Some(5),
    },
    ApiInfo {
        key: 20,
        name: "DeleteTopics",
        flexible_from: Some(4),
    },
    ApiInfo {
        key: 21,
        name: "DeleteRecords",
        flexible_from: Some(2),
    },
    ApiInfo {
        key: 22,
        name: "InitProducerId",
        flexible_from: Some(2),
    },
    ApiInfo {
        key: 23,
        name: "OffsetForLeaderEpoch",
        flexible_from: Some(4),
    },
    ApiInfo {
        key: 24,
        name: "AddPartitionsToTxn",
        flexible_from: Some(3),
    },
    ApiInfo {
        key: 25,
        name: "AddOffsetsToTxn",
        flexible_from: Some(3),
    },
    ApiInfo {
        key: 26,
        name: "EndTxn",
        flexible_from: Some(3),
    },
    ApiInfo {
        key: 27,
        name: "WriteTxnMarkers",
        flexible_from: Some(1),
    },
    ApiInfo {
        key: 28,
        name: "TxnOffsetCommit",
        flexible_from: Some(3),
    },
    ApiInfo {
        key: 29,
        name: "DescribeAcls",
        flexible_from: Some(2),
    },
    ApiInfo {
        key: 30,
        name: "CreateAcls",
        flexible_from: Some(2),
    },
    ApiInfo {
        key: 31,
        name: "DeleteAcls",
        flexible_from: Some(2),
    },
    ApiInfo {
        key: 32,
        name: "DescribeConfigs",
        flexible_from: Some(4),
    },
    ApiInfo {
        key: 33,
        name: "AlterConfigs",
        flexible_from: Some(2),
    },
    ApiInfo {
        key: 34,
        name: "AlterReplicaLogDirs",
        flexible_from: Some(2),
    },
    ApiInfo {
        key: 35,
        name: "DescribeLogDirs",
        flexible_from: Some(2),
    },
    ApiInfo {
        key: 36,
        name: "SaslAuthenticate",
        flexible_from: Some(2),
    },
    ApiInfo {
        key: 37,
        name: "CreatePartitions",
        flexible_from: Some(2),
    },
    ApiInfo {
        key: 38,
        name: "CreateDelegationToken",
        flexible_from: Some(2),
    },
    ApiInfo {
        key: 39,
        name: "RenewDelegationToken",
        flexible_from: Some(2),
    },
    ApiInfo {
        key: 40,
        name: "ExpireDelegationToken",
        flexible_from: Some(2),
    },
    ApiInfo {
        key: 41,
        name: "DescribeDelegationToken",
        flexible_from: Some(2),
    },
    ApiInfo {
        key: 42,
        name: "DeleteGroups",
        flexible_from: Some(2),
    },
    ApiInfo {
        key: 43,
        name: "ElectLeaders",
        flexible_from: Some(2),
    },
    ApiInfo {
        key: 44,
        name: "IncrementalAlterConfigs",
        flexible_from: Some(1),
    },
    ApiInfo {
        key: 45,
        name: "AlterPartitionReassignments",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 46,
        name: "ListPartitionReassignments",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 47,
        name: "OffsetDelete",
        flexible_from: None,
    },
    ApiInfo {
        key: 48,
        name: "DescribeClientQuotas",
        flexible_from: Some(1),
    },
    ApiInfo {
        key: 49,
        name: "AlterClientQuotas",
        flexible_from: Some(1),
    },
    ApiInfo {
        key: 50,
        name: "DescribeUserScramCredentials",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 51,
        name: "AlterUserScramCredentials",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 52,
        name: "Vote",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 53,
        name: "BeginQuorumEpoch",
        flexible_from: Some(1),
    },
    ApiInfo {
        key: 54,
        name: "EndQuorumEpoch",
        flexible_from: Some(1),
    },
    ApiInfo {
        key: 55,
        name: "DescribeQuorum",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 56,
        name: "AlterPartition",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 57,
        name: "UpdateFeatures",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 58,
        name: "Envelope",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 59,
        name: "FetchSnapshot",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 60,
        name: "DescribeCluster",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 61,
        name: "DescribeProducers",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 62,
        name: "BrokerRegistration",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 63,
        name: "BrokerHeartbeat",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 64,
        name: "UnregisterBroker",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 65,
        name: "DescribeTransactions",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 66,
        name: "ListTransactions",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 67,
        name: "AllocateProducerIds",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 68,
        name: "ConsumerGroupHeartbeat",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 69,
        name: "ConsumerGroupDescribe",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 70,
        name: "ControllerRegistration",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 71,
        name: "GetTelemetrySubscriptions",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 72,
        name: "PushTelemetry",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 73,
        name: "AssignReplicasToDirs",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 74,
        name: "ListClientMetricsResources",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 75,
        name: "DescribeTopicPartitions",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 76,
        name: "ShareGroupHeartbeat",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 77,
        name: "ShareGroupDescribe",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 78,
        name: "ShareFetch",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 79,
        name: "ShareAcknowledge",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 80,
        name: "AddRaftVoter",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 81,
        name: "RemoveRaftVoter",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 82,
        name: "UpdateRaftVoter",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 83,
        name: "InitializeShareGroupState",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 84,
        name: "ReadShareGroupState",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 85,
        name: "WriteShareGroupState",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 86,
        name: "DeleteShareGroupState",
        flexible_from: Some(0),
    },
    ApiInfo {
        key: 87,
        name: "ReadShareGroupStateSummary",
        flexible_from: Some(0),
    },
];

pub const PRODUCE: i16 = 0;
pub const METADATA: i16 = 3;
pub const FIND_COORDINATOR: i16 = 10;
pub const SASL_HANDSHAKE: i16 = 17;
pub const API_VERSIONS: i16 = 18;
pub const INIT_PRODUCER_ID: i16 = 22;
pub const WRITE_TXN_MARKERS: i16 = 27;
pub const SASL_AUTHENTICATE: i16 = 36;
pub const LIST_OFFSETS: i16 = 2;
pub const DESCRIBE_CONFIGS: i16 = 32;
pub const DESCRIBE_CLUSTER: i16 = 60;
pub const DESCRIBE_PRODUCERS: i16 = 61;
pub const DESCRIBE_TRANSACTIONS: i16 = 65;
pub const LIST_TRANSACTIONS: i16 = 66;

/// The row for `key`, if Kafka defines it.
pub fn info(key: i16) -> Option<&'static ApiInfo> {
    usize::try_from(key).ok().and_then(|i| APIS.get(i))
}

/// The API's name, e.g. `DescribeProducers`.
pub fn name(key: i16) -> Option<&'static str> {
    info(key).map(|i| i.name)
}

/// Whether `version` of `key` is flexible. Unknown keys count as flexible
/// (every API added since KIP-482 is flexible from its first version).
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
}
