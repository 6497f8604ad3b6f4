//! The cluster file's schema: what serde reads from the JSON, before any
//! check beyond its types (the checks are in `validate`).

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use super::timestamp::Timestamp;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ClusterFile {
    #[serde(default)]
    pub(super) cluster_id: Option<String>,
    #[serde(default)]
    pub(super) controller_id: Option<i32>,
    pub(super) brokers: Vec<BrokerFile>,
    #[serde(default)]
    pub(super) topics: Vec<TopicFile>,
    #[serde(default)]
    pub(super) transactions: Vec<TransactionFile>,
    #[serde(default)]
    pub(super) groups: Vec<GroupFile>,
    #[serde(default)]
    pub(super) acls: AclsFile,
    #[serde(default)]
    pub(super) sasl: SaslFile,
    /// The finalized `transaction.version` ApiVersions reports (0: none).
    #[serde(default)]
    pub(super) transaction_version: i16,
    /// API keys the mock neither advertises nor serves (a broker that
    /// predates them, e.g. `[89]` for Kafka 3.9's lack of
    /// StreamsGroupDescribe).
    #[serde(default)]
    pub(super) withheld_apis: Vec<i16>,
    #[serde(default)]
    pub(super) producer_generators: Vec<super::generate::GeneratorFile>,
}

/// `"sasl": {"users": [...]}`: who may authenticate, and how.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct SaslFile {
    #[serde(default)]
    pub(super) users: Vec<UserFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct UserFile {
    pub(super) name: String,
    pub(super) password: FilePassword,
    /// Default: every mechanism the mock serves.
    #[serde(default)]
    pub(super) mechanisms: Option<Vec<String>>,
    /// SCRAM iteration count (Kafka's default for `kafka-configs --add-config SCRAM-...`).
    #[serde(default = "default_scram_iterations")]
    pub(super) iterations: u32,
}

pub(super) fn default_scram_iterations() -> u32 {
    kdp_scram::MIN_ITERATIONS
}

/// A password: a string. A value of another type is refused without
/// quoting it (serde's own message would).
pub(super) struct FilePassword(pub(super) zeroize::Zeroizing<String>);

impl<'de> Deserialize<'de> for FilePassword {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = FilePassword;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<FilePassword, E> {
                Ok(FilePassword(zeroize::Zeroizing::new(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<FilePassword, E> {
                Ok(FilePassword(zeroize::Zeroizing::new(v)))
            }
        }
        d.deserialize_string(V)
            .map_err(|_| de::Error::custom("a password must be a string"))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TransactionFile {
    pub(super) transactional_id: String,
    pub(super) producer_id: i64,
    #[serde(default)]
    pub(super) producer_epoch: i16,
    pub(super) state: String,
    #[serde(default = "default_txn_timeout_ms")]
    pub(super) timeout_ms: i32,
    #[serde(default)]
    pub(super) start_time: Timestamp,
    #[serde(default)]
    pub(super) partitions: BTreeMap<String, Vec<i32>>,
    #[serde(default)]
    pub(super) coordinator: Option<i32>,
    /// `txnLastUpdateTimestamp`; default: when the file is loaded.
    #[serde(default)]
    pub(super) last_update: Option<Timestamp>,
    /// The id's past in `__transaction_state` (see `txn_log`).
    #[serde(default)]
    pub(super) log: Vec<super::txn_log::TxnLogFile>,
}

/// A consumer group: `"type"` classic (default), consumer, share or
/// streams (each member with its `process_id`); `"state"`
/// defaults to Stable with members, Empty without.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GroupFile {
    pub(super) group_id: String,
    #[serde(default, rename = "type")]
    pub(super) group_type: Option<String>,
    #[serde(default)]
    pub(super) state: Option<String>,
    #[serde(default)]
    pub(super) protocol_type: Option<String>,
    #[serde(default)]
    pub(super) protocol: Option<String>,
    #[serde(default)]
    pub(super) group_epoch: Option<i32>,
    #[serde(default)]
    pub(super) members: Vec<GroupMemberFile>,
    /// `{"topic": {"0": 42}}`: committed offsets by topic and partition.
    #[serde(default)]
    pub(super) offsets: BTreeMap<String, BTreeMap<i32, i64>>,
    /// Group configs (DescribeConfigs, resource type GROUP), e.g.
    /// `{"share.isolation.level": "read_committed"}`.
    #[serde(default)]
    pub(super) configs: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GroupMemberFile {
    pub(super) member_id: String,
    #[serde(default)]
    pub(super) group_instance_id: Option<String>,
    #[serde(default)]
    pub(super) client_id: Option<String>,
    #[serde(default)]
    pub(super) client_host: Option<String>,
    /// `{"topic": [0, 1]}`.
    #[serde(default)]
    pub(super) assignment: BTreeMap<String, Vec<i32>>,
    /// The member's own protocol metadata, hex (a Streams or Connect member).
    #[serde(default)]
    pub(super) metadata_hex: Option<String>,
    /// The member's own assignment bytes, hex.
    #[serde(default)]
    pub(super) assignment_hex: Option<String>,
    /// A streams group's member: its Streams process id (required there).
    #[serde(default)]
    pub(super) process_id: Option<String>,
}

/// The Java producer's `transaction.timeout.ms` default.
pub(super) fn default_txn_timeout_ms() -> i32 {
    60_000
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct AclsFile {
    #[serde(default)]
    pub(super) transactional_id_describe_deny: Vec<String>,
    #[serde(default)]
    pub(super) transactional_id_describe_allow: Option<Vec<String>>,
    #[serde(default)]
    pub(super) transactional_id_write_deny: Vec<String>,
    #[serde(default)]
    pub(super) cluster_deny: Vec<String>,
    #[serde(default)]
    pub(super) topic_read_deny: Vec<String>,
    #[serde(default)]
    pub(super) topic_describe_deny: Vec<String>,
    #[serde(default)]
    pub(super) group_describe_deny: Vec<String>,
    #[serde(default)]
    pub(super) group_describe_allow: Option<Vec<String>>,
    /// `"User:alice": {...}`: rules replacing the ones above for one principal.
    #[serde(default)]
    pub(super) principals: BTreeMap<String, AclsFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BrokerFile {
    pub(super) id: i32,
    #[serde(default)]
    pub(super) host: Option<String>,
    #[serde(default)]
    pub(super) rack: Option<String>,
    #[serde(default)]
    pub(super) configs: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct TopicFile {
    pub(super) name: String,
    #[serde(default)]
    pub(super) internal: Option<bool>,
    #[serde(default)]
    pub(super) configs: BTreeMap<String, String>,
    pub(super) partitions: Vec<PartitionFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PartitionFile {
    pub(super) partition: i32,
    pub(super) leader: i32,
    #[serde(default)]
    pub(super) leader_epoch: Option<i32>,
    pub(super) replicas: Vec<i32>,
    #[serde(default)]
    pub(super) isr: Option<Vec<i32>>,
    #[serde(default)]
    pub(super) offline_replicas: Vec<i32>,
    #[serde(default)]
    pub(super) producers: Vec<ProducerFile>,
    #[serde(default)]
    pub(super) replica_producers: BTreeMap<i32, Vec<ProducerFile>>,
    #[serde(default)]
    pub(super) high_watermark: Option<i64>,
    #[serde(default)]
    pub(super) last_stable_offset: Option<i64>,
    /// The log's first offset (default 0).
    #[serde(default)]
    pub(super) log_start_offset: Option<i64>,
    /// Record batches Fetch serves, in offset order.
    #[serde(default)]
    pub(super) batches: Vec<BatchFile>,
}

/// One record batch of a partition's log.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct BatchFile {
    /// The base offset; default: where the previous batch ended.
    #[serde(default)]
    pub(super) offset: Option<i64>,
    #[serde(default = "minus_one_i64")]
    pub(super) producer_id: i64,
    #[serde(default = "minus_one_i16")]
    pub(super) producer_epoch: i16,
    #[serde(default = "minus_one_i32")]
    pub(super) base_sequence: i32,
    /// How many records (default 1); a control batch has one.
    #[serde(default)]
    pub(super) records: Option<i32>,
    #[serde(default)]
    pub(super) transactional: bool,
    /// `"commit"` or `"abort"`: a transaction marker.
    #[serde(default)]
    pub(super) control: Option<String>,
    #[serde(default)]
    pub(super) coordinator_epoch: i32,
    /// `none` (default), `gzip`, `snappy`, `lz4`, `zstd`.
    #[serde(default)]
    pub(super) compression: Option<String>,
    /// The first record's timestamp; default: now.
    #[serde(default)]
    pub(super) timestamp: Option<Timestamp>,
    /// Default: the partition's leader epoch.
    #[serde(default)]
    pub(super) partition_leader_epoch: Option<i32>,
}

pub(super) fn minus_one_i16() -> i16 {
    -1
}

/// A producer entry in the seed's field names, with the schema's defaults.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub(super) struct ProducerFile {
    pub(super) producer_id: i64,
    #[serde(default)]
    pub(super) producer_epoch: i32,
    #[serde(default = "minus_one_i32")]
    pub(super) last_sequence: i32,
    #[serde(default)]
    pub(super) last_timestamp: Timestamp,
    #[serde(default)]
    pub(super) coordinator_epoch: i32,
    #[serde(default = "minus_one_i64")]
    pub(super) current_txn_start_offset: i64,
}

pub(super) fn minus_one_i32() -> i32 {
    -1
}

pub(super) fn minus_one_i64() -> i64 {
    -1
}
